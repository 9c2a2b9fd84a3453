"""Compiled training programs: `Module.compile(...)` and `Program.train(...)`."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

from ._tools import LoomError, LoomWarning, find_tool

# loomc flags for each keyword of Module.compile.
_FLAGS = {
    "lr": "--lr", "momentum": "--momentum", "weight_decay": "--weight-decay",
    "eps": "--eps", "clip_grad_norm": "--clip-grad-norm", "lr_schedule": "--lr-schedule",
    "warmup_steps": "--warmup-steps", "total_steps": "--total-steps",
    "min_lr": "--min-lr", "loss": "--loss", "microbatches": "--microbatches",
    "micro_batch": "--micro-batch",
    "schedule": "--schedule", "memory_budget": "--memory-budget", "plan": "--plan",
    "batch": "--batch", "bucket_bytes": "--bucket-bytes", "recompute": "--recompute",
    "overlap_split": "--overlap-split",
    "max_inflight_collectives": "--max-inflight-collectives",
    "device_memory": "--device-memory", "swap": "--swap",
    "sparse_embedding_grad": "--sparse-embedding-grad", "comm_schedule": "--comm-schedule",
    "pipeline_weights": "--pipeline-weights", "precision": "--precision",
    "excess_precision": "--excess-precision", "weight_shadows": "--weight-shadows",
    # plan="auto": the planner chooses the plan for this cluster.
    "cluster": "--cluster", "gpus": "--gpus", "global_batch": "--global-batch",
}


def mpirun_command(ranks: int, *extra: str) -> list[str]:
    """`mpirun -np ranks`, oversubscribing cores when there are fewer (and,
    as root, allowing it), followed by `extra` mpirun options."""
    launcher = ["mpirun", "-np", str(ranks), "--oversubscribe", *extra]
    if os.geteuid() == 0:
        launcher.append("--allow-run-as-root")
    return launcher


class Program:
    """A built training program: `outdir/train` and what loomc wrote beside it."""

    def __init__(self, outdir: str | os.PathLike):
        self.outdir = Path(outdir)
        self.executable = self.outdir / "train"

    def train(self, data_dir: str | os.PathLike, steps: int, *,
              log: str | os.PathLike | None = None,
              checkpoint_dir: str | os.PathLike | None = None,
              checkpoint_every: int | None = None, resume: bool = False,
              mpirun: bool = False, ranks: int | None = None,
              hosts: int | None = None, link: str | None = None,
              extra_args: list[str] | None = None) -> list[float]:
        """Runs `steps` training steps on `data_dir` (one `<input>.npy` per
        data input) and returns the logged loss of each step.

        With `mpirun=True` or `ranks=N` the program runs under
        `mpirun -np N` (default: the mesh size it was compiled for),
        oversubscribing cores if needed (and as root allowing it).

        With `hosts=H` the ranks run on H virtual hosts of this machine
        (`python -m loom.vcluster run`, root only), N/H per host, rank r on
        host r // (N/H), over links of rate `link` (e.g. "1gbit"; default
        unlimited)."""
        log = Path(log) if log else self.outdir / "loss.csv"
        args = [str(self.executable), "--data", str(data_dir), "--steps", str(steps),
                "--log", str(log), "--quiet"]
        if checkpoint_dir is not None:
            args += ["--checkpoint-dir", str(checkpoint_dir)]
        if checkpoint_every is not None:
            args += ["--checkpoint-every", str(checkpoint_every)]
        if resume:
            args.append("--resume")
        args += list(extra_args or [])
        if hosts is not None:
            n = ranks if ranks is not None else self.mesh_size()
            if hosts < 1 or n % hosts:
                raise ValueError(f"{n} ranks do not split evenly over {hosts} hosts")
            launch = [sys.executable, "-m", "loom.vcluster", "run", "--hosts", str(hosts),
                      "--ranks-per-host", str(n // hosts)]
            if link:
                launch += ["--link", link]
            args = [*launch, "--", *args]
        elif mpirun or ranks is not None:
            n = ranks if ranks is not None else self.mesh_size()
            args = [*mpirun_command(n), *args]
        proc = subprocess.run(args, capture_output=True, text=True)
        if proc.returncode != 0:
            raise LoomError("train", proc.stderr or proc.stdout, proc.returncode)
        with open(log, newline="") as f:
            return [float(row["loss"]) for row in csv.DictReader(f)]

    def sharding(self) -> dict | None:
        """loomc's report of which parameters tensor parallelism cut
        (OUTDIR/sharding.json, see loom-report-sharding), or None without
        tensor parallelism."""
        path = self.outdir / "sharding.json"
        return json.loads(path.read_text()) if path.exists() else None

    def play(self) -> dict | None:
        """The compiled step played on the cluster of `compile(play=True,
        cluster=...)` (OUTDIR/play.json: `step_time_s`, `bubble_fraction`,
        `exposed_comm_s`, per stage `busy_s` and `peak_live_bytes`; the timeline
        is OUTDIR/play-trace.json), or None without it."""
        path = self.outdir / "play.json"
        return json.loads(path.read_text()) if path.exists() else None

    def mesh_size(self) -> int:
        """dp * tp * pp of the mesh the program was compiled for."""
        import json
        mesh = json.loads((self.outdir / "plan.json").read_text())["mesh"]
        return mesh["dp"] * mesh["tp"] * mesh["pp"]

    def __repr__(self) -> str:
        return f"<loom.Program {self.executable}>"


def compile_module(module, *, optimizer: str = "sgd", mesh: str | dict | None = None,
                   target: str = "cpu", outdir: str | os.PathLike | None = None,
                   betas: tuple[float, float] | None = None, nesterov: bool = False,
                   cuda_emulate: bool = False, require_sharded: bool = False,
                   play: bool = False, roll_repeats: bool = True,
                   emit_only: bool = False, **options) -> Program:
    """Compiles `module` (a loom.Module with a loss output) into a training
    program with loomc; see `loomc --help` for the options.

    `target` is "cpu" (OUTDIR/step.cpp) or "cuda" (OUTDIR/step.cu, built by
    nvcc for a GPU); with `cuda_emulate=True` the CUDA source is built as
    host code that runs on the CPU (`loomc --cuda-emulate`).

    With a tensor-parallel mesh, loomc's warnings about large parameters
    left replicated become Python warnings (`LoomWarning`), and
    `require_sharded=True` makes them errors; `Program.sharding()` reads
    the report of what was cut.

    `play=True` (with `cluster=`) also times the compiled step on that
    cluster's spec (`loomc --play`); `Program.play()` reads the result.

    `roll_repeats=False` prints every op of the step, each micro-batch's
    too, instead of one loop per run of repeats (`loomc --roll-repeats`).
    `emit_only=True` writes the sources and reports without building
    `outdir/train` (`loomc --emit-only`)."""
    outdir = Path(outdir) if outdir else Path(tempfile.mkdtemp(prefix="loom-"))
    outdir.mkdir(parents=True, exist_ok=True)
    model = module.save(outdir / "model.mlir")
    if isinstance(mesh, dict):
        mesh = ",".join(f"{k}={v}" for k, v in mesh.items())
    args = [find_tool("loomc"), str(model), "-o", str(outdir), "--optimizer", optimizer,
            "--target", target]
    if mesh is not None:  # else loomc's default, or the mesh of a --plan
        args += ["--mesh", mesh]
    if module.weights:
        args += ["--weights", str(model.with_suffix(".safetensors"))]
    if betas is not None:
        args += ["--betas", f"{betas[0]!r},{betas[1]!r}"]
    if nesterov:
        args.append("--nesterov")
    if cuda_emulate:
        args.append("--cuda-emulate")
    if require_sharded:
        args.append("--require-sharded")
    if play:
        args.append("--play")
    if not roll_repeats:
        args.append("--roll-repeats=false")
    if emit_only:
        args.append("--emit-only")
    for key, value in options.items():
        if key not in _FLAGS:
            raise TypeError(f"compile() got an unknown option {key!r} "
                            f"(known: {', '.join(sorted(_FLAGS))})")
        args += [_FLAGS[key], repr(value) if isinstance(value, float) else str(value)]
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode != 0:
        raise LoomError("loomc", proc.stderr or proc.stdout, proc.returncode)
    for line in proc.stderr.splitlines():
        if "warning: " in line:
            warnings.warn(line.split("warning: ", 1)[1], LoomWarning, stacklevel=2)
    return Program(outdir)

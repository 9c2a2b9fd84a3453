"""`loom.Module`: an imported model as loom IR plus its weights file."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ._tools import run_tool


class Module:
    """Loom IR text of a model, and the safetensors file with its weights.

    `ir` is the textual loom-dialect module; `weights` the path of the
    weights file (or None when imported without weights).
    """

    def __init__(self, ir: str, weights: str | os.PathLike | None = None):
        self.ir = ir
        self.weights = str(weights) if weights is not None else None
        # Set by loom.from_torch / loom.from_jax: the example batch, and a
        # function that imports the same model traced at another batch.
        self.batch: int | None = None
        self._retrace = None

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Module":
        """Reads a .mlir file; its weights are the .safetensors beside it,
        if present."""
        path = Path(path)
        weights = path.with_suffix(".safetensors")
        return cls(path.read_text(), weights if weights.exists() else None)

    def save(self, path: str | os.PathLike) -> Path:
        """Writes the IR to `path` and copies the weights beside it as
        `<stem>.safetensors`. Returns the IR path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.ir)
        if self.weights:
            target = path.with_suffix(".safetensors")
            if Path(self.weights).resolve() != target.resolve():
                shutil.copyfile(self.weights, target)
        return path

    def run_pass(self, pipeline: str | list[str]) -> "Module":
        """Runs loom-opt passes and returns a new Module with the result.

        `pipeline` is either loom-opt flags (["--loom-shape-inference",
        "--canonicalize"]) or a textual pass pipeline
        ("builtin.module(loom-shape-inference,canonicalize)").
        """
        if isinstance(pipeline, str):
            args = [f"--pass-pipeline={pipeline}"] if "(" in pipeline else pipeline.split()
        else:
            args = list(pipeline)
        # Locations (the model's node names) survive the passes.
        out = run_tool("loom-opt", ["-", "--mlir-print-debuginfo", *args], input=self.ir)
        return Module(out, self.weights)

    def compile(self, *, optimizer: str = "sgd", mesh=None,
                target: str = "cpu", outdir=None, **options):
        """Compiles this module (its function returns the loss) into a
        training program: autodiff, the optimizer update, lowering, C++ and
        the build of `outdir/train`. Returns a `loom.Program`, whose
        `.train(data_dir, steps)` runs it and returns the losses.

            prog = m.compile(optimizer="adamw", lr=1e-3, weight_decay=0.01)
            losses = prog.train("data/", steps=20)

        `target="cuda"` emits CUDA (built by nvcc for a GPU; with
        `cuda_emulate=True` built as host code that runs on the CPU).

        `micro_batch=b` compiles for b rows per micro-batch: a module from
        `loom.from_torch` or `loom.from_jax` is traced again with its
        example inputs repeated or cut to b rows (the IR has static
        shapes); any other module must already have that batch.
        """
        from .training import compile_module
        module = self
        micro = options.get("micro_batch")
        if micro and self._retrace is not None and micro != self.batch:
            module = self._retrace(int(micro))
        return compile_module(module, optimizer=optimizer, mesh=mesh, target=target,
                              outdir=outdir, **options)

    def __repr__(self) -> str:
        lines = self.ir.count("\n")
        return f"<loom.Module: {lines} lines of IR, weights={self.weights!r}>"

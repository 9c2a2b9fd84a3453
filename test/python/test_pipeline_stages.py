"""Pipeline stage programs end to end, below the pass that will build them.

A hand-written 2-stage program in the contract's form (`@net_stage<k>_step`
with `loom.stage`, `shard.send`/`shard.recv` on the pp axis of the device
mesh `@mesh`):
stage 0 computes h = x @ w0 and sends h; stage 1 receives h, computes
loss = mean((h @ w1 - y)^2) and sends d loss / d h back; each stage updates
its weight by SGD. It is lowered by loom-fuse-elementwise and
convert-loom-to-loomrt (both functions),
planned, emitted by `loom-translate --emit-cpp` (one namespace per stage and
trainMainStages) and run with `mpirun -np 2` (pp=2), `-np 4` (dp=2: each
stage also averages its gradient, and stage 1 its loss, over the dp axis)
and `-np 8` (dp=2 x tp=2 x pp=2: each stage is a Megatron-style slice,
stage 1 sums its partial products over the tp axis). Losses and final weights are checked
against a NumPy replay of the full model on the global batch.
"""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import loom

sys.path.insert(0, str(Path(__file__).parent))
from parallel_support import BUILD, MPI_MARKS  # noqa: E402

BIN = BUILD / "bin"
pytestmark = MPI_MARKS

B, ROWS, LR, STEPS = 4, 20, 0.1, 8


def stages_ir(dp, tp):
    """The two stage programs for `dp` data-parallel replicas, each stage
    cut over `tp` ranks as a Megatron MLP: stage 0 holds columns of w0
    (its slice of h goes to the stage-1 rank of the same t), stage 1 the
    matching rows of w1 and sums its partial products over the tp axis."""
    H = 8 // tp
    grids = f"shard.grid @mesh(shape = {dp}x2x{tp})\n"

    def mean_over_dp(v, t):
        if dp == 1:
            return v, ""
        return f"{v}_avg", (
            f"  {v}_sum = shard.all_reduce {v} on @mesh grid_axes = [0] : {t} -> {t}\n"
            f"  {v}_inv = loom.constant dense<{1.0 / dp}> : {t}\n"
            f"  {v}_avg = loom.mul {v}_sum, {v}_inv : {t}\n")

    dw0, dw0_ops = mean_over_dp("%dw0", f"tensor<4x{H}xf32>")
    dw1, dw1_ops = mean_over_dp("%dw1", f"tensor<{H}x2xf32>")
    loss, loss_ops = mean_over_dp("%loss", "tensor<f32>")
    if tp > 1:
        p, p_ops = "%p", (f"  %p = shard.all_reduce %pt on @mesh grid_axes = [2] : "
                          f"tensor<{B}x2xf32> -> tensor<{B}x2xf32>\n")
    else:
        p, p_ops = "%pt", ""

    def attrs(k):
        return (f"attributes {{loom.stage = {k} : i64, "
                f"loom.microbatches = 1 : i64}}")
    return f"""{grids}
func.func @net_stage0_step(%w0: tensor<4x{H}xf32> {{loom.param, loom.name = "w0"}},
                           %x: tensor<{B}x4xf32> {{loom.name = "x"}})
    -> (tensor<f32> {{loom.name = "loss"}}, tensor<4x{H}xf32> {{loom.name = "w0", loom.updates = 0 : i64}})
    {attrs(0)} {{
  %h = loom.dot_general %x, %w0, contracting_dims = [1] x [0] : (tensor<{B}x4xf32>, tensor<4x{H}xf32>) -> tensor<{B}x{H}xf32>
  %s = shard.send %h on @mesh grid_axes = [1] destination = [1] {{loom.tag = 0 : i64}} : (tensor<{B}x{H}xf32>) -> tensor<{B}x{H}xf32>
  %z = loom.constant dense<0.0> : tensor<{B}x{H}xf32>
  %dh = shard.recv %z on @mesh grid_axes = [1] source = [1] {{loom.tag = 1 : i64}} : (tensor<{B}x{H}xf32>) -> tensor<{B}x{H}xf32>
  %dw0 = loom.dot_general %x, %dh, contracting_dims = [0] x [0] : (tensor<{B}x4xf32>, tensor<{B}x{H}xf32>) -> tensor<4x{H}xf32>
{dw0_ops}  %lr = loom.constant dense<{LR}> : tensor<4x{H}xf32>
  %u = loom.mul {dw0}, %lr : tensor<4x{H}xf32>
  %w0n = loom.sub %w0, %u : tensor<4x{H}xf32>
  %zero = loom.constant dense<0.0> : tensor<f32>
  return %zero, %w0n : tensor<f32>, tensor<4x{H}xf32>
}}

func.func @net_stage1_step(%w1: tensor<{H}x2xf32> {{loom.param, loom.name = "w1"}},
                           %y: tensor<{B}x2xf32> {{loom.name = "y"}})
    -> (tensor<f32> {{loom.name = "loss"}}, tensor<{H}x2xf32> {{loom.name = "w1", loom.updates = 0 : i64}})
    {attrs(1)} {{
  %z = loom.constant dense<0.0> : tensor<{B}x{H}xf32>
  %h = shard.recv %z on @mesh grid_axes = [1] source = [0] {{loom.tag = 0 : i64}} : (tensor<{B}x{H}xf32>) -> tensor<{B}x{H}xf32>
  %pt = loom.dot_general %h, %w1, contracting_dims = [1] x [0] : (tensor<{B}x{H}xf32>, tensor<{H}x2xf32>) -> tensor<{B}x2xf32>
{p_ops}  %e = loom.sub {p}, %y : tensor<{B}x2xf32>
  %sq = loom.mul %e, %e : tensor<{B}x2xf32>
  %loss = loom.reduce_mean %sq, dims = [0, 1] : tensor<{B}x2xf32> -> tensor<f32>
{loss_ops}  %c = loom.constant dense<{2.0 / (B * 2)}> : tensor<{B}x2xf32>
  %dp = loom.mul %e, %c : tensor<{B}x2xf32>
  %dh = loom.dot_general %dp, %w1, contracting_dims = [1] x [1] : (tensor<{B}x2xf32>, tensor<{H}x2xf32>) -> tensor<{B}x{H}xf32>
  %s = shard.send %dh on @mesh grid_axes = [1] destination = [0] {{loom.tag = 1 : i64}} : (tensor<{B}x{H}xf32>) -> tensor<{B}x{H}xf32>
  %dw1 = loom.dot_general %h, %dp, contracting_dims = [0] x [0] : (tensor<{B}x{H}xf32>, tensor<{B}x2xf32>) -> tensor<{H}x2xf32>
{dw1_ops}  %lr = loom.constant dense<{LR}> : tensor<{H}x2xf32>
  %u = loom.mul {dw1}, %lr : tensor<{H}x2xf32>
  %w1n = loom.sub %w1, %u : tensor<{H}x2xf32>
  return {loss}, %w1n : tensor<f32>, tensor<{H}x2xf32>
}}
"""


def run(cmd, **kw):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                          timeout=120, **kw)
    assert proc.returncode == 0, proc.stderr
    return proc


def build(tmp_path, dp, tp=1):
    """OUT/train of the two stages for `dp` x `tp`, and the lowered IR."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    ir = tmp_path / "stages.mlir"
    ir.write_text(stages_ir(dp, tp))
    rt = tmp_path / "stages.rt.mlir"
    run([BIN / "loom-opt", ir, "--loom-fuse-elementwise",
         "--convert-loom-to-loomrt=function=net_stage0_step,net_stage1_step",
         "--loom-memory-plan", "-o", rt])
    # loomc --emit-only writes OUT/build.sh, the command that builds
    # OUT/step.cpp against the runtime; the stages' code replaces its step.
    tiny = tmp_path / "tiny.mlir"
    tiny.write_text("""
func.func @main(%w: tensor<4xf32> {loom.param, loom.name = "w"}, %x: tensor<2x4xf32> {loom.name = "x"}) -> tensor<f32> {
  %l = loom.reduce_mean %x, dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
  %b = loom.reduce_mean %w, dims = [0] : tensor<4xf32> -> tensor<f32>
  %s = loom.add %l, %b : tensor<f32>
  return %s : tensor<f32>
}
""")
    out = tmp_path / "out"
    run([BIN / "loomc", tiny, "-o", out, "--emit-only"])
    run([BIN / "loom-translate", "--emit-cpp", rt, "-o", out / "step.cpp"])
    run(["sh", out / "build.sh"])
    return out / "train", rt.read_text()


@pytest.fixture
def work(tmp_path):
    from safetensors.numpy import save_file
    rng = np.random.default_rng(3)
    (tmp_path / "data").mkdir()
    x = rng.standard_normal((ROWS, 4)).astype(np.float32)
    y = rng.standard_normal((ROWS, 2)).astype(np.float32)
    np.save(tmp_path / "data" / "x.npy", x)
    np.save(tmp_path / "data" / "y.npy", y)
    w = {"w0": (rng.standard_normal((4, 8)) * 0.5).astype(np.float32),
         "w1": (rng.standard_normal((8, 2)) * 0.5).astype(np.float32)}
    save_file(w, str(tmp_path / "weights.safetensors"))
    for tp in (2,):
        for t in range(tp):
            save_file(slices(w, tp, t), str(tmp_path / f"weights.tp{tp}.rank{t}.safetensors"))
    return tmp_path, x, y, w


def slices(w, tp, t):
    """Tensor-parallel rank t's weights: columns of w0, rows of w1."""
    h = 8 // tp
    return {"w0": np.ascontiguousarray(w["w0"][:, t * h:(t + 1) * h]),
            "w1": np.ascontiguousarray(w["w1"][t * h:(t + 1) * h])}


def numpy_replay(x, y, w, dp, steps):
    """SGD on the global batch of dp*B rows of each step, in float64."""
    w0, w1 = w["w0"].astype(np.float64), w["w1"].astype(np.float64)
    losses = []
    n = dp * B
    for s in range(steps):
        rows = [(s * n + i) % ROWS for i in range(n)]
        xs, ys = x[rows].astype(np.float64), y[rows].astype(np.float64)
        h = xs @ w0
        e = h @ w1 - ys
        losses.append(np.mean(e * e))
        dpred = 2 * e / e.size
        dw1 = h.T @ dpred
        dw0 = xs.T @ (dpred @ w1.T)
        w0, w1 = w0 - LR * dw0, w1 - LR * dw1
    return np.array(losses), w0, w1


def mpirun(ranks):
    return loom.mpirun_command(ranks)


@pytest.mark.parametrize("dp,tp", [(1, 1), (2, 1), (2, 2)])
def test_two_stages_match_numpy(work, dp, tp):
    from safetensors.numpy import load_file
    tmp_path, x, y, w = work
    train, rt = build(tmp_path / f"dp{dp}tp{tp}", dp, tp)
    assert rt.count("loomrt.send_start") == 2 and rt.count("loomrt.recv_start") == 2, rt
    assert f"shard.grid @mesh(shape = {dp}x2x{tp})" in rt, rt
    def on_axis(k):
        return re.search(rf"all_reduce_start \S+ on @mesh grid_axes = \[{k}\]", rt)
    assert bool(on_axis(0)) == (dp > 1), rt
    assert bool(on_axis(2)) == (tp > 1), rt
    ranks = 2 * dp * tp
    weights = tmp_path / ("weights.safetensors" if tp == 1
                          else f"weights.tp{tp}.rank{{rank}}.safetensors")
    log, ckpt, counters = tmp_path / "loss.csv", tmp_path / "ckpt", tmp_path / "mem.json"
    run(mpirun(ranks) + [train, "--data", tmp_path / "data", "--steps", STEPS,
                         "--weights", weights, "--quiet",
                         "--log", log, "--checkpoint-dir", ckpt,
                         "--memory-counters", counters])
    rows = log.read_text().split()[1:]
    got = np.array([float(r.split(",")[1]) for r in rows])
    losses, w0, w1 = numpy_replay(x, y, w, dp, STEPS)
    assert len(got) == STEPS
    # The loss is the last stage's (stage 0 returns 0).
    np.testing.assert_allclose(got, losses, rtol=1e-5)
    # Rank r = (d*2 + p)*tp + t runs stage p with tp slice t, the same on
    # every data-parallel replica d.
    for r in range(ranks):
        p, t = (r // tp) % 2, r % tp
        tensors = load_file(str(ckpt / f"ckpt-{STEPS:08d}-rank{r}.safetensors"))
        name = ("w0", "w1")[p]
        want = slices({"w0": w0, "w1": w1}, tp, t)[name]
        assert list(tensors) == [name]
        np.testing.assert_allclose(tensors[name], want, rtol=1e-5, atol=1e-6)
    # --memory-counters come from the last stage's rank: its arena.
    import json
    arenas = [int(a) for a in re.findall(r"loomrt.arena_bytes = (\d+)", rt)]
    assert json.loads(counters.read_text())["arena_bytes"] == arenas[1]


def test_wrong_rank_count_and_help(work):
    tmp_path, *_ = work
    train, _ = build(tmp_path / "dp2", 2, 1)
    for ranks in (2, 3):
        proc = subprocess.run(mpirun(ranks) + [str(train), "--data", str(tmp_path / "data"),
                                               "--steps", "2"],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode != 0
        for r in range(ranks):
            assert (f"rank {r}: the program was compiled for the mesh dp=2,tp=1,pp=2 "
                    f"(4 ranks) but runs on {ranks} rank(s)") in proc.stderr, proc.stderr
    help_text = run([train, "--help"]).stdout
    assert "Inputs of pipeline stage 0 of 2" in help_text, help_text
    assert "Inputs of pipeline stage 1 of 2" in help_text, help_text
    assert help_text.count("usage:") == 1, help_text
    assert re.search(r"data\s+x float32", help_text) and re.search(r"data\s+y float32", help_text)

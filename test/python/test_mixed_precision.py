"""`loomc --precision bf16`: bf16 matrix products (f32 accumulation) and the
elementwise ops that follow them, f32 master weights, optimizer state,
norms, softmax, loss and collectives (loom-mixed-precision).

The tolerance is PyTorch's own: the same model trained in f32 and under
`torch.autocast("cpu", dtype=torch.bfloat16)` drifts apart by some
relative loss gap; Loom's bf16 losses may be at most twice that far from
Loom's f32 losses, and must differ from them (the products really round).
The f32 runs match PyTorch's f32 losses, so the two gaps share a baseline.
"""

import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from parallel_support import MPIRUN  # noqa: E402
from test_training import (LOOMC, import_example, make_data,  # noqa: E402
                           write_data)
from test_training import torch_losses as training_losses  # noqa: E402

pytestmark = pytest.mark.skipif(not LOOMC.exists(), reason="loomc not built")
np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

STEPS = 20
OPTIONS = dict(optimizer="adamw", lr=1e-3, weight_decay=0.01)
CLASSES = {"mlp_example": 10, "gpt_example": 50, "llama_example": 50}


def torch_losses(model, names, data, batch, steps, bf16):
    """AdamW steps in f32, or with the forward under CPU bf16 autocast."""
    return np.array(training_losses(
        model, names, data, batch, steps,
        lambda p: torch.optim.AdamW(p, lr=1e-3, weight_decay=0.01), bf16=bf16))


def gap(a, b):
    """The largest relative difference of two loss curves."""
    a, b = np.asarray(a), np.asarray(b)
    return float(np.max(np.abs(a - b) / np.abs(b)))


def setup(example, tmp_path, batch=None):
    model, args, names, m = import_example(example, tmp_path, batch=batch)
    data = make_data(names, args, 3, CLASSES[example], seed=1)
    batch = args[0].shape[0]
    reference = torch_losses(model, names, data, batch, STEPS, bf16=False)
    autocast = torch_losses(model, names, data, batch, STEPS, bf16=True)
    return m, write_data(tmp_path / "data", data), reference, autocast


def check_bf16_program(outdir):
    """The step really multiplies bf16 buffers: bf16 arena pointers and
    gemm calls on them (the runtime's bf16 overload)."""
    step = (outdir / "step.cpp").read_text()
    bf16 = set(re.findall(r"^\s*bf16 \*(\w+) = ", step, re.M))
    assert bf16, "no bf16 buffers in step.cpp"
    calls = re.findall(r"cpu::gemm(?:Strided)?\(([^;]*)\);", step)
    on_bf16 = [c for c in calls if any(re.search(rf"\b{b}\b", c) for b in bf16)]
    assert calls and len(on_bf16) == len(calls), (len(on_bf16), len(calls))


@pytest.mark.parametrize("example", sorted(CLASSES))
def test_bf16_stays_within_twice_pytorchs_autocast_gap(example, tmp_path):
    m, data, reference, autocast = setup(example, tmp_path)
    f32 = m.compile(outdir=tmp_path / "f32", **OPTIONS).train(data, STEPS)
    bf16 = m.compile(outdir=tmp_path / "bf16", precision="bf16",
                     **OPTIONS).train(data, STEPS)
    check_bf16_program(tmp_path / "bf16")
    np.testing.assert_allclose(f32, reference, rtol=1e-4)
    torch_gap, loom_gap = gap(autocast, reference), gap(bf16, f32)
    assert torch_gap > 1e-5, torch_gap  # autocast really rounds
    assert 1e-6 < loom_gap <= 2 * torch_gap, (loom_gap, torch_gap)
    assert bf16[-1] < bf16[0]  # it trains


@pytest.mark.parametrize("example", ["gpt_example", "llama_example"])
def test_bf16_activations_take_less_memory(example, tmp_path):
    """The memory plan's activation peak (the saved forward values and the
    backward's temporaries) shrinks: what the bf16 ops save is bf16. The
    f32 residual stream, softmax and loss keep part of it f32."""
    _, _, _, m = import_example(example, tmp_path, batch=32)
    peaks = {}
    for precision in ("f32", "bf16"):
        m.compile(outdir=tmp_path / precision, precision=precision, **OPTIONS)
        plan = json.loads((tmp_path / precision / "memory.json").read_text())
        peaks[precision] = plan["functions"][0]["activation_peak_bytes"]
    assert peaks["bf16"] < 0.9 * peaks["f32"], peaks


def test_precision_flag_errors(tmp_path):
    import subprocess
    _, _, _, m = import_example("mlp_example", tmp_path)
    model = tmp_path / "import" / "model.mlir"
    proc = subprocess.run([str(LOOMC), str(model), "-o", str(tmp_path / "o"),
                           "--precision", "fp8"], capture_output=True, text=True)
    assert proc.returncode != 0
    assert "--precision" in proc.stderr and "f32 or bf16" in proc.stderr, proc.stderr
    proc = subprocess.run([str(LOOMC), str(model), "-o", str(tmp_path / "o"),
                           "--precision", "bf16", "--excess-precision", "maybe"],
                          capture_output=True, text=True)
    assert proc.returncode != 0
    assert "--excess-precision must be on, off or auto, got 'maybe'" in proc.stderr, \
        proc.stderr
    assert "Arithmetic: f32 (default) or bf16" in subprocess.run(
        [str(LOOMC), "--help"], capture_output=True, text=True).stdout


@pytest.mark.skipif(MPIRUN is None, reason="mpirun not installed")
@pytest.mark.parametrize("mesh,ranks,extra", [
    ("tp=2", 2, {"require_sharded": True}),
    ("pp=2", 2, {"microbatches": 2}),
])
def test_bf16_composes_with_parallelism(mesh, ranks, extra, tmp_path):
    """Sharded (tp: the products are the shards, the all-reduces stay f32
    or the runtime's float-only collectives would not compile) and
    pipelined bf16 programs stay within the same bound of their f32
    counterparts."""
    m, data, reference, autocast = setup("gpt_example", tmp_path, batch=4)
    f32 = m.compile(outdir=tmp_path / "f32", mesh=mesh, **extra,
                    **OPTIONS).train(data, STEPS, ranks=ranks)
    bf16 = m.compile(outdir=tmp_path / "bf16", mesh=mesh, precision="bf16",
                     **extra, **OPTIONS).train(data, STEPS, ranks=ranks)
    for step in (tmp_path / "bf16").glob("step*.cpp"):
        assert "bf16 *" in step.read_text(), step
    if mesh.startswith("tp"):  # pp=2 steps on M micro-batches per step
        np.testing.assert_allclose(f32, reference, rtol=1e-4)
    torch_gap, loom_gap = gap(autocast, reference), gap(bf16, f32)
    assert 1e-6 < loom_gap <= 2 * torch_gap, (loom_gap, torch_gap)


@pytest.mark.skipif(MPIRUN is None, reason="mpirun not installed")
def test_bf16_swap_under_a_budget_changes_no_bit(tmp_path):
    """pp=2 in bf16 under a budget 10 % below stage 0's peak: --swap host
    fits it (memory.json) and moves bf16 activations without changing a
    bit of the losses."""
    _, args, names, m = import_example("gpt_example", tmp_path, batch=4)
    data = write_data(tmp_path / "data", make_data(names, args, 8, 50, seed=1))
    options = dict(mesh="pp=2", microbatches=4, precision="bf16", **OPTIONS)
    free = m.compile(outdir=tmp_path / "free", **options)

    def peaks(outdir):
        plan = json.loads((outdir / "memory.json").read_text())
        return [f["device_peak_bytes"] for f in plan["functions"]]
    budget = int(0.9 * max(peaks(tmp_path / "free")))
    swapped = m.compile(outdir=tmp_path / "swap", device_memory=budget, swap="host",
                        **options)
    assert max(peaks(tmp_path / "swap")) <= budget
    assert "swapOutStart(" in (tmp_path / "swap" / "step.cpp").read_text()
    assert swapped.train(data, 6, ranks=2) == free.train(data, 6, ranks=2)


def test_excess_precision_rounds_only_what_loops_store(tmp_path):
    """loom-excess-precision (on by default) drops the bf16 round trips
    inside fused loops: the program rounds fewer times and its losses
    differ from op-by-op rounding (`excess_precision="off"`, eager
    autocast's numerics); both stay within twice PyTorch's gap."""
    m, data, reference, autocast = setup("llama_example", tmp_path)
    f32 = m.compile(outdir=tmp_path / "f32", **OPTIONS).train(data, STEPS)
    losses, rounds = {}, {}
    for mode in ("on", "off"):
        program = m.compile(outdir=tmp_path / mode, precision="bf16",
                            excess_precision=mode, **OPTIONS)
        step = (tmp_path / mode / "step.cpp").read_text()
        rounds[mode] = step.count("bf16::roundToFloat(")
        losses[mode] = program.train(data, STEPS)
    assert rounds["on"] < rounds["off"], rounds
    assert losses["on"] != losses["off"]
    torch_gap = gap(autocast, reference)
    for mode, curve in losses.items():
        assert 1e-6 < gap(curve, f32) <= 2 * torch_gap, (mode, gap(curve, f32), torch_gap)


def test_bf16_norms_write_their_products_operand(tmp_path):
    """loom-fuse-norm-narrowing: each RMS norm of the LLaMA example, whose
    output only the bf16 products read, writes one bf16 buffer itself (the
    f32 result rounded once) instead of an f32 buffer that a conversion
    per product reads back. The losses are covered by the gap test."""
    _, _, _, m = import_example("llama_example", tmp_path)
    m.compile(outdir=tmp_path / "bf16", precision="bf16", emit_only=True, **OPTIONS)
    step = (tmp_path / "bf16" / "step.cpp").read_text()
    bf16 = set(re.findall(r"^\s*bf16 \*(\w+) = ", step, re.M))
    outputs = re.findall(r"cpu::rmsNorm\(\w+, \w+, (\w+),", step)
    assert outputs and all(o in bf16 for o in outputs), (outputs, bf16 & set(outputs))
    assert not re.search(r'"kernel convert \([^"]*_norm/', step)


@pytest.mark.parametrize("example", ["gpt_example", "llama_example"])
def test_bf16_norm_and_loss_gradients_are_one_call_each(example, tmp_path):
    """loom.norm_grad and the loss fusions, in the emitted bf16 step: each
    norm's gradient is one cpu::normGrad that, below the final norm, adds
    onto the residual stream's gradient, and reads its cotangent as a bf16
    product wrote it (loom-fuse-norm-grad) where one product computes it
    (GPT's norms; LLaMA's final norm: its other norms' cotangents are sums
    of products, which gemmAccumulate keeps in f32); the loss writes the
    softmax its gradient reads (loom-fuse-loss-softmax), so the logits'
    only softmax is that call. The losses are covered by the gap test."""
    _, _, _, m = import_example(example, tmp_path)
    m.compile(outdir=tmp_path / "bf16", precision="bf16", emit_only=True, **OPTIONS)
    step = (tmp_path / "bf16" / "step.cpp").read_text()
    bf16 = set(re.findall(r"^\s*bf16 \*(\w+) = ", step, re.M))
    norms = len(re.findall(r"cpu::(?:layerNorm|rmsNorm)\(", step))
    grads = re.findall(r"cpu::normGrad\((\w+), (\w+), (\w+), (\w+),", step)
    assert norms and len(grads) == norms, (len(grads), norms)
    widened = [g in bf16 for _, g, _, _ in grads]
    assert all(widened) if example == "gpt_example" else widened[0], grads
    assert sum(r != "nullptr" for *_, r in grads) == norms - 1, grads
    assert step.count("cpu::crossEntropySoftmax(") == 1
    assert "cpu::crossEntropy(" not in step
    assert not re.search(r'"softmax softmax \([^"]*CrossEntropy', step)


def test_weight_shadows_change_no_bit_and_resume_across_the_option(tmp_path):
    """loom-weight-shadows (on by default with bf16): each weight matrix the
    products read is a bf16 `shadow` argument that the AdamW kernel writes,
    not a conversion loop at the top of the step. The step reads bf16(W)
    either way, so the losses are bitwise those of `weight_shadows="off"`.
    Checkpoints hold no shadow and the runtime writes the shadows after a
    load: a checkpoint of the program without them resumes in the program
    with them to the same bits (were the shadows not rewritten from the
    loaded weights, the resumed steps would multiply stale or zero ones)."""
    _, args, names, m = import_example("gpt_example", tmp_path)
    data = write_data(tmp_path / "data", make_data(names, args, 8, 50, seed=1))
    on = m.compile(outdir=tmp_path / "on", precision="bf16", **OPTIONS)
    off = m.compile(outdir=tmp_path / "off", precision="bf16",
                    weight_shadows="off", **OPTIONS)
    step = {k: (tmp_path / k / "step.cpp").read_text() for k in ("on", "off")}
    spec = re.compile(r'\{"([^"]+)", Role::(\w+), DType::(\w+), \d+, '
                      r'\{[^}]*\}, (-?\d+), \w+(?:, /\*shadowOf=\*/(\d+))?\}')
    params = [n for n, role, _, _, _ in spec.findall(step["on"])
              if role == "Param"]
    shadows = [(n, dtype, int(of)) for n, role, dtype, _, of
               in spec.findall(step["on"]) if role == "Shadow" and of]
    assert shadows and not re.search(r"Role::Shadow", step["off"])
    for name, dtype, of in shadows:  # each names its param (args come first)
        assert dtype == "BF16" and name == params[of] + ".bf16", (name, of)
    # The weights' own conversion kernels (named by no source op) are gone:
    # the AdamW kernels write the shadows.
    converts = {k: s.count('"kernel convert"') for k, s in step.items()}
    assert converts == {"on": 0, "off": len(shadows)}, converts
    adamw = {k: re.findall(r'"kernel [^"]*sqrt\+div\+add\+mul\+div\+sub'
                           r'(\+convert)?"', s) for k, s in step.items()}
    assert adamw["on"].count("+convert") == len(shadows), adamw["on"]
    assert "+convert" not in adamw["off"], adamw["off"]
    # `train --help` lists what a user gives, not the derived copies.
    import subprocess
    usage = subprocess.run([str(on.executable), "--help"], capture_output=True,
                           text=True).stdout
    assert f"(and {len(shadows)} bf16 copies of weights" in usage, usage
    assert ".bf16" not in usage and params[0] in usage, usage
    straight = off.train(data, 8)
    assert on.train(data, 8) == straight
    ckpt = tmp_path / "ckpt"
    off.train(data, 4, checkpoint_dir=ckpt)
    [saved] = ckpt.glob("ckpt-*.safetensors")
    with open(saved, "rb") as f:
        header = json.loads(f.read(int.from_bytes(f.read(8), "little")))
    assert params[0] in header and not any(k.endswith(".bf16") for k in header)
    resumed = on.train(data, 8, checkpoint_dir=ckpt, resume=True,
                       log=tmp_path / "resumed.csv")
    assert resumed == straight[4:], (resumed, straight[4:])


@pytest.mark.skipif(MPIRUN is None, reason="mpirun not installed")
@pytest.mark.parametrize("mesh,extra", [
    ("tp=2", {"require_sharded": True}),
    ("tp=2", {"overlap_split": 2}),
    ("pp=2", {"microbatches": 2}),
])
def test_weight_shadows_change_no_bit_under_parallelism(mesh, extra, tmp_path):
    """Shadows of tensor-parallel slices (each rank rounds its own) and of
    pipeline stages' weights (the tied embedding's on the stage whose head
    reads it in bf16): the losses are bitwise those without shadows. With
    Oases' sub-batches too: the pass runs after loom-overlap-order, whose
    order decides which sums a fused loop keeps in f32 (run before it, the
    order moved and the losses differed from step 2 on)."""
    _, args, names, m = import_example("gpt_example", tmp_path, batch=4)
    data = write_data(tmp_path / "data", make_data(names, args, 6, 50, seed=1))
    losses = {}
    for mode in ("on", "off"):
        program = m.compile(outdir=tmp_path / mode, mesh=mesh, precision="bf16",
                            weight_shadows=mode, **extra, **OPTIONS)
        sources = "".join(p.read_text() for p in (tmp_path / mode).glob("step*.cpp"))
        assert (sources.count("Role::Shadow") > 0) == (mode == "on"), mode
        losses[mode] = program.train(data, 6, ranks=2)
    assert losses["on"] == losses["off"]

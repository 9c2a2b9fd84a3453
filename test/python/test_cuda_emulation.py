"""The CUDA target without a GPU: `loomc --target cuda` emits one `.cu`
(__global__ kernels launched through LOOM_LAUNCH, cuBLAS/NCCL through the
runtime's cuda:: API); `--cuda-emulate` builds that same source as host
code (loom/Runtime/CudaEmulation.h), so every emitted kernel runs here.

The emulated programs must train the test models (the MLP and the small
GPT of test/python/models) with the CPU programs' per-step losses, on one
rank and on two (dp=2, the gradients all-reduced through the CUDA API's
emulated NCCL, i.e. MPI). Where nvcc is installed, the emitted source must
also compile with it (the real CUDA syntax), and a program built by nvcc
for a GPU must say that there is no CUDA device when there is none.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import loom

sys.path.insert(0, str(Path(__file__).parent))
from test_training import LOOMC, ROOT, import_example, make_data, write_data  # noqa: E402

pytestmark = pytest.mark.skipif(not LOOMC.exists(), reason="loomc not built")
np = pytest.importorskip("numpy")
pytest.importorskip("torch")
pytest.importorskip("onnx")

STEPS = 6
CLASSES = {"mlp_example": 10, "gpt_example": 50}
OPTIONS = dict(optimizer="adamw", lr=1e-3, weight_decay=0.01)


def nvcc():
    """The nvcc to check the emitted source with, or None."""
    for candidate in (os.environ.get("CUDACXX"), shutil.which("nvcc"),
                      "/usr/local/cuda/bin/nvcc"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def has_gpu():
    return any(Path("/dev").glob("nvidia[0-9]*"))


def check_source(source, example, dp):
    """The emitted .cu really is CUDA: kernels, launches, library calls."""
    assert "__global__ void k0_" in source
    assert "LOOM_LAUNCH(k0_" in source
    assert "<<<" not in source  # launches go through the macro
    assert "cuda::gemm(ctx, " in source
    # Linear layers' biases ride on their gemms (cuBLASLt's epilogue).
    assert "cuda::gemmBias(ctx, " in source
    assert "cpu::gemm" not in source
    if example == "gpt_example":
        # The MLP's tanh GELU is its fc gemm's GELU_AUX_BIAS epilogue, its
        # gradient the DGELU epilogue of the gemm into the GELU's output.
        assert "cuda::gemmBiasGelu(ctx, " in source
        assert "cuda::gemmDGelu(ctx, " in source
        assert "cuda::gather(ctx, " in source
        assert "cuda::scatterAdd(ctx, " in source
        assert "cuda::softmax(ctx, " in source or "cuda::layerNorm(ctx, " in source
    if dp > 1:
        assert "cuda::allReduceStart(ctx, " in source
        assert "cuda::wait(ctx, " in source


@pytest.mark.parametrize("dp", [1, 2])
@pytest.mark.parametrize("example", sorted(CLASSES))
def test_emulated_cuda_trains_like_cpu(example, dp, tmp_path):
    _, args, names, m = import_example(example, tmp_path)
    data = write_data(tmp_path / "data",
                      make_data(names, args, 3 * dp, CLASSES[example], seed=7))
    mesh = None if dp == 1 else f"dp={dp}"
    cpu = m.compile(outdir=tmp_path / "cpu", mesh=mesh, **OPTIONS)
    cuda = m.compile(outdir=tmp_path / "cuda", mesh=mesh, target="cuda",
                     cuda_emulate=True, **OPTIONS)
    check_source((tmp_path / "cuda" / "step.cu").read_text(), example, dp)
    assert "-DLOOM_CUDA_EMULATION" in (tmp_path / "cuda" / "build.sh").read_text()
    ranks = {} if dp == 1 else {"ranks": dp}
    expected = cpu.train(data, STEPS, log=tmp_path / "cpu.csv", **ranks)
    got = cuda.train(data, STEPS, log=tmp_path / "cuda.csv", **ranks)
    assert len(got) == STEPS
    np.testing.assert_allclose(got, expected, rtol=1e-5)


def test_emulated_cuda_rotary_reads_heads_in_place(tmp_path):
    """LLaMA's rotary embeddings read the halves of each head where the
    q and k products wrote them (loom-fold-layout-copies): the CUDA
    kernels are launched on pointers moved by the halves' offsets and
    index them with the products' strides, and train as the CPU program
    does."""
    _, args, names, m = import_example("llama_example", tmp_path)
    data = write_data(tmp_path / "data", make_data(names, args, 3, 50, seed=7))
    cpu = m.compile(outdir=tmp_path / "cpu", **OPTIONS)
    cuda = m.compile(outdir=tmp_path / "cuda", target="cuda", cuda_emulate=True,
                     **OPTIONS)
    source = (tmp_path / "cuda" / "step.cu").read_text()
    assert re.search(r"LOOM_LAUNCH\(k\d+_neg, [^;]*\(\w+ \+ \d+\)", source), \
        "no negation launched on a moved pointer"
    assert '"copy slice (' not in source
    expected = cpu.train(data, STEPS, log=tmp_path / "cpu.csv")
    got = cuda.train(data, STEPS, log=tmp_path / "cuda.csv")
    np.testing.assert_allclose(got, expected, rtol=1e-5)


def test_emulated_cuda_bf16_trains_like_cpu_bf16(tmp_path):
    """--precision bf16 on CUDA: the emitted kernels store bf16 buffers
    (loom/Runtime/BFloat16.h), the products go to cuBLAS's bf16 gemm
    (the CPU's under emulation), and the losses are the CPU program's."""
    _, args, names, m = import_example("gpt_example", tmp_path)
    data = write_data(tmp_path / "data",
                      make_data(names, args, 3, CLASSES["gpt_example"], seed=7))
    cpu = m.compile(outdir=tmp_path / "cpu", precision="bf16", **OPTIONS)
    cuda = m.compile(outdir=tmp_path / "cuda", target="cuda", cuda_emulate=True,
                     precision="bf16", **OPTIONS)
    source = (tmp_path / "cuda" / "step.cu").read_text()
    assert "__global__ void" in source and "const bf16 *p0" in source
    # The linear layers' biases are the bf16 gemms' epilogues on both.
    assert "cuda::gemmBias(ctx" in source
    assert "cpu::gemmBias(" in (tmp_path / "cpu" / "step.cpp").read_text()
    f32 = m.compile(outdir=tmp_path / "f32", target="cuda", cuda_emulate=True,
                    **OPTIONS).train(data, STEPS, log=tmp_path / "f32.csv")
    expected = cpu.train(data, STEPS, log=tmp_path / "cpu.csv")
    got = cuda.train(data, STEPS, log=tmp_path / "cuda.csv")
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    assert not np.allclose(got, f32, rtol=1e-6, atol=0)  # it is not f32


def test_emulated_cuda_keeps_weights_on_the_device(tmp_path):
    """Parameters and AdamW state stay in device memory between steps:
    after the first upload a step copies the batch in and the loss out,
    and the weights go to the host only for the checkpoint (counted by
    --memory-counters: every byte through cuda::copyToDevice/copyToHost).
    A run resumed from that checkpoint uploads them again and logs the
    uninterrupted run's losses."""
    import json
    import re
    _, args, names, m = import_example("gpt_example", tmp_path)
    data = write_data(tmp_path / "data",
                      make_data(names, args, 3, CLASSES["gpt_example"], seed=7))
    cuda = m.compile(outdir=tmp_path / "cuda", target="cuda", cuda_emulate=True,
                     **OPTIONS)
    memory = json.loads((tmp_path / "cuda" / "memory.json").read_text())
    persistent = memory["functions"][0]["persistent_bytes"]
    weights = persistent["params"] + persistent["optimizer_state"]
    assert weights > 0
    # AdamW's updates are written in place: the program holds no second
    # copy of the weights, so it can keep the only one on the device.
    constants = sum(int(b) for b in re.findall(
        r"copyToDevice\(ctx, device\.constants\[\d+\], \w+, (\d+)\)",
        (tmp_path / "cuda" / "step.cu").read_text()))
    steps = 4
    counters = tmp_path / "counters.json"
    full = cuda.train(data, steps, log=tmp_path / "full.csv",
                      checkpoint_dir=tmp_path / "ck-full",
                      extra_args=["--memory-counters", str(counters)])
    c = json.loads(counters.read_text())
    assert c["host_to_device_bytes"] == weights + constants + steps * persistent["data"]
    assert c["device_to_host_bytes"] == steps * persistent["results"] + weights

    half = cuda.train(data, 2, log=tmp_path / "half.csv",
                      checkpoint_dir=tmp_path / "ck")
    rest = cuda.train(data, steps, log=tmp_path / "rest.csv",
                      checkpoint_dir=tmp_path / "ck", resume=True)
    np.testing.assert_allclose(half + rest[-2:], full, rtol=1e-6)


def test_cuda_emulate_needs_target_cuda(tmp_path):
    _, _, _, m = import_example("mlp_example", tmp_path)
    with pytest.raises(loom.LoomError, match="--cuda-emulate .* needs --target cuda"):
        m.compile(outdir=tmp_path / "out", cuda_emulate=True)


@pytest.mark.parametrize("example,precision",
                         [(e, "f32") for e in sorted(CLASSES)] +
                         [("gpt_example", "bf16")])
def test_nvcc_compiles_emitted_source(example, precision, tmp_path):
    """The emitted .cu is CUDA that nvcc accepts (compiled with -c: the
    runtime's headers only, no GPU needed), bf16 buffers included."""
    compiler = nvcc()
    if compiler is None:
        pytest.skip("nvcc not found (set CUDACXX or put nvcc on PATH)")
    _, _, _, m = import_example(example, tmp_path)
    m.compile(outdir=tmp_path / "out", mesh="dp=2", target="cuda",
              cuda_emulate=True, precision=precision, **OPTIONS)
    source = tmp_path / "out" / "step.cu"
    proc = subprocess.run([compiler, "-std=c++17", "-c", "-I", str(ROOT / "include"),
                           "-Xcompiler=-Wall,-Wextra", "-Werror=all-warnings",
                           str(source), "-o", str(tmp_path / "step.o")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "step.o").stat().st_size > 0


def test_nvcc_compiles_micro_batch_loops(tmp_path):
    """pp=2 with 6 micro-batches: the emitted .cu prints the steady state
    of each stage as a loop over a table (offsets, tags, handle slots;
    lib/Target/Common/Repeats.cpp), and nvcc accepts it."""
    compiler = nvcc()
    if compiler is None:
        pytest.skip("nvcc not found (set CUDACXX or put nvcc on PATH)")
    _, _, _, m = import_example("gpt_example", tmp_path)
    m.compile(outdir=tmp_path / "out", mesh="pp=2", microbatches=6, target="cuda",
              emit_only=True, **OPTIONS)
    source = tmp_path / "out" / "step.cu"
    text = source.read_text()
    assert text.count("repeats of the same") >= 2, "no loop in a stage"
    assert "for (int64_t rep = 0; rep < " in text and "comm[kRepeat0[rep][" in text
    proc = subprocess.run([compiler, "-std=c++17", "-c", "-I", str(ROOT / "include"),
                           "-Xcompiler=-Wall,-Wextra", "-Werror=all-warnings",
                           str(source), "-o", str(tmp_path / "step.o")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_block_reductions_train_like_cpu(tmp_path):
    """Reductions of 256 or more elements per output fold them with a block
    of threads (one block per output, a tree in shared memory down to a
    warp, then __shfl_down_sync; launched by LOOM_LAUNCH_SYNC): here
    gradient clipping's squared norms over each weight. Emulated with the
    block's threads as fibers (barriers and shuffles exchange values only
    when every thread or lane has arrived), the clipped run logs the CPU
    program's losses (a wrong norm would scale every update wrongly: the
    clip at 0.01 is active, the unclipped losses differ); nvcc, where
    installed, compiles the source."""
    _, args, names, m = import_example("mlp_example", tmp_path)
    data = write_data(tmp_path / "data",
                      make_data(names, args, 3, CLASSES["mlp_example"], seed=7))
    clipped = dict(OPTIONS, clip_grad_norm=0.01)
    cpu = m.compile(outdir=tmp_path / "cpu", **clipped)
    cuda = m.compile(outdir=tmp_path / "cuda", target="cuda", cuda_emulate=True,
                     **clipped)
    source = (tmp_path / "cuda" / "step.cu").read_text()
    assert "LOOM_LAUNCH_SYNC(" in source
    assert "__shared__ double partial[256];" in source
    assert "__shfl_down_sync(0xffffffffu, v, offset)" in source
    expected = cpu.train(data, STEPS, log=tmp_path / "cpu.csv")
    got = cuda.train(data, STEPS, log=tmp_path / "cuda.csv")
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    free = m.compile(outdir=tmp_path / "free", **OPTIONS).train(
        data, STEPS, log=tmp_path / "free.csv")
    assert not np.allclose(got[1:], free[1:], rtol=1e-4)
    compiler = nvcc()
    if compiler is not None:
        proc = subprocess.run([compiler, "-std=c++17", "-c", "-I", str(ROOT / "include"),
                               "-Xcompiler=-Wall,-Wextra", "-Werror=all-warnings",
                               str(tmp_path / "cuda" / "step.cu"), "-o",
                               str(tmp_path / "step.o")], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr


def test_gpu_program_without_gpu_says_so(tmp_path):
    """`loomc --target cuda` (nvcc, cuBLAS, NCCL) builds a program that, on
    a machine without a GPU, exits non-zero saying no CUDA device was
    found."""
    if has_gpu():
        pytest.skip("this machine has a GPU")
    _, args, names, m = import_example("mlp_example", tmp_path)
    try:
        program = m.compile(outdir=tmp_path / "out", target="cuda", **OPTIONS)
    except loom.LoomError as e:
        if "without the CUDA backend" in str(e):
            pytest.skip("this Loom was built without the CUDA backend (no nvcc, cuBLAS or NCCL)")
        raise
    data = write_data(tmp_path / "data", make_data(names, args, 3, 10, seed=7))
    proc = subprocess.run([str(program.executable), "--data", str(data), "--steps", "1"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "no CUDA device found" in proc.stderr, proc.stderr


def test_emulated_cuda_pipeline_resumes_like_cpu(tmp_path):
    """pp=2 stage programs keep their weights on the device too: four
    steps, a checkpoint, two more after --resume: the CPU program's
    losses."""
    _, args, names, m = import_example("gpt_example", tmp_path, 2)
    data = write_data(tmp_path / "data",
                      make_data(names, args, 6, CLASSES["gpt_example"], seed=7))
    options = dict(mesh="pp=2", microbatches=2, **OPTIONS)
    cpu = m.compile(outdir=tmp_path / "cpu", **options)
    cuda = m.compile(outdir=tmp_path / "cuda", target="cuda", cuda_emulate=True,
                     **options)
    expected = cpu.train(data, 6, ranks=2)
    first = cuda.train(data, 4, ranks=2, log=tmp_path / "a.csv",
                       checkpoint_dir=tmp_path / "ck")
    rest = cuda.train(data, 6, ranks=2, log=tmp_path / "b.csv",
                      checkpoint_dir=tmp_path / "ck", resume=True)
    np.testing.assert_allclose(first + rest[-2:], expected, rtol=1e-5)

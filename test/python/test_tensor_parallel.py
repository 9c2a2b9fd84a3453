"""Tensor parallelism end to end: `loomc --mesh tp=T` and `mpirun -np T`.

PyTorch's MLP and GPT-2-style model, imported through ONNX (linear layers
as `x @ transpose(W)` or Gemm), compiled with loom-tensor-parallel and
loom-vocab-parallel and trained on T ranks that all read the same rows:
every logged loss must agree within 1e-4 (relative) with PyTorch's loop and
with Loom's single-device program. The passes must find the blocks in the imported IR (tp_copy and
all_reduce present), and in the GPT the vocabulary-parallel embedding, tied
LM head and cross-entropy (wte cut by rows; on 4 ranks its 50 rows padded
to 52), so that the parity is not that of a replicated run.
Ranks run oversubscribed on this machine's cores.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import loom

sys.path.insert(0, str(Path(__file__).parent))
from parallel_support import MPI_MARKS  # noqa: E402

pytestmark = MPI_MARKS
np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

from test_training import (OPTIMIZERS, import_example, make_data,  # noqa: E402
                           torch_losses, write_data)

STEPS = 20
TP = 2
# The collectives the pass must create: (tp_copy, all_reduce). One of each
# per MLP or attention block (column layers' f, row layers' g); the GPT's
# vocabulary parallelism adds f on the LM head's input, one all-reduce for
# the embedding and three for the cross-entropy (max, sum of exp, target).
COLLECTIVES = {"mlp_example": (1, 1), "gpt_example": (4 + 1, 4 + 1 + 3)}


def partitioned_ir(m, tp=TP):
    return m.run_pass("builtin.module(inline, loom-shape-inference, "
                      f"loom-tensor-parallel{{function=main tp={tp}}}, "
                      f"loom-vocab-parallel{{function=main tp={tp}}})").ir


@pytest.mark.parametrize("example", ["mlp_example", "gpt_example"])
def test_tensor_parallel_matches_single_device_and_pytorch(example, tmp_path):
    batch = 8 if example == "mlp_example" else 4
    model, args, names, m = import_example(example, tmp_path, batch)

    ir = partitioned_ir(m)
    copies, reduces = COLLECTIVES[example]
    assert ir.count("loom.tp_copy") == copies, ir
    assert ir.count("shard.all_reduce") == reduces, ir
    assert "loom.shard = #loom.shard<" in ir, ir
    if example == "gpt_example":
        assert 'tensor<25x32xf32> {loom.name = "wte.weight", loom.param, ' \
            'loom.shard = #loom.shard<dim = 0, parts = 2>}' in ir, ir
        assert "max {loom.stop_gradient}" in ir and "loom.cross_entropy" not in ir, ir

    classes = 10 if example == "mlp_example" else 50
    data = make_data(names, args, 3, classes, seed=7)
    data_dir = write_data(tmp_path / "data", data)
    options, make_opt = OPTIMIZERS["sgd"]

    expected = torch_losses(model, names, data, batch, STEPS, make_opt)
    one = m.compile(outdir=tmp_path / "single", **options).train(data_dir, STEPS)
    program = m.compile(outdir=tmp_path / "tp", mesh=f"tp={TP}", **options)
    assert program.mesh_size() == TP
    assert '/*tp=*/2' in (tmp_path / "tp" / "step.cpp").read_text()
    got = program.train(data_dir, STEPS, ranks=TP)

    assert len(got) == STEPS
    np.testing.assert_allclose(one, expected, rtol=1e-4)
    np.testing.assert_allclose(got, expected, rtol=1e-4)
    np.testing.assert_allclose(got, one, rtol=1e-4)


def test_padded_vocabulary_on_four_ranks_matches_pytorch(tmp_path):
    """tp=4 does not divide the GPT's vocabulary of 50: wte is padded to 52
    rows, 13 per rank (the last rank's end in 2 zero rows), and training
    still matches PyTorch (AdamW: the padding rows stay zero in the
    checkpoints only if they get no gradient)."""
    from safetensors.numpy import load_file
    tp, steps, batch = 4, 8, 4
    model, args, names, m = import_example("gpt_example", tmp_path, batch)
    ir = partitioned_ir(m, tp)
    assert 'tensor<13x32xf32> {loom.name = "wte.weight", loom.param, ' \
        'loom.shard = #loom.shard<dim = 0, parts = 4, padded = 52>}' in ir, ir
    assert "dense<0xFF800000> : tensor<32x13xf32>" in ir, ir

    data = make_data(names, args, 3, 50, seed=5)
    data_dir = write_data(tmp_path / "data", data)
    options, make_opt = OPTIMIZERS["adamw"]
    expected = torch_losses(model, names, data, batch, steps, make_opt)
    program = m.compile(outdir=tmp_path / "tp", mesh=f"tp={tp}", **options)
    full = load_file(str(tmp_path / "tp" / "weights.safetensors"))["wte.weight"]
    padded = np.concatenate([full, np.zeros((2, 32), full.dtype)])
    for r in range(tp):
        part = load_file(str(tmp_path / "tp" / f"weights.rank{r}.safetensors"))
        np.testing.assert_array_equal(part["wte.weight"], padded[13 * r:13 * (r + 1)])
    got = program.train(data_dir, steps, ranks=tp, checkpoint_dir=tmp_path / "ckpt")

    assert len(got) == steps
    np.testing.assert_allclose(got, expected, rtol=1e-4)
    # Each rank's checkpoint holds its padded slice; the padding rows get no
    # gradient and stay zero under AdamW.
    for r in range(tp):
        wte = load_file(str(tmp_path / "ckpt" / f"ckpt-{steps:08d}-rank{r}.safetensors"))["wte.weight"]
        assert wte.shape == (13, 32)
        assert np.any(wte != padded[13 * r:13 * (r + 1)])
    np.testing.assert_array_equal(wte[11:], 0)


def test_rank_weights_are_the_slices_of_the_full_weights(tmp_path):
    """fc1 is column-parallel (W [out, in] cut on out, its bias too), fc2
    row-parallel (W cut on in, its bias whole on every rank)."""
    from safetensors.numpy import load_file
    _, _, _, m = import_example("mlp_example", tmp_path, 4)
    m.compile(outdir=tmp_path / "tp", mesh=f"tp={TP}")
    full = load_file(str(tmp_path / "tp" / "weights.safetensors"))
    cuts = {"fc1.weight": 0, "fc1.bias": 0, "fc2.weight": 1}
    for r in range(TP):
        part = load_file(str(tmp_path / "tp" / f"weights.rank{r}.safetensors"))
        assert set(part) == set(full)
        for name, value in full.items():
            if name not in cuts:
                np.testing.assert_array_equal(part[name], value)
                continue
            expected = np.split(value, TP, axis=cuts[name])[r]
            np.testing.assert_array_equal(part[name], expected)


def test_weights_option_needs_a_rank_placeholder(tmp_path):
    _, args, names, m = import_example("mlp_example", tmp_path, 4)
    data_dir = write_data(tmp_path / "data", make_data(names, args, 3, 10, seed=1))
    program = m.compile(outdir=tmp_path / "tp", mesh=f"tp={TP}", optimizer="sgd", lr=0.1)
    default = program.train(data_dir, 3, ranks=TP)

    # {rank} names each rank's file; the same losses as the default files.
    moved = tmp_path / "moved"
    moved.mkdir()
    for r in range(TP):
        shutil.copy(tmp_path / "tp" / f"weights.rank{r}.safetensors",
                    moved / f"w-{r}.safetensors")
    placeholder = program.train(data_dir, 3, ranks=TP, extra_args=[
        "--weights", str(moved / "w-{rank}.safetensors")])
    assert placeholder == default

    with pytest.raises(loom.LoomError) as info:
        program.train(data_dir, 3, ranks=TP, extra_args=[
            "--weights", str(tmp_path / "tp" / "weights.safetensors")])
    assert "--weights must name them with a {rank} placeholder" in str(info.value)


def test_tp_program_on_the_wrong_rank_count_is_an_error(tmp_path):
    _, args, names, m = import_example("mlp_example", tmp_path, 4)
    data_dir = write_data(tmp_path / "data", make_data(names, args, 3, 10, seed=1))
    program = m.compile(outdir=tmp_path / "tp", mesh=f"tp={TP}", optimizer="sgd", lr=0.1)
    proc = subprocess.run([str(program.executable), "--data", str(data_dir), "--steps", "2"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "compiled for the mesh dp=1,tp=2,pp=1 (2 ranks)" in proc.stderr, proc.stderr


def test_checkpoints_are_per_rank_slices_and_resume_continues(tmp_path):
    from safetensors.numpy import load_file
    _, args, names, m = import_example("mlp_example", tmp_path, 4)
    data_dir = write_data(tmp_path / "data", make_data(names, args, 3, 10, seed=2))
    program = m.compile(outdir=tmp_path / "tp", mesh=f"tp={TP}", optimizer="adamw", lr=1e-3)
    straight = program.train(data_dir, 6, ranks=TP, log=tmp_path / "straight.csv")
    ckpt, log = tmp_path / "ckpt", tmp_path / "resumed.csv"
    program.train(data_dir, 3, ranks=TP, log=log, checkpoint_dir=ckpt)
    for r in range(TP):
        assert load_file(str(ckpt / f"ckpt-00000003-rank{r}.safetensors"))["fc1.weight"].shape \
            == (32 // TP, 16)
    resumed = program.train(data_dir, 6, ranks=TP, log=log, checkpoint_dir=ckpt, resume=True)
    assert resumed == straight

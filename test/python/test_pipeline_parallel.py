"""Pipeline parallelism end to end: `loomc --mesh dp=D,tp=T,pp=P
--microbatches M --schedule 1f1b|gpipe` and `mpirun -np D*T*P`.

The model is imported with the micro-batch size b; each step runs M
micro-batches per data-parallel rank, so the global batch is D*M*b. The
references are PyTorch's own loop on the global batch and Loom's
single-device program: every logged loss must agree within 1e-4 relative.
The compiled plan must really hold P stages (and the tp collectives), so a
replicated run cannot pass. Ranks run oversubscribed on this machine's cores.
"""

import json
import re
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
CLASSES = {"mlp_example": 10, "gpt_example": 50}


def parse_mesh(mesh):
    axes = dict(dp=1, tp=1, pp=1)
    for part in mesh.split(","):
        key, value = part.split("=")
        axes[key] = int(value)
    return axes


def clipped_sgd(params, max_norm=0.05):
    """SGD after torch.nn.utils.clip_grad_norm_ (the reference of
    --clip-grad-norm)."""
    params = list(params)

    class ClippedSGD(torch.optim.SGD):
        def step(self, closure=None):
            torch.nn.utils.clip_grad_norm_(params, max_norm)
            return super().step(closure)

    return ClippedSGD(params, lr=0.1)


OPTIMIZERS = dict(OPTIMIZERS, clipped_sgd=(
    dict(optimizer="sgd", lr=0.1, clip_grad_norm=0.05), clipped_sgd))


def run_parity(tmp_path, example, mesh, microbatches, micro, opt, schedule="1f1b",
               falls=True, steps=STEPS, extra_args=None):
    axes = parse_mesh(mesh)
    global_batch = axes["dp"] * microbatches * micro
    model, args, names, single = import_example(example, tmp_path, global_batch, "import-single")
    _, _, _, per_rank = import_example(example, tmp_path, micro, "import-micro")
    data = make_data(names, args, 3, CLASSES[example], seed=5)
    data_dir = write_data(tmp_path / "data", data)
    options, make_opt = OPTIMIZERS[opt]
    expected = torch_losses(model, names, data, global_batch, steps, make_opt)
    one = single.compile(outdir=tmp_path / "single", **options).train(data_dir, steps)
    program = per_rank.compile(outdir=tmp_path / "pp", mesh=mesh, microbatches=microbatches,
                               schedule=schedule, **options)
    plan = json.loads((program.outdir / "plan.json").read_text())
    assert plan["mesh"] == axes
    assert plan["microbatches"] == microbatches and plan["schedule"] == schedule
    assert len(plan["functions"]) == axes["pp"]
    assert plan["partition"]["stages"] == axes["pp"]
    step_cpp = (program.outdir / "step.cpp").read_text()
    if axes["pp"] > 1:
        assert "sendStart" in step_cpp and "recvStart" in step_cpp
    if microbatches > 1:
        # Each micro-batch's weight gradients are added onto the running
        # sums by their gemms (loom-fuse-gemm-accumulate), so the parity
        # below covers the accumulating gemms.
        assert "cpu::gemmAccumulate(" in step_cpp
    if axes["tp"] > 1:
        sharded = {p["name"] for p in plan["tensor_parallel_parameters"]}
        assert sharded, plan
        if example == "gpt_example":
            # The tied embedding / LM head is vocabulary-parallel too, and
            # read by the first and the last stage.
            assert "wte.weight" in sharded, sharded
    got = program.train(data_dir, steps, ranks=axes["dp"] * axes["tp"] * axes["pp"],
                        extra_args=extra_args)
    assert len(got) == steps
    np.testing.assert_allclose(one, expected, rtol=1e-4)
    np.testing.assert_allclose(got, expected, rtol=1e-4)
    np.testing.assert_allclose(got, one, rtol=1e-4)
    if falls:
        assert got[-1] < got[0]
    return program


def test_gradient_accumulation_matches_the_full_batch(tmp_path):
    """pp=1 with 4 micro-batches: one program that accumulates gradients."""
    run_parity(tmp_path, "mlp_example", "dp=1", 4, 2, "sgd")


@pytest.mark.parametrize("mesh,microbatches,schedule", [
    ("pp=2", 4, "1f1b"), ("pp=2", 3, "gpipe"), ("pp=4", 4, "1f1b"),
])
def test_pipeline_matches_single_device_and_pytorch(mesh, microbatches, schedule, tmp_path):
    # pp=4 on a 2-layer model: stages are cut at op granularity.
    run_parity(tmp_path, "gpt_example", mesh, microbatches, 1, "sgd", schedule)


def stage_sources(step_cpp):
    """The text of each `namespace stage<k>` of a pipelined step.cpp."""
    parts = re.split(r"^namespace stage\d+ \{$", step_cpp, flags=re.M)[1:]
    assert parts, "no stage namespaces in step.cpp"
    return parts


def test_micro_batches_roll_into_loops_that_train_the_same(tmp_path):
    """8 micro-batches on pp=2 (1F1B): each stage prints its steady state
    once, as a loop over a table of what differs per micro-batch (arena
    offsets, tags, handle slots; loomc --roll-repeats, the default), so
    step.cpp barely grows from 4 micro-batches to 8. The rolled program
    matches PyTorch and logs bit-identical losses to the program that
    prints every op (--roll-repeats=false)."""
    program = run_parity(tmp_path, "gpt_example", "pp=2", 8, 1, "adamw")
    rolled = (program.outdir / "step.cpp").read_text()
    for stage in stage_sources(rolled):
        loops = re.findall(r"// (\d+) repeats of the same (\d+) ops", stage)
        assert loops, "a stage of 8 micro-batches has no loop"
        assert max(int(n) for n, _ in loops) >= 4, loops
        assert "for (int64_t rep = 0; rep < " in stage
    # The micro-batch slices share one function, called on moved pointers.
    assert re.search(r"_copy\(ctx, \(a\d+_\w+ \+ kRepeat\d+\[rep\]\[\d+\]\)", rolled)

    _, _, _, per_rank = import_example("gpt_example", tmp_path, 1, "import-micro")
    options = OPTIMIZERS["adamw"][0]
    unrolled = per_rank.compile(outdir=tmp_path / "unrolled", mesh="pp=2", microbatches=8,
                                roll_repeats=False, **options)
    every_op = (unrolled.outdir / "step.cpp").read_text()
    assert "repeats of the same" not in every_op
    assert len(rolled.splitlines()) < 0.6 * len(every_op.splitlines())
    data_dir = tmp_path / "data"
    assert (program.train(data_dir, STEPS, ranks=2)
            == unrolled.train(data_dir, STEPS, ranks=2))

    four = per_rank.compile(outdir=tmp_path / "four", mesh="pp=2", microbatches=4,
                            emit_only=True, **options)
    four_lines = len((four.outdir / "step.cpp").read_text().splitlines())
    assert len(rolled.splitlines()) < 1.1 * four_lines


def test_gpipe_with_messages_past_the_eager_limit(tmp_path):
    """GPipe, pp=2, 4 micro-batches of 8 rows: the activations and gradients
    are large enough for MPI's rendezvous protocol, so a send completes only
    once the peer posted its receive. A rank's receive must not wait for its
    own earlier sends (the last stage's gradient sends while the first stage
    still sends activations) -- this used to hang until --comm-timeout."""
    run_parity(tmp_path, "gpt_example", "pp=2", 4, 8, "sgd", "gpipe", steps=3,
               extra_args=["--comm-timeout", "60"])


@pytest.mark.parametrize("opt", ["sgd", "adamw"])
def test_3d_mesh_on_8_ranks(opt, tmp_path):
    """The issue's parity run: dp=2, tp=2, pp=2, 4 micro-batches, 1F1B."""
    run_parity(tmp_path, "gpt_example", "dp=2,tp=2,pp=2", 4, 1, opt)


def test_clipping_uses_the_global_norm_on_a_3d_mesh(tmp_path):
    """--clip-grad-norm on dp=2, tp=2, pp=2: the norm sums the tensor-parallel
    slices over tp, the stages over pp, and counts the tied embedding (a
    vocabulary-parallel slice held by the first and the last stage) once."""
    # (Clipped this hard, 20 steps need not lower the loss.)
    run_parity(tmp_path, "gpt_example", "dp=2,tp=2,pp=2", 4, 1, "clipped_sgd", falls=False)
    # The clipping is active: without it PyTorch's losses differ.
    model, args, names, _ = import_example("gpt_example", tmp_path, 8, "import-check")
    data = make_data(names, args, 3, CLASSES["gpt_example"], seed=5)
    plain = torch_losses(model, names, data, 8, STEPS, OPTIMIZERS["sgd"][1])
    clipped = torch_losses(model, names, data, 8, STEPS, clipped_sgd)
    assert max(abs(a - b) for a, b in zip(plain, clipped)) > 1e-2


def test_plan_file_reproduces_the_compilation(tmp_path):
    _, args, names, m = import_example("mlp_example", tmp_path, 2, "import")
    first = m.compile(outdir=tmp_path / "first", mesh="pp=2", microbatches=2,
                      schedule="gpipe", optimizer="sgd", lr=0.1)
    plan = json.loads((first.outdir / "plan.json").read_text())
    second = m.compile(outdir=tmp_path / "second", plan=str(first.outdir / "plan.json"),
                       optimizer="sgd", lr=0.1)
    again = json.loads((second.outdir / "plan.json").read_text())
    for key in ("mesh", "microbatches", "schedule", "stage_boundaries", "functions"):
        assert again[key] == plan[key], key
    assert (second.outdir / "step.cpp").read_text() == (first.outdir / "step.cpp").read_text()


def test_bad_meshes_are_compile_errors(tmp_path):
    _, _, _, m = import_example("mlp_example", tmp_path, 2, "import")
    with pytest.raises(loom.LoomError, match="stages"):
        m.compile(outdir=tmp_path / "a", mesh="pp=64", optimizer="sgd")
    with pytest.raises(loom.LoomError, match="--schedule must be 1f1b or gpipe"):
        m.compile(outdir=tmp_path / "b", mesh="pp=2", schedule="cosine", optimizer="sgd")
    with pytest.raises(loom.LoomError, match="--microbatches must be >= 1"):
        m.compile(outdir=tmp_path / "c", mesh="pp=2", microbatches=0, optimizer="sgd")

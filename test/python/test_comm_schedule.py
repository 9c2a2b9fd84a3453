"""TriRace (issue 16): the communication of hybrid data + pipeline (+
tensor) parallel training.

Row-sparse embedding gradients (`--sparse-embedding-grad`): an untied
token table of a wide vocabulary is exchanged by the rows a batch touches.
The references are PyTorch's own loop (AdamW: every row of the table still
decays and moves by its moments, so a sparse *update* would differ) and the
dense exchange; `--comm-stats` must show fewer data-parallel bytes, and the
program must really exchange rows (`rowSparseAllReduceStart` in the step),
so a dense program cannot pass.
"""

import json
import re
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

from test_pipeline_parallel import parse_mesh  # noqa: E402
from test_training import OPTIMIZERS, make_data, torch_losses, write_data  # noqa: E402

VOCAB = 2000
HIDDEN = 32
STEPS = 4
NAMES = ["ids", "labels"]


def llama(tmp_path, batch, workdir):
    """The LLaMA-style test model (untied embedding and head) with a wide
    vocabulary, imported at `batch` rows (the weights do not depend on it)."""
    from models import torch_models
    model, args = torch_models.llama_example(batch=batch, vocab=VOCAB)
    return model, args, loom.from_torch(model, args, input_names=NAMES,
                                        workdir=tmp_path / workdir)


def dp_bytes(stats_file):
    ranks = json.loads(Path(stats_file).read_text())["ranks"]
    return [rank["groups"]["dp"]["bytes"] for rank in ranks if "dp" in rank["groups"]]


def run(tmp_path, mesh, microbatches, micro, mode, expected=None, opt="adamw"):
    """Compiles and trains on `mesh`; returns (losses, step sources, dp bytes
    per rank), checking the losses against PyTorch's loop on the global
    batch."""
    axes = parse_mesh(mesh)
    global_batch = axes["dp"] * microbatches * micro
    model, args, m = llama(tmp_path, micro, "import-micro")
    data = make_data(NAMES, args, 3 * global_batch // micro, VOCAB, seed=7)
    data_dir = write_data(tmp_path / "data", data)
    options, make_opt = OPTIMIZERS[opt]
    if expected is None:
        expected = torch_losses(model, NAMES, data, global_batch, STEPS, make_opt)
    out = tmp_path / f"{mode}-{mesh.replace(',', '-')}"
    program = m.compile(outdir=out, mesh=mesh, microbatches=microbatches,
                        sparse_embedding_grad=mode, **options)
    stats = out / "stats.json"
    got = program.train(data_dir, STEPS, ranks=program.mesh_size(),
                        extra_args=["--comm-stats", str(stats)])
    np.testing.assert_allclose(got, expected, rtol=1e-4)
    sources = "".join(p.read_text() for p in sorted(out.glob("step*.cpp")))
    return got, sources, dp_bytes(stats), expected


def test_sparse_embedding_gradients_send_fewer_bytes_with_the_same_losses(tmp_path):
    """dp=2, AdamW: off and auto against PyTorch (auto chooses rows here, as
    on would; lit checks both choices); the table's 2000x32 floats (256,000
    bytes a step) shrink to the rows of 16 ids."""
    off, off_src, off_bytes, expected = run(tmp_path, "dp=2", 1, 2, "off")
    assert "rowSparseAllReduceStart" not in off_src
    for mode in ("auto",):
        got, src, sparse_bytes, _ = run(tmp_path, "dp=2", 1, 2, mode, expected)
        assert src.count("rowSparseAllReduceStart") == 1, mode
        np.testing.assert_allclose(got, off, rtol=1e-5)
        table = VOCAB * HIDDEN * 4
        # Each rank sends at most 16 rows (ids, 8 bytes, and 32 floats) and
        # a count a step instead of the table.
        most = 8 + 16 * (8 + HIDDEN * 4)
        for dense, sparse in zip(off_bytes, sparse_bytes):
            assert dense - sparse >= STEPS * (table - most), (dense, sparse)


@pytest.mark.parametrize("mesh,microbatches", [
    ("dp=2,pp=2", 2), ("dp=2,tp=2,pp=2", 2), ("dp=4", 1)])
def test_sparse_embedding_gradients_on_hybrid_meshes(mesh, microbatches, tmp_path):
    """With micro-batches the table's gradient is a sum of scatter_adds; under
    tp the vocabulary-parallel slice takes part. Every run matches PyTorch."""
    _, src, sparse_bytes, _ = run(tmp_path, mesh, microbatches, 1, "on")
    calls = re.findall(r"rowSparseAllReduceStart\(ctx, \w+, (\d+), (\d+), Group::Dp\)", src)
    # The token table: under tp=2 each rank's vocabulary slice (1000 rows).
    rows = VOCAB // parse_mesh(mesh)["tp"]
    assert calls == [(str(rows), str(HIDDEN))], calls
    assert all(b > 0 for b in sparse_bytes)


def test_sparse_embedding_grad_on_a_model_without_embedding_warns(tmp_path):
    from test_training import import_example
    _, _, _, m = import_example("mlp_example", tmp_path, 2)
    with pytest.warns(loom.LoomWarning, match="sparse-embedding-grad"):
        m.compile(outdir=tmp_path / "out", mesh="dp=2", optimizer="sgd",
                  sparse_embedding_grad="on")
    with pytest.raises(loom.LoomError, match="--sparse-embedding-grad must be off, on or auto"):
        m.compile(outdir=tmp_path / "bad", mesh="dp=2", optimizer="sgd",
                  sparse_embedding_grad="sometimes")


def stage_source(step_cpp, stage):
    """The text of `namespace stage<k>` of a pipelined step.cpp."""
    start = step_cpp.index(f"namespace stage{stage} {{")
    end = step_cpp.find("namespace stage", start + 1)
    return step_cpp[start:end if end > 0 else None]


@pytest.mark.parametrize("mesh", ["dp=2,pp=2"])
def test_comm_schedule_on_and_off_match_pytorch(mesh, tmp_path):
    """loom-comm-schedule (on by default) posts transfers early; both orders
    train to PyTorch's losses (dp2xtp2xpp2 runs scheduled in the sparse
    test above and in the 3D tests). With it on, the first stage posts its
    gradient receive before its first GEMM (at the top of the step); with
    it off, only after the forward pass."""
    axes = parse_mesh(mesh)
    microbatches, micro = 2, 1
    global_batch = axes["dp"] * microbatches * micro
    model, args, m = llama(tmp_path, micro, "import")
    data = make_data(NAMES, args, 3 * global_batch // micro, VOCAB, seed=3)
    data_dir = write_data(tmp_path / "data", data)
    options, make_opt = OPTIMIZERS["sgd"]
    expected = torch_losses(model, NAMES, data, global_batch, STEPS, make_opt)
    first = {}
    for mode in ("off", "on"):
        program = m.compile(outdir=tmp_path / mode, mesh=mesh, microbatches=microbatches,
                            comm_schedule=mode, **options)
        got = program.train(data_dir, STEPS, ranks=program.mesh_size())
        np.testing.assert_allclose(got, expected, rtol=1e-4)
        stage0 = stage_source((program.outdir / "step.cpp").read_text(), 0)
        first[mode] = (stage0.index("recvStart("), stage0.index("gemm"))
        pipeline = json.loads((program.outdir / "plan.json").read_text())["pipeline"]
        assert ("loom-comm-schedule" in pipeline) == (mode == "on"), pipeline
    assert first["on"][0] < first["on"][1], first
    assert first["off"][0] > first["off"][1], first


def test_plan_file_keeps_the_communication_choices(tmp_path):
    _, _, m = llama(tmp_path, 1, "import")
    first = m.compile(outdir=tmp_path / "first", mesh="dp=2,pp=2", microbatches=2,
                      comm_schedule="off", sparse_embedding_grad="on", optimizer="sgd")
    plan = json.loads((first.outdir / "plan.json").read_text())
    assert (plan["comm_schedule"], plan["sparse_embedding_grad"]) == ("off", "on"), plan
    second = m.compile(outdir=tmp_path / "second", plan=str(first.outdir / "plan.json"),
                       optimizer="sgd")
    assert (second.outdir / "step.cpp").read_text() == (first.outdir / "step.cpp").read_text()
    with pytest.raises(loom.LoomError, match="--comm-schedule must be on, off or auto"):
        m.compile(outdir=tmp_path / "bad", mesh="dp=2,pp=2", comm_schedule="early")


def torch_two_weight_versions(model, data, batch, steps, lr, momentum):
    """PyTorch's loop of PipeDream-2BW's rule W(t+1) = W(t) - lr grad f(W(t-1)),
    W(-1) = W(0): the loss logged at step t is computed with W(t-1)."""
    import copy
    from test_training import batch_rows
    model = copy.deepcopy(model)
    previous = copy.deepcopy(model)  # W(t-1)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    total = len(data["ids"])
    losses = []
    for s in range(steps):
        rows = batch_rows(s, batch, total)
        previous.zero_grad()
        loss = previous(*[torch.from_numpy(data[n][rows]) for n in NAMES])
        loss.backward()
        grads = [p.grad.clone() for p in previous.parameters()]
        previous.load_state_dict(model.state_dict())  # W(t) for the next step
        for p, g in zip(model.parameters(), grads):
            p.grad = g
        opt.step()
        losses.append(float(loss.detach()))
    return losses


@pytest.mark.parametrize("mesh,microbatches", [("dp=2", 1), ("dp=2,tp=2,pp=2", 2)])
def test_two_weight_versions_follow_the_2bw_rule(mesh, microbatches, tmp_path):
    """--pipeline-weights 2: each step all-reduces the previous step's
    gradient buckets (state pending_grad.<k>) at its top, so the exchange
    overlaps the step's forward and backward; the losses follow PyTorch's
    loop of the 2BW rule, and not the ordinary one."""
    axes = parse_mesh(mesh)
    micro = 1
    global_batch = axes["dp"] * microbatches * micro
    model, args, m = llama(tmp_path, micro, "import")
    data = make_data(NAMES, args, 3 * global_batch // micro, VOCAB, seed=5)
    data_dir = write_data(tmp_path / "data", data)
    lr, momentum, steps = 0.2, 0.9, 6
    expected = torch_two_weight_versions(model, data, global_batch, steps, lr, momentum)
    ordinary = torch_losses(model, NAMES, data, global_batch, steps,
                            lambda p: torch.optim.SGD(p, lr=lr, momentum=momentum))
    assert max(abs(a - b) for a, b in zip(expected, ordinary)) > 1e-3
    program = m.compile(outdir=tmp_path / "2bw", mesh=mesh, microbatches=microbatches,
                        optimizer="sgd", lr=lr, momentum=momentum, pipeline_weights=2)
    plan = json.loads((program.outdir / "plan.json").read_text())
    assert plan["pipeline_weights"] == 2 and "loom-two-weight-versions" in plan["pipeline"]
    step_cpp = (program.outdir / "step.cpp").read_text()
    assert "pending_grad.0" in step_cpp
    got = program.train(data_dir, steps, ranks=program.mesh_size())
    np.testing.assert_allclose(got, expected, rtol=1e-4)
    if mesh == "dp=2":
        # The pending gradients are state: a run resumed from a checkpoint
        # continues the same curve.
        ckpt, log = tmp_path / "ckpt", tmp_path / "resumed.csv"
        program.train(data_dir, steps // 2, log=log, checkpoint_dir=ckpt,
                      checkpoint_every=steps // 2, ranks=2)
        resumed = program.train(data_dir, steps, log=log, checkpoint_dir=ckpt,
                                checkpoint_every=steps // 2, resume=True, ranks=2)
        np.testing.assert_allclose(resumed, got, rtol=1e-6)


def test_two_weight_versions_refuse_what_they_cannot_serve(tmp_path):
    _, _, m = llama(tmp_path, 1, "import")
    for options, message in [
            (dict(mesh="dp=2", optimizer="adamw"), "needs --optimizer sgd"),
            (dict(mesh="dp=2", optimizer="sgd", weight_decay=0.1), "needs --weight-decay 0"),
            (dict(mesh="dp=2", optimizer="sgd", lr_schedule="cosine", total_steps=10),
             "needs --lr-schedule constant"),
            (dict(mesh="pp=2", microbatches=2, optimizer="sgd"), "needs --mesh dp=2 or more"),
            (dict(mesh="dp=2", optimizer="sgd", pipeline_weights=3), "must be 1 or 2")]:
        options.setdefault("pipeline_weights", 2)
        with pytest.raises(loom.LoomError, match=message):
            m.compile(outdir=tmp_path / "bad", **options)

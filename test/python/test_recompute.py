"""Activation recomputation (`loomc --recompute`): the plan matches the
runtime's counters and the timeline shows the replay, `auto` recomputes
most on the most loaded pipeline stage, and bad policies are errors.
(Every named policy with and without the overlap split, on tp=2,
tp=2 x pp=2 and dp=2 x tp=2 x pp=2, against PyTorch's losses:
test_oases_matrix.py.)
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

from test_training import (OPTIMIZERS, import_example, make_data,  # noqa: E402
                           torch_losses, write_data)

STEPS = 6


def memory(outdir):
    return json.loads((Path(outdir) / "memory.json").read_text())["functions"]


def run(tmp_path, example, mesh, microbatches, policies, opt="adamw", micro=2):
    """PyTorch's losses and the programs compiled with `none` and each of
    `policies` (micro-batches of `micro` rows)."""
    axes = dict(kv.split("=") for kv in mesh.split(","))
    dp, tp, pp = (int(axes.get(k, 1)) for k in ("dp", "tp", "pp"))
    global_batch = dp * microbatches * micro
    model, args, names, _ = import_example(example, tmp_path, global_batch, "import-single")
    _, _, _, per_rank = import_example(example, tmp_path, micro, "import-micro")
    data = make_data(names, args, 2, 50, seed=11)
    data_dir = write_data(tmp_path / "data", data)
    options, make_opt = OPTIMIZERS[opt]
    expected = torch_losses(model, names, data, global_batch, STEPS, make_opt)
    programs = {}
    for policy in ("none", *policies):
        out = tmp_path / policy
        programs[policy] = per_rank.compile(outdir=out, mesh=mesh, microbatches=microbatches,
                                            recompute=policy, **options)
        plan = json.loads((out / "plan.json").read_text())
        assert plan["recompute"] == policy
    return expected, programs, data_dir, dp * tp * pp


def test_recompute_plan_matches_runtime_counters(tmp_path):
    _, programs, data_dir, ranks = run(tmp_path, "gpt_example", "tp=2", 1, ("comm-free",))
    counters, trace = tmp_path / "counters.json", tmp_path / "trace.json"
    programs["comm-free"].train(data_dir, 2, ranks=ranks,
                                extra_args=["--memory-counters", str(counters),
                                            "--trace", str(trace)])
    plan = memory(programs["comm-free"].outdir)[0]
    assert plan["arena_at_peak_bytes"].get("recompute", 0) > 0, plan
    measured = json.loads(counters.read_text())
    assert measured["arena_peak_live_bytes"] == plan["peak_live_bytes"], (plan, measured)
    # The timeline shows the replayed forward ops, inside the steps.
    spans = [e for e in json.loads(trace.read_text())["traceEvents"] if e["ph"] == "X"]
    replayed = [e for e in spans if "recompute." in e["name"]]
    assert replayed and all(e["cat"] == "compute" for e in replayed), spans[:5]
    assert len({e["pid"] for e in replayed}) == ranks


def test_auto_recomputes_most_on_the_most_loaded_stage(tmp_path):
    """--recompute auto under a budget between the stages' peaks: the first
    stage (most micro-batches in flight under 1F1B) recomputes single
    tensors, the cheapest per byte, until it fits; the last keeps its
    activations; every stage fits, and the losses are PyTorch's. (8 rows
    per micro-batch: at 2, since loom-raise-composites made GELU keep only
    its input, no single tensor live at stage 0's peak is left to
    recompute.)"""
    expected, programs, data_dir, ranks = run(tmp_path, "gpt_example", "tp=2,pp=2", 2,
                                              ("comm-free",), opt="sgd", micro=8)
    none = {f["function"]: f["device_peak_bytes"] for f in memory(programs["none"].outdir)}
    cheaper = {f["function"]: f["device_peak_bytes"]
               for f in memory(programs["comm-free"].outdir)}
    first, last = sorted(none)
    assert none[first] > none[last], none
    # Stage 0 fits only by recomputing; stage 1 fits as it is.
    budget = max(none[last], cheaper[first])
    assert budget < none[first], (none, cheaper)
    _, _, _, per_rank = import_example("gpt_example", tmp_path, 8, "import-micro")
    options, _ = OPTIMIZERS["sgd"]
    program = per_rank.compile(outdir=tmp_path / "auto", mesh="tp=2,pp=2", microbatches=2,
                               recompute="auto", device_memory=budget, **options)
    plan = json.loads((program.outdir / "plan.json").read_text())
    assert plan["recompute"] == "auto"
    stages = plan["recompute_per_stage"]
    assert stages[0] != "none" and stages[1] == "none", stages
    for f in memory(program.outdir):
        assert f["device_peak_bytes"] <= budget, (f, budget)
    # At comm-free's peak single tensors do not reach it: the ladder's
    # cheapest named policy that fits.
    assert stages[0] == "comm-free", stages

    # A budget a little under stage 0's peak: it recomputes its cheapest
    # tensors (flops per byte) until it fits, replaying fewer flops than
    # comm-free's whole layers.
    tight = none[first] - 2048
    program = per_rank.compile(outdir=tmp_path / "tensors", mesh="tp=2,pp=2",
                               microbatches=2, recompute="auto", device_memory=tight,
                               **options)
    plan = json.loads((program.outdir / "plan.json").read_text())
    assert plan["recompute_per_stage"] == ["auto", "none"], plan["recompute_per_stage"]
    assert plan["recompute_bytes_per_stage"][0] > 0, plan
    stage0 = memory(program.outdir)[0]
    assert stage0["device_peak_bytes"] <= tight
    chosen, whole = stage0["recompute"], memory(programs["comm-free"].outdir)[0]["recompute"]
    assert chosen["policy"] == "auto" and chosen["bytes"] > 0, chosen
    assert 0 < chosen["flops"] < whole["flops"], (chosen, whole)
    got = program.train(data_dir, STEPS, ranks=ranks)
    np.testing.assert_allclose(got, expected, rtol=1e-4)
    # The plan (policies and bytes per stage) reproduces the choice without
    # searching again.
    again = per_rank.compile(outdir=tmp_path / "again", plan=str(program.outdir / "plan.json"))
    assert (again.outdir / "step.cpp").read_text() == (program.outdir / "step.cpp").read_text()


def test_unknown_and_impossible_policies_are_errors(tmp_path):
    _, _, _, m = import_example("gpt_example", tmp_path, 2, "import")
    with pytest.raises(loom.LoomError, match="--recompute must be none, full, selective, "
                                             "comm-free or auto, got 'some'"):
        m.compile(outdir=tmp_path / "a", mesh="tp=2", recompute="some")
    with pytest.raises(loom.LoomError, match="--recompute auto chooses by the device "
                                             "budget: give --device-memory"):
        m.compile(outdir=tmp_path / "b", mesh="tp=2", recompute="auto")
    with pytest.raises(loom.LoomError) as info:
        m.compile(outdir=tmp_path / "c", mesh="tp=2", recompute="auto",
                  device_memory=4096)
    text = str(info.value)
    assert "--recompute auto: @main_step needs" in text and \
        "even with the most recomputation (full), over --device-memory 4096" in text, text
    # A plan file's per-stage choices are checked: the bytes of a per-tensor
    # stage must be there and >= 0.
    m.compile(outdir=tmp_path / "d", mesh="tp=2", optimizer="sgd")
    plan = json.loads((tmp_path / "d" / "plan.json").read_text())
    plan.update(recompute="auto", device_memory=1 << 30, recompute_per_stage=["auto"])
    for bytes_, message in (([], "needs its bytes to free in recompute_bytes_per_stage"),
                            ([-1], "must be an integer >= 0")):
        plan["recompute_bytes_per_stage"] = bytes_
        path = tmp_path / f"plan{len(bytes_)}.json"
        path.write_text(json.dumps(plan))
        with pytest.raises(loom.LoomError) as info:
            m.compile(outdir=tmp_path / "e", plan=str(path))
        assert message in str(info.value), str(info.value)

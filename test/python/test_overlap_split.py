"""Oases overlap split end to end: `loomc --overlap-split K` with tensor
parallelism, alone and under pipeline and data parallelism (with every
recomputation policy, on both test models: test_oases_matrix.py).

The GPT-2-style test model (imported from PyTorch through ONNX) is compiled
with loom-overlap-split after loom-tensor-parallel and loom-vocab-parallel:
each micro-batch runs as K=2 sub-batches interleaved around their
tensor-parallel all-reduces, joined only at the loss. Every logged loss must
agree within 1e-4 (relative) with PyTorch's own loop on the global batch.
The program must really be split: twice as many tensor-parallel all-reduces
in step.cpp as without the split, and each of them in flight over compute
(with at most --max-inflight-collectives of them at once per group), where
the unsplit forward waits for its all-reduces right away.
Ranks run oversubscribed on this machine's cores.
"""

import json
import re
import sys
import warnings
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

STEPS = 8
K = 2


def unrolled(step_cpp):
    """The lines of step.cpp with each loop the emitter rolled repeats into
    (lib/Target/Common/Repeats.cpp: `for (int64_t rep = 0; rep < R; ++rep)`
    over `kRepeatN[rep][j]` table entries) written out R times, the table's
    values in place."""
    lines = step_cpp.splitlines()
    tables, out, i = {}, [], 0
    while i < len(lines):
        table = re.match(r"\s*static const int64_t (kRepeat\d+)\[\d+\]\[\d+\] = \{",
                         lines[i])
        if table:
            rows = []
            i += 1
            while not lines[i].strip().startswith("};"):
                rows.append([int(v) for v in re.findall(r"-?\d+", lines[i])])
                i += 1
            tables[table.group(1)] = rows
            i += 1
            continue
        loop = re.match(r"(\s*)for \(int64_t rep = 0; rep < (\d+); \+\+rep\) \{$",
                        lines[i])
        if not loop:
            out.append(lines[i])
            i += 1
            continue
        end = lines.index(loop.group(1) + "}", i + 1)
        for rep in range(int(loop.group(2))):
            out.extend(re.sub(r"(kRepeat\d+)\[rep\]\[(\d+)\]",
                              lambda m: str(tables[m.group(1)][rep][int(m.group(2))]),
                              line) for line in lines[i + 1:end])
        i = end + 1
    return out


def tp_all_reduces(step_cpp):
    """Per tensor-parallel all-reduce, in program order: the statements
    between its start and its wait, and how many tp all-reduces were in
    flight when it started (itself included)."""
    lines = unrolled(step_cpp)
    started, spans = {}, []
    for i, line in enumerate(lines):
        start = re.search(r"(comm\[\S+\]) = allReduceStart\(.*Group::Tp\);", line)
        if start:
            started[start.group(1)] = (i, len(started) + 1)
            continue
        wait = re.search(r"wait\(ctx, (comm\[\S+\])\);", line)
        if wait and wait.group(1) in started:
            at, inflight = started.pop(wait.group(1))
            compute = [x for x in lines[at + 1:i]
                       if x.strip().endswith(";") and "wait(" not in x
                       and "allReduceStart" not in x]
            spans.append((len(compute), inflight))
    assert not started, started
    return spans


def parse_mesh(mesh):
    axes = dict(dp=1, tp=1, pp=1)
    for part in mesh.split(","):
        key, value = part.split("=")
        axes[key] = int(value)
    return axes


# (tp=2,pp=2 passed too; dp=2,tp=2,pp=2 covers the pipeline: suite time.)
@pytest.mark.parametrize("mesh,microbatches,micro", [
    ("tp=2", 1, 4), ("dp=2,tp=2,pp=2", 2, 2),
])
def test_overlap_split_matches_pytorch(mesh, microbatches, micro, tmp_path):
    axes = parse_mesh(mesh)
    global_batch = axes["dp"] * microbatches * micro
    model, args, names, m = import_example("gpt_example", tmp_path, micro)
    # Three steps of data (make_data counts in batches of the micro size).
    data = make_data(names, args, 3 * global_batch // micro, 50, seed=11)
    data_dir = write_data(tmp_path / "data", data)
    options, make_opt = OPTIMIZERS["sgd"]
    expected = torch_losses(model, names, data, global_batch, STEPS, make_opt)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        split = m.compile(outdir=tmp_path / "split", mesh=mesh,
                          microbatches=microbatches, overlap_split=K, **options)
    # The generated C++ builds without a compiler warning (a dead tail loop
    # of the lane reductions once drew -Waggressive-loop-optimizations).
    compiler = [str(w.message) for w in caught if "[-W" in str(w.message)]
    assert not compiler, compiler
    # The interleaving as loom-overlap-split makes it: with pipeline stages,
    # loom-comm-schedule (on by default) then moves each stage's last sends
    # up to their data, out of the last all-reduce's window, where they
    # were the only statements (a transfer, not compute).
    unscheduled = dict(comm_schedule="off") if axes["pp"] > 1 else {}
    interleaved = split if not unscheduled else m.compile(
        outdir=tmp_path / "split-unscheduled", mesh=mesh, microbatches=microbatches,
        overlap_split=K, **unscheduled, **options)
    plain = m.compile(outdir=tmp_path / "plain", mesh=mesh, microbatches=microbatches,
                      **unscheduled, **options)
    plan = json.loads((split.outdir / "plan.json").read_text())
    assert plan["overlap_split"] == K and plan["max_inflight_collectives"] == 1, plan
    assert "loom-overlap-split{function=main k=2}" in plan["pipeline"], plan["pipeline"]
    assert "loom-max-inflight-collectives{max=1}" in plan["pipeline"], plan["pipeline"]
    spans = tp_all_reduces((interleaved.outdir / "step.cpp").read_text())
    unsplit = tp_all_reduces((plain.outdir / "step.cpp").read_text())
    assert len(spans) == K * len(unsplit), (spans, unsplit)
    # Unsplit, a forward all-reduce's result is read by the next op; split,
    # every all-reduce runs over the other sub-batch's compute, one at a time.
    assert any(n == 0 for n, _ in unsplit), unsplit
    assert all(n > 0 for n, _ in spans), spans
    assert max(inflight for _, inflight in spans) == 1, spans

    # memory.json counts each step function's per-sub-batch ops.
    for function in json.loads((split.outdir / "memory.json").read_text())["functions"]:
        assert function["overlap_split"]["sub_batches"] == K, function
        assert function["overlap_split"]["ops"] > 0, function
    assert all("overlap_split" not in f for f in
               json.loads((plain.outdir / "memory.json").read_text())["functions"])

    ranks = axes["dp"] * axes["tp"] * axes["pp"]
    trace = tmp_path / "trace.json"
    got = split.train(data_dir, STEPS, ranks=ranks, extra_args=["--trace", str(trace)])
    assert len(got) == STEPS
    np.testing.assert_allclose(got, expected, rtol=1e-4)
    assert got[-1] < got[0]
    # The timeline names each sub-batch's kernels, on every rank.
    spans = [e for e in json.loads(trace.read_text())["traceEvents"] if e["ph"] == "X"]
    for i in range(K):
        mine = {e["pid"] for e in spans if f" sub{i}." in e["name"]}
        assert mine == set(range(ranks)), (i, mine)


def test_max_inflight_collectives_bounds_the_all_reduces_in_flight(tmp_path):
    _, _, _, m = import_example("gpt_example", tmp_path, 4)
    spans = {}
    for n in (1, 2):
        program = m.compile(outdir=tmp_path / f"n{n}", mesh="tp=2", overlap_split=K,
                            max_inflight_collectives=n, optimizer="sgd", lr=0.1)
        spans[n] = tp_all_reduces((program.outdir / "step.cpp").read_text())
    assert max(inflight for _, inflight in spans[1]) == 1, spans[1]
    assert max(inflight for _, inflight in spans[2]) == 2, spans[2]


@pytest.mark.parametrize("options,message", [
    (dict(mesh="tp=2", overlap_split=3),
     "--overlap-split 3 does not divide the batch of data argument 'ids' (4 rows"),
    (dict(mesh="dp=2", overlap_split=2),
     "--overlap-split 2 needs tensor parallelism (tp > 1)"),
    (dict(mesh="tp=2", overlap_split=0), "--overlap-split must be >= 1"),
    (dict(mesh="tp=2", overlap_split=2, max_inflight_collectives=0),
     "--max-inflight-collectives must be >= 1"),
])
def test_overlap_split_errors(options, message, tmp_path):
    _, _, _, m = import_example("gpt_example", tmp_path, 4)
    with pytest.raises(loom.LoomError) as info:
        m.compile(outdir=tmp_path / "out", optimizer="sgd", **options)
    assert message in str(info.value), str(info.value)

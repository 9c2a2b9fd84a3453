"""Oases, every combination: {no split, K=2} x {none, full, selective,
comm-free} recomputation on tp=2, tp=2 x pp=2 and dp=2 x tp=2 x pp=2, for
the GPT-2-style and the LLaMA-style test models (imported from PyTorch
through ONNX), trained with AdamW.

For each model and mesh, PyTorch's own loop on the global batch gives the
reference once; each of the eight programs must log every loss within 1e-4
(relative) of it. Independently of what the compiler reports about itself,
the generated step sources must show:

* real parallelism: tensor-parallel all-reduces, data-parallel all-reduces
  under dp, point-to-point transfers between the pipeline stages under pp;
* the split: K times the unsplit program's tensor-parallel all-reduces;
* comm-free and selective recomputation replay no collective (the same
  all-reduces as `none`), full recomputation replays every forward
  all-reduce of every layer once per sub-batch and micro-batch (the
  models' layer counts and all-reduces per layer are written below, not
  read from the compiler);
* every policy plans a lower activation peak than `none` with the same
  split, and every rank's allocator counts the arena peak its plan
  (memory.json) gives.

Ranks run oversubscribed on this machine's cores.
"""

import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from parallel_support import MPI_MARKS  # noqa: E402

pytestmark = MPI_MARKS
np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

from test_overlap_split import unrolled  # noqa: E402
from test_training import (OPTIMIZERS, import_example, make_data,  # noqa: E402
                           torch_losses, write_data)

STEPS = 4
K = 2
POLICIES = ("none", "full", "selective", "comm-free")

# Per test model (test/python/models/torch_models.py): its layers, and the
# tensor-parallel all-reduces of one layer's forward pass: Megatron's two,
# after the attention's output projection and the MLP's down projection
# (LLaMA's wq/wk/wv split by heads and wo by rows, as GPT-2's).
MODELS = {"gpt_example": (2, 2), "llama_example": (2, 2)}

# (mesh, micro-batches per step, rows per micro-batch)
MESHES = [("tp=2", 1, 4), ("tp=2,pp=2", 2, 2), ("dp=2,tp=2,pp=2", 2, 2)]


def starts(outdir):
    """Collective starts and sends per group (or kind) over every step
    source of `outdir`, the loops the emitter rolled repeats into written
    out."""
    counts = {}
    for source in sorted(Path(outdir).glob("step*.cpp")):
        text = "\n".join(unrolled(source.read_text()))
        for group in re.findall(r"allReduceStart\(ctx, [^;]*, Group::(\w+)\);", text):
            counts[group] = counts.get(group, 0) + 1
        counts["send"] = counts.get("send", 0) + len(re.findall(r"\bsendStart\(", text))
    return counts


def memory(outdir):
    return json.loads((Path(outdir) / "memory.json").read_text())["functions"]


@pytest.mark.parametrize("mesh,microbatches,micro", MESHES, ids=[m[0] for m in MESHES])
@pytest.mark.parametrize("example", sorted(MODELS))
def test_every_split_and_policy_matches_pytorch(example, mesh, microbatches, micro,
                                                tmp_path):
    axes = dict(dp=1, tp=1, pp=1)
    axes.update({k: int(v) for k, v in (kv.split("=") for kv in mesh.split(","))})
    ranks = axes["dp"] * axes["tp"] * axes["pp"]
    global_batch = axes["dp"] * microbatches * micro
    model, args, names, _ = import_example(example, tmp_path, global_batch, "import-global")
    _, _, _, per_rank = import_example(example, tmp_path, micro, "import-micro")
    data = make_data(names, args, 2, 50, seed=7)
    data_dir = write_data(tmp_path / "data", data)
    options, make_opt = OPTIMIZERS["adamw"]
    expected = torch_losses(model, names, data, global_batch, STEPS, make_opt)

    counts, plans = {}, {}
    for split in (1, K):
        for policy in POLICIES:
            case = f"K={split} {policy}"
            program = per_rank.compile(outdir=tmp_path / f"k{split}-{policy}", mesh=mesh,
                                       microbatches=microbatches, recompute=policy,
                                       overlap_split=split, **options)
            counts[split, policy] = starts(program.outdir)
            if example == "llama_example":
                # SiLU's gradient reads its sigmoid twice:
                # loom-fuse-elementwise computes it inside the gradient's
                # one loop instead of writing it out. The query, key and
                # value projections' input gradients (and SwiGLU's gate and
                # up) are one sum that the gemms collect themselves
                # (loom-fuse-gemm-accumulate). The parity covers both.
                step = "\n".join(s.read_text() for s in program.outdir.glob("step*.cpp"))
                assert "// kernel sigmoid ->" not in step, case
                assert re.search(r"// kernel \S*sigmoid\+\S* ->", step), case
                assert "cpu::gemmAccumulate(" in step, case
            plans[split, policy] = memory(program.outdir)
            counters = tmp_path / f"k{split}-{policy}-counters"
            counters.mkdir()
            got = program.train(data_dir, STEPS, ranks=ranks, extra_args=[
                "--memory-counters", str(counters / "rank{rank}.json")])
            assert len(got) == STEPS, case
            np.testing.assert_allclose(got, expected, rtol=1e-4, err_msg=case)
            # The plan's arena peak is what every rank's allocator counted.
            planned = [f["peak_live_bytes"] for f in plans[split, policy]]
            for rank in range(ranks):
                measured = json.loads((counters / f"rank{rank}.json").read_text())
                assert measured["arena_peak_live_bytes"] == \
                    planned[measured.get("stage", 0)], (case, rank, measured, planned)

    layers, per_layer = MODELS[example]
    for split in (1, K):
        none = counts[split, "none"]
        assert none.get("Tp", 0) > 0, none
        assert (none.get("Dp", 0) > 0) == (axes["dp"] > 1), none
        assert (none["send"] > 0) == (axes["pp"] > 1), none
        replays = layers * per_layer * microbatches * split
        assert counts[split, "full"]["Tp"] == none["Tp"] + replays, (split, counts)
        for policy in ("selective", "comm-free"):
            assert counts[split, policy] == none, (split, policy, counts)
        # What each program's memory.json says it did agrees with its
        # source, and recomputation lowers the activations' peak. (Not
        # always the step's: with one layer per stage, full recomputation's
        # replay of that layer during the backward, next to the gradients,
        # is above `none`'s peak on LLaMA at tp=2 x pp=2.)
        peaks = {policy: max(f["activation_peak_bytes"] for f in plans[split, policy])
                 for policy in POLICIES}
        for policy in POLICIES:
            functions = plans[split, policy]
            assert all(("overlap_split" in f) == (split > 1) for f in functions), functions
            if policy == "none":
                continue
            assert all(f["recompute"]["policy"] == policy for f in functions), functions
            replayed = sum(f["recompute"]["collectives"] for f in functions)
            assert replayed == counts[split, policy]["Tp"] - none["Tp"], (policy, functions)
            assert sum(f["recompute"]["ops"] for f in functions) > 0, functions
            assert peaks[policy] < peaks["none"], (split, policy, peaks)
    assert counts[K, "none"]["Tp"] == K * counts[1, "none"]["Tp"], counts

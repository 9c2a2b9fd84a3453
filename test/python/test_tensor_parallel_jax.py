"""Tensor parallelism end to end for models imported from JAX through
StableHLO: `loomc --mesh tp=2` on 2 ranks and `--mesh dp=2,tp=2` on 4.

JAX's MLP and GPT (test/python/models/jax_models.py; the GPT's embedding
gathers with i32 ids) are imported by
`loom.from_jax`, compiled with loom-tensor-parallel and loom-vocab-parallel
(which cuts the GPT's tied wte by vocabulary rows: optax's loss is raised
to a loom.cross_entropy at import) and trained with AdamW
(the tp ranks of a data-parallel group read the same rows): every logged
loss must agree within 1e-4 (relative) with `jax.value_and_grad` +
`optax.adamw` on the same (global) batches. The partitioned IR must have
the tp_copy and all_reduce of the block and the per-rank weights must be
slices, so that the parity is not that of a replicated run. Ranks run
oversubscribed on this machine's cores.
"""

import re
import sys
from pathlib import Path

import pytest

import loom

sys.path.insert(0, str(Path(__file__).parent))
from parallel_support import MPI_MARKS  # noqa: E402

pytestmark = MPI_MARKS
np = pytest.importorskip("numpy")
pytest.importorskip("jax")
pytest.importorskip("optax")
st = pytest.importorskip("safetensors.numpy")

from test_training import (STEPS, import_jax, jax_adamw_losses, jax_data,  # noqa: E402
                           write_data)

# jax_adamw_losses' optimizer, for loomc.
LR, WEIGHT_DECAY = 1e-3, 0.01


# model: (example maker, input names, classes, (tp_copy, all_reduce) count:
# one each per Megatron block, and for a vocabulary-parallel table one
# tp_copy (the LM head's input) and four all_reduces (the embedding's sum,
# the loss's row max, sum of exponentials and target logit), per-rank cuts
# of some weights {name: dim, or (dim, groups) for a fused projection cut
# group by group}).
MODELS = {
    "mlp": ("mlp_example", ["x", "labels"], 10, (1, 1),
            {"params.fc1.w": 1, "params.fc1.b": 0, "params.fc2.w": 0}),
    # Two layers of attention + MLP blocks; the embedding gathers with JAX's
    # i32 ids, the tied wte is cut by vocabulary rows, and the position
    # table added to its rows with it (one all-reduce for their sum).
    "gpt": ("gpt_example", ["ids", "labels"], 50, (4 + 1, 4 + 4),
            {"params.wte": 0, "params.wpe": 0,
             **{f"params.blocks.{i}.{name}": cut for i in range(2) for name, cut in {
                 "qkv.w": (1, 3), "qkv.b": (0, 3), "proj.w": 0, "fc.w": 1,
                 "fc.b": 0, "out.w": 0}.items()}}),
}


def rank_slice(value, cut, tp, r):
    """Rank r's part of `value` cut by `cut` (dim, or (dim, groups))."""
    dim, groups = cut if isinstance(cut, tuple) else (cut, 1)
    return np.concatenate([np.split(g, tp, axis=dim)[r]
                           for g in np.split(value, groups, axis=dim)], axis=dim)


def groups_of_all_reduces(step_cpp):
    return set(re.findall(r"allReduceStart\(ctx, [^;]*, (Group::\w+)\);", step_cpp))


# mesh: (dp, tp). With dp > 1 each rank's program takes the per-rank batch
# (GLOBAL_BATCH / dp) and data-parallel group d reads batch s*dp + d of
# step s: together, the global batch JAX trains on.
MESHES = {"tp=2": (1, 2), "dp=2,tp=2": (2, 2)}
GLOBAL_BATCH = 8


@pytest.mark.parametrize("mesh", sorted(MESHES))
@pytest.mark.parametrize("model", sorted(MODELS))
def test_jax_tensor_parallel_matches_jax_adamw(model, mesh, tmp_path):
    _, names, classes, (tp_copies, all_reduces), cuts = MODELS[model]
    dp, tp = MESHES[mesh]
    params, inputs, m = import_jax(MODELS[model][0], model, tmp_path, GLOBAL_BATCH // dp)

    # The passes find the blocks in the StableHLO import (W [in, out], biases
    # as broadcast chains) and the GPT's vocabulary table.
    ir = m.run_pass("builtin.module(inline, symbol-dce, loom-shape-inference, "
                    f"loom-tensor-parallel{{function=main tp={tp}}}, "
                    f"loom-vocab-parallel{{function=main tp={tp}}})").ir
    assert ir.count("loom.tp_copy") == tp_copies, ir
    assert ir.count("shard.all_reduce") == all_reduces, ir

    data = jax_data(names, inputs, classes, seed=3)
    expected = jax_adamw_losses(model, params, names, data, GLOBAL_BATCH)
    program = m.compile(outdir=tmp_path / "tp", mesh=mesh, optimizer="adamw",
                        lr=LR, weight_decay=WEIGHT_DECAY)
    assert program.mesh_size() == dp * tp
    step_cpp = (tmp_path / "tp" / "step.cpp").read_text()
    assert f"/*dp=*/{dp}, /*tp=*/{tp}" in step_cpp
    if dp > 1:
        # Megatron's f and g on the tp group, gradients and loss on the dp
        # group.
        assert groups_of_all_reduces(step_cpp) == {"Group::Tp", "Group::Dp"}, step_cpp
    # Each tp rank holds its slices of the cut weights (fc1's W [in, out] on
    # out, with its bias; fc2's on in), the others whole.
    full = st.load_file(m.weights)
    for r in range(tp):
        part = st.load_file(str(tmp_path / "tp" / f"weights.rank{r}.safetensors"))
        assert set(part) == set(full)
        for name, value in full.items():
            want = rank_slice(value, cuts[name], tp, r) if name in cuts else value
            np.testing.assert_array_equal(part[name], want)

    got = program.train(write_data(tmp_path / "data", data), STEPS, ranks=dp * tp)
    assert len(got) == STEPS
    np.testing.assert_allclose(got, expected, rtol=1e-4)
    assert got[-1] < got[0]

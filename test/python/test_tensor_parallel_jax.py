"""Tensor parallelism end to end for models imported from JAX through
StableHLO: `loomc --mesh tp=2` on 2 ranks and `--mesh dp=2,tp=2` on 4.

JAX's MLP and GPT (test/python/models/jax_models.py; the GPT's embedding
gathers with i32 ids) are imported by
`loom.from_jax`, compiled with loom-tensor-parallel and trained with AdamW
(the tp ranks of a data-parallel group read the same rows): every logged
loss must agree within 1e-4 (relative) with `jax.value_and_grad` +
`optax.adamw` on the same (global) batches. The partitioned IR must have
the tp_copy and all_reduce of the block and the per-rank weights must be
slices, so that the parity is not that of a replicated run. Ranks run
oversubscribed on this machine's cores.
"""

import os
import re
import shutil
import sys
from pathlib import Path

import pytest

import loom

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("LOOM_BUILD_DIR", ROOT / "build"))
sys.path.insert(0, str(Path(__file__).parent))

pytestmark = [
    pytest.mark.skipif(not (BUILD / "bin" / "loomc").exists(), reason="loomc not built"),
    pytest.mark.skipif(shutil.which("mpirun") is None, reason="mpirun not installed"),
]
np = pytest.importorskip("numpy")
jax = pytest.importorskip("jax")
optax = pytest.importorskip("optax")
st = pytest.importorskip("safetensors.numpy")

STEPS = 20
ROWS = 3  # batches in the data files; steps wrap around them
LR, WEIGHT_DECAY = 1e-3, 0.01


def leaf_name(path):
    """The argument name loom.from_jax gives the leaf at `path` of the
    `params` pytree (`params.fc1.w`)."""
    return "params" + "".join(f".{getattr(k, 'key', getattr(k, 'idx', k))}" for k in path)


# model: (example maker, input names, classes, Megatron blocks: one tp_copy
# and one all_reduce each, per-rank cuts of some weights {name: dim, or
# (dim, groups) for a fused projection cut group by group}).
MODELS = {
    "mlp": ("mlp_example", ["x", "labels"], 10, 1,
            {"params.fc1.w": 1, "params.fc1.b": 0, "params.fc2.w": 0}),
    # Two layers of attention + MLP blocks; the embedding gathers with JAX's
    # i32 ids (the tied wte stays replicated).
    "gpt": ("gpt_example", ["ids", "labels"], 50, 4,
            {f"params.blocks.{i}.{name}": cut for i in range(2) for name, cut in {
                "qkv.w": (1, 3), "qkv.b": (0, 3), "proj.w": 0, "fc.w": 1,
                "fc.b": 0, "out.w": 0}.items()}),
}


def rank_slice(value, cut, tp, r):
    """Rank r's part of `value` cut by `cut` (dim, or (dim, groups))."""
    dim, groups = cut if isinstance(cut, tuple) else (cut, 1)
    return np.concatenate([np.split(g, tp, axis=dim)[r]
                           for g in np.split(value, groups, axis=dim)], axis=dim)


def import_model(model, tmp_path, batch):
    """JAX's `model` imported with its weights written to a safetensors
    file: (params, example inputs, loom.Module)."""
    from models import jax_models
    params, *inputs = getattr(jax_models, MODELS[model][0])(batch=batch)
    m = loom.from_jax(getattr(jax_models, model), params, *inputs, params=(0,),
                      workdir=tmp_path / "import")
    leaves = jax.tree_util.tree_flatten_with_path(params)[0]
    st.save_file({leaf_name(path): np.asarray(leaf) for path, leaf in leaves},
                 str(tmp_path / "weights.safetensors"))
    m.weights = str(tmp_path / "weights.safetensors")
    return params, inputs, m


def make_data(names, inputs, classes, seed):
    """ROWS batches shaped like the example inputs: floats from a normal
    distribution, integers (ids, labels) uniform in [0, classes)."""
    rng = np.random.default_rng(seed)
    data = {}
    for name, arg in zip(names, inputs):
        shape = (ROWS * arg.shape[0], *arg.shape[1:])
        if np.issubdtype(arg.dtype, np.floating):
            data[name] = rng.standard_normal(shape).astype(np.float32)
        else:
            data[name] = rng.integers(0, classes, shape).astype(arg.dtype)
    return data


def write_data(directory, data):
    directory.mkdir(parents=True, exist_ok=True)
    for name, value in data.items():
        np.save(directory / f"{name}.npy", value)
    return directory


def jax_adamw_losses(model, params, names, data, batch):
    from models import jax_models
    total = len(data[names[0]])
    opt = optax.adamw(LR, weight_decay=WEIGHT_DECAY)
    state = opt.init(params)
    grad_fn = jax.jit(jax.value_and_grad(getattr(jax_models, model)))
    losses = []
    for s in range(STEPS):
        rows = [(s * batch + i) % total for i in range(batch)]
        loss, g = grad_fn(params, *(data[n][rows] for n in names))
        updates, state = opt.update(g, state, params)
        params = optax.apply_updates(params, updates)
        losses.append(float(loss))
    return losses


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
    _, names, classes, blocks, cuts = MODELS[model]
    dp, tp = MESHES[mesh]
    params, inputs, m = import_model(model, tmp_path, GLOBAL_BATCH // dp)

    # The pass finds the blocks in the StableHLO import (W [in, out], biases
    # as broadcast chains).
    ir = m.run_pass("builtin.module(inline, symbol-dce, loom-shape-inference, "
                    f"loom-tensor-parallel{{function=main tp={tp}}})").ir
    assert ir.count("loom.tp_copy") == blocks, ir
    assert ir.count("shard.all_reduce") == blocks, ir

    data = make_data(names, inputs, classes, seed=3)
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
    full = st.load_file(str(tmp_path / "weights.safetensors"))
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

"""Writes the StableHLO text that JAX lowers a test model of
test/python/models/jax_models.py to (stdout), as `loom.from_jax` does:
`jax.jit(fn, keep_unused=True).lower(params, inputs...)`.

Usage: make_jax_tp.py mlp|gpt|attn

`mlp` is jax_models.mlp on mlp_example() (x: [4, 16], fc1 16->32,
fc2 32->10); `gpt` is jax_models.gpt with one block, 4 heads, hidden 16,
vocabulary 10, batch 2 and sequence 4; `attn` is the attention block below
(separate Q, K, V projections of one input, heads by einsum without
transposes), x: [2, 4, 16], 4 heads. The first line is a comment with the
`loom-translate --arg-names` list (the pytree paths of the arguments, as
`loom.from_jax` names them). The loom-tensor-parallel tests read the
checked-in output (jax_<model>.stablehlo.mlir), so they
run without JAX; this script says where it came from.
"""

import os
import sys
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from models import jax_models  # noqa: E402


def attn(params, x, heads=4):
    """Self-attention with separate projections and einsum over the heads,
    a residual connection and a mean-square loss."""
    b, s, d = x.shape
    q, k, v = ((x @ params[n]).reshape(b, s, heads, d // heads) for n in ("wq", "wk", "wv"))
    scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(d // heads)
    ctx = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(scores, axis=-1), v)
    y = x + ctx.reshape(b, s, d) @ params["wo"]
    return jnp.mean(y ** 2)


def attn_example():
    keys = jax.random.split(jax.random.PRNGKey(0), 5)
    params = {n: jax.random.normal(k, (16, 16)) * 0.1
              for n, k in zip(("wk", "wo", "wq", "wv"), keys)}
    return params, jax.random.normal(keys[4], (2, 4, 16))


def main():
    which = sys.argv[1] if len(sys.argv) == 2 else ""
    if which == "mlp":
        fn, (params, *inputs), names = (jax_models.mlp, jax_models.mlp_example(),
                                        ["x", "labels"])
    elif which == "gpt":
        fn, (params, *inputs), names = (jax_models.gpt,
                                        jax_models.gpt_example(batch=2, seq=4, vocab=10,
                                                               hidden=16, layers=1),
                                        ["ids", "labels"])
    elif which == "attn":
        fn, (params, *inputs), names = attn, attn_example(), ["x"]
    else:
        sys.exit("usage: make_jax_tp.py mlp|gpt|attn")
    leaves = jax.tree_util.tree_flatten_with_path(params)[0]
    arg_names = ["params" + "".join(f".{getattr(k, 'key', getattr(k, 'idx', k))}"
                                    for k in path) for path, _ in leaves] + names
    text = jax.jit(fn, keep_unused=True).lower(params, *inputs).as_text()
    print(f"// --arg-names={','.join(arg_names)}")
    print(text, end="")


if __name__ == "__main__":
    main()

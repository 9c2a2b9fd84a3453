"""MLP and GPT-2-style models in JAX, each a pure function returning its loss.

The loss is what most JAX code uses: optax's
softmax_cross_entropy_with_integer_labels (its take_along_axis is a
StableHLO gather with batching dimensions, its max an is_finite guard).
"""

import jax
import jax.numpy as jnp
import optax


def cross_entropy(logits, labels):
    return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()


def mlp(params, x, labels):
    h = jax.nn.relu(x @ params["fc1"]["w"] + params["fc1"]["b"])
    return cross_entropy(h @ params["fc2"]["w"] + params["fc2"]["b"], labels)


def layer_norm(x, p, eps=1e-5):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + eps) * p["g"] + p["b"]


def gpt(params, ids, labels, heads=4):
    b, s = ids.shape
    x = params["wte"][ids] + params["wpe"][:s]
    h = x.shape[-1]
    hd = h // heads
    mask = jnp.tril(jnp.ones((s, s), dtype=bool))
    for blk in params["blocks"]:
        qkv = layer_norm(x, blk["ln_1"]) @ blk["qkv"]["w"] + blk["qkv"]["b"]
        q, k, v = jnp.split(qkv, 3, axis=-1)
        q, k, v = (t.reshape(b, s, heads, hd).transpose(0, 2, 1, 3) for t in (q, k, v))
        scores = jnp.where(mask, q @ k.transpose(0, 1, 3, 2) / jnp.sqrt(hd), -jnp.inf)
        ctx = (jax.nn.softmax(scores, axis=-1) @ v).transpose(0, 2, 1, 3).reshape(b, s, h)
        x = x + ctx @ blk["proj"]["w"] + blk["proj"]["b"]
        f = jax.nn.gelu(layer_norm(x, blk["ln_2"]) @ blk["fc"]["w"] + blk["fc"]["b"],
                        approximate=False)
        x = x + f @ blk["out"]["w"] + blk["out"]["b"]
    logits = layer_norm(x, params["ln_f"]) @ params["wte"].T
    return cross_entropy(logits, labels)


def _dense(key, n_in, n_out):
    return {"w": jax.random.normal(key, (n_in, n_out)) * 0.1, "b": jnp.zeros(n_out)}


def mlp_example(batch=4, seed=0):
    k1, k2, k3, k4 = jax.random.split(jax.random.PRNGKey(seed), 4)
    params = {"fc1": _dense(k1, 16, 32), "fc2": _dense(k2, 32, 10)}
    x = jax.random.normal(k3, (batch, 16))
    labels = jax.random.randint(k4, (batch,), 0, 10)
    return params, x, labels


def gpt_example(batch=2, seq=8, vocab=50, hidden=32, layers=2, seed=0):
    keys = iter(jax.random.split(jax.random.PRNGKey(seed), 8 * layers + 8))
    ln = lambda: {"g": jnp.ones(hidden), "b": jnp.zeros(hidden)}
    params = {
        "wte": jax.random.normal(next(keys), (vocab, hidden)) * 0.1,
        "wpe": jax.random.normal(next(keys), (seq, hidden)) * 0.1,
        "blocks": [{"ln_1": ln(), "qkv": _dense(next(keys), hidden, 3 * hidden),
                    "proj": _dense(next(keys), hidden, hidden), "ln_2": ln(),
                    "fc": _dense(next(keys), hidden, 4 * hidden),
                    "out": _dense(next(keys), 4 * hidden, hidden)} for _ in range(layers)],
        "ln_f": ln(),
    }
    ids = jax.random.randint(next(keys), (batch, seq), 0, vocab)
    labels = jax.random.randint(next(keys), (batch, seq), 0, vocab)
    return params, ids, labels

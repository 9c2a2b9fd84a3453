"""Writes the StableHLO text JAX lowers a few functions to (stdout).

Usage: make_jax.py gelu|gelu_tanh|loss|train_step

`loss` is the forward pass and loss of a one-layer transformer (embedding
lookups, layer norm, attention with a causal mask, gelu MLP, tied output
projection, one-hot cross-entropy); `train_step` adds its gradient and an
SGD update, whose embedding gradients are scatters (loom.scatter_add).
"""

import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

V, D, T, B = 11, 8, 4, 2


def layer_norm(x, g, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) * jax.lax.rsqrt(v + 1e-5) * g + b


def model(p, ids):
    h = p["wte"][ids] + p["wpe"][jnp.arange(T)]
    h = layer_norm(h, p["g"], p["b"])
    s = jnp.einsum("btd,bsd->bts", h @ p["wq"], h @ p["wk"]) / jnp.sqrt(D)
    s = jnp.where(jnp.tril(jnp.ones((T, T), bool)), s, -1e9)
    h = h + jnp.einsum("bts,bsd->btd", jax.nn.softmax(s, axis=-1), h)
    h = h + jax.nn.gelu(h @ p["w1"], approximate=False) @ p["w2"]
    return h @ p["wte"].T


def loss(p, ids, labels):
    logp = jax.nn.log_softmax(model(p, ids))
    return -(jax.nn.one_hot(labels, V) * logp).sum(-1).mean()


def train_step(p, ids, labels):
    value, grads = jax.value_and_grad(loss)(p, ids, labels)
    return value, jax.tree.map(lambda w, g: w - 0.1 * g, p, grads)


def main():
    params = {"wte": jnp.ones((V, D)), "wpe": jnp.ones((T, D)),
              "g": jnp.ones((D,)), "b": jnp.zeros((D,)),
              "wq": jnp.ones((D, D)), "wk": jnp.ones((D, D)),
              "w1": jnp.ones((D, 4 * D)), "w2": jnp.ones((4 * D, D))}
    ids = jnp.zeros((B, T), jnp.int32)
    x = jnp.ones((4, 8), jnp.float32)
    functions = {
        "gelu": (lambda x: jax.nn.gelu(x, approximate=False), (x,)),
        "gelu_tanh": (lambda x: jax.nn.gelu(x, approximate=True), (x,)),
        "loss": (loss, (params, ids, ids)),
        "train_step": (train_step, (params, ids, ids)),
    }
    fn, args = functions[sys.argv[1]]
    print(jax.jit(fn).lower(*args).as_text())


if __name__ == "__main__":
    main()

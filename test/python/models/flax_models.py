"""Flax models (linen and nnx), each with a pure loss function of its
parameters, as Flax code trains them with optax.

* linen_gpt: a GPT of `nn.Embed` (tied to the LM head through `attend`),
  learned positions, pre-LN blocks of `nn.MultiHeadDotProductAttention`
  (DenseGeneral projections: kernels [in, heads, head_dim] and [heads,
  head_dim, out]) with a causal mask and a GELU MLP of `nn.Dense`;
* nnx_mlp: two `nnx.Linear` layers, trained through `nnx.split`'s
  parameter state;
* linen_scan_mlp: residual blocks (LayerNorm, Dense, GELU) applied by
  `nn.scan` over parameters stacked on a leading layer axis, the way large
  Flax models stack their layers (a `while` loop in StableHLO);
* linen_scan_gpt: linen_gpt with its blocks applied by `nn.scan`, every
  kernel and bias stacked on a leading layer axis.

The loss is optax's softmax_cross_entropy_with_integer_labels, averaged.
"""

import jax
import jax.numpy as jnp
import optax
import flax.linen as nn
from flax import nnx

VOCAB, SEQ, HIDDEN, HEADS, LAYERS = 64, 8, 32, 4, 2


def cross_entropy(logits, labels):
    return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()


class Block(nn.Module):
    hidden: int
    heads: int

    @nn.compact
    def __call__(self, x):
        mask = nn.make_causal_mask(jnp.ones(x.shape[:2]))
        y = nn.LayerNorm()(x)
        x = x + nn.MultiHeadDotProductAttention(num_heads=self.heads,
                                                qkv_features=self.hidden)(y, y, mask=mask)
        y = nn.Dense(4 * self.hidden)(nn.LayerNorm()(x))
        return x + nn.Dense(self.hidden)(nn.gelu(y))


class ScanGPTBlock(nn.Module):
    """A Block as nn.scan calls it: (carry, input) -> (carry, output)."""
    @nn.compact
    def __call__(self, x, _):
        return Block(HIDDEN, HEADS)(x), None


class GPT(nn.Module):
    # The blocks applied by nn.scan, their parameters stacked on a leading
    # layer axis, instead of written out.
    scan: bool = False

    @nn.compact
    def __call__(self, ids):
        embed = nn.Embed(VOCAB, HIDDEN)
        pos = self.param("pos", nn.initializers.normal(0.02), (SEQ, HIDDEN))
        x = embed(ids) + pos[None, :ids.shape[1]]
        if self.scan:
            blocks = nn.scan(ScanGPTBlock, variable_axes={"params": 0},
                             split_rngs={"params": True}, length=LAYERS)
            x, _ = blocks()(x, None)
        else:
            for _ in range(LAYERS):
                x = Block(HIDDEN, HEADS)(x)
        return embed.attend(nn.LayerNorm()(x))


_GPT = GPT()
_SCAN_GPT = GPT(scan=True)


def _gpt_example(model, batch, seed):
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(seed), 3)
    ids = jax.random.randint(k1, (batch, SEQ), 0, VOCAB)
    labels = jax.random.randint(k2, (batch, SEQ), 0, VOCAB)
    return model.init(k3, ids), ids, labels


def linen_gpt(params, ids, labels):
    return cross_entropy(_GPT.apply(params, ids), labels)


def linen_gpt_example(batch=2, seed=0):
    return _gpt_example(_GPT, batch, seed)


def linen_scan_gpt(params, ids, labels):
    return cross_entropy(_SCAN_GPT.apply(params, ids), labels)


def linen_scan_gpt_example(batch=2, seed=0):
    return _gpt_example(_SCAN_GPT, batch, seed)


class MLP(nnx.Module):
    def __init__(self, rngs):
        self.fc1 = nnx.Linear(16, 32, rngs=rngs)
        self.fc2 = nnx.Linear(32, 10, rngs=rngs)

    def __call__(self, x):
        return self.fc2(nnx.relu(self.fc1(x)))


_MLP_GRAPH, _MLP_STATE = nnx.split(MLP(nnx.Rngs(0)), nnx.Param)


def nnx_mlp(state, x, labels):
    return cross_entropy(nnx.merge(_MLP_GRAPH, state)(x), labels)


def nnx_mlp_example(batch=4, seed=0):
    k1, k2 = jax.random.split(jax.random.PRNGKey(seed))
    x = jax.random.normal(k1, (batch, 16))
    labels = jax.random.randint(k2, (batch,), 0, 10)
    return _MLP_STATE, x, labels


class ScanBlock(nn.Module):
    @nn.compact
    def __call__(self, x, _):
        return x + nn.Dense(x.shape[-1])(nn.gelu(nn.LayerNorm()(x))), None


class ScanMLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.Dense(32)(x)
        blocks = nn.scan(ScanBlock, variable_axes={"params": 0},
                         split_rngs={"params": True}, length=3)
        x, _ = blocks()(x, None)
        return nn.Dense(10)(x)


_SCAN_MLP = ScanMLP()


def linen_scan_mlp(params, x, labels):
    return cross_entropy(_SCAN_MLP.apply(params, x), labels)


def linen_scan_mlp_example(batch=4, seed=0):
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(seed), 3)
    x = jax.random.normal(k1, (batch, 16))
    labels = jax.random.randint(k2, (batch,), 0, 10)
    return _SCAN_MLP.init(k3, x), x, labels


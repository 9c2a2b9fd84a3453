"""GPT-2/GPT-3-style forward graph with loss, written in the loom dialect.

:func:`generate` returns the textual IR of one ``func.func @main`` that maps
``ids`` and ``labels`` (``tensor<BxSxi64>``) and every weight (a
``loom.param`` argument named as in HuggingFace's ``GPT2Model``, e.g.
``h.0.attn.c_attn.weight``) to the scalar mean cross-entropy loss:

* token embedding ``wte[vocab, hidden]`` (``loom.gather`` on axis 0) plus the
  position embedding ``wpe[seq, hidden]`` broadcast over the batch (the
  positions are ``0 .. seq-1``, so the lookup is ``wpe`` itself);
* per layer (pre-LayerNorm, as GPT-2): ``ln_1`` -> ``c_attn`` -> split into
  q, k, v -> heads -> ``q.k^T / sqrt(head_dim)`` -> causal mask -> softmax ->
  ``.v`` -> merge heads -> ``c_proj`` -> residual; ``ln_2`` -> ``c_fc`` ->
  gelu (tanh approximation) -> ``c_proj`` -> residual;
* final ``ln_f``, LM head tied to ``wte``, ``loom.cross_entropy`` (mean).

Weights use GPT-2's ``Conv1D`` layout ``[in, out]``. No constant is larger
than a splat (the causal mask comes from ``loom.iota`` and
``loom.compare``), so the text stays small at any model size.

Command line::

    python3 -m loom.models.gpt --preset gpt2-small -o gpt2.mlir
    python3 -m loom.models.gpt --layers 2 --hidden 64 --heads 4 --seq 16 \\
        --vocab 100 --batch 2 -o tiny.mlir
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Dict, List, Optional, Sequence

__all__ = ["PRESETS", "DTYPES", "GPTConfig", "generate", "param_count", "main"]

#: Named model shapes: layers, hidden, heads, seq, vocab, batch.
PRESETS: Dict[str, Dict[str, int]] = {
    "gpt2-small": dict(layers=12, hidden=768, heads=12, seq=1024, vocab=50257,
                       batch=1),
    "gpt3-175b": dict(layers=96, hidden=12288, heads=96, seq=2048, vocab=50257,
                      batch=1),
}

DTYPES = ("f32", "bf16", "f16")

# The value masked attention scores are replaced by: very negative but finite
# in the element type (f16 tops out at 65504).
_MASK_VALUE = {"f32": -1.0e9, "bf16": -1.0e9, "f16": -65504.0}

LAYER_NORM_EPSILON = 1e-5  # GPT-2's layer_norm_epsilon


class GPTConfig:
    """The sizes of a GPT model; raises ``ValueError`` when they do not fit."""

    def __init__(self, layers: int, hidden: int, heads: int, seq: int,
                 vocab: int, batch: int = 1, dtype: str = "f32") -> None:
        sizes = dict(layers=layers, hidden=hidden, heads=heads, seq=seq,
                     vocab=vocab, batch=batch)
        bad = [f"{k}={v!r}" for k, v in sizes.items()
               if isinstance(v, bool) or not isinstance(v, int) or v < 1]
        if bad:
            raise ValueError("sizes must be integers >= 1, got "
                             + ", ".join(bad))
        if hidden % heads != 0:
            raise ValueError(
                f"hidden ({hidden}) must be divisible by heads ({heads})")
        if dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, "
                             f"got {dtype!r}")
        self.layers, self.hidden, self.heads = layers, hidden, heads
        self.seq, self.vocab, self.batch, self.dtype = seq, vocab, batch, dtype

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads


def param_count(layers: int, hidden: int, heads: int, seq: int,
                vocab: int) -> int:
    """Trainable parameters of GPT-2-style model with tied LM head.

    Independent of :func:`generate` (tests compare the two): per layer
    ``12 h^2 + 13 h`` (``c_attn`` 3h^2+3h, attention ``c_proj`` h^2+h, ``c_fc``
    4h^2+4h, MLP ``c_proj`` 4h^2+h, two LayerNorms 4h), plus ``wte``
    (vocab*h), ``wpe`` (seq*h) and ``ln_f`` (2h). ``heads`` does not change
    the count.
    """
    del heads
    h = hidden
    return layers * (12 * h * h + 13 * h) + vocab * h + seq * h + 2 * h


def _t(shape: Sequence[int], elem: str) -> str:
    """``tensor<2x3xf32>``; ``tensor<f32>`` for a scalar."""
    return "tensor<" + "".join(f"{d}x" for d in shape) + elem + ">"


def _dims(values: Sequence[int]) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def _float(x: float) -> str:
    """A float literal the MLIR parser accepts (it needs a '.')."""
    return f"{x:.9e}"


class _Emitter:
    """Accumulates the body of one function, one op per line."""

    def __init__(self, dtype: str) -> None:
        self.dtype = dtype
        self.lines: List[str] = []
        self._used: Dict[str, int] = {}

    def _name(self, hint: str) -> str:
        n = self._used.get(hint, 0)
        self._used[hint] = n + 1
        return f"%{hint}" if n == 0 else f"%{hint}_{n}"

    def op(self, hint: str, text: str) -> str:
        name = self._name(hint)
        self.lines.append(f"    {name} = {text}")
        return name

    # -- ops ---------------------------------------------------------------

    def constant(self, hint: str, value: str, shape: Sequence[int],
                 elem: Optional[str] = None) -> str:
        return self.op(hint, f"loom.constant dense<{value}> : "
                             f"{_t(shape, elem or self.dtype)}")

    def broadcast(self, hint: str, x: str, dims: Sequence[int],
                  src: Sequence[int], dst: Sequence[int],
                  elem: Optional[str] = None) -> str:
        e = elem or self.dtype
        return self.op(hint, f"loom.broadcast {x}, dims = {_dims(dims)} : "
                             f"{_t(src, e)} -> {_t(dst, e)}")

    def binary(self, kind: str, hint: str, a: str, b: str,
               shape: Sequence[int]) -> str:
        return self.op(hint, f"loom.{kind} {a}, {b} : {_t(shape, self.dtype)}")

    def reshape(self, hint: str, x: str, src: Sequence[int],
                dst: Sequence[int]) -> str:
        return self.op(hint, f"loom.reshape {x} : {_t(src, self.dtype)} -> "
                             f"{_t(dst, self.dtype)}")

    def transpose(self, hint: str, x: str, perm: Sequence[int],
                  src: Sequence[int]) -> str:
        dst = [src[p] for p in perm]
        return self.op(hint, f"loom.transpose {x}, permutation = {_dims(perm)}"
                             f" : {_t(src, self.dtype)} -> "
                             f"{_t(dst, self.dtype)}")

    def dot(self, hint: str, a: str, b: str, a_shape: Sequence[int],
            b_shape: Sequence[int], out: Sequence[int],
            contracting: Sequence[Sequence[int]],
            batching: Optional[Sequence[Sequence[int]]] = None) -> str:
        attrs = ""
        if batching:
            attrs += (f"batching_dims = {_dims(batching[0])} x "
                      f"{_dims(batching[1])}, ")
        attrs += (f"contracting_dims = {_dims(contracting[0])} x "
                  f"{_dims(contracting[1])}")
        e = self.dtype
        return self.op(hint, f"loom.dot_general {a}, {b}, {attrs} : "
                             f"({_t(a_shape, e)}, {_t(b_shape, e)}) -> "
                             f"{_t(out, e)}")

    def linear(self, hint: str, x: str, w: str, b: str, n_in: int,
               n_out: int, lead: Sequence[int]) -> str:
        """``x @ w + b`` with ``x: [*lead, n_in]``, ``w: [n_in, n_out]``."""
        rank = len(lead)
        out = [*lead, n_out]
        y = self.dot(hint + "_mm", x, w, [*lead, n_in], [n_in, n_out], out,
                     contracting=([rank], [0]))
        bb = self.broadcast(hint + "_bias", b, [rank], [n_out], out)
        return self.binary("add", hint, y, bb, out)

    def layer_norm(self, hint: str, x: str, g: str, b: str,
                   shape: Sequence[int]) -> str:
        e = self.dtype
        feat = [shape[-1]]
        return self.op(hint, f"loom.layer_norm {x} scale {g} bias {b} "
                             f"axis = {len(shape) - 1} epsilon = "
                             f"{LAYER_NORM_EPSILON:.6e} : ({_t(shape, e)}, "
                             f"{_t(feat, e)}, {_t(feat, e)}) -> "
                             f"{_t(shape, e)}")


def generate(layers: int, hidden: int, heads: int, seq: int, vocab: int,
             batch: int = 1, dtype: str = "f32") -> str:
    """Returns the loom-dialect text of the GPT forward graph with its loss.

    Raises ``ValueError`` for sizes below 1, ``hidden % heads != 0`` or an
    unknown ``dtype``. The output depends only on the arguments.
    """
    cfg = GPTConfig(layers, hidden, heads, seq, vocab, batch, dtype)
    B, S, H, V, NH, HD = (cfg.batch, cfg.seq, cfg.hidden, cfg.vocab,
                          cfg.heads, cfg.head_dim)
    e = cfg.dtype
    em = _Emitter(e)

    # Function arguments: data first, then every weight in HF order.
    args: List[str] = []

    def arg(ssa: str, shape: Sequence[int], name: str, elem: str = e,
            param: bool = True) -> str:
        attrs = ("loom.param, " if param else "") + f'loom.name = "{name}"'
        args.append(f"%{ssa}: {_t(shape, elem)} {{{attrs}}}")
        return f"%{ssa}"

    ids = arg("ids", [B, S], "ids", "i64", param=False)
    labels = arg("labels", [B, S], "labels", "i64", param=False)
    wte = arg("wte", [V, H], "wte.weight")
    wpe = arg("wpe", [S, H], "wpe.weight")
    weights = []
    for i in range(cfg.layers):
        p = f"h.{i}."
        s = f"h{i}_"
        weights.append(dict(
            ln1_g=arg(s + "ln_1_w", [H], p + "ln_1.weight"),
            ln1_b=arg(s + "ln_1_b", [H], p + "ln_1.bias"),
            attn_w=arg(s + "attn_c_attn_w", [H, 3 * H],
                       p + "attn.c_attn.weight"),
            attn_b=arg(s + "attn_c_attn_b", [3 * H], p + "attn.c_attn.bias"),
            proj_w=arg(s + "attn_c_proj_w", [H, H], p + "attn.c_proj.weight"),
            proj_b=arg(s + "attn_c_proj_b", [H], p + "attn.c_proj.bias"),
            ln2_g=arg(s + "ln_2_w", [H], p + "ln_2.weight"),
            ln2_b=arg(s + "ln_2_b", [H], p + "ln_2.bias"),
            fc_w=arg(s + "mlp_c_fc_w", [H, 4 * H], p + "mlp.c_fc.weight"),
            fc_b=arg(s + "mlp_c_fc_b", [4 * H], p + "mlp.c_fc.bias"),
            fc2_w=arg(s + "mlp_c_proj_w", [4 * H, H], p + "mlp.c_proj.weight"),
            fc2_b=arg(s + "mlp_c_proj_b", [H], p + "mlp.c_proj.bias"),
        ))
    lnf_g = arg("ln_f_w", [H], "ln_f.weight")
    lnf_b = arg("ln_f_b", [H], "ln_f.bias")

    x_shape = [B, S, H]
    heads_shape = [B, S, NH, HD]
    score_shape = [B, NH, S, S]

    # Embeddings.
    tok = em.op("tok_emb", f"loom.gather {wte}[{ids}], axis = 0 : "
                           f"({_t([V, H], e)}, {_t([B, S], 'i64')}) -> "
                           f"{_t(x_shape, e)}")
    pos = em.broadcast("pos_emb", wpe, [1, 2], [S, H], x_shape)
    x = em.binary("add", "x", tok, pos, x_shape)

    # Shared by every layer: causal mask (key position <= query position),
    # the masked value and the score scale, all without large constants.
    row = em.op("q_pos", f"loom.iota dim = 0 : {_t([S, S], 'i64')}")
    col = em.op("k_pos", f"loom.iota dim = 1 : {_t([S, S], 'i64')}")
    causal = em.op("causal", f"loom.compare le, {col}, {row} : "
                             f"({_t([S, S], 'i64')}, {_t([S, S], 'i64')}) -> "
                             f"{_t([S, S], 'i1')}")
    mask = em.broadcast("mask", causal, [2, 3], [S, S], score_shape, "i1")
    masked = em.constant("masked", _float(_MASK_VALUE[e]), score_shape)
    scale = em.constant("scale", _float(1.0 / math.sqrt(HD)), score_shape)

    for i, w in enumerate(weights):
        L = f"l{i}_"
        # Attention block.
        h = em.layer_norm(L + "ln_1", x, w["ln1_g"], w["ln1_b"], x_shape)
        qkv = em.linear(L + "qkv", h, w["attn_w"], w["attn_b"], H, 3 * H,
                        [B, S])
        em.lines.append(
            f"    %{L}q, %{L}k, %{L}v = loom.split {qkv}, dim = 2, "
            f"sizes = {_dims([H, H, H])} : {_t([B, S, 3 * H], e)} -> "
            f"{_t(x_shape, e)}, {_t(x_shape, e)}, {_t(x_shape, e)}")
        split_heads = {}
        for part in "qkv":
            r = em.reshape(f"{L}{part}_heads", f"%{L}{part}", x_shape,
                           heads_shape)
            split_heads[part] = em.transpose(f"{L}{part}_t", r, [0, 2, 1, 3],
                                             heads_shape)
        bh_shape = [B, NH, S, HD]
        scores = em.dot(L + "scores", split_heads["q"], split_heads["k"],
                        bh_shape, bh_shape, score_shape,
                        contracting=([3], [3]), batching=([0, 1], [0, 1]))
        scores = em.binary("mul", L + "scaled", scores, scale, score_shape)
        scores = em.op(L + "masked",
                       f"loom.select {mask}, {scores}, {masked} : "
                       f"{_t(score_shape, 'i1')}, {_t(score_shape, e)}")
        probs = em.op(L + "probs", f"loom.softmax {scores}, axis = 3 : "
                                   f"{_t(score_shape, e)}")
        ctx = em.dot(L + "ctx", probs, split_heads["v"], score_shape,
                     bh_shape, bh_shape, contracting=([3], [2]),
                     batching=([0, 1], [0, 1]))
        ctx = em.transpose(L + "ctx_t", ctx, [0, 2, 1, 3], bh_shape)
        ctx = em.reshape(L + "ctx_merged", ctx, heads_shape, x_shape)
        attn = em.linear(L + "attn_out", ctx, w["proj_w"], w["proj_b"], H, H,
                         [B, S])
        x = em.binary("add", L + "res_1", x, attn, x_shape)
        # MLP block.
        h = em.layer_norm(L + "ln_2", x, w["ln2_g"], w["ln2_b"], x_shape)
        h = em.linear(L + "fc", h, w["fc_w"], w["fc_b"], H, 4 * H, [B, S])
        h = em.op(L + "gelu", f"loom.gelu {h} approximate = tanh : "
                              f"{_t([B, S, 4 * H], e)}")
        h = em.linear(L + "mlp_out", h, w["fc2_w"], w["fc2_b"], 4 * H, H,
                      [B, S])
        x = em.binary("add", L + "res_2", x, h, x_shape)

    x = em.layer_norm("ln_f", x, lnf_g, lnf_b, x_shape)
    # LM head tied to wte: [B,S,H] x [V,H] contracting hidden.
    logits = em.dot("logits", x, wte, x_shape, [V, H], [B, S, V],
                    contracting=([2], [1]))
    loss = em.op("loss", f"loom.cross_entropy {logits}, {labels} "
                         f"reduction = mean : ({_t([B, S, V], e)}, "
                         f"{_t([B, S], 'i64')}) -> {_t([], e)}")

    header = (f"// GPT forward graph with loss: layers={cfg.layers} "
              f"hidden={H} heads={NH} seq={S} vocab={V} batch={B} dtype={e}\n"
              f"// Generated by loom.models.gpt.\n")
    sig = ",\n      ".join(args)
    return (header + "module {\n"
            f"  func.func @main(\n      {sig})\n"
            f"      -> ({_t([], e)} {{loom.name = \"loss\"}}) {{\n"
            + "\n".join(em.lines) + "\n"
            f"    return {loss} : {_t([], e)}\n"
            "  }\n"
            "}\n")


def _parser() -> argparse.ArgumentParser:
    presets = "; ".join(
        f"{name}: " + ", ".join(f"{k}={v}" for k, v in sizes.items())
        for name, sizes in PRESETS.items())
    p = argparse.ArgumentParser(
        prog="python3 -m loom.models.gpt",
        description="Write a GPT-2/GPT-3-style forward graph with its "
                    "cross-entropy loss in the loom dialect's textual syntax.",
        epilog=f"Presets ({presets}) set the sizes; size options given "
               "explicitly override them. Without --preset, --layers, "
               "--hidden, --heads, --seq and --vocab are required.")
    p.add_argument("--preset", choices=sorted(PRESETS),
                   help="start from a named model shape")
    p.add_argument("--layers", type=int, help="transformer blocks")
    p.add_argument("--hidden", type=int, help="model width (d_model)")
    p.add_argument("--heads", type=int,
                   help="attention heads (must divide --hidden)")
    p.add_argument("--seq", type=int,
                   help="sequence length (also the rows of wpe)")
    p.add_argument("--vocab", type=int, help="vocabulary size")
    p.add_argument("--batch", type=int, help="batch size (default 1)")
    p.add_argument("--dtype", choices=DTYPES, default="f32",
                   help="element type of weights and activations "
                        "(default f32)")
    p.add_argument("-o", "--output", default="-",
                   help="output file (default: - for stdout)")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    sizes: Dict[str, Optional[int]] = dict(layers=None, hidden=None,
                                           heads=None, seq=None, vocab=None,
                                           batch=1)
    if args.preset:
        sizes.update(PRESETS[args.preset])
    for key in sizes:
        value = getattr(args, key)
        if value is not None:
            sizes[key] = value
    missing = [f"--{k}" for k, v in sizes.items() if v is None]
    if missing:
        parser.error("missing " + ", ".join(missing) + " (or use --preset)")
    try:
        text = generate(dtype=args.dtype, **sizes)  # type: ignore[arg-type]
    except ValueError as err:
        parser.error(str(err))
    if args.output == "-":
        sys.stdout.write(text)
    else:
        try:
            with open(args.output, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
        except OSError as err:
            print(f"error: cannot write {args.output}: {err}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

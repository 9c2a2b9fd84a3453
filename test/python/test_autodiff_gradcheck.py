"""Gradient check of every loom op's vector-Jacobian product.

For each op, a tiny function F(inputs) = reduce_sum(op(inputs) * cot) is
differentiated by `loom-opt --loom-autodiff` and @F_grad is run by loom-run.
The reference is a central finite difference of F itself, evaluated by
loom-run at perturbed inputs: one extra function calls @F at every
perturbed point (inputs built in NumPy, rounded to f32 once, so the step in
the denominator is the exact difference of the two points). The reference
never touches the VJP code. Inputs stay away from kinks (relu/abs at 0, max
ties), where the finite difference is not the derivative; the tie rules are
checked exactly against PyTorch at the end.

`test_every_op_is_checked` fails when an op of LoomOps.td has no case here.
"""

import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("LOOM_BUILD_DIR", ROOT / "build"))
LOOM_OPT = BUILD / "bin" / "loom-opt"
LOOM_RUN = BUILD / "bin" / "loom-run"

pytestmark = pytest.mark.skipif(not (LOOM_RUN.exists() and LOOM_OPT.exists()),
                                reason=f"loom-opt/loom-run not built in {BUILD}")

ELEMENT = {np.dtype(np.float32): "f32", np.dtype(np.int64): "i64",
           np.dtype(np.int32): "i32", np.dtype(np.bool_): "i1"}


def ttype(shape, element="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


def atype(array):
    return ttype(array.shape, ELEMENT[array.dtype])


def literal(array):
    """A dense<...> literal that reproduces the f32/integer array exactly."""
    if array.dtype == np.float32:
        flat = [repr(float(v)) for v in array.reshape(-1)]
    else:
        flat = [str(int(v)) for v in array.reshape(-1)]
    return "dense<" + _nest(array, flat) + ">"


def _nest(array, flat):
    if array.ndim == 0:
        return flat[0]
    it = iter(flat)

    def build(shape):
        if len(shape) == 1:
            return "[" + ", ".join(next(it) for _ in range(shape[0])) + "]"
        return "[" + ", ".join(build(shape[1:]) for _ in range(shape[0])) + "]"
    return build(array.shape)


class Case:
    """`body` computes %y (a float tensor of shape `out`) from the
    arguments; `params` are differentiated, `data` are not."""

    def __init__(self, name, body, out, params, data=None, step=1e-2,
                 rtol=1e-2, atol=2e-3, prelude=""):
        self.name, self.body, self.out = name, body, out
        # Module-level ops the body refers to (a shard.grid).
        self.prelude = prelude
        self.params, self.data = params, data or {}
        self.step, self.rtol, self.atol = step, rtol, atol


def rng(seed):
    return np.random.default_rng(seed)


def normal(shape, seed, scale=1.0):
    return (rng(seed).standard_normal(shape) * scale).astype(np.float32)


def uniform(shape, seed, low, high):
    return rng(seed).uniform(low, high, shape).astype(np.float32)


def away_from_zero(shape, seed, margin=0.2):
    """Normal values with |x| >= margin (no kink of relu/abs nearby)."""
    x = normal(shape, seed)
    return np.where(np.abs(x) < margin, np.sign(x + 1e-9) * (margin + np.abs(x)), x).astype(np.float32)


def distinct(shape, seed, gap=0.2):
    """A permutation of well separated values (no ties for max)."""
    n = int(np.prod(shape))
    return (rng(seed).permutation(n).astype(np.float32) * gap - n * gap / 2).reshape(shape)


def unary(name, op, x, **kw):
    t = ttype(x.shape)
    return Case(name, f"%y = loom.{op} %x : {t}", x.shape, {"x": x}, **kw)


def binary(name, op, a, b, **kw):
    t = ttype(a.shape)
    return Case(name, f"%y = loom.{op} %a, %b : {t}", a.shape, {"a": a, "b": b}, **kw)


S = (2, 3)
T = ttype(S)
CASES = [
    # Elementwise arithmetic.
    binary("add", "add", normal(S, 1), normal(S, 2)),
    binary("sub", "sub", normal(S, 3), normal(S, 4)),
    binary("mul", "mul", normal(S, 5), normal(S, 6)),
    binary("div", "div", normal(S, 7), away_from_zero(S, 8, margin=0.5)),
    binary("pow", "pow", uniform(S, 9, 0.5, 2.0), uniform(S, 10, -1.5, 2.0)),
    binary("max", "max", distinct(S, 11), distinct(S, 12) + 0.1),
    binary("min", "min", distinct(S, 13), distinct(S, 14) + 0.1),
    unary("neg", "neg", normal(S, 15)),
    # Megatron's f on a one-rank grid: the identity, and the all-reduce of
    # its VJP is the identity too.
    Case("tp_copy", f"%y = loom.tp_copy %x on @g grid_axes = [0] : {ttype(S)}", S,
         {"x": normal(S, 16)}, prelude="shard.grid @g(shape = 1)\n"),
    unary("abs", "abs", away_from_zero(S, 16)),
    unary("exp", "exp", normal(S, 17)),
    unary("log", "log", uniform(S, 18, 0.5, 3.0)),
    unary("sqrt", "sqrt", uniform(S, 19, 0.5, 3.0)),
    unary("rsqrt", "rsqrt", uniform(S, 20, 0.5, 3.0)),
    unary("tanh", "tanh", normal(S, 21)),
    # Rotary embeddings: cos' = -sin, sin' = cos (inputs over several periods).
    unary("cos", "cos", normal(S, 60, 3.0)),
    unary("sin", "sin", normal(S, 61, 3.0)),
    unary("sigmoid", "sigmoid", normal(S, 22)),
    unary("erf", "erf", normal(S, 23)),
    unary("erf_inv", "erf_inv", uniform(S, 62, -0.9, 0.9)),
    # Activations.
    unary("relu", "relu", away_from_zero(S, 24)),
    unary("silu", "silu", normal(S, 25)),
    Case("gelu", f"%y = loom.gelu %x : {T}", S, {"x": normal(S, 26, 2.0)}),
    Case("gelu_tanh", f"%y = loom.gelu %x approximate = tanh : {T}", S,
         {"x": normal(S, 27, 2.0)}),
    # Comparison, selection, conversion: the gradient flows through select's
    # data operands, never through the comparison.
    Case("compare_select", f"""
        %c = loom.compare gt, %a, %t : ({T}, {T}) -> {ttype(S, "i1")}
        %a2 = loom.mul %a, %b : {T}
        %y = loom.select %c, %a2, %b : {ttype(S, "i1")}, {T}""", S,
         {"a": away_from_zero(S, 28, margin=0.3), "b": normal(S, 29)},
         {"t": np.zeros(S, np.float32)}),
    Case("convert", f"""
        %h = loom.convert %x : {T} -> {ttype(S, "f16")}
        %y = loom.convert %h : {ttype(S, "f16")} -> {T}""", S,
         {"x": normal(S, 30)}, step=0.25, rtol=2e-2, atol=2e-2),
    # Normalisation.
    Case("softmax", "%y = loom.softmax %x, axis = 1 : tensor<3x4xf32>", (3, 4),
         {"x": normal((3, 4), 31)}),
    Case("softmax_axis0", "%y = loom.softmax %x, axis = 0 : tensor<3x4xf32>", (3, 4),
         {"x": normal((3, 4), 32)}),
    Case("log_softmax", "%y = loom.log_softmax %x, axis = 1 : tensor<3x4xf32>", (3, 4),
         {"x": normal((3, 4), 33)}),
    Case("layer_norm", """%y = loom.layer_norm %x scale %g bias %b axis = 1 epsilon = 1.0e-05
            : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>""",
         (2, 3, 4), {"x": normal((2, 3, 4), 34), "g": normal((3, 4), 35),
                     "b": normal((3, 4), 36)}),
    Case("layer_norm_plain", """%y = loom.layer_norm %x axis = 1 epsilon = 1.0e-05
            : (tensor<3x4xf32>) -> tensor<3x4xf32>""",
         (3, 4), {"x": normal((3, 4), 37)}),
    Case("rms_norm", """%y = loom.rms_norm %x scale %g axis = 1 epsilon = 1.0e-06
            : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>""",
         (3, 4), {"x": normal((3, 4), 38), "g": normal((4,), 39)}),
    Case("rms_norm_plain", """%y = loom.rms_norm %x axis = 0 epsilon = 1.0e-06
            : (tensor<3x4xf32>) -> tensor<3x4xf32>""",
         (3, 4), {"x": normal((3, 4), 40)}),
    # Contraction: a matmul, and batched with transposed layouts.
    Case("dot_general", """%y = loom.dot_general %a, %b, contracting_dims = [1] x [0]
            : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>""",
         (2, 4), {"a": normal((2, 3), 41), "b": normal((3, 4), 42)}),
    Case("dot_general_batched", """%y = loom.dot_general %a, %b, batching_dims = [2] x [0],
            contracting_dims = [0] x [2]
            : (tensor<3x4x2xf32>, tensor<2x5x3xf32>) -> tensor<2x4x5xf32>""",
         (2, 4, 5), {"a": normal((3, 4, 2), 43), "b": normal((2, 5, 3), 44)}),
    Case("dot_general_two_contractions", """%y = loom.dot_general %a, %b,
            contracting_dims = [2, 0] x [0, 1]
            : (tensor<2x3x4xf32>, tensor<4x2x5xf32>) -> tensor<3x5xf32>""",
         (3, 5), {"a": normal((2, 3, 4), 45), "b": normal((4, 2, 5), 46)}),
    # Shape and data movement.
    Case("reshape", "%y = loom.reshape %x : tensor<2x6xf32> -> tensor<3x4xf32>", (3, 4),
         {"x": normal((2, 6), 47)}),
    Case("transpose", """%y = loom.transpose %x, permutation = [2, 0, 1]
            : tensor<2x3x4xf32> -> tensor<4x2x3xf32>""", (4, 2, 3),
         {"x": normal((2, 3, 4), 48)}),
    Case("broadcast", """%y = loom.broadcast %x, dims = [0, 2]
            : tensor<1x3xf32> -> tensor<2x4x3xf32>""", (2, 4, 3),
         {"x": normal((1, 3), 49)}),
    Case("slice", """%y = loom.slice %x, start = [1, 0], limit = [4, 5], strides = [1, 2]
            : tensor<5x6xf32> -> tensor<3x3xf32>""", (3, 3),
         {"x": normal((5, 6), 50)}),
    Case("concat", """%y = loom.concat %a, %b dim = 1
            : (tensor<2x3xf32>, tensor<2x2xf32>) -> tensor<2x5xf32>""", (2, 5),
         {"a": normal((2, 3), 51), "b": normal((2, 2), 52)}),
    # Piece 1 is unused: its cotangent is zero.
    Case("split", """%p:3 = loom.split %x, dim = 1, sizes = [2, 1, 2]
            : tensor<3x5xf32> -> tensor<3x2xf32>, tensor<3x1xf32>, tensor<3x2xf32>
        %y = loom.mul %p#0, %p#2 : tensor<3x2xf32>""", (3, 2),
         {"x": normal((3, 5), 53)}),
    Case("gather", """%y = loom.gather %x[%i], axis = 1
            : (tensor<3x4xf32>, tensor<2x2xi64>) -> tensor<3x2x2xf32>""", (3, 2, 2),
         {"x": normal((3, 4), 54)}, {"i": np.array([[0, 2], [2, 3]], np.int64)}),
    Case("scatter_add", """%y = loom.scatter_add %t[%i], %u, axis = 0
            : (tensor<4x3xf32>, tensor<3xi64>, tensor<3x3xf32>) -> tensor<4x3xf32>""",
         (4, 3), {"t": normal((4, 3), 55), "u": normal((3, 3), 56)},
         {"i": np.array([1, 3, 1], np.int64)}),
    Case("iota", f"""%k = loom.iota dim = 1 : {T}
        %y = loom.mul %x, %k : {T}""", S, {"x": normal(S, 57)}),
    # The rank's index (0 on a one-rank grid): no gradient flows through it.
    Case("grid_index", f"""%r = loom.grid_index on @g grid_axes = [0] : tensor<i64>
        %f = loom.convert %r : tensor<i64> -> tensor<f32>
        %one = loom.constant dense<1.0> : tensor<f32>
        %s = loom.add %f, %one : tensor<f32>
        %k = loom.broadcast %s, dims = [] : tensor<f32> -> {T}
        %y = loom.mul %x, %k : {T}""", S, {"x": normal(S, 62)},
         prelude="shard.grid @g(shape = 1)\n"),
    Case("constant", f"""%k = loom.constant dense<[[1.5, -2.0, 0.5], [3.0, 0.25, -1.0]]> : {T}
        %y = loom.mul %x, %k : {T}""", S, {"x": normal(S, 58)}),
    # Reductions.
    Case("reduce_sum", """%y = loom.reduce_sum %x, dims = [0, 2]
            : tensor<2x3x4xf32> -> tensor<3xf32>""", (3,), {"x": normal((2, 3, 4), 59)}),
    Case("reduce_sum_keepdims", """%y = loom.reduce_sum %x, dims = [1] keepdims
            : tensor<2x3x4xf32> -> tensor<2x1x4xf32>""", (2, 1, 4),
         {"x": normal((2, 3, 4), 60)}),
    Case("reduce_mean", """%y = loom.reduce_mean %x, dims = [1, 2]
            : tensor<2x3x4xf32> -> tensor<2xf32>""", (2,), {"x": normal((2, 3, 4), 61)}),
    Case("reduce_max", """%y = loom.reduce_max %x, dims = [1]
            : tensor<3x4xf32> -> tensor<3xf32>""", (3,), {"x": distinct((3, 4), 62)}),
    Case("reduce_max_keepdims", """%y = loom.reduce_max %x, dims = [0] keepdims
            : tensor<3x4xf32> -> tensor<1x4xf32>""", (1, 4), {"x": distinct((3, 4), 63)}),
    # Loss, with every reduction and an ignored sample.
    Case("cross_entropy_mean", """%y = loom.cross_entropy %x, %l ignore_index = -100
            : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<f32>""", (),
         {"x": normal((4, 5), 64)}, {"l": np.array([1, -100, 4, 0], np.int64)}),
    Case("cross_entropy_sum", """%y = loom.cross_entropy %x, %l reduction = sum
            : (tensor<2x3x5xf32>, tensor<2x3xi32>) -> tensor<f32>""", (),
         {"x": normal((2, 3, 5), 65)}, {"l": np.array([[1, 2, 4], [0, 0, 3]], np.int32)}),
    Case("cross_entropy_none", """%y = loom.cross_entropy %x, %l reduction = none ignore_index = 2
            : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<4xf32>""", (4,),
         {"x": normal((4, 5), 66)}, {"l": np.array([1, 2, 4, 0], np.int64)}),
]


def run(cmd):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{proc.stderr}"
    return proc


def forward_module(case, cot):
    """@main: reduce_sum(op(args) * cot) with params marked loom.param."""
    args = [f"%{n}: {atype(a)} {{loom.param, loom.name = \"{n}\"}}" for n, a in case.params.items()]
    args += [f"%{n}: {atype(a)} {{loom.name = \"{n}\"}}" for n, a in case.data.items()]
    out = ttype(case.out)
    rank = len(case.out)
    dims = ", ".join(str(d) for d in range(rank))
    return case.prelude + f"""func.func @main({", ".join(args)}) -> (tensor<f32> {{loom.name = "loss"}}) {{
  {case.body}
  %cot = loom.constant {literal(cot)} : {out}
  %weighted = loom.mul %y, %cot : {out}
  %loss = loom.reduce_sum %weighted, dims = [{dims}] : {out} -> tensor<f32>
  return %loss : tensor<f32>
}}
"""


def finite_difference_module(case, points):
    """@fd: calls @main at every point ({name: array} replacing some
    arguments; the others as given) and returns the losses in order."""
    names = list(case.params) + list(case.data)
    types = [atype(a) for a in case.params.values()] + [atype(a) for a in case.data.values()]
    lines, results = [], []
    for k, point in enumerate(points):
        operands = []
        for n, t in zip(names, types):
            if n in point:
                lines.append(f"  %{n}_{k} = loom.constant {literal(point[n])} : {t}")
                operands.append(f"%{n}_{k}")
            else:
                operands.append(f"%{n}")
        lines.append(f"  %l{k} = func.call @main({', '.join(operands)}) : "
                     f"({', '.join(types)}) -> tensor<f32>")
        results.append(f"%l{k}")
    all_args = {**case.params, **case.data}
    data_args = [f"%{n}: {atype(a)} {{loom.name = \"{n}\"}}" for n, a in all_args.items()]
    outs = ", ".join(f"tensor<f32> {{loom.name = \"l{k}\"}}" for k in range(len(points)))
    return (f"func.func @fd({', '.join(data_args)}) -> ({outs}) {{\n" + "\n".join(lines) +
            f"\n  return {', '.join(results)} : {', '.join(['tensor<f32>'] * len(points))}\n}}\n")


def data_inputs(case, tmp_path):
    args = []
    for n, a in case.data.items():
        path = tmp_path / f"data_{n}.npy"
        np.save(path, a)
        args += ["--input", f"{n}={path}"]
    return args


def check_case(case, tmp_path):
    cot = normal(case.out, 1000 + len(case.name))
    forward = forward_module(case, cot)
    (tmp_path / "forward.mlir").write_text(forward)

    # Gradients from loom-autodiff.
    grad_ir = run([LOOM_OPT, tmp_path / "forward.mlir", "--loom-autodiff"]).stdout
    (tmp_path / "grad.mlir").write_text(grad_ir)
    inputs = data_inputs(case, tmp_path)
    for n, a in case.params.items():
        np.save(tmp_path / f"param_{n}.npy", a)
        inputs += ["--input", f"{n}={tmp_path / f'param_{n}.npy'}"]
    run([LOOM_RUN, tmp_path / "grad.mlir", "--entry", "main_grad",
         "--output-dir", tmp_path / "grad", *inputs])

    # Central differences of @main, all points in one loom-run.
    points, steps = [], []
    for n, a in case.params.items():
        for i in range(a.size):
            plus, minus = a.copy().reshape(-1), a.copy().reshape(-1)
            plus[i] = np.float32(a.reshape(-1)[i] + case.step)
            minus[i] = np.float32(a.reshape(-1)[i] - case.step)
            points += [{n: plus.reshape(a.shape)}, {n: minus.reshape(a.shape)}]
            steps.append(float(plus[i]) - float(minus[i]))
    (tmp_path / "fd.mlir").write_text(forward + finite_difference_module(case, points))
    run([LOOM_RUN, tmp_path / "fd.mlir", "--entry", "fd", "--output-dir", tmp_path / "fd",
         *inputs])
    losses = [float(np.load(tmp_path / "fd" / f"l{k}.npy")) for k in range(len(points))]

    k = 0
    for n, a in case.params.items():
        got = np.load(tmp_path / "grad" / f"grad.{n}.npy")
        assert got.shape == a.shape and got.dtype == np.float32, n
        expected = np.array([(losses[2 * j] - losses[2 * j + 1]) / steps[j]
                             for j in range(k, k + a.size)]).reshape(a.shape)
        k += a.size
        np.testing.assert_allclose(got, expected, rtol=case.rtol, atol=case.atol,
                                   err_msg=f"{case.name}: d loss / d {n}")
    loss = float(np.load(tmp_path / "grad" / "loss.npy"))
    assert np.isfinite(loss)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_gradient(case, tmp_path):
    check_case(case, tmp_path)


# Ops that only a VJP emits and that have no VJP of their own: the case of
# the op whose VJP emits them checks their values.
GRADIENT_ONLY = {"gelu_grad": "gelu", "norm_grad": "layer_norm"}


def test_every_op_is_checked():
    """Each op mnemonic of LoomOps.td appears in some case's body."""
    td = (ROOT / "include/loom/Dialect/Loom/IR/LoomOps.td").read_text()
    mnemonics = set(re.findall(r'^def Loom_\w+Op\s*:\s*Loom_\w+<"(\w+)"', td, re.M))
    assert len(mnemonics) == 48, sorted(mnemonics)
    used = set(re.findall(r"loom\.(\w+)", " ".join(c.body for c in CASES)))
    assert mnemonics - used == set(GRADIENT_ONLY)
    assert set(GRADIENT_ONLY.values()) <= used


def assert_no_second_derivative(tmp_path, op, line, value, T):
    """Differentiating a function whose loss is the sum of `value`, which
    `line` computes with loom.`op` from %x (a param) and %d of type T, is an
    error naming the op: gradient-only ops have no VJP of their own."""
    text = (f"func.func @main(%x: {T} {{loom.param}}, %d: {T}) -> tensor<f32> {{\n"
            f"  {line}\n"
            f"  %s = loom.reduce_sum {value}, dims = [0, 1] : {T} -> tensor<f32>\n"
            f"  return %s : tensor<f32>\n}}\n")
    (tmp_path / "g.mlir").write_text(text)
    proc = subprocess.run([LOOM_OPT, tmp_path / "g.mlir", "--loom-autodiff"],
                          capture_output=True, text=True)
    assert proc.returncode != 0
    assert f"'loom.{op}' op has no vector-Jacobian product: second " \
           "derivatives are not supported" in proc.stderr, proc.stderr


def test_gelu_vjp_is_one_gelu_grad_without_a_vjp_of_its_own(tmp_path):
    """loom.gelu's VJP is one loom.gelu_grad of its input and the cotangent
    (what loom-fuse-gemm-bias gives a backward gemm as its DGELU epilogue);
    differentiating that again is an error naming the op."""
    T = ttype((2, 3))
    for approximate in ("", " approximate = tanh"):
        text = (f"func.func @main(%x: {T} {{loom.param}}) -> tensor<f32> {{\n"
                f"  %y = loom.gelu %x{approximate} : {T}\n"
                f"  %s = loom.reduce_sum %y, dims = [0, 1] : {T} -> tensor<f32>\n"
                f"  return %s : tensor<f32>\n}}\n")
        (tmp_path / "f.mlir").write_text(text)
        grad = run([LOOM_OPT, tmp_path / "f.mlir", "--loom-autodiff"]).stdout
        lines = [l for l in grad.splitlines() if "loom.gelu_grad" in l]
        assert len(lines) == 1, grad
        assert ("approximate = tanh" in lines[0]) == bool(approximate), lines[0]
        assert not re.search(r"loom\.(tanh|erf|exp)\b", grad), grad
    assert_no_second_derivative(
        tmp_path, "gelu_grad", f"%y = loom.gelu_grad %x, %d : {T}", "%y", T)


def test_f32_norm_vjps_are_one_norm_grad_without_a_vjp_of_its_own(tmp_path):
    """An f32 layer or RMS norm's VJP is one loom.norm_grad (the runtime's
    row kernel), not the statistics spelled out; the gradient cases above
    check its values. Differentiating it again is an error naming it."""
    T = ttype((2, 3))
    for op, flag in (("layer_norm", False), ("rms_norm", True)):
        text = (f"func.func @main(%x: {T} {{loom.param}}, "
                f"%g: {ttype((3,))} {{loom.param}}) -> tensor<f32> {{\n"
                f"  %y = loom.{op} %x scale %g axis = 1 epsilon = 1.0e-05"
                f" : ({T}, {ttype((3,))}) -> {T}\n"
                f"  %s = loom.reduce_sum %y, dims = [0, 1] : {T} -> tensor<f32>\n"
                f"  return %s : tensor<f32>\n}}\n")
        (tmp_path / "f.mlir").write_text(text)
        grad = run([LOOM_OPT, tmp_path / "f.mlir", "--loom-autodiff"]).stdout
        lines = [l for l in grad.splitlines() if "loom.norm_grad" in l]
        assert len(lines) == 1, grad
        assert (" rms " in lines[0]) == flag, lines[0]
        assert not re.search(r"loom\.(reduce_mean|rsqrt)\b", grad), grad
    assert_no_second_derivative(
        tmp_path, "norm_grad",
        f"%y:3 = loom.norm_grad %x, %d axis = 1 epsilon = 1.0e-05"
        f" : ({T}, {T}) -> ({T}, {ttype((3,))}, {ttype((3,))})", "%y#0", T)


def run_grad(tmp_path, text, inputs):
    (tmp_path / "f.mlir").write_text(text)
    grad = run([LOOM_OPT, tmp_path / "f.mlir", "--loom-autodiff"]).stdout
    (tmp_path / "g.mlir").write_text(grad)
    args = []
    for n, a in inputs.items():
        np.save(tmp_path / f"{n}.npy", a)
        args += ["--input", f"{n}={tmp_path / f'{n}.npy'}"]
    run([LOOM_RUN, tmp_path / "g.mlir", "--entry", "main_grad", "--output-dir",
         tmp_path / "out", *args])
    return {p.stem: np.load(p) for p in (tmp_path / "out").glob("*.npy")}


def test_tie_rules_match_pytorch(tmp_path):
    """At kinks the VJPs follow PyTorch: relu'(0) = abs'(0) = 0, max/min
    split a tie evenly, amax shares the cotangent among tied maxima."""
    torch = pytest.importorskip("torch")
    a = np.array([0.0, 1.0, 2.0, -1.0], np.float32)
    b = np.array([0.0, 1.0, 0.5, 3.0], np.float32)
    m = np.array([[2.0, 2.0, 1.0], [0.0, -1.0, -1.0]], np.float32)
    t = "tensor<4xf32>"
    text = f"""func.func @main(%a: {t} {{loom.param, loom.name = "a"}},
                %b: {t} {{loom.param, loom.name = "b"}},
                %m: tensor<2x3xf32> {{loom.param, loom.name = "m"}}) -> tensor<f32> {{
  %w = loom.constant dense<[1.0, 2.0, 3.0, 4.0]> : {t}
  %r = loom.relu %a : {t}
  %s = loom.abs %a : {t}
  %x = loom.max %a, %b : {t}
  %n = loom.min %a, %b : {t}
  %0 = loom.add %r, %s : {t}
  %1 = loom.mul %x, %w : {t}
  %2 = loom.add %0, %1 : {t}
  %3 = loom.sub %2, %n : {t}
  %4 = loom.reduce_sum %3, dims = [0] : {t} -> tensor<f32>
  %mx = loom.reduce_max %m, dims = [1] : tensor<2x3xf32> -> tensor<2xf32>
  %5 = loom.reduce_sum %mx, dims = [0] : tensor<2xf32> -> tensor<f32>
  %6 = loom.add %4, %5 : tensor<f32>
  return %6 : tensor<f32>
}}
"""
    got = run_grad(tmp_path, text, {"a": a, "b": b, "m": m})
    ta, tb, tm = (torch.tensor(v, requires_grad=True) for v in (a, b, m))
    w = torch.tensor([1.0, 2.0, 3.0, 4.0])
    loss = (torch.relu(ta) + torch.abs(ta) + torch.maximum(ta, tb) * w
            - torch.minimum(ta, tb)).sum() + torch.amax(tm, dim=1).sum()
    loss.backward()
    np.testing.assert_array_equal(got["grad.a"], ta.grad.numpy())
    np.testing.assert_array_equal(got["grad.b"], tb.grad.numpy())
    np.testing.assert_array_equal(got["grad.m"], tm.grad.numpy())

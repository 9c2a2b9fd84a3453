"""loom-run, the reference interpreter, against NumPy and PyTorch.

Each test writes a tiny loom function, random inputs as .npy files (NumPy),
runs `loom-run --output-dir`, and compares the .npy results with the same
computation in NumPy or PyTorch. Elementwise f32 arithmetic must match NumPy
bit for bit (+, -, *, / are correctly rounded in both); transcendental
functions and reductions within a few ulp; f16/bf16 results exactly where
NumPy rounds the same float32 value once.

loom-run comes from $LOOM_BUILD_DIR/bin (default: the repository's build/);
the tests are skipped when it has not been built.
"""

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("LOOM_BUILD_DIR", ROOT / "build"))
LOOM_RUN = BUILD / "bin" / "loom-run"

pytestmark = pytest.mark.skipif(not LOOM_RUN.exists(),
                                reason=f"loom-run not built in {BUILD}")

try:
    import ml_dtypes
    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - jax brings ml_dtypes
    ml_dtypes = None
    BF16 = None

ELEMENT = {np.dtype(np.float32): "f32", np.dtype(np.float16): "f16",
           np.dtype(np.int64): "i64", np.dtype(np.int32): "i32",
           np.dtype(np.bool_): "i1"}
if BF16 is not None:
    ELEMENT[BF16] = "bf16"


def ttype(shape, dtype):
    """tensor<2x3xf32> for a shape and a NumPy dtype (or element name)."""
    element = dtype if isinstance(dtype, str) else ELEMENT[np.dtype(dtype)]
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


def run_loom(tmp_path, body, inputs, results, extra=(), expect_ok=True):
    """Runs `body` (the ops of @main, ending in its return) on `inputs`
    ({name: array}); `results` is [(name, shape, dtype)]. Returns the
    results as {name: array}."""
    args = ", ".join(f"%{name}: {ttype(a.shape, a.dtype)} {{loom.name = \"{name}\"}}"
                     for name, a in inputs.items())
    outs = ", ".join(f"{ttype(shape, dtype)} {{loom.name = \"{name}\"}}"
                     for name, shape, dtype in results)
    text = f"func.func @main({args}) -> ({outs}) {{\n{body}\n}}\n"
    tmp_path.mkdir(parents=True, exist_ok=True)
    src = tmp_path / "test.mlir"
    src.write_text(text)
    cmd = [str(LOOM_RUN), str(src), "--output-dir", str(tmp_path / "out"), *extra]
    for name, array in inputs.items():
        path = tmp_path / f"in_{name}.npy"
        np.save(path, array)
        cmd += ["--input", f"{name}={path}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if not expect_ok:
        assert proc.returncode != 0, "loom-run succeeded unexpectedly"
        return proc.stderr
    assert proc.returncode == 0, f"loom-run failed:\n{text}\n{proc.stderr}"
    out = {}
    for name, shape, dtype in results:
        array = np.load(tmp_path / "out" / f"{name}.npy")
        if BF16 is not None and np.dtype(dtype) == BF16:
            array = array.view(BF16)
        assert array.shape == tuple(shape), name
        assert array.dtype == np.dtype(dtype), name
        out[name] = array
    return out


def rng(seed=0):
    return np.random.default_rng(seed)


def randn(shape, seed=0, dtype=np.float32):
    return rng(seed).standard_normal(shape).astype(dtype)


# --- elementwise ------------------------------------------------------------

UNARY = {
    "neg": (lambda t: -t, "any"),
    "abs": (torch.abs, "any"),
    "exp": (torch.exp, "any"),
    "log": (torch.log, "positive"),
    "sqrt": (torch.sqrt, "positive"),
    "rsqrt": (torch.rsqrt, "positive"),
    "tanh": (torch.tanh, "any"),
    "cos": (torch.cos, "any"),
    "sin": (torch.sin, "any"),
    "sigmoid": (torch.sigmoid, "any"),
    "erf": (torch.erf, "any"),
    "erf_inv": (torch.erfinv, "unit"),
    "relu": (torch.relu, "any"),
    "silu": (F.silu, "any"),
}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_f32(tmp_path, op):
    fn, domain = UNARY[op]
    x = randn((4, 33), seed=1) * 3
    if domain == "positive":
        x = np.abs(x) + np.float32(1e-3)
    elif domain == "unit":
        # (-1, 1), into the tails (|x| up to 1 - 2^-24), and the ends
        x = np.tanh(x).astype(np.float32)
        x[0, :3] = [1.0, -1.0, np.float32(1) - np.float32(2.0**-24)]
    t = ttype(x.shape, x.dtype)
    out = run_loom(tmp_path, f"  %y = loom.{op} %x : {t}\n  return %y : {t}",
                   {"x": x}, [("y", x.shape, np.float32)])
    want = fn(torch.from_numpy(x.astype(np.float64))).numpy().astype(np.float32)
    # loom-run computes in double and rounds once: within 1 ulp of the
    # correctly rounded value.
    np.testing.assert_allclose(out["y"], want, rtol=2e-7, atol=1e-30)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(tmp_path, approximate):
    x = randn((3, 50), seed=2) * 4
    t = ttype(x.shape, x.dtype)
    attr = "" if approximate == "none" else " approximate = tanh"
    out = run_loom(tmp_path, f"  %y = loom.gelu %x{attr} : {t}\n  return %y : {t}",
                   {"x": x}, [("y", x.shape, np.float32)])
    # In float64: PyTorch's float32 erf form loses digits to cancellation
    # for negative x, where loom-run (computing in double) does not.
    want = F.gelu(torch.from_numpy(x).double(), approximate=approximate).float().numpy()
    np.testing.assert_allclose(out["y"], want, rtol=2e-7, atol=1e-30)


BINARY_NP = {"add": np.add, "sub": np.subtract, "mul": np.multiply,
             "div": np.divide, "max": np.maximum, "min": np.minimum}


@pytest.mark.parametrize("op", sorted(BINARY_NP))
def test_binary_f32_exact(tmp_path, op):
    a, b = randn((5, 7), seed=3), randn((5, 7), seed=4)
    a[0, 0] = np.nan  # max/min propagate NaN, like np.maximum/np.minimum
    t = ttype(a.shape, a.dtype)
    out = run_loom(tmp_path, f"  %y = loom.{op} %a, %b : {t}\n  return %y : {t}",
                   {"a": a, "b": b}, [("y", a.shape, np.float32)])
    np.testing.assert_array_equal(out["y"], BINARY_NP[op](a, b))


def test_pow_f32(tmp_path):
    a = np.abs(randn((4, 9), seed=5)) + np.float32(0.1)
    b = randn((4, 9), seed=6)
    t = ttype(a.shape, a.dtype)
    out = run_loom(tmp_path, f"  %y = loom.pow %a, %b : {t}\n  return %y : {t}",
                   {"a": a, "b": b}, [("y", a.shape, np.float32)])
    want = np.power(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
    np.testing.assert_allclose(out["y"], want, rtol=2e-7)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "max", "min"])
def test_binary_int(tmp_path, op, dtype):
    g = rng(7)
    a = g.integers(-1000, 1000, (6, 5)).astype(dtype)
    b = g.integers(-50, 50, (6, 5)).astype(dtype)
    b[b == 0] = 3
    t = ttype(a.shape, a.dtype)
    out = run_loom(tmp_path, f"  %y = loom.{op} %a, %b : {t}\n  return %y : {t}",
                   {"a": a, "b": b}, [("y", a.shape, dtype)])
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    want = {"add": ta + tb, "sub": ta - tb, "mul": ta * tb,
            "div": torch.div(ta, tb, rounding_mode="trunc"),
            "max": torch.maximum(ta, tb), "min": torch.minimum(ta, tb)}[op]
    np.testing.assert_array_equal(out["y"], want.numpy())


def test_int32_wraps(tmp_path):
    a = np.array([2**31 - 1, -2**31, 65536], np.int32)
    b = np.array([1, -1, 65536], np.int32)
    t = ttype(a.shape, a.dtype)
    body = (f"  %s = loom.add %a, %b : {t}\n  %m = loom.mul %a, %b : {t}\n"
            f"  return %s, %m : {t}, {t}")
    out = run_loom(tmp_path, body, {"a": a, "b": b},
                   [("s", a.shape, np.int32), ("m", a.shape, np.int32)])
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out["s"], a + b)
        np.testing.assert_array_equal(out["m"], a * b)


@pytest.mark.parametrize("direction,fn", [("eq", np.equal), ("ne", np.not_equal),
                                          ("lt", np.less), ("le", np.less_equal),
                                          ("gt", np.greater), ("ge", np.greater_equal)])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_compare(tmp_path, direction, fn, dtype):
    g = rng(8)
    a = g.integers(-3, 3, (4, 6)).astype(dtype)
    b = g.integers(-3, 3, (4, 6)).astype(dtype)
    if dtype == np.float32:
        a[1, 1] = np.nan
        b[2, 2] = np.nan
    t = ttype(a.shape, a.dtype)
    body = (f"  %y = loom.compare {direction}, %a, %b : ({t}, {t}) -> {ttype(a.shape, 'i1')}\n"
            f"  return %y : {ttype(a.shape, 'i1')}")
    out = run_loom(tmp_path, body, {"a": a, "b": b}, [("y", a.shape, np.bool_)])
    np.testing.assert_array_equal(out["y"], fn(a, b))


def test_select(tmp_path):
    p = rng(9).integers(0, 2, (3, 4)).astype(np.bool_)
    a, b = randn((3, 4), seed=10), randn((3, 4), seed=11)
    t = ttype(a.shape, a.dtype)
    body = (f"  %y = loom.select %p, %a, %b : {ttype(p.shape, p.dtype)}, {t}\n"
            f"  return %y : {t}")
    out = run_loom(tmp_path, body, {"p": p, "a": a, "b": b}, [("y", a.shape, np.float32)])
    np.testing.assert_array_equal(out["y"], np.where(p, a, b))


CONVERSIONS = [
    (np.float32, np.float16), (np.float32, np.int32), (np.float32, np.int64),
    (np.float32, np.bool_), (np.int64, np.float32), (np.int64, np.int32),
    (np.int32, np.int64), (np.bool_, np.float32), (np.bool_, np.int32),
    (np.float16, np.float32), (np.int64, np.float16), (np.int64, np.bool_),
]


@pytest.mark.parametrize("src,dst", CONVERSIONS,
                         ids=[f"{np.dtype(s).name}-{np.dtype(d).name}" for s, d in CONVERSIONS])
def test_convert(tmp_path, src, dst):
    g = rng(12)
    if np.dtype(src).kind == "f":
        x = (g.standard_normal((5, 8)) * 1000).astype(src)
        x[0, :4] = [0.0, -0.0, 0.5, -2.5]
    elif src == np.bool_:
        x = g.integers(0, 2, (5, 8)).astype(np.bool_)
    else:
        x = g.integers(-(2**40) if src == np.int64 else -(2**31),
                       2**40 if src == np.int64 else 2**31 - 1, (5, 8)).astype(src)
        x[0, :3] = [0, 1, -1]
    body = (f"  %y = loom.convert %x : {ttype(x.shape, src)} -> {ttype(x.shape, dst)}\n"
            f"  return %y : {ttype(x.shape, dst)}")
    out = run_loom(tmp_path, body, {"x": x}, [("y", x.shape, dst)])
    if np.dtype(dst) == np.bool_:
        want = x != 0
    elif np.dtype(src).kind == "f" and np.dtype(dst).kind == "i":
        want = np.trunc(x.astype(np.float64)).astype(dst)  # in range here
    elif src == np.int64 and dst == np.float16:
        with np.errstate(over="ignore"):  # large values become inf
            want = x.astype(np.float32).astype(np.float16)  # the documented path
    else:
        with np.errstate(over="ignore"):
            want = x.astype(dst)  # int64 -> int32 keeps the low 32 bits
    np.testing.assert_array_equal(out["y"], want)


@pytest.mark.skipif(BF16 is None, reason="ml_dtypes is not installed")
def test_bf16_io_and_rounding(tmp_path):
    a = randn((4, 16), seed=13).astype(BF16)
    b = randn((4, 16), seed=14).astype(BF16)
    t = ttype(a.shape, BF16)
    body = (f"  %s = loom.add %a, %b : {t}\n  %m = loom.mul %a, %b : {t}\n"
            f"  %e = loom.exp %a : {t}\n"
            f"  %c = loom.convert %s : {t} -> {ttype(a.shape, np.float32)}\n"
            f"  return %s, %m, %e, %c : {t}, {t}, {t}, {ttype(a.shape, np.float32)}")
    out = run_loom(tmp_path, body, {"a": a, "b": b},
                   [("s", a.shape, BF16), ("m", a.shape, BF16), ("e", a.shape, BF16),
                    ("c", a.shape, np.float32)])
    fa, fb = a.astype(np.float32), b.astype(np.float32)
    # One rounding of the exact float32 result: what ml_dtypes computes.
    np.testing.assert_array_equal(out["s"], (fa + fb).astype(BF16))
    np.testing.assert_array_equal(out["m"], (fa * fb).astype(BF16))
    np.testing.assert_array_equal(out["e"], np.exp(fa.astype(np.float64)).astype(np.float32).astype(BF16))
    np.testing.assert_array_equal(out["c"], out["s"].astype(np.float32))


def test_f16_rounding(tmp_path):
    x = np.concatenate([randn((60,), seed=15) * 100,
                        np.array([65504, 65520, 1e-7, 3e-8, 2.98e-8, -1e-5, 6e-5], np.float32)])
    x = x.astype(np.float32)
    body = (f"  %y = loom.convert %x : {ttype(x.shape, np.float32)} -> {ttype(x.shape, np.float16)}\n"
            f"  return %y : {ttype(x.shape, np.float16)}")
    with np.errstate(over="ignore"):
        want = x.astype(np.float16)
    out = run_loom(tmp_path, body, {"x": x}, [("y", x.shape, np.float16)])
    np.testing.assert_array_equal(out["y"], want)


# --- normalisation and loss ---------------------------------------------------

@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("log", [False, True])
def test_softmax(tmp_path, axis, log):
    x = randn((3, 4, 5), seed=16) * 5
    x[0, 0, 0] = 80.0  # large values are fine in the stable form
    t = ttype(x.shape, x.dtype)
    op = "log_softmax" if log else "softmax"
    out = run_loom(tmp_path, f"  %y = loom.{op} %x, axis = {axis} : {t}\n  return %y : {t}",
                   {"x": x}, [("y", x.shape, np.float32)])
    fn = F.log_softmax if log else F.softmax
    want = fn(torch.from_numpy(x).double(), dim=axis).float().numpy()
    np.testing.assert_allclose(out["y"], want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("axis", [1, 2])
@pytest.mark.parametrize("affine", ["none", "scale", "both"])
def test_layer_norm(tmp_path, axis, affine):
    x = randn((2, 3, 8), seed=17) * 3 + 1
    normalized = x.shape[axis:]
    g, b = randn(normalized, seed=18), randn(normalized, seed=19)
    t = ttype(x.shape, x.dtype)
    tn = ttype(normalized, np.float32)
    inputs = {"x": x}
    operands, types = "", [t]
    if affine in ("scale", "both"):
        inputs["g"] = g
        operands += " scale %g"
        types.append(tn)
    if affine == "both":
        inputs["b"] = b
        operands += " bias %b"
        types.append(tn)
    body = (f"  %y = loom.layer_norm %x{operands} axis = {axis} epsilon = 1.0e-05"
            f" : ({', '.join(types)}) -> {t}\n  return %y : {t}")
    out = run_loom(tmp_path, body, inputs, [("y", x.shape, np.float32)])
    want = F.layer_norm(torch.from_numpy(x).double(), normalized,
                        torch.from_numpy(g).double() if affine != "none" else None,
                        torch.from_numpy(b).double() if affine == "both" else None,
                        eps=1e-5).float().numpy()
    np.testing.assert_allclose(out["y"], want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("scale", [False, True])
def test_rms_norm(tmp_path, scale):
    x = randn((4, 16), seed=20) * 2
    g = randn((16,), seed=21)
    t = ttype(x.shape, x.dtype)
    inputs = {"x": x, "g": g} if scale else {"x": x}
    operand = " scale %g" if scale else ""
    types = f"{t}, {ttype(g.shape, g.dtype)}" if scale else t
    body = (f"  %y = loom.rms_norm %x{operand} axis = 1 epsilon = 1.0e-06 : ({types}) -> {t}\n"
            f"  return %y : {t}")
    out = run_loom(tmp_path, body, inputs, [("y", x.shape, np.float32)])
    want = F.rms_norm(torch.from_numpy(x).double(), (16,),
                      torch.from_numpy(g).double() if scale else None, eps=1e-6).float().numpy()
    np.testing.assert_allclose(out["y"], want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("label_type", [np.int64, np.int32])
def test_cross_entropy(tmp_path, reduction, label_type):
    logits = randn((2, 6, 11), seed=22) * 3
    labels = rng(23).integers(0, 11, (2, 6)).astype(label_type)
    labels[0, 1] = labels[1, 4] = -100  # ignored
    rtype = ttype((2, 6) if reduction == "none" else (), np.float32)
    body = (f"  %l = loom.cross_entropy %logits, %labels reduction = {reduction} "
            f"ignore_index = -100 : ({ttype(logits.shape, logits.dtype)}, "
            f"{ttype(labels.shape, labels.dtype)}) -> {rtype}\n  return %l : {rtype}")
    shape = (2, 6) if reduction == "none" else ()
    out = run_loom(tmp_path, body, {"logits": logits, "labels": labels},
                   [("l", shape, np.float32)])
    want = F.cross_entropy(torch.from_numpy(logits).double().reshape(-1, 11),
                           torch.from_numpy(labels.astype(np.int64)).reshape(-1),
                           ignore_index=-100, reduction=reduction)
    want = want.reshape(shape).float().numpy()
    np.testing.assert_allclose(out["l"], want, rtol=1e-6, atol=1e-7)


# --- contraction --------------------------------------------------------------

DOT_CASES = [
    # (lhs shape, rhs shape, lhs batch, rhs batch, lhs contract, rhs contract, einsum)
    ((5, 7), (7, 3), [], [], [1], [0], "mk,kn->mn"),
    ((7, 5), (7, 3), [], [], [0], [0], "km,kn->mn"),
    ((2, 4, 6, 8), (2, 4, 6, 8), [0, 1], [0, 1], [3], [3], "bhsd,bhtd->bhst"),
    ((2, 4, 6, 8), (2, 4, 8, 5), [0, 1], [0, 1], [3], [2], "bhsd,bhde->bhse"),
    ((3, 2, 4), (4, 5, 2), [1], [2], [2], [0], "mbk,knb->bmn"),
    ((3, 4, 5), (5, 4, 6), [], [], [1, 2], [1, 0], "mkl,lkn->mn"),
    ((3,), (4,), [], [], [], [], "m,n->mn"),
]


@pytest.mark.parametrize("case", range(len(DOT_CASES)))
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64])
def test_dot_general(tmp_path, case, dtype):
    ls, rs, lb, rb, lc, rc, spec = DOT_CASES[case]
    if np.dtype(dtype).kind == "i":
        a = rng(24).integers(-9, 9, ls).astype(dtype)
        b = rng(25).integers(-9, 9, rs).astype(dtype)
    else:
        a, b = randn(ls, seed=24).astype(dtype), randn(rs, seed=25).astype(dtype)
    want = np.einsum(spec, a.astype(np.float64), b.astype(np.float64))
    rtype = ttype(want.shape, dtype)
    batching = f"batching_dims = {lb} x {rb}, " if lb else ""
    body = (f"  %y = loom.dot_general %a, %b, {batching}contracting_dims = {lc} x {rc}"
            f" : ({ttype(ls, dtype)}, {ttype(rs, dtype)}) -> {rtype}\n  return %y : {rtype}")
    out = run_loom(tmp_path, body, {"a": a, "b": b}, [("y", want.shape, dtype)])
    if dtype == np.float32:  # sgemm accumulates in float
        np.testing.assert_allclose(out["y"], want, rtol=1e-5, atol=1e-5)
    elif dtype == np.float16:  # exact accumulation, one rounding
        np.testing.assert_array_equal(out["y"], want.astype(np.float32).astype(np.float16))
    else:
        np.testing.assert_array_equal(out["y"], want.astype(dtype))


# --- data movement ------------------------------------------------------------

@pytest.mark.parametrize("perm", [[0, 1, 2], [2, 0, 1], [1, 2, 0], [2, 1, 0]])
def test_transpose(tmp_path, perm):
    x = randn((2, 3, 4), seed=26)
    want = np.transpose(x, perm)
    body = (f"  %y = loom.transpose %x, permutation = {perm} : {ttype(x.shape, x.dtype)}"
            f" -> {ttype(want.shape, x.dtype)}\n  return %y : {ttype(want.shape, x.dtype)}")
    out = run_loom(tmp_path, body, {"x": x}, [("y", want.shape, np.float32)])
    np.testing.assert_array_equal(out["y"], want)


def test_reshape_broadcast_iota(tmp_path):
    x = rng(27).integers(0, 100, (2, 6)).astype(np.int32)
    v = randn((3, 1), seed=28)
    body = f"""
  %r = loom.reshape %x : {ttype((2, 6), 'i32')} -> {ttype((3, 2, 2), 'i32')}
  %b = loom.broadcast %v, dims = [0, 2] : {ttype((3, 1), 'f32')} -> {ttype((3, 4, 5), 'f32')}
  %i = loom.iota dim = 1 : {ttype((2, 3), 'i64')}
  return %r, %b, %i : {ttype((3, 2, 2), 'i32')}, {ttype((3, 4, 5), 'f32')}, {ttype((2, 3), 'i64')}"""
    out = run_loom(tmp_path, body, {"x": x, "v": v},
                   [("r", (3, 2, 2), np.int32), ("b", (3, 4, 5), np.float32),
                    ("i", (2, 3), np.int64)])
    np.testing.assert_array_equal(out["r"], x.reshape(3, 2, 2))
    np.testing.assert_array_equal(out["b"], np.broadcast_to(v[:, None, :], (3, 4, 5)))
    np.testing.assert_array_equal(out["i"], np.broadcast_to(np.arange(3), (2, 3)))


def test_slice_concat_split(tmp_path):
    x = randn((5, 9), seed=29)
    y = randn((5, 2), seed=30)
    s = x[1:5:2, 0:9:3]
    body = f"""
  %s = loom.slice %x, start = [1, 0], limit = [5, 9], strides = [2, 3] : {ttype(x.shape, 'f32')} -> {ttype(s.shape, 'f32')}
  %c = loom.concat %y, %x, %y dim = 1 : ({ttype(y.shape, 'f32')}, {ttype(x.shape, 'f32')}, {ttype(y.shape, 'f32')}) -> {ttype((5, 13), 'f32')}
  %p, %q, %r = loom.split %x, dim = 1, sizes = [4, 0, 5] : {ttype(x.shape, 'f32')} -> {ttype((5, 4), 'f32')}, {ttype((5, 0), 'f32')}, {ttype((5, 5), 'f32')}
  return %s, %c, %p, %q, %r : {ttype(s.shape, 'f32')}, {ttype((5, 13), 'f32')}, {ttype((5, 4), 'f32')}, {ttype((5, 0), 'f32')}, {ttype((5, 5), 'f32')}"""
    out = run_loom(tmp_path, body, {"x": x, "y": y},
                   [("s", s.shape, np.float32), ("c", (5, 13), np.float32),
                    ("p", (5, 4), np.float32), ("q", (5, 0), np.float32),
                    ("r", (5, 5), np.float32)])
    np.testing.assert_array_equal(out["s"], s)
    np.testing.assert_array_equal(out["c"], np.concatenate([y, x, y], axis=1))
    np.testing.assert_array_equal(out["p"], x[:, :4])
    np.testing.assert_array_equal(out["r"], x[:, 4:])


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_gather(tmp_path, axis):
    data = randn((4, 5, 6), seed=31)
    idx = rng(32).integers(0, data.shape[axis], (2, 3)).astype(np.int64)
    want = np.take(data, idx, axis=axis)
    body = (f"  %y = loom.gather %d[%i], axis = {axis} : ({ttype(data.shape, 'f32')}, "
            f"{ttype(idx.shape, 'i64')}) -> {ttype(want.shape, 'f32')}\n"
            f"  return %y : {ttype(want.shape, 'f32')}")
    out = run_loom(tmp_path, body, {"d": data, "i": idx}, [("y", want.shape, np.float32)])
    np.testing.assert_array_equal(out["y"], want)


# --- reductions ---------------------------------------------------------------

@pytest.mark.parametrize("dims", [[0], [1], [2], [0, 2], [0, 1, 2], []])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("op", ["sum", "mean", "max"])
def test_reduce(tmp_path, op, dims, keepdims):
    x = randn((3, 4, 5), seed=33) * 10
    fn = {"sum": np.sum, "mean": np.mean, "max": np.max}[op]
    want = fn(x.astype(np.float64), axis=tuple(dims), keepdims=keepdims).astype(np.float32)
    kd = " keepdims" if keepdims else ""
    body = (f"  %y = loom.reduce_{op} %x, dims = {dims}{kd} : {ttype(x.shape, 'f32')}"
            f" -> {ttype(want.shape, 'f32')}\n  return %y : {ttype(want.shape, 'f32')}")
    out = run_loom(tmp_path, body, {"x": x}, [("y", want.shape, np.float32)])
    np.testing.assert_array_equal(out["y"], want)  # double accumulation, one rounding


def test_reduce_int(tmp_path):
    x = rng(34).integers(-100, 100, (4, 6)).astype(np.int32)
    body = f"""
  %s = loom.reduce_sum %x, dims = [1] : {ttype(x.shape, 'i32')} -> {ttype((4,), 'i32')}
  %m = loom.reduce_max %x, dims = [0] keepdims : {ttype(x.shape, 'i32')} -> {ttype((1, 6), 'i32')}
  return %s, %m : {ttype((4,), 'i32')}, {ttype((1, 6), 'i32')}"""
    out = run_loom(tmp_path, body, {"x": x}, [("s", (4,), np.int32), ("m", (1, 6), np.int32)])
    np.testing.assert_array_equal(out["s"], x.sum(1))
    np.testing.assert_array_equal(out["m"], x.max(0, keepdims=True))


# --- .npy input/output --------------------------------------------------------

@pytest.mark.parametrize("version", [(1, 0), (2, 0), (3, 0)])
def test_npy_versions_and_shapes(tmp_path, version):
    arrays = {"s": np.array(2.5, np.float32), "e": np.zeros((0, 3), np.float32),
              "b": rng(35).integers(0, 2, (2, 3)).astype(np.bool_),
              "i": np.arange(6, dtype=np.int32).reshape(3, 2)}
    args = ", ".join(f"%{n}: {ttype(a.shape, a.dtype)} {{loom.name = \"{n}\"}}" for n, a in arrays.items())
    types = ", ".join(ttype(a.shape, a.dtype) for a in arrays.values())
    src = tmp_path / "echo.mlir"
    src.write_text(f"func.func @main({args}) -> ({types}) {{\n"
                   f"  return {', '.join('%' + n for n in arrays)} : {types}\n}}\n")
    cmd = [str(LOOM_RUN), str(src), "--output-dir", str(tmp_path / "out")]
    for n, a in arrays.items():
        with open(tmp_path / f"{n}.npy", "wb") as f:
            np.lib.format.write_array(f, a, version=version)
        cmd += ["--input", f"{n}={tmp_path / f'{n}.npy'}"]
    subprocess.run(cmd, check=True, capture_output=True)
    for i, (n, a) in enumerate(arrays.items()):
        got = np.load(tmp_path / "out" / f"result{i}.npy")
        assert got.dtype == a.dtype and got.shape == a.shape
        np.testing.assert_array_equal(got, a)


def test_npy_non_contiguous_input_is_saved_c_order(tmp_path):
    # np.save of a Fortran-ordered array writes fortran_order True: refused
    # with the fix named.
    x = np.asfortranarray(randn((3, 4), seed=36))
    err = run_loom(tmp_path, f"  return %x : {ttype(x.shape, x.dtype)}", {"x": x},
                   [("x", x.shape, np.float32)], expect_ok=False)
    assert "Fortran order" in err and "ascontiguousarray" in err


# --- a small model end to end -------------------------------------------------

def test_mlp_loss_matches_torch(tmp_path):
    """A two-layer MLP with layer norm, GELU and a cross-entropy loss, weights
    from safetensors, against PyTorch."""
    from safetensors.numpy import save_file

    g = rng(37)
    B, D, H, C = 8, 16, 32, 10
    x = randn((B, D), seed=38)
    labels = g.integers(0, C, (B,)).astype(np.int64)
    labels[3] = -100
    w = {"fc1.weight": randn((H, D), seed=39) * 0.3, "fc1.bias": randn((H,), seed=40),
         "ln.weight": randn((H,), seed=41), "ln.bias": randn((H,), seed=42),
         "fc2.weight": randn((C, H), seed=43) * 0.3, "fc2.bias": randn((C,), seed=44)}
    save_file(w, str(tmp_path / "w.safetensors"))

    def p(name):
        return f"%{name.replace('.', '_')}: {ttype(w[name].shape, 'f32')} {{loom.name = \"{name}\", loom.param}}"
    text = f"""
func.func @main(%x: {ttype((B, D), 'f32')} {{loom.name = "x"}}, {p('fc1.weight')}, {p('fc1.bias')},
                {p('ln.weight')}, {p('ln.bias')}, {p('fc2.weight')}, {p('fc2.bias')},
                %labels: {ttype((B,), 'i64')} {{loom.name = "labels"}}) -> (tensor<f32> {{loom.name = "loss"}}) {{
  %h0 = loom.dot_general %x, %fc1_weight, contracting_dims = [1] x [1] : ({ttype((B, D), 'f32')}, {ttype((H, D), 'f32')}) -> {ttype((B, H), 'f32')}
  %b1 = loom.broadcast %fc1_bias, dims = [1] : {ttype((H,), 'f32')} -> {ttype((B, H), 'f32')}
  %h1 = loom.add %h0, %b1 : {ttype((B, H), 'f32')}
  %h2 = loom.layer_norm %h1 scale %ln_weight bias %ln_bias axis = 1 epsilon = 1.0e-05 : ({ttype((B, H), 'f32')}, {ttype((H,), 'f32')}, {ttype((H,), 'f32')}) -> {ttype((B, H), 'f32')}
  %h3 = loom.gelu %h2 : {ttype((B, H), 'f32')}
  %o0 = loom.dot_general %h3, %fc2_weight, contracting_dims = [1] x [1] : ({ttype((B, H), 'f32')}, {ttype((C, H), 'f32')}) -> {ttype((B, C), 'f32')}
  %b2 = loom.broadcast %fc2_bias, dims = [1] : {ttype((C,), 'f32')} -> {ttype((B, C), 'f32')}
  %o1 = loom.add %o0, %b2 : {ttype((B, C), 'f32')}
  %loss = loom.cross_entropy %o1, %labels ignore_index = -100 : ({ttype((B, C), 'f32')}, {ttype((B,), 'i64')}) -> tensor<f32>
  return %loss : tensor<f32>
}}
"""
    src = tmp_path / "mlp.mlir"
    src.write_text(text)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "labels.npy", labels)
    subprocess.run([str(LOOM_RUN), str(src), "--input", f"x={tmp_path / 'x.npy'}",
                    "--input", f"labels={tmp_path / 'labels.npy'}",
                    "--weights", str(tmp_path / "w.safetensors"),
                    "--output-dir", str(tmp_path / "out"), "--check-finite"],
                   check=True, capture_output=True)
    loss = np.load(tmp_path / "out" / "loss.npy")

    t = {k: torch.from_numpy(v) for k, v in w.items()}
    h = F.linear(torch.from_numpy(x), t["fc1.weight"], t["fc1.bias"])
    h = F.gelu(F.layer_norm(h, (H,), t["ln.weight"], t["ln.bias"], eps=1e-5))
    o = F.linear(h, t["fc2.weight"], t["fc2.bias"])
    want = F.cross_entropy(o, torch.from_numpy(labels), ignore_index=-100).item()
    assert abs(float(loss) - want) <= 1e-5 * abs(want), (float(loss), want)

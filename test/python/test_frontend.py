"""The Python frontend: loom.from_torch, loom.from_jax and loom.Module."""

import os
import re
import subprocess
from pathlib import Path

import pytest

import loom

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("LOOM_BUILD_DIR", ROOT / "build"))

pytestmark = pytest.mark.skipif(not (BUILD / "bin" / "loom-translate").exists(),
                                reason="loom-translate not built")


def param_args(ir):
    """{name: shape} of the loom.param arguments, read from the IR text."""
    out = {}
    for m in re.finditer(r"tensor<([0-9x]*)x?(f32|f16|bf16)> \{loom.name = \"([^\"]+)\", loom.param\}", ir):
        dims = tuple(int(d) for d in m.group(1).split("x") if d)
        out[m.group(3)] = dims
    return out


def test_from_torch_with_loss_keeps_parameter_names(tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    import torch.nn.functional as F

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    x = torch.randn(5, 8)
    labels = torch.randint(0, 3, (5,))
    m = loom.from_torch(model, (x,), loss=F.cross_entropy, loss_args=(labels,),
                        input_names=["x", "labels"], workdir=tmp_path)
    expected = {name: tuple(p.shape) for name, p in model.named_parameters()}
    assert param_args(m.ir) == expected
    assert "loom.cross_entropy" in m.ir
    assert '{loom.name = "loss"}' in m.ir
    assert Path(m.weights).exists()


def test_from_torch_weights_match_pytorch(tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    st = pytest.importorskip("safetensors.numpy")
    import numpy as np
    import sys
    sys.path.insert(0, str(Path(__file__).parent))
    from models.torch_models import gpt_example

    model, args = gpt_example()
    m = loom.from_torch(model, args, workdir=tmp_path)
    weights = st.load_file(m.weights)
    params = dict(model.named_parameters())
    assert set(weights) == set(params)
    for name, p in params.items():
        assert np.array_equal(weights[name], p.detach().numpy()), name
    # Default input names come from forward's signature.
    assert '{loom.name = "ids"}' in m.ir and '{loom.name = "labels"}' in m.ir


def test_frozen_parameters_are_not_trained(tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 1))
    m = loom.from_torch(model, (torch.randn(2, 4),), loss=lambda y: y.sum(),
                        frozen=["0\\..*"], workdir=tmp_path)
    assert set(param_args(m.ir)) == {"1.weight", "1.bias"}
    assert '{loom.name = "0.weight"}' in m.ir  # still an argument, not trained


def test_tool_errors_become_exceptions(tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    model = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.Flatten())
    with pytest.raises(loom.LoomError) as info:
        loom.from_torch(model, (torch.randn(1, 1, 5, 5),), loss=lambda y: y.sum(),
                        workdir=tmp_path)
    assert "Conv" in info.value.diagnostics
    assert info.value.tool == "loom-translate"


def test_module_run_pass_save_and_load(tmp_path):
    src = (ROOT / "examples" / "mlp.mlir").read_text()
    m = loom.Module(src)
    refined = m.run_pass(["--loom-shape-inference=arg-shapes=x=8x784,labels=8", "--canonicalize"])
    assert "tensor<8x784xf32>" in refined.ir and "?" not in refined.ir.split("{", 1)[1]
    again = m.run_pass("builtin.module(loom-shape-inference{arg-shapes=x=8x784,labels=8},canonicalize)")
    assert again.ir == refined.ir
    path = refined.save(tmp_path / "out" / "mlp.mlir")
    assert loom.Module.load(path).ir == refined.ir
    with pytest.raises(loom.LoomError) as info:
        m.run_pass(["--loom-shape-inference=arg-shapes=x=8x5"])
    assert "does not refine its declared type" in info.value.diagnostics


def _jax_param_count(params):
    import jax
    return sum(leaf.size for leaf in jax.tree_util.tree_leaves(params))


@pytest.mark.parametrize("example", ["mlp", "gpt"])
def test_from_jax_names_and_marks_parameters(example, tmp_path):
    pytest.importorskip("jax")
    import sys
    sys.path.insert(0, str(Path(__file__).parent))
    from models import jax_models

    fn = getattr(jax_models, example)
    params, x, labels = getattr(jax_models, f"{example}_example")()
    m = loom.from_jax(fn, params, x, labels, params=(0,), workdir=tmp_path)
    got = param_args(m.ir)
    # Every leaf of the params pytree is a loom.param named by its path.
    import jax
    leaves = jax.tree_util.tree_flatten_with_path(params)[0]
    assert len(got) == len(leaves)
    assert sum(int(np_prod(s)) for s in got.values()) == _jax_param_count(params)
    assert all(name.startswith("params.") for name in got)
    # The data arguments are named after fn's parameters.
    second = list(__import__("inspect").signature(fn).parameters)[1]
    assert f'{{loom.name = "{second}"}}' in m.ir
    # Nothing of StableHLO is left; the loss is a 0-d f32.
    assert "stablehlo." not in m.ir and "chlo." not in m.ir
    assert re.search(r"-> \(tensor<f32>", m.ir)
    # The module verifies and its parameter count matches.
    cost = loom.Module(m.ir).run_pass(["--loom-report-cost", "-o", os.devnull])
    assert f'"params": {_jax_param_count(params)}' in cost.ir


def np_prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def test_from_jax_reports_unsupported_ops(tmp_path):
    pytest.importorskip("jax")
    import jax.numpy as jnp

    def f(x):
        return jnp.sort(x, axis=1).sum()

    with pytest.raises(loom.LoomError) as info:
        loom.from_jax(f, jnp.ones((4, 5)), workdir=tmp_path)
    assert "'stablehlo.sort'" in info.value.diagnostics


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_from_jax_take_along_axis_and_optax_loss_match_jax(axis, tmp_path):
    """take_along_axis is a StableHLO gather with batching dimensions; optax's
    integer-label cross-entropy uses it (and is_finite, sign). loom-run of
    the import must give JAX's values."""
    jax = pytest.importorskip("jax")
    optax = pytest.importorskip("optax")
    import jax.numpy as jnp
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(axis)
    x = rng.normal(size=(3, 4, 5)).astype(np.float32)
    shape = [3, 4, 5]
    shape[axis] = 2
    idx = rng.integers(-x.shape[axis], x.shape[axis], shape).astype(np.int32)
    labels = rng.integers(0, 5, (3, 4)).astype(np.int32)

    def f(x, idx, labels):
        taken = jnp.take_along_axis(x, idx, axis=axis)
        loss = optax.softmax_cross_entropy_with_integer_labels(x, labels).mean()
        return (taken * taken).sum() + loss

    m = loom.from_jax(f, x, idx, labels, workdir=tmp_path)
    assert "stablehlo." not in m.ir and "loom.gather" in m.ir
    model = m.save(tmp_path / "m.mlir")
    for name, value in (("x", x), ("idx", idx), ("labels", labels)):
        np.save(tmp_path / f"{name}.npy", value)
    out = subprocess.run([str(BUILD / "bin" / "loom-run"), str(model), "--print",
                          *[f"--input={n}={tmp_path / n}.npy" for n in ("x", "idx", "labels")]],
                         capture_output=True, text=True, check=True).stdout
    got = float(out.split()[-1])
    np.testing.assert_allclose(got, float(jax.jit(f)(x, idx, labels)), rtol=1e-5)

    # JAX's own gradient holds take_along_axis's transpose: a scatter with
    # batching dimensions.
    g = loom.from_jax(jax.grad(f), x, idx, labels, workdir=tmp_path / "grad")
    assert "stablehlo." not in g.ir and "loom.scatter_add" in g.ir
    grad_model = g.save(tmp_path / "g.mlir")
    subprocess.run([str(BUILD / "bin" / "loom-run"), str(grad_model),
                    f"--output-dir={tmp_path / 'out'}",
                    *[f"--input={n}={tmp_path / n}.npy" for n in ("x", "idx", "labels")]],
                   capture_output=True, text=True, check=True)
    np.testing.assert_allclose(np.load(tmp_path / "out" / "result0.npy"),
                               np.asarray(jax.jit(jax.grad(f))(x, idx, labels)),
                               rtol=1e-5, atol=1e-6)


def _jax_window_cases():
    """name -> (function of x, differentiable): what JAX lowers to pad,
    reduce_window (cumulative ops, pooling, dilated pooling), multi-input reduce (argmax,
    argmin) and reduce with a multiply body, plus sine and cosine."""
    import jax
    from jax import lax
    import jax.numpy as jnp

    def scan_rows(x):
        carry, ys = lax.scan(lambda c, row: (c * 0.5 + jnp.tanh(row), c * row),
                             x[0], x[1:])
        return jnp.concatenate([carry[None], ys])
    return {
        # interior padding, negative (cutting) and positive edges
        "pad": (lambda x: lax.pad(x, 0.5, [(1, -1, 1), (-2, 3, 2)]), True),
        "cumsum": (lambda x: jnp.cumsum(x, axis=1), True),
        # a 40-wide window: the doubling path
        "cumsum_long": (lambda x: lax.cumsum(jnp.tile(x, (1, 5)), axis=1, reverse=True), True),
        "cummax": (lambda x: lax.cummax(x, axis=0), False),
        "cumprod": (lambda x: jnp.cumprod(x, axis=1), True),
        # its gradient is a select_and_scatter
        "max_pool": (lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2, 3), (1, 2), "SAME"), True),
        "sum_pool": (lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (2, 1), "VALID"), True),
        # window dilation (atrous pooling): window elements 2 and 3 apart
        "dilated_max_pool": (lambda x: lax.reduce_window(
            x, -jnp.inf, lax.max, (2, 2), (1, 1), "VALID", window_dilation=(2, 3)), False),
        # base dilation (holes of the init between input elements), window
        # dilation and padding together; its gradient is a dilated window
        # sum too
        "dilated_sum": (lambda x: lax.reduce_window(
            x, 0.0, lax.add, (3, 2), (2, 1), [(1, 0), (0, 2)], base_dilation=(2, 1),
            window_dilation=(1, 2)), True),
        # a 40-wide dilated window: the doubling path
        "dilated_long_max": (lambda x: lax.reduce_window(
            jnp.tile(x, (1, 20)), -jnp.inf, lax.max, (1, 40), (1, 3), "VALID",
            window_dilation=(1, 3)), False),
        "argmax": (lambda x: jnp.argmax(x.astype(jnp.int32), axis=1), False),  # ties
        "argmin": (lambda x: jnp.argmin(x, axis=0), False),
        "prod": (lambda x: jnp.prod(x, axis=1), True),
        "sin_cos": (lambda x: jnp.sin(x) * jnp.cos(2 * x), True),
        # while loops with constant bounds, unrolled at import: the body
        # indexes x by the counter (dynamic_slice); the gradients run the
        # loops backwards, writing by the counter (dynamic_update_slice)
        "fori_loop": (lambda x: lax.fori_loop(
            0, 4, lambda i, c: jnp.sin(c) * x[i + 1] + x[i], jnp.zeros(8)), True),
        "scan": (scan_rows, True),
        # gathers of several indexed dimensions and of partial windows
        # (with batching dimensions: vmap of dynamic_slice, the start of
        # row 5 clamped); their gradients are scatters of the same forms
        "gather_2d": (lambda x: x[jnp.array([0, 5, 2, 3, 0]), jnp.array([1, 7, 0, 4, 1])], True),
        "vmap_dynamic_slice": (lambda x: jax.vmap(lambda r, s: lax.dynamic_slice(r, (s,), (3,)))(
            x, jnp.array([0, 2, 5, 1, 4, 7])), True),
        # a scatter-add of several indexed dimensions, a duplicate index
        "scatter_add_2d": (lambda x: x.at[jnp.array([0, 0, 2]), jnp.array([1, 1, 3])].add(
            x[4, :3] * 2), True),
    }


@pytest.mark.parametrize("case", ["pad", "cumsum", "cumsum_long", "cummax", "cumprod", "max_pool",
                                  "sum_pool", "dilated_max_pool", "dilated_sum",
                                  "dilated_long_max", "argmax", "argmin", "prod", "sin_cos",
                                  "fori_loop", "scan", "gather_2d", "vmap_dynamic_slice",
                                  "scatter_add_2d"])
def test_from_jax_pad_windows_argmax_match_jax(case, tmp_path):
    """Each function imports without a stablehlo op left and loom-run gives
    JAX's values; for the differentiable ones JAX's own gradient (pads and
    reverse cumulative sums in its StableHLO) imports and matches too."""
    jax = pytest.importorskip("jax")
    np = pytest.importorskip("numpy")
    fn, differentiable = _jax_window_cases()[case]
    x = np.random.default_rng(7).normal(size=(6, 8)).astype(np.float32) * 2
    np.save(tmp_path / "x.npy", x)

    def run(f, name):
        m = loom.from_jax(f, x, workdir=tmp_path / name)
        assert "stablehlo." not in m.ir
        model = m.save(tmp_path / f"{name}.mlir")
        subprocess.run([str(BUILD / "bin" / "loom-run"), str(model),
                        f"--output-dir={tmp_path / name / 'out'}",
                        f"--input=x={tmp_path / 'x.npy'}"],
                       capture_output=True, text=True, check=True)
        return np.load(tmp_path / name / "out" / "result0.npy")

    expected = np.asarray(jax.jit(fn)(x))
    got = run(fn, "forward")
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    if differentiable:
        w = np.random.default_rng(8).normal(size=expected.shape).astype(np.float32)

        def loss(x):
            return (fn(x) * w).sum()
        grad = jax.grad(loss)
        np.testing.assert_allclose(run(grad, "grad"), np.asarray(jax.jit(grad)(x)),
                                   rtol=1e-4, atol=1e-5)


def test_from_jax_gpt_training_step_imports(tmp_path):
    jax = pytest.importorskip("jax")
    optax = pytest.importorskip("optax")
    import sys
    sys.path.insert(0, str(Path(__file__).parent))
    from models import jax_models
    params, ids, labels = jax_models.gpt_example()
    opt = optax.adamw(1e-3)
    state = opt.init(params)
    def step(params, state, ids, labels):
        loss, grads = jax.value_and_grad(jax_models.gpt)(params, ids, labels)
        updates, state = opt.update(grads, state, params)
        return loss, optax.apply_updates(params, updates), state
    m = loom.from_jax(step, params, state, ids, labels, params=(0,), workdir=tmp_path)
    assert "loom.scatter_add" in m.ir and "stablehlo." not in m.ir


def test_polymorphic_stablehlo_text_binds_the_batch(tmp_path):
    """StableHLO text of a JAX export with a symbolic batch
    (jax.export.symbolic_shape: dynamic shapes, get_dimension_size,
    dynamic_broadcast_in_dim/reshape/gather and shape assertions) imports
    with loom-translate --micro-batch N at two batch sizes, each running to
    JAX's loss (optax's integer-label cross-entropy of a two-layer MLP);
    without --micro-batch the error says how to bind the batch."""
    jax = pytest.importorskip("jax")
    optax = pytest.importorskip("optax")
    np = pytest.importorskip("numpy")
    import jax.numpy as jnp
    from jax import export

    def loss(w1, w2, x, labels):
        logits = jnp.tanh(x @ w1) @ w2
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    b, = export.symbolic_shape("b")
    f32 = jnp.float32
    exported = export.export(jax.jit(loss))(
        jax.ShapeDtypeStruct((8, 16), f32), jax.ShapeDtypeStruct((16, 4), f32),
        jax.ShapeDtypeStruct((b, 8), f32), jax.ShapeDtypeStruct((b,), jnp.int32))
    text = exported.mlir_module()
    assert "tensor<?x8xf32>" in text and "shape_assertion" in text
    source = tmp_path / "poly.mlir"
    source.write_text(text)
    translate = str(BUILD / "bin" / "loom-translate")
    names = "--arg-names=w1,w2,x,labels"

    missing = subprocess.run([translate, "--import-stablehlo", names, str(source)],
                             capture_output=True, text=True)
    assert missing.returncode != 0
    assert "JAX's dimension variable 'b'" in missing.stderr
    assert "--dim b=N or --micro-batch N" in missing.stderr

    rng = np.random.default_rng(3)
    w1 = rng.normal(size=(8, 16)).astype(np.float32)
    w2 = rng.normal(size=(16, 4)).astype(np.float32)
    np.save(tmp_path / "w1.npy", w1)
    np.save(tmp_path / "w2.npy", w2)
    for batch in (4, 8):
        x = rng.normal(size=(batch, 8)).astype(np.float32)
        labels = rng.integers(0, 4, size=(batch,)).astype(np.int32)
        np.save(tmp_path / f"x{batch}.npy", x)
        np.save(tmp_path / f"labels{batch}.npy", labels)
        model = tmp_path / f"loom{batch}.mlir"
        subprocess.run([translate, "--import-stablehlo", names, f"--micro-batch={batch}",
                        str(source), "-o", str(model)], check=True,
                       capture_output=True, text=True)
        ir = model.read_text()
        assert "stablehlo." not in ir and "tensor<?" not in ir
        assert f"tensor<{batch}x8xf32>" in ir and "loom.cross_entropy" in ir
        out = tmp_path / f"out{batch}"
        subprocess.run([str(BUILD / "bin" / "loom-run"), str(model), f"--output-dir={out}",
                        f"--input=w1={tmp_path / 'w1.npy'}", f"--input=w2={tmp_path / 'w2.npy'}",
                        f"--input=x={tmp_path / f'x{batch}.npy'}",
                        f"--input=labels={tmp_path / f'labels{batch}.npy'}"],
                       check=True, capture_output=True, text=True)
        got = np.load(out / "result0.npy")
        expected = np.asarray(exported.call(w1, w2, x, labels))
        np.testing.assert_allclose(got, expected, rtol=1e-5)


def test_polymorphic_stablehlo_binds_named_dimensions(tmp_path):
    """A JAX export polymorphic in batch and sequence (symbolic_shape('b, s'))
    imports with the sequence bound by name (--dim s=N; the batch by
    --micro-batch or --dim b=N), at two shapes, each running to JAX's loss;
    an unbound variable and an unknown name are errors that name them."""
    jax = pytest.importorskip("jax")
    np = pytest.importorskip("numpy")
    import jax.numpy as jnp
    from jax import export

    def loss(table, w, ids):
        h = jnp.tanh(table[ids])                  # (b, s, 8)
        scores = h @ w                            # (b, s, 3)
        weights = jax.nn.softmax(scores.sum(-1), axis=-1)  # over the sequence
        return (weights[..., None] * h).sum(1).mean() + (scores ** 2).mean()

    b, s = export.symbolic_shape("b, s")
    exported = export.export(jax.jit(loss))(
        jax.ShapeDtypeStruct((10, 8), jnp.float32), jax.ShapeDtypeStruct((8, 3), jnp.float32),
        jax.ShapeDtypeStruct((b, s), jnp.int32))
    source = tmp_path / "poly.mlir"
    source.write_text(exported.mlir_module())
    translate = str(BUILD / "bin" / "loom-translate")
    base = [translate, "--import-stablehlo", "--arg-names=table,w,ids", str(source)]

    def fails(*flags):
        r = subprocess.run(base + list(flags), capture_output=True, text=True)
        assert r.returncode != 0
        return r.stderr
    assert "dimension variable 's'): bind it with --dim s=N" in fails("--micro-batch=2")
    assert "no dimension variable of that name (it has b, s)" in fails("--dim", "t=4")
    assert "is not NAME=N" in fails("--dim", "s=x")

    rng = np.random.default_rng(5)
    table = rng.normal(size=(10, 8)).astype(np.float32)
    w = rng.normal(size=(8, 3)).astype(np.float32)
    np.save(tmp_path / "table.npy", table)
    np.save(tmp_path / "w.npy", w)
    for rows, seq, flags in ((2, 5, ["--micro-batch=2", "--dim=s=5"]),
                             (3, 7, ["--dim=b=3,s=7"])):
        ids = rng.integers(0, 10, size=(rows, seq)).astype(np.int32)
        np.save(tmp_path / "ids.npy", ids)
        model = tmp_path / f"loom{seq}.mlir"
        subprocess.run(base + flags + ["-o", str(model)], check=True,
                       capture_output=True, text=True)
        ir = model.read_text()
        assert "tensor<?" not in ir and f"tensor<{rows}x{seq}xi32>" in ir
        assert "dim_names" not in ir
        out = tmp_path / f"out{seq}"
        subprocess.run([str(BUILD / "bin" / "loom-run"), str(model), f"--output-dir={out}",
                        f"--input=table={tmp_path / 'table.npy'}",
                        f"--input=w={tmp_path / 'w.npy'}",
                        f"--input=ids={tmp_path / 'ids.npy'}"],
                       check=True, capture_output=True, text=True)
        got = np.load(out / "result0.npy")
        np.testing.assert_allclose(got, np.asarray(exported.call(table, w, ids)), rtol=1e-5)

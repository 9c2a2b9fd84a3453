"""The ONNX ops of HuggingFace exports that Loom imports as existing or new
loom ops (Cos/Sin, And/Or/Xor/Not, IsNaN/IsInf, Pad, GatherElements,
Sum/Mean, Mod, Trilu, CumSum; the dynamo exporter's CastLike,
SplitToSequence and SequenceAt; float64 constants folded), checked against references nobody here
wrote:

* values: the importer's test models (test/Import/onnx/Inputs/make_onnx.py)
  run by loom-run on random inputs against onnx.reference (numpy for the
  negative pads, which onnx.reference does not implement);
* ScatterElements/ScatterND with reduction max, min and mul: values against
  onnxruntime, gradients against torch's scatter_reduce(amax/amin/prod), also
  through TorchScript's export of it (Size and If on a known condition);
* training: a PyTorch module built from these ops (rotary-style cos/sin,
  F.pad constant and reflect, torch.gather, cumsum, tril, masks from
  comparisons, isnan, logical and/or) is exported as loom.from_torch
  exports (TorchScript exporter, training mode, no constant folding),
  differentiated by loom-autodiff and run by loom-run: the loss and the
  gradient must match torch autograd.
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("LOOM_BUILD_DIR", ROOT / "build"))
LOOM_TRANSLATE = BUILD / "bin" / "loom-translate"
LOOM_RUN = BUILD / "bin" / "loom-run"
MAKE_ONNX = ROOT / "test" / "Import" / "onnx" / "Inputs" / "make_onnx.py"
sys.path.insert(0, str(Path(__file__).parent))

pytestmark = pytest.mark.skipif(
    not (LOOM_TRANSLATE.exists() and LOOM_RUN.exists()),
    reason=f"loom-translate / loom-run not built in {BUILD}")
onnx = pytest.importorskip("onnx")


def rng(seed):
    return np.random.default_rng(seed)


def inputs_for(name):
    r = rng(hash(name) % 1000)
    if name == "trig_logic":
        x = (r.standard_normal((2, 3)) * 4).astype(np.float32)
        x[0, 1], x[1, 0], x[1, 2] = np.nan, np.inf, -np.inf
        return {"x": x, "a": r.random((2, 3)) < 0.5, "b": r.random(3) < 0.5}
    if name == "sum_mean_mod":
        j = r.integers(1, 7, 3) * np.array([1, -1, 1])
        return {"x": r.standard_normal((2, 3)).astype(np.float32),
                "y": r.standard_normal(3).astype(np.float32),
                "z": r.standard_normal((1, 3)).astype(np.float32),
                "i": r.integers(-20, 20, (2, 3)), "j": j.astype(np.int64)}
    if name == "pad":
        return {"x": r.standard_normal((2, 3)).astype(np.float32),
                "s": np.array(-2.5, np.float32)}
    if name == "gather_elements":
        return {"x": r.standard_normal((2, 3)).astype(np.float32),
                "j": np.array([[1, -2, -1]], np.int32)}
    if name == "trilu":
        return {"x": r.standard_normal((2, 3, 4)).astype(np.float32)}
    if name == "cumsum":
        return {"x": r.standard_normal((2, 5)).astype(np.float32),
                "n": r.integers(-50, 50, (3, 2))}
    if name == "dynamo_ops":
        return {"x": r.standard_normal((2, 6)).astype(np.float32),
                "i": r.integers(-9, 9, (2, 6))}
    if name == "float64_scale":
        return {"x": r.standard_normal((2, 3)).astype(np.float32)}
    raise KeyError(name)


def run_loom(model_path, inputs, tmp_path):
    mlir = tmp_path / "model.mlir"
    subprocess.run([str(LOOM_TRANSLATE), "--import-onnx", str(model_path),
                    "-o", str(mlir)], check=True)
    cmd = [str(LOOM_RUN), str(mlir), "--output-dir", str(tmp_path / "out")]
    for name, value in inputs.items():
        path = tmp_path / f"{name}.npy"
        np.save(path, value)
        cmd += ["--input", f"{name}={path}"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return {p.stem: np.load(p) for p in (tmp_path / "out").glob("*.npy")}


@pytest.mark.parametrize("name", ["trig_logic", "sum_mean_mod", "pad",
                                  "gather_elements", "trilu", "cumsum",
                                  "dynamo_ops", "float64_scale"])
def test_values_match_onnx_reference(name, tmp_path):
    from onnx.reference import ReferenceEvaluator
    model_path = tmp_path / f"{name}.onnx"
    subprocess.run([sys.executable, str(MAKE_ONNX), name, str(model_path)],
                   check=True)
    inputs = inputs_for(name)
    got = run_loom(model_path, inputs, tmp_path)
    model = onnx.load(str(model_path))
    expected = {}
    if name == "pad":
        # onnx.reference's Pad is numpy.pad, which refuses negative pads:
        # drop that node and compute its result here.
        x = inputs["x"]
        expected["cropped"] = np.pad(x[:, 1:], ((0, 1), (0, 0)))
        keep = [n for n in model.graph.node if n.output[0] != "cropped"]
        del model.graph.node[:]
        model.graph.node.extend(keep)
        outs = [o for o in model.graph.output if o.name != "cropped"]
        del model.graph.output[:]
        model.graph.output.extend(outs)
    ref = ReferenceEvaluator(model)
    names = [o.name for o in model.graph.output]
    expected.update(zip(names, ref.run(None, inputs)))
    assert set(got) == set(expected)
    for out, want in expected.items():
        want = np.asarray(want)
        assert got[out].dtype == want.dtype, out
        assert got[out].shape == want.shape, out
        if want.dtype.kind == "f":
            # Computed in double and rounded once: within an ulp or two.
            np.testing.assert_allclose(got[out], want, rtol=1e-6, atol=1e-6,
                                       err_msg=out)
        else:
            np.testing.assert_array_equal(got[out], want, err_msg=out)


def test_training_gradients_match_pytorch(tmp_path):
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    import loom
    from test_autodiff_parity import check, run_grad

    class HFOps(torch.nn.Module):
        def __init__(self):
            super().__init__()
            g = torch.Generator().manual_seed(0)
            self.proj = torch.nn.Parameter(torch.randn(6, 8, generator=g) * 0.5)
            self.head = torch.nn.Parameter(torch.randn(5, 7, generator=g) * 0.5)

        def forward(self, x, idx, labels):
            h = x @ self.proj                                   # [4, 8]
            # Rotary-style: angles from positions and the activations.
            pos = torch.arange(8, dtype=torch.float32)
            angles = 0.5 * h + 0.1 * pos
            rotated = torch.cat((-h[..., 4:], h[..., :4]), dim=-1)  # rotate_half
            r = h * torch.cos(angles) + rotated * torch.sin(angles)
            r = F.pad(r, (1, 2), value=0.25)                    # [4, 11]
            r = F.pad(r.unsqueeze(0), (2, 1), mode="reflect")[0]  # [4, 14]
            g = torch.gather(r, 1, idx)                         # [4, 5]
            c = torch.cumsum(g, dim=1)
            t = torch.tril(c, diagonal=1)
            keep = ((c > 0) & ~torch.isnan(c)) | (t < -1.0)
            y = torch.where(keep, t, 0.5 * c)
            logits = y @ self.head
            return F.cross_entropy(logits, labels)

    model = HFOps()
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(4, 6, generator=gen)
    idx = torch.randint(0, 14, (4, 5), generator=gen)
    labels = torch.randint(0, 7, (4,), generator=gen)
    args = (x, idx, labels)
    names = ["x", "idx", "labels"]
    m = loom.from_torch(model, args, input_names=names, workdir=tmp_path / "import")
    text = (tmp_path / "import" / "model.mlir").read_text()
    for op in ["loom.cos", "loom.sin", "loom.gather", "loom.concat",
               "loom.select", "loom.iota"]:
        assert op in text, op
    results = run_grad(m, tmp_path, {n: a.numpy() for n, a in zip(names, args)},
                       m.weights)
    model.zero_grad()
    loss = model(*args)
    loss.backward()
    grads = {name: p.grad.numpy() for name, p in model.named_parameters()}
    check(results, float(loss.detach()), grads)


@pytest.mark.parametrize("op,reduction", [("ScatterElements", "max"),
                                          ("ScatterElements", "min"),
                                          ("ScatterElements", "mul"),
                                          ("ScatterND", "max"),
                                          ("ScatterND", "min"),
                                          ("ScatterND", "mul")])
def test_scatter_max_min_match_onnxruntime(op, reduction, tmp_path):
    """ScatterElements/ScatterND with reduction max, min or mul (opset 18),
    duplicate indices included (each element keeps the largest/smallest of
    the data and every update landing on it, or their product), against
    onnxruntime."""
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper
    r = rng(3)
    data = r.standard_normal((4, 5)).astype(np.float32)
    if op == "ScatterElements":
        indices = np.array([[1, 3, 1], [0, 0, 4], [2, 2, 2], [4, 0, 4]], np.int64)
        updates = r.standard_normal(indices.shape).astype(np.float32) * 3
        node = helper.make_node(op, ["data", "indices", "updates"], ["out"],
                                axis=1, reduction=reduction)
    else:
        indices = np.array([[1], [3], [1], [0]], np.int64)  # row 1 twice
        updates = r.standard_normal((4, 5)).astype(np.float32) * 3
        node = helper.make_node(op, ["data", "indices", "updates"], ["out"],
                                reduction=reduction)
    graph = helper.make_graph(
        [node], "scatter",
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, data.shape),
         helper.make_tensor_value_info("indices", TensorProto.INT64, indices.shape),
         helper.make_tensor_value_info("updates", TensorProto.FLOAT, updates.shape)],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, data.shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    path = tmp_path / "scatter.onnx"
    onnx.save(model, str(path))
    inputs = {"data": data, "indices": indices, "updates": updates}
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]) \
        .run(None, inputs)[0]
    got = run_loom(path, inputs, tmp_path)["out"]
    np.testing.assert_array_equal(got, want)
    # Really reduced: some element took an update, some kept its data.
    assert (got != data).any() and (got == data).any()


def test_scatter_max_on_integers_is_refused_naming_the_node(tmp_path):
    from onnx import TensorProto, helper
    node = helper.make_node("ScatterElements", ["data", "indices", "updates"], ["out"],
                            axis=0, reduction="max", name="the_scatter")
    graph = helper.make_graph(
        [node], "scatter",
        [helper.make_tensor_value_info("data", TensorProto.INT64, [3]),
         helper.make_tensor_value_info("indices", TensorProto.INT64, [2]),
         helper.make_tensor_value_info("updates", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("out", TensorProto.INT64, [3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "m.onnx"))
    proc = subprocess.run([str(LOOM_TRANSLATE), "--import-onnx", str(tmp_path / "m.onnx"),
                           "-o", str(tmp_path / "m.mlir")], capture_output=True, text=True)
    assert proc.returncode != 0
    assert "the_scatter" in proc.stderr and "float data only" in proc.stderr, proc.stderr
    assert not (tmp_path / "m.mlir").exists()


@pytest.mark.parametrize("reduction", ["max", "min", "mul"])
def test_scatter_max_min_train_like_pytorch(reduction, tmp_path):
    """ScatterElements reduction max/min/mul on trained tensors (the data an
    initializer, the updates a MatMul of one): loom-autodiff's loss and
    gradients, through the dense lowering's reductions (mul: its products,
    one update after another), match torch autograd of
    scatter_reduce(amax/amin/prod, include_self=True)."""
    torch = pytest.importorskip("torch")
    import loom
    from onnx import TensorProto, helper, numpy_helper
    from test_autodiff_parity import check, run_grad
    r = rng(4)
    base = r.standard_normal((4, 6)).astype(np.float32)
    proj = r.standard_normal((5, 3)).astype(np.float32)
    x = (r.standard_normal((4, 5)) * 2).astype(np.float32)
    idx = np.array([[0, 2, 0], [5, 5, 1], [3, 4, 3], [1, 1, 1]], np.int64)
    w = r.standard_normal((4, 6)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "proj"], ["src"]),
             helper.make_node("ScatterElements", ["base", "idx", "src"], ["out"],
                              axis=1, reduction=reduction),
             helper.make_node("Mul", ["out", "w"], ["prod"]),
             helper.make_node("ReduceSum", ["prod"], ["loss"], keepdims=0)]
    graph = helper.make_graph(
        nodes, "scatter_train",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape),
         helper.make_tensor_value_info("idx", TensorProto.INT64, idx.shape),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, w.shape)],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        [numpy_helper.from_array(base, "base"), numpy_helper.from_array(proj, "proj")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "m.onnx"))
    subprocess.run([str(LOOM_TRANSLATE), "--import-onnx", str(tmp_path / "m.onnx"),
                    "--weights-out", str(tmp_path / "w.safetensors"),
                    "-o", str(tmp_path / "m.mlir")], check=True)
    m = loom.Module((tmp_path / "m.mlir").read_text(), tmp_path / "w.safetensors")
    results = run_grad(m, tmp_path, {"x": x, "idx": idx, "w": w}, m.weights)
    tb = torch.tensor(base, requires_grad=True)
    tp = torch.tensor(proj, requires_grad=True)
    src = torch.tensor(x) @ tp
    out = tb.scatter_reduce(1, torch.tensor(idx), src,
                            reduce="prod" if reduction == "mul" else "a" + reduction)
    loss = (out * torch.tensor(w)).sum()
    loss.backward()
    check(results, float(loss.detach()),
          {"base": tb.grad.numpy(), "proj": tp.grad.numpy()})


def test_torchscript_scatter_reduce_imports_through_size_and_if(tmp_path):
    """PyTorch's TorchScript export of scatter_reduce asks Size(Shape(data))
    == 0 and branches on it with If (opset 18): Size folds from the static
    shape, the If takes its known branch in place, and the model trains
    with torch autograd's loss and gradients."""
    torch = pytest.importorskip("torch")
    import loom
    from test_autodiff_parity import check, run_grad

    class Scatter(torch.nn.Module):
        def __init__(self):
            super().__init__()
            g = torch.Generator().manual_seed(2)
            self.base = torch.nn.Parameter(torch.randn(4, 6, generator=g))
            self.proj = torch.nn.Parameter(torch.randn(5, 3, generator=g))

        def forward(self, x, idx, w):
            src = x @ self.proj
            out = self.base.scatter_reduce(1, idx, src, reduce="amax")
            return (out * w).sum()

    model = Scatter()
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(4, 5, generator=gen) * 2
    idx = torch.tensor([[0, 2, 0], [5, 5, 1], [3, 4, 3], [1, 1, 1]])
    w = torch.randn(4, 6, generator=gen)
    m = loom.from_torch(model, (x, idx, w), input_names=["x", "idx", "w"],
                        workdir=tmp_path / "import", opset=18)
    exported = onnx.load(str(tmp_path / "import" / "model.onnx"))
    assert {"Size", "If"} <= {n.op_type for n in exported.graph.node}
    results = run_grad(m, tmp_path, {"x": x.numpy(), "idx": idx.numpy(), "w": w.numpy()},
                       m.weights)
    loss = model(x, idx, w)
    loss.backward()
    check(results, float(loss.detach()),
          {name: p.grad.numpy() for name, p in model.named_parameters()})


def if_model(path, then_op, then_shape, cond_nodes=(), cond_input=True):
    """y = If(c, then: then_op(x), else: Identity(x)), x of shape [2]."""
    from onnx import TensorProto, helper
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    inputs = [x]
    if cond_input:
        inputs.append(helper.make_tensor_value_info("c", TensorProto.BOOL, []))
    then_nodes = [helper.make_node(then_op, ["x"], ["t"])] if then_shape == [2] else [
        helper.make_node("ReduceSum", ["x"], ["t"], keepdims=0)]
    then_g = helper.make_graph(then_nodes, "then", [],
                               [helper.make_tensor_value_info("t", TensorProto.FLOAT,
                                                              then_shape)])
    else_g = helper.make_graph([helper.make_node("Identity", ["x"], ["e"])], "else", [],
                               [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2])])
    node = helper.make_node("If", ["c"], ["y"], name="the_if",
                            then_branch=then_g, else_branch=else_g)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    model = helper.make_model(helper.make_graph(list(cond_nodes) + [node], "g", inputs, [y]),
                              opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


@pytest.mark.parametrize("cond", [True, False])
def test_if_on_a_data_condition_selects_the_taken_branch(cond, tmp_path):
    """If on a condition computed from the data: both branches compute and
    a select picks the taken one, as onnxruntime's If does."""
    ort = pytest.importorskip("onnxruntime")
    path = if_model(tmp_path / "m.onnx", "Neg", [2])
    inputs = {"x": np.array([1.5, -2.0], np.float32), "c": np.array(cond)}
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]) \
        .run(None, inputs)[0]
    got = run_loom(path, inputs, tmp_path)["y"]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, -inputs["x"] if cond else inputs["x"])
    ir = (tmp_path / "model.mlir").read_text()
    assert "loom.select" in ir and "loom.neg" in ir, ir


@pytest.mark.parametrize("case", ["branch_types", "unsupported_in_branch"])
def test_if_errors_name_the_node(case, tmp_path):
    from onnx import TensorProto, helper
    if case == "branch_types":
        # On a data condition both branches must give one type.
        path = if_model(tmp_path / "m.onnx", "ReduceSum", [])
    else:
        cond = [helper.make_node("Constant", [], ["c"], value=helper.make_tensor(
            "c", TensorProto.BOOL, [], [True]))]
        path = if_model(tmp_path / "m.onnx", "Det", [2], cond, cond_input=False)
    proc = subprocess.run([str(LOOM_TRANSLATE), "--import-onnx", str(path),
                           "-o", str(tmp_path / "m.mlir")], capture_output=True, text=True)
    assert proc.returncode != 0
    if case == "branch_types":
        assert "the_if" in proc.stderr and "branches of one type" in proc.stderr, proc.stderr
    else:
        assert "ONNX op Det is not supported" in proc.stderr, proc.stderr
    assert not (tmp_path / "m.mlir").exists()

"""ONNX import of real PyTorch exports (test/python/models/torch_models.py).

The models are exported exactly as the Python frontend will export them
(TorchScript exporter, opset 18, training mode, no constant folding), then
imported with `loom-translate --import-onnx`. Checked: one `loom.param`
argument per PyTorch parameter, with its name and shape; the safetensors
weights hold exactly the PyTorch values; the IR verifies and its parameter
count (loom-report-cost) is the model's; the result is the 0-d f32 `loss`.

That the imported graph computes PyTorch's loss is checked once the
reference interpreter exists.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("LOOM_BUILD_DIR", ROOT / "build"))
LOOM_TRANSLATE = BUILD / "bin" / "loom-translate"
LOOM_OPT = BUILD / "bin" / "loom-opt"

pytestmark = pytest.mark.skipif(
    not LOOM_TRANSLATE.exists() or not LOOM_OPT.exists(),
    reason=f"loom-translate / loom-opt not built in {BUILD}")

# name -> (example factory, ONNX input names)
MODELS = {
    "mlp": ("mlp_example", ["x", "labels"]),
    "gpt": ("gpt_example", ["ids", "labels"]),
}

ARG = re.compile(r"%arg\d+: tensor<([^>]*)>(?: \{([^}]*)\})?")
RESULT = re.compile(r"tensor<([^>]*)>(?: \{([^}]*)\})?")
NAME = re.compile(r'loom\.name = "([^"]*)"')


def parse_type(text):
    """'3x4xf32' -> ((3, 4), 'f32'); 'f32' -> ((), 'f32')."""
    *dims, element = text.split("x")
    return tuple(int(d) for d in dims), element


def signature(ir):
    """The arguments and results of @main: lists of (name, shape, element
    type, is_param)."""
    m = re.search(r"func\.func @main\((.*?)\) -> \((.*?)\) \{\n", ir)
    assert m, "no func.func @main(...) -> (...) in the imported IR"

    def values(pattern, text):
        out = []
        for v in pattern.finditer(text):
            shape, element = parse_type(v.group(1))
            attrs = v.group(2) or ""
            name = NAME.search(attrs)
            out.append((name.group(1) if name else None, shape, element,
                        "loom.param" in attrs))
        return out

    return values(ARG, m.group(1)), values(RESULT, m.group(2))


def export_and_import(name, tmp_path):
    """Exports model `name`, imports it; returns (model, ir, weights path)."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from models import torch_models

    factory, input_names = MODELS[name]
    model, args = getattr(torch_models, factory)()
    onnx_path = tmp_path / f"{name}.onnx"
    torch.onnx.export(model, args, str(onnx_path), input_names=input_names,
                      output_names=["loss"], dynamo=False, opset_version=18,
                      do_constant_folding=False,
                      training=torch.onnx.TrainingMode.TRAINING)
    mlir_path = tmp_path / f"{name}.mlir"
    weights = tmp_path / f"{name}.safetensors"
    run = subprocess.run([str(LOOM_TRANSLATE), "--import-onnx", str(onnx_path),
                          "-o", str(mlir_path), "--weights-out", str(weights)],
                         capture_output=True, text=True)
    assert run.returncode == 0, f"loom-translate failed:\n{run.stderr}"
    # No diagnostics at all, not even warnings, for these models.
    assert run.stderr == "", run.stderr
    return model, mlir_path.read_text(), weights, mlir_path


@pytest.fixture(scope="module", params=sorted(MODELS))
def imported(request, tmp_path_factory):
    name = request.param
    model, ir, weights, mlir_path = export_and_import(
        name, tmp_path_factory.mktemp(name))
    return name, model, ir, weights, mlir_path


@pytest.mark.filterwarnings("ignore")
def test_one_param_argument_per_parameter(imported):
    _, model, ir, _, _ = imported
    args, _ = signature(ir)
    params = [(n, shape) for n, shape, element, is_param in args if is_param]
    expected = [(n, tuple(p.shape)) for n, p in model.named_parameters()]
    # Same names (each once), same shapes.
    assert sorted(params) == sorted(expected)
    assert len({n for n, _ in params}) == len(params)
    for n, shape, element, is_param in args:
        if is_param:
            assert element == "f32", f"{n} is {element}"
    # Everything that is not a parameter is a graph input of the export.
    others = [n for n, _, _, is_param in args if not is_param]
    assert others == MODELS[imported[0]][1]


@pytest.mark.filterwarnings("ignore")
def test_weights_are_the_pytorch_values(imported):
    st = pytest.importorskip("safetensors.numpy")
    import numpy as np

    _, model, _, weights, _ = imported
    tensors = st.load_file(str(weights))
    expected = {n: p.detach().cpu().numpy() for n, p in model.named_parameters()}
    assert sorted(tensors) == sorted(expected)
    for n, value in expected.items():
        assert tensors[n].dtype == value.dtype, n
        assert tensors[n].shape == value.shape, n
        assert np.array_equal(tensors[n], value), n


@pytest.mark.filterwarnings("ignore")
def test_verifies_and_counts_the_parameters(imported):
    _, model, _, _, mlir_path = imported
    verify = subprocess.run([str(LOOM_OPT), str(mlir_path), "-o", os.devnull],
                            capture_output=True, text=True)
    assert verify.returncode == 0, verify.stderr
    cost = subprocess.run([str(LOOM_OPT), str(mlir_path), "--loom-report-cost",
                           "-o", os.devnull], capture_output=True, text=True)
    assert cost.returncode == 0, cost.stderr
    report = json.loads(cost.stdout)
    (main,) = [f for f in report["functions"] if f["name"] == "main"]
    assert main["params"] == sum(p.numel() for p in model.parameters())
    assert main["unknown_cost_ops"] == 0
    assert main["flops"] > 0


@pytest.mark.filterwarnings("ignore")
def test_result_is_the_scalar_loss(imported):
    _, _, ir, _, _ = imported
    _, results = signature(ir)
    assert results == [("loss", (), "f32", False)]
    # The loss returned is PyTorch's cross-entropy (mean, ignore_index -100)
    # of [N, C] logits against [N] labels.
    loss = re.search(r"(%\d+) = loom\.cross_entropy %\S+, %\S+ ignore_index = -100 "
                     r": \(tensor<\d+x\d+xf32>, tensor<\d+xi64>\) -> tensor<f32>",
                     ir)
    assert loss, ir
    assert f"return {loss.group(1)} : tensor<f32>" in ir

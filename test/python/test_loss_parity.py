"""End-to-end numerics: imported models evaluated by loom-run give the loss
that PyTorch and JAX compute themselves (relative error below 1e-5 in f32).

The references are the frameworks' own forward passes on the same inputs and
weights; Loom's side is the whole path a user takes: loom.from_torch /
loom.from_jax (export, loom-translate), then loom-run with the inputs as .npy
and the weights as safetensors.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import loom

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("LOOM_BUILD_DIR", ROOT / "build"))
LOOM_RUN = BUILD / "bin" / "loom-run"
sys.path.insert(0, str(Path(__file__).parent))

pytestmark = pytest.mark.skipif(not LOOM_RUN.exists(), reason="loom-run not built")
np = pytest.importorskip("numpy")


def run_loss(module, workdir, inputs, weights):
    """Runs the imported module with loom-run; returns the loss it computes."""
    args = [str(LOOM_RUN), str(workdir / "model.mlir"), "--output-dir", str(workdir / "out")]
    module.save(workdir / "model.mlir")
    for name, value in inputs.items():
        path = workdir / f"{name}.npy"
        np.save(path, value)
        args += ["--input", f"{name}={path}"]
    if weights:
        args += ["--weights", str(weights)]
    subprocess.run(args, check=True, capture_output=True, text=True)
    results = sorted((workdir / "out").glob("*.npy"))
    assert len(results) == 1, results
    return float(np.load(results[0]))


@pytest.mark.parametrize("example", ["mlp_example", "gpt_example"])
def test_pytorch_loss_parity(example, tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from models import torch_models

    model, args = getattr(torch_models, example)()
    names = ["x", "labels"] if example == "mlp_example" else ["ids", "labels"]
    m = loom.from_torch(model, args, input_names=names, workdir=tmp_path / "import")
    with torch.no_grad():
        expected = float(model(*args))
    got = run_loss(m, tmp_path, {n: a.numpy() for n, a in zip(names, args)}, m.weights)
    assert got == pytest.approx(expected, rel=1e-5), (got, expected)


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("exporter", ["torchscript", "dynamo"])
def test_weighted_cross_entropy_parity(reduction, exporter, tmp_path):
    """F.cross_entropy with class weights and ignored labels (ONNX
    SoftmaxCrossEntropyLoss / NegativeLogLikelihoodLoss with weights): the
    weighted mean divides by the weights of the labels used."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    if exporter == "dynamo":
        pytest.importorskip("onnxscript")
    import torch.nn.functional as F
    torch.manual_seed(3)
    model = torch.nn.Linear(8, 5)
    weight = torch.tensor([0.5, 2.0, 1.0, 0.25, 3.0])
    x = torch.randn(12, 8)
    labels = torch.randint(0, 5, (12,))
    labels[[2, 7]] = -100

    def loss(logits, y):
        return F.cross_entropy(logits, y, weight=weight, reduction=reduction)
    m = loom.from_torch(model, (x,), loss=loss, loss_args=(labels,),
                        input_names=["x", "labels"], exporter=exporter,
                        workdir=tmp_path / "import")
    # The parameters keep their names through either exporter (the dynamo
    # one exports the loss wrapper), and the captured class weights are a
    # constant, not trained.
    import re
    assert re.findall(r'loom.name = "([^"]+)", loom.param', m.ir) == ["weight", "bias"]
    with torch.no_grad():
        expected = float(loss(model(x), labels))
    got = run_loss(m, tmp_path, {"x": x.numpy(), "labels": labels.numpy()}, m.weights)
    assert got == pytest.approx(expected, rel=1e-5), (got, expected)


@pytest.mark.parametrize("example", ["mlp", "gpt"])
def test_jax_loss_parity(example, tmp_path):
    jax = pytest.importorskip("jax")
    st = pytest.importorskip("safetensors.numpy")
    from models import jax_models

    fn = getattr(jax_models, example)
    params, x, labels = getattr(jax_models, f"{example}_example")()
    m = loom.from_jax(fn, params, x, labels, params=(0,), workdir=tmp_path / "import")
    # The weights file a user would write: one tensor per parameter leaf,
    # named like from_jax names the arguments.
    weights = {"params" + "".join(f".{getattr(k, 'key', getattr(k, 'idx', k))}" for k in path):
               np.asarray(leaf) for path, leaf in jax.tree_util.tree_flatten_with_path(params)[0]}
    st.save_file(weights, str(tmp_path / "weights.safetensors"))
    second = "x" if example == "mlp" else "ids"
    expected = float(fn(params, x, labels))
    got = run_loss(m, tmp_path, {second: np.asarray(x), "labels": np.asarray(labels)},
                   tmp_path / "weights.safetensors")
    assert got == pytest.approx(expected, rel=1e-5), (got, expected)

"""loom-autodiff against the frameworks' own gradients on whole models.

The PyTorch MLP and GPT-2-style model (models/torch_models.py) are imported
with loom.from_torch, differentiated by `loom-opt --loom-autodiff`, and
@main_grad is run by loom-run on the same inputs and weights. The loss and
every gradient (result `grad.<param name>`) must match torch autograd with a
norm-wise relative error below 1e-4. The JAX MLP and GPT
(models/jax_models.py) go through StableHLO and are compared with jax.grad.
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

RTOL = 1e-4


def relative_error(got, expected):
    """||got - expected|| / ||expected|| (absolute when expected is 0)."""
    got = np.asarray(got, np.float64)
    expected = np.asarray(expected, np.float64)
    scale = np.linalg.norm(expected)
    diff = np.linalg.norm(got - expected)
    return diff / scale if scale > 0 else diff


def run_grad(module, workdir, inputs, weights):
    """Differentiates `module` and runs @main_grad; returns its results by
    name (loss, grad.<param>)."""
    grad = module.run_pass(["--loom-autodiff"])
    grad.save(workdir / "grad.mlir")
    args = [str(LOOM_RUN), str(workdir / "grad.mlir"), "--entry", "main_grad",
            "--output-dir", str(workdir / "out")]
    for name, value in inputs.items():
        path = workdir / f"{name}.npy"
        np.save(path, value)
        args += ["--input", f"{name}={path}"]
    if weights:
        args += ["--weights", str(weights)]
    proc = subprocess.run(args, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return {p.stem: np.load(p) for p in (workdir / "out").glob("*.npy")}


def check(results, loss, grads):
    """`grads`: {param name: expected gradient}; every one must be a result
    and every gradient result must be expected."""
    assert relative_error(results["loss"], loss) < RTOL, (float(results["loss"]), loss)
    got_names = {k[len("grad."):] for k in results if k.startswith("grad.")}
    assert got_names == set(grads), sorted(got_names ^ set(grads))
    errors = {name: relative_error(results[f"grad.{name}"], expected)
              for name, expected in grads.items()}
    for name, expected in grads.items():
        assert results[f"grad.{name}"].shape == expected.shape, name
    worst = max(errors, key=errors.get)
    assert errors[worst] < RTOL, f"{worst}: relative error {errors[worst]:.3g}"


@pytest.mark.parametrize("example", ["mlp_example", "gpt_example"])
def test_pytorch_gradient_parity(example, tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from models import torch_models

    model, args = getattr(torch_models, example)()
    names = ["x", "labels"] if example == "mlp_example" else ["ids", "labels"]
    m = loom.from_torch(model, args, input_names=names, workdir=tmp_path / "import")
    results = run_grad(m, tmp_path, {n: a.numpy() for n, a in zip(names, args)}, m.weights)

    model.zero_grad()
    loss = model(*args)
    loss.backward()
    grads = {name: p.grad.numpy() for name, p in model.named_parameters()}
    check(results, float(loss.detach()), grads)


@pytest.mark.parametrize("example", ["mlp", "gpt"])
def test_jax_gradient_parity(example, tmp_path):
    jax = pytest.importorskip("jax")
    st = pytest.importorskip("safetensors.numpy")
    from models import jax_models

    fn = getattr(jax_models, example)
    params, x, labels = getattr(jax_models, f"{example}_example")()
    m = loom.from_jax(fn, params, x, labels, params=(0,), workdir=tmp_path / "import")
    # Arguments are named like from_jax names them: params.fc1.w, ...
    flat = jax.tree_util.tree_flatten_with_path(params)[0]
    key = lambda path: "params" + "".join(f".{getattr(k, 'key', getattr(k, 'idx', k))}"
                                          for k in path)
    st.save_file({key(p): np.asarray(leaf) for p, leaf in flat},
                 str(tmp_path / "weights.safetensors"))
    second = "x" if example == "mlp" else "ids"
    results = run_grad(m, tmp_path, {second: np.asarray(x), "labels": np.asarray(labels)},
                       tmp_path / "weights.safetensors")

    loss, grad_tree = jax.value_and_grad(fn)(params, x, labels)
    grads = {key(p): np.asarray(g)
             for p, g in jax.tree_util.tree_flatten_with_path(grad_tree)[0]}
    check(results, float(loss), grads)

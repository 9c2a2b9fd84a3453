"""The demo's first act: a PyTorch MLP with its loss, imported into Loom and
run by the reference interpreter, next to PyTorch's own loss.

    .venv/bin/python examples/torch_mlp.py OUTDIR
"""

import subprocess
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

import loom


def main(out: Path):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(),
                                torch.nn.Linear(128, 10))
    x = torch.randn(32, 784)
    labels = torch.randint(0, 10, (32,))

    m = loom.from_torch(model, (x,), loss=F.cross_entropy, loss_args=(labels,),
                        input_names=["x", "labels"], workdir=out / "import")
    print("imported IR (loom-translate --import-onnx of PyTorch's export):")
    print(m.ir)
    m = m.run_pass(["--loom-shape-inference", "--canonicalize", "--cse"])
    path = m.save(out / "torch_mlp.mlir")
    np.save(out / "x.npy", x.numpy())
    np.save(out / "labels.npy", labels.numpy())
    run = [str(loom.find_tool("loom-run")), str(path), "--input", f"x={out / 'x.npy'}",
           "--input", f"labels={out / 'labels.npy'}",
           "--weights", str(path.with_suffix(".safetensors")), "--output-dir", str(out / "run")]
    print("$ " + " ".join(run))
    subprocess.run(run, check=True)
    got = float(np.load(out / "run" / "loss.npy"))
    with torch.no_grad():
        expected = float(F.cross_entropy(model(x), labels))
    print(f"loss: loom-run {got:.7f}   PyTorch {expected:.7f}   "
          f"relative difference {abs(got - expected) / abs(expected):.1e}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))

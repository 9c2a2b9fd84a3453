#!/usr/bin/env python3
"""Benchmark: loom-run against onnxruntime on one forward pass (not a test).

The GPT-2-style test model (test/python/models/torch_models.py gpt_example)
is exported by PyTorch's ONNX exporter, imported with
`loom-translate --import-onnx`, and evaluated on the same inputs by

* loom-run: the wall time of the whole `loom-run` process (parse, weights,
  forward pass, writing the loss), min of --repeat runs;
* onnxruntime: in a child Python process, the wall time of
  `InferenceSession.run` (min of --repeat runs, after one warm-up run), and
  of session creation plus one run.

Prints both times, their ratio and both losses (which must agree to a
relative 1e-5, else the benchmark exits 1). Never fails on a timing.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("LOOM_BUILD_DIR", ROOT / "build"))

EXPORT = """
import sys, warnings
sys.path.insert(0, {tests!r})
import numpy as np
import torch
from models.torch_models import gpt_example
model, (ids, labels) = gpt_example()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    torch.onnx.export(model, (ids, labels), {onnx!r}, input_names=["ids", "labels"],
                      output_names=["loss"], dynamo=False, opset_version=18,
                      do_constant_folding=False,
                      training=torch.onnx.TrainingMode.TRAINING)
np.save({ids!r}, ids.numpy())
np.save({labels!r}, labels.numpy())
with torch.no_grad():
    print(float(model(ids, labels)))
"""

ORT = """
import json, time
import numpy as np
import onnxruntime as ort
feeds = {{"ids": np.load({ids!r}), "labels": np.load({labels!r})}}
start = time.perf_counter()
options = ort.SessionOptions()
session = ort.InferenceSession({onnx!r}, options, providers=["CPUExecutionProvider"])
loss = session.run(["loss"], feeds)[0]
first = time.perf_counter() - start
times = []
for _ in range({repeat}):
    start = time.perf_counter()
    session.run(["loss"], feeds)
    times.append(time.perf_counter() - start)
print(json.dumps({{"loss": float(loss), "run": min(times), "first": first,
                   "version": ort.__version__}}))
"""


def run(cmd, **kwargs):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if proc.returncode != 0:
        raise SystemExit(f"command failed: {' '.join(map(str, cmd))}\n"
                         f"{proc.stdout}{proc.stderr}")
    return proc.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    loom_run = BUILD / "bin" / "loom-run"
    loom_translate = BUILD / "bin" / "loom-translate"
    for tool in (loom_run, loom_translate):
        if not tool.exists():
            raise SystemExit(f"{tool} is not built (make build)")
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        raise SystemExit("onnxruntime is not installed (pip install -r "
                         "utils/requirements.txt into .venv)")

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        paths = dict(onnx=str(tmp / "gpt.onnx"), ids=str(tmp / "ids.npy"),
                     labels=str(tmp / "labels.npy"))
        torch_loss = float(run([sys.executable, "-c", EXPORT.format(
            tests=str(ROOT / "test" / "python"), **paths)]).strip().splitlines()[-1])
        mlir = tmp / "gpt.mlir"
        run([str(loom_translate), "--import-onnx", paths["onnx"], "-o", str(mlir)])
        weights = mlir.with_suffix(".safetensors")

        cmd = [str(loom_run), str(mlir), "--input", f"ids={paths['ids']}",
               "--input", f"labels={paths['labels']}", "--output-dir", str(tmp / "out")]
        if weights.exists():
            cmd += ["--weights", str(weights)]
        loom_times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            run(cmd)
            loom_times.append(time.perf_counter() - start)
        import numpy as np
        outs = sorted((tmp / "out").glob("*.npy"))
        if len(outs) != 1:
            raise SystemExit(f"loom-run wrote {len(outs)} results, expected the loss")
        loom_loss = float(np.load(outs[0]))

        ort = json.loads(run([sys.executable, "-c", ORT.format(repeat=args.repeat,
                                                              **paths)]))

    loom_time = min(loom_times)
    print(f"GPT-2-style test model (gpt_example), one forward pass with loss, "
          f"min of {args.repeat} runs:")
    print(f"  loom-run (whole process)          {loom_time * 1e3:9.2f} ms")
    print(f"  onnxruntime {ort['version']:8} session.run   {ort['run'] * 1e3:9.2f} ms")
    print(f"  onnxruntime session create + run  {ort['first'] * 1e3:9.2f} ms")
    print(f"  ratio loom-run / onnxruntime run  {loom_time / ort['run']:9.1f}x")
    print(f"  loss: loom-run {loom_loss:.8g}, onnxruntime {ort['loss']:.8g}, "
          f"PyTorch {torch_loss:.8g}")
    rel = abs(loom_loss - ort["loss"]) / max(abs(ort["loss"]), 1e-30)
    if rel > 1e-5:
        print(f"  LOSS MISMATCH: relative difference {rel:.3g} > 1e-5")
        return 1
    print(f"  losses agree (relative difference {rel:.2g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

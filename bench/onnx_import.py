#!/usr/bin/env python3
"""Benchmark: ONNX import speed and memory (not a test).

1. A GPT-2 small (124M parameters) exported by PyTorch's ONNX exporter with
   random weights: `loom-translate --import-onnx` wall seconds and peak RSS,
   next to `onnx.load` of the same file in Python (its own process, measured
   the same way), and the ratios (goals: at most 1.5x the time of onnx.load,
   a peak of at most 1.3x the weights' size: the importer parses the model
   without its large initializers and the kernel copies those from the
   model file into the weights file).
2. A GPT-3 175B-shaped ONNX graph whose initializers are declared but hold no
   data (external data in a file that does not exist): the import with
   `--no-weights` must take seconds.

Prints figures; never fails on a timing.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from measure import run_measured

ROOT = Path(__file__).resolve().parents[1]


def measure(cmd):
    """(seconds, peak RSS MiB) of one child process."""
    seconds, rss = run_measured(cmd)
    return seconds, rss / 2**20


EXPORT_GPT2 = """
import sys, warnings
sys.path.insert(0, {models!r})
import torch
from models.torch_models import GPT
torch.manual_seed(0)
model = GPT(vocab=50257, seq=1024, hidden=768, heads=12, layers=12)
ids = torch.randint(0, 50257, (1, 1024))
labels = torch.randint(0, 50257, (1, 1024))
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    torch.onnx.export(model, (ids, labels), {path!r}, input_names=["ids", "labels"],
                      output_names=["loss"], dynamo=False, opset_version=18,
                      do_constant_folding=False,
                      training=torch.onnx.TrainingMode.TRAINING)
print(sum(p.numel() for p in model.parameters()))
"""


def export_gpt2_small(path):
    """Exports in a child process: this process stays small, so the peak RSS
    that measure() reads for later children is theirs, not a copy of ours."""
    code = EXPORT_GPT2.format(models=str(ROOT / "test" / "python"), path=str(path))
    out = subprocess.run([sys.executable, "-c", code], check=True,
                         capture_output=True, text=True).stdout
    return int(out.strip().splitlines()[-1])


def gpt_onnx_without_data(path, layers, hidden, heads, seq, vocab, batch=1):
    """A GPT-shaped ONNX forward graph whose initializers point at a data
    file that does not exist (only --no-weights can import it)."""
    from onnx import TensorProto, helper

    inits, nodes = [], []

    def weight(name, dims):
        t = TensorProto()
        t.name = name
        t.data_type = TensorProto.FLOAT
        t.dims.extend(dims)
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", "absent-weights.bin"), ("offset", "0")):
            e = t.external_data.add()
            e.key, e.value = k, v
        inits.append(t)
        return name

    def node(op, ins, outs=None, **attrs):
        outs = outs or [f"v{len(nodes)}"]
        nodes.append(helper.make_node(op, ins, outs, name=f"n{len(nodes)}", **attrs))
        return outs[0] if len(outs) == 1 else outs

    def const_i64(values):
        return node("Constant", [], value=helper.make_tensor(
            f"c{len(nodes)}", TensorProto.INT64, [len(values)], values))

    hd = hidden // heads
    x = node("Gather", [weight("wte", [vocab, hidden]), "ids"])
    x = node("Add", [x, weight("wpe", [seq, hidden])])
    for l in range(layers):
        p = f"h{l}."
        h = node("LayerNormalization", [x, weight(p + "ln1.w", [hidden]), weight(p + "ln1.b", [hidden])], axis=-1)
        qkv = node("Add", [node("MatMul", [h, weight(p + "qkv.w", [hidden, 3 * hidden])]), weight(p + "qkv.b", [3 * hidden])])
        q, k, v = node("Split", [qkv, const_i64([hidden] * 3)], [f"split{l}_q", f"split{l}_k", f"split{l}_v"], axis=2)
        shape = const_i64([batch, seq, heads, hd])
        q, k, v = (node("Transpose", [node("Reshape", [t, shape])], perm=[0, 2, 1, 3]) for t in (q, k, v))
        s = node("MatMul", [q, node("Transpose", [k], perm=[0, 1, 3, 2])])
        a = node("MatMul", [node("Softmax", [s], axis=-1), v])
        a = node("Reshape", [node("Transpose", [a], perm=[0, 2, 1, 3]), const_i64([batch, seq, hidden])])
        x = node("Add", [x, node("Add", [node("MatMul", [a, weight(p + "proj.w", [hidden, hidden])]), weight(p + "proj.b", [hidden])])])
        h = node("LayerNormalization", [x, weight(p + "ln2.w", [hidden]), weight(p + "ln2.b", [hidden])], axis=-1)
        f = node("Gelu", [node("Add", [node("MatMul", [h, weight(p + "fc1.w", [hidden, 4 * hidden])]), weight(p + "fc1.b", [4 * hidden])])], approximate="tanh")
        x = node("Add", [x, node("Add", [node("MatMul", [f, weight(p + "fc2.w", [4 * hidden, hidden])]), weight(p + "fc2.b", [hidden])])])
    x = node("LayerNormalization", [x, weight("lnf.w", [hidden]), weight("lnf.b", [hidden])], axis=-1)
    logits = node("MatMul", [x, node("Transpose", ["wte"], perm=[1, 0])])
    node("SoftmaxCrossEntropyLoss", [node("Transpose", [logits], perm=[0, 2, 1]), "labels"], ["loss"])
    graph = helper.make_graph(
        nodes, "gpt",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [batch, seq]),
         helper.make_tensor_value_info("labels", TensorProto.INT64, [batch, seq])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", type=Path,
                        default=Path(os.environ.get("LOOM_BUILD_DIR", ROOT / "build")))
    parser.add_argument("--skip-gpt2", action="store_true",
                        help="skip the GPT-2 small export (needs torch, ~1 minute)")
    args = parser.parse_args()
    translate = args.build_dir / "bin" / "loom-translate"
    with tempfile.TemporaryDirectory(prefix="loom-bench-") as tmp:
        tmp = Path(tmp)
        if not args.skip_gpt2:
            onnx_path = tmp / "gpt2-small.onnx"
            t0 = time.perf_counter()
            params = export_gpt2_small(onnx_path)
            print(f"GPT-2 small: {params:,} parameters, exported in {time.perf_counter() - t0:.1f} s, "
                  f"{onnx_path.stat().st_size / 2**20:.0f} MiB")
            imp = min(measure([translate, "--import-onnx", onnx_path, "-o", tmp / "gpt2.mlir"])
                      for _ in range(2))
            load = min(measure([sys.executable, "-c",
                                f"import onnx; onnx.load({str(onnx_path)!r})"]) for _ in range(2))
            print(f"{'':28}{'seconds':>9}{'peak RSS MiB':>14}")
            print(f"{'loom-translate (+weights)':28}{imp[0]:9.2f}{imp[1]:14.0f}")
            print(f"{'python onnx.load':28}{load[0]:9.2f}{load[1]:14.0f}")
            weights_mib = params * 4 / 2**20
            print(f"ratio loom-translate / onnx.load: {imp[0] / load[0]:.2f}x time "
                  f"(goal <= 1.5x), {imp[1] / load[1]:.2f}x memory")
            print(f"loom-translate peak RSS / weights' size ({weights_mib:.0f} MiB): "
                  f"{imp[1] / weights_mib:.2f}x (goal <= 1.3x)")
        path = tmp / "gpt3.onnx"
        t0 = time.perf_counter()
        gpt_onnx_without_data(path, layers=96, hidden=12288, heads=96, seq=2048, vocab=50257)
        print(f"\nGPT-3 175B-shaped ONNX graph without data: generated in "
              f"{time.perf_counter() - t0:.1f} s, {path.stat().st_size / 2**10:.0f} KiB")
        sec, rss = measure([translate, "--import-onnx", path, "--no-weights", "-o", tmp / "gpt3.mlir"])
        print(f"loom-translate --no-weights: {sec:.2f} s, peak RSS {rss:.0f} MiB (goal: seconds)")


if __name__ == "__main__":
    main()

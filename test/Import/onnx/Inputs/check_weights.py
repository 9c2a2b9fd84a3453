#!/usr/bin/env python3
"""Checks a weights file against its ONNX model, bit for bit:

    check_weights.py MODEL.onnx WEIGHTS.safetensors NAME...

Each NAME must be in the weights file with the dtype, shape and bytes that
`onnx.numpy_helper.to_array` reads from the model's initializer of that
name. The safetensors file is parsed here with numpy alone (8-byte length,
JSON header, data), not by the code under test. Prints one line per tensor.
"""

import json
import struct
import sys

import numpy as np
import onnx
from onnx import numpy_helper

DTYPES = {"F32": np.float32, "F16": np.float16, "BF16": np.uint16,
          "I64": np.int64, "I32": np.int32, "BOOL": np.bool_}


def main(model_path, weights_path, names):
    model = onnx.load(model_path)
    inits = {t.name: t for t in model.graph.initializer}
    with open(weights_path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    for name in names:
        entry = header[name]
        begin, end = entry["data_offsets"]
        got = np.frombuffer(body[begin:end], DTYPES[entry["dtype"]])
        want = numpy_helper.to_array(inits[name])
        assert list(want.shape) == entry["shape"], (name, want.shape, entry)
        assert got.tobytes() == want.tobytes(), f"{name}: bytes differ"
        print(f"{name} {entry['dtype']} {entry['shape']} ok")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])

#!/usr/bin/env python3
"""Prints a safetensors file for FileCheck: dump_safetensors.py FILE

    metadata format=pt
    tensor w F32 [3, 4] = 0 0.25 0.5 ...

Tensors are listed in file order (data offset), values in row-major order
with "%g". The format is read here with numpy alone (8-byte little-endian
header length, JSON header, raw data), so that the check does not depend on
the writer under test sharing code with the reader.
"""

import json
import struct
import sys

import numpy as np

DTYPES = {"F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4",
          "BOOL": "u1", "BF16": "<u2"}


def main(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    for key, value in sorted(header.pop("__metadata__", {}).items()):
        print(f"metadata {key}={value}")
    end = 0
    for name, t in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"]):
        begin, stop = t["data_offsets"]
        assert begin == end, f"{name}: gap or overlap at byte {begin}"
        end = stop
        values = np.frombuffer(body[begin:stop], dtype=DTYPES[t["dtype"]])
        if t["dtype"] == "BF16":
            values = (values.astype(np.uint32) << 16).view(np.float32)
        assert values.size == int(np.prod(t["shape"])), name
        text = " ".join(format(v, "g") for v in values.tolist())
        print(f"tensor {name} {t['dtype']} {t['shape']} = {text}")
    assert end == len(body), f"{len(body) - end} trailing bytes"


if __name__ == "__main__":
    main(sys.argv[1])

"""Writes a small safetensors file with the standard library only.

    write_safetensors.py OUT NAME:DTYPE:SHAPE:VALUES ...

DTYPE is F32, F16, BF16, I64, I32 or BOOL; SHAPE is like 3x2 (empty for a
scalar); VALUES is a comma list in row-major order. Example:
    write_safetensors.py w.safetensors fc.weight:F32:3x2:1,0,0,1,1,1
"""

import json
import struct
import sys


def encode(dtype, values):
    if dtype == "BF16":  # the top half of the float32 (values here are exact)
        return b"".join(struct.pack("<I", struct.unpack("<I", struct.pack("<f", v))[0])[2:]
                        for v in map(float, values))
    fmt = {"F32": "<f", "F16": "<e", "I64": "<q", "I32": "<i", "BOOL": "<?"}[dtype]
    cast = float if dtype.startswith("F") else int
    return b"".join(struct.pack(fmt, cast(v)) for v in values)


def main():
    out, specs = sys.argv[1], sys.argv[2:]
    header, data = {}, b""
    for spec in specs:
        name, dtype, shape, values = spec.split(":")
        dims = [int(d) for d in shape.split("x")] if shape else []
        blob = encode(dtype, values.split(",") if values else [])
        header[name] = {"dtype": dtype, "shape": dims,
                        "data_offsets": [len(data), len(data) + len(blob)]}
        data += blob
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(out, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


if __name__ == "__main__":
    main()

"""Inputs and result comparison of the loom-tensor-parallel equivalence test.

    tensor_parallel.py make DIR MODEL.mlir [--classes N] [--ignore-index I]
        Writes DIR/weights.safetensors (random values for every `loom.param`
        argument of MODEL's first function, by `loom.name`) and DIR/<name>.npy
        for each other argument: floats from a normal distribution, integers
        (token ids, labels; i32 or i64 as the argument) below N, by default
        the vocabulary (read from the `wte` parameter); with --ignore-index
        I, every third label is I.

    tensor_parallel.py slice DIR TP_MODEL.mlir
        For every argument of TP_MODEL with `loom.shard = #loom.shard<dim =
        D, parts = T[, groups = G][, padded = P]>`, writes rank r's slice of
        the full weight to DIR/<parts>/<name>.<r>.npy and the loom-run options that pass them,
        `--input <name>@<r>=<file>`, to the response file DIR/<parts>.rsp.
        The slicing follows the attribute only: rank r holds, of each of the
        `groups` equal blocks of dimension `dim` (zero-extended to `padded`
        rows when given), part r of `parts`.

    tensor_parallel.py compare REF TP_MODEL.mlir RANK_DIR [RANK_DIR ...]
        Compares every REF/<name>.npy with each rank's <name>.npy: the
        gradient `grad.<p>` of a sliced parameter p against the rank's slice
        of the reference gradient, any other result as is. Prints the largest
        differences, then 'equivalent: yes' (exit 0) or 'equivalent: no'
        (exit 1).
"""

import argparse
import pathlib
import re
import sys

import numpy as np
from safetensors.numpy import load_file, save_file

ARG = re.compile(r"%[\w.]+: tensor<([^>]*)> \{((?:[^{}]|\{[^{}]*\})*)\}")
NAME = re.compile(r'loom\.name = "([^"]*)"')
SHARD = re.compile(r"loom\.shard = #loom\.shard<([^<>]*)>")


def arguments(path):
    """(name, shape, is_param, shard dict or None) of each argument of the
    first function (comment lines are skipped)."""
    text = pathlib.Path(path).read_text()
    signature = text[re.search(r"^\s*func\.func (?:\w+ )?@", text, re.M).start():]
    signature = signature[:signature.index("->")]
    result = []
    for match in ARG.finditer(signature):
        dims = match.group(1).split("x")[:-1]
        attrs = match.group(2)
        name = NAME.search(attrs).group(1)
        shard = SHARD.search(attrs)
        fields = None
        if shard:
            fields = {k.strip(): int(v)
                      for k, v in (f.split("=") for f in
                                   shard.group(1).split(","))}
        result.append((name, [int(d) for d in dims],
                       "loom.param" in attrs, fields))
    return result


def element_types(path):
    """The element type (`f32`, `i32`, ...) of each argument of the first
    function, by `loom.name`."""
    text = pathlib.Path(path).read_text()
    signature = text[re.search(r"^\s*func\.func (?:\w+ )?@", text, re.M).start():]
    signature = signature[:signature.index("->")]
    return {NAME.search(m.group(2)).group(1): m.group(1).split("x")[-1]
            for m in ARG.finditer(signature)}


def take(array, shard, rank):
    """Rank `rank`'s slice of `array` under the fields of a #loom.shard (with
    `padded`, dimension `dim` is first extended with zeros to that size)."""
    dim, parts = shard["dim"], shard["parts"]
    if "padded" in shard:
        pad = [(0, 0)] * array.ndim
        pad[dim] = (0, shard["padded"] - array.shape[dim])
        array = np.pad(array, pad)
    blocks = np.split(array, shard.get("groups", 1), axis=dim)
    return np.concatenate([np.split(b, parts, axis=dim)[rank]
                           for b in blocks], axis=dim)


def make(args):
    out = pathlib.Path(args.dir)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(11)
    params, shapes = {}, {}
    for name, shape, param, _ in arguments(args.model):
        shapes[name] = shape
        if param:
            scale = 1.0 if name.endswith("ln_1.weight") or \
                name.endswith("ln_2.weight") or name == "ln_f.weight" else 0.3
            params[name] = rng.standard_normal(shape) * scale
    save_file({k: np.ascontiguousarray(v, dtype=np.float32) for k, v in params.items()},
              str(out / "weights.safetensors"))
    for name, element in element_types(args.model).items():
        if name in params:
            continue
        if element.startswith("f"):
            value = rng.standard_normal(shapes[name]).astype(np.float32)
        else:
            classes = args.classes or next(
                shape[0] for name, shape in shapes.items()
                if name in ("wte.weight", "params.wte"))
            value = rng.integers(0, classes, shapes[name]).astype(
                {"i32": np.int32, "i64": np.int64}[element])
            if name == "labels" and args.ignore_index is not None:
                value.reshape(-1)[::3] = args.ignore_index
        np.save(out / f"{name}.npy", value)


def slice_weights(args):
    out = pathlib.Path(args.dir)
    weights = load_file(str(out / "weights.safetensors"))
    options, parts = [], None
    for name, _, _, shard in arguments(args.model):
        if not shard:
            continue
        parts = shard["parts"]
        (out / str(parts)).mkdir(exist_ok=True)
        for rank in range(parts):
            path = out / str(parts) / f"{name}.{rank}.npy"
            np.save(path, take(weights[name], shard, rank).astype(np.float32))
            options.append(f"--input {name}@{rank}={path}")
    if parts is None:
        sys.exit("error: no argument has loom.shard")
    (out / f"{parts}.rsp").write_text("\n".join(options) + "\n")


def compare(args):
    shards = {f"grad.{name}": shard
              for name, _, _, shard in arguments(args.model) if shard}
    ref_dir = pathlib.Path(args.ref)
    names = sorted(p.name[:-4] for p in ref_dir.glob("*.npy"))
    ok = bool(names)
    for name in names:
        ref = np.load(ref_dir / f"{name}.npy").astype(np.float64)
        worst = 0.0
        for rank, rank_dir in enumerate(map(pathlib.Path, args.ranks)):
            path = rank_dir / f"{name}.npy"
            if not path.exists():
                print(f"{path}: missing")
                ok = False
                continue
            want = take(ref, shards[name], rank) if name in shards else ref
            got = np.load(path).astype(np.float64)
            if got.shape != want.shape:
                print(f"{path}: shape {got.shape}, expected {want.shape}")
                ok = False
                continue
            diff = np.abs(got - want)
            worst = max(worst, float(diff.max(initial=0.0)))
            ok &= bool(np.all(diff <= args.tol + args.tol * np.abs(want)))
        kind = "sliced" if name in shards else "full"
        print(f"{name} ({kind}): max abs diff {worst:.3g}")
    print(f"equivalent: {'yes' if ok else 'no'} (tolerance {args.tol:g}, "
          f"{len(args.ranks)} ranks)")
    return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("make")
    p.add_argument("dir")
    p.add_argument("model")
    p.add_argument("--classes", type=int, default=0)
    p.add_argument("--ignore-index", type=int, default=None)
    p = sub.add_parser("slice")
    p.add_argument("dir")
    p.add_argument("model")
    p = sub.add_parser("compare")
    p.add_argument("ref")
    p.add_argument("model")
    p.add_argument("ranks", nargs="+")
    p.add_argument("--tol", type=float, default=1e-5)
    args = parser.parse_args()
    if args.command == "make":
        make(args)
    elif args.command == "slice":
        slice_weights(args)
    else:
        return compare(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())

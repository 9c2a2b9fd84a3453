"""Inputs and result comparison of the loom-pipeline-schedule equivalence test.

The model (loom-pipeline-schedule-equivalence.mlir) has two residual MLP
blocks: w1, w3 [8, 16] (column-parallel under tp: cut along dim 1) and
w2, w4 [16, 8] (row-parallel: cut along dim 0).

    pipeline_parallel.py make DIR --rows N --dp D [D ...] --tp T [T ...]
        Writes DIR/weights.safetensors, the full batch DIR/x.npy, DIR/y.npy
        (N rows), for each D the rows of data-parallel rank d in
        DIR/x.dp<D>.<d>.npy, DIR/y.dp<D>.<d>.npy, and for each T the slice of
        tensor-parallel rank t of each weight in DIR/<w>.tp<T>.<t>.npy.

    pipeline_parallel.py compare REF --mesh D,P,T RANK_DIR ... [--rtol R]
        RANK_DIR r is world rank r = (d*P + p)*T + t. Every rank of the last
        stage (p = P-1) must return REF's loss; every gradient a rank returns
        must equal REF's (its tensor-parallel slice when T > 1), and every
        gradient of REF must come from some rank. Prints the largest
        differences, then 'equivalent: yes' (exit 0) or 'equivalent: no'.
"""

import argparse
import pathlib
import sys

import numpy as np
from safetensors.numpy import save_file

SHAPES = {"w1": (8, 16), "w2": (16, 8), "w3": (8, 16), "w4": (16, 8)}
CUT = {"w1": 1, "w2": 0, "w3": 1, "w4": 0}


def tp_slice(array, name, t, tp):
    dim = CUT[name]
    part = array.shape[dim] // tp
    index = [slice(None)] * array.ndim
    index[dim] = slice(t * part, (t + 1) * part)
    return array[tuple(index)]


def make(args):
    out = pathlib.Path(args.dir)
    rng = np.random.default_rng(11)
    weights = {k: (rng.standard_normal(s) * 0.4).astype(np.float32)
               for k, s in SHAPES.items()}
    save_file(weights, str(out / "weights.safetensors"))
    x = rng.standard_normal((args.rows, 8)).astype(np.float32)
    y = rng.standard_normal((args.rows, 8)).astype(np.float32)
    np.save(out / "x.npy", x)
    np.save(out / "y.npy", y)
    for dp in args.dp:
        if args.rows % dp:
            sys.exit(f"error: {args.rows} rows do not split over {dp} ranks")
        rows = args.rows // dp
        for d in range(dp):
            np.save(out / f"x.dp{dp}.{d}.npy", x[d * rows:(d + 1) * rows])
            np.save(out / f"y.dp{dp}.{d}.npy", y[d * rows:(d + 1) * rows])
    for tp in args.tp:
        for t in range(tp):
            for name, w in weights.items():
                np.save(out / f"{name}.tp{tp}.{t}.npy", tp_slice(w, name, t, tp))


def compare(args):
    dp, pp, tp = map(int, args.mesh.split(","))
    ranks = [pathlib.Path(d) for d in args.ranks]
    if len(ranks) != dp * pp * tp:
        sys.exit(f"error: {len(ranks)} rank directories for a mesh of {dp * pp * tp}")
    ref_dir = pathlib.Path(args.ref)
    ok = True
    found = set()
    worst = {}

    def check(name, got, ref):
        nonlocal ok
        if got.shape != ref.shape:
            print(f"{name}: shape {got.shape}, expected {ref.shape}")
            ok = False
            return
        err = np.abs(got.astype(np.float64) - ref.astype(np.float64))
        worst[name] = max(worst.get(name, 0.0), float(err.max(initial=0.0)))
        if not np.all(err <= args.rtol + args.rtol * np.abs(ref)):
            ok = False

    for r, rank_dir in enumerate(ranks):
        p, t = (r // tp) % pp, r % tp
        if p == pp - 1:
            check("loss", np.load(rank_dir / "loss.npy"), np.load(ref_dir / "loss.npy"))
        for path in sorted(rank_dir.glob("grad.*.npy")):
            name = path.name[len("grad."):-len(".npy")]
            ref = np.load(ref_dir / path.name)
            if tp > 1:
                ref = tp_slice(ref, name, t, tp)
            check(path.name[:-4], np.load(path), ref)
            found.add(path.name)
    missing = sorted({p.name for p in ref_dir.glob("grad.*.npy")} - found)
    if missing:
        print(f"gradients no rank returned: {missing}")
        ok = False
    for name in sorted(worst):
        print(f"{name}: max abs diff {worst[name]:.3g}")
    print(f"equivalent: {'yes' if ok else 'no'}")
    return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("make")
    m.add_argument("dir")
    m.add_argument("--rows", type=int, required=True)
    m.add_argument("--dp", type=int, nargs="+", default=[1])
    m.add_argument("--tp", type=int, nargs="+", default=[1])
    c = sub.add_parser("compare")
    c.add_argument("ref")
    c.add_argument("--mesh", required=True)
    c.add_argument("ranks", nargs="+")
    c.add_argument("--rtol", type=float, default=2e-6)
    args = parser.parse_args()
    if args.command == "make":
        make(args)
        return 0
    return compare(args)


if __name__ == "__main__":
    sys.exit(main())

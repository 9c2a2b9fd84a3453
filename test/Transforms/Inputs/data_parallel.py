"""Inputs and result comparison of the loom-data-parallel equivalence test.

    data_parallel.py make DIR --rows N --ranks D [D ...]
        Writes DIR/weights.safetensors (the MLP's parameters), the full batch
        DIR/x.npy, DIR/labels.npy (N rows) and, for each D, the rows of rank
        r in DIR/x.D.r.npy, DIR/labels.D.r.npy (rows [r*N/D, (r+1)*N/D)).

    data_parallel.py compare REF RANK_DIR [RANK_DIR ...] [--rtol T]
        Compares every REF/<name>.npy with <name>.npy of each rank directory:
        prints the largest difference per result, then 'equivalent: yes' when
        |rank - ref| <= T + T * |ref| everywhere (exit 0), else
        'equivalent: no' (exit 1). A result missing from a rank, or a rank
        with other results, is not equivalent.
"""

import argparse
import pathlib
import sys

import numpy as np
from safetensors.numpy import save_file

FEATURES, HIDDEN, CLASSES = 8, 16, 4


def make(args):
    out = pathlib.Path(args.dir)
    rng = np.random.default_rng(7)
    params = {
        "fc1.weight": rng.standard_normal((FEATURES, HIDDEN)) * 0.5,
        "fc1.bias": rng.standard_normal(HIDDEN) * 0.1,
        "fc2.weight": rng.standard_normal((HIDDEN, CLASSES)) * 0.5,
        "fc2.bias": rng.standard_normal(CLASSES) * 0.1,
    }
    save_file({k: np.ascontiguousarray(v, dtype=np.float32) for k, v in params.items()},
              str(out / "weights.safetensors"))
    x = rng.standard_normal((args.rows, FEATURES)).astype(np.float32)
    labels = rng.integers(0, CLASSES, args.rows).astype(np.int64)
    np.save(out / "x.npy", x)
    np.save(out / "labels.npy", labels)
    for ranks in args.ranks:
        if args.rows % ranks:
            sys.exit(f"error: {args.rows} rows do not split over {ranks} ranks")
        rows = args.rows // ranks
        for r in range(ranks):
            np.save(out / f"x.{ranks}.{r}.npy", x[r * rows:(r + 1) * rows])
            np.save(out / f"labels.{ranks}.{r}.npy",
                    labels[r * rows:(r + 1) * rows])


def compare(args):
    ref_dir = pathlib.Path(args.ref)
    names = sorted(p.name for p in ref_dir.glob("*.npy"))
    ok = bool(names)
    for rank_dir in map(pathlib.Path, args.ranks):
        extra = sorted({p.name for p in rank_dir.glob("*.npy")} - set(names))
        if extra:
            print(f"{rank_dir}: results not in the reference: {extra}")
            ok = False
    for name in names:
        ref = np.load(ref_dir / name).astype(np.float64)
        worst_abs = worst_rel = 0.0
        for rank_dir in map(pathlib.Path, args.ranks):
            path = rank_dir / name
            if not path.exists():
                print(f"{path}: missing")
                ok = False
                continue
            got = np.load(path).astype(np.float64)
            if got.shape != ref.shape:
                print(f"{path}: shape {got.shape}, reference {ref.shape}")
                ok = False
                continue
            diff = np.abs(got - ref)
            worst_abs = max(worst_abs, float(diff.max(initial=0.0)))
            worst_rel = max(worst_rel, float(
                (diff / np.maximum(np.abs(ref), 1e-30)).max(initial=0.0)))
            ok &= bool(np.all(diff <= args.rtol + args.rtol * np.abs(ref)))
        print(f"{name[:-4]}: max abs diff {worst_abs:.3g}, "
              f"max rel diff {worst_rel:.3g}")
    print(f"equivalent: {'yes' if ok else 'no'} (tolerance {args.rtol:g}, "
          f"{len(args.ranks)} ranks)")
    return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("make")
    p.add_argument("dir")
    p.add_argument("--rows", type=int, required=True)
    p.add_argument("--ranks", type=int, nargs="+", required=True)
    p = sub.add_parser("compare")
    p.add_argument("ref")
    p.add_argument("ranks", nargs="+")
    p.add_argument("--rtol", type=float, default=1e-6)
    args = parser.parse_args()
    if args.command == "make":
        make(args)
        return 0
    return compare(args)


if __name__ == "__main__":
    sys.exit(main())

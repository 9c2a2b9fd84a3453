#!/usr/bin/env python3
"""Benchmark: does a started all-reduce progress during compute? (not a test)

Two virtual hosts (`python -m loom.vcluster`, root), one rank each, over a
throttled link (--link, default 100mbit). Each rank runs a compute block
of C ms (a float loop, no MPI calls) and an all-reduce of --mib MiB taking
M s alone; then the all-reduce is started before the block and waited for
after it (build/test/Runtime/loom-test-comm-bench). Prints the measured
step time against C + M (no overlap) and max(C, M) (perfect overlap);
goal: within 10 % of max(C, M). Never fails on a figure.
"""

import argparse

from measure import require_vcluster, run_comm_bench


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--link", default="100mbit")
    parser.add_argument("--mib", type=int, default=4)
    parser.add_argument("--compute-ms", type=int, default=0,
                        help="C (default: about M, measured first)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    require_vcluster("overlap_progress")

    def run(ms):
        return run_comm_bench("overlap_progress", "overlap", args.link,
                              bytes=args.mib << 20, compute_ms=ms, repeat=args.repeat)

    ms = args.compute_ms
    if ms <= 0:  # match C to M
        ms = max(10, int(run(10)["comm_s"] * 1000))
    r = run(ms)
    c, m, both = r["compute_s"], r["comm_s"], r["both_s"]
    print(f"link {args.link}, all-reduce of {args.mib} MiB over 2 hosts")
    print(f"  compute alone C = {c * 1e3:8.1f} ms")
    print(f"  all-reduce alone M = {m * 1e3:8.1f} ms")
    print(f"  both, overlapped   = {both * 1e3:8.1f} ms")
    print(f"  C + M (no overlap) = {(c + m) * 1e3:8.1f} ms   ratio {both / (c + m):.2f}")
    print(f"  max(C, M) (ideal)  = {max(c, m) * 1e3:8.1f} ms   ratio {both / max(c, m):.2f}"
          f"  (goal <= 1.10)")


if __name__ == "__main__":
    main()

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
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
BUILD = Path(os.environ.get("LOOM_BUILD_DIR", ROOT / "build"))
BENCH = BUILD / "test" / "Runtime" / "loom-test-comm-bench"


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--link", default="100mbit")
    parser.add_argument("--mib", type=int, default=4)
    parser.add_argument("--compute-ms", type=int, default=0,
                        help="C (default: about M, measured first)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from loom import vcluster
    reason = vcluster.check()
    if reason:
        sys.exit(f"overlap_progress: {reason}")
    if not BENCH.exists():
        sys.exit(f"overlap_progress: {BENCH} is not built (make build)")

    def run(ms):
        env = dict(os.environ, LOOM_BENCH="overlap", LOOM_BENCH_BYTES=str(args.mib << 20),
                   LOOM_BENCH_COMPUTE_MS=str(ms), LOOM_BENCH_REPEAT=str(args.repeat),
                   PYTHONPATH=os.pathsep.join([str(ROOT / "python"),
                                               os.environ.get("PYTHONPATH", "")]))
        proc = subprocess.run(
            [sys.executable, "-m", "loom.vcluster", "--name", "bench", "run", "--hosts", "2",
             "--link", args.link, "--", str(BENCH), "--data", "/tmp", "--steps", "1",
             "--quiet", "--comm-timeout", "600"],
            capture_output=True, text=True, env=env, timeout=1800)
        if proc.returncode != 0:
            sys.exit(f"overlap_progress: the run failed:\n{proc.stderr}")
        return json.loads(next(l for l in proc.stdout.splitlines() if l.startswith("{")))

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

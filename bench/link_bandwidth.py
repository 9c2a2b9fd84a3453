#!/usr/bin/env python3
"""Benchmark: bandwidth Loom's runtime reaches over vcluster links (not a test).

Two virtual hosts (`python -m loom.vcluster`, root), one rank each, joined
by links of each --rates rate. For each message size, rank 0 sends to
rank 1 and both all-reduce the same bytes, through the runtime
(sendStart/recvStart/allReduceStart + wait, driven by its communication
thread) and through a plain blocking MPI loop in the same run
(build/test/Runtime/loom-test-comm-bench). Prints achieved bandwidth,
its ratio to the configured rate (goal >= 0.8 for messages >= 4 MiB; an
all-reduce of 2 ranks moves each byte once each way, so its ratio uses the
same bytes) and the runtime / MPI ratio. Never fails on a figure.
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


def run(rate, nbytes, repeat):
    from loom import vcluster
    env = dict(os.environ, LOOM_BENCH="bandwidth", LOOM_BENCH_BYTES=str(nbytes),
               LOOM_BENCH_REPEAT=str(repeat),
               PYTHONPATH=os.pathsep.join([str(ROOT / "python"), os.environ.get("PYTHONPATH", "")]))
    cmd = [sys.executable, "-m", "loom.vcluster", "--name", "bench", "run", "--hosts", "2"]
    if rate:
        cmd += ["--link", rate]
    cmd += ["--", str(BENCH), "--data", "/tmp", "--steps", "1", "--quiet",
            "--comm-timeout", "600"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    if proc.returncode != 0:
        sys.exit(f"link_bandwidth: the run failed:\n{proc.stderr}")
    return json.loads(next(l for l in proc.stdout.splitlines() if l.startswith("{")))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rates", default="100mbit,1gbit")
    parser.add_argument("--sizes-mib", default="1,4,16")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from loom import vcluster
    reason = vcluster.check()
    if reason:
        sys.exit(f"link_bandwidth: {reason}")
    if not BENCH.exists():
        sys.exit(f"link_bandwidth: {BENCH} is not built (make build)")
    print(f"{'link':>8} {'MiB':>4} {'send Mbit/s':>12} {'vs link':>8} {'MPI send':>9} "
          f"{'rt/MPI':>7} {'allreduce Mbit/s':>17} {'vs link':>8} {'rt/MPI':>7}")
    for rate in args.rates.split(","):
        bits = vcluster.parse_rate(rate)
        for mib in (int(m) for m in args.sizes_mib.split(",")):
            r = run(rate, mib << 20, args.repeat)
            mbit = lambda s: r["bytes"] * 8 / s / 1e6
            send, mpi_send = mbit(r["send_runtime_s"]), mbit(r["send_mpi_s"])
            ar, mpi_ar = mbit(r["allreduce_runtime_s"]), mbit(r["allreduce_mpi_s"])
            print(f"{rate:>8} {mib:>4} {send:>12.1f} {send * 1e6 / bits:>8.2f} "
                  f"{mpi_send:>9.1f} {send / mpi_send:>7.2f} {ar:>17.1f} "
                  f"{ar * 1e6 / bits:>8.2f} {ar / mpi_ar:>7.2f}", flush=True)


if __name__ == "__main__":
    main()

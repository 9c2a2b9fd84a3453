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
import sys

from measure import require_vcluster, run_comm_bench


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rates", default="100mbit,1gbit")
    parser.add_argument("--sizes-mib", default="1,4,16")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    require_vcluster("link_bandwidth")
    from loom import vcluster
    print(f"{'link':>8} {'MiB':>4} {'send Mbit/s':>12} {'vs link':>8} {'MPI send':>9} "
          f"{'rt/MPI':>7} {'allreduce Mbit/s':>17} {'vs link':>8} {'rt/MPI':>7}")
    for rate in args.rates.split(","):
        bits = vcluster.parse_rate(rate)
        for mib in (int(m) for m in args.sizes_mib.split(",")):
            r = run_comm_bench("link_bandwidth", "bandwidth", rate, bytes=mib << 20,
                               repeat=args.repeat)
            mbit = lambda s: r["bytes"] * 8 / s / 1e6
            send, mpi_send = mbit(r["send_runtime_s"]), mbit(r["send_mpi_s"])
            ar, mpi_ar = mbit(r["allreduce_runtime_s"]), mbit(r["allreduce_mpi_s"])
            print(f"{rate:>8} {mib:>4} {send:>12.1f} {send * 1e6 / bits:>8.2f} "
                  f"{mpi_send:>9.1f} {send / mpi_send:>7.2f} {ar:>17.1f} "
                  f"{ar * 1e6 / bits:>8.2f} {ar / mpi_ar:>7.2f}", flush=True)


if __name__ == "__main__":
    main()

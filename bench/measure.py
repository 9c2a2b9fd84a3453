"""Shared by the benchmarks: wall time and peak RSS of one child process.

The peak RSS comes from wait4's rusage of that child alone (not
RUSAGE_CHILDREN, which keeps the maximum over every earlier child). Run heavy
work such as model exports in a child process too: a forked child starts
with a copy of the parent's resident pages, which would count as its own.
"""

import os
import subprocess
import sys
import time


def run_measured(cmd):
    """Runs `cmd`; returns (wall seconds, peak RSS bytes). Exits with the
    command's stderr when it fails."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    stderr = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"error: {' '.join(map(str, cmd))} exited with {code}:\n{stderr}")
    # ru_maxrss is in KiB on Linux, bytes on macOS.
    return wall, usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024)

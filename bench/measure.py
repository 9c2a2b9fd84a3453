"""Shared by the benchmarks: wall time and peak RSS of one child process.

The peak RSS comes from wait4's rusage of that child alone (not
RUSAGE_CHILDREN, which keeps the maximum over every earlier child). Run heavy
work such as model exports in a child process too: a forked child starts
with a copy of the parent's resident pages, which would count as its own.
"""

import os
import re
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


# --- runs on virtual hosts (python -m loom.vcluster; root) -------------------

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("LOOM_BUILD_DIR", os.path.join(ROOT, "build"))
COMM_BENCH = os.path.join(BUILD, "test", "Runtime", "loom-test-comm-bench")


def vcluster_command(program, hosts=2, rate=None):
    """`program` (a list) launched on `hosts` virtual hosts, one rank each,
    over links of `rate` (None: unlimited), as the cluster named "bench"."""
    cmd = [sys.executable, "-m", "loom.vcluster", "--name", "bench", "run",
           "--hosts", str(hosts)]
    if rate:
        cmd += ["--link", rate]
    return [*cmd, "--", *program]


def vcluster_env(**settings):
    """This environment with `settings` (as strings) and this checkout's
    Python package first on PYTHONPATH (the launcher agent imports it)."""
    path = os.pathsep.join(p for p in (os.path.join(ROOT, "python"),
                                       os.environ.get("PYTHONPATH")) if p)
    return dict(os.environ, PYTHONPATH=path, **{k: str(v) for k, v in settings.items()})


def require_vcluster(name):
    """Exits naming what is missing unless virtual hosts and the runtime's
    communication benchmark program are available."""
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from loom import vcluster
    reason = vcluster.check()
    if reason:
        sys.exit(f"{name}: {reason}")
    if not os.path.exists(COMM_BENCH):
        sys.exit(f"{name}: {COMM_BENCH} is not built (make build)")


def run_comm_bench(name, mode, rate, **settings):
    """One run of loom-test-comm-bench (LOOM_BENCH=`mode`, LOOM_BENCH_<KEY>
    for each setting) on two virtual hosts; its JSON line as a dict."""
    env = vcluster_env(LOOM_BENCH=mode,
                       **{f"LOOM_BENCH_{k.upper()}": v for k, v in settings.items()})
    cmd = vcluster_command([COMM_BENCH, "--data", "/tmp", "--steps", "1", "--quiet",
                            "--comm-timeout", "600"], rate=rate)
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    if proc.returncode != 0:
        sys.exit(f"{name}: the run failed:\n{proc.stderr}")
    import json
    return json.loads(next(l for l in proc.stdout.splitlines() if l.startswith("{")))


def _run_on_vcluster(program, data, steps, hosts, rate, extra, threads, quiet):
    """One run of `program` (a loom.Program) for `steps` steps on `hosts`
    virtual hosts over links of `rate`; (wall seconds, its stderr). Its
    loss log is OUTDIR/<rate>-<steps>.csv."""
    log = program.outdir / f"{rate or 'unlimited'}-{steps}.csv"
    cmd = vcluster_command([str(program.executable), "--data", str(data), "--steps",
                            str(steps), "--log", str(log), *(["--quiet"] if quiet else []),
                            *extra], hosts=hosts, rate=rate)
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=vcluster_env(OMP_NUM_THREADS=threads),
                          capture_output=True, text=True, cwd=program.outdir)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} exited with {proc.returncode}:\n{proc.stderr}")
    return wall, proc.stderr


def timed_run(program, data, steps, *, hosts=2, rate=None, extra=(), threads=1):
    """Seconds one run of `program` (a loom.Program) takes for `steps`
    steps on `hosts` virtual hosts over links of `rate`, start-up
    included; its loss log is OUTDIR/<rate>-<steps>.csv."""
    return _run_on_vcluster(program, data, steps, hosts, rate, extra, threads, True)[0]


def median_step(stderr):
    """The median step time in seconds from a train run's closing line
    ("loom-train: N steps; median step X ms, ..."); exits when missing."""
    match = re.search(r"loom-train: \d+ steps; median step ([0-9.]+) ms", stderr)
    if not match:
        sys.exit(f"error: no 'median step' line in the run's output:\n{stderr}")
    return float(match.group(1)) / 1e3


def per_step(program, data, steps, repeat, *, hosts=2, rate=None, extra=(), threads=1):
    """Seconds per step in the steady state: the median of the step times
    the program itself measures over 2 * `steps` steps (which leaves out
    start-up, whose time on virtual hosts varies by tens of milliseconds,
    and the first steps' warm-up), the minimum of `repeat` runs."""
    return min(median_step(_run_on_vcluster(program, data, 2 * steps, hosts, rate,
                                            extra, threads, False)[1])
               for _ in range(repeat))

"""A cluster in a box: `python -m loom.vcluster` and compiled programs on
several virtual hosts (network namespaces joined by a bridge, tc rate
limits), OpenMPI over TCP between hosts.

Parity: the dp, tp and dp x tp runs on 2 virtual hosts log the losses of the
same program on one host (and PyTorch's). Faults: a host's link taken down
mid-run ends the run non-zero within 60 s, naming the unreachable peer.
Needs root and iproute2 (skipped otherwise, with the reason).
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import loom
from loom import vcluster

sys.path.insert(0, str(Path(__file__).parent))
from parallel_support import BUILD, MPI_MARKS  # noqa: E402

REASON = vcluster.check()
NEEDS_HOSTS = pytest.mark.skipif(REASON is not None, reason=str(REASON))
VC = [sys.executable, "-m", "loom.vcluster"]
COMM = BUILD / "test" / "Runtime" / "loom-test-comm-step"


def vc(*args, timeout=120, **kw):
    return subprocess.run([*VC, *args], capture_output=True, text=True,
                          timeout=timeout, **kw)


def namespaces():
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith("loom-")]


# --- the tool itself ------------------------------------------------------------

@pytest.mark.parametrize("text,bits", [
    ("1gbit", 10**9), ("100mbit", 10**8), ("2.5gbit/s", 25 * 10**8),
    ("12GB/s", 96 * 10**9), ("500MB/s", 4 * 10**9), ("12gbps", 96 * 10**9),
])
def test_link_rates_parse_like_tc(text, bits):
    assert vcluster.parse_rate(text) == bits


@pytest.mark.parametrize("text,message", [
    ("fast", "expected a number and a unit"),
    ("3 furlongs", "unknown unit 'furlongs'"),
    ("10bit", "below 8 kbit/s"),
])
def test_bad_link_rates_are_errors(text, message):
    with pytest.raises(vcluster.VClusterError, match=message):
        vcluster.parse_rate(text)


def test_usage_errors_exit_non_zero():
    proc = vc("run", "--hosts", "2", "--link", "fast", "--", "true")
    assert proc.returncode == 2 and "link rate 'fast'" in proc.stderr, proc.stderr
    proc = vc("run", "--hosts", "2")
    assert proc.returncode == 2 and "no program to run" in proc.stderr, proc.stderr
    proc = vc("run", "--hosts", "2", "--link-down", "host1", "--", "true")
    assert proc.returncode == 2 and "HOST@SECONDS" in proc.stderr, proc.stderr


@NEEDS_HOSTS
@pytest.mark.skipif(not vcluster.shutil.which("mpirun"), reason="mpirun not installed")
def test_ranks_spread_over_hosts_and_the_cluster_is_torn_down():
    before = namespaces()
    proc = vc("run", "--hosts", "2", "--ranks-per-host", "2", "--link", "100mbit", "--",
              "sh", "-c", 'echo "rank=$OMPI_COMM_WORLD_RANK host=$(hostname) '
              'addr=$(ip -4 -o addr show eth0 | cut -d" " -f7) '
              'qdisc=$(tc qdisc show dev eth0 | cut -d" " -f2)"')
    assert proc.returncode == 0, proc.stderr
    lines = sorted(line for line in proc.stdout.splitlines() if line.startswith("rank="))
    assert lines == [
        "rank=0 host=host0 addr=10.77.0.1/24 qdisc=tbf",
        "rank=1 host=host0 addr=10.77.0.1/24 qdisc=tbf",
        "rank=2 host=host1 addr=10.77.0.2/24 qdisc=tbf",
        "rank=3 host=host1 addr=10.77.0.2/24 qdisc=tbf",
    ], proc.stdout
    assert namespaces() == before
    assert not list(vcluster.STATE_DIR.glob("vc.json"))


@NEEDS_HOSTS
@pytest.mark.skipif(not vcluster.shutil.which("mpirun"), reason="mpirun not installed")
def test_ranks_of_different_hosts_may_use_every_core_and_links_do_not_burst():
    # Every virtual host is this machine: a rank pinned to core 0 by its
    # host's daemon would share that core with every other host's rank.
    import os
    proc = vc("run", "--hosts", "2", "--link", "200mbit", "--", "sh", "-c",
              'echo "cpus=$(nproc) burst=$(tc qdisc show dev eth0 | '
              'sed -n "s/.* burst \\([0-9a-zA-Z]*\\).*/\\1/p")"')
    assert proc.returncode == 0, proc.stderr
    lines = [l for l in proc.stdout.splitlines() if l.startswith("cpus=")]
    assert len(lines) == 2, proc.stdout
    for line in lines:
        cpus, burst = (field.split("=")[1] for field in line.split())
        assert int(cpus) == len(os.sched_getaffinity(0)), line
        # 1 ms of 200 Mbit/s is 25 kB, below the 64 KiB floor (tc prints
        # 64Kb); 10 ms would be 250 kB.
        assert burst in ("64Kb", "65536b"), line


@NEEDS_HOSTS
@pytest.mark.skipif(not vcluster.shutil.which("mpirun"), reason="mpirun not installed")
def test_the_program_exit_status_is_returned():
    proc = vc("run", "--hosts", "2", "--", "sh", "-c", "exit 3")
    assert proc.returncode == 3, proc.stderr
    assert namespaces() == []


@NEEDS_HOSTS
def test_up_status_down():
    try:
        proc = vc("up", "--hosts", "3", "--link", "1gbit")
        assert proc.returncode == 0, proc.stderr
        proc = vc("status")
        assert "3 hosts on 10.77.0.0/24, links 1gbit" in proc.stdout, proc.stdout
        assert proc.stdout.count("link up") == 3, proc.stdout
        assert vc("up", "--hosts", "1").returncode == 2  # already up
        assert vc("link", "host2", "down").returncode == 0
        assert "host2  10.77.0.3    netns loom-vc-host2  link down" in vc("status").stdout
        assert vc("hostfile", "--ranks-per-host", "2").stdout == (
            "host0 slots=2\nhost1 slots=2\nhost2 slots=2\n")
    finally:
        proc = vc("down")
    assert proc.returncode == 0 and "is down" in proc.stdout, proc.stderr
    assert namespaces() == []
    assert "no virtual cluster 'vc' is up" in vc("status").stderr


@NEEDS_HOSTS
def test_sigterm_tears_the_cluster_down():
    launcher = subprocess.Popen([*VC, "run", "--hosts", "2", "--", "sleep", "60"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while len(namespaces()) < 3 and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1.0)
    launcher.send_signal(signal.SIGTERM)
    _, err = launcher.communicate(timeout=30)
    assert launcher.returncode == 130, err
    assert namespaces() == []
    # The program went with the cluster.
    assert subprocess.run(["pgrep", "-f", "^sleep 60$"], capture_output=True).returncode == 1


# --- communication across hosts -----------------------------------------------------

@NEEDS_HOSTS
@pytest.mark.skipif(not COMM.exists(), reason="loom-test-comm-step not built")
def test_comm_api_across_throttled_hosts():
    proc = vc("run", "--hosts", "2", "--ranks-per-host", "2", "--link", "1gbit", "--",
              str(COMM), "--data", "/tmp", "--steps", "1", "--quiet")
    assert proc.returncode == 0, proc.stderr
    for rank in range(4):
        assert f"comm-check: rank {rank} of 4 ok" in proc.stdout, proc.stdout


# --- training across hosts: parity and faults -------------------------------------------

np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")
pytest.importorskip("onnx")
from test_training import (OPTIMIZERS, import_example, make_data,  # noqa: E402
                           torch_losses, write_data)

STEPS = 10


@NEEDS_HOSTS
@pytest.mark.parametrize("example,mesh,hosts,microbatches", [
    ("mlp_example", "dp=2", 2, 1),              # dp across hosts
    ("gpt_example", "tp=2", 2, 1),              # tp across hosts
    ("gpt_example", "dp=2,tp=2", 2, 1),         # tp inside a host, dp across
    ("gpt_example", "pp=2", 2, 4),              # pp across hosts (1F1B)
    ("gpt_example", "dp=2,tp=2,pp=2", 4, 4),    # 3D: tp inside, dp and pp across
    ("mlp_example", "dp=4", 4, 1),              # dp across 4 hosts
    ("gpt_example", "tp=4", 4, 1),              # tp across 4 hosts (vocab padded)
    ("gpt_example", "pp=4", 4, 4),              # pp across 4 hosts (1F1B)
])
def test_multi_host_training_matches_one_host(example, mesh, hosts, microbatches, tmp_path):
    axes = dict(dp=1, tp=1, pp=1)
    axes.update((k, int(v)) for k, v in (kv.split("=") for kv in mesh.split(",")))
    micro = 4 if example == "mlp_example" else (1 if microbatches > 1 else 2)
    global_batch = axes["dp"] * microbatches * micro
    model, args, names, single = import_example(example, tmp_path, global_batch,
                                                "import-single")
    _, _, _, per_rank = import_example(example, tmp_path, micro, "import-rank")
    classes = 10 if example == "mlp_example" else 50
    data = make_data(names, args, 3, classes, seed=7)
    data_dir = write_data(tmp_path / "data", data)
    options, make_opt = OPTIMIZERS["sgd"]
    expected = torch_losses(model, names, data, global_batch, STEPS, make_opt)

    if microbatches > 1:
        options = dict(options, microbatches=microbatches)
    program = per_rank.compile(outdir=tmp_path / "prog", mesh=mesh, **options)
    step_cpp = (tmp_path / "prog" / "step.cpp").read_text()
    # Really parallel: the collectives of each axis of more than one rank.
    if axes["dp"] > 1 or axes["tp"] > 1:
        assert "allReduceStart" in step_cpp
    if axes["pp"] > 1:
        assert "sendStart" in step_cpp and "recvStart" in step_cpp
        # The transfers as loom-comm-schedule (on by default) posts them.
        plan = json.loads((tmp_path / "prog" / "plan.json").read_text())
        assert "loom-comm-schedule" in plan["pipeline"], plan["pipeline"]
    one_host = program.train(data_dir, STEPS, log=tmp_path / "one.csv", mpirun=True)
    spread = program.train(data_dir, STEPS, log=tmp_path / "spread.csv", hosts=hosts,
                           link="1gbit", extra_args=["--comm-stats",
                                                     str(tmp_path / "stats.json")])
    np.testing.assert_allclose(spread, one_host, rtol=1e-5)
    np.testing.assert_allclose(spread, expected, rtol=1e-4)
    # Every rank communicated, over the groups of its mesh.
    stats = json.loads((tmp_path / "stats.json").read_text())["ranks"]
    assert len(stats) == program.mesh_size()
    for rank in stats:
        groups = set(rank["groups"])
        for axis in ("dp", "tp", "pp"):
            if axes[axis] > 1:
                assert axis in groups and rank["groups"][axis]["bytes"] > 0, rank


@NEEDS_HOSTS
def test_a_link_down_ends_every_rank_and_names_the_peer(tmp_path):
    _, args, names, per_rank = import_example("mlp_example", tmp_path, 4, "import-rank")
    data_dir = write_data(tmp_path / "data", make_data(names, args, 3, 10, seed=1))
    program = per_rank.compile(outdir=tmp_path / "dp", mesh="dp=2", optimizer="sgd", lr=0.01)
    start = time.monotonic()
    proc = vc("run", "--hosts", "2", "--link", "100mbit", "--link-down", "host1@3", "--",
              str(program.executable), "--data", str(data_dir), "--steps", "100000000",
              "--quiet", "--comm-timeout", "10", timeout=120)
    elapsed = time.monotonic() - start
    assert proc.returncode != 0
    assert elapsed < 60, elapsed
    # Rank 0 (host0) names the all-reduce and its peer on host1; host1's own
    # message cannot cross its dead link.
    assert "no completion within 10 s of the dp all-reduce" in proc.stderr, proc.stderr
    assert "rank 1 (host1)" in proc.stderr, proc.stderr
    assert namespaces() == []


@NEEDS_HOSTS
def test_a_trace_of_dp_across_hosts_shows_compute_and_communication(tmp_path):
    """dp=2 GPT on 2 hosts over 1 Gbit/s with --trace and 4 KiB gradient
    buckets (--bucket-bytes), so that all-reduces start during the backward
    pass: one process per rank,
    named with its host; kernels named after the model's ops on `compute`;
    the gradient all-reduces on `comm dp`, inside their steps; and some of
    them in flight while kernels run (the communication thread)."""
    _, args, names, per_rank = import_example("gpt_example", tmp_path, 2, "import-rank")
    data_dir = write_data(tmp_path / "data", make_data(names, args, 3, 50, seed=3))
    # Through the Python frontend, which keeps the ONNX node names as the
    # ops' locations, so kernels are named after the model's ops.
    program = per_rank.compile(outdir=tmp_path / "dp", mesh="dp=2", optimizer="sgd",
                               lr=0.01, bucket_bytes=4096)
    program.train(data_dir, 3, hosts=2, link="1gbit",
                  extra_args=["--trace", str(tmp_path / "trace.json")])
    events = json.loads((tmp_path / "trace.json").read_text())["traceEvents"]
    processes = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert processes == {0: "rank 0 (host0)", 1: "rank 1 (host1)"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
               if e["name"] == "thread_name"}
    spans = [e for e in events if e["ph"] == "X"]
    for rank in (0, 1):
        mine = [e for e in spans if e["pid"] == rank]
        track = {e["name"]: threads[(rank, e["tid"])] for e in mine}
        steps = [e for e in mine if e["name"].startswith("step ")]
        kernels = [e for e in mine if e["name"].startswith(("gemm", "kernel", "reduce"))]
        comms = [e for e in mine if e["cat"] == "comm"]
        assert len(steps) == 3
        assert kernels and all(track[k["name"]] == "compute" for k in kernels)
        assert any(k["name"] == "gemm dot_general (/blocks.0/attn_qkv/MatMul)"
                   for k in kernels), sorted({k["name"] for k in kernels})
        assert comms and all(threads[(rank, c["tid"])].startswith("comm dp") for c in comms)
        assert all(c["args"]["group"] == "dp" and c["args"]["bytes"] > 0 for c in comms)
        for c in comms:
            assert any(s["ts"] - 1 <= c["ts"] and c["ts"] + c["dur"] <= s["ts"] + s["dur"] + 1
                       for s in steps), c
        overlapped = [c for c in comms
                      if any(k["ts"] > c["ts"] and k["ts"] + k["dur"] < c["ts"] + c["dur"]
                             for k in kernels)]
        assert overlapped, "no kernel ran while an all-reduce was in flight"


@NEEDS_HOSTS
def test_a_killed_rank_on_another_host_ends_the_run(tmp_path):
    _, args, names, per_rank = import_example("mlp_example", tmp_path, 4, "import-rank")
    data_dir = write_data(tmp_path / "data", make_data(names, args, 3, 10, seed=1))
    program = per_rank.compile(outdir=tmp_path / "dp", mesh="dp=2", optimizer="sgd", lr=0.01)
    start = time.monotonic()
    launcher = subprocess.Popen(
        [*VC, "run", "--hosts", "2", "--", str(program.executable), "--data", str(data_dir),
         "--steps", "100000000", "--quiet", "--comm-timeout", "10"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # SIGKILL the rank on host1 once it trains.
    victim = None
    while victim is None and time.monotonic() - start < 60:
        time.sleep(0.5)
        out = subprocess.run(["ip", "netns", "pids", "loom-vc-host1"], capture_output=True,
                             text=True).stdout.split()
        for pid in out:
            try:
                if Path(f"/proc/{pid}/comm").read_text().strip() == "train":
                    victim = int(pid)
            except OSError:
                pass
    assert victim is not None, "the rank on host1 never started"
    time.sleep(1.0)
    os.kill(victim, signal.SIGKILL)
    _, err = launcher.communicate(timeout=120)
    elapsed = time.monotonic() - start
    assert launcher.returncode != 0
    assert elapsed < 60, elapsed
    assert "signal 9" in err or "killed" in err.lower(), err
    assert namespaces() == []

"""End to end: hand-written steps (test/Runtime/*.cpp) linked with LoomRuntime.

`loom-test-linear-step` trains linear regression with SGD + momentum through
trainMain(): it is run directly, under `mpirun -np 1` and on two ranks, and
checked against a NumPy replay of the same training, for a falling loss, the
loss log, checkpoints, an exact resume after SIGKILL, and the error messages
for bad inputs. `loom-test-comm-step` checks the Comm API on 1 to 3 ranks.
"""

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import loom

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("LOOM_BUILD_DIR", ROOT / "build"))
LINEAR = BUILD / "test" / "Runtime" / "loom-test-linear-step"
COMM = BUILD / "test" / "Runtime" / "loom-test-comm-step"
MPIRUN = shutil.which("mpirun")

pytestmark = pytest.mark.skipif(not LINEAR.exists() or not COMM.exists(),
                                reason=f"{LINEAR.parent} not built")
needs_mpirun = pytest.mark.skipif(MPIRUN is None, reason="mpirun not installed")

BATCH, FEATURES, ROWS = 8, 4, 20
LR, MOMENTUM = np.float32(0.05), np.float32(0.9)


def mpirun(ranks):
    return loom.mpirun_command(ranks)


@pytest.fixture
def work(tmp_path):
    """A dataset of 20 rows (not a multiple of the batch: batches wrap) and
    zero initial weights."""
    from safetensors.numpy import save_file
    rng = np.random.default_rng(0)
    x = rng.standard_normal((ROWS, FEATURES)).astype(np.float32)
    w_true = np.array([[1.5], [-2.0], [0.5], [3.0]], np.float32)
    y = (x @ w_true + 0.7).astype(np.float32)
    (tmp_path / "data").mkdir()
    np.save(tmp_path / "data" / "x.npy", x)
    np.save(tmp_path / "data" / "y.npy", y)
    save_file({"w": np.zeros((FEATURES, 1), np.float32),
               "b": np.zeros((1,), np.float32)}, str(tmp_path / "weights.safetensors"))
    return tmp_path


def train(work, *extra, launcher=(), env=None, check=True, exe=LINEAR):
    cmd = [*launcher, str(exe), "--data", str(work / "data"), "--quiet", *extra]
    if "--weights" not in extra:
        cmd += ["--weights", str(work / "weights.safetensors")]
    proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True,
                          env=dict(os.environ, **(env or {})), timeout=120)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def read_log(path):
    lines = Path(path).read_text().splitlines()
    assert lines[0] == "step,loss"
    rows = [line.split(",") for line in lines[1:]]
    return [int(s) for s, _ in rows], np.array([float(v) for _, v in rows])


def numpy_replay(x, y, steps):
    """The same training in float32 NumPy: row (s*B + i) mod ROWS per step."""
    w = np.zeros((FEATURES, 1), np.float32)
    b = np.zeros((1,), np.float32)
    mw, mb = np.zeros_like(w), np.zeros_like(b)
    losses = []
    for s in range(steps):
        rows = (s * BATCH + np.arange(BATCH)) % ROWS
        xb, yb = x[rows], y[rows]
        d = (xb @ w + b - yb).astype(np.float32)
        losses.append(float(np.mean(d.astype(np.float64) ** 2)))
        g = (np.float32(2.0) * d / np.float32(BATCH)).astype(np.float32)
        gw, gb = (xb.T @ g).astype(np.float32), g.sum(dtype=np.float64).astype(np.float32)
        mw, mb = MOMENTUM * mw + gw, MOMENTUM * mb + gb
        w, b = w - LR * mw, b - LR * mb
    return np.array(losses)


def test_trains_like_a_numpy_replay_and_the_loss_falls(work):
    train(work, "--steps", "40", "--log", "loss.csv", "--memory-counters", "mem.json")
    steps, losses = read_log(work / "loss.csv")
    assert steps == list(range(40))
    x, y = np.load(work / "data" / "x.npy"), np.load(work / "data" / "y.npy")
    np.testing.assert_allclose(losses, numpy_replay(x, y, 40), rtol=2e-4, atol=1e-6)
    assert losses[-5:].mean() < losses[:5].mean() / 20

    import json
    mem = json.loads((work / "mem.json").read_text())
    assert mem["arena_bytes"] == 256
    assert mem["arena_peak_live_bytes"] == mem["planned_peak_bytes"] == 64
    assert mem["params_bytes"] == 4 * (FEATURES + 1)
    assert mem["state_bytes"] == 4 * (1 + FEATURES + 1)
    assert mem["data_bytes"] == 4 * ROWS * (FEATURES + 1)
    assert mem["batch_bytes"] == 4 * BATCH * (FEATURES + 1)


def test_progress_ends_with_the_median_step_of_the_steps_run(work):
    import re
    import time

    def run(*extra):
        cmd = [str(LINEAR), "--data", str(work / "data"), "--weights",
               str(work / "weights.safetensors"), *extra]
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return proc.stderr, time.perf_counter() - start

    line = re.compile(r"loom-train: (\d+) steps; median step ([0-9.]+) ms, "
                      r"first ([0-9.]+) ms, fastest ([0-9.]+) ms")
    stderr, wall = run("--steps", "9", "--checkpoint-dir", "ck")
    assert "step 9/9" in stderr
    last = stderr.strip().splitlines()[-1]
    m = line.fullmatch(last)
    assert m, stderr
    n, median, first, fastest = int(m[1]), *(float(m[i]) / 1e3 for i in (2, 3, 4))
    assert n == 9
    assert 0 < fastest <= median and fastest <= first
    # Half the steps take at least the median: they fit in the wall time.
    assert median * (n // 2) < wall
    # A resumed run (from the last checkpoint, at step 9) counts only the
    # steps it ran.
    stderr, _ = run("--steps", "11", "--checkpoint-dir", "ck", "--resume")
    assert line.fullmatch(stderr.strip().splitlines()[-1])[1] == "2", stderr
    assert "median step" not in run("--steps", "2", "--quiet")[0]


@needs_mpirun
def test_mpirun_one_and_two_ranks_give_the_same_run(work):
    train(work, "--steps", "12", "--log", "direct.csv")
    train(work, "--steps", "12", "--log", "np1.csv", launcher=mpirun(1))
    # Two ranks read the same rows and average identical gradients.
    train(work, "--steps", "12", "--log", "np2.csv", "--checkpoint-dir", "ck",
          launcher=mpirun(2))
    direct = (work / "direct.csv").read_text()
    assert (work / "np1.csv").read_text() == direct
    assert (work / "np2.csv").read_text() == direct
    assert sorted(p.name for p in (work / "ck").iterdir()) == [
        "ckpt-00000012-rank0.safetensors", "ckpt-00000012-rank1.safetensors"]


def test_a_killed_run_resumes_to_the_same_loss_curve(work):
    from safetensors.numpy import load_file
    train(work, "--steps", "10", "--log", "full.csv", "--checkpoint-dir", "full",
          "--checkpoint-every", "5")
    # Killed (SIGKILL) when step 7 starts: steps 0-6 are logged, the
    # checkpoint of step 5 is the newest.
    killed = train(work, "--steps", "10", "--log", "loss.csv", "--checkpoint-dir", "ck",
                   "--checkpoint-every", "5", env={"LOOM_TEST_KILL_AT_STEP": "7"},
                   check=False)
    assert killed.returncode == -9, killed.stderr
    assert read_log(work / "loss.csv")[0] == list(range(7))
    assert sorted(p.name for p in (work / "ck").iterdir()) == ["ckpt-00000005-rank0.safetensors"]

    resumed = subprocess.run(
        [str(LINEAR), "--data", str(work / "data"), "--steps", "10", "--log", "loss.csv",
         "--checkpoint-dir", "ck", "--checkpoint-every", "5", "--resume"],
        cwd=work, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming from" in resumed.stderr and "at step 5" in resumed.stderr
    assert (work / "loss.csv").read_text() == (work / "full.csv").read_text()
    final, reference = (load_file(str(work / d / "ckpt-00000010-rank0.safetensors"))
                        for d in ("ck", "full"))
    assert final.keys() == reference.keys() == {"w", "b", "step", "momentum.w",
                                                "momentum.b"}
    for name in final:
        np.testing.assert_array_equal(final[name], reference[name])
    assert final["step"] == 10

    # Resuming a finished run does nothing and changes nothing.
    before = (work / "loss.csv").read_text()
    again = train(work, "--steps", "10", "--log", "loss.csv", "--checkpoint-dir", "ck",
                  "--resume")
    assert (work / "loss.csv").read_text() == before, again.stderr


def test_weights_default_to_the_file_next_to_the_executable(work):
    exe = work / "bin" / "train"
    exe.parent.mkdir()
    shutil.copy(LINEAR, exe)
    missing = train(work, "--steps", "1", "--weights", "", check=False, exe=exe)
    assert missing.returncode == 2  # an empty value is a usage error
    proc = subprocess.run([str(exe), "--data", str(work / "data"), "--steps", "1"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert (f"loom-train: error: weights: weights file '{exe.parent}/weights.safetensors' "
            "does not exist (pass --weights FILE)") in proc.stderr
    shutil.copy(work / "weights.safetensors", exe.parent / "weights.safetensors")
    proc = subprocess.run([str(exe), "--data", str(work / "data"), "--steps", "1",
                           "--quiet"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def expect_error(proc, message):
    assert proc.returncode == 1, proc.stderr
    assert f"loom-train: error: {message}" in proc.stderr, proc.stderr


@pytest.mark.parametrize("launch", ["direct", "mpirun"])
def test_bad_data_is_an_error_that_leaves_the_old_log_alone(work, launch):
    if launch == "mpirun" and MPIRUN is None:
        pytest.skip("mpirun not installed")
    launcher = mpirun(1) if launch == "mpirun" else ()
    (work / "loss.csv").write_text("step,loss\n0,1\n")
    x_path = work / "data" / "x.npy"
    x = np.load(x_path)

    x_path.unlink()
    expect_error(train(work, "--steps", "2", "--log", "loss.csv", launcher=launcher,
                       check=False),
                 f"data: '{x_path}' does not exist (data argument 'x' is read from DIR/x.npy)")

    np.save(x_path, x.astype(np.int64))
    expect_error(train(work, "--steps", "2", "--log", "loss.csv", launcher=launcher,
                       check=False),
                 f"data: '{x_path}' holds int64 [20, 4], but data argument 'x' expects "
                 "float32 [N >= 8, 4] (the dtype differs)")

    np.save(x_path, x.astype(np.float64))
    proc = train(work, "--steps", "2", "--log", "loss.csv", launcher=launcher, check=False)
    expect_error(proc, f"data: '{x_path}': ")
    assert "<f8" in proc.stderr

    np.save(x_path, x[:5])
    expect_error(train(work, "--steps", "2", "--log", "loss.csv", launcher=launcher,
                       check=False),
                 f"data: '{x_path}' holds float32 [5, 4], but data argument 'x' expects "
                 "float32 [N >= 8, 4] (fewer rows than one batch)")

    assert (work / "loss.csv").read_text() == "step,loss\n0,1\n"


def test_bad_weights_name_the_tensor(work):
    from safetensors.numpy import save_file
    bad = work / "bad.safetensors"
    save_file({"w": np.zeros((1, FEATURES), np.float32),
               "b": np.zeros((1,), np.float32)}, str(bad))
    expect_error(train(work, "--steps", "1", "--weights", str(bad), check=False),
                 f"weights: weights file '{bad}': tensor 'w' is F32 [1, 4], but the "
                 "program expects F32 [4, 1]")
    save_file({"w": np.zeros((FEATURES, 1), np.float32)}, str(bad))
    expect_error(train(work, "--steps", "1", "--weights", str(bad), check=False),
                 f"weights: weights file '{bad}' has no tensor 'b'")


def test_checkpoint_directories_are_never_mixed_up(work):
    train(work, "--steps", "3", "--checkpoint-dir", "ck")
    # A fresh run would interleave its checkpoints with the old ones.
    expect_error(train(work, "--steps", "3", "--checkpoint-dir", "ck", check=False),
                 "checkpoint: 'ck' already holds checkpoints (the newest is step 3); "
                 "pass --resume to continue from it, or choose another --checkpoint-dir")
    # Another program cannot resume from them.
    proc = train(work, "--steps", "1", "--checkpoint-dir", "ck", "--resume",
                 check=False, exe=COMM)
    expect_error(proc, "checkpoint: checkpoint 'ck/ckpt-00000003-rank0.safetensors' was "
                 "written by another program (model 'linear-regression'")
    # Nor can another number of ranks.
    if MPIRUN:
        proc = train(work, "--steps", "4", "--checkpoint-dir", "ck", "--resume",
                     launcher=mpirun(2), check=False)
        assert proc.returncode != 0
        assert ("loom-train: error: checkpoint: some of the 2 ranks find no checkpoint in "
                "'ck' while others do (the newest is step 3): was it written by another "
                "number of ranks?") in proc.stderr
        shutil.copy(work / "ck" / "ckpt-00000003-rank0.safetensors",
                    work / "ck" / "ckpt-00000003-rank1.safetensors")
        proc = train(work, "--steps", "4", "--checkpoint-dir", "ck", "--resume",
                     launcher=mpirun(2), check=False)
        assert proc.returncode != 0
        assert "was written by rank 0 of 1, not rank 0 of 2" in proc.stderr
    # --resume into an empty directory starts from the weights.
    proc = train(work, "--steps", "2", "--checkpoint-dir", "new", "--resume")
    assert (work / "new" / "ckpt-00000002-rank0.safetensors").exists()


@pytest.mark.parametrize("args,message", [
    ([], "--data DIR is required"),
    (["--data", "d"], "--steps N is required"),
    (["--data", "d", "--steps", "ten"], "--steps expects an integer >= 0, got 'ten'"),
    (["--data", "d", "--steps", "-1"], "--steps expects an integer >= 0, got '-1'"),
    (["--data", "d", "--steps", "1", "--checkpoint-every", "0", "--checkpoint-dir", "c"],
     "--checkpoint-every expects an integer >= 1, got '0'"),
    (["--data", "d", "--steps", "1", "--resume"], "--resume needs --checkpoint-dir"),
    (["--data", "d", "--steps", "1", "--frobnicate"], "unknown option '--frobnicate'"),
    (["--data", "d", "--steps=1", "--quiet=yes"], "--quiet takes no value"),
    (["--data"], "--data needs a value"),
    (["--data", "d", "--steps", "1", "--gemm-strides", "fast"],
     "--gemm-strides expects tune, direct or pad, got 'fast'"),
])
def test_usage_errors(args, message):
    proc = subprocess.run([str(LINEAR), *args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert f"loom-train: error: {message}\n" in proc.stderr
    assert "--help" in proc.stderr


def test_help_lists_options_and_inputs():
    proc = subprocess.run([str(LINEAR), "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    for text in ["--data DIR", "--steps N", "--log FILE", "--weights FILE",
                 "--checkpoint-dir DIR", "--checkpoint-every K", "--resume",
                 "--memory-counters FILE", "--gemm-strides POLICY", "--quiet", "data   x float32 [8, 4]",
                 "param  w float32 [4, 1]"]:
        assert text in proc.stdout


def test_data_dir_must_exist(work):
    proc = subprocess.run([str(LINEAR), "--data", str(work / "nope"), "--steps", "1",
                           "--weights", str(work / "weights.safetensors")],
                          capture_output=True, text=True, timeout=60)
    expect_error(proc, f"data: '{work / 'nope'}' is not a directory (--data DIR)")


@pytest.mark.parametrize("ranks", [0, 1, 2, 3])
def test_comm_operations(tmp_path, ranks):
    """0 = launched directly (a singleton MPI world)."""
    if ranks and MPIRUN is None:
        pytest.skip("mpirun not installed")
    launcher = mpirun(ranks) if ranks else []
    proc = subprocess.run([*launcher, str(COMM), "--data", str(tmp_path), "--steps", "2",
                           "--quiet"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    size = max(ranks, 1)
    for rank in range(size):
        assert proc.stdout.count(f"comm-check: rank {rank} of {size} ok") == 2


@pytest.mark.parametrize("how,ranks,message", [
    ("bad-peer", 0, "step 0: send: peer 1 is not a rank of the world of 1"),
    ("double-wait", 0, "step 0: wait: handle 0 is not an operation in flight"),
    ("short-message", 2, "step 0: recv: expected 32 bytes from rank 0 (tag 9), received 16"),
])
def test_comm_misuse_is_an_error(tmp_path, how, ranks, message):
    if ranks and MPIRUN is None:
        pytest.skip("mpirun not installed")
    launcher = mpirun(ranks) if ranks else []
    proc = subprocess.run([*launcher, str(COMM), "--data", str(tmp_path), "--steps", "1",
                           "--quiet"], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, LOOM_TEST_COMM=how))
    assert proc.returncode != 0
    assert f"loom-train: error: {message}" in proc.stderr


CUDA_CHECK = BUILD / "test" / "Runtime" / "loom-test-cuda-kernels"


@pytest.mark.skipif(not CUDA_CHECK.exists(), reason="LoomRuntimeCUDA not built")
def test_cuda_kernels_match_the_cpu_kernels():
    proc = subprocess.run([str(CUDA_CHECK)], capture_output=True, text=True, timeout=300)
    if proc.returncode == 77:
        pytest.skip("no CUDA device")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "all ok" in proc.stdout
    bad = subprocess.run([str(CUDA_CHECK), "--bad-label"], capture_output=True, text=True,
                         timeout=300)
    expect_error(bad, "loom.cross_entropy: label 7 of sample 1 is out of range [0, 3)")


def flip_last_byte(path):
    data = bytearray(Path(path).read_bytes())
    data[-1] ^= 0x01
    Path(path).write_bytes(bytes(data))


def test_a_corrupted_checkpoint_is_refused_and_latest_valid_falls_back(work):
    train(work, "--steps", "10", "--log", "full.csv", "--checkpoint-dir", "full",
          "--checkpoint-every", "5")
    train(work, "--steps", "10", "--checkpoint-dir", "ck", "--checkpoint-every", "5",
          "--keep-checkpoints", "3")
    # The newest checkpoint (step 10) gets one flipped byte: refused, by name.
    newest = work / "ck" / "ckpt-00000010-rank0.safetensors"
    flip_last_byte(newest)
    proc = train(work, "--steps", "10", "--checkpoint-dir", "ck", "--resume", check=False)
    assert proc.returncode == 1
    assert "checkpoint 'ck/ckpt-00000010-rank0.safetensors' is corrupted" in proc.stderr, \
        proc.stderr
    assert "--resume=latest-valid" in proc.stderr
    # Asked to, the run falls back to step 5 and redoes steps 5-9 exactly.
    proc = train(work, "--steps", "10", "--log", "loss.csv", "--checkpoint-dir", "ck",
                 "--checkpoint-every", "5", "--keep-checkpoints", "3",
                 "--resume=latest-valid")
    assert "is corrupted" in proc.stderr and "trying an older checkpoint" in proc.stderr
    steps, losses = read_log(work / "loss.csv")
    assert steps == [5, 6, 7, 8, 9]
    _, full = read_log(work / "full.csv")
    np.testing.assert_array_equal(losses, full[5:])
    # With every checkpoint corrupted nothing is left: an error, no training.
    for p in (work / "ck").glob("*.safetensors"):
        flip_last_byte(p)
    proc = train(work, "--steps", "12", "--checkpoint-dir", "ck",
                 "--resume=latest-valid", check=False)
    assert proc.returncode == 1
    assert "no checkpoint in 'ck' is intact on every rank" in proc.stderr, proc.stderr
    proc = train(work, "--steps", "1", "--checkpoint-dir", "ck", "--resume=newest",
                 check=False)
    assert proc.returncode == 2 and "--resume takes no value or '=latest-valid'" in proc.stderr


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("mount") is None,
                    reason="mounting a size-limited tmpfs needs root")
def test_a_full_disk_keeps_the_previous_checkpoint(work):
    disk = work / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        train(work, "--steps", "5", "--checkpoint-dir", str(disk / "ck"))
        good = (disk / "ck" / "ckpt-00000005-rank0.safetensors").read_bytes()
        # Fill the disk, leaving less than a checkpoint.
        filler = disk / "filler"
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
        try:
            while True:
                os.write(fd, b"\0" * 512)
        except OSError:
            pass
        finally:
            os.close(fd)
        proc = train(work, "--steps", "10", "--checkpoint-dir", str(disk / "ck"),
                     "--resume", check=False)
        assert proc.returncode == 1
        assert "cannot write checkpoint" in proc.stderr and "No space left" in proc.stderr, \
            proc.stderr
        assert sorted(p.name for p in (disk / "ck").iterdir()) == [
            "ckpt-00000005-rank0.safetensors"]  # no temp file left behind
        assert (disk / "ck" / "ckpt-00000005-rank0.safetensors").read_bytes() == good
        filler.unlink()
        # With room again the run resumes from it.
        train(work, "--steps", "10", "--log", "resumed.csv", "--checkpoint-dir",
              str(disk / "ck"), "--resume")
        assert read_log(work / "resumed.csv")[0] == [5, 6, 7, 8, 9]
        assert (disk / "ck" / "ckpt-00000010-rank0.safetensors").exists()
    finally:
        subprocess.run(["umount", str(disk)])


@needs_mpirun
def test_trace_comm_stats_and_per_rank_memory_counters(work):
    import json
    proc = train(work, "--steps", "2", "--trace", "trace.json", "--comm-stats", "stats.json",
                 "--memory-counters", "mem-{rank}.json", launcher=mpirun(2), exe=COMM)
    assert proc.stdout.count("ok") == 4, proc.stdout
    for rank in range(2):
        assert json.loads((work / f"mem-{rank}.json").read_text())["arena_bytes"] == 0
    stats = json.loads((work / "stats.json").read_text())["ranks"]
    assert [r["rank"] for r in stats] == [0, 1]
    # four reductions, the big one, the two between the row-sparse ones
    per_step_floats = 4 * 1000 + (8 << 20) + 2 * 1000
    # The three row-sparse all-reduces count what the rank sent: a count (8
    # bytes) and per touched row its index (8) and 5 floats. Rank 0 touches
    # rows {0, 1} of the first table, rank 1 rows {0, 1, 3} of the first
    # two; the third is all zeros.
    sparse = {0: (8 + 2 * 28) + 8 + 8, 1: 2 * (8 + 3 * 28) + 8}
    for r in stats:
        ar = r["kinds"]["all_reduce"]
        assert ar["ops"] == 2 * 10, r
        assert ar["bytes"] == 2 * (4 * per_step_floats + sparse[r["rank"]]), r
        # ring, zero-byte, big and small before a receive, big ring
        assert r["kinds"]["send"]["ops"] == 2 * 5
        assert r["kinds"]["send"]["bytes"] == 2 * (800 + 0 + (16 << 20) + 4 + (16 << 20))
        assert r["groups"]["world"]["ops"] == 2 * 20
        assert ar["seconds"] > 0 and ar["wait_seconds"] >= 0

    trace = json.loads((work / "trace.json").read_text())["traceEvents"]
    names = {(e["pid"], e["args"]["name"]) for e in trace if e["name"] == "process_name"}
    assert {pid for pid, _ in names} == {0, 1}
    spans = [e for e in trace if e["ph"] == "X"]
    for rank in (0, 1):
        mine = [e for e in spans if e["pid"] == rank]
        tracks = {e["tid"] for e in mine}
        steps = [e for e in mine if e["name"].startswith("step ")]
        comm = [e for e in mine if e["cat"] == "comm"]
        assert len(steps) == 2 and len(comm) == 2 * 20
        assert len(tracks) >= 2  # compute and at least one comm lane
        # Every operation lies inside a step, on the aligned clock.
        for c in comm:
            assert any(s["ts"] - 1 <= c["ts"] and c["ts"] + c["dur"] <= s["ts"] + s["dur"] + 1
                       for s in steps), c
        # The four reductions of a step overlap: extra lanes exist.
        threads = {e["args"]["name"] for e in trace
                   if e["name"] == "thread_name" and e["pid"] == rank}
        assert "compute" in threads and "comm world" in threads and "comm world #2" in threads

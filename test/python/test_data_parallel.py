"""Data parallelism end to end: `loomc --mesh dp=D` and `mpirun -np D`.

The reference is the same model trained on one device with the global batch
(D times the per-rank batch), by PyTorch's own loop and by Loom's
single-device program: every logged loss must agree within 1e-4 relative.
Ranks run oversubscribed on this machine's cores.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import loom

sys.path.insert(0, str(Path(__file__).parent))
from parallel_support import MPI_MARKS  # noqa: E402

pytestmark = MPI_MARKS
np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

from test_training import (OPTIMIZERS, import_example, make_data,  # noqa: E402
                           torch_losses, write_data)

STEPS = 20
GLOBAL_BATCH = 8


@pytest.mark.parametrize("example,dp,opt", [
    ("mlp_example", 2, "sgd"), ("mlp_example", 4, "adamw"),
    ("gpt_example", 2, "adamw"), ("gpt_example", 4, "sgd"),
])
def test_data_parallel_matches_single_device_and_pytorch(example, dp, opt, tmp_path):
    batch = GLOBAL_BATCH // dp if example == "mlp_example" else 4 // dp
    global_batch = batch * dp
    model, args, names, single = import_example(example, tmp_path, global_batch, "import-single")
    _, _, _, per_rank = import_example(example, tmp_path, batch, "import-rank")
    classes = 10 if example == "mlp_example" else 50
    data = make_data(names, args, 3, classes, seed=7)
    data_dir = write_data(tmp_path / "data", data)
    options, make_opt = OPTIMIZERS[opt]

    expected = torch_losses(model, names, data, global_batch, STEPS, make_opt)
    one = single.compile(outdir=tmp_path / "single", **options).train(data_dir, STEPS)
    program = per_rank.compile(outdir=tmp_path / "dp", mesh=f"dp={dp}", **options)
    got = program.train(data_dir, STEPS, ranks=dp)

    np.testing.assert_allclose(one, expected, rtol=1e-4)
    np.testing.assert_allclose(got, expected, rtol=1e-4)
    np.testing.assert_allclose(got, one, rtol=1e-4)


def test_wrong_rank_count_is_an_error_on_every_rank(tmp_path):
    _, args, names, m = import_example("mlp_example", tmp_path, 4, "import-rank")
    data_dir = write_data(tmp_path / "data", make_data(names, args, 3, 10, seed=1))
    program = m.compile(outdir=tmp_path / "dp", mesh="dp=2", optimizer="sgd", lr=0.1)
    for ranks in (1, 3):
        with pytest.raises(loom.LoomError) as info:
            program.train(data_dir, 2, ranks=ranks)
        text = str(info.value)
        assert "compiled for the mesh dp=2,tp=1,pp=1 (2 ranks)" in text, text
        assert f"runs on {ranks} rank(s); launch it with mpirun -np 2" in text, text
    # Run directly (no mpirun): one rank, the same error.
    proc = subprocess.run([str(program.executable), "--data", str(data_dir), "--steps", "2"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "launch it with mpirun -np 2" in proc.stderr, proc.stderr


@pytest.mark.parametrize("mesh,microbatches", [("dp=2", 1), ("pp=2", 2)])
def test_killed_rank_stops_the_job_and_resume_continues(mesh, microbatches, tmp_path):
    """One rank killed mid-run (data parallel, or a pipeline stage): the job
    ends with an error within 60 s (no hang); the last complete checkpoint
    survives and --resume reproduces the uninterrupted loss curve."""
    import signal
    import time
    _, args, names, m = import_example("mlp_example", tmp_path, 4, "import-rank")
    data_dir = write_data(tmp_path / "data", make_data(names, args, 3, 10, seed=3))
    program = m.compile(outdir=tmp_path / "dp", mesh=mesh, microbatches=microbatches,
                        optimizer="adamw", lr=1e-3)
    steps = 3000
    straight = program.train(data_dir, steps, log=tmp_path / "straight.csv", ranks=2)

    ckpt, log = tmp_path / "ckpt", tmp_path / "killed.csv"
    job = subprocess.Popen([*loom.mpirun_command(2), str(program.executable), "--data", str(data_dir),
                            "--steps", str(10 * steps), "--log", str(log),
                            "--checkpoint-dir", str(ckpt), "--checkpoint-every", "5",
                            "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           start_new_session=True)
    deadline = time.time() + 60
    while time.time() < deadline and not list(ckpt.glob("*rank1*.safetensors")):
        time.sleep(0.005)
    ranks = subprocess.run(["pgrep", "-f", "-s", str(job.pid), str(program.executable)],
                           capture_output=True, text=True).stdout.split()
    ranks = [int(p) for p in ranks if int(p) != job.pid]
    assert ranks, "no rank processes found"
    killed_at = time.time()
    os.kill(ranks[-1], signal.SIGKILL)
    try:
        job.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, signal.SIGKILL)
        pytest.fail("the job hung after a rank was killed")
    assert job.returncode != 0
    assert time.time() - killed_at < 60

    resumed = program.train(data_dir, steps, log=log, checkpoint_dir=ckpt,
                            checkpoint_every=5, resume=True, ranks=2)
    assert resumed == straight[: len(resumed)]
    assert len(resumed) == steps

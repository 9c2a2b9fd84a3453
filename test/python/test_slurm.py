"""`srun` launches compiled programs like mpirun does: a single-machine
Slurm (Debian's slurmctld + slurmd + munge, started by the fixture in a
temporary directory and stopped after) runs a dp=2 program on 2 tasks with
PMIx, and it logs the losses of the same program under mpirun.
Needs root and the Slurm packages (utils/setup.sh installs them).
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from parallel_support import MPI_MARKS  # noqa: E402

pytestmark = [*MPI_MARKS,
              pytest.mark.skipif(os.geteuid() != 0, reason="starting Slurm daemons needs root"),
              pytest.mark.skipif(any(shutil.which(t) is None for t in
                                     ("slurmctld", "slurmd", "srun", "munged", "munge")),
                                 reason="Slurm (slurmctld, slurmd, slurm-client, munge) "
                                        "is not installed")]
np = pytest.importorskip("numpy")
pytest.importorskip("torch")
pytest.importorskip("onnx")
from test_training import import_example, make_data, write_data  # noqa: E402


def _start_munge():
    """munged, unless one runs; returns its pid when this started it."""
    if subprocess.run(["munge", "-n"], capture_output=True).returncode == 0:
        return None
    key = Path("/etc/munge/munge.key")
    if not key.exists():
        subprocess.run(["mungekey", "-c"], check=True, capture_output=True)
    shutil.chown(key, "munge", "munge")
    key.chmod(0o400)
    Path("/run/munge").mkdir(parents=True, exist_ok=True)
    shutil.chown("/run/munge", "munge", "munge")
    subprocess.run(["su", "-s", "/bin/sh", "munge", "-c", "/usr/sbin/munged"], check=True)
    for _ in range(50):
        if subprocess.run(["munge", "-n"], capture_output=True).returncode == 0:
            break
        time.sleep(0.1)
    pid = Path("/run/munge/munged.pid")
    return int(pid.read_text()) if pid.exists() else None


@pytest.fixture
def slurm(tmp_path):
    """A one-node Slurm cluster on this machine; yields the environment
    that points srun at it."""
    host = socket.gethostname().split(".")[0]
    root = tmp_path / "slurm"
    for d in ("state", "spool", "log"):
        (root / d).mkdir(parents=True)
    conf = root / "slurm.conf"
    conf.write_text(f"""ClusterName=loomtest
SlurmctldHost={host}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/log/slurmctld.log
SlurmdLogFile={root}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/linear
MpiDefault=pmix
ReturnToService=2
NodeName={host} CPUs={os.cpu_count()} RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
""")
    env = dict(os.environ, SLURM_CONF=str(conf))
    states = subprocess.run(["ps", "-C", "slurmctld,slurmd", "-o", "stat="],
                            capture_output=True, text=True).stdout.split()
    if any(not s.startswith("Z") for s in states):
        pytest.skip("another slurmctld or slurmd runs on this machine (its ports)")
    munged = _start_munge()
    pids = []
    try:
        for daemon in ("slurmctld", "slurmd"):
            subprocess.run([daemon, "-f", str(conf)], check=True, env=env)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            out = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True,
                                 text=True, env=env).stdout.strip()
            if out == "idle":
                break
            time.sleep(0.3)
        else:
            pytest.fail("the Slurm node did not come up: "
                        + (root / "log" / "slurmd.log").read_text()[-2000:])
        yield env
    finally:
        for name in ("slurmd.pid", "slurmctld.pid"):
            pid = root / name
            if pid.exists():
                pids.append(int(pid.read_text()))
        for pid in pids:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        if munged:
            try:
                os.kill(munged, signal.SIGTERM)
            except ProcessLookupError:
                pass


def test_srun_runs_a_dp_program_like_mpirun(slurm, tmp_path):
    _, args, names, per_rank = import_example("mlp_example", tmp_path, 4, "import-rank")
    data_dir = write_data(tmp_path / "data", make_data(names, args, 3, 10, seed=2))
    program = per_rank.compile(outdir=tmp_path / "dp", mesh="dp=2", optimizer="sgd", lr=0.05)
    assert "allReduceStart" in (tmp_path / "dp" / "step.cpp").read_text()
    expected = program.train(data_dir, 6, log=tmp_path / "mpirun.csv", mpirun=True)
    proc = subprocess.run(
        ["srun", "-N", "1", "-n", "2", "--mpi=pmix", str(program.executable), "--data",
         str(data_dir), "--steps", "6", "--log", str(tmp_path / "srun.csv"), "--quiet"],
        capture_output=True, text=True, env=slurm, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = (tmp_path / "srun.csv").read_text().splitlines()[1:]
    got = [float(r.split(",")[1]) for r in rows]
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    # A launch of the wrong size is the runtime's clear error, under srun too.
    proc = subprocess.run(
        ["srun", "-N", "1", "-n", "1", "--mpi=pmix", str(program.executable), "--data",
         str(data_dir), "--steps", "1", "--quiet"],
        capture_output=True, text=True, env=slurm, timeout=120)
    assert proc.returncode != 0
    assert "launch it with mpirun -np 2" in proc.stderr, proc.stderr

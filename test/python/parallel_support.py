"""What the tests that run compiled programs under mpirun share (not a test
module itself): where the build is, and the skip marks for a missing loomc
or mpirun. Launch lines come from `loom.mpirun_command`."""

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("LOOM_BUILD_DIR", ROOT / "build"))
LOOMC = BUILD / "bin" / "loomc"
MPIRUN = shutil.which("mpirun")

# `pytestmark = MPI_MARKS` in a test module skips it without either.
MPI_MARKS = [
    pytest.mark.skipif(not LOOMC.exists(), reason="loomc not built"),
    pytest.mark.skipif(MPIRUN is None, reason="mpirun not installed"),
]

"""Data and tensor parallelism together: `loomc --mesh dp=2,tp=2` on 4 ranks.

World rank r has coordinates (d, p, t) with r = (d*pp + p)*tp + t. The tp
ranks of one d (2d, 2d+1) load their weight slices and read the same rows,
batch s*dp + d of step s; the dp ranks of one t average gradients. Every
logged loss must agree within 1e-4 (relative) with PyTorch's loop and with
Loom's single-device program on the global batch (dp times the per-rank
batch), and the emitted step must hold all-reduces on both groups.
"""

import re
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
DP, TP = 2, 2


def groups_of_all_reduces(step_cpp):
    return re.findall(r"allReduceStart\(ctx, [^;]*, (Group::\w+)\);", step_cpp)


@pytest.mark.parametrize("example", ["mlp_example", "gpt_example"])
def test_dp_tp_matches_single_device_and_pytorch(example, tmp_path):
    batch = 4 if example == "mlp_example" else 2
    global_batch = batch * DP
    model, args, names, single = import_example(example, tmp_path, global_batch, "import-single")
    _, _, _, per_rank = import_example(example, tmp_path, batch, "import-rank")
    classes = 10 if example == "mlp_example" else 50
    data = make_data(names, args, 3, classes, seed=7)
    data_dir = write_data(tmp_path / "data", data)
    options, make_opt = OPTIMIZERS["sgd"]

    expected = torch_losses(model, names, data, global_batch, STEPS, make_opt)
    one = single.compile(outdir=tmp_path / "single", **options).train(data_dir, STEPS)
    program = per_rank.compile(outdir=tmp_path / "dptp", mesh=f"dp={DP},tp={TP}", **options)
    assert program.mesh_size() == DP * TP
    step_cpp = (tmp_path / "dptp" / "step.cpp").read_text()
    assert "/*dp=*/2, /*tp=*/2" in step_cpp
    groups = groups_of_all_reduces(step_cpp)
    # Megatron's f and g (tp) and the gradient buckets and loss (dp).
    assert "Group::Tp" in groups and "Group::Dp" in groups, groups
    assert set(groups) == {"Group::Tp", "Group::Dp"}, groups
    got = program.train(data_dir, STEPS, ranks=DP * TP)

    assert len(got) == STEPS
    np.testing.assert_allclose(one, expected, rtol=1e-4)
    np.testing.assert_allclose(got, expected, rtol=1e-4)
    np.testing.assert_allclose(got, one, rtol=1e-4)


def test_dp_tp_wrong_rank_count_is_an_error_on_every_rank(tmp_path):
    _, args, names, m = import_example("mlp_example", tmp_path, 4)
    data_dir = write_data(tmp_path / "data", make_data(names, args, 3, 10, seed=1))
    program = m.compile(outdir=tmp_path / "dptp", mesh=f"dp={DP},tp={TP}",
                        optimizer="sgd", lr=0.1)
    for ranks in (2, 3):
        with pytest.raises(loom.LoomError) as info:
            program.train(data_dir, 2, ranks=ranks)
        text = str(info.value)
        # Each rank names itself: every rank found the mismatch (no hang).
        for r in range(ranks):
            assert f"rank {r}: the program was compiled for the mesh dp=2,tp=2,pp=1 " \
                   f"(4 ranks) but runs on {ranks} rank(s)" in text, text
    proc = subprocess.run([str(program.executable), "--data", str(data_dir), "--steps", "2"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "launch it with mpirun -np 4" in proc.stderr, proc.stderr

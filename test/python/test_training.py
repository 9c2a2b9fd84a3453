"""Compiled training (loomc + lib/Runtime) against the frameworks' own loops.

Each test imports a model, compiles it with `Module.compile` (loomc:
autodiff, optimizer, lowering, memory plan, C++, build) and trains it with
`Program.train` (OUTDIR/train); the reference is PyTorch's (or JAX +
optax's) own training loop on the same rows of the same data, starting
from the same weights. Every logged loss must agree within 1e-4 relative.
"""

import copy
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import loom

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("LOOM_BUILD_DIR", ROOT / "build"))
LOOMC = BUILD / "bin" / "loomc"
sys.path.insert(0, str(Path(__file__).parent))

pytestmark = pytest.mark.skipif(not LOOMC.exists(), reason="loomc not built")
np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

STEPS = 20
ROWS = 3  # batches in each data file; steps wrap around them


def make_data(names, example_args, rows, classes, seed):
    """`rows` batches shaped like the example inputs: floats from a normal
    distribution, integers (ids, labels) uniform in [0, classes)."""
    rng = np.random.default_rng(seed)
    data = {}
    for name, arg in zip(names, example_args):
        shape = (rows * arg.shape[0], *arg.shape[1:])
        if arg.dtype.is_floating_point:
            data[name] = rng.standard_normal(shape).astype(np.float32)
        else:
            data[name] = rng.integers(0, classes, shape).astype(np.int64)
    return data


def batch_rows(step, batch, total):
    return [(step * batch + i) % total for i in range(batch)]


def torch_losses(model, names, data, batch, steps, make_opt, bf16=False):
    """PyTorch's own loop; `bf16`: the forward under CPU bf16 autocast."""
    model = copy.deepcopy(model)
    model.train()
    opt = make_opt(model.parameters())
    total = len(next(iter(data.values())))
    losses = []
    for s in range(steps):
        rows = batch_rows(s, batch, total)
        args = [torch.from_numpy(data[n][rows]) for n in names]
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = model(*args)
        loss.float().backward()
        opt.step()
        losses.append(float(loss.detach().float()))
    return losses


def import_example(example, tmp_path, batch=None, workdir="import"):
    """The test model `example` (with its default batch, or `batch`; the
    weights do not depend on it) imported by loom.from_torch into
    tmp_path/workdir: (model, example args, input names, loom.Module)."""
    from models import torch_models
    make = getattr(torch_models, example)
    model, args = make() if batch is None else make(batch=batch)
    names = ["x", "labels"] if example == "mlp_example" else ["ids", "labels"]
    m = loom.from_torch(model, args, input_names=names, workdir=tmp_path / workdir)
    return model, args, names, m


def write_data(directory, data):
    directory.mkdir(parents=True, exist_ok=True)
    for name, value in data.items():
        np.save(directory / f"{name}.npy", value)
    return directory


OPTIMIZERS = {
    "sgd": (dict(optimizer="sgd", lr=0.1), lambda p: torch.optim.SGD(p, lr=0.1)),
    "adamw": (dict(optimizer="adamw", lr=1e-3, weight_decay=0.01),
              lambda p: torch.optim.AdamW(p, lr=1e-3, weight_decay=0.01)),
}


@pytest.mark.parametrize("opt", sorted(OPTIMIZERS))
@pytest.mark.parametrize("example", ["mlp_example", "gpt_example", "llama_example"])
def test_pytorch_training_parity(example, opt, tmp_path):
    model, args, names, m = import_example(example, tmp_path)
    batch = args[0].shape[0]
    data = make_data(names, args, ROWS, 10 if example == "mlp_example" else 50, seed=1)
    options, make_opt = OPTIMIZERS[opt]
    expected = torch_losses(model, names, data, batch, STEPS, make_opt)
    program = m.compile(outdir=tmp_path / "out", **options)
    # The linear layers' biases are added by their gemms
    # (loom-fuse-gemm-bias), and GPT's tanh GELU (raised from its exported
    # formula by loom-raise-composites) is its fc gemm's epilogue too, and
    # its gradient that of the backward gemm into the GELU's output, so the
    # parity covers all three.
    step = (tmp_path / "out" / "step.cpp").read_text()
    assert "cpu::gemmBias(" in step or example == "llama_example"  # no biases
    if example == "llama_example":
        # The rotary embeddings read the halves of each head where the q
        # and k products wrote them (loom-fold-layout-copies): no slice is
        # copied, and the forward transposes of q and k go too (4 copies
        # per layer were 6).
        assert '"copy slice (' not in step
        transposes = re.findall(r'"copy transpose \((\S*)/', step)
        assert transposes and len(transposes) <= 4 * len(set(transposes)), transposes
    if example == "gpt_example":
        assert step.count("cpu::gemmBiasGelu(") == 2, "one per block"
        assert step.count("cpu::gemmDGelu(") == 2, "one per block"
    if opt == "adamw":
        # Each parameter's AdamW update is one loop with both moments
        # (loom-merge-kernels): no kernel computes a moment alone.
        updates = re.findall(r"// kernel (\S*sqrt\+div\S*) ->", step)
        assert updates and all(u.count("+") >= 10 for u in updates), updates
        assert not re.search(r"// kernel (sub\+mul\+add|mul\+mul\+mul\+add) ->", step)
    got = program.train(write_data(tmp_path / "data", data), STEPS)
    assert len(got) == STEPS
    np.testing.assert_allclose(got, expected, rtol=1e-4)
    # The loss falls: training, not just evaluating.
    assert got[-1] < got[0]


def import_jax(example, model, tmp_path, batch=None):
    """JAX's `model` (test/python/models/jax_models.py) at its `example`
    (with its default batch, or `batch`) imported by loom.from_jax, which
    writes the parameter values itself (checked here against the leaves):
    (params, example inputs, loom.Module)."""
    jax = pytest.importorskip("jax")
    st = pytest.importorskip("safetensors.numpy")
    from models import jax_models
    make = getattr(jax_models, example)
    params, *inputs = make() if batch is None else make(batch=batch)
    m = loom.from_jax(getattr(jax_models, model), params, *inputs, params=(0,),
                      workdir=tmp_path / "import")
    written = st.load_file(m.weights)
    leaves = jax.tree_util.tree_flatten_with_path(params)[0]
    assert len(written) == len(leaves)
    for path, leaf in leaves:
        name = "params" + "".join(f".{getattr(k, 'key', getattr(k, 'idx', k))}" for k in path)
        np.testing.assert_array_equal(written[name], np.asarray(leaf))
    return params, inputs, m


def jax_data(names, inputs, classes, seed):
    """ROWS batches shaped like the example inputs: floats from a normal
    distribution, integers uniform in [0, classes) keeping JAX's dtype
    (int32: the compiled program reads them as i32)."""
    rng = np.random.default_rng(seed)
    data = {}
    for name, arg in zip(names, inputs):
        shape = (ROWS * arg.shape[0], *arg.shape[1:])
        if np.issubdtype(arg.dtype, np.floating):
            data[name] = rng.standard_normal(shape).astype(np.float32)
        else:
            data[name] = rng.integers(0, classes, shape).astype(arg.dtype)
    return data


def jax_adamw_losses(model, params, names, data, batch):
    """jax.value_and_grad + optax.adamw on the same rows as Program.train."""
    jax = pytest.importorskip("jax")
    optax = pytest.importorskip("optax")
    from models import jax_models
    opt = optax.adamw(1e-3, weight_decay=0.01)
    state = opt.init(params)
    grad_fn = jax.jit(jax.value_and_grad(getattr(jax_models, model)))
    total = len(data[names[0]])
    losses = []
    for s in range(STEPS):
        rows = batch_rows(s, batch, total)
        loss, g = grad_fn(params, *(data[n][rows] for n in names))
        updates, state = opt.update(g, state, params)
        params = optax.apply_updates(params, updates)
        losses.append(float(loss))
    return losses


# model: (example maker, input names, classes)
JAX_MODELS = {
    "mlp": ("mlp_example", ["x", "labels"], 10),
    # The embedding lookup gathers wte with JAX's i32 ids (and its gradient
    # scatter-adds with them): the compiled program takes them as they are.
    # (StableHLO's gather clamps its indices, so the import clamps them
    # first: an id outside the vocabulary reads the last row, as in JAX;
    # the kernels' range errors are checked in RuntimeKernelsTest.)
    "gpt": ("gpt_example", ["ids", "labels"], 50),
}


@pytest.mark.parametrize("model", sorted(JAX_MODELS))
def test_jax_training_parity(model, tmp_path):
    example, names, classes = JAX_MODELS[model]
    params, inputs, m = import_jax(example, model, tmp_path)
    batch = inputs[0].shape[0]
    data = jax_data(names, inputs, classes, seed=4)
    expected = jax_adamw_losses(model, params, names, data, batch)
    program = m.compile(outdir=tmp_path / "out", optimizer="adamw", lr=1e-3,
                        weight_decay=0.01)
    if model == "gpt":
        step_cpp = (tmp_path / "out" / "step.cpp").read_text()
        assert '{"ids", Role::Data, DType::I32' in step_cpp
        assert "cpu::gather(" in step_cpp and "cpu::scatterAdd(" in step_cpp
    got = program.train(write_data(tmp_path / "data", data), STEPS)
    assert len(got) == STEPS
    np.testing.assert_allclose(got, expected, rtol=1e-4)
    assert got[-1] < got[0]


def test_checkpoint_kill_and_resume(tmp_path):
    """Kill a run after its first checkpoint, resume: the loss curve is the
    uninterrupted run's."""
    model, args, names, m = import_example("mlp_example", tmp_path)
    data = make_data(names, args, ROWS, 10, seed=5)
    data_dir = write_data(tmp_path / "data", data)
    program = m.compile(outdir=tmp_path / "out", optimizer="adamw", lr=1e-3)
    steps = 3000
    straight = program.train(data_dir, steps, log=tmp_path / "straight.csv")

    ckpt = tmp_path / "ckpt"
    log = tmp_path / "killed.csv"
    proc = subprocess.Popen([str(program.executable), "--data", str(data_dir), "--steps",
                             str(steps), "--log", str(log), "--checkpoint-dir", str(ckpt),
                             "--checkpoint-every", "5", "--quiet"])
    deadline = time.time() + 60
    while time.time() < deadline and proc.poll() is None:
        if ckpt.exists() and any(ckpt.glob("*.safetensors")):
            proc.send_signal(signal.SIGKILL)
            break
        time.sleep(0.001)
    proc.wait()
    resumed = program.train(data_dir, steps, log=log, checkpoint_dir=ckpt,
                            checkpoint_every=5, resume=True)
    assert resumed == straight


def test_memory_plan_matches_runtime_counters(tmp_path):
    model, args, names, m = import_example("gpt_example", tmp_path)
    data = {n: a.numpy() for n, a in zip(names, args)}
    program = m.compile(outdir=tmp_path / "out", optimizer="adamw", lr=1e-3)
    counters = tmp_path / "counters.json"
    program.train(write_data(tmp_path / "data", data), 2,
                  extra_args=["--memory-counters", str(counters)])
    plan = json.loads((tmp_path / "out" / "memory.json").read_text())["functions"][0]
    measured = json.loads(counters.read_text())
    planned_total = plan["peak_bytes"]
    measured_total = (measured["params_bytes"] + measured["state_bytes"] +
                      measured["batch_bytes"] + measured["results_bytes"] +
                      measured["arena_peak_live_bytes"])
    assert abs(measured_total - planned_total) <= 0.05 * planned_total, (plan, measured)
    assert measured["arena_peak_live_bytes"] == plan["peak_live_bytes"]
    # The updates are written over the parameters and state (in place):
    # the runtime holds no second copy of them, only the loss.
    assert measured["results_bytes"] <= 4 < measured["params_bytes"], measured


def cmake_cache():
    entries = {}
    for line in (BUILD / "CMakeCache.txt").read_text().splitlines():
        if ":" in line and "=" in line and not line.startswith(("//", "#")):
            key, value = line.split("=", 1)
            entries[key.split(":")[0]] = value
    return entries


def test_programs_use_the_chosen_gemm_library_and_instruction_set(tmp_path):
    """OUTDIR/train is built for cmake/LoomCpu.cmake's instruction set and
    loads its GEMM library (oneDNN wherever it is installed, as make build
    does), not OpenBLAS."""
    cache = cmake_cache()
    model, args, names, m = import_example("mlp_example", tmp_path)
    program = m.compile(outdir=tmp_path / "out", optimizer="sgd", lr=1e-2)
    build = (tmp_path / "out" / "build.sh").read_text()
    arch = cache["LOOM_CPU_ARCH"]
    if arch != "generic":
        assert f"'-march={arch}' '-ffp-contract=off'" in build, build
    linked = subprocess.run(["ldd", str(program.executable)], capture_output=True,
                            text=True, check=True).stdout
    if Path("/usr/include/dnnl.h").exists():
        assert cache["LOOM_DNNL_LIBRARY"].endswith("libdnnl.so"), cache["LOOM_DNNL_LIBRARY"]
        assert "libdnnl" in linked and "libopenblas" not in linked, linked


def test_loss_must_be_a_scalar(tmp_path):
    (tmp_path / "m.mlir").write_text("""
func.func @main(%w: tensor<4xf32> {loom.param, loom.name = "w"}, %x: tensor<2x4xf32> {loom.name = "x"}) -> tensor<2x4xf32> {
  %b = loom.broadcast %w, dims = [1] : tensor<4xf32> -> tensor<2x4xf32>
  %y = loom.mul %x, %b : tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
""")
    proc = subprocess.run([str(LOOMC), str(tmp_path / "m.mlir"), "-o", str(tmp_path / "out")],
                          capture_output=True, text=True)
    assert proc.returncode != 0
    assert "scalar" in proc.stderr or "rank-0" in proc.stderr, proc.stderr
    assert not (tmp_path / "out" / "train").exists()


def test_bad_data_is_an_error_and_overwrites_nothing(tmp_path):
    model, args, names, m = import_example("mlp_example", tmp_path)
    program = m.compile(outdir=tmp_path / "out", optimizer="sgd", lr=0.1)
    data_dir = tmp_path / "data"
    good = {n: a.numpy() for n, a in zip(names, args)}
    log = tmp_path / "loss.csv"
    log.write_text("precious\n")
    cases = {
        "missing": {"x": good["x"]},
        "dtype": {"x": good["x"].astype(np.float64), "labels": good["labels"]},
        "rows": {"x": good["x"][:1], "labels": good["labels"][:1]},
    }
    for case, files in cases.items():
        for f in data_dir.glob("*.npy"):
            f.unlink()
        write_data(data_dir, files)
        with pytest.raises(loom.LoomError) as info:
            program.train(data_dir, 2, log=log)
        assert "labels.npy" in str(info.value) or "x.npy" in str(info.value), (case, info.value)
        assert log.read_text() == "precious\n", case


@pytest.mark.skipif(__import__("shutil").which("mpirun") is None, reason="no mpirun")
def test_mpirun_np_1_equals_a_direct_run(tmp_path):
    model, args, names, m = import_example("mlp_example", tmp_path)
    data_dir = write_data(tmp_path / "data", make_data(names, args, ROWS, 10, seed=9))
    program = m.compile(outdir=tmp_path / "out", optimizer="sgd", lr=0.1, momentum=0.9)
    direct = program.train(data_dir, 5, log=tmp_path / "direct.csv")
    launched = program.train(data_dir, 5, log=tmp_path / "mpirun.csv", mpirun=True)
    assert launched == direct


def export_gpt(tmp_path, name, dynamic, dynamo=False):
    """The test GPT exported with a dynamic batch axis (TorchScript's
    dynamic_axes, or dynamo's dynamic_shapes), or with the example's fixed
    batch of 2."""
    import warnings
    from models import torch_models
    model, args = torch_models.gpt_example()
    names = ["ids", "labels"]
    path = tmp_path / name
    if dynamo:
        # optimize=False, as loom.from_torch exports: onnxscript's optimizer
        # folds the tied LM head's transpose of wte into a second
        # initializer, an untied copy that would then train on its own.
        batch = torch.export.Dim("batch", min=1, max=64)
        dynamic_args = dict(dynamic_shapes=({0: batch}, {0: batch}), dynamo=True,
                            optimize=False)
    else:
        dynamic_args = dict(
            dynamic_axes={n: {0: "batch"} for n in names} if dynamic else None,
            dynamo=False, do_constant_folding=False,
            training=torch.onnx.TrainingMode.TRAINING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, path, input_names=names, output_names=["loss"],
                          opset_version=18, **dynamic_args)
    return model, args, names, path


def test_dynamic_batch_export_compiles_at_any_micro_batch(tmp_path):
    """One export with a dynamic batch axis, compiled by `loomc --micro-batch`
    at 2 and 4 rows (and dynamo's export with dynamic_shapes at 4): each
    program trains like PyTorch stepping through the
    same rows 2 or 4 at a time (the two loss curves differ, so each matches
    only at its own batch); a fixed-batch export asked for another size is
    an error naming the input that fixes it."""
    import json
    import subprocess
    from loom._tools import find_tool

    model, args, names, path = export_gpt(tmp_path, "gpt.onnx", dynamic=True)
    *_, dynamo_path = export_gpt(tmp_path, "gpt-dynamo.onnx", dynamic=True, dynamo=True)
    data = make_data(names, args, 4, 50, seed=5)  # 8 rows
    options, make_opt = OPTIMIZERS["sgd"]
    for micro, path in ((2, path), (4, path), (4, dynamo_path)):
        out = tmp_path / f"b{micro}-{path.stem}"
        subprocess.run([find_tool("loomc"), str(path), "-o", str(out), "--micro-batch",
                        str(micro), "--optimizer", "sgd", "--lr", "0.1"], check=True)
        assert json.loads((out / "plan.json").read_text())["micro_batch"] == micro
        got = loom.Program(out).train(write_data(tmp_path / "data", data), 6)
        expected = torch_losses(model, names, data, micro, 6, make_opt)
        np.testing.assert_allclose(got, expected, rtol=1e-4)

    _, _, _, fixed = export_gpt(tmp_path, "fixed.onnx", dynamic=False)
    proc = subprocess.run([find_tool("loomc"), str(fixed), "-o", str(tmp_path / "bad"),
                           "--micro-batch", "4"], capture_output=True, text=True)
    assert proc.returncode != 0
    assert "graph input 'ids' fixes the batch at 2" in proc.stderr, proc.stderr


def test_traced_modules_compile_at_another_micro_batch(tmp_path):
    """Modules of loom.from_torch (traced at 4 rows) and loom.from_jax
    (traced at 4) compiled with micro_batch=2 and 8 are traced again at
    that batch and train like PyTorch / JAX + optax stepping through the
    same rows 2 or 8 at a time; a module whose IR was transformed cannot be
    traced again, and loomc names the argument that fixes its batch."""
    model, args, names, m = import_example("mlp_example", tmp_path)
    assert m.batch == 4
    data = make_data(names, args, 4, 10, seed=2)  # 16 rows
    options, make_opt = OPTIMIZERS["sgd"]
    program = m.compile(outdir=tmp_path / "torch2", micro_batch=2, **options)
    got = program.train(write_data(tmp_path / "data", data), 6)
    np.testing.assert_allclose(got, torch_losses(model, names, data, 2, 6, make_opt),
                               rtol=1e-4)
    with pytest.raises(loom.LoomError, match="the model's batch is fixed at 4 by its "
                                             "argument 'x'"):
        m.run_pass(["--loom-shape-inference"]).compile(outdir=tmp_path / "bad",
                                                       micro_batch=2, **options)

    example, jnames, classes = JAX_MODELS["mlp"]
    params, inputs, jm = import_jax(example, "mlp", tmp_path / "jax")
    assert jm.batch == 4
    jdata = jax_data(jnames, inputs, classes, seed=4)  # 12 rows
    program = jm.compile(outdir=tmp_path / "jax8", micro_batch=8, optimizer="adamw",
                         lr=1e-3, weight_decay=0.01)
    got = program.train(write_data(tmp_path / "jdata", jdata), STEPS)
    np.testing.assert_allclose(got, jax_adamw_losses("mlp", params, jnames, jdata, 8),
                               rtol=1e-4)


def test_jax_shape_polymorphic_export_imports_at_any_batch(tmp_path):
    """A JAX export with a symbolic batch (jax.export with symbolic_shape,
    serialized and read back) imports at the batch of the example inputs
    (4: static shapes, no shape assertions left) and compiles at 8: both
    train like JAX + optax on the same rows."""
    jax = pytest.importorskip("jax")
    from jax import export
    from models import jax_models
    _, names, classes = JAX_MODELS["mlp"]
    params, x, labels = jax_models.mlp_example()
    b, = export.symbolic_shape("b")
    blob = export.export(jax.jit(jax_models.mlp))(
        params, jax.ShapeDtypeStruct((b, *x.shape[1:]), x.dtype),
        jax.ShapeDtypeStruct((b,), labels.dtype)).serialize()
    m = loom.from_jax(blob, params, x, labels, params=(0,),
                      arg_names=["params", "x", "labels"], workdir=tmp_path / "import")
    assert m.batch == 4 and "?x" not in m.ir and "tensor<4x16xf32>" in m.ir
    data = write_data(tmp_path / "data", jax_data(names, [x, labels], classes, seed=4))
    for micro in (4, 8):
        program = m.compile(outdir=tmp_path / f"b{micro}", micro_batch=micro,
                            optimizer="adamw", lr=1e-3, weight_decay=0.01)
        expected = jax_adamw_losses("mlp", params, names,
                                    jax_data(names, [x, labels], classes, seed=4), micro)
        np.testing.assert_allclose(program.train(data, STEPS), expected, rtol=1e-4)

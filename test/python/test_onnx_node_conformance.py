"""ONNX backend node tests (Debian's libonnx-testdata) through Loom.

For each directory of /usr/share/libonnx-testdata/data/node/: import
model.onnx with `loom-translate --import-onnx` (models older than the
importer's opsets are first converted with onnx.version_converter), convert
test_data_set_0/input_*.pb to .npy with onnx.numpy_helper, run `loom-run`,
and compare each result with output_*.pb using the ONNX backend test
runner's tolerances (rtol 1e-3, atol 1e-7; integers and booleans exactly).

A model whose import reports an unsupported op, type or attribute is
skipped with the importer's reason; any other import error, a loom-run
error or a wrong value fails. The last lines of the pytest output are

    ONNX node tests: P passed, F failed, S skipped (unsupported op)

and the skip reasons, grouped. The PyTorch model tests of the same package
(data/pytorch-converted/ and data/pytorch-operator/, same layout) run the
same way with the same tolerances, summarised as

    ONNX pytorch-converted tests: P passed, F failed, S skipped (unsupported op)
    ONNX pytorch-operator tests: P passed, F failed, S skipped (unsupported op)

Tools come from $LOOM_BUILD_DIR/bin (default: the repository's build/).
"""

import collections
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import numpy_helper  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("LOOM_BUILD_DIR", ROOT / "build"))
LOOM_TRANSLATE = BUILD / "bin" / "loom-translate"
LOOM_RUN = BUILD / "bin" / "loom-run"
DATA = Path("/usr/share/libonnx-testdata/data/node")
MODEL_SUITES = ("pytorch-converted", "pytorch-operator")

# The importer's supported default-domain opsets (include/loom/Import/Onnx.h).
MIN_OPSET, MAX_OPSET = 13, 21
RTOL, ATOL = 1e-3, 1e-7

# Import warnings that mean the imported graph cannot compute what the model
# does (dropout in training mode is imported as the identity).
NOT_APPLIED = re.compile(r"not applied|Loom has no ")

# Import errors that mean "Loom does not support this (yet)", not a bug.
UNSUPPORTED = re.compile(
    r"not supported|unsupported|does not support|only .* (is|are) supported|"
    r"must be known at import time|no default-domain ONNX opset")

pytestmark = pytest.mark.skipif(
    not (LOOM_TRANSLATE.exists() and LOOM_RUN.exists() and DATA.is_dir()),
    reason=f"needs loom-translate and loom-run in {BUILD} and {DATA} "
           "(Debian package libonnx-testdata)")

# Where the test data, not Loom, departs from the semantics Loom implements.
# Each is an expected failure (strict: it is reported if it starts passing).
KNOWN_DIFFERENCES = {
    "test_cast_FLOAT_to_BFLOAT16":
        "the expected bfloat16 values were made by truncating the float32 "
        "bits (older ONNX reference); loom.convert rounds to nearest even, "
        "like PyTorch, JAX and ml_dtypes",
    "test_castlike_BFLOAT16_to_FLOAT":
        "the test data's input 'like' has shape [1] but the model declares "
        "[3, 4]; loom-run rejects an input whose shape contradicts its type",
    "test_castlike_FLOAT_to_BFLOAT16":
        "the test data's input 'like' has shape [1] but the model declares "
        "[3, 4]; loom-run rejects an input whose shape contradicts its type",
    "test_castlike_BFLOAT16_to_FLOAT_expanded":
        "the test data's input 'like' has shape [1] but the model declares "
        "[3, 4]; loom-run rejects an input whose shape contradicts its type",
    "test_castlike_FLOAT_to_BFLOAT16_expanded":
        "the test data's input 'like' has shape [1] but the model declares "
        "[3, 4]; loom-run rejects an input whose shape contradicts its type",
}

# Node tests of ops the importer implements (Cos/Sin, the logical ops,
# IsNaN/IsInf, Pad, GatherElements, variadic Sum/Mean/Max/Min, integer Mod,
# Trilu): these must import and match, so a regression to "unsupported" is
# a failure here rather than a silent skip.
MUST_RUN = {
    "test_cos", "test_cos_example", "test_sin", "test_sin_example",
    *(f"test_{op}{s}" for op in ("and", "or", "xor")
      for s in ("2d", "3d", "4d", "_bcast3v1d", "_bcast3v2d", "_bcast4v2d",
                "_bcast4v3d", "_bcast4v4d")),
    "test_not_2d", "test_not_3d", "test_not_4d",
    "test_isnan", "test_isinf", "test_isinf_negative", "test_isinf_positive",
    "test_constant_pad", "test_edge_pad", "test_reflect_pad",
    "test_gather_elements_0", "test_gather_elements_1",
    "test_gather_elements_negative_indices",
    "test_sum_example", "test_sum_one_input", "test_sum_two_inputs",
    "test_mean_example", "test_mean_one_input", "test_mean_two_inputs",
    "test_max_example", "test_max_one_input", "test_max_two_inputs",
    "test_min_example", "test_min_one_input", "test_min_two_inputs",
    "test_mod_broadcast", "test_mod_int64_fmod", "test_mod_mixed_sign_int32",
    "test_mod_mixed_sign_int64",
    *(f"test_{t}{s}" for t in ("tril", "triu")
      for s in ("", "_neg", "_out_pos", "_pos", "_square", "_square_neg",
                "_zero")),
    "test_tril_one_row_neg", "test_tril_out_neg", "test_triu_one_row",
    "test_triu_out_neg_out",
}

# Cases whose integer graph inputs decide a result shape (Pad's pads): Loom
# compiles static shapes, so these inputs become initializers holding the
# test data's values; everything else (data, constant value) stays an input.
FREEZE_INTEGER_INPUTS = {"test_constant_pad", "test_edge_pad", "test_reflect_pad"}

CASES = [pytest.param(name, marks=pytest.mark.xfail(reason=KNOWN_DIFFERENCES[name],
                                                    strict=True))
         if name in KNOWN_DIFFERENCES else name
         for name in sorted(p.name for p in DATA.iterdir() if (p / "model.onnx").exists())] \
    if DATA.is_dir() else []

MODEL_CASES = [pytest.param(suite, p.name, id=f"{suite}/{p.name}")
               for suite in MODEL_SUITES
               if (DATA.parent / suite).is_dir()
               for p in sorted((DATA.parent / suite).iterdir())
               if (p / "model.onnx").exists()]

# suite ("node", "pytorch-converted", ...) -> counts / skip reasons
RESULTS = collections.defaultdict(collections.Counter)
SKIP_REASONS = collections.defaultdict(collections.Counter)
FAILURES = []


class _Summary:
    """Prints the summary line after pytest's own (a plugin registered by
    the fixture below)."""

    def pytest_terminal_summary(self, terminalreporter):
        if not any(sum(r.values()) for r in RESULTS.values()):
            return
        tr = terminalreporter
        tr.section("ONNX node conformance")
        for suite in ("node", *MODEL_SUITES):
            for reason, count in sorted(SKIP_REASONS[suite].items(),
                                        key=lambda kv: (-kv[1], kv[0])):
                tr.write_line(f"  {suite} skipped {count:3d}: {reason}")
        for name, why in FAILURES:
            tr.write_line(f"  FAILED {name}: {why}")
        for name, reason in KNOWN_DIFFERENCES.items():
            tr.write_line(f"  expected failure {name}: {reason}")
        for suite in ("node", *MODEL_SUITES):
            counts = RESULTS[suite]
            if not sum(counts.values()):
                continue
            known = (f", {counts['known difference']} expected failure (known "
                     "test-data difference)" if suite == "node" else "")
            tr.write_line(f"ONNX {suite} tests: {counts['passed']} passed, "
                          f"{counts['failed']} failed, {counts['skipped']} skipped "
                          f"(unsupported op){known}")


@pytest.fixture(scope="module", autouse=True)
def summary(request):
    plugin = _Summary()
    request.config.pluginmanager.register(plugin, "loom-onnx-node-summary")
    yield
    # Stays registered so that pytest_terminal_summary runs at the end.


def skip(reason, suite="node"):
    RESULTS[suite]["skipped"] += 1
    SKIP_REASONS[suite][reason] += 1
    pytest.skip(reason)


def fail(name, why, suite="node"):
    if suite == "node" and name in KNOWN_DIFFERENCES:
        RESULTS[suite]["known difference"] += 1
        pytest.fail(why, pytrace=False)
    RESULTS[suite]["failed"] += 1
    FAILURES.append((name if suite == "node" else f"{suite}/{name}",
                     why.splitlines()[0][:300]))
    pytest.fail(why, pytrace=False)


def first_error(stderr):
    """The text of the first `error:` line, with locations and names
    shortened for grouping."""
    for line in stderr.splitlines():
        if "error:" in line:
            return line.split("error:", 1)[1].strip()
    return stderr.strip()[:300] or "no diagnostic"


def skip_reason(message):
    """Import errors grouped by cause: names of values replaced by '...'."""
    reason = re.sub(r"unnamed node producing '[^']*'|node '[^']*'", "node", message)
    reason = re.sub(r"graph input '[^']*'", "graph input", reason)
    reason = re.sub(r"; Loom imports .*", "", reason)
    reason = re.sub(r" \(first at [^)]*\)", "", reason)
    return reason[:200]


def opset(model):
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return entry.version
    return None


def to_array(pb, elem_type):
    """The array a TensorProto file holds, for a graph value of ONNX element
    type `elem_type`. bfloat16 data comes as uint16 bit patterns (the test
    data even stores it as UINT16): it becomes ml_dtypes.bfloat16, which
    NumPy saves as '<V2' (what loom-run reads as bf16)."""
    tensor = onnx.TensorProto()
    tensor.ParseFromString(pb.read_bytes())
    array = numpy_helper.to_array(tensor)
    if elem_type == onnx.TensorProto.BFLOAT16 and array.dtype == np.uint16:
        import ml_dtypes
        array = array.view(ml_dtypes.bfloat16)
    # copy(order="C") keeps 0-d arrays 0-d (np.ascontiguousarray would not).
    return tensor.name, array.copy(order="C")


def sanitize(name):
    """loom-run's file name for a result name."""
    out = re.sub(r"[^A-Za-z0-9._-]", "_", name)
    return "_" + out if out in ("", ".", "..") else out


@pytest.mark.parametrize("case", CASES)
def test_onnx_node(case, tmp_path):
    run_case("node", case, tmp_path)


@pytest.mark.parametrize("suite,case", MODEL_CASES)
def test_onnx_pytorch_model(suite, case, tmp_path):
    run_case(suite, case, tmp_path)


def freeze_integer_inputs(model, data_set):
    """`model` with its integer graph inputs turned into initializers that
    hold test_data_set_0's values for them."""
    initializers = {i.name for i in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in initializers]
    pbs = sorted(data_set.glob("input_*.pb"), key=lambda p: int(p.stem.split("_")[1]))
    for value, pb in zip(inputs, pbs):
        if value.type.tensor_type.elem_type in (onnx.TensorProto.INT64,
                                                onnx.TensorProto.INT32):
            _, array = to_array(pb, value.type.tensor_type.elem_type)
            model.graph.initializer.append(numpy_helper.from_array(array, value.name))
    return model


def run_case(suite, case, tmp_path):
    directory = DATA.parent / suite / case
    must_run = suite == "node" and case in MUST_RUN
    skip_ = lambda reason: (  # noqa: E731
        fail(case, f"must run but was skipped: {reason}", suite) if must_run
        else skip(reason, suite))
    fail_ = lambda name, why: fail(name, why, suite)  # noqa: E731
    model_path = directory / "model.onnx"
    model = onnx.load(str(model_path))
    frozen = set()
    if suite == "node" and case in FREEZE_INTEGER_INPUTS:
        before = {i.name for i in model.graph.initializer}
        model = freeze_integer_inputs(model, directory / "test_data_set_0")
        frozen = {i.name for i in model.graph.initializer} - before
        model_path = tmp_path / "frozen.onnx"
        onnx.save(model, str(model_path))
    version = opset(model)
    if version is not None and version < MIN_OPSET:
        try:
            from onnx import version_converter
            model = version_converter.convert_version(model, MIN_OPSET)
        except Exception as e:  # noqa: BLE001 - any converter failure
            skip_(f"opset {version} < {MIN_OPSET} and onnx.version_converter "
                 f"cannot convert it ({type(e).__name__})")
        model_path = tmp_path / "model.onnx"
        onnx.save(model, str(model_path))

    mlir = tmp_path / "model.mlir"
    weights = tmp_path / "model.safetensors"
    proc = subprocess.run([str(LOOM_TRANSLATE), "--import-onnx", str(model_path),
                           "-o", str(mlir), "--weights-out", str(weights)],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        message = first_error(proc.stderr)
        if UNSUPPORTED.search(message):
            skip_(skip_reason(message))
        fail_(case, f"import failed (importer bug?): {message}")
    for line in proc.stderr.splitlines():
        if "warning:" in line and NOT_APPLIED.search(line):
            skip_(skip_reason(line.split("warning:", 1)[1].strip()))

    data_set = directory / "test_data_set_0"
    initializers = {i.name for i in model.graph.initializer}
    # Test data files follow the graph inputs that are not initializers in
    # the test's own model (frozen inputs are initializers now: not fed).
    graph_inputs = [i for i in model.graph.input
                    if i.name not in initializers or i.name in frozen]
    cmd = [str(LOOM_RUN), str(mlir), "--output-dir", str(tmp_path / "out")]
    if weights.exists():
        cmd += ["--weights", str(weights)]
    for i, pb in enumerate(sorted(data_set.glob("input_*.pb"),
                                  key=lambda p: int(p.stem.split("_")[1]))):
        value = graph_inputs[i] if i < len(graph_inputs) else None
        if value is not None and value.name in frozen:
            continue
        name, array = to_array(pb, value.type.tensor_type.elem_type if value else 0)
        name = name or (value.name if value else f"arg{i}")
        path = tmp_path / f"input_{i}.npy"
        np.save(path, array)
        cmd += ["--input", f"{name}={path}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        fail_(case, f"loom-run failed: {first_error(proc.stderr)}")

    outputs = [o.name for o in model.graph.output]
    for i, pb in enumerate(sorted(data_set.glob("output_*.pb"),
                                  key=lambda p: int(p.stem.split("_")[1]))):
        value = model.graph.output[i] if i < len(outputs) else None
        _, want = to_array(pb, value.type.tensor_type.elem_type if value else 0)
        name = outputs[i] if i < len(outputs) else f"result{i}"
        path = tmp_path / "out" / f"{sanitize(name)}.npy"
        if not path.exists():
            path = tmp_path / "out" / f"result{i}.npy"
        if not path.exists():
            fail_(case, f"loom-run wrote no result for output {i} '{name}'")
        got = np.load(path)
        if got.dtype.kind == "V" and want.dtype.itemsize == 2:
            got = got.view(want.dtype)  # bfloat16 ('<V2')
        if got.shape != want.shape:
            fail_(case, f"output '{name}': shape {got.shape}, expected {want.shape}")
        if got.dtype != want.dtype:
            fail_(case, f"output '{name}': dtype {got.dtype}, expected {want.dtype}")
        if want.dtype.kind in "biu":
            if not np.array_equal(got, want):
                bad = np.argwhere(got != want)[0]
                fail_(case, f"output '{name}': {int((got != want).sum())} elements "
                           f"differ, first at {tuple(bad)}: {got[tuple(bad)]} vs "
                           f"{want[tuple(bad)]}")
            continue
        g, w = got.astype(np.float64), want.astype(np.float64)
        close = np.isclose(g, w, rtol=RTOL, atol=ATOL, equal_nan=True)
        if not close.all():
            bad = tuple(np.argwhere(~close)[0])
            fail_(case, f"output '{name}': {int((~close).sum())} of {close.size} "
                       f"elements differ beyond rtol {RTOL} atol {ATOL}, first at "
                       f"{bad}: {g[bad]!r} vs {w[bad]!r}")
    RESULTS[suite]["passed"] += 1

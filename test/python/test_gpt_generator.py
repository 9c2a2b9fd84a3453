"""Tests of loom.models.gpt, the GPT forward-graph generator.

The IR is checked with loom-opt from $LOOM_BUILD_DIR/bin (default: the
repository's build/); tests that need it are skipped when it is missing.
Parameter counts are read from the MLIR text, not from the generator.
"""

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PYTHON_DIR = REPO / "python"
sys.path.insert(0, str(PYTHON_DIR))

from loom.models.gpt import generate, param_count  # noqa: E402

BUILD_DIR = Path(os.environ.get("LOOM_BUILD_DIR", REPO / "build"))
LOOM_OPT = BUILD_DIR / "bin" / "loom-opt"

SMALL = dict(layers=2, hidden=64, heads=4, seq=16, vocab=100, batch=2)
GPT3_175B = dict(layers=96, hidden=12288, heads=96, seq=2048, vocab=50257,
                 batch=1)


@pytest.fixture(scope="module")
def loom_opt():
    if not (LOOM_OPT.is_file() and os.access(LOOM_OPT, os.X_OK)):
        pytest.skip(f"loom-opt not found at {LOOM_OPT} (set LOOM_BUILD_DIR)")
    return str(LOOM_OPT)


def run_loom_opt(loom_opt, path, *args):
    proc = subprocess.run([loom_opt, str(path), *args], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def run_cli(*args):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(PYTHON_DIR)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH")
                             else []))
    return subprocess.run([sys.executable, "-m", "loom.models.gpt", *args],
                          capture_output=True, text=True, env=env, timeout=120)


def sizes(cfg):
    return {k: cfg[k] for k in ("layers", "hidden", "heads", "seq", "vocab")}


# `%name: tensor<AxBxf32> {loom.param, loom.name = "..."}` in a signature.
ARG_RE = re.compile(r'%[\w.$-]+\s*:\s*tensor<([^>]*)>\s*\{([^}]*)\}')


def param_elements_in_text(text):
    total = 0
    n_params = 0
    for shape, attrs in ARG_RE.findall(text):
        if not re.search(r'\bloom\.param\b', attrs):
            continue
        dims = shape.split("x")[:-1]  # the last piece is the element type
        total += math.prod(int(d) for d in dims)
        n_params += 1
    assert n_params > 0, "no loom.param argument found"
    return total


def matmul_flops(layers, hidden, heads, seq, vocab, batch):
    B, S, H, V = batch, seq, hidden, vocab
    hd = H // heads
    per_layer = (2 * B * S * H * 3 * H          # qkv
                 + 2 * B * heads * S * S * hd   # q k^T
                 + 2 * B * heads * S * S * hd   # probs v
                 + 2 * B * S * H * H            # attention output projection
                 + 2 * B * S * H * 4 * H        # fc1
                 + 2 * B * S * 4 * H * H)       # fc2
    return layers * per_layer + 2 * B * S * H * V  # lm head


# (a)
@pytest.mark.parametrize("dtype", ["f32", "bf16", "f16"])
def test_small_model_verifies(loom_opt, tmp_path, dtype):
    path = tmp_path / f"gpt_{dtype}.mlir"
    path.write_text(generate(**SMALL, dtype=dtype))
    printed = run_loom_opt(loom_opt, path)
    assert "loom.cross_entropy" in printed
    # The generator writes exact types: shape inference changes nothing.
    assert run_loom_opt(loom_opt, path, "--loom-shape-inference") == printed


# (b)
@pytest.mark.parametrize("cfg", [
    SMALL,
    dict(layers=1, hidden=8, heads=1, seq=1, vocab=1, batch=1),
    dict(layers=3, hidden=96, heads=12, seq=32, vocab=257, batch=3),
])
def test_param_count_matches_formula(cfg):
    text = generate(**cfg)
    assert param_elements_in_text(text) == param_count(**sizes(cfg))


def test_gpt3_175b_param_count():
    expected = (96 * (12 * 12288 ** 2 + 13 * 12288) + 50257 * 12288
                + 2048 * 12288 + 2 * 12288)
    assert expected == 174_604_259_328
    assert param_count(**sizes(GPT3_175B)) == expected
    assert param_elements_in_text(generate(**GPT3_175B)) == expected
    # The GPT-3 paper's "175B".
    assert abs(expected - 175e9) / 175e9 < 0.005


def test_gpt3_175b_text_stays_small():
    # No materialised masks or weights: well under a few MB of text.
    assert len(generate(**GPT3_175B)) < 4_000_000


# (c)
def report_cost(loom_opt, tmp_path, cfg):
    path = tmp_path / "gpt.mlir"
    path.write_text(generate(**cfg))
    out = run_loom_opt(loom_opt, path, "--loom-report-cost", "-o", os.devnull)
    return json.loads(out)["functions"][0]


def test_report_cost_params_and_flops(loom_opt, tmp_path):
    cfg = dict(layers=2, hidden=256, heads=4, seq=64, vocab=1000, batch=2)
    report = report_cost(loom_opt, tmp_path, cfg)
    assert report["unknown_cost_ops"] == 0
    assert report["params"] == param_count(**sizes(cfg))
    mm = matmul_flops(**cfg)
    assert mm <= report["flops"] <= 1.1 * mm, (report["flops"], mm)


def test_report_cost_gpt3_175b_params(loom_opt, tmp_path):
    report = report_cost(loom_opt, tmp_path, GPT3_175B)
    assert report["params"] == 174_604_259_328
    assert report["unknown_cost_ops"] == 0
    mm = matmul_flops(**GPT3_175B)
    assert mm <= report["flops"] <= 1.1 * mm, (report["flops"], mm)


# (d)
def test_cli_rejects_hidden_not_divisible_by_heads():
    proc = run_cli("--layers", "1", "--hidden", "10", "--heads", "3", "--seq",
                   "4", "--vocab", "10")
    assert proc.returncode != 0
    assert proc.stdout == ""
    assert "hidden" in proc.stderr and "heads" in proc.stderr
    assert "10" in proc.stderr and "3" in proc.stderr


@pytest.mark.parametrize("flag", ["--layers", "--hidden", "--heads", "--seq",
                                  "--vocab", "--batch"])
def test_cli_rejects_sizes_below_one(flag):
    proc = run_cli("--preset", "gpt2-small", flag, "0")
    assert proc.returncode != 0
    assert flag.lstrip("-") + "=0" in proc.stderr


def test_generate_rejects_bad_sizes():
    with pytest.raises(ValueError, match="divisible"):
        generate(layers=1, hidden=10, heads=3, seq=4, vocab=10)
    with pytest.raises(ValueError, match="vocab=0"):
        generate(layers=1, hidden=8, heads=2, seq=4, vocab=0)


# (e)
def test_cli_output_is_deterministic(tmp_path):
    outputs = []
    for i in range(2):
        out = tmp_path / f"run{i}.mlir"
        proc = run_cli("--layers", "2", "--hidden", "64", "--heads", "4",
                       "--seq", "16", "--vocab", "100", "--batch", "2",
                       "-o", str(out))
        assert proc.returncode == 0, proc.stderr
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    assert outputs[0] == generate(**SMALL).encode()


def test_cli_preset_verifies(loom_opt, tmp_path):
    out = tmp_path / "gpt2.mlir"
    proc = run_cli("--preset", "gpt2-small", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    run_loom_opt(loom_opt, out, "-o", os.devnull)
    assert param_elements_in_text(out.read_text()) == 124_439_808

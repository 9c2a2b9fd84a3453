"""loom-opt must answer damaged IR with a diagnostic, never a crash.

Seeded mutations of valid Loom IR (examples and generated graphs): deleted,
duplicated and swapped spans, changed numbers, dimensions and attribute
values, and truncation. For every mutant loom-opt (parse, verify, shape
inference, canonicalize) must exit 0, or exit 1 with an `error:` diagnostic
that has a location; a signal, an abort, an LLVM stack dump or any other exit
status fails the test.
"""

import os
import random
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("LOOM_BUILD_DIR", ROOT / "build"))
LOOM_OPT = BUILD / "bin" / "loom-opt"
SEEDS = range(int(os.environ.get("LOOM_FUZZ_CASES", "240")))

pytestmark = pytest.mark.skipif(not LOOM_OPT.exists(), reason=f"{LOOM_OPT} not built")


def corpus():
    texts = [(ROOT / "examples" / "mlp.mlir").read_text()]
    ops = ROOT / "test" / "Dialect" / "Loom" / "ops.mlir"
    if ops.exists():
        # Keep the IR, drop RUN/CHECK comment lines.
        texts.append("\n".join(l for l in ops.read_text().splitlines()
                               if not l.lstrip().startswith("//")))
    from loom.models import gpt
    texts.append(gpt.generate(layers=1, hidden=8, heads=2, seq=4, vocab=11, batch=2))
    return texts


NUMBER = re.compile(r"\d+")


def mutate(text, rng):
    """One random damage; the text may already be damaged (even empty)."""
    kinds = ["delete", "duplicate", "swap", "truncate"]
    if NUMBER.search(text):
        kinds.append("number")
    if re.search(r"[A-Za-z_]", text):
        kinds.append("token")
    n = len(text)
    if n == 0:
        return text
    kind = rng.choice(kinds)
    if kind == "delete":
        a = rng.randrange(n)
        return text[:a] + text[a + rng.randint(1, 40):]
    if kind == "duplicate":
        a = rng.randrange(n)
        b = min(n, a + rng.randint(1, 80))
        return text[:b] + text[a:b] + text[b:]
    if kind == "swap":
        lines = text.splitlines() or [text]
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        return "\n".join(lines)
    if kind == "number":
        matches = list(NUMBER.finditer(text))
        m = rng.choice(matches)
        value = rng.choice(["0", "1", "-1", "7", "99999999999", "2147483648", "-9223372036854775808"])
        return text[:m.start()] + value + text[m.end():]
    if kind == "truncate":
        return text[:rng.randrange(n)]
    # token: replace a word by another word of the same file
    words = re.findall(r"[A-Za-z_][\w.]*", text)
    old, new = rng.choice(words), rng.choice(words)
    return text.replace(old, new, 1)


@pytest.fixture(scope="module")
def texts():
    return corpus()


@pytest.mark.parametrize("seed", SEEDS)
def test_mutant_gets_a_diagnostic_not_a_crash(seed, texts, tmp_path):
    rng = random.Random(seed)
    text = rng.choice(texts)
    for _ in range(rng.randint(1, 3)):
        text = mutate(text, rng)
    src = tmp_path / f"mutant{seed}.mlir"
    src.write_text(text)
    proc = subprocess.run(
        [str(LOOM_OPT), str(src), "--loom-shape-inference", "--canonicalize",
         "--loom-report-cost=output=" + os.devnull, "-o", os.devnull],
        capture_output=True, text=True, timeout=60)
    detail = f"mutant kept at {src}\nstderr:\n{proc.stderr[-2000:]}"
    assert "Stack dump" not in proc.stderr and "PLEASE submit" not in proc.stderr, detail
    assert proc.returncode in (0, 1), f"exit status {proc.returncode}\n{detail}"
    if proc.returncode == 1:
        assert re.search(r"mutant\d+\.mlir:\d+:\d+: error:", proc.stderr), detail

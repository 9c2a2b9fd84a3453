"""loom-pipeline-partition against optima computed here, independently.

Two references, both written from the definitions in the pass description
(Passes.td), not from the pass's code:

* ``brute_force``: every placement of the P-1 cuts; the best is the least
  (max stage time, total cut bytes, cut positions) among those whose stages
  fit the memory budget and contain no forced cut. Used on small random
  chains whose costs and data flow come from the generator below.
* ``dp_reference``: the textbook O(P N^2) dynamic programme for the least
  maximum stage time, then a second one for the least total cut bytes under
  that maximum. Used on GPT graphs from ``python -m loom.models.gpt``, with
  per-op costs and data flow read from the report.

Memory and cut bytes are recomputed here with sets, so the pass's sliding
window and sweep are checked too.
"""

import itertools
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PYTHON_DIR = REPO / "python"
BUILD_DIR = Path(os.environ.get("LOOM_BUILD_DIR", REPO / "build"))
LOOM_OPT = BUILD_DIR / "bin" / "loom-opt"
LOOM_RUN = BUILD_DIR / "bin" / "loom-run"


@pytest.fixture(scope="module")
def loom_opt():
    if not (LOOM_OPT.is_file() and os.access(LOOM_OPT, os.X_OK)):
        pytest.skip(f"loom-opt not found at {LOOM_OPT} (set LOOM_BUILD_DIR)")
    return str(LOOM_OPT)


# -- the reference model ------------------------------------------------------

class Graph:
    """A sequence of ops: per op its time, result bytes, the sequence values
    ``(pos, result)`` and the arguments it reads; per argument its bytes and
    whether it is a parameter."""

    def __init__(self, times, results, inputs, args, arg_bytes, arg_param):
        self.times, self.results = times, results
        self.inputs, self.args = inputs, args
        self.arg_bytes, self.arg_param = arg_bytes, arg_param

    @classmethod
    def from_report(cls, report):
        ops = report["ops"]
        return cls([o["time"] for o in ops], [o["results"] for o in ops],
                   [[tuple(i) for i in o["inputs"]] for o in ops],
                   [o["args"] for o in ops],
                   [a["bytes"] for a in report["arguments"]],
                   [a["param"] for a in report["arguments"]])

    def __len__(self):
        return len(self.times)

    def value_bytes(self, value):
        pos, r = value
        return self.results[pos][r]

    def cut_bytes(self, c):
        """Bytes of the values made before position c and read at or
        after it."""
        crossing = {v for pos in range(c, len(self)) for v in self.inputs[pos]
                    if v[0] < c}
        return sum(self.value_bytes(v) for v in crossing)

    def memory(self, lo, hi):
        """Parameters, results and received values of the stage [lo, hi)."""
        args = {a for pos in range(lo, hi) for a in self.args[pos]}
        received = {v for pos in range(lo, hi) for v in self.inputs[pos]
                    if v[0] < lo}
        return (sum(self.arg_bytes[a] for a in args)
                + sum(sum(self.results[pos]) for pos in range(lo, hi))
                + sum(self.value_bytes(v) for v in received))


def brute_force(graph, stages, budget=0, forced=()):
    """The least (max time, total cut bytes, cuts), or None if no partition
    satisfies the budget and the forced cuts."""
    n = len(graph)
    cut_bytes = [graph.cut_bytes(c) for c in range(n + 1)]
    best = None
    for cuts in itertools.combinations(range(1, n), stages - 1):
        if not set(forced) <= set(cuts):
            continue
        bounds = (0, *cuts, n)
        ranges = list(zip(bounds, bounds[1:]))
        if budget and any(graph.memory(lo, hi) > budget for lo, hi in ranges):
            continue
        key = (max(sum(graph.times[lo:hi]) for lo, hi in ranges),
               sum(cut_bytes[c] for c in cuts), list(cuts))
        best = key if best is None or key < best else best
    return best


def dp_reference(graph, stages):
    """(least max stage time, least total cut bytes under it), no budget."""
    n, inf = len(graph), float("inf")
    prefix = [0]
    for t in graph.times:
        prefix.append(prefix[-1] + t)
    # f[k][j]: least max time of ops [0, j) in k stages.
    f = [[inf] * (n + 1) for _ in range(stages + 1)]
    f[0][0] = 0
    for k in range(1, stages + 1):
        for j in range(1, n + 1):
            f[k][j] = min((max(f[k - 1][i], prefix[j] - prefix[i])
                           for i in range(k - 1, j)), default=inf)
    bound = f[stages][n]
    cut_bytes = [graph.cut_bytes(c) for c in range(n + 1)]
    # g[k][j]: least cut bytes of ops [0, j) in k stages of time <= bound.
    g = [[inf] * (n + 1) for _ in range(stages + 1)]
    g[0][0] = 0
    for k in range(1, stages + 1):
        for j in range(1, n + 1):
            g[k][j] = min((g[k - 1][i] + (cut_bytes[i] if i else 0)
                           for i in range(k - 1, j)
                           if prefix[j] - prefix[i] <= bound), default=inf)
    return bound, g[stages][n]


# -- random chains ------------------------------------------------------------

def random_chain(rng, layers):
    """A residual MLP with random widths and random skip sources.

    Layer i: h = x_i . A_i (4 x K_i), r = relu(h), y = r . B_i (4 x 8),
    x_{i+1} = y + x_j for a random earlier j (a skip that may cross several
    stages). Returns the MLIR text and the Graph built from the same
    choices (flops: 2*M*N*K per matmul, one per element otherwise).
    """
    m, d = 4, 8
    params = []
    lines = []
    times, results, inputs, args = [], [], [], []
    arg_bytes, arg_param = [m * d * 4], [False]

    def emit(text, flops, out_elems, reads, reads_args):
        times.append(3 * flops)
        results.append([out_elems * 4])
        inputs.append(sorted(set(reads)))
        args.append(sorted(set(reads_args)))
        lines.append(f"  %v{len(times) - 1} = {text}")
        return (len(times) - 1, 0)

    def name(v):
        return "%x" if v is None else f"%v{v[0]}"

    xs = [None]  # value of x_i: None is the argument %x
    for i in range(layers):
        k = rng.choice([2, 4, 8, 16, 32])
        a, b = len(arg_bytes), len(arg_bytes) + 1
        params += [f"%a{i}: tensor<{d}x{k}xf32> {{loom.param}}",
                   f"%b{i}: tensor<{k}x{d}xf32> {{loom.param}}"]
        arg_bytes += [d * k * 4, k * d * 4]
        arg_param += [True, True]
        x = xs[-1]
        seq = [x] if x is not None else []
        h = emit(f"loom.dot_general {name(x)}, %a{i}, contracting_dims = [1] "
                 f"x [0] : (tensor<{m}x{d}xf32>, tensor<{d}x{k}xf32>) -> "
                 f"tensor<{m}x{k}xf32>", 2 * m * k * d, m * k, seq,
                 [a] + ([] if x is not None else [0]))
        r = emit(f"loom.relu {name(h)} : tensor<{m}x{k}xf32>", m * k, m * k,
                 [h], [])
        y = emit(f"loom.dot_general {name(r)}, %b{i}, contracting_dims = [1] "
                 f"x [0] : (tensor<{m}x{k}xf32>, tensor<{k}x{d}xf32>) -> "
                 f"tensor<{m}x{d}xf32>", 2 * m * d * k, m * d, [r], [b])
        skip = rng.choice(xs)
        s = emit(f"loom.add {name(y)}, {name(skip)} : tensor<{m}x{d}xf32>",
                 m * d, m * d, [y] + ([skip] if skip is not None else []),
                 [] if skip is not None else [0])
        xs.append(s)
    text = (f"func.func @main(%x: tensor<{m}x{d}xf32>, "
            + ", ".join(params) + f") -> tensor<{m}x{d}xf32> {{\n"
            + "\n".join(lines) + f"\n  return {name(xs[-1])} : "
            f"tensor<{m}x{d}xf32>\n}}\n")
    return text, Graph(times, results, inputs, args, arg_bytes, arg_param)


def partition(loom_opt, path, options, check=True):
    proc = subprocess.run(
        [loom_opt, str(path),
         f"--loom-pipeline-partition={options} report=-", "-o", os.devnull],
        capture_output=True, text=True, timeout=120)
    if check:
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)
    return proc


def test_random_chains_match_brute_force(loom_opt, tmp_path):
    rng = random.Random(20240607)
    checked = budgeted = infeasible = 0
    for case in range(40):
        layers = rng.choice([2, 3])
        text, graph = random_chain(rng, layers)
        path = tmp_path / f"chain{case}.mlir"
        path.write_text(text)
        n = len(graph)
        stages = rng.randint(1, 4)
        forced = tuple(sorted(rng.sample(range(1, n), rng.randint(0, 1)))) \
            if stages > 1 else ()
        budget = 0
        if case % 2:
            single = max(graph.memory(i, i + 1) for i in range(n))
            budget = rng.randint(single, graph.memory(0, n))
        options = f"stages={stages} memory-budget={budget}"
        if forced:
            options += " stage-boundaries=" + ",".join(map(str, forced))
        expected = brute_force(graph, stages, budget, forced)
        if expected is None:
            proc = partition(loom_opt, path, options, check=False)
            assert proc.returncode != 0
            assert "option 'memory-budget'" in proc.stderr
            infeasible += 1
            continue
        report = partition(loom_opt, path, options)
        # The generator's costs are what the pass measured.
        assert [o["time"] for o in report["ops"]] == graph.times
        assert (report["max_stage_time"], report["total_cut_bytes"],
                report["cuts"]) == expected, (case, options)
        for s, st in enumerate(report["per_stage"]):
            assert st["memory_bytes"] == graph.memory(st["first"],
                                                      st["last"] + 1)
            assert not budget or st["memory_bytes"] <= budget
            assert st["cut_bytes"] == (graph.cut_bytes(st["last"] + 1)
                                       if s + 1 < stages else 0)
        checked += 1
        budgeted += bool(budget)
    # The seed exercises all three kinds of case.
    assert checked >= 20 and budgeted >= 5 and infeasible >= 1


# -- GPT graphs -----------------------------------------------------------------

def gpt_graph(tmp_path, layers, **sizes):
    """A GPT forward graph from the generator's command line, after shape
    inference."""
    raw = tmp_path / f"gpt{layers}.mlir"
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR))
    args = dict(layers=layers, hidden=32, heads=4, seq=8, vocab=50, batch=2)
    args.update(sizes)
    cmd = [sys.executable, "-m", "loom.models.gpt", "-o", str(raw)]
    for key, value in args.items():
        cmd += [f"--{key}", str(value)]
    subprocess.run(cmd, check=True, env=env, timeout=120)
    path = tmp_path / f"gpt{layers}.si.mlir"
    subprocess.run([str(LOOM_OPT), str(raw), "--loom-shape-inference", "-o",
                    str(path)], check=True, timeout=120)
    return path


@pytest.mark.parametrize("layers,stages", [(1, 2), (2, 3), (2, 4), (3, 5),
                                           (3, 8)])
def test_gpt_matches_dynamic_programming(loom_opt, tmp_path, layers, stages):
    path = gpt_graph(tmp_path, layers)
    report = partition(loom_opt, path, f"stages={stages}")
    graph = Graph.from_report(report)
    bound, cut = dp_reference(graph, stages)
    assert report["max_stage_time"] == bound
    assert report["total_cut_bytes"] == cut
    assert len(report["per_stage"]) == stages
    assert all(st["ops"] >= 1 for st in report["per_stage"])
    assert sum(st["time"] for st in report["per_stage"]) == sum(graph.times)


def test_gpt_two_layers_four_stages_runs_the_same(loom_opt, tmp_path):
    """pp=4 on a 2-layer model cuts inside layers; the stage functions
    recompose the original loss exactly."""
    if not (LOOM_RUN.is_file() and os.access(LOOM_RUN, os.X_OK)):
        pytest.skip(f"loom-run not found at {LOOM_RUN}")
    path = gpt_graph(tmp_path, 2)
    report = partition(loom_opt, path, "stages=4")
    assert len(report["cuts"]) == 3
    proc = subprocess.run(
        [str(LOOM_RUN), str(path), "--tolerance", "0", "--compare-after",
         "builtin.module(loom-pipeline-partition{stages=4},"
         "loom-pipeline-split)"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "equivalent: yes (tolerance 0)" in proc.stdout


def test_deterministic(loom_opt, tmp_path):
    path = gpt_graph(tmp_path, 3)
    outputs = []
    for run in range(2):
        ir = tmp_path / f"out{run}.mlir"
        rep = tmp_path / f"out{run}.json"
        subprocess.run([loom_opt, str(path),
                        f"--loom-pipeline-partition=stages=5 report={rep}",
                        "--loom-pipeline-split", "-o", str(ir)], check=True,
                       timeout=120)
        outputs.append((ir.read_bytes(), rep.read_bytes()))
    assert outputs[0] == outputs[1]


def test_forced_cut_by_position_is_kept(loom_opt, tmp_path):
    path = gpt_graph(tmp_path, 2)
    free = partition(loom_opt, path, "stages=3")
    forced = 5 if 5 not in free["cuts"] else 6
    report = partition(loom_opt, path,
                       f"stages=3 stage-boundaries={forced}")
    assert forced in report["cuts"] and report["forced_cuts"] == [forced]
    assert report["max_stage_time"] >= free["max_stage_time"]


def test_too_many_stages_is_an_error(loom_opt, tmp_path):
    path = gpt_graph(tmp_path, 1)
    n = partition(loom_opt, path, "stages=1")["sequence_ops"]
    assert partition(loom_opt, path, f"stages={n}")["max_stage_time"] >= 0
    proc = partition(loom_opt, path, f"stages={n + 1}", check=False)
    assert proc.returncode != 0
    assert (f"option 'stages' is {n + 1}, more than the {n} ops of @main "
            "that can be separated") in proc.stderr

"""Device memory budgets end to end: `loomc --device-memory BYTES` on a
pipeline-parallel GPT-2-style model (pp=2, 4 micro-batches, 1F1B, AdamW).

memory.json gives each stage's planned device peak (`device_peak_bytes`:
parameters, optimizer state, input batch, result buffers and the arena of
activations, gradients and communication buffers); the runtime measures
its device pool per rank (`--memory-counters mem-{rank}.json`), and the two
must be equal. A budget that stage 0 exceeds by 15 % is a compile error
naming stage 0 without swap; with `--swap host` (loom-swap) stage 0 fits,
plan and counters agree, and the losses are bitwise those of the
unconstrained run; `--swap peer` moves the excess to stage 1 instead;
`--swap auto` sheds stage 0's excess by swapping or by
recomputing, whichever the cluster spec prices cheaper; the runtime itself
refuses a device pool over the budget it was compiled for.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import loom
from loom._tools import find_tool
from loom.training import Program

sys.path.insert(0, str(Path(__file__).parent))
from parallel_support import MPI_MARKS  # noqa: E402

pytestmark = MPI_MARKS
np = pytest.importorskip("numpy")
pytest.importorskip("torch")
pytest.importorskip("onnx")

from test_training import import_example, make_data, write_data  # noqa: E402

OPTIONS = dict(mesh="pp=2", microbatches=4, schedule="1f1b", optimizer="adamw", lr=1e-3)
# Rows per micro-batch: enough that activations, not the accumulated
# gradients, make stage 0's peak larger than stage 1's (about 25 % here).
MICRO = 8
# Rows per micro-batch of the swap tests: enough that under 1F1B stage 0's
# peak is about 1.5 times stage 1's (since loom-raise-composites keeps
# only GELU's input for the backward pass, 16 rows give 1.45), so that
# stage 1 has room for stage 0's excess.
WIDE = 4 * MICRO
STEPS = 3


@pytest.fixture(scope="module")
def gpt(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("device-memory")
    _, args, names, m = import_example("gpt_example", tmp, MICRO, "import")
    data_dir = write_data(tmp / "data", make_data(names, args, 6, 50, seed=5))
    return tmp, m, data_dir


@pytest.fixture(scope="module")
def unconstrained(gpt):
    """unconstrained(schedule, microbatches): the program compiled without
    a budget, its losses and its plan (compiled and run once per module)."""
    tmp, m, data_dir = gpt
    cache = {}

    def get(schedule="1f1b", microbatches=4):
        key = (schedule, microbatches)
        if key not in cache:
            name = f"free-{schedule}-{microbatches}"
            program = m.compile(outdir=tmp / name,
                                **dict(OPTIONS, schedule=schedule, microbatches=microbatches))
            losses = program.train(data_dir, STEPS, ranks=2, extra_args=[
                "--memory-counters", str(tmp / (name + "-{rank}.json"))])
            cache[key] = program, losses, stages(program)
        return cache[key]
    return get


@pytest.fixture(scope="module")
def free(unconstrained):
    return unconstrained()


def stages(program):
    report = json.loads((program.outdir / "memory.json").read_text())
    return {f["stage"]: f for f in report["functions"]}


def counters(path):
    return json.loads(Path(path).read_text())


def train_matching_plan(program, data, steps, ranks, name, planned, expected_losses):
    """Trains `program` on `ranks` ranks with --memory-counters and checks
    that the losses are bitwise `expected_losses` and that every rank's
    measured device and host peaks are its stage's in `planned` (rank =
    replica * pp + stage)."""
    pattern = program.outdir / (name + "-{rank}.json")
    got = program.train(data, steps, ranks=ranks,
                        extra_args=["--memory-counters", str(pattern)])
    assert got == expected_losses  # bitwise: the bytes travel, the values stay
    for rank in range(ranks):
        stage = rank % len(planned)
        measured = counters(str(pattern).replace("{rank}", str(rank)))
        for key in ("device_peak_bytes", "host_peak_bytes"):
            assert measured[key] == planned[stage][key], (rank, key)


def test_planned_stage_peaks_equal_the_measured_counters(gpt, free):
    tmp, m, data_dir = gpt
    program, _, planned = free
    assert sorted(planned) == [0, 1]
    for f in planned.values():
        persistent = sum(f["persistent_bytes"].values())
        assert f["device_peak_bytes"] == persistent + f["arena_bytes"], f
        assert f["host_peak_bytes"] == 0
        assert f["persistent_bytes"]["params"] > 0 and f["persistent_bytes"]["optimizer_state"] > 0
        # Every update is written over its argument (loom-in-place-updates):
        # the results are the loss at most, not a second copy of the
        # parameters and state.
        assert f["persistent_bytes"]["results"] <= 4, f
    for rank in (0, 1):  # dp = tp = 1: rank r runs stage r
        measured = counters(tmp / f"free-1f1b-4-{rank}.json")
        assert measured["rank"] == rank and measured["stage"] == rank
        assert measured["device_peak_bytes"] == planned[rank]["device_peak_bytes"], (
            rank, measured, planned[rank])
        assert measured["planned_device_peak_bytes"] == planned[rank]["device_peak_bytes"]
        assert measured["host_peak_bytes"] == 0
        assert measured["arena_peak_live_bytes"] == planned[rank]["peak_live_bytes"]
        assert measured["device_memory_bytes"] == 0
    # Under 1F1B the first stage holds the most activations.
    assert planned[0]["device_peak_bytes"] > 1.15 * planned[1]["device_peak_bytes"], planned


def stage0_budget(planned):
    """A budget stage 0 exceeds by 15 % and stage 1 fits."""
    budget = int(planned[0]["device_peak_bytes"] / 1.15)
    assert planned[1]["device_peak_bytes"] < budget
    return budget


def test_a_budget_stage_0_exceeds_is_refused_without_swap(gpt, free):
    tmp, m, _ = gpt
    planned = free[2]
    peak0, budget = planned[0]["device_peak_bytes"], stage0_budget(planned)
    with pytest.raises(loom.LoomError) as error:
        m.compile(outdir=tmp / "over", device_memory=budget, swap="none", **OPTIONS)
    message = str(error.value)
    assert re.search(rf"stage 0 \(@\w*stage0_step\) needs {peak0} bytes of device memory at "
                     rf"its peak, over the --device-memory budget of {budget} bytes by "
                     rf"{peak0 - budget}", message), message
    assert "--swap host" in message and "--recompute" in message and "--mesh pp=N" in message
    assert "stage 1" not in message
    # The report is written before the error, with the figures.
    assert stages(Program(tmp / "over"))[0]["device_peak_bytes"] == peak0


# GPipe holds every micro-batch's activations on stage 0 until the
# backward.
@pytest.mark.parametrize("schedule,microbatches", [("1f1b", 4), ("gpipe", 4)])
def test_swap_host_fits_stage_0_and_changes_no_bit(gpt, unconstrained, schedule, microbatches):
    tmp, m, data_dir = gpt
    _, free_losses, planned = unconstrained(schedule, microbatches)
    budget = stage0_budget(planned)
    options = dict(OPTIONS, schedule=schedule, microbatches=microbatches)
    tmp = tmp / f"swap-{schedule}"
    tmp.mkdir()
    program = m.compile(outdir=tmp / "out", device_memory=f"{budget}B", swap="host", **options)
    swapped = stages(program)
    assert swapped[0]["device_peak_bytes"] <= budget < planned[0]["device_peak_bytes"], swapped
    assert swapped[0]["host_peak_bytes"] > 0
    assert swapped[1] == planned[1]  # within the budget: untouched
    step = (program.outdir / "step.cpp").read_text()
    assert "swapOutStart" in step and "swapInStart" in step

    # A rate-limited host link delays the copies, never the values.
    got = program.train(data_dir, STEPS, ranks=2, extra_args=[
        "--memory-counters", str(tmp / "swap-{rank}.json"), "--trace", str(tmp / "trace.json"),
        "--host-link", "1GiB"])
    assert got == free_losses  # bitwise: swapping moves bytes only
    for rank in (0, 1):
        measured = counters(tmp / f"swap-{rank}.json")
        assert measured["device_peak_bytes"] == swapped[rank]["device_peak_bytes"] <= budget
        assert measured["host_peak_bytes"] == swapped[rank]["host_peak_bytes"]
        assert measured["device_memory_bytes"] == budget
    trace = json.loads((tmp / "trace.json").read_text())["traceEvents"]
    tracks = {(e["pid"], e["args"]["name"]) for e in trace if e["name"] == "thread_name"}
    copies = [e for e in trace if e["ph"] == "X" and e["name"] in ("swap out", "swap in")]
    assert copies and {e["pid"] for e in copies} == {0}, tracks
    assert any(name.startswith("copy") for pid, name in tracks if pid == 0), tracks
    # The device memory in use over the run, a counter track per rank (as
    # loom-plan --trace simulates it): the persistent buffers plus the
    # arena's live bytes, peaking at the memory plan's peak of live bytes.
    for rank in (0, 1):
        measured = counters(tmp / f"swap-{rank}.json")
        series = [e["args"]["bytes"] for e in trace
                  if e["ph"] == "C" and e["name"] == "device memory" and e["pid"] == rank]
        persistent = sum(measured[k] for k in
                         ("params_bytes", "state_bytes", "batch_bytes", "results_bytes"))
        assert max(series) == persistent + swapped[rank]["peak_live_bytes"], rank
        assert min(series) < max(series) and series[-1] == persistent

    if schedule != "1f1b":
        return
    # The runtime budgets its device pool too: a program whose budget is one
    # byte short (edited here, as a planner bug would make it) stops with
    # an out-of-device-memory error instead of running over it.
    peak0 = swapped[0]["device_peak_bytes"]
    source = program.outdir / "step.cpp"
    edited = step.replace(f"/*plannedDevicePeakBytes=*/{peak0}, /*deviceMemoryBytes=*/{budget},",
                          f"/*plannedDevicePeakBytes=*/{peak0}, /*deviceMemoryBytes=*/{peak0 - 1},",
                          1)
    assert edited != step
    source.write_text(edited)
    subprocess.run(["sh", str(program.outdir / "build.sh")], check=True)
    with pytest.raises(loom.LoomError, match="out of device memory allocating .* over the "
                       rf"--device-memory budget of {peak0 - 1} bytes"):
        program.train(data_dir, 1, ranks=2)


@pytest.fixture(scope="module")
def gpt_wide(tmp_path_factory):
    """The GPT at WIDE rows per micro-batch: activations outweigh the
    parameters, so under 1F1B stage 0 (two micro-batches in flight) peaks
    about 1.5 times stage 1 (one), and stage 1 has room for stage 0's
    excess. Imported, compiled without a budget and trained once."""
    tmp = tmp_path_factory.mktemp("device-memory-wide")
    _, args, names, m = import_example("gpt_example", tmp, WIDE, "import")
    data_dir = write_data(tmp / "data", make_data(names, args, 6, 50, seed=5))
    program = m.compile(outdir=tmp / "free", **OPTIONS)
    losses = program.train(data_dir, STEPS, ranks=2)
    return tmp, m, data_dir, program, losses, stages(program)


def test_swap_peer_moves_stage_0_excess_to_stage_1(gpt_wide):
    """--swap peer (Mbapp's balance): with a budget stage 0 exceeds by 15 %,
    its activations go to stage 1, which holds fewer micro-batches, over
    the pipeline link and back before their backward. Both stages fit the
    budget, in memory.json and in the measured counters (stage 1's peak
    grows by what it holds for stage 0; no host memory is used), the peaks
    end up within 15 % of each other (from about 1.5), and the losses are
    bitwise the unconstrained run's."""
    tmp, m, data_dir, free_program, free_losses, planned = gpt_wide
    budget = stage0_budget(planned)
    program = m.compile(outdir=tmp / "peer", device_memory=f"{budget}B", swap="peer",
                        **OPTIONS)
    moved = stages(program)
    assert moved[0]["device_peak_bytes"] <= budget < planned[0]["device_peak_bytes"], moved
    assert planned[1]["device_peak_bytes"] < moved[1]["device_peak_bytes"] <= budget, moved
    assert moved[0]["host_peak_bytes"] == moved[1]["host_peak_bytes"] == 0

    def balance(peaks):
        values = [peaks[k]["device_peak_bytes"] for k in (0, 1)]
        return max(values) / min(values)
    assert balance(planned) > 1.5 and balance(moved) <= 1.15, (planned, moved)
    step = (program.outdir / "step.cpp").read_text()
    assert "swapOutStart" not in step
    # Each stage sends and receives more pipeline messages than before.
    free_step = (free_program.outdir / "step.cpp").read_text()
    for call in ("sendStart(", "recvStart("):
        assert step.count(call) > free_step.count(call), call

    train_matching_plan(program, data_dir, STEPS, 2, "peer", moved, free_losses)


@pytest.fixture(scope="module")
def other_meshes(tmp_path_factory):
    """other_meshes(example, mesh): that test model at WIDE rows per
    micro-batch on that mesh (4 micro-batches, 1F1B), imported, compiled
    without a budget and trained once: (tmp, module, data, options, plan,
    losses, ranks)."""
    cache = {}

    def get(example, mesh):
        if (example, mesh) not in cache:
            tmp = tmp_path_factory.mktemp(f"device-memory-{example}")
            _, args, names, m = import_example(example, tmp, WIDE, "import")
            data_dir = write_data(tmp / "data", make_data(names, args, 8, 50, seed=5))
            options = dict(OPTIONS, mesh=mesh)
            ranks = 4 if mesh.startswith("dp=2") else 2
            free = m.compile(outdir=tmp / "free", **options)
            losses = free.train(data_dir, STEPS, ranks=ranks)
            cache[(example, mesh)] = (tmp, m, data_dir, options, stages(free), losses,
                                      ranks)
        return cache[(example, mesh)]
    return get


@pytest.mark.parametrize("swap", ["host", "peer"])
@pytest.mark.parametrize("example,mesh", [("llama_example", "pp=2"),
                                          ("gpt_example", "dp=2,pp=2")])
def test_swap_fits_llama_and_data_parallel_pipelines(other_meshes, example, mesh, swap):
    """The LLaMA-style test model (RMSNorm, rotary, SwiGLU) on pp=2, and the
    GPT on dp=2 x pp=2 (two replicas of the two stages, gradients
    all-reduced over dp): with a budget stage 0 exceeds by 15 %, --swap
    host and --swap peer fit both stages, every rank's measured counters
    equal its stage's plan (a rank of stage s runs stage s's program), and
    the losses are bitwise the unconstrained run's."""
    tmp, m, data_dir, options, planned, free_losses, ranks = other_meshes(example, mesh)
    budget = stage0_budget(planned)
    program = m.compile(outdir=tmp / swap, device_memory=f"{budget}B", swap=swap,
                        **options)
    moved = stages(program)
    assert moved[0]["device_peak_bytes"] <= budget < planned[0]["device_peak_bytes"], moved
    assert moved[1]["device_peak_bytes"] <= budget, moved
    if swap == "host":
        assert moved[0]["host_peak_bytes"] > 0, moved
    else:
        assert moved[1]["device_peak_bytes"] > planned[1]["device_peak_bytes"], moved
        assert moved[0]["host_peak_bytes"] == moved[1]["host_peak_bytes"] == 0
    train_matching_plan(program, data_dir, STEPS, ranks, swap, moved, free_losses)


@pytest.mark.parametrize("fast,chosen", [("pipeline", "peer"), ("compute", "recompute")])
def test_swap_auto_sends_to_the_neighbour_where_the_play_is_faster(gpt_wide, fast, chosen):
    """--swap auto under pipelines also prices peer: the program the
    per-stage choice makes and the one --swap peer makes are both played
    on the cluster, and the faster is compiled. The host link is 1 KB/s,
    so no stage swaps to the host. With a fast pipeline link and slow
    GEMMs, recomputing costs more than sending stage 0's excess to stage 1
    and back (hidden behind the slow compute): peer. With a 1 KB/s
    pipeline link and fast GEMMs the extra messages cost more than the
    recomputation: stage 0 recomputes. Either way both stages fit and the
    losses are bitwise the unconstrained run's. The budget is 17 % under
    stage 0's peak: at 15 % the recomputation still hides in stage 0's
    1F1B bubble and both ways play the same."""
    from test_planner import GOOD_SPEC
    tmp, m, data_dir, free_program, free_losses, planned = gpt_wide
    budget = int(planned[0]["device_peak_bytes"] / 1.17)
    assert planned[1]["device_peak_bytes"] < budget
    spec = json.loads(json.dumps(GOOD_SPEC))
    spec["host_link"] = {"link": "test", "bandwidth_gbytes_per_s": 1e-6, "latency_us": 1}
    if fast == "pipeline":
        spec["gpu"]["peak_tflops"] = {k: 1e-5 for k in spec["gpu"]["peak_tflops"]}
    else:
        spec["intra_node"]["bandwidth_gbytes_per_s"] = 1e-6
    (tmp / f"auto-{fast}.json").write_text(json.dumps(spec))
    out = tmp / f"auto-{fast}"
    proc = subprocess.run(
        [find_tool("loomc"), str(m.save(tmp / f"auto-{fast}.mlir")),
         "-o", str(out), "--device-memory", f"{budget}B", "--swap", "auto",
         "--cluster", str(tmp / f"auto-{fast}.json"), "--mesh", "pp=2",
         "--microbatches", "4", "--schedule", "1f1b", "--optimizer", "adamw",
         "--lr", "0.001", "--weights", str(tmp / f"auto-{fast}.safetensors")],
        capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    played = re.search(r"--swap auto: (peer instead|not peer) \(step ([\d.]+) ms played on "
                       r"\S+, per-stage choice ([\d.]+) ms\)", proc.stderr)
    assert played, proc.stderr
    peer_ms, per_stage_ms = float(played.group(2)), float(played.group(3))
    plan = json.loads((out / "plan.json").read_text())
    moved = stages(Program(out))
    assert moved[0]["device_peak_bytes"] <= budget and moved[1]["device_peak_bytes"] <= budget
    if chosen == "peer":
        assert played.group(1) == "peer instead" and peer_ms < per_stage_ms
        assert plan["swap"] == "peer" and plan["recompute"] == "none", plan
        assert moved[1]["device_peak_bytes"] > planned[1]["device_peak_bytes"]
    else:
        assert played.group(1) == "not peer" and peer_ms >= per_stage_ms
        assert plan["swap"] == "none" and plan["recompute_per_stage"][0] != "none", plan
        assert moved[1]["device_peak_bytes"] == planned[1]["device_peak_bytes"]
    assert Program(out).train(data_dir, STEPS, ranks=2) == free_losses


@pytest.fixture(scope="module")
def gpt4(tmp_path_factory):
    """pp=4 (a 4-layer GPT, 8 micro-batches of 4 rows, 1F1B): the module,
    its data, the options, and the unconstrained program with its plan and
    losses (2 steps on 4 ranks)."""
    import torch
    sys.path.insert(0, str(Path(__file__).parent / "models"))
    from torch_models import GPT
    tmp = tmp_path_factory.mktemp("device-memory-pp4")
    vocab, seq, rows, micro = 128, 32, 4, 8
    rng = np.random.default_rng(0)
    data = tmp / "data"
    data.mkdir()
    np.save(data / "ids.npy", rng.integers(0, vocab, (rows * micro, seq)).astype(np.int64))
    np.save(data / "labels.npy", rng.integers(0, vocab, (rows * micro, seq)).astype(np.int64))
    torch.manual_seed(0)
    model = GPT(vocab=vocab, seq=seq, hidden=64, heads=4, layers=4)
    example = tuple(torch.from_numpy(np.load(data / f"{n}.npy")[:rows]) for n in ("ids", "labels"))
    m = loom.from_torch(model, example, input_names=["ids", "labels"],
                        workdir=tmp / "import")
    options = dict(mesh="pp=4", microbatches=micro, schedule="1f1b", optimizer="adamw",
                   lr=1e-3)
    free = m.compile(outdir=tmp / "free", **options)
    return tmp, m, data, options, stages(free), free.train(data, 2, ranks=4)


def test_swap_peer_passes_the_excess_down_a_pipeline_of_four(gpt4):
    """Stage 0 over a budget by 15 % while stage 1 is close to it. Stage 1
    makes room by passing its own activations to stage 2, and stage 2 to
    stage 3, so stage 0's excess reaches the last stage's room: every stage
    fits (plan = measured counters), stage 3 holds more than before, and
    the losses are bitwise the unconstrained run's."""
    tmp, m, data, options, planned, free_losses = gpt4
    budget = stage0_budget(planned)
    assert planned[1]["device_peak_bytes"] > 0.9 * budget, planned  # little room
    program = m.compile(outdir=tmp / "peer", device_memory=budget, swap="peer",
                        **options)
    moved = stages(program)
    for k in range(4):
        assert moved[k]["device_peak_bytes"] <= budget, (k, moved[k])
        assert moved[k]["host_peak_bytes"] == 0
    assert moved[3]["device_peak_bytes"] > planned[3]["device_peak_bytes"]
    train_matching_plan(program, data, 2, 4, "peer", moved, free_losses)


def test_swap_balance_passes_on_down_a_pipeline_of_four_then_offloads(gpt4):
    """At 70 % of stage 0's peak the four stages together need more than
    four budgets: with --swap balance each stage passes what it cannot
    hold to the next, which passes its own on, until the last stage is
    full, and the rest goes to the host pool. Every stage ends within 15 %
    of the others (Mbapp's balance; --swap host leaves stage 3 where it
    was), plan = counters, and the losses are bitwise the unconstrained
    run's. Placing these moves pair by pair closed cycles of waits through
    three stages (the program hung at run time): loom-swap now plays every
    move with all stages' messages and refuses those, and
    loom-verify-messages checks the result."""
    tmp, m, data, options, planned, free_losses = gpt4
    budget = int(0.7 * planned[0]["device_peak_bytes"])
    assert sum(s["device_peak_bytes"] for s in planned.values()) > 4 * budget
    program = m.compile(outdir=tmp / "balance", device_memory=budget, swap="balance",
                        **options)
    moved = stages(program)
    peaks = [moved[k]["device_peak_bytes"] for k in range(4)]
    assert max(peaks) <= budget and max(peaks) / min(peaks) <= 1.15, moved
    assert moved[3]["device_peak_bytes"] > planned[3]["device_peak_bytes"]
    assert moved[0]["host_peak_bytes"] > 0, moved
    train_matching_plan(program, data, 2, 4, "balance", moved, free_losses)


def test_swap_peer_without_room_on_the_neighbour_is_an_error(gpt, free):
    """At 8 rows per micro-batch the two stages together need more than
    twice a budget stage 0 exceeds by 15 %: stage 1 fills up before stage 0
    fits, and the error says that no neighbour has room."""
    tmp, m, _ = gpt
    budget = stage0_budget(free[2])
    with pytest.raises(loom.LoomError) as error:
        m.compile(outdir=tmp / "peer-full", device_memory=budget, swap="peer", **OPTIONS)
    message = str(error.value)
    assert re.search(r"stage 0 \(@\w*stage0_step\) still needs \d+ bytes of device memory "
                     r"at its peak .* after sending to its neighbours \d+ activation buffer\(s\) "
                     r"of \d+ bytes: no neighbouring stage has room for the next activation "
                     r"\(\d+ bytes\) under the budget, nor can make it by passing its own on",
                     message), message


def test_swap_balance_fills_the_neighbour_then_the_host(gpt, free):
    """--swap balance (Mbapp): at the budget that stage 1 cannot hold all
    of stage 0's excess under (where --swap peer fails), stage 0 sends
    stage 1 what fits and offloads the rest to the host pool: both stages
    fit, stage 1's peak rises towards the budget, the stages' peaks end
    closer together than with --swap host, plan and counters agree, and
    the losses are bitwise the unconstrained run's."""
    tmp, m, data_dir = gpt
    _, free_losses, planned = free
    budget = stage0_budget(planned)
    program = m.compile(outdir=tmp / "balance", device_memory=budget, swap="balance",
                        **OPTIONS)
    moved = stages(program)
    assert all(s["device_peak_bytes"] <= budget for s in moved.values()), moved
    assert moved[1]["device_peak_bytes"] > planned[1]["device_peak_bytes"], moved
    assert moved[0]["host_peak_bytes"] > 0 and moved[1]["host_peak_bytes"] == 0, moved
    step = (program.outdir / "step.cpp").read_text()
    assert "swapOutStart" in step and "sendStart" in step
    host = stages(m.compile(outdir=tmp / "balance-host", device_memory=budget,
                            swap="host", emit_only=True, **OPTIONS))

    def balance(peaks):
        return max(s["device_peak_bytes"] for s in peaks.values()) / \
            min(s["device_peak_bytes"] for s in peaks.values())
    assert balance(moved) < balance(host), (moved, host)
    train_matching_plan(program, data_dir, STEPS, 2, "balance", moved, free_losses)


@pytest.mark.parametrize("link,chosen", [(1e-6, "recompute"), (1e4, "swap")])
def test_swap_auto_sheds_by_the_cheaper_way_on_the_cluster(gpt, free, link, chosen,
                                                          tmp_path):
    """--swap auto: stage 0, over the budget, swaps or recomputes, whichever
    the cluster spec prices cheaper for it. Over a host link of 1 KB/s the
    copies cannot hide behind compute and stage 0 recomputes; over 10 TB/s
    they hide and it swaps. Either way it fits, stage 1 is left alone, and
    the losses are bitwise the unconstrained run's."""
    from test_planner import GOOD_SPEC
    _, m, data_dir = gpt
    _, free_losses, planned = free
    budget = stage0_budget(planned)
    spec = dict(GOOD_SPEC, host_link={"link": "test", "bandwidth_gbytes_per_s": link,
                                      "latency_us": 1})
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    program = m.compile(outdir=tmp_path / "out", device_memory=budget, swap="auto",
                        cluster=tmp_path / "spec.json", **OPTIONS)
    peaks = stages(program)
    assert peaks[0]["device_peak_bytes"] <= budget and peaks[1] == planned[1]
    plan = json.loads((tmp_path / "out" / "plan.json").read_text())
    step = (tmp_path / "out" / "step.cpp").read_text()
    if chosen == "swap":
        assert plan["swap"] == "host" and plan["recompute"] == "none", plan
        assert "swapOutStart" in step and peaks[0]["host_peak_bytes"] > 0
    else:
        assert plan["swap"] == "none" and plan["recompute"] == "auto", plan
        assert plan["recompute_per_stage"][0] != "none", plan
        assert plan["recompute_per_stage"][1] == "none", plan
        assert "swapOutStart" not in step
    assert program.train(data_dir, STEPS, ranks=2) == free_losses


def compile_swap_auto(m, budget, link, tmp_path):
    """loomc --swap auto on pp=2 at `budget` bytes, the `tiny` cluster spec
    with a host link of `link` GB/s: (OUTDIR, the finished process, whose
    stderr has the choices and prices)."""
    from test_planner import GOOD_SPEC
    spec = dict(GOOD_SPEC, host_link={"link": "test", "bandwidth_gbytes_per_s": link,
                                      "latency_us": 1})
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    out = tmp_path / "out"
    proc = subprocess.run(
        [find_tool("loomc"), str(m.save(tmp_path / "model.mlir")), "-o", str(out),
         "--device-memory", f"{budget}B", "--swap", "auto",
         "--cluster", str(tmp_path / "spec.json"), "--mesh", "pp=2",
         "--microbatches", "4", "--schedule", "1f1b", "--optimizer", "adamw",
         "--lr", "0.001", "--weights", str(tmp_path / "model.safetensors")],
        capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return out, proc


def test_swap_auto_recomputes_part_of_a_stage_and_swaps_the_rest(gpt, free, tmp_path):
    """--swap auto also mixes both ways within a stage: its cheapest
    tensors recomputed up to a share of its excess, the rest swapped. At a
    budget stage 0 exceeds by 31 %, recomputation alone cannot fit it, and
    over a 0.1 GB/s host link swapping alone leaves copies exposed; the mix
    is priced below swapping and chosen. Stage 0 then both recomputes and
    swaps, fits, and the losses are bitwise the unconstrained run's."""
    tmp, m, data_dir = gpt
    _, free_losses, planned = free
    # (Between 28 and 35 % on this model, swept by hand: below 28 % the
    # played --swap balance beats the per-stage choice, and from 35 % stage
    # 1 no longer fits. The window moves when the stages' buffers change:
    # it was 19.5-21 % before loom.norm_grad and loom-fuse-loss-softmax
    # shrank them, 26-28 % before the gemms collected their sums.)
    budget = int(planned[0]["device_peak_bytes"] / 1.31)
    assert planned[1]["device_peak_bytes"] < budget
    out, proc = compile_swap_auto(m, budget, 0.1, tmp_path)
    line = re.search(r"--swap auto: stage 0: recompute (\d+) % of the excess, swap the rest "
                     r"\(swap copies ([\d.]+) ms exposed per step, recompute cannot fit, "
                     r"both ([\d.]+) ms on tiny\)", proc.stderr)
    assert line, proc.stderr
    assert 0 < int(line.group(1)) < 100
    assert float(line.group(3)) < float(line.group(2))
    plan = json.loads((out / "plan.json").read_text())
    assert plan["swap"] == "host" and plan["recompute_per_stage"] == ["auto", "none"], plan
    assert plan["recompute_bytes_per_stage"][0] > 0, plan
    peaks = stages(Program(out))
    assert peaks[0]["device_peak_bytes"] <= budget and peaks[0]["host_peak_bytes"] > 0
    assert peaks[1] == planned[1]
    assert peaks[0]["recompute"]["ops"] > 0, peaks[0]
    assert "swapOutStart" in (out / "step.cpp").read_text()
    assert Program(out).train(data_dir, STEPS, ranks=2) == free_losses


def test_swap_auto_takes_balance_where_it_plays_fastest(gpt, free, tmp_path):
    """--swap auto under pipelines also plays --swap balance's program. At
    the budget where peer cannot fit, over a 0.05 GB/s host link, stage 1
    taking what it has room for and the host the rest plays faster on the
    spec than stage 0 shedding alone: balance is compiled. Both stages fit
    and the losses are bitwise the unconstrained run's."""
    tmp, m, data_dir = gpt
    _, free_losses, planned = free
    budget = stage0_budget(planned)
    out, proc = compile_swap_auto(m, budget, 0.05, tmp_path)
    line = re.search(r"--swap auto: balance instead \(step ([\d.]+) ms played on tiny, "
                     r"per-stage choice ([\d.]+) ms\)", proc.stderr)
    assert line and float(line.group(1)) < float(line.group(2)), proc.stderr
    assert "--swap auto: not peer: " in proc.stderr
    plan = json.loads((out / "plan.json").read_text())
    assert plan["swap"] == "balance" and plan["recompute"] == "none", plan
    moved = stages(Program(out))
    assert all(s["device_peak_bytes"] <= budget for s in moved.values()), moved
    assert moved[1]["device_peak_bytes"] > planned[1]["device_peak_bytes"], moved
    assert moved[0]["host_peak_bytes"] > 0, moved
    assert Program(out).train(data_dir, STEPS, ranks=2) == free_losses


def copy_windows(step_cpp):
    """Per swap copy of step.cpp, in order: the ops computed between its
    start and its wait (the compute it hides behind)."""
    lines = step_cpp.splitlines()
    started, windows = {}, []
    for i, line in enumerate(lines):
        start = re.search(r"(copies\[\S+\]) = swap(?:Out|In)Start\(", line)
        if start:
            started[start.group(1)] = i
            continue
        wait = re.search(r"wait\(ctx, (copies\[\S+\])\);", line)
        if wait and wait.group(1) in started:
            at = started.pop(wait.group(1))
            windows.append(sum("traceOp(" in x for x in lines[at + 1:i]))
    assert not started, started
    return windows


def test_swap_copies_hide_behind_the_compute_the_link_needs(gpt, free, tmp_path):
    """With --cluster, loom-swap times each host copy on the spec (its bytes
    over the host link against the ops' work) and puts as many ops between
    its start and its wait as cover it, instead of a fixed 4: over a 10 TB/s
    link one op hides a copy, over 1 GB/s it takes about nine. The losses
    stay bitwise the unconstrained run's."""
    from test_planner import GOOD_SPEC
    _, m, data_dir = gpt
    _, free_losses, planned = free
    budget = stage0_budget(planned)
    windows = {}
    for name, link in (("fast", 1e4), ("slow", 1.0)):
        spec = dict(GOOD_SPEC, host_link={"link": "test", "bandwidth_gbytes_per_s": link,
                                          "latency_us": 1})
        (tmp_path / f"{name}.json").write_text(json.dumps(spec))
        program = m.compile(outdir=tmp_path / name, device_memory=budget, swap="host",
                            cluster=tmp_path / f"{name}.json", roll_repeats=False,
                            **OPTIONS)
        assert stages(program)[0]["device_peak_bytes"] <= budget
        windows[name] = copy_windows((program.outdir / "step.cpp").read_text())
    fast, slow = windows["fast"], windows["slow"]
    # (Longer windows hold more bytes: the slow program moves more buffers.)
    assert fast and slow, windows
    assert max(fast) <= 1, fast
    assert max(slow) > 4 and sum(slow) / len(slow) > 4 * sum(fast) / len(fast), windows
    assert program.train(data_dir, STEPS, ranks=2) == free_losses


def test_persistent_buffers_over_the_budget_cannot_be_swapped(gpt):
    tmp, m, _ = gpt
    with pytest.raises(loom.LoomError, match=r"stage 0 \(@\w*stage0_step\): its parameters and "
                       r"optimizer state alone need \d+ bytes .* nothing swappable can fix it"):
        m.compile(outdir=tmp / "tiny", device_memory="1KiB", swap="host", **OPTIONS)


def test_bad_budgets_are_errors(gpt):
    tmp, m, _ = gpt
    with pytest.raises(loom.LoomError, match="--device-memory: unknown suffix 'GB' in '2GB'; "
                       "the accepted suffixes are B, KiB, MiB, GiB, TiB"):
        m.compile(outdir=tmp / "bad", device_memory="2GB", **OPTIONS)
    with pytest.raises(loom.LoomError, match="--swap peer sends activations to a "
                       "neighbouring pipeline stage: it needs --mesh pp=N with N >= 2"):
        m.compile(outdir=tmp / "peer", device_memory="1GiB", swap="peer",
                  **dict(OPTIONS, mesh="dp=2"))
    with pytest.raises(loom.LoomError, match="--swap host sheds activations to fit a "
                       "device budget: give --device-memory BYTES"):
        m.compile(outdir=tmp / "nobudget", swap="host", **OPTIONS)


def test_emulated_cuda_swaps_on_its_copy_stream(gpt, unconstrained):
    """--target cuda with --swap host: the same swap copies, through the
    CUDA backend's swapOutStart/swapInStart (emulated: the copy thread).
    The losses are the unconstrained CPU run's, bit for bit, and the
    swapped bytes really cross: rank 0 copies more to and from the host
    than its batch, weights and loss."""
    tmp, m, data_dir = gpt
    _, free_losses, planned = unconstrained()
    budget = stage0_budget(planned)
    program = m.compile(outdir=tmp / "cuda-swap", device_memory=f"{budget}B", swap="host",
                        target="cuda", cuda_emulate=True, **OPTIONS)
    source = (program.outdir / "step.cu").read_text()
    assert "cuda::swapOutStart(ctx, " in source and "cuda::swapInStart(ctx, " in source
    swapped = stages(program)
    assert swapped[0]["host_peak_bytes"] > 0
    got = program.train(data_dir, STEPS, ranks=2, extra_args=[
        "--memory-counters", str(tmp / "cuda-swap-{rank}.json")])
    assert got == free_losses
    c = counters(tmp / "cuda-swap-0.json")
    persistent = swapped[0]["persistent_bytes"]
    weights = persistent["params"] + persistent["optimizer_state"]
    # Without swap: the weights once each way, the batch in and the loss
    # out every step; the rest is the swap copies.
    assert c["device_to_host_bytes"] > weights + STEPS * persistent["results"], c
    assert c["host_to_device_bytes"] > weights + STEPS * persistent["data"], c
    assert c["host_peak_bytes"] == swapped[0]["host_peak_bytes"]

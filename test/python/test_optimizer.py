"""loom-optimizer against torch.optim, step by step.

A hand-written @f_grad returns the gradient of
`loss = sum(c_w * w * w) + sum(c_b * b * b)` plus a per-step data term:
`grad.w = (2 * c_w) * w + n_w` (likewise for b), written with loom ops. The
test runs `loom-opt -loom-optimizer=...`, then calls @f_step with loom-run
once per step, feeding its results (new params, new state) back as inputs,
and after every step compares the loss, the parameters, their change and the
optimizer state with torch.optim (single-tensor implementation,
`foreach=False`) and torch.optim.lr_scheduler given the same gradients.

loom-opt and loom-run come from $LOOM_BUILD_DIR/bin (default: the
repository's build/); the tests are skipped when they have not been built.
"""

import math
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("LOOM_BUILD_DIR", ROOT / "build"))
LOOM_OPT = BUILD / "bin" / "loom-opt"
LOOM_RUN = BUILD / "bin" / "loom-run"

pytestmark = pytest.mark.skipif(
    not (LOOM_OPT.exists() and LOOM_RUN.exists()),
    reason=f"loom-opt/loom-run not built in {BUILD}")

W_SHAPE, B_SHAPE = (3, 4), (5,)
STEPS = 8

# Arguments interleave data with the parameters, so that @f_step's reordering
# (params, state, data) is exercised.
GRAD_IR = """
func.func @f_grad(%w: tensor<3x4xf32> {loom.param, loom.name = "w"},
                  %c_w: tensor<3x4xf32> {loom.name = "c_w"},
                  %n_w: tensor<3x4xf32> {loom.name = "n_w"},
                  %b: tensor<5xf32> {loom.param, loom.name = "b"},
                  %c_b: tensor<5xf32> {loom.name = "c_b"},
                  %n_b: tensor<5xf32> {loom.name = "n_b"})
    -> (tensor<f32> {loom.name = "loss"},
        tensor<3x4xf32> {loom.name = "grad.w", loom.grad_of = 0 : i64},
        tensor<5xf32> {loom.name = "grad.b", loom.grad_of = 3 : i64}) {
  %ww = loom.mul %w, %w : tensor<3x4xf32>
  %lw = loom.mul %c_w, %ww : tensor<3x4xf32>
  %sw = loom.reduce_sum %lw, dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  %bb = loom.mul %b, %b : tensor<5xf32>
  %lb = loom.mul %c_b, %bb : tensor<5xf32>
  %sb = loom.reduce_sum %lb, dims = [0] : tensor<5xf32> -> tensor<f32>
  %loss = loom.add %sw, %sb : tensor<f32>
  %two_w = loom.constant dense<2.0> : tensor<3x4xf32>
  %k_w = loom.mul %two_w, %c_w : tensor<3x4xf32>
  %kw = loom.mul %k_w, %w : tensor<3x4xf32>
  %gw = loom.add %kw, %n_w : tensor<3x4xf32>
  %two_b = loom.constant dense<2.0> : tensor<5xf32>
  %k_b = loom.mul %two_b, %c_b : tensor<5xf32>
  %kb = loom.mul %k_b, %b : tensor<5xf32>
  %gb = loom.add %kb, %n_b : tensor<5xf32>
  return %loss, %gw, %gb : tensor<f32>, tensor<3x4xf32>, tensor<5xf32>
}
"""


def make_problem(seed):
    rng = np.random.default_rng(seed)
    f32 = np.float32
    return {
        "w": rng.standard_normal(W_SHAPE).astype(f32),
        "b": rng.standard_normal(B_SHAPE).astype(f32),
        "c_w": rng.uniform(0.5, 2.0, W_SHAPE).astype(f32),
        "c_b": rng.uniform(0.5, 2.0, B_SHAPE).astype(f32),
        "n_w": [rng.standard_normal(W_SHAPE).astype(f32) for _ in range(STEPS)],
        "n_b": [rng.standard_normal(B_SHAPE).astype(f32) for _ in range(STEPS)],
    }


def state_names(optimizer, momentum):
    if optimizer in ("adam", "adamw"):
        return [f"{s}.{p}" for p in ("w", "b") for s in ("exp_avg", "exp_avg_sq")]
    return [f"momentum.{p}" for p in ("w", "b")] if momentum else []


def run_loom(tmp_path, options, problem):
    """Runs STEPS steps of @f_step; returns one dict of arrays per step."""
    src = tmp_path / "grad.mlir"
    src.write_text(GRAD_IR)
    step_ir = tmp_path / "step.mlir"
    opt = subprocess.run(
        [str(LOOM_OPT), str(src), f"-loom-optimizer={options}", "-o", str(step_ir)],
        capture_output=True, text=True, timeout=60)
    assert opt.returncode == 0, opt.stderr

    values = {"w": problem["w"], "b": problem["b"], "step": np.zeros((), np.float32)}
    optimizer = dict(o.split("=") for o in options.split()).get("optimizer", "sgd")
    momentum = "momentum=" in options
    for name in state_names(optimizer, momentum):
        values[name] = np.zeros_like(problem[name.rsplit(".", 1)[1]])
    values.update(c_w=problem["c_w"], c_b=problem["c_b"])

    history = []
    for k in range(STEPS):
        values.update(n_w=problem["n_w"][k], n_b=problem["n_b"][k])
        step_dir = tmp_path / f"step{k}"
        step_dir.mkdir()
        cmd = [str(LOOM_RUN), str(step_ir), "--entry", "f_step",
               "--output-dir", str(step_dir / "out")]
        for name, array in values.items():
            path = step_dir / f"in_{name}.npy"
            np.save(path, array)
            cmd += ["--input", f"{name}={path}"]
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, f"step {k}: {run.stderr}"
        results = {p.stem: np.load(p) for p in (step_dir / "out").glob("*.npy")}
        expected = {"loss", "w", "b", "step", *state_names(optimizer, momentum)}
        assert set(results) == expected
        for name in expected - {"loss"}:
            values[name] = results[name]
        history.append(results)
    return history


def lambda_for(schedule, lr, warmup, total, min_lr):
    """The LambdaLR factor of each documented schedule (Passes.td)."""
    def factor(e):
        if schedule != "constant" and e < warmup:
            return (e + 1) / warmup
        if schedule != "cosine":
            return 1.0
        progress = min(1.0, (e - warmup) / (total - warmup))
        return (min_lr + (lr - min_lr) * (1 + math.cos(math.pi * progress)) / 2) / lr
    return factor


def run_torch(problem, optimizer="sgd", lr=1e-3, momentum=0.0, nesterov=False,
              weight_decay=None, betas=(0.9, 0.999), eps=1e-8, clip=0.0,
              schedule="constant", warmup=0, total=0, min_lr=0.0,
              scheduler=None):
    w = torch.nn.Parameter(torch.from_numpy(problem["w"].copy()))
    b = torch.nn.Parameter(torch.from_numpy(problem["b"].copy()))
    kwargs = {} if weight_decay is None else {"weight_decay": weight_decay}
    if optimizer == "sgd":
        opt = torch.optim.SGD([w, b], lr=lr, momentum=momentum, nesterov=nesterov,
                              foreach=False, **kwargs)
    else:
        cls = torch.optim.Adam if optimizer == "adam" else torch.optim.AdamW
        opt = cls([w, b], lr=lr, betas=betas, eps=eps, foreach=False, **kwargs)
    if scheduler is None:
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda_for(schedule, lr, warmup, total, min_lr))
    else:
        sched = scheduler(opt)

    history = []
    c_w, c_b = torch.from_numpy(problem["c_w"]), torch.from_numpy(problem["c_b"])
    for k in range(STEPS):
        with torch.no_grad():
            loss = (c_w * (w * w)).sum() + (c_b * (b * b)).sum()
            w.grad = (2 * c_w) * w + torch.from_numpy(problem["n_w"][k])
            b.grad = (2 * c_b) * b + torch.from_numpy(problem["n_b"][k])
        if clip:
            torch.nn.utils.clip_grad_norm_([w, b], clip, foreach=False)
        opt.step()
        sched.step()
        record = {"loss": loss.numpy().copy(), "w": w.detach().numpy().copy(),
                  "b": b.detach().numpy().copy()}
        for name, p in (("w", w), ("b", b)):
            state = opt.state[p]
            for key in ("momentum_buffer", "exp_avg", "exp_avg_sq"):
                if state.get(key) is not None:
                    short = "momentum" if key == "momentum_buffer" else key
                    record[f"{short}.{name}"] = state[key].numpy().copy()
        history.append(record)
    return history


def compare(loom, ref, problem, rtol=2e-6, delta_rtol=2e-5):
    previous = {"w": problem["w"], "b": problem["b"]}
    for k, (got, want) in enumerate(zip(loom, ref)):
        assert got["step"] == np.float32(k + 1)
        np.testing.assert_allclose(got["loss"], want["loss"], rtol=1e-5,
                                   err_msg=f"loss, step {k + 1}")
        for name in want:
            if name == "loss":
                continue
            np.testing.assert_allclose(got[name], want[name], rtol=rtol, atol=1e-7,
                                       err_msg=f"{name}, step {k + 1}")
        # The update itself, which a small relative error in the parameter
        # would hide.
        for name in ("w", "b"):
            np.testing.assert_allclose(got[name] - previous[name],
                                       want[name] - previous[name],
                                       rtol=delta_rtol, atol=1e-7,
                                       err_msg=f"update of {name}, step {k + 1}")
        previous = {"w": want["w"], "b": want["b"]}


CASES = {
    "sgd": ("lr=0.05", dict(lr=0.05)),
    "sgd-weight-decay": ("lr=0.05 weight-decay=0.1",
                         dict(lr=0.05, weight_decay=0.1)),
    "sgd-momentum": ("lr=0.05 momentum=0.9", dict(lr=0.05, momentum=0.9)),
    "sgd-nesterov": ("lr=0.05 momentum=0.9 nesterov=true weight-decay=0.01",
                     dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    "adam": ("optimizer=adam lr=0.01", dict(optimizer="adam", lr=0.01)),
    "adam-weight-decay": ("optimizer=adam lr=0.01 weight-decay=0.1 beta1=0.8 "
                          "beta2=0.99 eps=1e-6",
                          dict(optimizer="adam", lr=0.01, weight_decay=0.1,
                               betas=(0.8, 0.99), eps=1e-6)),
    "adamw": ("optimizer=adamw lr=0.01", dict(optimizer="adamw", lr=0.01)),
    "adamw-strong-decay": ("optimizer=adamw lr=0.01 weight-decay=0.5",
                           dict(optimizer="adamw", lr=0.01, weight_decay=0.5)),
    "adamw-no-decay": ("optimizer=adamw lr=0.01 weight-decay=0",
                       dict(optimizer="adamw", lr=0.01, weight_decay=0.0)),
    "adam-small-beta1": ("optimizer=adam lr=0.01 beta1=0.3",
                         dict(optimizer="adam", lr=0.01, betas=(0.3, 0.999))),
    "sgd-momentum-clip": ("lr=0.05 momentum=0.9 clip-grad-norm=0.5",
                          dict(lr=0.05, momentum=0.9, clip=0.5)),
    "adamw-clip": ("optimizer=adamw lr=0.01 clip-grad-norm=1.0",
                   dict(optimizer="adamw", lr=0.01, clip=1.0)),
    "sgd-warmup": ("lr=0.05 momentum=0.9 schedule=warmup warmup-steps=3",
                   dict(lr=0.05, momentum=0.9, schedule="warmup", warmup=3)),
    "adamw-cosine-warmup": ("optimizer=adamw lr=0.01 schedule=cosine "
                            "warmup-steps=2 total-steps=6 min-lr=0.001",
                            dict(optimizer="adamw", lr=0.01, schedule="cosine",
                                 warmup=2, total=6, min_lr=0.001)),
    "sgd-cosine": ("lr=0.05 schedule=cosine total-steps=5",
                   dict(lr=0.05, schedule="cosine", total=5)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_torch(tmp_path, case):
    options, kwargs = CASES[case]
    problem = make_problem(seed=sorted(CASES).index(case))
    compare(run_loom(tmp_path, options, problem), run_torch(problem, **kwargs),
            problem)


def test_cosine_is_cosine_annealing_lr(tmp_path):
    """Without warmup the cosine schedule is CosineAnnealingLR (whose
    recursive form PyTorch steps; equal up to rounding) for T_max steps."""
    problem = make_problem(seed=100)
    loom = run_loom(tmp_path, "optimizer=adam lr=0.01 schedule=cosine "
                    "total-steps=8 min-lr=0.002", problem)
    ref = run_torch(problem, optimizer="adam", lr=0.01,
                    scheduler=lambda opt: torch.optim.lr_scheduler.CosineAnnealingLR(
                        opt, T_max=8, eta_min=0.002))
    compare(loom, ref, problem, rtol=1e-5, delta_rtol=1e-4)


def test_warmup_is_linear_lr(tmp_path):
    """The warmup schedule is LinearLR(start_factor=1/W, total_iters=W-1)."""
    problem = make_problem(seed=101)
    loom = run_loom(tmp_path, "lr=0.05 schedule=warmup warmup-steps=4", problem)
    ref = run_torch(problem, lr=0.05,
                    scheduler=lambda opt: torch.optim.lr_scheduler.LinearLR(
                        opt, start_factor=0.25, total_iters=3))
    compare(loom, ref, problem, rtol=1e-5, delta_rtol=1e-4)

//===- Passes.td - Passes over the loom dialect ------------*- tablegen -*-===//

#ifndef LOOM_DIALECT_LOOM_TRANSFORMS_PASSES_TD
#define LOOM_DIALECT_LOOM_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def LoomShapeInference : Pass<"loom-shape-inference", "ModuleOp"> {
  let summary = "Refine tensor shapes through functions and calls";
  let description = [{
    Replaces every result type that is less precise than the type its op
    infers (a `?` where the operands determine the size) by the inferred
    type, in program order, then refines function result types from their
    `func.return` operands and call results from their callees, until
    nothing changes.

    `arg-shapes` first binds dynamic dimensions of function arguments, e.g.
    `arg-shapes=x=8x784,labels=8`. An argument is named by its `loom.name`
    attribute or as `argN`; the shape must be compatible with the declared
    type. This is how a model imported with a symbolic batch size is
    specialised.

    Ops that state their result type (`reshape`, `broadcast`, `convert`,
    `iota`) are refined from the other side: where an op requires one shape
    for all its operands and results (elementwise ops), every value involved
    takes the most precise of their shapes, so `broadcast %b : tensor<256xf32>
    -> tensor<?x256xf32>` feeding an add with a `tensor<32x256xf32>` operand
    becomes `-> tensor<32x256xf32>`. Function arguments change only through
    `arg-shapes`. A refinement that contradicts a declared type is an error
    at that op. Sweeps repeat until nothing changes. Example:

    ```mlir
    %0 = "loom.dot_general"(%a, %b) <{lhs_contracting_dims = array<i64: 1>,
         rhs_contracting_dims = array<i64: 0>}>
         : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<?x?xf32>
    ```
    becomes `... -> tensor<8x4xf32>`.
  }];
  let options = [
    ListOption<"argShapes", "arg-shapes", "std::string",
               "Bind function argument shapes: NAME=DxDx... (NAME is the "
               "argument's loom.name or argN)">,
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "Apply arg-shapes to this function only (default: every "
           "function that has a matching argument)">,
  ];
}

def LoomReportCost : Pass<"loom-report-cost", "ModuleOp"> {
  let summary = "Print each function's flops, bytes and parameter count as JSON";
  let description = [{
    Sums `CostInterface` over every op of each function and counts the
    elements of its `loom.param` arguments, then prints one JSON object to
    stdout (or to `output`):

    ```json
    {"functions": [{"name": "main", "ops": 12, "flops": 1234,
      "bytes": 5678, "params": 910, "param_bytes": 3640,
      "unknown_cost_ops": 0} ]}
    ```

    Ops whose cost depends on a dynamic shape are counted in
    `unknown_cost_ops`. The IR is not changed.
  }];
  let options = [
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "Where to write the JSON report (- for stdout)">,
  ];
}

def LoomOptimizer : Pass<"loom-optimizer", "ModuleOp"> {
  let summary = "Add @F_step: the forward/backward of @F_grad and one "
                "optimizer update (SGD, Adam, AdamW)";
  let description = [{
    Takes `@F_grad` (from `loom-autodiff`, see docs/training.md): results
    `(loss, d loss/d arg_i {loom.grad_of = i}, ...)`. Adds `@F_step` (the
    `_grad` suffix replaced by `_step`) holding `@F_grad`'s body (cloned, not
    called) followed by one optimizer update. `@F_grad` is left unchanged.

    Layout, with P parameters (the arguments named by a `loom.grad_of`, in
    argument order):

    | arguments | |
    | --- | --- |
    | `0 .. P-1` | the parameters, with their attributes |
    | `P` | `step {loom.state, loom.name = "step"} : tensor<f32>`, 0 before the first step |
    | `P+1 ..` | per parameter `p`, in order: `momentum.<p>` (SGD with momentum > 0), or `exp_avg.<p>`, `exp_avg_sq.<p>` (Adam, AdamW); each `{loom.state}` with the parameter's type |
    | then | the other arguments of `@F_grad` in their order (data; a `loom.param` argument without a gradient is frozen and passed here) |

    Results: `loss` (before this update), the new parameters, the new
    `step`, the new state, in argument order; result `k > 0` carries
    `loom.updates = k - 1` and the `loom.name` of the argument it replaces;
    the loss is named `loss`. `<p>` is the parameter's `loom.name`. Every
    argument without a `loom.name` gets `loom.name = "argN"`, `N` being its
    index in `@F_grad`, since its position changes. Initial state is all
    zeros.

    The update is PyTorch's single-tensor (`foreach=False`) one, op for op,
    in f32 (scalars such as `1 - beta2` are computed in double at compile
    time and rounded once, as PyTorch passes them to its kernels):

    * `step += 1`; `lr` is the learning rate of this step (below).
    * Clipping (`clip-grad-norm > 0`, `torch.nn.utils.clip_grad_norm_`,
      norm type 2): `total = sqrt(sum_p ||g_p||^2)` over the per-tensor
      norms, `coef = min(max_norm / (total + 1e-6), 1)`, `g_p *= coef`.
      On a mesh the norm is that of the whole model: when the module's
      `@mesh` has a tp axis of `T > 1` ranks, the squares of the sliced
      (`loom.shard`) gradients are summed over it (`grid_axes = [2]`; the
      replicated ones are equal on every tp rank and counted once); with a
      pp axis of `P > 1` (a pipeline stage) the stage's sum is summed over
      it (`grid_axes = [1]`), leaving out parameters marked `loom.pipeline_copy` (another stage's copy of a
      shared parameter). Data-parallel replicas already hold averaged,
      equal gradients.
    * `sgd` (`torch.optim.SGD`): `g += wd * p`; with momentum
      `buf = momentum * buf + g` (the zero initial buffer makes the first
      step `buf = g`, as PyTorch's clone; hence `dampening` must be 0);
      `g = nesterov ? g + momentum * buf : buf`; `p -= lr * g`.
    * `adam` / `adamw` (`torch.optim.Adam` / `AdamW`): Adam `g += wd * p`,
      AdamW `p *= 1 - lr * wd`; `m = lerp(m, g, 1 - beta1)`;
      `v = beta2 * v + (1 - beta2) * g * g`;
      `p -= (lr / bc1) * m / (sqrt(v) / sqrt(bc2) + eps)` with
      `bc_i = 1 - beta_i^step`. PyTorch computes `bc_i` in double;
      `1 - pow(beta, step)` in f32 would lose digits to cancellation
      (`beta2 = 0.999` rounded to f32 alone makes `bc2` 1.3e-5 wrong), so the
      pass uses the identity `1 - beta^t = -tanh(t*ln(beta)/2) *
      (exp(t*ln(beta)) + 1)` with `ln(beta)/2` folded in double: every factor
      is relatively accurate in f32 for every step.
    * Defaults are PyTorch's: `lr` 1e-3, `beta1` 0.9, `beta2` 0.999, `eps`
      1e-8, weight decay 0 (`sgd`, `adam`) or 0.01 (`adamw`).

    Schedules give the learning rate of optimizer step `k` (1-based) as
    PyTorch's scheduler does when `scheduler.step()` follows every
    `optimizer.step()`, i.e. its value after `e = k - 1` scheduler steps:

    * `constant`: `lr`.
    * `warmup` (`LambdaLR` with `lambda e: min(1, (e + 1) / W)`, `W =
      warmup-steps`): `lr * (e + 1) / W`, then `lr`.
    * `cosine` (`LambdaLR`, or for `W = 0` `CosineAnnealingLR(T_max = T,
      eta_min = min-lr)` in closed form, `T = total-steps`): the warmup above
      for `e < W`, then `min_lr + (lr - min_lr) * (1 + cos(pi * (e - W) / (T -
      W))) / 2`; after `T` steps the rate stays at `min-lr`.

    Loom has no `cos` op, so a non-constant schedule is a compile-time table
    of the rates for `e = 0 .. N` (`N = W - 1` for `warmup`, `T` for
    `cosine`, whose rate holds from there on), computed in double and
    rounded once to f32; each step reads entry `min(e, N)` with `loom.gather`,
    `e` being the incoming step counter converted to `i64`. The counter is
    exact up to 2^24 steps.

    The added ops are elementwise ops, `broadcast`, `reduce_sum`,
    `constant`, `gather` and `convert` (and `shard.all_reduce` for a
    clipped mesh). Parameters must be f32 tensors of static shape.
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect",
                           "::mlir::shard::ShardDialect"];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "The gradient function (default: the only function whose name "
           "ends in _grad)">,
    Option<"optimizer", "optimizer", "::mlir::loom::OptimizerKind",
           /*default=*/"::mlir::loom::OptimizerKind::sgd",
           "sgd, adam or adamw", [{::llvm::cl::values(
             clEnumValN(::mlir::loom::OptimizerKind::sgd, "sgd",
                        "torch.optim.SGD"),
             clEnumValN(::mlir::loom::OptimizerKind::adam, "adam",
                        "torch.optim.Adam"),
             clEnumValN(::mlir::loom::OptimizerKind::adamw, "adamw",
                        "torch.optim.AdamW"))}]>,
    Option<"lr", "lr", "double", /*default=*/"1e-3",
           "Learning rate (the peak rate of a schedule)">,
    Option<"momentum", "momentum", "double", /*default=*/"0.0",
           "SGD momentum factor">,
    Option<"dampening", "dampening", "double", /*default=*/"0.0",
           "SGD dampening; only 0 is supported">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false",
           "SGD Nesterov momentum (requires momentum > 0)">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"-1.0",
           "Weight decay; -1 selects PyTorch's default (0 for sgd and adam, "
           "0.01 for adamw)">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9",
           "Adam/AdamW first-moment decay">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999",
           "Adam/AdamW second-moment decay">,
    Option<"eps", "eps", "double", /*default=*/"1e-8",
           "Adam/AdamW denominator term">,
    Option<"clipGradNorm", "clip-grad-norm", "double", /*default=*/"0.0",
           "Clip the global L2 norm of the gradients to this value (0: off)">,
    Option<"schedule", "schedule", "::mlir::loom::LrSchedule",
           /*default=*/"::mlir::loom::LrSchedule::constant",
           "Learning-rate schedule: constant, warmup or cosine",
           [{::llvm::cl::values(
             clEnumValN(::mlir::loom::LrSchedule::constant, "constant",
                        "the same rate every step"),
             clEnumValN(::mlir::loom::LrSchedule::warmup, "warmup",
                        "linear warmup, then constant"),
             clEnumValN(::mlir::loom::LrSchedule::cosine, "cosine",
                        "warmup, then cosine decay to min-lr"))}]>,
    Option<"warmupSteps", "warmup-steps", "int64_t", /*default=*/"0",
           "Linear warmup steps (schedule=warmup or cosine)">,
    Option<"totalSteps", "total-steps", "int64_t", /*default=*/"0",
           "Steps of the cosine schedule, warmup included">,
    Option<"minLr", "min-lr", "double", /*default=*/"0.0",
           "Final learning rate of the cosine schedule">,
    
  ];
}

def LoomAutodiff : Pass<"loom-autodiff", "ModuleOp"> {
  let summary = "Build the gradient function @F_grad of a loss function @F";
  let description = [{
    Reverse-mode differentiation of `@F` (`function`) with respect to every
    float argument marked `loom.param` and every argument named in `wrt`
    (by `loom.name` or as `argN`). Adds `@F_grad`, right after `@F`, with
    `@F`'s arguments and argument attributes and the results

    ```
    (loss {loom.name = "loss"},
     d loss / d p_i {loom.name = "grad.<name of p_i>", loom.grad_of = i}, ...)
    ```

    one gradient per differentiated argument, in argument order (`<name>`
    is the argument's `loom.name`, else `argN`). `@F` is left unchanged.

    The loss is the result of `@F` named `loss` (by `loom.name`), or its
    only result when `loss` is empty; it must be a rank-0 float tensor.
    The body of `@F_grad` is the forward ops of `@F` that the loss needs, in
    their order, then the backward ops: each op's vector-Jacobian product
    comes from its `VJPInterface`, visited in reverse order; a value used
    several times gets the sum of its cotangents (`loom.add`, in use order).
    The output is deterministic.

    Gradients flow only into operands the op reports as differentiable
    (`VJPInterface::isOperandDifferentiable`: integer and boolean values
    carry none). It is an error, at the op, naming it and the parameter,
    when a parameter reaches the loss only through such operands (e.g.
    through a `compare`, a float-to-integer `convert` or `gather` indices).
    A parameter that does not reach the loss gets a zero gradient and a
    warning. Every op between the parameters and the loss must implement
    `VJPInterface` and have static shapes (run `loom-shape-inference`
    first); `func.call` is rejected (run `inline` first).

    ```mlir
    func.func @main(%w: tensor<4xf32> {loom.param, loom.name = "w"},
                    %x: tensor<4xf32>) -> tensor<f32> {
      %0 = loom.mul %w, %x : tensor<4xf32>
      %1 = loom.reduce_sum %0, dims = [0] : tensor<4xf32> -> tensor<f32>
      return %1 : tensor<f32>
    }
    ```
    gets `@main_grad(...) -> (tensor<f32> {loom.name = "loss"},
    tensor<4xf32> {loom.name = "grad.w", loom.grad_of = 0 : i64})`.
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect",
                           "::mlir::func::FuncDialect"];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"main\"",
           "The function to differentiate">,
    Option<"loss", "loss", "std::string", /*default=*/"\"\"",
           "The loom.name of the loss result (default: the only result)">,
    ListOption<"wrt", "wrt", "std::string",
               "More arguments to differentiate with respect to, by "
               "loom.name or argN (loom.param arguments always are)">,
  ];
}

def LoomPipelinePartition : Pass<"loom-pipeline-partition", "ModuleOp"> {
  let summary = "Split a forward graph into pipeline stages balanced by "
                "cost, with small cuts";
  let description = [{
    Assigns every op of one function (the forward graph with its loss,
    after `loom-shape-inference`: static shapes) to one of `stages` pipeline
    stages, symbolically: only shapes and `CostInterface` counts are read,
    no weight is needed. Merak-style: stages are cut at op granularity, so
    four stages of a two-layer model are fine.

    **Sequence.** The ops of the function body in program order form a
    sequence; a stage is a contiguous, non-empty range of it, so the result
    depends only on the IR and the options (deterministic) and stages never
    send values backwards. Ops that depend on no function argument
    (constants, `iota`, and ops computed only from those, such as a causal
    mask) are *replicated*: they are not in the sequence, each stage that
    needs them computes them itself (`loom-pipeline-split`), they are never
    sent, and they get the stage of their first user. Position `i` in the
    options and the report is the `i`-th op of the sequence (0-based).

    **Costs.** An op's time is `3 x` its forward flops (the backward pass
    costs about twice the forward). A stage's memory is the bytes of the
    `loom.param` arguments its ops use (a parameter used by two stages, such
    as a tied embedding, counts in both) plus its activations: the results
    of its ops and the values it receives (from earlier stages, and the
    non-parameter arguments it reads), all kept for the backward pass of
    one micro-batch. The cut before position `c` costs the bytes of every
    value defined by a sequence op before `c` and used by one at or after
    `c`: a skip connection that crosses several stages counts once in every
    cut it crosses. Values used only by the `return` do not cross a cut
    (the stage that makes them returns them).

    **Objective.** First the smallest possible maximum stage time `T*`
    (binary search over `T` with a greedy count of the stages needed, which
    is exact because every constraint holds for sub-ranges); then, among
    partitions whose stages all take at most `T*`, the smallest total cut
    bytes (dynamic programming over (stages, position) with a sliding-window
    minimum); among those, the lexicographically earliest cut positions.
    Every stage must fit `memory-budget` when it is not 0. On a chain of
    layers this is the exact optimum of max stage time, then cut bytes.
    Time is O(N log W + P N) for N sequence ops, P stages and total work W.

    **Forced cuts.** `stage-boundaries` lists ops that must begin a stage,
    each written as a sequence position (`12`), as the name of an op's
    location (`loc("name")`, as the ONNX importer writes node names; the
    first op of the sequence with that name, so a cut falls before an ONNX
    node lowered to several ops), or as `param:NAME`: the first op that
    reads the parameter argument named NAME (`loom.name`), which is how
    `loom-plan` writes its cuts (robust to the ops other passes add). Positions must be increasing
    and in `[1, N-1]`, at most `stages - 1` of them; the pass places the
    remaining cuts.

    **Output.** Every op of the function gets `loom.stage = k : i64`, the
    function gets `loom.stages = P : i64`. With `report`, a JSON file:

    ```json
    {"function": "main", "stages": 2, "memory_budget": 0,
     "sequence_ops": 5, "replicated_ops": 1, "cuts": [3],
     "forced_cuts": [], "max_stage_time": 600, "mean_stage_time": 450.0,
     "balance": 1.333, "total_cut_bytes": 512,
     "per_stage": [
       {"stage": 0, "first": 0, "last": 2, "ops": 3, "flops": 200,
        "time": 600, "params": 144, "param_bytes": 576,
        "activation_bytes": 1024, "memory_bytes": 1600, "cut_bytes": 512,
        "sends": [{"to": 1, "bytes": 512} ] }, ... ],
     "arguments": [{"index": 0, "name": "x", "param": false, "bytes": 96},
                   ... ],
     "ops": [{"pos": 1, "op": "loom.add", "loc": "", "stage": 0,
              "flops": 32, "time": 96, "results": [128],
              "inputs": [[0, 0] ], "args": [3]}, ... ]}
    ```

    `cut_bytes` of stage `k` is the cut after it; `sends` are the bytes of
    values it defines that stage `to` uses (each value sent once to each
    stage that uses it); `balance` is max / mean stage time. Per op,
    `inputs` lists `[position, result]` of the sequence values it uses and
    `args` the argument indices it reads, so the report alone determines
    every cost above (the tests recompute the optimum from it).

    Errors name the option and the limit: `stages` below 1 or above the
    number of sequence ops, forced cuts out of range, unsorted or too many,
    a `memory-budget` that one op alone or `stages` stages cannot meet,
    dynamic shapes.
  }];
  let options = [
    Option<"stages", "stages", "int64_t", /*default=*/"0",
           "Number of pipeline stages P (required, >= 1)">,
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "The function to partition (default: @main, else the only "
           "public function with a body)">,
    Option<"memoryBudget", "memory-budget", "int64_t", /*default=*/"0",
           "Bytes of parameters plus activations allowed per stage "
           "(0: no limit)">,
    ListOption<"stageBoundaries", "stage-boundaries", "std::string",
               "Ops that must begin a stage: sequence positions or "
               "location names, in increasing order">,
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "Write the partition report (JSON) to this file (- for stdout)">,
  ];
}

def LoomPipelineSplit : Pass<"loom-pipeline-split", "ModuleOp"> {
  let summary = "Outline the stages of a partitioned function into stage "
                "functions and call them";
  let description = [{
    Takes a function `@F` annotated by `loom-pipeline-partition`
    (`loom.stages = P` on the function, `loom.stage = k` on its ops) and
    moves the ops of stage `k` into a new private function `@F_stage<k>`,
    then replaces `@F`'s body by calls to `@F_stage0 .. @F_stage<P-1>` in
    order, so `@F` computes what it computed before (checked with
    `loom-run --compare-after`).

    `@F_stage<k>` has `loom.stage = k : i64` and:

    * arguments: the arguments of `@F` its ops read, in `@F`'s order, with
      their attributes (`loom.param`, `loom.name`); then the values it
      receives from earlier stages, ordered by the position of their
      defining op (then result number);
    * results: the values it defines that a later stage or `@F`'s `return`
      uses, in program order: exactly what the stage sends, plus the
      function results it makes.

    Replicated ops (those depending on no argument of `@F`: constants,
    `iota`, ...) are cloned at the top of every stage that uses them; their
    `loom.stage` is ignored. Every other op keeps no `loom.stage` inside a
    stage function; each call in `@F` carries `loom.stage = k`.

    Errors: `@F` without `loom.stages`, an op without a valid `loom.stage`,
    or an op that uses a value of a later stage (stages must follow the data
    flow).
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "The partitioned function (default: the only function with "
           "loom.stages)">,
  ];
}

def LoomPipelineSchedule : Pass<"loom-pipeline-schedule", "ModuleOp"> {
  let summary = "Build each pipeline stage's gradient function: forward and "
                "backward of M micro-batches in GPipe or 1F1B order, with "
                "send/recv between the stages";
  let description = [{
    Takes `@F` split into stages by `loom-pipeline-split` (a body of calls
    to `@F_stage0 .. @F_stage<P-1>`, each call with `loom.stage = k`) and
    adds, for every stage `k`, the public function `@F_stage<k>_grad` that
    stage `k`'s rank runs for one training step. It has the gradient
    function layout of `loom-autodiff` (see docs/training.md), so
    `loom-data-parallel` and `loom-optimizer` apply to it unchanged:

    * arguments: the arguments of `@F` the stage reads, in `@F`'s order,
      with their attributes; a data argument (not `loom.param`) holds the
      step's `M` micro-batches: its dimension 0 is `M` times `@F`'s, and
      micro-batch `m` is rows `[m*b, (m+1)*b)`;
    * results: `loss` (the mean of the `M` micro-batch losses on the last
      stage, `0` elsewhere), then the gradient of every `loom.param`
      argument (`loom.grad_of`, `grad.<name>`), averaged over the
      micro-batches. When the loss is a mean over rows this equals the
      gradient of `@F` on all `M*b` rows.

    The body is the schedule, unrolled. Forward of micro-batch `m` on stage
    `k`: receive the values of earlier stages it reads (`shard.recv` from
    their stage), compute `@F_stage<k>`, send each output to every later
    stage that reads it (`shard.send`; a value that skips stages goes
    directly to its reader). Backward: receive the cotangent of every float
    output from each reader (summed), compute the vector-Jacobian product
    of the stage (`loom-autodiff` of `sum_i <output_i, cotangent_i>` with
    respect to the parameters and the received values), accumulate the
    parameter gradients and send each received value's cotangent back to
    its stage. The last stage differentiates its loss; its forward and
    backward of a micro-batch are one slot. Transfers run on the pp axis of
    the device mesh `@mesh` (`grid_axes = [1]`; the axis gets size `P`, and
    `shard.grid @mesh(shape = 1xPx1)` is created if absent), the peer
    stage as static coordinate, and carry `loom.tag`, unique per transfer
    within a step: `(m * E + e) * 2 + d` for edge `e` of the `E`
    (producer output, reader stage) pairs and direction `d` (0 forward,
    1 backward). Rank-0 values travel as `tensor<1x...>`.

    A parameter that several stages read (a tied embedding and LM head)
    is a parameter of each of them; after the micro-batches every such
    stage sends its gradient to the others (tags after the micro-batch
    ones) and returns the sum over the stages, added in stage order, so
    every copy gets the same update (Megatron's embedding all-reduce).
    Its argument in the stages after the first that reads it gets
    `loom.pipeline_copy` (the global gradient norm counts it once).

    Orders: `gpipe` runs the `M` forwards, then the `M` backwards;
    `1f1b` (PipeDream-flush) runs `min(P-1-k, M)` forwards, then alternates
    one forward and one backward, then the remaining backwards, so stage
    `k` holds at most `P-k` micro-batches' activations. Sends never block
    and receives wait, so every order that follows the data flow is free of
    deadlock.

    The calls are then inlined (upstream `inlineCall`, through the
    dialects' inliner interfaces; the inlined ops keep their locations)
    and `cse` runs: the backward pass's
    recomputation of the forward merges with the forward ops (activations
    are kept from a micro-batch's forward to its backward, and a
    tensor-parallel all-reduce of the forward is not repeated). The stage
    functions and helpers are removed; `@F` is inlined back to one body.
    Each `@F_stage<k>_grad` gets `loom.stage = k`,
    `loom.microbatches = M` and `loom.schedule`.

    Errors: no split function or several, `microbatches` below 1, an
    unknown `schedule`, a loss computed before the last stage, a data
    argument without a batch dimension, a `@mesh` whose pp axis already
    has another size than `P`, tags beyond MPI's guaranteed 32767, and
    a stage body holding an op that no dialect inliner interface allows
    (its dialect's interface is not registered).
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::shard::ShardDialect"];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "The split function (default: the only one whose body calls "
           "stage functions)">,
    Option<"microbatches", "microbatches", "int64_t", /*default=*/"1",
           "Micro-batches M per step (>= 1)">,
    Option<"schedule", "schedule", "::mlir::loom::PipelineScheduleKind",
           /*default=*/"::mlir::loom::PipelineScheduleKind::OneFOneB",
           "gpipe or 1f1b", [{::llvm::cl::values(
             clEnumValN(::mlir::loom::PipelineScheduleKind::OneFOneB, "1f1b",
                        "PipeDream-flush: one forward, one backward"),
             clEnumValN(::mlir::loom::PipelineScheduleKind::GPipe, "gpipe",
                        "every forward, then every backward"))}]>,
    
    Option<"loss", "loss", "std::string", /*default=*/"\"\"",
           "The loom.name of @F's loss result (default: the only result, "
           "else the one named loss)">,
  ];
}

def LoomDataParallel : Pass<"loom-data-parallel", "ModuleOp"> {
  let summary = "Average the loss and gradients of @F_grad over data-parallel "
                "ranks, with bucketed all-reduces issued as the backward pass "
                "produces the gradients";
  let description = [{
    Rewrites the gradient function `@F_grad` (from `loom-autodiff`, see
    docs/training.md: results `(loss, d loss/d arg_i {loom.grad_of = i},
    ...)`) in place so that, run on each of `dp` ranks with its own batch of
    `B` rows, every rank returns what the single-device `@F_grad` returns on
    all `dp * B` rows when the loss is a mean over rows: the loss and each
    gradient averaged over the ranks.

    * Gives the dp axis (axis 0) of the device mesh `shard.grid @mesh`
      the size `dp`, creating `@mesh(shape = dpx1x1)` at the top of the
      module when absent (an axis of another size is an error).
    * **Buckets**, as PyTorch's `DistributedDataParallel`: the distinct
      gradient values are ordered by when they become ready, i.e. the
      program position of their defining op; gradients that are function
      arguments or constants are ready first (constant gradients, such as
      the zeros `loom-autodiff` returns for an unused parameter, are moved to
      the top of the body), ties keep the result order. They are packed
      greedily into buckets of at most `bucket-bytes` bytes; a gradient larger
      than that is a bucket of its own, `bucket-bytes=0` gives one bucket per
      gradient, and a change of element type starts a new bucket (a bucket is
      one buffer).
    * Right after the last-ready gradient of a bucket is defined (so that its
      communication overlaps the rest of the backward pass), the bucket is
      averaged: each gradient is flattened (`loom.reshape` to 1-D, omitted
      for 1-D gradients), the pieces are joined with `loom.concat` along
      dimension 0, summed over the ranks by one `shard.all_reduce ... on
      @mesh grid_axes = [0]`, multiplied by a splat `loom.constant` of
      `1/dp`, and cut back with `loom.split` and `loom.reshape`. A bucket of
      one gradient is all-reduced in its own shape (no reshape, concat or
      split).
    * The loss gets its own `shard.all_reduce` right after it is defined.
    * What is computed from the all-reduces (each multiplication by
      `1/dp`, a bucket's `loom.split` and `loom.reshape`s) feeds only the
      return and is moved right before it, in order: the lowering waits for
      a transfer right before its first use, so the waits come after the
      whole backward pass, which runs while the buckets are in flight.
    * The results of `@F_grad` are replaced by the averaged values; every
      added op carries `loom.phase = "backward"`.
    * **Row-sparse embedding gradients** (TriRace; `sparse-embedding-grad`,
      loomc's `--sparse-embedding-grad`). A gradient is *row-sparse* when it
      is built only from `loom.scatter_add`s along axis 0 into zeros (the
      VJP of an embedding lookup `loom.gather %table[%ids], axis = 0`),
      their sums (a table looked up twice, micro-batch accumulation) and
      products with or quotients by splat constants (the mean over
      micro-batches): at most as many of its rows are nonzero as
      there are indices, `n`. With `on` every row-sparse gradient, with
      `auto` those for which the row exchange moves fewer bytes than a
      ring all-reduce of the whole table (`dp * n * (w + 1) < 2 * rows * w`
      for a table of `rows` rows of `w` elements), leaves its bucket and
      gets its own `shard.all_reduce` marked `loom.row_sparse`. The result
      is the same sum (the interpreter reduces it densely); the runtime
      exchanges only the rows that are nonzero on some rank (row indices
      and rows) and sums them (docs/training.md), so the optimizer's dense
      update is unchanged. A table whose gradient also has a dense part
      (an embedding tied to the LM head) is never row-sparse. `on` on a
      module without any embedding gradient is a warning naming the
      option.

    A bucket holding the gradients of `fc2.bias` (`%gb`, ready first) and
    `fc2.weight` (`%gw`), with `dp=2` (each op also has `loom.phase`):

    ```mlir
    %gw = loom.dot_general %a, %dy, ... -> tensor<16x4xf32>
    %f = loom.reshape %gw : tensor<16x4xf32> -> tensor<64xf32>
    %c = loom.concat %gb, %f dim = 0
        : (tensor<4xf32>, tensor<64xf32>) -> tensor<68xf32>
    %s = shard.all_reduce %c on @mesh grid_axes = [0]
        : tensor<68xf32> -> tensor<68xf32>
    %k = loom.constant dense<5.000000e-01> : tensor<68xf32>
    %m = loom.mul %s, %k : tensor<68xf32>
    %p:2 = loom.split %m, dim = 0, sizes = [4, 64]
        : tensor<68xf32> -> tensor<4xf32>, tensor<64xf32>
    %avg_gw = loom.reshape %p#1 : tensor<64xf32> -> tensor<16x4xf32>
    // ... the rest of the backward pass; %p#0 and %avg_gw are returned.
    ```

    With `dp=1` the module is left unchanged (after the checks). The output
    is deterministic. Errors: `dp` below 1, a negative `bucket-bytes`, no or several functions ending in `_grad` (without
    `function=`), a function not shaped as `loom-autodiff`'s output, a
    gradient that is not a float tensor of static shape, and a `@mesh` whose dp
    axis already has another size, or that is not a 3-D `shard.grid`.
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect",
                           "::mlir::shard::ShardDialect"];
  let options = [
    Option<"dp", "dp", "int64_t", /*default=*/"0",
           "Number of data-parallel ranks D (required, >= 1)">,
    Option<"bucketBytes", "bucket-bytes", "int64_t",
           /*default=*/"25 * 1024 * 1024",
           "Largest bucket of gradients reduced by one all-reduce, in bytes "
           "(default 25 MiB as PyTorch DDP; 0: one bucket per gradient)">,
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "The gradient function (default: the only function whose name "
           "ends in _grad)">,
    Option<"sparseEmbeddingGrad", "sparse-embedding-grad",
           "::mlir::loom::Switch", /*default=*/"::mlir::loom::Switch::off",
           "Exchange embedding gradients by rows: off, on or auto (by bytes)",
           [{::llvm::cl::values(
             clEnumValN(::mlir::loom::Switch::off, "off",
                        "every gradient in a dense bucket"),
             clEnumValN(::mlir::loom::Switch::on, "on",
                        "every row-sparse gradient by rows"),
             clEnumValN(::mlir::loom::Switch::automatic, "auto",
                        "by rows where that moves fewer bytes"))}]>,
  ];
}

def LoomTensorParallel : Pass<"loom-tensor-parallel", "ModuleOp"> {
  let summary = "Megatron-style tensor parallelism of the attention and MLP "
                "blocks of a forward function";
  let description = [{
    Rewrites the forward function `@F` in place into the program of one of
    the `tp` ranks of the tp axis of the device mesh (Megatron-LM, Shoeybi
    et al. 2019). Every rank returns the single-device result (the loss)
    given its slices of the parameters. Run it before `loom-autodiff`: the
    backward pass then gets the matching all-reduces from the VJPs of
    `loom.tp_copy` and `shard.all_reduce`. The vocabulary tables
    (embedding, LM head, cross-entropy) are `loom-vocab-parallel`'s, which
    runs after it.

    A *linear layer* is a `loom.dot_general` without batching dimensions
    whose rhs is a rank-2 `loom.param` argument `W` (or its
    `loom.transpose` with permutation `[1, 0]`, PyTorch's `x @ W.t()` as
    ONNX exports it; the transpose is folded into the layer) contracted on
    one dimension with the lhs's last dimension (`[in, out]` or `[out, in]`
    layout), or a `loom.param` of rank >= 3 contracted on its leading
    dimensions with the lhs's trailing ones (Flax's `DenseGeneral`: the
    attention projections' kernels `[in, heads, head_dim]` and the output
    projection's `[heads, head_dim, out]`), optionally followed by
    `loom.add` of a `loom.param` bias (rank 1, or `[heads, head_dim]`)
    broadcast along the output dimensions, by one `loom.broadcast` or a
    chain of broadcasts and `loom.reshape`s that only insert size-1
    dimensions (JAX's `broadcast_in_dim` to `[1, .., 1, N]`, or Flax's
    reshape to it, then a broadcast to the full shape). The weight and the
    bias may also be one layer of a parameter stacked on a leading layer
    axis (Flax's `nn.scan`, unrolled at import): a unit-stride `loom.slice`
    of one index along its dimension 0, whole along the others, reshaped to
    drop that dimension (a kernel) or not (a bias `[1, n]`). Such a
    parameter is cut a dimension further on than one layer's weight would
    be, and only when every layer it feeds is cut the same way: the
    candidates of the layers of one parameter (or of layers sharing a
    weight) are merged, so that one escaping keeps all whole, and a weight
    cut on two dimensions stays whole. The pass finds *blocks*, regions of
    ops between:

    * column-parallel linear layers, whose lhs is replicated and contracted
      on its last dimension: `W` and the bias are cut along the (first)
      output dimension (the heads of a `DenseGeneral` kernel), and the lhs
      goes through `loom.tp_copy` (Megatron's `f`: identity forward,
      all-reduce of the gradient backward);
    * row-parallel linear layers, whose lhs is sharded on a contracted
      dimension: `W` is cut along the dimension contracted with it and the
      product, a partial sum, is `shard.all_reduce`d (Megatron's `g`)
      before its bias is added.

    In between, the sharded dimension is followed in program order, each
    op saying how through `TensorPartitionInterface` (the pass has no rule
    for any op; an op without the interface ends the candidate). The ops'
    rules: elementwise ops (their other operands are splat constants,
    broadcasts constant along the sharded dimension, i.e. that do not
    produce it or expand a size-1 dimension to it, biases, or sharded
    values), `loom.softmax` and `loom.log_softmax` on another axis,
    `loom.reduce_sum`, `loom.reduce_mean` and `loom.reduce_max` over other
    dimensions and `loom.broadcast` of a sharded value (a softmax as JAX
    spells it out), `loom.transpose`, `loom.reshape` (splitting the sharded
    dimension into heads and head size shards the heads; merging heads and
    head size back shards the merged dimension; merging dimensions before
    it into the sharded one, as the dynamo exporter flattens `[B, heads,
    ..]` into `[B*heads, ..]`, cuts the merged dimension in `B` groups, and
    splitting such a grouped dimension back into `[B, heads]` cuts the
    heads whole again), `loom.split` along
    another dimension or into `G` equal parts along the sharded one (a
    fused QKV projection: the weight's output dimension is `G` blocks, each
    cut in `tp` parts), unit-stride `loom.slice` that keeps the whole
    sharded dimension or takes one of `G` equal consecutive parts of it
    (JAX's `jnp.split`: one slice per part; the start and limit become the
    rank's part), and batched `loom.dot_general` whose operands are
    sharded on matching batching dimensions (attention heads). A candidate
    region any of whose sharded values reaches another op or the `return`
    (for instance an LM head, see `loom-vocab-parallel`) is left unchanged,
    with one exception: a lone column-parallel layer (no row-parallel one
    after it, no heads split, one cut value leaving the candidate, read
    there only by `loom.layer_norm`s or `loom.rms_norm`s: BERT's MLM
    transform, a dense and GELU before a LayerNorm) whose weight is at
    least 1 % of the parameters' elements is cut and its output gathered
    where it leaves (Megatron-LM's `ColumnParallelLinear` with
    `gather_output`): the rank's columns are looked up at every column
    index (zero where the index is another rank's) and summed by a
    `shard.all_reduce`. That costs an all-reduce of the activation forward
    and one of the input's gradient backward (`loom.tp_copy`), so a smaller
    weight stays whole, and the reason says so.
    So the blocks of PyTorch models exported through ONNX and of JAX models
    imported through StableHLO are found alike.

    In a block, the values are given their per-rank types (the sharded
    dimension divided by `tp`), splat constants and broadcasts constant
    along the sharded dimension (masks, scalars) are recreated in the local
    shape (their full-shape originals are erased when nothing else uses
    them), and the sliced parameters get their local type and
    `loom.shard = #loom.shard<dim = d, parts = tp[, groups = G]>` so that
    the runtime can cut the checkpoint: rank `r` holds, of each of the `G`
    blocks of dimension `d`, part `r` of `tp`. The collectives run on the tp
    axis (axis 2) of the device mesh `shard.grid @mesh`, which gets the size
    `tp` (`@mesh(shape = 1x1xtp)` is created when absent). `tp=1` changes
    nothing. A function with no block gets a warning when it has no
    vocabulary table for `loom-vocab-parallel` either (that pass says
    nothing when it finds none), so the two passes warn once when nothing
    is tensor-parallel. For the parameters of each candidate that does not
    become a block, the first thing that stopped it (an op without a
    partition rule or whose rule refuses the cut, a cut value or the weight
    reaching an op outside the candidate, no row-parallel layer) is
    recorded, by `loom.name`, in the function's `loom.tp_replicated`
    dictionary, which `loom-report-sharding` reports.

    One MLP with `tp=2` (`x: [B, S, 64]`, `c_fc: [64, 256]`):

    ```mlir
    %xf = loom.tp_copy %x on @mesh grid_axes = [2] : tensor<2x8x64xf32>
    %h = loom.dot_general %xf, %w1, contracting_dims = [2] x [0]
        : (tensor<2x8x64xf32>, tensor<64x128xf32>) -> tensor<2x8x128xf32>
    %g = loom.gelu %h approximate = tanh : tensor<2x8x128xf32>
    %p = loom.dot_general %g, %w2, contracting_dims = [2] x [0]
        : (tensor<2x8x128xf32>, tensor<128x64xf32>) -> tensor<2x8x64xf32>
    %y = shard.all_reduce %p on @mesh grid_axes = [2]
        : tensor<2x8x64xf32> -> tensor<2x8x64xf32>
    ```

    Errors name the op and the dimension when `tp` does not divide a
    sharded size: the heads of a `loom.reshape`, the output dimension of a
    column-parallel weight (per group), and the contracted dimension of a
    row-parallel weight. Also errors: `tp` below 1, a missing `function`,
    and a module that is already tensor-parallel (its `@mesh` has ranks on
    the tp axis).
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect",
                           "::mlir::shard::ShardDialect"];
  let options = [
    Option<"tp", "tp", "int64_t", /*default=*/"0",
           "Number of tensor-parallel ranks T (required, >= 1)">,
    Option<"function", "function", "std::string", /*default=*/"\"main\"",
           "The forward function to partition">,
  ];
}

def LoomVocabParallel : Pass<"loom-vocab-parallel", "ModuleOp"> {
  let summary = "Megatron-style vocabulary parallelism of the embedding, the "
                "LM head and the cross-entropy of a forward function";
  let description = [{
    Megatron-LM's `VocabParallelEmbedding` and
    `vocab_parallel_cross_entropy`: rewrites the forward function `@F` in
    place so that each of the `tp` ranks of the tp axis of the device mesh
    holds a slice of the rows of the vocabulary tables, and the full logits
    are never formed. Every rank returns the single-device result (the
    loss). Runs after `loom-tensor-parallel` (with the same `tp`) and before
    `loom-autodiff`; it leaves the blocks that pass partitioned alone (a
    parameter with `loom.shard` is not a table).

    A rank-2 `loom.param` table `W` is cut along its vocabulary dimension
    when every use of `W` is

    * an *embedding*: `loom.gather %W[%ids]` along the vocabulary dimension
      whose ids are computed from a non-parameter argument (token ids), or
      a lookup by other indices (positions, token types: constants) that
      is a term of an *embedding sum* (below), or
    * an *LM head*: a linear layer (see `loom-tensor-parallel`) `h @ W` /
      `h @ transpose(W)` whose logits (through `loom.reshape`s that keep
      the last, class dimension, and at most one bias: `loom.add` of a
      rank-1 `loom.param` that only this head reads, broadcast along the
      class dimension, as BERT's MLM decoder) are only the `logits` of a
      `loom.cross_entropy`. The bias is cut like the table's rows (and
      padded alike).

    A table used by both (GPT-2's tied embedding) is cut once. With `V`
    rows, each rank holds `L = ceil(V / tp)` of them: rank `r` the rows
    `[r*L, (r+1)*L)` of the table zero-padded to `P = L * tp` rows, as
    Megatron-LM pads the vocabulary (padding is never an error). The table
    gets its local type and
    `loom.shard = #loom.shard<dim = d, parts = tp[, padded = P]>`. The
    rank's first row is `loom.grid_index * L`, built once at the top of the
    function. An embedding becomes a lookup of the local rows at the ids
    clamped into `[0, L)`, a `loom.select` that zeroes the rows of ids in
    other ranks' ranges, and a sum `shard.all_reduce`. An *embedding sum*
    is a chain of `loom.add`s that starts at a token embedding and adds
    other lookups (each, and each `loom.broadcast` in between, read only
    there; BERT's word + token-type + position embeddings, GPT-2's word +
    position ones): all its tables are cut, each lookup keeps only the
    rank's rows, and one all-reduce of the chain's last sum completes every
    term, so a position table is cut at no extra communication. The chain
    may pass a `loom.select` of the lookup and a splat 0 or NaN (Flax's
    `nn.Embed` fills invalid ids with NaN), and a term may be a rank-2
    parameter read whole through broadcasts or reshapes that keep its rows
    a dimension (Flax's `x + pos[None, :S]`): it is cut too and looked up
    at every row. A table looked up by positions outside such a sum stays
    whole. An LM head gets
    `loom.tp_copy` on `h` (its gradient is summed over the ranks) and
    computes the rank's `[..., L]` logits; the cross-entropy is computed
    without gathering them:

    * with padding, the padding columns (global index `>= V`) become
      `-inf` through a `loom.select`;
    * the global maximum is a local `loom.reduce_max` and a `max`
      `shard.all_reduce` marked `loom.stop_gradient` (a shift that the loss
      does not depend on, so the gradient treats it as a constant);
    * the sum of `exp(logits - max)` is a local `loom.reduce_sum` and a sum
      all-reduce; `logsumexp = log(sum) + max`;
    * the target logit is picked by comparing a `loom.iota` of the local
      columns with `label - r*L` (no match outside the rank's range) and
      summed over the ranks with a third all-reduce;
    * the per-sample loss `logsumexp - target` is reduced as
      `loom.cross_entropy` does (`ignore_index`, `mean`, `sum`, `none`).

    The loss and the gradients equal the single-device ones (the gradient
    of the padded rows is zero). A table with any other use stays
    replicated, which is never an error here: a function with neither a
    block nor a table gets `loom-tensor-parallel`'s warning, and for a
    table candidate (an embedding lookup, or a linear layer whose logits
    reach a cross-entropy over as many classes) the reason it stays whole
    (the op its logits reach, a lookup not indexed by token ids, another
    use) is added to the function's `loom.tp_replicated` dictionary, which
    `loom-report-sharding` reports. The
    collectives run on the tp axis (axis 2) of `shard.grid @mesh`, which
    gets the size `tp` when a table is cut (`@mesh(shape = 1x1xtp)` is
    created when absent). `tp=1` changes nothing. Errors: `tp` below 1, a
    missing `function`, and a `@mesh` whose tp axis has another size than
    `tp`.
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect",
                           "::mlir::shard::ShardDialect"];
  let options = [
    Option<"tp", "tp", "int64_t", /*default=*/"0",
           "Number of tensor-parallel ranks T (required, >= 1)">,
    Option<"function", "function", "std::string", /*default=*/"\"main\"",
           "The forward function to partition">,
  ];
}

def LoomReportSharding : Pass<"loom-report-sharding", "ModuleOp"> {
  let summary = "Report which parameters tensor parallelism cut, and warn "
                "about large ones left replicated";
  let description = [{
    Runs after `loom-tensor-parallel` and `loom-vocab-parallel` on the
    forward function `@F` and tells the user how much of the model the
    ranks of the tp axis really share. Each `loom.param` argument is
    *sharded* when it carries `loom.shard` (its full size is its local
    size times `parts`, padding included), else *replicated*: every tp rank
    holds and updates all of it.

    For each replicated parameter of at least `min-fraction` of all the
    parameters' elements (1 % by default), under `tp` > 1, a warning names
    the parameter, its share and why it stayed replicated: the reason that
    `loom-tensor-parallel` recorded when a candidate block holding it
    escaped (in the function's `loom.tp_replicated` dictionary: the op that
    has no partition rule or refuses the cut, the op outside the block that
    a cut value or the weight reaches, or a block without a row-parallel
    layer), else the op that reads it (no linear layer or vocabulary table
    took it). The ops are named with their ONNX node where the location has
    one. With `require-sharded` each of these is an error instead and the
    pass fails (`loomc --require-sharded`).

    With `report`, a JSON file (loomc: `OUTDIR/sharding.json`, copied into
    `plan.json` as `sharding`):

    ```json
    {"tp": 2, "parameters": 30, "elements": 120320,
     "sharded_elements": 98304, "sharded_fraction": 0.817,
     "per_rank_elements": 71168,
     "params": [{"name": "h.0.attn.c_attn.weight", "shape": [32, 96],
                 "elements": 3072, "fraction": 0.0255,
                 "sharded": {"dim": 1, "parts": 2, "groups": 3}},
                {"name": "h.0.ln_1.weight", "shape": [32], "elements": 32,
                 "fraction": 0.0003, "sharded": null,
                 "replicated_because": "read by 'loom.layer_norm' ..."}
     ]}
    ```

    `shape` is the full (unsharded, padded) shape. The IR is not changed.
    Errors: a missing `function`, a report that cannot be written.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"main\"",
           "The forward function, after the tensor-parallel passes">,
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "Write the sharding report (JSON) to this file (- for stdout)">,
    Option<"requireSharded", "require-sharded", "bool", /*default=*/"false",
           "Make each large replicated parameter an error, not a warning">,
    Option<"minFraction", "min-fraction", "double", /*default=*/"0.01",
           "Warn about replicated parameters of at least this share of all "
           "parameter elements">,
  ];
}

def LoomOverlapSplit : Pass<"loom-overlap-split", "ModuleOp"> {
  let summary = "Split a tensor-parallel forward function into K sub-batches "
                "interleaved around their collectives (Oases)";
  let description = [{
    Rewrites the forward function `@F`, after `loom-tensor-parallel` and
    `loom-vocab-parallel` and before `loom-autodiff` or the pipeline
    passes, so that the rows of each micro-batch are computed as `k`
    independent sub-batches whose tensor-parallel collectives overlap the
    other sub-batches' compute (Oases, Li et al. 2023, arXiv 2305.16121).

    *Batch analysis.* The data arguments (neither `loom.param` nor
    `loom.state`) carry their rows in dimension 0, which `k` must divide
    (else see the sequence fallback below).
    The batch dimension is followed through the function in program order:
    an op is *row-wise* when every result row depends only on the same rows
    of its batched operands. Elementwise ops, `softmax`/`log_softmax`,
    reductions, `reshape` (the batch staying the outer factor of a
    dimension), `transpose`, `broadcast`, `slice`, `split` and `concat`
    along other dimensions say so through `TensorPartitionInterface` (the
    rules `loom-tensor-parallel` uses, a sub-batch being a part of `k`); the
    pass adds `dot_general` (the batch a batching or free dimension, not a
    contracted one), `layer_norm`/`rms_norm` over later dimensions,
    `gather` with batched indices or along another axis, `cross_entropy`
    with `reduction = none`, `loom.tp_copy` and `shard.all_reduce` (an
    all-reduce is elementwise over the ranks).

    *Split.* Every row-wise op on batched values is cloned `k` times, clone
    `i` on rows `[i*B/k, (i+1)*B/k)`: the data arguments are `loom.slice`d
    once per sub-batch, a full-size operand without rows of its own (a
    causal mask, a splat constant, a broadcast position embedding) is
    rebuilt at the sub-batch size when it is uniform along the batch
    dimension and sliced otherwise. Ops on no batched value (parameters,
    masks, `loom.grid_index`) are hoisted before the split region.

    *Join.* The first op that mixes rows (the loss's mean over all tokens,
    any reduction over the batch dimension, an op with no rule) is the
    join: it reads the `loom.concat` of the `k` sub-values along the batch
    dimension, and it and everything that depends on it stay unsplit, so
    the loss is exact whatever it is (e.g. a mean over non-ignored tokens).

    *Interleave.* Each sub-batch's ops are cut into segments that end after
    a `shard.all_reduce` (a forward collective) and begin at a
    `loom.tp_copy` (whose backward is an all-reduce of the gradient), and
    the segments are emitted round-robin: segment `j` of sub-batch 0, of
    sub-batch 1, ..., then segment `j+1`. Sub-batch `i`'s all-reduce is in
    flight while sub-batch `i+1` computes; `loom-autodiff` visits the ops in
    reverse, so the backward's all-reduces (at the `tp_copy`s) are
    interleaved the same way. The chain of blocks is not re-joined between
    layers.

    ```mlir
    // k = 2, batch 4: an MLP block with Megatron's f and g
    %x0 = loom.slice %x, start = [0, 0], limit = [2, 8], strides = [1, 1]
    %x1 = loom.slice %x, start = [2, 0], limit = [4, 8], strides = [1, 1]
    %f0 = loom.tp_copy %x0 ...        // sub-batch 0: up to its all-reduce
    %p0 = loom.dot_general %f0, %w1 ...
    %r0 = shard.all_reduce %q0 ...
    %f1 = loom.tp_copy %x1 ...        // sub-batch 1 computes meanwhile
    %p1 = loom.dot_general %f1, %w1 ...
    %r1 = shard.all_reduce %q1 ...
    %y = loom.concat %r0, %r1 dim = 0 // the join: the loss over all rows
    ```

    *Sequence fallback.* When `k` does not divide a data argument's batch,
    dimension 1 (the sequence) of every data argument is split instead,
    provided no op before the last collective mixes the positions (a
    Megatron MLP applied per position; not attention, whose scores contract
    over them: the error names that op).

    Errors: `k` below 1; `k` dividing neither the batch nor a sequence that
    can be split (the message says why: the sizes, or the op that mixes the
    positions); a function without a tensor-parallel collective on its
    batched rows (`--overlap-split` needs `tp > 1`). `k = 1` changes
    nothing. At most `--max-inflight-collectives` all-reduces per group are
    then kept in flight by `loom-max-inflight-collectives` after the
    lowering.
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect"];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"main\"",
           "The forward function to split">,
    Option<"k", "k", "int64_t", /*default=*/"2",
           "Sub-batches per micro-batch (>= 1; 1: off)">,
  ];
}

def LoomMixedPrecision : Pass<"loom-mixed-precision", "ModuleOp"> {
  let summary = "Run the forward function's matrix products in bf16 with "
                "f32 accumulation (loomc --precision bf16)";
  let description = [{
    Rewrites every `loom.dot_general` of the forward function `@F`
    (`function`) whose operands and result are f32: each operand is
    converted to bf16 right before the product (one `loom.convert` per
    use), the product computes in bf16 (the runtime's gemm accumulates in
    f32 and rounds its result once, as tensor cores do), and its result is
    converted back to f32 for every other op.

    What follows a product computes in bf16 too, as PyTorch's autocast
    runs it on the product's bf16 output: elementwise ops (add, sub, mul,
    div, pow, neg, max, min, relu, gelu, silu, sigmoid, tanh, select) whose
    other float operands are not activations (a bias, a constant scale, a
    mask: converted to bf16), and data movement (reshape, transpose,
    broadcast, slice, concat, split) and softmax (f32 statistics inside
    the runtime's kernel) of bf16 values, transitively. A
    transpose, reshape or broadcast of a weight or bias is converted
    before it moves (a weight's transpose still folds into the product).
    An elementwise op with a constant bf16 does not hold exactly (a scale
    1/sqrt(96), GELU's 0.044715) stays f32 with the exact constant and its
    result is rounded to bf16 once, as autocast keeps Python scalars exact.
    An op that
    mixes in an f32 activation (the residual add) stays f32, like
    autocast's type promotion. Everything else stays f32: the parameters
    (master weights), the optimizer state, norms, the loss and every
    collective (the conversions sit between the products and the
    tensor-parallel all-reduces). Generated loops load bf16 into f32,
    compute in f32 and round each bf16 op's result.

    ```mlir
    %y = loom.dot_general %x, %w, contracting_dims = [1] x [0]
        : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    // becomes
    %xb = loom.convert %x : tensor<8x16xf32> -> tensor<8x16xbf16>
    %wb = loom.convert %w : tensor<16x4xf32> -> tensor<16x4xbf16>
    %yb = loom.dot_general %xb, %wb, contracting_dims = [1] x [0]
        : (tensor<8x16xbf16>, tensor<16x4xbf16>) -> tensor<8x4xbf16>
    %y = loom.convert %yb : tensor<8x4xbf16> -> tensor<8x4xf32>
    ```

    Run before differentiation: `loom-autodiff` then gives every backward
    product bf16 operands too (the cotangent of a conversion is converted
    back), weight gradients reach the optimizer in f32, and the activations
    the backward pass saves from the bf16 ops are bf16, half the bytes of
    f32 (test_mixed_precision.py measures the loss against PyTorch's own
    autocast-vs-f32 gap, and the saved bytes).

    Errors: no function `@F` with a body.
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect"];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"main\"",
           "The forward function">,
  ];
}

def LoomMarkLayers : Pass<"loom-mark-layers", "ModuleOp"> {
  let summary = "Mark the repeated layers (transformer blocks) of a forward "
                "graph";
  let description = [{
    Finds the layers of the forward function `@F` (`function`) from its
    structure alone, without names, and marks every op inside one with
    `loom.layer = i : i64` (0-based, in program order); ops outside every
    layer (embedding, final norm, head, loss) lose any mark. The marks are
    kept by `loom-autodiff` and the pipeline passes, so `loom-recompute`
    knows the layers of every gradient function. Run it after the
    tensor-parallel passes (their collectives belong to the layers) and
    before differentiation.

    *Activations* are the values computed from a learned parameter and
    from the data (the results of ops reading, transitively, a `loom.param`
    argument and another argument); a mask or a position table computed
    from the data alone is not one. In program order, count at each
    position the activations that cross it (defined before, read after).
    The positions with the smallest non-zero count cut the program into
    *segments* (each holding at least one op that computes an
    activation): in a pre-norm transformer they fall on the residual
    stream before each attention and each MLP block. The segments are
    compared by the op names of their activation ops; the smallest period
    `p` such that a run of at least `p` segments equals the segments `p`
    later makes each period of that run one layer (an attention and an MLP
    block: `p = 2`). Without any repetition (a one-layer model) the
    segments between the first and the last form one layer.

    ```mlir
    %x1 = loom.add %x0, %attn0 : tensor<2x4x16xf32>   // layer 0's end
    %n  = loom.layer_norm %x1 ... {loom.layer = 1 : i64}
    ```

    Errors: no function `@F` with a body, a function with several blocks.
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect"];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"main\"",
           "The forward function">,
  ];
}

def LoomTwoWeightVersions : Pass<"loom-two-weight-versions", "ModuleOp"> {
  let summary = "Overlap each step's data-parallel gradient all-reduce with "
                "the next step's forward and backward (PipeDream-2BW)";
  let description = [{
    Rewrites each step function (`loom-optimizer`'s output, after
    `loom-data-parallel`) so that the weights follow PipeDream-2BW's rule
    (Narayanan et al. 2021; TriRace's part on data-parallel overlap):

    ```
    W(t+1) = W(t) - lr * grad f(W(t-1)),   W(-1) = W(0)
    ```

    The loss logged at step t is computed with W(t-1). Each data-parallel
    gradient bucket's `shard.all_reduce` (every all-reduce on the dp axis but
    the loss's) now reduces a new state argument `pending_grad.<k>` (the
    bucket as the previous step left it, unreduced; zeros before the first
    step) and moves to the top of the body, and the bucket this step
    computes is returned as that state's new value. The lowering starts the
    all-reduce at the top and waits for it before the update reads it, so
    the previous step's gradient exchange overlaps this step's whole forward
    and backward pass; it costs one more gradient buffer per bucket.

    The rule above holds exactly when the update applied to a zero gradient
    changes nothing: SGD (with any momentum, Nesterov or not) without
    weight decay, at a constant learning rate (the first step applies the
    zero pending gradient; clipping a zero gradient changes nothing
    either). Other optimizers, weight decay, learning-rate schedules and a
    step without data-parallel all-reduces are errors naming the option
    (loomc checks the options first).
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect",
                           "::mlir::shard::ShardDialect"];
  let options = [
    ListOption<"functions", "function", "std::string",
               "The step functions (default: every function with a "
               "result marked loom.updates)">,
  ];
}

def LoomWeightShadows : Pass<"loom-weight-shadows", "ModuleOp"> {
  let summary = "Keep a bf16 copy of each parameter the products read, "
                "written by the optimizer's update";
  let description = [{
    Under `--precision bf16` a step reads each weight matrix as
    `loom.convert %w : f32 -> bf16`, one loop over every weight at the top of
    the step. This pass rewrites each step function (`loom-optimizer`'s
    output) so that a parameter whose f32-to-bf16 conversions are read gets
    a state argument, its *shadow*: the conversions' readers read the shadow,
    and a new result, `loom.convert` of the parameter's update, becomes the
    shadow's next value (`loom.updates`). The conversion then runs in the
    update's own loop (`loom-merge-kernels` puts it there), which reads the
    weight anyway, and the step's loop over the weights goes.

    The shadow argument is marked `loom.state`, named `<param>.bf16`, and
    carries `loom.shadow_of = <the parameter's argument index>`. It is
    derived state: the runtime writes it as the parameter's bf16 rounding
    before the first step and after loading weights or a checkpoint, and
    checkpoints do not hold it. As the step reads `bf16(W(t))` either way,
    the arithmetic is unchanged bit for bit.

    A parameter the step does not update (no `loom.updates` result names
    it) keeps its conversions. Shadows go after the parameters and the
    state, before the data; `loom.updates` indices that name later
    arguments move with them.
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect"];
  let options = [
    ListOption<"functions", "function", "std::string",
               "The step functions (default: every function with a "
               "result marked loom.updates)">,
  ];
}

def LoomRecompute : Pass<"loom-recompute", "ModuleOp"> {
  let summary = "Recompute chosen forward activations in the backward pass "
                "instead of keeping them";
  let description = [{
    Works on gradient functions (`loom-autodiff`'s `@F_grad` or
    `loom-pipeline-schedule`'s `@F_stage<k>_grad`): their forward ops carry
    no `loom.phase`, their backward ops `loom.phase = "backward"`. A forward
    value that a backward op reads is an *activation kept for the backward
    pass*: it stays in memory from its forward definition to its last
    backward use. For each such value that the `policy` marks recomputable,
    the pass clones its producer (and, recursively, the recomputable
    producers of the clone's operands) right before the value's first
    backward user and makes every backward user read the clone. Each
    forward value is recomputed at most once per function; the clones carry
    `loom.phase = "recompute"` (the memory plan's category `recompute`, a
    track of their own in `--trace`), so later passes never merge them back
    into the forward ops (`cse` compares attributes).

    What is never recomputed: function arguments, values computed from no
    learned parameter (masks and position tables built from the data, kept
    as they are), and results of point-to-point receives. The policies:

    * `none`: nothing (the pass changes nothing).
    * `comm-free` (Oases): everything else except the results of
      communication (`shard` dialect ops, e.g. the forward all-reduces of
      tensor parallelism) and the *layer inputs* below: recompute regions
      end at communication results, so the backward pass replays only local
      compute and never a collective.
    * `full` (Megatron-LM's full recompute): everything except the layer
      inputs, collectives included: the backward pass replays every layer
      from its input (two more all-reduces per tensor-parallel layer and
      micro-batch).
    * `selective` (Korthikanti et al. 2022): only the attention core: each
      `loom.softmax`, the ops between it and the `loom.dot_general` of two
      activations that feeds it (the scores, their scale and mask) and that
      dot, plus elementwise ops between the softmax and the next
      `dot_general`. Queries, keys and values stay kept.
    * `auto`: one of the above per function, given by `policies` (loomc's
      `--recompute auto` chooses them, see `resolveAutoRecompute`), or per
      tensor: a function whose policy is `auto` recomputes single forward
      ops until their results free `free-bytes` bytes, those with the
      fewest recompute flops (`CostInterface`) per byte freed first. A
      candidate is an op `comm-free` could recompute whose results a
      backward op reads and whose operands stay kept anyway (arguments,
      layer inputs, values a backward op reads), and it is not chosen when
      it reads or feeds another chosen op: each recomputation is one op on
      kept values. Elementwise ops (activations, their scales, masks) go
      first, matrix products last.

    **Layers** come from `loom-mark-layers`' `loom.layer` marks, which the
    forward ops keep through autodiff and the pipeline passes. A layer
    *instance* is the ops with one mark that pass values to each other (a
    pipeline stage has one instance per layer and micro-batch). Its
    *inputs* are the activations it reads from outside (the residual stream
    from the previous layer); they are kept. `full` and `comm-free` only
    recompute ops inside layers: the embedding, the head and the loss stay
    as they are. Under `full` the first backward use of any value of an
    instance replays the whole instance, as Megatron-LM's checkpointed layer
    does, including the layer's last collective whose result the backward
    pass does not read.

    ```mlir
    %h = loom.dot_general %x, %w ...                       // forward
    %a = shard.all_reduce %h on @mesh grid_axes = [2] ...  // forward
    %g = loom.gelu %a ...                                  // forward
    %d = loom.mul %ct, %g {loom.phase = "backward"} ...    // reads %g
    ```
    with `policy=comm-free` becomes
    ```mlir
    %g2 = loom.gelu %a {loom.phase = "recompute"} ...
    %d = loom.mul %ct, %g2 {loom.phase = "backward"} ...
    ```
    and `%g` dies at its last forward use; with `policy=full` the clone
    chain also replays `%h` and the all-reduce.

    Without `loom.layer` marks, `full` and `comm-free` recompute nothing (a
    warning says so). Sets `loom.recompute = {policy, ops, collectives,
    flops}` on each function it changed (the counts of cloned ops, of
    cloned collectives and their forward flops from the `CostInterface`;
    per tensor also `bytes`, the result bytes chosen); `loom-memory-plan`
    copies it into its report. Errors: a named function that does not exist
    or is not a gradient function, `policy=auto` without one policy per
    function in `policies` (or with an unknown one).
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect"];
  let options = [
    ListOption<"functions", "functions", "std::string",
               "The gradient functions (default: every function with "
               "backward ops)">,
    ListOption<"policies", "policies", "std::string",
               "With policy=auto: the policy of each of `functions` (none, "
               "full, selective, comm-free, or auto: per tensor, "
               "`free-bytes`), as loomc's --recompute auto chose them">,
    ListOption<"freeBytes", "free-bytes", "int64_t",
               "With policy=auto: per function, the activation bytes a "
               "function whose policy is auto frees by recomputing single "
               "tensors, those cheapest in recompute flops per byte first">,
    Option<"policy", "policy", "::mlir::loom::RecomputePolicy",
           /*default=*/"::mlir::loom::RecomputePolicy::none",
           "none, full, selective, comm-free or auto", [{::llvm::cl::values(
             clEnumValN(::mlir::loom::RecomputePolicy::none, "none",
                        "keep every activation"),
             clEnumValN(::mlir::loom::RecomputePolicy::full, "full",
                        "keep layer inputs, replay layers with collectives"),
             clEnumValN(::mlir::loom::RecomputePolicy::selective, "selective",
                        "recompute the attention core only"),
             clEnumValN(::mlir::loom::RecomputePolicy::CommFree, "comm-free",
                        "recompute up to communication results (Oases)"),
             clEnumValN(::mlir::loom::RecomputePolicy::automatic, "auto",
                        "by memory budget and cost"))}]>,
  ];
}

def LoomFuseElementwise : Pass<"loom-fuse-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Mark the chains of elementwise ops that one loop computes";
  let description = [{
    Decides which elementwise ops (trait `ElementwiseMapping`) of the
    function's body are computed inside the loop of their user, and marks
    them `loom.fused`: an op is marked when its result has exactly one use,
    by an elementwise op with a result of the same shape (or by a
    reduction, below), and the function does not return it (a returned value is written into its own buffer).
    Not when ops that compute (flops, calls, collectives; not constants
    or broadcasts) run between the two and the inputs that die at the op
    outweigh its result: fusing would keep those
    inputs live until the user. A gradient accumulated over micro-batches
    (`acc + g_m`, apart by the next micro-batch's backward) would otherwise
    keep every micro-batch's gradients until the last sum.

    A value with several readers is marked too when every reader computes
    it in its loop (elementwise ops of its shape, or reductions that read
    it densely), the function does not return it, and computing it there
    does not read inputs at least as large as its result later across
    other work than now (a bf16 gradient widened to f32 for the optimizer
    is read in the update's loops: half the bytes kept live):
    - all readers in one group (a diamond, such as SiLU's gradient reading
      the sigmoid twice): the loop computes it once;
    - readers in several groups: each loop computes it again, so only
      cheap arithmetic (add, sub, mul, neg, abs, max, min, select,
      compare, convert; at most 4 ops with its marked producers; no
      transcendental, no division) whose dense inputs cost no more to read
      in every loop than the buffer saved (inputs * (loops - 1) <= loops +
      1; a broadcast or a splat costs nothing).
    These are decided in reverse program order, after the single-reader
    marks, so that every reader's group is known.

    A fusion group is an elementwise op without the mark (its *root*) and
    the marked ops that feed it, directly or through other marked ops;
    `convert-loom-to-loomrt` lowers each group to one `loomrt.kernel` at
    the root, named after the members in program order
    (`origin = "add+gelu"`). A lone elementwise op is a group of one.

    A reduction (`reduce_sum`, `reduce_mean`, `reduce_max`) folds its
    operand's group the same way when the operand has no other reader and
    the group reads every input at the reduced tensor's index (no
    broadcast of a tensor, no transpose; splat constants are scalars): the
    group is marked and the lowering gives one `loomrt.reduce` whose body
    computes each element (`origin = "mul+reduce_sum"`), so a VJP's
    product is never written before its sum.

    ```mlir
    %a = loom.add %h, %bb : tensor<2x8xf32>
    %g = loom.gelu %a : tensor<2x8xf32>
    ```
    becomes
    ```mlir
    %a = loom.add %h, %bb {loom.fused} : tensor<2x8xf32>
    %g = loom.gelu %a : tensor<2x8xf32>
    ```

    Nothing moves: a member stays where it is, and with it the point where
    the program first reads each of its operands, which is where the
    lowering waits for a transfer in flight (an all-reduce or receive).
    Broadcasts, transposes and splat constants feeding a group are not
    marked: the lowering reads them through strides and as scalars. The IR
    stays a valid loom program (the mark changes no value, loom-run ignores
    it). Run it after the training passes, right before
    `convert-loom-to-loomrt`; a pass that changes the uses of a marked op
    in between invalidates the mark (the verifier reports it).
  }];
}

def LoomOverlapOrder : Pass<"loom-overlap-order", "::mlir::func::FuncOp"> {
  let summary = "Order a training step's sub-batches round-robin by their "
                "collectives, in the forward and the backward pass alike";
  let description = [{
    `loom-overlap-split` interleaves the forward ops of its sub-batches
    segment by segment: a segment ends at a forward all-reduce and another
    begins at a `loom.tp_copy`, whose backward is one. The ops between the
    two (a block's residual add and norm) read the all-reduce just issued,
    and the backward pass, built in reverse, puts their gradients right
    after the backward all-reduce they read. Either way the last
    sub-batch's collective has nothing to hide behind (on a 2-rank GPT the
    compute waited ~2.5 ms after every second all-reduce).

    This pass reorders the ops of each function after the training passes
    (autodiff, recompute, data parallelism, the optimizer), so that every
    sub-batch runs up to and including its next all-reduce before the
    next sub-batch takes over: a sub-batch's ops that read a collective
    start only after the other sub-batches' work up to their own next
    collective. An op's sub-batch is its `loom.sub_batch` attribute, else
    the one sub-batch its operands belong to. Ops of several sub-batches
    (gradient sums, the loss) run as soon as their operands exist, so that
    the terms are freed; ops of none (weight transposes, fills) right
    before their first user, or, when no op here reads them (an
    optimizer's update), as soon as they can. Turns go to the sub-batch
    whose next op comes first in the original order. Ops with memory effects (sends, receives) keep their
    place: only the ops between two of them move. Values are unchanged
    (only the order of independent ops is); `--max-inflight-collectives`
    then bounds what is in flight. loomc runs it after the optimizer when
    `--overlap-split` is above 1.
  }];
}

def LoomRaiseComposites : Pass<"loom-raise-composites", "::mlir::func::FuncOp"> {
  let summary = "GELU, SiLU and RMSNorm spelled out in elementwise ops become one op";
  let description = [{
    Exporters write activations and norms out: PyTorch's TorchScript ONNX
    export of GPT-2's `gelu_new` is `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x
    + 0.044715 * x^3)))` in eight ops, of the exact GELU `x * 0.5 * (1 +
    erf(x / sqrt 2))`, of SiLU `x * sigmoid(x)`, of LLaMA's RMSNorm `w * (x
    * (1 / sqrt(mean(x^2) + eps)))`. Differentiated op by op, such a chain
    keeps several of its intermediates for the backward pass (each the
    activation's size); `loom.gelu`, `loom.silu` and `loom.rms_norm` keep
    only `x` (and the scale), and are one kernel each way.

    The pass reads the outermost `loom.mul` of each candidate as a monomial:
    a constant times a product of factors, through `loom.mul`, `loom.div`
    by a splat constant and `loom.pow` by a small integer splat (up to 4),
    so that every grouping and order of the factors matches. It raises

    * `0.5 * x * (1 + tanh(k * (x + 0.044715 * x^3)))`, `k = sqrt(2 / pi)`,
      to `loom.gelu %x approximate = tanh`;
    * `0.5 * x * (1 + erf(x / sqrt 2))` (or `x * (1 / sqrt 2)`) to
      `loom.gelu %x`;
    * `x * sigmoid(x)` to `loom.silu %x`;
    * `x * broadcast(r)` times, optionally, the broadcast of a scale `w` of
      the normalised shape along the leading dimensions, where `r = 1 /
      sqrt(s)` or `rsqrt(s)`, `s = reduce_mean(x * x or x^2, dims = [a,
      rank), keepdims) + eps`, and the broadcast puts `r` back in place, to
      `loom.rms_norm %x scale %w axis = a epsilon = eps`;

    the constants splats (or broadcasts of splats) equal to f32 precision
    (relative 1e-6), `x` of the product's type. The ops of the formula that
    nothing else reads are erased. Values are those of the formula to
    rounding (the raised op evaluates it in its own order: the RMS norm
    divides by the root where the formula multiplies by its reciprocal).
    Run before the training passes (loomc runs it right after shape
    inference).

    ```mlir
    %h = loom.mul %x, %half : tensor<4x128xf32>
    %c = loom.pow %x, %three : tensor<4x128xf32>
    %d = loom.mul %c, %kappa : tensor<4x128xf32>
    %e = loom.add %x, %d : tensor<4x128xf32>
    %f = loom.mul %e, %beta : tensor<4x128xf32>
    %t = loom.tanh %f : tensor<4x128xf32>
    %u = loom.add %t, %one : tensor<4x128xf32>
    %y = loom.mul %h, %u : tensor<4x128xf32>
    ```
    becomes `%y = loom.gelu %x approximate = tanh : tensor<4x128xf32>`.
  }];
}

def LoomFoldDotTranspose : Pass<"loom-fold-dot-transpose", "::mlir::func::FuncOp"> {
  let summary = "Compute a transposed matrix product directly, its operands swapped";
  let description = [{
    A `loom.transpose` of a `loom.dot_general` that has no other use, whose
    permutation keeps the batch dimensions first and in order and swaps the
    group of lhs free dimensions with the group of rhs free dimensions,
    becomes that `dot_general` with its operands (and their dimension
    lists) swapped: (A·B)ᵀ = Bᵀ·Aᵀ, which dot_general's result order
    already is. No value changes, and the transposed copy is gone: the
    weight gradient of `x · transpose(W)` (every ONNX Linear) is `xᵀ·dY`
    transposed into W's layout, one copy per weight and step.

    ```mlir
    %p = loom.dot_general %x, %dy, contracting_dims = [0] x [0]
        : (tensor<16x4xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
    %g = loom.transpose %p, permutation = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
    ```
    becomes
    ```mlir
    %g = loom.dot_general %dy, %x, contracting_dims = [0] x [0]
        : (tensor<16x8xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    ```
    A transpose that moves a batch dimension, or mixes the groups otherwise,
    is left for the lowering. Run after the training passes, before
    `loom-fuse-elementwise`.
  }];
}

#endif // LOOM_DIALECT_LOOM_TRANSFORMS_PASSES_TD

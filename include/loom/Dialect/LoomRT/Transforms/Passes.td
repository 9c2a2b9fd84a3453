//===- Passes.td - Passes on the loomrt dialect ------------*- tablegen -*-===//

#ifndef LOOM_DIALECT_LOOMRT_TRANSFORMS_PASSES_TD
#define LOOM_DIALECT_LOOMRT_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def LoomMemoryPlan : Pass<"loom-memory-plan", "ModuleOp"> {
  let summary = "Assign every intermediate buffer an offset in one arena";
  let description = [{
    Static buffer assignment for each `loomrt` function: a buffer is live
    from its `alloc` to its last use (uses through `view`s count), a
    `dealloc` is inserted right after that use, and buffers whose lives
    overlap get disjoint byte ranges of one arena. Placement is greedy:
    largest buffer first (ties: earliest first), each at the lowest
    64-byte-aligned offset that does not overlap a placed buffer live at
    the same time. The function gets `loomrt.arena_bytes` (the arena size)
    and `loomrt.peak_live_bytes` (the most bytes live at once, the lower
    bound any placement needs).

    With `report=FILE` it writes a JSON report: per function the arena and
    peak figures, the persistent bytes by category (`params`,
    `optimizer_state`, `data`, `results`: argument buffers by their
    `loom.param` / `loom.state` / `loomrt.result` attributes) and the arena
    bytes live at the peak by category (`activation`, `gradient`,
    `recompute`, `optimizer`, `workspace`; `comm_at_peak_bytes`: those a
    send, receive or all-reduce uses), `activation_peak_bytes` (the most
    activation bytes live at once, wherever that is: what a micro-batch's
    forward keeps for its backward; also `loomrt.activation_peak_bytes`),
    `peak_bytes` (persistent + peak live), and per stage (`stage`: the
    function's `loom.stage`) `device_peak_bytes`, what the rank's device
    pool holds (persistent + `arena_bytes`: the runtime allocates the whole
    arena) and `host_peak_bytes` (the host pool:
    buffers of category `swap`, loom-swap's offloaded activations, placed
    in an arena of their own; 0 without swap): what `train
    --memory-counters` measures. The function gets
    `loomrt.device_peak_bytes` (and `loomrt.host_arena_bytes` when it has a
    host pool).

    A function `loom-recompute` changed also gets `recompute`: its
    `loom.recompute` counts (policy, ops, collectives, flops of the
    replayed forward ops); one that `loom-overlap-split` split gets
    `overlap_split`: `sub_batches` and the `ops` computing one sub-batch
    (origins `sub<i>.`).

    With `device-memory=BYTES` (loomc `--device-memory`), a function whose
    device peak exceeds the budget is an error naming the stage, its peak,
    the budget, the breakdown and what would fit it (swap, recompute, more
    stages, smaller micro-batches); when its parameters and optimizer state
    (or all its persistent buffers) alone exceed the budget, the error says
    that nothing swappable can fix it. The report is written first.
    The analysis is `analyzeFunctionMemory`
    (`loom/Dialect/LoomRT/Transforms/MemoryPlan.h`), which other passes
    call to read a stage's device peak without changing the IR.

    ```
    error: loom-memory-plan: stage 0 (@main_stage0_step) needs 215040 bytes
    of device memory at its peak, over the --device-memory budget of 200000
    bytes by 15040: ...
    ```
  }];
  let options = [
    Option<"report", "report", "std::string", "\"\"",
           "Write the memory report (JSON) to this file ('-' for stdout)">,
    Option<"alignment", "alignment", "int64_t", "64",
           "Byte alignment of every buffer in the arena">,
    Option<"deviceMemory", "device-memory", "int64_t", "0",
           "Bytes of device memory per rank: a function whose device peak "
           "exceeds it is an error (0: no budget)">,
  ];
}

def LoomSwap : Pass<"loom-swap", "ModuleOp"> {
  let summary = "Offload activations to a host pool to fit a device budget";
  let description = [{
    Mbapp's swapping, on the lowered `loomrt` step functions (one per
    pipeline stage), run before `loom-memory-plan` (loomc `--swap host`
    with `--device-memory`). For each function whose device peak
    (`analyzeFunctionMemory`, the memory plan's own figure) exceeds
    `device-memory`, it repeatedly takes the largest activation buffer that
    is live at the peak without being used there (two of its uses, views
    included, span the peak; buffers used by a send, receive or all-reduce
    stay), and moves it to the host pool over that gap:

    ```mlir
    <use before the gap>
    %host = loomrt.alloc {category = "swap"} : memref<4x8xf32>
    %out = loomrt.swap_out %act to %host : memref<4x8xf32>, memref<4x8xf32>
    ... at most prefetch-distance ops, before the peak ...
    loomrt.wait %out                  // %act's device bytes are free after
    ... the peak ...
    %act2 = loomrt.alloc {category = "activation"} : memref<4x8xf32>
    %in = loomrt.swap_in %host to %act2 : memref<4x8xf32>, memref<4x8xf32>
    ... at most prefetch-distance ops, after the peak ...
    loomrt.wait %in
    <use after the gap, now of %act2>
    ```

    The copies run on the runtime's copy thread while the ops between start
    and wait compute (`train --host-link RATE` limits their rate). How many
    ops: `prefetch-distance` at most, or, when the host link's rate and the
    device's (`host-link`, `gemm-flops`, `memory-bandwidth`, `launch`; loomc
    takes them from `--cluster`) are given, as many as it takes for their
    compute, timed from each op's work (a GEMM's flops, another op's bytes),
    to cover the copy: the copy out is waited on as early, the copy in
    started as late, as hides it (a copy in started earlier holds its
    buffer longer), each within the gap around the peak; a copy no window
    hides gets `prefetch-distance` ops, and timed, a buffer whose copies
    hide is moved before a larger one whose copies would not. The
    `swap_in` verifier checks that every use of a swapped-in buffer comes
    after its wait. Under 1F1B the forward pass of a micro-batch and its
    backward are far apart in the first stages, so their activations are
    what moves. The function is re-analysed after each move, and the loop
    stops when it fits; when nothing live at the peak can move and it still
    does not fit, the error names the stage, its peak before and after, and
    what is live at the peak. Swapping moves bytes: the program computes
    the same values. Functions within the budget are not changed.

    With `peer` (loomc `--swap peer`; the module holds the pipeline's stage
    programs) a moved buffer goes to a neighbouring stage that has room for
    it under the same budget (Mbapp's balance across stages: under 1F1B
    the last stages hold fewer micro-batches): a `send_start` over the
    pipeline axis where the host copy would start and a `recv_start` into
    the fresh buffer where it would come back; the neighbour gets a buffer
    of category `peer`, a `recv_start` into it and, later, the
    `send_start` back. The neighbour's ops are placed by the messages the
    two programs already exchange, so that neither waits for the other in
    a cycle: it posts the receive before waiting on anything the stage
    sends after its send's wait, waits for the data only after sending all
    the stage waits on before its send, and sends it back as late as the
    last message the stage needs before posting its receive (the bytes
    travel with it), never after waiting on anything the stage sends after
    its receive's wait. The neighbour's peak is re-analysed with the
    buffer; over the budget, the neighbour first passes its own
    activations on the same way, away from the stage (so stage 0's excess
    can reach the last stage's room through the stages between); when that
    fails too, the buffer stays, and the next one is tried. The error names
    why the last could not go.

    Each pair's placement is also played with all stages' messages
    (`findPipelineDeadlock`, loom/Dialect/LoomRT/Transforms/
    PipelineMessages.h, with the moves still waiting for room further on):
    a move whose messages would close a cycle of waits through other
    stages is refused, so the programs
    cannot hang.

    With `peer` and `host-fallback` (loomc `--swap balance`), a stage sends
    only to the next stage (under 1F1B the later stages hold fewer
    micro-batches), which passes its own on as with `peer` when it has no
    room, and a buffer no stage further on can make room for goes to the
    host pool instead, as without `peer`: the later stages' room fills
    first (balancing their peaks), and the rest crosses the host link.

    ```mlir
    // stage 0                              // stage 1
    %h = loomrt.send_start %act on @mesh     %s = loomrt.alloc {category = "peer"}
        grid_axes = [1] {peer = 1, tag = 9}  %r = loomrt.recv_start %s on @mesh
    loomrt.wait %h                               grid_axes = [1] {peer = 0, tag = 9}
    ...                                      loomrt.wait %r
    %a2 = loomrt.alloc {category = "activation"}  ...
    %i = loomrt.recv_start %a2 ... {peer = 1, tag = 10}
                                             %b = loomrt.send_start %s ... {peer = 0, tag = 10}
    loomrt.wait %i                           loomrt.wait %b
    ```
  }];
  let options = [
    Option<"deviceMemory", "device-memory", "int64_t", "0",
           "Bytes of device memory per rank (0: no budget, nothing moves)">,
    Option<"peer", "peer", "bool", "false",
           "Send activations to a neighbouring pipeline stage with room, "
           "over the pipeline link, instead of to the host pool">,
    Option<"hostFallback", "host-fallback", "bool", "false",
           "With peer: a buffer no neighbour can take goes to the host "
           "pool">,
    Option<"prefetchDistance", "prefetch-distance", "int64_t", "4",
           "Ops between a copy's start and its wait, at most (the copy "
           "hides behind them), when the copies are not timed">,
    Option<"hostLink", "host-link", "double", "0",
           "Bytes per second of the host link (with gemm-flops and "
           "memory-bandwidth: time the copies; 0: prefetch-distance)">,
    Option<"gemmFlops", "gemm-flops", "double", "0",
           "Flops per second of a GEMM, for timing the copies">,
    Option<"memoryBandwidth", "memory-bandwidth", "double", "0",
           "Bytes per second of device memory, for timing the copies">,
    Option<"launch", "launch", "double", "0",
           "Seconds of a kernel launch, for timing the copies">,
    Option<"alignment", "alignment", "int64_t", "64",
           "The memory plan's alignment (for the peak it computes)">,
  ];
}

def LoomVerifyMesh : Pass<"loom-verify-mesh", "ModuleOp"> {
  let summary = "Check that the lowered program runs on the requested mesh";
  let description = [{
    The last step of a training compile (loomc, `--loom-training-pipeline`):
    the module's device mesh `shard.grid @mesh` must have the requested
    shape `dp x pp x tp` (no mesh at all for `1 x 1 x 1`), and every axis of
    more than one rank must have left its communication in the lowered
    program: an `all_reduce_start` on the dp and on the tp axis, a
    `send_start` on the pp axis. A tp axis that stayed at one rank means
    that neither `loom-tensor-parallel` nor `loom-vocab-parallel` found
    anything to partition (the first warned why); any other mismatch is a
    bug in a parallelisation pass. The module is not changed.

    ```
    error: loom-verify-mesh: tp=2 was asked for, but neither
    loom-tensor-parallel nor loom-vocab-parallel found an attention or MLP
    block, an embedding or an LM head to partition (see the warning above);
    compile without tp
    ```
  }];
  let options = [
    Option<"dp", "dp", "int64_t", /*default=*/"1", "Data-parallel ranks">,
    Option<"tp", "tp", "int64_t", /*default=*/"1", "Tensor-parallel ranks">,
    Option<"pp", "pp", "int64_t", /*default=*/"1", "Pipeline stages">,
  ];
}

def LoomVerifyMessages : Pass<"loom-verify-messages", "ModuleOp"> {
  let summary = "Check that the pipeline stages cannot wait for each other "
                "forever";
  let description = [{
    Plays the point-to-point messages of the module's pipeline stage
    programs (`loom.stage` 0..P-1: their `send_start`, `recv_start` on the
    pp axis and the `wait`s on them) together, as MPI runs them at worst:
    a wait on a receive completes once the peer stage started the matching
    send (same tag, n-th with n-th), a wait on a send once the peer posted
    the matching receive (a message past the eager limit). Every stage
    runs up to a wait that cannot complete yet; when no stage can move and
    some have not finished, the programs would hang at run time (a cycle of
    waits through one or more stages, or a message nobody matches), and
    the pass fails, naming each stuck wait (with a note at its op). A
    module without pipeline stages is not checked. The module is not
    changed. loomc runs it last under `--mesh pp=N` (after `loom-swap`'s
    peer moves and `loom-comm-schedule`, the passes that move messages);
    `loom-swap` runs the same check before it commits a peer move.

    ```
    error: loom-verify-messages: the pipeline stage programs would wait for
    each other forever: stage 0 waits for its receive from stage 1 (tag 0);
    stage 1 waits for its receive from stage 0 (tag 1) (a bug in the pass
    that placed these messages)
    ```
  }];
}

def LoomMaxInflightCollectives : Pass<"loom-max-inflight-collectives",
                                      "ModuleOp"> {
  let summary = "Keep at most N all-reduces in flight per communication group";
  let description = [{
    The lowering starts each all-reduce where the `shard.all_reduce` was
    and waits right before the first reader of its result, so any number
    of them may be in flight at once. This pass bounds that number per
    group (the ranks along one `grid_axes` of a `grid`): walking each
    function's body in order, before an `all_reduce_start` on a group that
    already has `max` all-reduces in flight, the `loomrt.wait` of the oldest
    one moves up to right before the start. Moving a wait earlier never
    changes a value, only when the rank blocks. Sends and receives are not
    counted.

    `loomc --overlap-split K` runs it with `--max-inflight-collectives N`
    (default 1, Oases' one collective in flight per group): sub-batch `i`'s
    all-reduce overlaps sub-batch `i+1`'s compute, and completes before
    sub-batch `i+1`'s own starts.

    ```mlir
    %h0 = loomrt.all_reduce_start %a on @mesh grid_axes = [2] ...
    // (max = 1) loomrt.wait %h0 moves here, from before %a's first reader
    %h1 = loomrt.all_reduce_start %b on @mesh grid_axes = [2] ...
    ```
  }];
  let options = [
    Option<"max", "max", "int64_t", /*default=*/"1",
           "All-reduces in flight per group (>= 1)">,
  ];
}

def LoomCommSchedule : Pass<"loom-comm-schedule", "ModuleOp"> {
  let summary = "Post every pipeline transfer and all-reduce as early as "
                "its data allows (TriRace)";
  let description = [{
    The lowering starts a transfer where the schedule put the
    `shard.send` / `shard.recv`: a send after whatever compute the stage
    program placed between its value's definition and the send (in the
    backward pass, the input gradient is ready before the weight
    gradients are computed), a receive right before its first use, so
    that a rank waits the whole transfer out even when the peer sent long
    before. This pass turns each pipeline exchange into two one-way
    transfers, each posted as early as its data allows (TriRace, Li et
    al., TPDS 2024), in every function of the module:

    * **Sends** move up, with their buffer and copy, to right after the
      last op that writes the sent buffer (or a view of it; a `wait`
      completes the writes of the transfer it waits for): the copy reads
      the same values, earlier. Being placed right after the producer,
      a send is posted ahead of any data-parallel bucket that became ready
      at the same point: critical pipeline transfers go first.
    * **All-reduces** move up the same way (the lowering's buffer and
      `all_reduce` copy with them; other forms only the start) to right
      after the last write of what they reduce, but never past another
      all-reduce's start or past a wait for an all-reduce of their group
      (`loom-max-inflight-collectives` bounds them that way): in the
      backward pass a layer's input gradient is complete before its weight
      gradient is computed, so its tensor-parallel all-reduce runs during
      that GEMM (Megatron's overlap of the input-gradient all-reduce).
    * **Receives** move up, with their buffer, to right after the `wait` of
      the previous receive from the same peer of the same group (or the
      previous receive's start, keeping their order; or the top of the
      body): one receive per peer is prefetched while the previous one's
      data is consumed, so a message that arrives early lands in its
      buffer at once and the wait finds it there. The buffer is live from
      the new start (the memory plan sees it).

    Waits stay where they are, and so does every other op: no value
    changes, only when transfers are posted. Each group has its own
    communicator in the runtime (and the communication thread never blocks
    on one), so a data-parallel all-reduce in flight does not hold back a
    pipeline transfer. An op whose memory effects are unknown stops a
    move. `loomc --comm-schedule off` leaves the lowering's order (for
    comparison).

    ```mlir
    // before: the gradient %dx for the previous stage is sent after the
    // weight gradient is computed; the next activation is received right
    // before its use
    loomrt.gemm ins(...) outs(%dx ...)
    loomrt.gemm ins(...) outs(%dw ...)
    %b = loomrt.alloc {category = "activation"} : memref<2x4x16xf32>
    loomrt.copy ins(%dx ...) outs(%b ...) {origin = "send", ...}
    %s = loomrt.send_start %b on @mesh grid_axes = [1] {peer = 0, tag = 1}
    // after: the alloc, copy and send_start are right after the gemm that
    // writes %dx, before the one that writes %dw
    ```
  }];
}

def LoomFuseGemmBias : Pass<"loom-fuse-gemm-bias", "ModuleOp"> {
  let summary = "Add a linear layer's bias, GELU and GELU gradient as its "
                "gemm writes the product";
  let description = [{
    A linear layer's `x w + b` lowers to a `loomrt.gemm` into a buffer and a
    `loomrt.kernel` that adds `b` broadcast over the rows. When that kernel
    is the product's only reader, this pass gives the gemm the bias as an
    epilogue (cuBLASLt's `CUBLASLT_EPILOGUE_BIAS`; on CPUs BLAS with
    beta = 1 over rows of the bias) writing the kernel's output, and
    removes the kernel and the product's buffer: one pass over the
    activation and one buffer fewer per layer.

    It fuses when all of these hold:
    * the gemm is the plain form of one f32 or bf16 matrix (`batch` 1);
    * its output `c` is a `loomrt.alloc` that only the kernel reads, at
      the element it writes (no strides of its own), with the kernel's
      loop shape;
    * the kernel's body is one `arith.addf` of its two inputs (in bf16:
      both widened with `arith.extf`, the f32 sum narrowed once with
      `arith.truncf`, as convert-loom-to-loomrt writes a bf16 add; the
      runtimes' bf16 gemmBias also rounds the f32 sum once); the other
      input is a 1-D buffer of the gemm's `n` elements of `c`'s type read
      with strides `[0, ..., 0, 1]`; its output is a `loomrt.alloc`;
    * no op between the gemm and the kernel writes a buffer the gemm
      reads or the kernel's output (the fused gemm runs where the kernel
      was, so it reads the bias the kernel would have: a bf16 program
      narrows the bias in between).

    The GELU and GELU-gradient epilogues below are f32 only.

    ```mlir
    loomrt.gemm ins(%x, %w : ...) outs(%p : memref<32x256xf32>) {...}
    loomrt.kernel ins(%p, %b : memref<32x256xf32>, memref<256xf32>)
        outs(%y : memref<32x256xf32>)
        attributes {in_strides = [array<i64: 256, 1>, array<i64: 0, 1>]} {
    ^bb0(%u: f32, %v: f32):
      %s = arith.addf %u, %v : f32
      loomrt.yield %s : f32
    }
    // becomes
    loomrt.gemm ins(%x, %w : ...) bias(%b : memref<256xf32>)
        outs(%y : memref<32x256xf32>) {...}
    ```
    Under tensor parallelism a row-parallel layer adds its bias after the
    all-reduce, so its gemm keeps its own buffer; a bf16 product
    (`--precision bf16`) keeps its kernel too (the add widens it).

    Then a gemm with a bias whose product's first reader is a kernel that
    is `loom.gelu` with `approximate = tanh` alone (origin `gelu`, a
    `math.tanh` in its body), reading it densely into a `loomrt.alloc` of
    its type, gets that kernel's output as its `c` and the product as its
    `gelu_input` (cuBLASLt's `CUBLASLT_EPILOGUE_GELU_AUX_BIAS`: the
    activation and, for the backward pass, the pre-activation in one
    matmul), when no op between them writes the gemm's operands or reads
    or writes the product or the activation. The exact (erf) GELU stays a
    kernel: cuBLASLt offers only the tanh form.

    On the backward pass's side, a gemm (plain form of one f32 matrix,
    no epilogue) whose product's only reader is a kernel that is
    `loom.gelu_grad` with `approximate = tanh` alone (origin `gelu_grad`,
    a `math.tanh` in its body, the product as the cotangent), reading both
    inputs densely into a `loomrt.alloc` of the product's type, writes
    that kernel's output itself with GELU's input as its `dgelu_input`
    (cuBLASLt's `CUBLASLT_EPILOGUE_DGELU`), when no op between them writes
    the gemm's operands or GELU's input or touches the product or the
    gradient; the kernel and the product's buffer go. A gradient whose
    GELU is recomputed (`--recompute`) has the recomputed bias add in its
    kernel and stays as it is. Run the pass right after
    `convert-loom-to-loomrt`.
  }];
}

def LoomFuseGemmAccumulate : Pass<"loom-fuse-gemm-accumulate", "ModuleOp"> {
  let summary = "Add a product onto the other term of its sum as its gemm "
                "writes it";
  let description = [{
    Gradients are sums of products: a weight's gradient over the
    sub-batches of `--overlap-split` or the micro-batches of a pipeline, an
    input's gradient over the layers that read it (attention's query, key
    and value projections; SwiGLU's gate and up). Each lowers to gemms into
    buffers of their own and `loomrt.kernel` adds. When an add is the only
    reader of a product and its other term is a buffer that nothing reads
    afterwards, this pass has the gemm add its product onto that buffer
    (`accumulate`: BLAS and cuBLAS with beta = 1), which then holds the sum:
    the kernel, the product's buffer and the sum's go, one pass over the
    gradient and two buffers fewer per add.

    It fuses when all of these hold:
    * the gemm is the plain form of one f32 matrix without an epilogue; its
      output `c` is a `loomrt.alloc` that only the add reads;
    * the add's body is one `arith.addf` of its two inputs, both read at
      the element it writes, both of the product's type; its output is a
      `loomrt.alloc` of that type;
    * the other term is a `loomrt.alloc` in the add's block with the
      output's `category`, not read through a `loomrt.view`, and every op
      other than the add that uses it comes before the add; the gemm does
      not read it;
    * no op between the gemm and the add writes a buffer the gemm reads
      (the fused gemm runs where the add was).

    ```mlir
    loomrt.gemm ins(%x0, %dy0 : ...) outs(%p0 : memref<16x8xf32>) {...}
    loomrt.gemm ins(%x1, %dy1 : ...) outs(%p1 : memref<16x8xf32>) {...}
    loomrt.kernel ins(%p0, %p1 : ...) outs(%dw : memref<16x8xf32>) {
    ^bb0(%u: f32, %v: f32):
      %s = arith.addf %u, %v : f32
      loomrt.yield %s : f32
    }
    // becomes (%dw's uses read %p0)
    loomrt.gemm ins(%x0, %dy0 : ...) outs(%p0 : memref<16x8xf32>) {...}
    loomrt.gemm ins(%x1, %dy1 : ...) outs(%p0 : memref<16x8xf32>)
        accumulate {...}
    ```
    Gemms are visited last first, so of two products the later gemm adds
    onto the earlier one's buffer, and a chain of sums collects in its
    first term's buffer. The sum's rounding differs from the add's (the
    library adds the product onto `c` in its own blocking), within f32
    round-off. Run the pass after `loom-fuse-gemm-bias` (a product with a
    bias or GELU epilogue keeps its own buffer).
  }];
}

def LoomFoldLayoutCopies : Pass<"loom-fold-layout-copies", "ModuleOp"> {
  let summary = "Read a transposed or sliced buffer through its source";
  let description = [{
    convert-loom-to-loomrt lowers a `transpose` or `slice` whose value has
    several readers (or readers that are not elementwise: another slice,
    a concatenation) to a `loomrt.copy` into a buffer of its own, which
    costs a pass over memory, and its readers another. Rotary embeddings
    slice and concatenate heads that a transpose produced: three copies
    before the first product. When every reader can read the copy's
    source directly, this pass makes them do so (their strides and offset
    composed with the copy's) and erases the copy and its buffer.

    A copy folds when all of these hold:
    * it writes all of an `alloc`ed buffer, each element once, in the
      row-major order of its `shape`; nothing else writes that buffer;
    * every other use of the buffer (through `loomrt.view`s) is an input
      of a `loomrt.kernel` or the source of a `loomrt.copy` after it in
      the same block, and the elements each reads map onto the copy's
      index space without carries (every nonzero stride steps one of its
      dimensions and stays inside it); a kernel then reads the source
      with `in_strides` and `in_offsets`, a copy with `source_strides`
      and `source_offset`;
    * each reader with several loop iterations reads the source along
      its innermost dimension contiguously, unless it is the only reader
      (a gather-like read repeated by several readers costs more than
      the copy);
    * nothing between the copy and its last reader writes the source;
    * the source is no larger than the buffer, or is used after the last
      reader anyway, or the copies of it that fold (the pieces of a
      split) free at least its bytes, and then fold together: folding
      never keeps a larger buffer live longer than the bytes it frees.

    ```mlir
    loomrt.copy ins(%q : memref<2x4x3xf32>) outs(%t : memref<2x3x4xf32>)
        {origin = "transpose", shape = array<i64: 2, 3, 4>,
         source_strides = array<i64: 12, 1, 3>, source_offset = 0, ...}
    loomrt.kernel ins(%t : memref<2x3x4xf32>) outs(%y : ...) {...}
    // becomes
    loomrt.kernel ins(%q : memref<2x4x3xf32>) outs(%y : ...)
        {in_strides = [array<i64: 12, 1, 3>], ...} {...}
    ```
    Copies fold until none does. Run it after the lowering and before
    `loom-merge-kernels` (kernels that read a folded copy's source may
    then merge).
  }];
}

def LoomFuseNormNarrowing : Pass<"loom-fuse-norm-narrowing", "ModuleOp"> {
  let summary = "A norm whose only reader rounds it to bf16 writes bf16";
  let description = [{
    With `--precision bf16` a layer or RMS norm computes in f32 and the
    products after it read bf16: the lowering writes the norm's f32 output
    and, per product (`loom-mixed-precision` converts each product's
    operand, so that each gradient returns in f32 as under autocast), a
    loop that reads it back and writes its bf16 rounding. When those loops
    are the output's only readers, the norm writes the first one's bf16
    buffer itself (the runtime rounds each f32 result once, the same
    bits), the other loops' readers read that buffer too, and the loops
    and the other buffers go: a LLaMA layer's attention norm was four
    passes over memory (the norm and three conversions for q, k and v) and
    is one.

    It fuses when all of these hold:
    * the norm's output is an `alloc`ed buffer that nothing uses (views
      included) but the norm and `loomrt.kernel`s after it in its block;
    * each of those kernels reads it at the element it writes, writes one
      bf16 buffer of as many elements, and its body is one `arith.truncf`
      from f32 to bf16;
    * nothing between the norm and each kernel touches that kernel's bf16
      buffer (the norm now writes it earlier), and nothing else writes it;
      the first one's `alloc`, when after the norm, moves before it; the
      others' are `alloc`s of the first one's type (no views).

    ```mlir
    loomrt.layer_norm 1 ins(%x scale %s : ...) outs(%n : memref<4x8xf32>) {...}
    loomrt.kernel ins(%n : memref<4x8xf32>) outs(%h : memref<4x8xbf16>)
        {origin = "convert"} {
    ^bb0(%v: f32):
      %r = arith.truncf %v : f32 to bf16
      loomrt.yield %r : bf16
    }
    // becomes
    loomrt.layer_norm 1 ins(%x scale %s : ...) outs(%h : memref<4x8xbf16>) {...}
    ```
  }];
}

def LoomFuseNormGrad : Pass<"loom-fuse-norm-grad", "ModuleOp"> {
  let summary = "A norm's gradient reads its bf16 cotangent and adds onto the residual's";
  let description = [{
    A transformer layer's norm sits on the residual stream, so its
    gradient arrives from a product and leaves as a sum: under `--precision
    bf16` the lowering writes the product's bf16 result, a loop that widens
    it to f32 for `loomrt.norm_grad`, the norm's input gradient, and a loop
    that adds it to the skip connection's gradient. Two passes over the
    activation that the runtime's norm_grad does on the way:

    * **the widening**: a `loomrt.kernel` whose body is one `arith.extf`
      from bf16 to f32, reading its one input at the element it writes,
      whose f32 output only the norm_grad reads (as its cotangent, no
      views): the norm_grad reads the bf16 buffer itself (the runtime
      widens each element, the same values), provided nothing between the
      two writes that buffer; a `dealloc` of it in between moves after the
      norm_grad;
    * **the residual add**: a `loomrt.kernel` after the norm_grad in its
      block whose body is one `arith.addf` of its two f32 inputs, read at
      the element it writes, one of them the norm_grad's input gradient
      (read by nothing else, no views), into an `alloc`ed buffer of the
      same type (no views): the norm_grad adds its input gradient onto the
      other input (`residual`, which must be defined before the norm_grad
      and which nothing between the two may write) and writes the sum into
      its own input-gradient buffer, which replaces the add's output; the
      add and its buffer go. Nothing between may touch the add's output.

    ```mlir
    loomrt.kernel ins(%p : memref<8x64xbf16>) outs(%g : memref<8x64xf32>)
        {origin = "convert"} { ... arith.extf ... }
    loomrt.norm_grad 1 ins(%x, %g : ...) scale(%s : ...) outs(%dx, ...)
    loomrt.kernel ins(%skip, %dx : ...) outs(%sum : memref<8x64xf32>)
        {origin = "add"} { ... arith.addf ... }
    // becomes
    loomrt.norm_grad 1 ins(%x, %p : memref<8x64xf32>, memref<8x64xbf16>)
        scale(%s : ...) residual(%skip : ...) outs(%dx, ...)
    // and %sum's readers read %dx.
    ```
  }];
}

def LoomFuseLossSoftmax : Pass<"loom-fuse-loss-softmax", "ModuleOp"> {
  let summary = "The cross-entropy writes the softmax its gradient reads";
  let description = [{
    The gradient of a softmax cross-entropy is `softmax(logits) - onehot`:
    the lowering computes the loss (`loomrt.cross_entropy`: each row's max,
    the sum of its exponentials, their log) and, for the backward pass, a
    `loomrt.softmax` of the same logits, which evaluates the same
    exponentials again. The cross-entropy writes the softmax itself
    (`probs`: the same values, from the exponentials it sums anyway) and
    the softmax goes: one pass over the [tokens, vocabulary] logits instead
    of two (LLaMA h256's loss: about 0.6 ms of a 40 ms step).

    It fuses when all of these hold:
    * the softmax is over the last dimension of the cross-entropy's logits
      buffer itself (no view), not a log-softmax, into an `alloc`ed f32
      buffer of the logits' type in the same block;
    * nothing between the two ops writes the logits, and nothing between
      touches the softmax's buffer (the cross-entropy writes it where it
      runs); its `alloc`, when after the cross-entropy, moves before it.

    ```mlir
    loomrt.cross_entropy "mean" ins(%l, %y : ...) outs(%loss : memref<f32>)
    ...
    loomrt.softmax 1 ins(%l : memref<8x10xf32>) outs(%p : memref<8x10xf32>)
    // becomes
    loomrt.cross_entropy "mean" ins(%l, %y : ...) outs(%loss : memref<f32>)
        probs(%p : memref<8x10xf32>)
    ```
  }];
}

def LoomMergeKernels : Pass<"loom-merge-kernels", "ModuleOp"> {
  let summary = "Compute a kernel inside the next kernel's loop that reads "
                "its outputs";
  let description = [{
    `loom-fuse-elementwise` puts a value's producer into its reader's loop
    when the value has one reader and it is not kept for later. A value
    that the step keeps (an optimizer's new moments: results of the step,
    read by the parameter's update) gets a kernel of its own, which writes
    it, and the reader's kernel reads it back. This pass merges such a
    kernel (the producer) into the next op that touches its outputs when
    that op is a kernel of the same loop (the consumer): one loop computes
    both and writes the consumer's outputs and the producer's, less an
    output that only the consumer read, whose buffer goes. AdamW's three
    kernels per parameter (first moment, second moment, update) become one
    that reads the parameter, its gradient and both moments once and
    writes the three.

    It merges when all of these hold:
    * the consumer is the first op after the producer with an operand
      whose buffer (`loomrt.view`s followed) is one of the producer's
      outputs; it is a `loomrt.kernel` whose loop has the producer's shape
      and whose discardable attributes (stage, sub-batch) are the
      producer's;
    * it reads those outputs themselves (no views) at the element it
      writes, and writes none of them;
    * no op between them touches the producer's outputs;
    * an input of the producer that the consumer writes is read at the
      element written;
    * the merged kernel runs where the consumer is when no op between them
      writes a buffer the producer reads, and none allocates a buffer
      unless every buffer the producer reads is used after the consumer
      anyway (the producer's inputs, now read there, must not stay live
      across an allocation, which could raise the memory plan's peak;
      SwiGLU's SiLU of the gate's product, which the backward pass reads,
      merges into the product with the up projection past its gemm); else where
      the producer is, when every output of the producer goes, the
      consumer's other inputs exist before it and nothing between writes
      them or touches the consumer's outputs, and the consumer's outputs
      allocated between them (allocated before it now) hold no more bytes
      than the producer's outputs that go: no point between holds more
      than before. An RMS norm's input gradient and the residual add
      after it (a reduction and its buffer between them) merge this way.

    ```mlir
    loomrt.kernel ins(%g, %m : ...) outs(%m2 : memref<8xf32>) {...}
    loomrt.kernel ins(%g, %v : ...) outs(%v2 : memref<8xf32>) {...}
    loomrt.kernel ins(%p, %m2, %v2 : ...) outs(%p2 : memref<8xf32>) {...}
    // becomes (%m2, %v2 and %p2 are the step's results)
    loomrt.kernel ins(%p, %g, %v, %m : ...)
        outs(%p2, %v2, %m2 : memref<8xf32>, ...) {...}
    ```
    Kernels merge until none does. Run it after the gemm fusions and
    before `loom-in-place-updates` (which then finds each update in one
    kernel).
  }];
}

def LoomExcessPrecision : Pass<"loom-excess-precision", "ModuleOp"> {
  let summary = "Keep a fused loop's intermediate bf16 values in f32";
  let description = [{
    convert-loom-to-loomrt writes each bf16 op of a fused loop as its f32
    arithmetic between `arith.extf` and `arith.truncf`, so a chain of ops
    rounds to bf16 after every op, as an unfused program storing each
    result would. Inside one loop that rounding buys nothing: this pass
    replaces an `arith.extf` of an `arith.truncf` (f32 to bf16 and back)
    in a `loomrt.kernel` or `loomrt.reduce` body with the unrounded f32
    value, and erases the rounding when nothing else reads it. Values are
    still rounded where they are stored, once.

    It keeps the pair when the rounded value is also yielded (stored): the
    loop's readers then see the value the buffer holds, as do its later
    readers (a value saved for the backward pass and used by the forward
    pass sees one precision). This is the excess precision of XLA
    (`xla_allow_excess_precision`, on by default) and of TorchInductor
    (`emulate_precision_casts`, off by default); `loomc
    --excess-precision off` keeps every rounding, as PyTorch's eager
    autocast rounds after every op.

    ```mlir
    ^bb0(%x: bf16, %y: bf16):
      %a = arith.extf %x : bf16 to f32
      %p = arith.mulf %a, %a : f32
      %r = arith.truncf %p : f32 to bf16
      %b = arith.extf %r : bf16 to f32   // becomes %p
      %q = arith.addf %b, %a : f32
      %s = arith.truncf %q : f32 to bf16
      loomrt.yield %s : bf16
    ```
    Run it after `loom-merge-kernels` (whose merged loops hold more such
    pairs).
  }];
}

def LoomInPlaceUpdates : Pass<"loom-in-place-updates", "ModuleOp"> {
  let summary = "Update parameters and optimizer state in their own buffers";
  let description = [{
    A step returns each updated parameter and optimizer-state tensor as a
    result (`loom.updates = i`: it replaces argument `i` for the next
    step), so the runtime holds two copies of the model state. This pass
    marks a result `loomrt.in_place` when writing it into argument `i`'s
    buffer changes nothing the step reads; the runtime then gives both the
    same buffer (the memory plan counts it once). For AdamW that is the
    model's parameters and both moments: 12 bytes per parameter of device
    memory.

    A result is marked when, following views of either buffer:
    * one `loomrt.kernel` (the update) writes it, reading the argument, if
      at all, at the element it writes (no strides of its own);
    * every other op that reads the argument comes before that kernel,
      and so does the `wait` of any transfer that reads it;
    * every other op that touches the result comes after that kernel.

    ```mlir
    func.func @step(%w: memref<4xf32> {loom.param}, ...,
                    %w_new: memref<4xf32> {loom.updates = 0, loomrt.result = 0}) {
      ... reads of %w ...
      loomrt.kernel ins(%w, %g : ...) outs(%w_new : memref<4xf32>) {...}
    }
    ```
    marks `%w_new` `loomrt.in_place`. A result written before its
    argument's last read (PipeDream-2BW's older weights), or by a copy or a
    library call, stays a separate buffer. Run it after the passes that
    move ops (`loom-comm-schedule`, `loom-max-inflight-collectives`) and
    before `loom-swap` and `loom-memory-plan`.
  }];
}

#endif // LOOM_DIALECT_LOOMRT_TRANSFORMS_PASSES_TD

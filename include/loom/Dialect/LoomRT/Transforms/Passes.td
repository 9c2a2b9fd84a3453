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
    `recompute`, `optimizer`, `workspace`), and `peak_bytes`, their total:
    what the runtime's counters measure. A function `loom-recompute`
    changed also gets `recompute`: its `loom.recompute` counts (policy,
    ops, collectives, flops of the replayed forward ops); one that
    `loom-overlap-split` split gets `overlap_split`: `sub_batches` and the
    `ops` computing one sub-batch (origins `sub<i>.`).
  }];
  let options = [
    Option<"report", "report", "std::string", "\"\"",
           "Write the memory report (JSON) to this file ('-' for stdout)">,
    Option<"alignment", "alignment", "int64_t", "64",
           "Byte alignment of every buffer in the arena">,
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

#endif // LOOM_DIALECT_LOOMRT_TRANSFORMS_PASSES_TD

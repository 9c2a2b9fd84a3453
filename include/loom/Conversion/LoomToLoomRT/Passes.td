//===- Passes.td - loom to loomrt lowering -----------------*- tablegen -*-===//

#ifndef LOOM_CONVERSION_LOOMTOLOOMRT_PASSES_TD
#define LOOM_CONVERSION_LOOMTOLOOMRT_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertLoomToLoomRT : Pass<"convert-loom-to-loomrt", "ModuleOp"> {
  let summary = "Lower loom functions to buffers, kernels and library calls";
  let description = [{
    Turns the functions named by `function` (a list: `function=a` or
    `function=a,b`, e.g. the stage programs `@F_stage<k>_step` of a
    pipeline; default: the only function whose name ends in `_step`, else
    the module's only function) into `loomrt` programs, each on its own;
    the module afterwards holds only those functions (and no `shard.grid`:
    the communicators are the runtime's). Every tensor becomes a buffer
    (`memref`):

    * arguments stay arguments; each result becomes one more argument (the
      buffer the runtime passes for it, marked `loomrt.result = i`, with the
      result's attributes), and the function returns nothing;
    * each op that produces a new value writes into a `loomrt.alloc`
      (category from the op's `loom.phase` attribute: `activation` when
      absent, else `gradient`, `recompute` or `optimizer`), or directly into the result
      buffer when its value is returned;
    * chains of elementwise ops fuse into one `loomrt.kernel`: an
      elementwise op whose result has a single use, by another elementwise op
      of the same shape, is computed inside its user's loop; `broadcast`s
      and splat `constant`s feeding the chain are read in the loop (strides,
      scalars) instead of being materialised;
    * `reshape` is a `loomrt.view` (no copy); `transpose`, `slice`,
      materialised `broadcast`, `concat` and `split` are `loomrt.copy`s;
      `iota`, `reduce_*` are generated loops (`loomrt.iota`,
      `loomrt.reduce`);
    * `dot_general` is a `loomrt.gemm` when its operands are laid out as
      batch, free and contracting dimensions (either order, which BLAS
      transposes for free); other layouts are first copied into that order;
    * softmax, log_softmax, layer_norm, rms_norm, cross_entropy, gather and
      scatter_add are runtime-library calls;
    * `shard.all_reduce` (f32, one grid axis) is a copy into a new buffer,
      a `loomrt.all_reduce_start` on it (`group` = the grid's name) and a
      `loomrt.wait` right before the result's first use (at the end of the
      function when nothing reads it: a layer's last all-reduce that
      `loom-recompute`'s full policy replays);
    * `shard.recv` (one grid axis, a static `source`, `loom.tag = N`) is a
      `loomrt.recv_start` into the result's buffer (`peer` = the source's
      index on the grid axis) and a `wait` before the first use; its operand
      only gives the type and gets no buffer; a receive nobody reads is an
      error;
    * `shard.send` (the same, `destination`; its result must be unused) is
      a copy of the operand into its own buffer (the operand may be
      overwritten while the transfer runs), a `loomrt.send_start` on it and
      a `wait` at the end of the function, which `loom-memory-plan` keeps
      the buffer live for.

    Every compute op it creates carries `origin`, what it computes: the
    source op's name without the dialect (`add+gelu` for a fused group),
    prefixed `recompute.` for a forward op that `loom-recompute` replays;
    `--trace` spans are named after it.

    Shapes must be static (run `loom-shape-inference` first); element types
    are f32, i64, i32 and i1. Anything else is an error at the op.
  }];
  let options = [
    ListOption<"function", "function", "std::string",
               "The functions to lower (default: the `_step` function or the only one)">,
  ];
  let dependentDialects = ["::mlir::loomrt::LoomRTDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif // LOOM_CONVERSION_LOOMTOLOOMRT_PASSES_TD

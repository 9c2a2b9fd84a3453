//===- Passes.td - StableHLO to loom conversion ------------*- tablegen -*-===//

#ifndef LOOM_CONVERSION_STABLEHLOTOLOOM_PASSES_TD
#define LOOM_CONVERSION_STABLEHLOTOLOOM_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertStableHLOToLoom : Pass<"convert-stablehlo-to-loom", "ModuleOp"> {
  let summary = "Rewrite Loom's StableHLO import ops to the loom dialect";
  let description = [{
    Rewrites every op of the `stablehlo`, `chlo` and `sdy` import dialects
    to loom ops, one pattern per op family, after unrolling loops:

    * `while` loops whose trip count is known at import (JAX's `fori_loop`
      and `scan` with constant bounds, their gradients, Flax's `nn.scan`
      over stacked layers) are unrolled first, inner loops first: the
      loop-carried integer tensors known at each iteration (counters, and
      the small index arrays JAX's gradients save in one loop and read in
      the next) are evaluated at import (arithmetic, logic, compare,
      select, clamp, convert and data movement of integer tensors of up to
      4096 elements) and become constants, and the body is copied once per
      iteration (at most 200000 ops in all). A loop whose condition is not
      known at import is unsupported;
    * `dynamic_slice` and `dynamic_update_slice` at start indices known at
      import (constants, or counters of unrolled loops) become a `slice`,
      and the update padded to the operand's shape and `select`ed where it
      lands; each start is clamped as StableHLO clamps it. Indices computed
      at run time are unsupported;

    * elementwise ops map one to one (`logistic` to `sigmoid`, `power` of
      floats to `pow`, `negate` to `neg`, `chlo.erf_inv` to `erf_inv`,
      ...); `log_plus_one` becomes
      `log(x + 1)`, `exponential_minus_one` `exp(x) - 1`, `chlo.erfc`
      `1 - erf(x)` (these lose the accuracy of the fused forms near 0 and,
      for erfc, for large x), `chlo.square` `x * x`; on `i1`, `add`/`or`/
      `maximum`, `multiply`/`and`/`minimum`, `xor`, `not` and ordering
      comparisons (false < true) become `select`/`compare`; `clamp` becomes
      `max` then `min`; 0-d predicates and clamp bounds are broadcast;
    * `broadcast_in_dim` becomes `broadcast` (preceded by a `transpose` when
      its `dims` are not increasing), `transpose`, `reshape`, `slice`,
      `concatenate`, `iota`, `constant`, `convert`, `select` and `compare`
      map directly (`compare` of integers needs `SIGNED` or no comparison
      type; `TOTALORDER` is unsupported);
    * `dot_general` and `dot` become `dot_general`; operands narrower than
      the result (`bf16 x bf16 -> f32`, `i32 -> i64`) are converted first;
      an `algorithm` of one component per operand
      and f32 accumulation is applied as its spec says: f32 or tf32
      operand precision computes in f32 (at least as precise as asked),
      bf16 rounds that operand through bf16 first (XLA's CPU backend
      ignores bf16 algorithms and computes in f32; GPUs round); other
      algorithms are unsupported;
    * `reduce` whose body reduces each input on its own with an `add`,
      `multiply`, `maximum` or `minimum` becomes `reduce_sum` or
      `reduce_max` per input (`minimum` as `-max(-x)` for floats,
      `-1 - max(-1 - x)` for integers; `multiply` as products of slices of
      the reduced dimensions moved last and flattened, in order up to 32
      elements, by halving beyond); on `i1`, `or`/`maximum` and
      `and`/`minimum`/`multiply` bodies become `reduce_max` of the values as
      `i32`; an init value that is not the identity (0, 1, the lowest value,
      the highest value, false, true) is combined with the result
      explicitly;
    * `reduce` of values and indices with the body `jnp.argmax`/`argmin`
      lower to (the first extremal element, a NaN counting as the extremum)
      becomes `reduce_max` of the values (negated for argmin), a comparison
      with it, and the smallest index where it holds; the values' init must
      be the identity;
    * `reduce_window` of one input with such a body (JAX's
      `cumsum`/`cummax`/`cumprod` and pooling, dilated or not) pads with
      the init value (base dilations as interior padding), then reduces
      each window (its elements window-dilation apart): float sums over windows of at most 32
      elements as one strided slice per window element added in row-major
      window order (XLA's order, so the sums round as XLA's do), the rest by
      doubling along each dimension (windows of 1, 2, 4, ... elements
      combined: O(log w) ops) and a strided slice;
    * `select_and_scatter` without padding, with a select body that is one
      `compare` of its arguments (JAX's `max_pool` gradient: `GE`) and a
      reduce-like scatter body, selects by folding the window's elements
      (strided slices of the operand) in row-major order with that
      comparison, as the body folds, keeping the selected window position;
      then, per window position, the sources of the windows that selected
      it are padded back onto the operand's grid and combined into the
      init-filled result there (windows of at most 64 elements);
    * `pad` becomes concatenations with the broadcast padding value (edges;
      interior padding as a reshape to `[n, 1]`, a concatenation and a
      slice) and slices (negative edges);
    * `sine` and `cosine` become `sin` and `cos`;
    * `reduce_precision` to a format the element type fits in (JAX's
      `e11m52` of f32) forwards its operand, to `e8m7` of f32 becomes a
      round trip through bf16; other formats are unsupported;
    * `gather` in embedding form (one indexed operand dimension, collapsed,
      single elements of the batching dimensions, whole slices of the
      others) becomes `gather`, with the indices clamped into range as
      StableHLO specifies, and a `transpose` when the result dimensions are
      ordered differently. With batching dimensions (JAX's
      `take_along_axis`, as in optax's integer-label cross-entropy) the
      operand's batching and indexed dimensions are moved first and
      flattened, and each index moves to its row of the flattened operand
      (iotas along the indices' batching dimensions);
    * `scatter` in embedding-gradient form (one operand and update, an
      `add` body, one index per index vector in a trailing dimension of
      size 1, inserted into one operand dimension, whole slices of the
      others as the trailing update dimensions) becomes `scatter_add`
      (after a `transpose` of the updates when the axis is not 0); with
      batching dimensions (the transpose of `take_along_axis`) it adds into
      the operand flattened as the gather's and reshapes back; StableHLO
      skips out-of-bounds indices, `scatter_add` rejects them, so the
      indices must be in range;
    * any other `gather`, and any other `scatter` of one operand with an
      `add` body, of static shape (several indexed dimensions, partial
      windows, with or without batching dimensions: `x[i, j]`, `vmap` of
      `dynamic_slice`, and their gradients) reads or adds single elements:
      the row-major position in the operand of every result (update)
      element is computed from the index vectors and iotas, and the op
      becomes a `gather` (`scatter_add`) along axis 0 of the operand
      reshaped to one dimension. A gather clamps each start so its window
      fits; a scatter drops the updates of windows that do not fit (they
      are zeroed and sent to position 0), as StableHLO specifies;
    * `is_finite(x)` becomes `abs(x) < inf`; `sign(x)` becomes selects
      (`x * 0` where x is neither positive nor negative: 0 and NaN);
    * `optimization_barrier` forwards its operands;
    * `custom_call @Sharding` forwards its operand and keeps the hint: its
      `mhlo.sharding` string is attached, as the discardable attribute
      `mhlo.sharding`, to the op defining the operand (or, for a function
      argument, as the argument attribute `mhlo.sharding`, the attribute JAX
      itself puts on arguments); the first hint of a value wins, a
      different later one is dropped with a warning;
    * `sdy.sharding_constraint` (Shardy) likewise forwards its operand and
      keeps its sharding as `sdy.sharding = #sdy.sharding<...>` (the form of
      JAX's argument shardings, which stay, as do `sdy.mesh` ops);
    * `custom_call @check.expect_eq`/`expect_almost_eq`/`expect_close`
      become the `check` ops of the same name; `check` ops stay;
    * other custom_call targets, ops Loom's import dialects do not define
      (`sort`, `case`, ...), other `scatter` forms,
      other `reduce`/`reduce_window` bodies, `reduce_window` of several
      inputs, and other `sdy` ops are unsupported.

    Element types the loom dialect lacks (`f64`, `i8`, `ui32`, complex, ...)
    are unsupported. When anything cannot be converted the pass reports one
    error per unsupported op name, at its first use, with the reason (notes
    give further distinct reasons), then a summary error listing all of
    them, and fails.
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect",
                           "::mlir::loom::shlo::check::CheckDialect"];
}

def NameStableHLODimensions
    : Pass<"name-stablehlo-dimensions", "ModuleOp"> {
  let summary = "Record JAX's dimension-variable names on the entry's "
                "arguments, before inlining loses them";
  let description = [{
    A shape-polymorphic JAX export's public `@main` reads each dimension
    variable with `get_dimension_size` of an argument and passes it to the
    private function it calls, whose parameter names it
    (`jax.global_constant = "s"`). Inlining drops that function, so this
    pass, run before inlining, writes the names on `@main`'s arguments:
    `loom.dim_names = ["b", "s"]` (one string per dimension, empty for one
    no variable names). `refine-stablehlo-shapes` binds the named
    dimensions by name (`--dim s=128`) and names them in its errors. A
    module without such calls is left as it is.
  }];
}

def RefineStableHLOShapes : Pass<"refine-stablehlo-shapes", "ModuleOp"> {
  let summary = "Bind the batch of a shape-polymorphic StableHLO module and "
                "make every shape static";
  let description = [{
    A JAX export with a symbolic batch (`jax.export.symbolic_shape`) has
    arguments like `tensor<?x8xf32>`, computes shapes at run time
    (`get_dimension_size`, `dynamic_broadcast_in_dim`, `dynamic_reshape`,
    `dynamic_iota`) and checks them (`custom_call @shape_assertion`). Run
    after inlining, this pass binds the dimensions of the public
    function's dynamic arguments: those `name-stablehlo-dimensions` named
    to the sizes `dims` gives their names (`NAME=N`), the remaining
    dimensions 0 to `batch`. It then walks the ops in order: the
    computed shapes are evaluated (the importer's integer evaluation), the
    dynamic ops become their static forms, each assertion is checked
    (a failing one is an error with JAX's message) and erased, and every
    other op's dynamic result shape is inferred from its operands
    (elementwise ops, `broadcast_in_dim`, `dot_general`, `reduce`,
    `transpose`, `concatenate`, `pad`, `gather`, `select_and_scatter`,
    `optimization_barrier`, `while`, sharding hints). A module without
    dynamic shapes is left as it is. Errors: a dynamic dimension nothing
    binds (naming its variable and the option to give), a `dims` entry
    that is malformed or names no variable of the module, and an op whose
    shape cannot be inferred, named.
  }];
  let options = [
    Option<"batch", "batch", "int64_t", "0",
           "Rows bound to dimension 0 of the dynamic arguments">,
    ListOption<"dims", "dims", "std::string",
               "Sizes of JAX's dimension variables, as NAME=N">,
  ];
}

def RaiseStableHLOCrossEntropy
    : Pass<"raise-stablehlo-cross-entropy", "ModuleOp"> {
  let summary = "Recognise softmax cross-entropy spelled out in StableHLO "
                "(optax's integer-label loss) as loom.cross_entropy";
  let description = [{
    JAX has no cross-entropy op: optax's
    `softmax_cross_entropy_with_integer_labels(logits, labels)` lowers to a
    logsumexp over the class (last) dimension minus a `take_along_axis`
    gather of one logit per row. This pass rewrites

    ```
    log(|reduce_add(exp(logits - shift))|) + shift  -  take(logits, idx)
    log(|reduce_add(exp(logits - shift))|)          -  take(logits - shift, idx)
    ```

    (the `abs` optional; `shift` any per-row value broadcast along the
    classes, JAX's guarded row max; `take` a gather whose batching
    dimensions are all the leading ones and which takes one class per row,
    followed by unit reshapes, `x[..., 0]` gathers and JAX's fill-mode
    selects of NaN) into `loom.cross_entropy %logits, %idx reduction = none`
    on the gather's indices reshaped to the rows' shape (JAX has already
    wrapped negative labels). The spelled-out ops nothing else uses are
    erased. Run after inlining and before `convert-stablehlo-to-loom`, so
    that `loom-vocab-parallel` can cut a tied or untied LM head before the
    loss, as it does for the ONNX exports' `SoftmaxCrossEntropyLoss`.

    Difference: JAX returns NaN for a label outside `[-C, C)` (its fill
    mode); `loom.cross_entropy` requires labels in range: the runtime stops
    with an error naming the label and its sample.
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect"];
}

#endif // LOOM_CONVERSION_STABLEHLOTOLOOM_PASSES_TD

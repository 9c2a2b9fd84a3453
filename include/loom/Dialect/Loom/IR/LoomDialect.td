//===- LoomDialect.td - The loom graph dialect -------------*- tablegen -*-===//
//
// The `loom` dialect holds a training graph at the level a user thinks of it:
// tensors, layers, losses. Parameters are function arguments marked
// `loom.param`; their values never enter the IR.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMDIALECT_TD
#define LOOM_DIALECT_LOOM_IR_LOOMDIALECT_TD

include "mlir/IR/OpBase.td"

def Loom_Dialect : Dialect {
  let name = "loom";
  let cppNamespace = "::mlir::loom";
  let summary = "Graph-level ops of a deep-learning training step";
  let description = [{
    The `loom` dialect describes the forward graph of a model with its loss
    (and, once the training passes exist, the whole training step). Ops work on
    ranked tensors of `f32`, `bf16`, `f16`, `i64`, `i32` and `i1`. Shapes are
    static once `loom-shape-inference` has run; before that, result types may
    be less precise than what can be inferred from the operands (a dimension
    may be `?`), and the pass refines them.

    Conventions:
    * Elementwise ops take operands of one shape; broadcasting is explicit
      (`loom.broadcast`), as in StableHLO. Importers insert it.
    * Dimension attributes are non-negative and in range; importers normalise
      negative ONNX axes.
    * Trainable parameters are function arguments with the unit attribute
      `loom.param`. Names from the source model are kept in the `loom.name`
      string attribute on arguments and results.
    * Training functions (docs/training.md) mark optimizer state arguments
      with the unit attribute `loom.state`, gradient results with
      `loom.grad_of = N : i64` and results that replace argument `N` with
      `loom.updates = N : i64`.

    Every op implements `CostInterface` (flops and bytes moved), ops with a
    shape rule implement `InferTypeOpInterface`, ops whose sharding rule is
    known implement upstream MLIR's `shard::ShardingInterface`, and ops a
    Megatron block can go through implement `TensorPartitionInterface`.
  }];
  let hasConstantMaterializer = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  // The contract between passes: every discardable attribute a Loom pass
  // reads or writes, with a generated helper (`LoomDialect::StageAttrHelper`
  // and so on: getNameStr(), getAttr(op), setAttr(op, value)). No pass spells
  // a "loom.*" name itself.
  let discardableAttrs = (ins
    // Function arguments and results (see the description above).
    /// Unit, on an argument: a trainable parameter.
    "::mlir::UnitAttr":$param,
    /// String, on an argument or result: its name in the source model.
    "::mlir::StringAttr":$name,
    /// Unit, on an argument: optimizer state (a moment, the step counter).
    "::mlir::UnitAttr":$state,
    /// i64, on a result: the new value of the argument with this index.
    "::mlir::IntegerAttr":$updates,
    /// i64, on a `loom.state` argument: the bf16 rounding of the parameter
    /// argument with this index (`loom-weight-shadows`). Derived state: the
    /// runtime writes it from the parameter before the first step and after
    /// every load, and checkpoints leave it out.
    "::mlir::IntegerAttr":$shadow_of,
    /// i64, on a result: the gradient of the loss with respect to the
    /// argument with this index.
    "::mlir::IntegerAttr":$grad_of,
    /// On an argument: one rank's slice of a tensor-parallel parameter,
    /// `#loom.shard<dim = d, parts = T[, groups = G][, padded = P]>` (see
    /// `ShardAttr`, `loom-tensor-parallel` and `loom-vocab-parallel`).
    "::mlir::loom::ShardAttr":$shard,
    /// Unit, on an argument of a pipeline stage: a parameter that an earlier
    /// stage also holds (a tied embedding); the global gradient norm counts
    /// it in that stage only.
    "::mlir::UnitAttr":$pipeline_copy,
    /// Array of strings, on an argument of an imported StableHLO entry
    /// (`name-stablehlo-dimensions`, until `refine-stablehlo-shapes` binds
    /// them): JAX's dimension-variable name of each dimension, empty for
    /// none.
    "::mlir::ArrayAttr":$dim_names,
    // Ops.
    /// Unit, on a `shard.all_reduce` with reduction `max` or `min`: its
    /// result is a constant for the gradient (the global maximum of the
    /// logits of a vocabulary-parallel cross-entropy).
    "::mlir::UnitAttr":$stop_gradient,
    /// Unit, on a data-parallel `shard.all_reduce` (sum) of a gradient that
    /// only an embedding's lookups touch (loom-data-parallel): the runtime
    /// exchanges only the rows (dimension 0) that are nonzero on some rank.
    "::mlir::UnitAttr":$row_sparse,
    /// i64, on an op, a stage function or a call: its pipeline stage.
    "::mlir::IntegerAttr":$stage,
    /// i64, on a partitioned function: its number of stages.
    "::mlir::IntegerAttr":$stages,
    /// i64, on a pipeline schedule's step: micro-batches per step.
    "::mlir::IntegerAttr":$microbatches,
    /// String, on a pipeline schedule's step: `1f1b` or `gpipe`.
    "::mlir::StringAttr":$schedule,
    /// String, on an op of a training step: `backward`, `recompute` (a
    /// forward op replayed by `loom-recompute`) or `optimizer` (the memory
    /// plan's categories; forward ops carry none).
    "::mlir::StringAttr":$phase,
    /// i64, on an op of a forward graph: the layer (transformer block) it
    /// belongs to, from `loom-mark-layers`; ops outside every layer (the
    /// embedding, the head, the loss) carry none.
    "::mlir::IntegerAttr":$layer,
    /// i64, on a forward op `loom-overlap-split` cloned: the sub-batch it
    /// computes (0 .. K-1).
    "::mlir::IntegerAttr":$sub_batch,
    /// Dictionary, on a gradient function `loom-recompute` changed:
    /// `{policy, ops, collectives, flops}` of the recomputed ops.
    "::mlir::DictionaryAttr":$recompute,
    /// i64, on a point-to-point `shard.send` / `shard.recv`: the message tag.
    "::mlir::IntegerAttr":$tag,
    /// Unit, on an elementwise op (set by `loom-fuse-elementwise`): computed
    /// inside the loop of its one user, an elementwise op of the same shape.
    /// An elementwise op without it and the marked ops that feed it are one
    /// fusion group, one `loomrt.kernel` at the group's last op.
    "::mlir::UnitAttr":$fused
  );
  // Checks `loom.fused` where it sits (the other op attributes are checked
  // by the passes that read them).
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    // Short names for the attributes on function arguments and results
    // (generated helpers work on ops; these are for getArgAttr and friends).
    static constexpr ::llvm::StringLiteral getParamAttrName() {
      return ParamAttrHelper::getNameStr();
    }
    static constexpr ::llvm::StringLiteral getNameAttrName() {
      return NameAttrHelper::getNameStr();
    }
    static constexpr ::llvm::StringLiteral getStateAttrName() {
      return StateAttrHelper::getNameStr();
    }
    static constexpr ::llvm::StringLiteral getUpdatesAttrName() {
      return UpdatesAttrHelper::getNameStr();
    }
    static constexpr ::llvm::StringLiteral getShadowOfAttrName() {
      return ShadowOfAttrHelper::getNameStr();
    }
    static constexpr ::llvm::StringLiteral getGradOfAttrName() {
      return GradOfAttrHelper::getNameStr();
    }
    static constexpr ::llvm::StringLiteral getShardAttrName() {
      return ShardAttrHelper::getNameStr();
    }
    static constexpr ::llvm::StringLiteral getPipelineCopyAttrName() {
      return PipelineCopyAttrHelper::getNameStr();
    }
    static constexpr ::llvm::StringLiteral getDimNamesAttrName() {
      return DimNamesAttrHelper::getNameStr();
    }
    static constexpr ::llvm::StringLiteral getStopGradientAttrName() {
      return StopGradientAttrHelper::getNameStr();
    }
    static constexpr ::llvm::StringLiteral getRowSparseAttrName() {
      return RowSparseAttrHelper::getNameStr();
    }
  }];
}

#endif // LOOM_DIALECT_LOOM_IR_LOOMDIALECT_TD

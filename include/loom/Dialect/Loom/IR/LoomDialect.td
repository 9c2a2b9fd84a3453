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
    shape rule implement `InferTypeOpInterface`, and ops whose sharding rule is
    known implement upstream MLIR's `shard::ShardingInterface`.
  }];
  let hasConstantMaterializer = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Unit attribute on a function argument: a trainable parameter.
    static constexpr ::llvm::StringLiteral getParamAttrName() {
      return ::llvm::StringLiteral("loom.param");
    }
    /// String attribute on a function argument or result: the name the value
    /// has in the source model (an ONNX input/output or initializer name).
    static constexpr ::llvm::StringLiteral getNameAttrName() {
      return ::llvm::StringLiteral("loom.name");
    }
    /// Unit attribute on a function argument: optimizer state (a moment
    /// estimate, the step counter), see docs/training.md.
    static constexpr ::llvm::StringLiteral getStateAttrName() {
      return ::llvm::StringLiteral("loom.state");
    }
    /// Integer attribute on a function result: the result is the new value of
    /// the argument with this index (updated in place by the runtime).
    static constexpr ::llvm::StringLiteral getUpdatesAttrName() {
      return ::llvm::StringLiteral("loom.updates");
    }
    /// Integer attribute on a function result: the result is the gradient of
    /// the loss with respect to the argument with this index.
    static constexpr ::llvm::StringLiteral getGradOfAttrName() {
      return ::llvm::StringLiteral("loom.grad_of");
    }
    /// Dictionary attribute on a function argument `{dim = d, parts = T,
    /// groups = G, padded = P}` (i64; `groups` optional, default 1; `padded`
    /// optional, default the full size): the argument is one rank's slice of
    /// a tensor-parallel parameter. Dimension `d` of the full tensor,
    /// extended with zeros to `P` (a vocabulary padded to a multiple of
    /// `T`), is `G` equal blocks; rank `r` holds part `r` of `T` equal parts
    /// of each block, concatenated (see `loom-tensor-parallel`).
    static constexpr ::llvm::StringLiteral getShardAttrName() {
      return ::llvm::StringLiteral("loom.shard");
    }
    /// Unit attribute on a function argument of a pipeline stage: a
    /// parameter that an earlier stage also holds (a tied embedding); the
    /// global gradient norm counts it in that stage only.
    static constexpr ::llvm::StringLiteral getPipelineCopyAttrName() {
      return ::llvm::StringLiteral("loom.pipeline_copy");
    }
    /// Unit attribute on a `shard.all_reduce` with reduction `max` or `min`:
    /// its result is a constant for the gradient (no gradient flows into
    /// its operand). loom-tensor-parallel sets it on the global maximum of
    /// the logits of a vocabulary-parallel cross-entropy, a shift that the
    /// loss does not depend on.
    static constexpr ::llvm::StringLiteral getStopGradientAttrName() {
      return ::llvm::StringLiteral("loom.stop_gradient");
    }
  }];
}

#endif // LOOM_DIALECT_LOOM_IR_LOOMDIALECT_TD

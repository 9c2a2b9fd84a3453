//===- LoomAttrs.td - Attributes of the loom dialect -------*- tablegen -*-===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMATTRS_TD
#define LOOM_DIALECT_LOOM_IR_LOOMATTRS_TD

include "loom/Dialect/Loom/IR/LoomDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Loom_ComparisonDirection : I32EnumAttr<"ComparisonDirection",
    "direction of an elementwise comparison", [
      I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
      I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"le", 3>,
      I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>]> {
  let cppNamespace = "::mlir::loom";
}

def Loom_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "formula used by gelu", [
      I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"tanh", 1>]> {
  let cppNamespace = "::mlir::loom";
}

def Loom_LossReduction : I32EnumAttr<"LossReduction",
    "how per-sample losses are combined", [
      I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"mean", 1>,
      I32EnumAttrCase<"sum", 2>]> {
  let cppNamespace = "::mlir::loom";
}

def Loom_ShardAttr : AttrDef<Loom_Dialect, "Shard"> {
  let mnemonic = "shard";
  let summary = "one rank's slice of a tensor-parallel parameter";
  let description = [{
    The value of `loom.shard` on a function argument: the argument is one
    rank's slice of a parameter cut over the `parts` tensor-parallel ranks.
    Dimension `dim` of the full tensor, zero-extended to `padded` rows when
    `padded` is given (a vocabulary padded to a multiple of `parts`), is
    `groups` equal blocks (a fused projection); rank `r` holds part `r` of
    `parts` equal parts of every block, concatenated. `groups` (default 1)
    and `padded` (default 0: no padding) are printed only when they differ
    from their defaults.

    ```mlir
    %w: tensor<64x96xf32> {loom.param, loom.shard = #loom.shard<dim = 1, parts = 2, groups = 3>}
    %wte: tensor<13x32xf32> {loom.param, loom.shard = #loom.shard<dim = 0, parts = 4, padded = 52>}
    ```

    The attribute checks its fields on its own (`dim >= 0`, `parts >= 1`,
    `groups >= 1`, `padded >= 0`, no padding of grouped blocks); the
    dialect checks it against the argument it marks
    (`verifyArgumentType`: `dim` is a dimension of the argument, and
    `padded` is `parts` times the slice's static size of dimension `dim`).
    Written by `loom-tensor-parallel` and `loom-vocab-parallel`; read by the
    optimizer (gradient norms of sliced parameters), the weight slicing of
    `loomc` (`collectParameterShards`) and the plan.
  }];
  let parameters = (ins
    AttrParameter<"int64_t", "the dimension that is cut">:$dim,
    AttrParameter<"int64_t", "the number of ranks (parts per block)">:$parts,
    DefaultValuedParameter<"int64_t", "1",
                           "equal blocks of the dimension, each cut">:$groups,
    DefaultValuedParameter<"int64_t", "0",
                           "the zero-padded size of the dimension (0: none)">:$padded);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Checks the slice against the type of the argument it marks (a ranked
    /// tensor or, after bufferization, a memref): `dim` is one of its
    /// dimensions and, when padded, that dimension is static and `padded`
    /// is `parts` times its size. Reports through `emitError`.
    ::llvm::LogicalResult verifyArgumentType(
        ::mlir::Type type,
        ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError) const;
  }];
}

#endif // LOOM_DIALECT_LOOM_IR_LOOMATTRS_TD

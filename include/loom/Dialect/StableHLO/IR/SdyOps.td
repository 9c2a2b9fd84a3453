//===- SdyOps.td - Loom's Shardy (sdy) import dialect ------*- tablegen -*-===//
//
// What JAX emits for shardings with the Shardy partitioner: `sdy.mesh`
// definitions, `#sdy.sharding<...>` argument and result attributes, and
// `sdy.sharding_constraint` (jax.lax.with_sharding_constraint). Loom keeps
// them as hints for its own planner: attributes stay opaque, the mesh stays,
// constraints become `sdy.sharding` hints (see convert-stablehlo-to-loom).
// Other sdy ops parse (like unknown stablehlo ops) and are reported.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_STABLEHLO_IR_SDYOPS_TD
#define LOOM_DIALECT_STABLEHLO_IR_SDYOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Sdy_Dialect : Dialect {
  let name = "sdy";
  let cppNamespace = "::mlir::loom::shlo::sdy";
  let summary = "the Shardy subset Loom imports (input only)";
  let extraClassDeclaration = [{
    /// Parses ops this dialect does not define.
    std::optional<ParseOpHook>
    getParseOperationHook(::llvm::StringRef opName) const override;

    /// Every `#sdy...` attribute is kept opaque.
    ::mlir::Attribute parseAttribute(::mlir::DialectAsmParser &parser,
                                     ::mlir::Type type) const override;
  }];
}

def Sdy_MeshOp : Op<Sdy_Dialect, "mesh"> {
  let summary = "a named device mesh (kept as written)";
  let description = [{
    ```mlir
    sdy.mesh @mesh = <["x"=2, "y"=4]>
    ```
  }];
  let arguments = (ins StrAttr:$sym_name, StrAttr:$mesh);
  let assemblyFormat =
      "custom<SymbolName>($sym_name) `=` custom<Balanced>($mesh) attr-dict";
}

def Sdy_ShardingConstraintOp : Op<Sdy_Dialect, "sharding_constraint",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "a sharding the value must have (kept as written)";
  let description = [{
    ```mlir
    %y = sdy.sharding_constraint %x <@mesh, [{"x"}, {} ]> : tensor<8x6xf32>
    ```
  }];
  let arguments = (ins AnyTensor:$input, StrAttr:$sharding);
  let results = (outs AnyTensor:$result);
  let assemblyFormat =
      "$input custom<Balanced>($sharding) attr-dict `:` type($result)";
}

#endif // LOOM_DIALECT_STABLEHLO_IR_SDYOPS_TD

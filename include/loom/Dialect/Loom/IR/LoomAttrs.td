//===- LoomAttrs.td - Attributes of the loom dialect -------*- tablegen -*-===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMATTRS_TD
#define LOOM_DIALECT_LOOM_IR_LOOMATTRS_TD

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

#endif // LOOM_DIALECT_LOOM_IR_LOOMATTRS_TD

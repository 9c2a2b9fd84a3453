//===- CHLOOps.td - Loom's CHLO import dialect --------------*- tablegen -*-===//
//
// The ops of StableHLO's "client HLO" dialect that JAX emits for the
// functions of a training step: `jax.lax.erf`, `jax.lax.erfc` (in
// `jax.nn.gelu(approximate=False)`) and `chlo.square` (`x ** 2`, and in the
// gradient of gelu). Like `stablehlo`, the dialect parses ops it does not
// define, so that the importer can report them all.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_STABLEHLO_IR_CHLOOPS_TD
#define LOOM_DIALECT_STABLEHLO_IR_CHLOOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def CHLO_Dialect : Dialect {
  let name = "chlo";
  let cppNamespace = "::mlir::loom::shlo::chlo";
  let summary = "the CHLO subset Loom imports (input only)";
  let extraClassDeclaration = [{
    /// Parses ops this dialect does not define.
    std::optional<ParseOpHook>
    getParseOperationHook(::llvm::StringRef opName) const override;

    /// CHLO attributes and types (of ops Loom does not define) are kept
    /// opaque.
    ::mlir::Attribute parseAttribute(::mlir::DialectAsmParser &parser,
                                     ::mlir::Type type) const override;
    ::mlir::Type parseType(::mlir::DialectAsmParser &parser) const override;
  }];
}

class CHLO_UnaryOp<string mnemonic, string doc>
    : Op<CHLO_Dialect, mnemonic, [Pure]> {
  let summary = doc;
  let arguments = (ins AnyTensor:$operand);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
}

def CHLO_ErfOp : CHLO_UnaryOp<"erf", "Gauss error function">;
def CHLO_ErfInvOp : CHLO_UnaryOp<"erf_inv", "inverse error function">;
def CHLO_ErfcOp : CHLO_UnaryOp<"erfc", "complementary error function 1 - erf(x)">;
def CHLO_SquareOp : CHLO_UnaryOp<"square", "x * x">;

#endif // LOOM_DIALECT_STABLEHLO_IR_CHLOOPS_TD

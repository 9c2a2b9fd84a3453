//===- CheckOps.td - Checks of StableHLO's test data --------*- tablegen -*-===//
//
// The `check` ops of the StableHLO interpreter tests, and the targets of
// `stablehlo.custom_call @check.*` in JAX-generated test data. The importer
// keeps them in its output (they compare tensors of the converted program);
// an interpreter executes them.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_STABLEHLO_IR_CHECKOPS_TD
#define LOOM_DIALECT_STABLEHLO_IR_CHECKOPS_TD

include "mlir/IR/OpBase.td"

def Check_Dialect : Dialect {
  let name = "check";
  let cppNamespace = "::mlir::loom::shlo::check";
  let summary = "result checks of StableHLO test data";
}

// The ops have no declared memory effects: they are observable and stay.
class Check_Op<string mnemonic, list<Trait> traits = []>
    : Op<Check_Dialect, mnemonic, traits>;

def Check_ExpectEqOp : Check_Op<"expect_eq"> {
  let summary = "the tensors are equal (bitwise for floats)";
  let arguments = (ins AnyTensor:$lhs, AnyTensor:$rhs);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
}

def Check_ExpectAlmostEqOp : Check_Op<"expect_almost_eq"> {
  let summary = "the tensors are equal within `tolerance`";
  let arguments = (ins AnyTensor:$lhs, AnyTensor:$rhs,
                       OptionalAttr<F64Attr>:$tolerance);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
}

def Check_ExpectCloseOp : Check_Op<"expect_close"> {
  let summary = "the tensors differ by at most `max_ulp_difference` ulps";
  let arguments = (ins AnyTensor:$actual, AnyTensor:$expected,
                       OptionalAttr<I64Attr>:$min_ulp_difference,
                       OptionalAttr<I64Attr>:$max_ulp_difference);
  let assemblyFormat = "$actual `,` $expected attr-dict `:` type($actual) `,` "
                       "type($expected)";
}

def Check_ExpectEqConstOp : Check_Op<"expect_eq_const",
    [AllTypesMatch<["lhs", "value"]>]> {
  let summary = "the tensor equals a constant";
  let arguments = (ins AnyTensor:$lhs, ElementsAttr:$value);
  let assemblyFormat = "$lhs `,` $value attr-dict";
}

def Check_ExpectAlmostEqConstOp : Check_Op<"expect_almost_eq_const",
    [AllTypesMatch<["lhs", "value"]>]> {
  let summary = "the tensor equals a constant within `tolerance`";
  let arguments = (ins AnyTensor:$lhs, ElementsAttr:$value,
                       OptionalAttr<F64Attr>:$tolerance);
  let assemblyFormat = "$lhs `,` $value attr-dict";
}

#endif // LOOM_DIALECT_STABLEHLO_IR_CHECKOPS_TD

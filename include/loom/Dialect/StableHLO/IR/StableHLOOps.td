//===- StableHLOOps.td - Loom's StableHLO import dialect ----*- tablegen -*-===//
//
// The subset of StableHLO that Loom's importer reads. StableHLO is not
// packaged for Debian, so Loom defines the ops it needs itself: they parse
// the pretty and the generic forms JAX and the StableHLO repository print,
// and `convert-stablehlo-to-loom` rewrites them to the loom dialect. They
// are an input format only: nothing in Loom produces them, and they verify
// no more than parsing and the conversion need.
//
// The dialect accepts ops it does not define (pretty form `operands
// (, key = value)* attr-dict : types` or the generic form), and attributes
// and types it does not define (kept opaque), so that the importer can
// report every op of a module it cannot convert at once, instead of
// stopping at the first parse error.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_STABLEHLO_IR_STABLEHLOOPS_TD
#define LOOM_DIALECT_STABLEHLO_IR_STABLEHLOOPS_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def StableHLO_Dialect : Dialect {
  let name = "stablehlo";
  let cppNamespace = "::mlir::loom::shlo";
  let summary = "the StableHLO subset Loom imports (input only)";
  let useDefaultAttributePrinterParser = 0;
  let extraClassDeclaration = [{
    /// Parses ops this dialect does not define (see the file comment).
    std::optional<ParseOpHook>
    getParseOperationHook(::llvm::StringRef opName) const override;

    /// The attributes below; others (`#stablehlo.conv<...>` of an op
    /// Loom does not define) are kept as opaque attributes, so that their op
    /// parses and is reported.
    ::mlir::Attribute parseAttribute(::mlir::DialectAsmParser &parser,
                                     ::mlir::Type type) const override;
    void printAttribute(::mlir::Attribute attr,
                        ::mlir::DialectAsmPrinter &printer) const override;

    /// Types (`!stablehlo.token`) are kept as opaque types: Loom converts no
    /// op that uses them.
    ::mlir::Type parseType(::mlir::DialectAsmParser &parser) const override;

  private:
    void registerAttributes();
  }];
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def StableHLO_ComparisonDirection : I32EnumAttr<"ComparisonDirection",
    "direction of stablehlo.compare", [
      I32EnumAttrCase<"EQ", 0>, I32EnumAttrCase<"NE", 1>,
      I32EnumAttrCase<"GE", 2>, I32EnumAttrCase<"GT", 3>,
      I32EnumAttrCase<"LE", 4>, I32EnumAttrCase<"LT", 5>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::loom::shlo";
}
// Generic form: `#stablehlo<comparison_direction LT>`; pretty form: `LT`.
def StableHLO_ComparisonDirectionAttr : EnumAttr<StableHLO_Dialect,
    StableHLO_ComparisonDirection, "comparison_direction">;

def StableHLO_ComparisonType : I32EnumAttr<"ComparisonType",
    "how stablehlo.compare orders its operands", [
      I32EnumAttrCase<"NOTYPE", 0>, I32EnumAttrCase<"FLOAT", 1>,
      I32EnumAttrCase<"TOTALORDER", 2>, I32EnumAttrCase<"SIGNED", 3>,
      I32EnumAttrCase<"UNSIGNED", 4>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::loom::shlo";
}
def StableHLO_ComparisonTypeAttr : EnumAttr<StableHLO_Dialect,
    StableHLO_ComparisonType, "comparison_type">;

def StableHLO_Precision : I32EnumAttr<"Precision",
    "precision of a contraction operand", [
      I32EnumAttrCase<"DEFAULT", 0>, I32EnumAttrCase<"HIGH", 1>,
      I32EnumAttrCase<"HIGHEST", 2>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::loom::shlo";
}
def StableHLO_PrecisionAttr : EnumAttr<StableHLO_Dialect, StableHLO_Precision,
    "precision">;
def StableHLO_PrecisionConfig : TypedArrayAttrBase<StableHLO_PrecisionAttr,
    "precision of each operand">;

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

class StableHLO_Attr<string name, string attrMnemonic>
    : AttrDef<StableHLO_Dialect, name> {
  let mnemonic = attrMnemonic;
  // `<key = value, ...>` in any order; lists are `[1, 2]`; empty lists
  // may be left out.
  let hasCustomAssemblyFormat = 1;
}

def StableHLO_GatherDimensionNumbers
    : StableHLO_Attr<"GatherDimensionNumbers", "gather"> {
  let summary = "dimension numbers of stablehlo.gather";
  let description = [{
    `#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0],
    operand_batching_dims = [], start_indices_batching_dims = [],
    start_index_map = [0], index_vector_dim = 1>`; `index_vector_dim`
    defaults to 0.
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t">:$offsetDims,
    ArrayRefParameter<"int64_t">:$collapsedSliceDims,
    ArrayRefParameter<"int64_t">:$operandBatchingDims,
    ArrayRefParameter<"int64_t">:$startIndicesBatchingDims,
    ArrayRefParameter<"int64_t">:$startIndexMap,
    "int64_t":$indexVectorDim);
}

def StableHLO_ScatterDimensionNumbers
    : StableHLO_Attr<"ScatterDimensionNumbers", "scatter"> {
  let summary = "dimension numbers of stablehlo.scatter";
  let description = [{
    `#stablehlo.scatter<update_window_dims = [2], inserted_window_dims =
    [0], input_batching_dims = [], scatter_indices_batching_dims = [],
    scatter_dims_to_operand_dims = [0], index_vector_dim = 2>`;
    `index_vector_dim` defaults to 0.
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t">:$updateWindowDims,
    ArrayRefParameter<"int64_t">:$insertedWindowDims,
    ArrayRefParameter<"int64_t">:$inputBatchingDims,
    ArrayRefParameter<"int64_t">:$scatterIndicesBatchingDims,
    ArrayRefParameter<"int64_t">:$scatterDimsToOperandDims,
    "int64_t":$indexVectorDim);
}

def StableHLO_DotDimensionNumbers
    : StableHLO_Attr<"DotDimensionNumbers", "dot"> {
  let summary = "dimension numbers of stablehlo.dot_general";
  let description = [{
    `#stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions
    = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions =
    [1]>`.
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t">:$lhsBatchingDimensions,
    ArrayRefParameter<"int64_t">:$rhsBatchingDimensions,
    ArrayRefParameter<"int64_t">:$lhsContractingDimensions,
    ArrayRefParameter<"int64_t">:$rhsContractingDimensions);
}

def StableHLO_DotAlgorithm : StableHLO_Attr<"DotAlgorithm", "dot_algorithm"> {
  let summary = "algorithm of stablehlo.dot_general (parsed, not converted)";
  let parameters = (ins
    "::mlir::Type":$lhsPrecisionType,
    "::mlir::Type":$rhsPrecisionType,
    "::mlir::Type":$accumulationType,
    "int64_t":$lhsComponentCount,
    "int64_t":$rhsComponentCount,
    "int64_t":$numPrimitiveOperations,
    "bool":$allowImpreciseAccumulation);
}

//===----------------------------------------------------------------------===//
// Op classes
//===----------------------------------------------------------------------===//

class StableHLO_Op<string mnemonic, list<Trait> traits = []>
    : Op<StableHLO_Dialect, mnemonic, traits>;

// `: T` when the operands and the result share one type, else a function
// type `: (T0, T1) -> R` (StableHLO prints both).
class StableHLO_UnaryOp<string mnemonic, string doc>
    : StableHLO_Op<mnemonic, [Pure]> {
  let summary = doc;
  let arguments = (ins AnyTensor:$operand);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$operand attr-dict `:` "
      "custom<SameOperandsAndResultType>(type($operand), type($result))";
}

class StableHLO_BinaryOp<string mnemonic, string doc>
    : StableHLO_Op<mnemonic, [Pure]> {
  let summary = doc;
  let arguments = (ins AnyTensor:$lhs, AnyTensor:$rhs);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` "
      "custom<SameOperandsAndResultType>(type($lhs), type($rhs), type($result))";
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

def StableHLO_AbsOp : StableHLO_UnaryOp<"abs", "absolute value">;
def StableHLO_NegOp : StableHLO_UnaryOp<"negate", "negation">;
def StableHLO_ExpOp : StableHLO_UnaryOp<"exponential", "e^x">;
def StableHLO_Expm1Op : StableHLO_UnaryOp<"exponential_minus_one", "e^x - 1">;
def StableHLO_LogOp : StableHLO_UnaryOp<"log", "natural logarithm">;
def StableHLO_Log1pOp : StableHLO_UnaryOp<"log_plus_one", "log(1 + x)">;
def StableHLO_TanhOp : StableHLO_UnaryOp<"tanh", "hyperbolic tangent">;
def StableHLO_SineOp : StableHLO_UnaryOp<"sine", "sin(x)">;
def StableHLO_CosineOp : StableHLO_UnaryOp<"cosine", "cos(x)">;
def StableHLO_LogisticOp : StableHLO_UnaryOp<"logistic", "1 / (1 + e^-x)">;
def StableHLO_SqrtOp : StableHLO_UnaryOp<"sqrt", "square root">;
def StableHLO_RsqrtOp : StableHLO_UnaryOp<"rsqrt", "1 / sqrt(x)">;
def StableHLO_NotOp : StableHLO_UnaryOp<"not", "logical or bitwise not">;
def StableHLO_SignOp : StableHLO_UnaryOp<"sign", "-1, 0 or 1 (NaN for NaN)">;
def StableHLO_ConvertOp : StableHLO_UnaryOp<"convert",
                                            "element type conversion">;

def StableHLO_ReducePrecisionOp : StableHLO_Op<"reduce_precision", [Pure]> {
  let summary = "round to a float format of fewer exponent and mantissa "
                "bits, keeping the element type";
  let description = [{
    ```mlir
    %r = stablehlo.reduce_precision %x, format = e8m7 : tensor<4xf32>
    ```
  }];
  let arguments = (ins AnyTensor:$operand, I32Attr:$exponent_bits,
                       I32Attr:$mantissa_bits);
  let results = (outs AnyTensor:$output);
  let assemblyFormat = "$operand `,` `format` `=` "
      "custom<ExponentMantissa>($exponent_bits, $mantissa_bits) attr-dict "
      "`:` custom<SameOperandsAndResultType>(type($operand), type($output))";
}

def StableHLO_AddOp : StableHLO_BinaryOp<"add", "addition">;
def StableHLO_SubtractOp : StableHLO_BinaryOp<"subtract", "subtraction">;
def StableHLO_MulOp : StableHLO_BinaryOp<"multiply", "multiplication">;
def StableHLO_DivOp : StableHLO_BinaryOp<"divide", "division">;
def StableHLO_PowOp : StableHLO_BinaryOp<"power", "lhs ^ rhs">;
def StableHLO_MaxOp : StableHLO_BinaryOp<"maximum", "maximum">;
def StableHLO_MinOp : StableHLO_BinaryOp<"minimum", "minimum">;
def StableHLO_AndOp : StableHLO_BinaryOp<"and", "logical or bitwise and">;
def StableHLO_OrOp : StableHLO_BinaryOp<"or", "logical or bitwise or">;
def StableHLO_XorOp : StableHLO_BinaryOp<"xor", "logical or bitwise xor">;

def StableHLO_IsFiniteOp : StableHLO_Op<"is_finite", [Pure]> {
  let summary = "elementwise: whether x is neither infinite nor NaN";
  let description = [{
    ```mlir
    %f = stablehlo.is_finite %x : (tensor<4xf32>) -> tensor<4xi1>
    ```
  }];
  let arguments = (ins AnyTensor:$x);
  let results = (outs AnyTensor:$y);
  let assemblyFormat = "$x attr-dict `:` functional-type(operands, results)";
}

def StableHLO_CompareOp : StableHLO_Op<"compare", [Pure]> {
  let summary = "elementwise comparison";
  let description = [{
    ```mlir
    %m = stablehlo.compare  GT, %a, %b,  FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    ```
  }];
  let arguments = (ins StableHLO_ComparisonDirectionAttr:$comparison_direction,
                       AnyTensor:$lhs, AnyTensor:$rhs,
                       OptionalAttr<StableHLO_ComparisonTypeAttr>:$compare_type);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$comparison_direction `,` $lhs `,` $rhs "
      "(`,` $compare_type^)? attr-dict `:` functional-type(operands, results)";
}

def StableHLO_SelectOp : StableHLO_Op<"select", [Pure]> {
  let summary = "elementwise `pred ? on_true : on_false`";
  let description = [{
    `: tensor<4xi1>, tensor<4xf32>` (predicate type, then the type of the
    other operands and the result) or a function type.
  }];
  let arguments = (ins AnyTensor:$pred, AnyTensor:$on_true,
                       AnyTensor:$on_false);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$pred `,` $on_true `,` $on_false attr-dict `:` "
      "custom<SelectOpType>(type($pred), type($on_true), type($on_false), "
      "type($result))";
}

def StableHLO_ClampOp : StableHLO_Op<"clamp", [Pure]> {
  let summary = "elementwise `min(max(operand, min), max)`";
  let arguments = (ins AnyTensor:$min, AnyTensor:$operand, AnyTensor:$max);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$min `,` $operand `,` $max attr-dict `:` "
      "custom<SameOperandsAndResultType>(type($min), type($operand), "
      "type($max), type($result))";
}

//===----------------------------------------------------------------------===//
// Constants and shapes
//===----------------------------------------------------------------------===//

def StableHLO_ConstantOp : StableHLO_Op<"constant", [Pure, InferTypeOpAdaptor]> {
  let summary = "a constant tensor";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs AnyTensor:$output);
  let assemblyFormat = "attr-dict $value";
}

def StableHLO_IotaOp : StableHLO_Op<"iota", [Pure]> {
  let summary = "0, 1, 2, ... along one dimension";
  let arguments = (ins I64Attr:$iota_dimension);
  let results = (outs AnyTensor:$output);
  let assemblyFormat = "`dim` `=` $iota_dimension attr-dict `:` type($output)";
}

def StableHLO_BroadcastInDimOp : StableHLO_Op<"broadcast_in_dim", [Pure]> {
  let summary = "broadcast; operand dimension i becomes result dimension dims[i]";
  let arguments = (ins AnyTensor:$operand,
                       DenseI64ArrayAttr:$broadcast_dimensions);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$operand `,` `dims` `=` $broadcast_dimensions "
                       "attr-dict `:` functional-type(operands, results)";
}

def StableHLO_ReshapeOp : StableHLO_Op<"reshape", [Pure]> {
  let summary = "reshape (row-major)";
  let arguments = (ins AnyTensor:$operand);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$operand attr-dict `:` functional-type(operands, results)";
}

def StableHLO_TransposeOp : StableHLO_Op<"transpose", [Pure]> {
  let summary = "permute dimensions";
  let arguments = (ins AnyTensor:$operand, DenseI64ArrayAttr:$permutation);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$operand `,` `dims` `=` $permutation attr-dict `:` "
                       "functional-type(operands, results)";
}

def StableHLO_SliceOp : StableHLO_Op<"slice", [Pure]> {
  let summary = "static strided slice";
  let description = [{
    Pretty form `stablehlo.slice %x [0:2, 1:7:2]` (`start:limit` or
    `start:limit:stride` per dimension); generic form with `start_indices`,
    `limit_indices` and `strides` attributes.
  }];
  let arguments = (ins AnyTensor:$operand,
                       DenseI64ArrayAttr:$start_indices,
                       DenseI64ArrayAttr:$limit_indices,
                       DenseI64ArrayAttr:$strides);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$operand "
      "custom<SliceRanges>($start_indices, $limit_indices, $strides) "
      "attr-dict `:` functional-type(operands, results)";
}

def StableHLO_ConcatenateOp : StableHLO_Op<"concatenate", [Pure]> {
  let summary = "concatenate along one dimension";
  let arguments = (ins Variadic<AnyTensor>:$inputs, I64Attr:$dimension);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "custom<ConcatenateInputs>($inputs, $dimension) "
                       "attr-dict `:` functional-type(operands, results)";
}

def StableHLO_PadOp : StableHLO_Op<"pad", [Pure]> {
  let summary = "pad with a value: low and high edges (negative: cut), and "
                "between elements";
  let description = [{
    ```mlir
    %r = stablehlo.pad %x, %zero, low = [0, 1], high = [2, 0], interior = [0, 1]
        : (tensor<2x3xf32>, tensor<f32>) -> tensor<4x6xf32>
    ```
  }];
  let arguments = (ins AnyTensor:$operand, AnyTensor:$padding_value,
                       DenseI64ArrayAttr:$edge_padding_low,
                       DenseI64ArrayAttr:$edge_padding_high,
                       DenseI64ArrayAttr:$interior_padding);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$operand `,` $padding_value `,` `low` `=` "
      "$edge_padding_low `,` `high` `=` $edge_padding_high `,` `interior` `=` "
      "$interior_padding attr-dict `:` functional-type(operands, results)";
}

// The shape ops of shape-polymorphic exports; refine-stablehlo-shapes
// makes them static.

def StableHLO_GetDimensionSizeOp : StableHLO_Op<"get_dimension_size",
                                                [Pure]> {
  let summary = "the size of one dimension, as a 0-d i32 tensor";
  let arguments = (ins AnyTensor:$operand, I64Attr:$dimension);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$operand `,` `dim` `=` $dimension attr-dict `:` "
      "functional-type(operands, results)";
}

def StableHLO_DynamicBroadcastInDimOp
    : StableHLO_Op<"dynamic_broadcast_in_dim", [Pure]> {
  let summary = "broadcast_in_dim to a shape given as a value";
  let arguments = (ins AnyTensor:$operand, AnyTensor:$output_dimensions,
                       DenseI64ArrayAttr:$broadcast_dimensions);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$operand `,` $output_dimensions `,` `dims` `=` "
      "$broadcast_dimensions attr-dict `:` functional-type(operands, results)";
}

def StableHLO_DynamicReshapeOp : StableHLO_Op<"dynamic_reshape", [Pure]> {
  let summary = "reshape to a shape given as a value";
  let arguments = (ins AnyTensor:$operand, AnyTensor:$output_shape);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$operand `,` $output_shape attr-dict `:` "
      "functional-type(operands, results)";
}

def StableHLO_DynamicIotaOp : StableHLO_Op<"dynamic_iota", [Pure]> {
  let summary = "iota of a shape given as a value";
  let arguments = (ins AnyTensor:$output_shape, I64Attr:$iota_dimension);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$output_shape `,` `dim` `=` $iota_dimension "
      "attr-dict `:` functional-type(operands, results)";
}

def StableHLO_DynamicGatherOp : StableHLO_Op<"dynamic_gather", [Pure]> {
  let summary = "gather with slice sizes given as a value (generic form "
                "only)";
  let arguments = (ins AnyTensor:$operand, AnyTensor:$start_indices,
                       AnyTensor:$slice_sizes,
                       StableHLO_GatherDimensionNumbers:$dimension_numbers,
                       DefaultValuedOptionalAttr<BoolAttr, "false">:$indices_are_sorted);
  let results = (outs AnyTensor:$result);
}

def StableHLO_DynamicSliceOp : StableHLO_Op<"dynamic_slice", [Pure]> {
  let summary = "a slice of static sizes at start indices given as values";
  let description = [{
    ```mlir
    %s = stablehlo.dynamic_slice %x, %i, %c0, sizes = [1, 4]
        : (tensor<3x4xf32>, tensor<i32>, tensor<i32>) -> tensor<1x4xf32>
    ```
    Each start index is clamped into `[0, dim - size]`.
  }];
  let arguments = (ins AnyTensor:$operand, Variadic<AnyTensor>:$start_indices,
                       DenseI64ArrayAttr:$slice_sizes);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$operand `,` "
      "custom<StartIndicesAndSizes>($start_indices, $slice_sizes) attr-dict "
      "`:` functional-type(operands, results)";
}

def StableHLO_DynamicUpdateSliceOp : StableHLO_Op<"dynamic_update_slice",
                                                  [Pure]> {
  let summary = "`operand` with `update` written at start indices given as "
                "values";
  let description = [{
    ```mlir
    %r = stablehlo.dynamic_update_slice %x, %u, %i, %c0
        : (tensor<3x4xf32>, tensor<1x4xf32>, tensor<i32>, tensor<i32>)
          -> tensor<3x4xf32>
    ```
    Each start index is clamped into `[0, dim - update dim]`.
  }];
  let arguments = (ins AnyTensor:$operand, AnyTensor:$update,
                       Variadic<AnyTensor>:$start_indices);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$operand `,` $update `,` $start_indices attr-dict "
      "`:` functional-type(operands, results)";
}

def StableHLO_GatherOp : StableHLO_Op<"gather", [Pure]> {
  let summary = "gather slices at indices (generic form only, as JAX prints it)";
  let arguments = (ins AnyTensor:$operand, AnyTensor:$start_indices,
                       StableHLO_GatherDimensionNumbers:$dimension_numbers,
                       DenseI64ArrayAttr:$slice_sizes,
                       DefaultValuedOptionalAttr<BoolAttr, "false">:$indices_are_sorted);
  let results = (outs AnyTensor:$result);
}

def StableHLO_ScatterOp : StableHLO_Op<"scatter", [RecursiveMemoryEffects,
    SameVariadicOperandSize]> {
  let summary = "combine updates into slices at indices (generic form only, "
                "as JAX prints it)";
  let description = [{
    The body (`update_computation`) combines an operand element (first
    block argument) with an update element (second).
  }];
  let arguments = (ins Variadic<AnyTensor>:$inputs, AnyTensor:$scatter_indices,
                       Variadic<AnyTensor>:$updates,
                       StableHLO_ScatterDimensionNumbers:$scatter_dimension_numbers,
                       DefaultValuedOptionalAttr<BoolAttr, "false">:$indices_are_sorted,
                       DefaultValuedOptionalAttr<BoolAttr, "false">:$unique_indices);
  let results = (outs Variadic<AnyTensor>:$results);
  let regions = (region SizedRegion<1>:$update_computation);
}

//===----------------------------------------------------------------------===//
// Contractions and reductions
//===----------------------------------------------------------------------===//

def StableHLO_DotGeneralOp : StableHLO_Op<"dot_general", [Pure]> {
  let summary = "general contraction";
  let description = [{
    ```mlir
    %r = stablehlo.dot_general %a, %b, batching_dims = [0] x [0],
        contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT]
        : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
    ```
    An optional `algorithm = <...>` follows the precision.
  }];
  let arguments = (ins AnyTensor:$lhs, AnyTensor:$rhs,
      StableHLO_DotDimensionNumbers:$dot_dimension_numbers,
      OptionalAttr<StableHLO_PrecisionConfig>:$precision_config,
      OptionalAttr<StableHLO_DotAlgorithm>:$algorithm);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs `,` custom<DotGeneralConfig>("
      "$dot_dimension_numbers, $precision_config, $algorithm) attr-dict `:` "
      "functional-type(operands, results)";
}

def StableHLO_DotOp : StableHLO_Op<"dot", [Pure]> {
  let summary = "vector/matrix product (rank 1 or 2 operands)";
  let arguments = (ins AnyTensor:$lhs, AnyTensor:$rhs,
                       OptionalAttr<StableHLO_PrecisionConfig>:$precision_config);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs custom<PrecisionConfig>($precision_config) "
                       "attr-dict `:` functional-type(operands, results)";
}

def StableHLO_ReduceOp : StableHLO_Op<"reduce", [RecursiveMemoryEffects,
    SameVariadicOperandSize]> {
  let summary = "reduce inputs over dimensions with a body";
  let description = [{
    Compact form (a body that is one binary op):
    ```mlir
    %r = stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [1]
        : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
    ```
    Region form (the block arguments are written in pairs, accumulator and
    element, one pair per input):
    ```mlir
    %r = stablehlo.reduce(%x init: %c) across dimensions = [1]
        : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
     reducer(%a: tensor<f32>, %b: tensor<f32>) {
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }
    ```
  }];
  let arguments = (ins Variadic<AnyTensor>:$inputs,
                       Variadic<AnyTensor>:$init_values,
                       DenseI64ArrayAttr:$dimensions);
  let results = (outs Variadic<AnyTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
}

def StableHLO_ReduceWindowOp : StableHLO_Op<"reduce_window",
    [RecursiveMemoryEffects, SameVariadicOperandSize]> {
  let summary = "reduce sliding windows with a body (generic form only, as "
                "JAX prints it)";
  let description = [{
    Each result element reduces one window of the inputs padded with the
    init values (`padding`: one `[low, high]` row per dimension), windows
    `window_dimensions` wide placed `window_strides` apart. JAX emits it for
    `cumsum`/`cummax` (a window as long as the axis, padded in front) and
    pooling.
  }];
  let arguments = (ins Variadic<AnyTensor>:$inputs,
                       Variadic<AnyTensor>:$init_values,
                       DenseI64ArrayAttr:$window_dimensions,
                       OptionalAttr<DenseI64ArrayAttr>:$window_strides,
                       OptionalAttr<DenseI64ArrayAttr>:$base_dilations,
                       OptionalAttr<DenseI64ArrayAttr>:$window_dilations,
                       OptionalAttr<I64ElementsAttr>:$padding);
  let results = (outs Variadic<AnyTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
}

def StableHLO_SelectAndScatterOp : StableHLO_Op<"select_and_scatter",
    [RecursiveMemoryEffects]> {
  let summary = "scatter into the element each window selects (generic "
                "form only, as JAX prints it)";
  let description = [{
    The transpose of max/min pooling: every window of `operand`
    (`window_dimensions` wide, `window_strides` apart, after `padding`)
    selects one element, folding its elements in row-major order with the
    `select` body (the element so far stays where the body says true), and
    the `source` element of that window is combined, with the `scatter`
    body, into the result (`operand`'s shape, filled with `init_value`) at
    the selected position. JAX emits it for the gradient of `max_pool`.
  }];
  let arguments = (ins AnyTensor:$operand, AnyTensor:$source,
                       AnyTensor:$init_value,
                       OptionalAttr<DenseI64ArrayAttr>:$window_dimensions,
                       OptionalAttr<DenseI64ArrayAttr>:$window_strides,
                       OptionalAttr<I64ElementsAttr>:$padding);
  let results = (outs AnyTensor:$result);
  let regions = (region SizedRegion<1>:$select, SizedRegion<1>:$scatter);
}

def StableHLO_WhileOp : StableHLO_Op<"while", [RecursiveMemoryEffects]> {
  let summary = "a loop: `body` runs while `cond` holds, over loop-carried "
                "values";
  let description = [{
    The form JAX prints for `lax.fori_loop`, `lax.scan` and `while_loop`
    (the generic form parses too):
    ```mlir
    %r:2 = stablehlo.while(%i = %c0, %x = %arg0) : tensor<i32>, tensor<4xf32>
     cond {
      %p = stablehlo.compare LT, %i, %c3, SIGNED
          : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %j = stablehlo.add %i, %c1 : tensor<i32>
      %y = stablehlo.tanh %x : tensor<4xf32>
      stablehlo.return %j, %y : tensor<i32>, tensor<4xf32>
    }
    ```
    Both regions take the loop-carried values; `cond` returns a 0-d `i1`,
    `body` the next values.
  }];
  let arguments = (ins Variadic<AnyType>:$operand);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$cond, SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def StableHLO_ReturnOp : StableHLO_Op<"return", [Pure, Terminator]> {
  let summary = "terminator of stablehlo region bodies";
  let arguments = (ins Variadic<AnyType>:$results);
  let assemblyFormat = "$results attr-dict (`:` type($results)^)?";
}

//===----------------------------------------------------------------------===//
// Calls and barriers
//===----------------------------------------------------------------------===//

def StableHLO_CustomCallOp : StableHLO_Op<"custom_call"> {
  let summary = "call of a named external computation";
  let description = [{
    ```mlir
    %y = stablehlo.custom_call @Sharding(%x) {mhlo.sharding = "{replicated}"}
        : (tensor<4xf32>) -> tensor<4xf32>
    ```
    Loom converts `@Sharding` (a sharding hint) and `@check.*` (the checks
    of StableHLO's test data); other targets are reported as unsupported.
  }];
  let arguments = (ins Variadic<AnyType>:$inputs,
                       StrAttr:$call_target_name,
                       OptionalAttr<BoolAttr>:$has_side_effect,
                       OptionalAttr<AnyAttr>:$backend_config,
                       OptionalAttr<AnyAttr>:$api_version,
                       OptionalAttr<AnyAttr>:$called_computations,
                       OptionalAttr<AnyAttr>:$operand_layouts,
                       OptionalAttr<AnyAttr>:$result_layouts,
                       OptionalAttr<AnyAttr>:$output_operand_aliases);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = "custom<CustomCallTarget>($call_target_name) "
      "`(` $inputs `)` attr-dict `:` functional-type(operands, results)";
}

def StableHLO_OptimizationBarrierOp : StableHLO_Op<"optimization_barrier",
    [InferTypeOpAdaptor]> {
  let summary = "identity that blocks optimizations across it";
  let arguments = (ins Variadic<AnyType>:$operand);
  let results = (outs Variadic<AnyType>:$result);
  let assemblyFormat = "attr-dict ($operand^ `:` type($operand))?";
}

#endif // LOOM_DIALECT_STABLEHLO_IR_STABLEHLOOPS_TD

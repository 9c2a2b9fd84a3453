//===- LoomOps.td - Ops of the loom dialect ----------------*- tablegen -*-===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMOPS_TD
#define LOOM_DIALECT_LOOM_IR_LOOMOPS_TD

include "loom/Dialect/Loom/IR/LoomDialect.td"
include "loom/Dialect/Loom/IR/LoomAttrs.td"
include "loom/Dialect/Loom/IR/LoomInterfaces.td"
include "loom/Dialect/Loom/IR/LoomTypes.td"
include "mlir/Dialect/Shard/Interfaces/ShardingInterface.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

// Every loom op is differentiable in reverse mode: its vector-Jacobian
// product is defined in LoomVJP.cpp (a missing one is a link error).
class Loom_Op<string mnemonic, list<Trait> traits = []>
    : Op<Loom_Dialect, mnemonic, !listconcat([Pure,
        DeclareOpInterfaceMethods<Loom_VJPInterface>], traits)>;

// The result types of these ops follow from their operands and attributes.
// A written result type may be less precise than the inferred one (a `?`
// where the inferred type has a size): the op verifies, and
// `loom-shape-inference` refines it. Inference also checks the operands, so
// it is where these ops report malformed shapes and attributes.
defvar loomRefinableResultTypes = [{
  bool $cppClass::isCompatibleReturnTypes(::mlir::TypeRange inferred,
                                         ::mlir::TypeRange actual) {
    return ::mlir::loom::detail::isRefinementCompatible(inferred, actual);
  }
}];

class Loom_InferOp<string mnemonic, list<Trait> traits = []>
    : Loom_Op<mnemonic, !listconcat([InferTypeOpAdaptorWithIsCompatible],
                                    traits)> {
  let extraClassDefinition = loomRefinableResultTypes;
}

// Types in the assembly of elementwise ops: `: T` when the operands and the
// result share one type, else `: (T0, T1) -> R`.

// Elementwise ops infer the result type from their operands' (refined) types.
defvar loomElementwiseInference = [{
  ::llvm::LogicalResult $cppClass::inferReturnTypes(
      ::mlir::MLIRContext *, std::optional<::mlir::Location> location,
      Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &inferred) {
    return ::mlir::loom::detail::inferElementwiseType(
        location, getOperationName(), adaptor.getOperands(),
        /*resultElementType=*/nullptr, inferred);
  }
}];

class Loom_UnaryOp<string mnemonic, Type operandType,
                   Trait cost = Loom_CostInterface>
    : Loom_InferOp<mnemonic, [Loom_Elementwise, cost, SameOperandsAndResultElementType]> {
  let extraClassDefinition = !strconcat(loomRefinableResultTypes,
                                        loomElementwiseInference);
  let arguments = (ins operandType:$operand);
  let results = (outs operandType:$result);
  let assemblyFormat = "$operand attr-dict `:` custom<SameTypes>(type($operand), type($result))";
}

class Loom_BinaryOp<string mnemonic, Type operandType, list<Trait> traits = []>
    : Loom_InferOp<mnemonic, !listconcat([Loom_Elementwise, Loom_CostInterface,
        SameOperandsAndResultElementType], traits)> {
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs operandType:$result);
  let extraClassDefinition = !strconcat(loomRefinableResultTypes,
                                        loomElementwiseInference);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` custom<SameTypes>(type($lhs), type($rhs), type($result))";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise arithmetic
//===----------------------------------------------------------------------===//

def Loom_AddOp : Loom_BinaryOp<"add", Loom_NumericTensor, [Commutative]> {
  let summary = "elementwise addition";
}
def Loom_SubOp : Loom_BinaryOp<"sub", Loom_NumericTensor> {
  let summary = "elementwise subtraction";
}
def Loom_MulOp : Loom_BinaryOp<"mul", Loom_NumericTensor, [Commutative]> {
  let summary = "elementwise multiplication";
}
def Loom_DivOp : Loom_BinaryOp<"div", Loom_NumericTensor> {
  let summary = "elementwise division (integers round toward zero)";
}
def Loom_PowOp : Loom_BinaryOp<"pow", Loom_NumericTensor> {
  let summary = "elementwise power `lhs ^ rhs`";
}
def Loom_MaxOp : Loom_BinaryOp<"max", Loom_NumericTensor, [Commutative]> {
  let summary = "elementwise maximum (NaN-propagating for floats)";
}
def Loom_MinOp : Loom_BinaryOp<"min", Loom_NumericTensor, [Commutative]> {
  let summary = "elementwise minimum (NaN-propagating for floats)";
}

def Loom_NegOp : Loom_UnaryOp<"neg", Loom_NumericTensor> {
  let summary = "elementwise negation";
  let hasFolder = 1;
}
def Loom_AbsOp : Loom_UnaryOp<"abs", Loom_NumericTensor> {
  let summary = "elementwise absolute value";
}
def Loom_ExpOp : Loom_UnaryOp<"exp", Loom_FloatTensor> {
  let summary = "elementwise natural exponential";
}
def Loom_LogOp : Loom_UnaryOp<"log", Loom_FloatTensor> {
  let summary = "elementwise natural logarithm";
}
def Loom_SqrtOp : Loom_UnaryOp<"sqrt", Loom_FloatTensor> {
  let summary = "elementwise square root";
}
def Loom_RsqrtOp : Loom_UnaryOp<"rsqrt", Loom_FloatTensor> {
  let summary = "elementwise reciprocal square root";
}
def Loom_TanhOp : Loom_UnaryOp<"tanh", Loom_FloatTensor> {
  let summary = "elementwise hyperbolic tangent";
}
def Loom_CosOp : Loom_UnaryOp<"cos", Loom_FloatTensor> {
  let summary = "elementwise cosine (radians)";
}
def Loom_SinOp : Loom_UnaryOp<"sin", Loom_FloatTensor> {
  let summary = "elementwise sine (radians)";
}
def Loom_SigmoidOp : Loom_UnaryOp<"sigmoid", Loom_FloatTensor> {
  let summary = "elementwise logistic function `1 / (1 + exp(-x))`";
}
def Loom_ErfOp : Loom_UnaryOp<"erf", Loom_FloatTensor> {
  let summary = "elementwise Gauss error function";
}
def Loom_ErfInvOp : Loom_UnaryOp<"erf_inv", Loom_FloatTensor> {
  let summary = "elementwise inverse of the Gauss error function";
  let description = [{
    The `y` with `erf(y) = x` for `-1 < x < 1` (JAX's `erfinv`, used by
    `jax.random.normal` and truncated-normal initializers); `+-inf` at
    `x = +-1`, NaN outside `[-1, 1]`.
  }];
}

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

def Loom_ReluOp : Loom_UnaryOp<"relu", Loom_FloatTensor> {
  let summary = "rectified linear unit `max(x, 0)`";
}

def Loom_SiluOp : Loom_UnaryOp<"silu", Loom_FloatTensor,
    DeclareOpInterfaceMethods<Loom_CostInterface, ["getFlopCount"]>> {
  let summary = "sigmoid linear unit `x * sigmoid(x)` (a.k.a. swish)";
}

def Loom_GeluOp : Loom_InferOp<"gelu", [Loom_Elementwise, SameOperandsAndResultElementType,
    DeclareOpInterfaceMethods<Loom_CostInterface, ["getFlopCount"]>]> {
  let summary = "Gaussian error linear unit";
  let description = [{
    `approximate = none`: `0.5 * x * (1 + erf(x / sqrt(2)))`.
    `approximate = tanh`: `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3)))`
    (PyTorch's `gelu(approximate="tanh")`, GPT-2's `gelu_new`).

    ```mlir
    %y = loom.gelu %x approximate = tanh : tensor<8x3072xf32>
    ```
  }];
  let arguments = (ins Loom_FloatTensor:$operand,
      DefaultValuedAttr<Loom_GeluApproximation,
                        "::mlir::loom::GeluApproximation::none">:$approximate);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = "$operand (`approximate` `=` $approximate^)? attr-dict "
                       "`:` custom<SameTypes>(type($operand), type($result))";
}

def Loom_GeluGradOp : Loom_InferOp<"gelu_grad", [Loom_Elementwise,
    SameOperandsAndResultElementType,
    DeclareOpInterfaceMethods<Loom_CostInterface, ["getFlopCount"]>]> {
  let summary = "GELU's vector-Jacobian product `cotangent * gelu'(operand)`";
  let description = [{
    The gradient that `loom.gelu`'s reverse-mode rule emits, one op rather
    than the derivative spelled out, so that a backward matrix product
    whose only reader it is can apply it as it writes (`loom-fuse-gemm-bias`:
    cuBLASLt's `CUBLASLT_EPILOGUE_DGELU`). With t = tanh(sqrt(2 / pi)
    (x + 0.044715 x^3)), `approximate = tanh`: `gelu'(x) = (1 + t) / 2 +
    x (1 - t^2) sqrt(2 / pi) (1 + 3 * 0.044715 x^2) / 2`; `approximate =
    none`: `Phi(x) + x phi(x)`, the normal distribution's CDF and density.
    Not differentiable itself (no second derivatives).

    ```mlir
    %dx = loom.gelu_grad %x, %dy approximate = tanh : tensor<8x3072xf32>
    ```
  }];
  let arguments = (ins Loom_FloatTensor:$operand, Loom_FloatTensor:$cotangent,
      DefaultValuedAttr<Loom_GeluApproximation,
                        "::mlir::loom::GeluApproximation::none">:$approximate);
  let results = (outs Loom_FloatTensor:$result);
  let extraClassDefinition = !strconcat(loomRefinableResultTypes,
                                        loomElementwiseInference);
  let assemblyFormat = "$operand `,` $cotangent (`approximate` `=` $approximate^)? "
                       "attr-dict `:` custom<SameTypes>(type($operand), "
                       "type($cotangent), type($result))";
}

//===----------------------------------------------------------------------===//
// Comparison, selection, conversion
//===----------------------------------------------------------------------===//

def Loom_CompareOp : Loom_InferOp<"compare", [Loom_Elementwise, Loom_CostInterface,
    AllElementTypesMatch<["lhs", "rhs"]>]> {
  let summary = "elementwise comparison producing `i1`";
  let description = [{
    ```mlir
    %m = loom.compare lt, %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
    ```
  }];
  let arguments = (ins Loom_ComparisonDirection:$direction,
                       Loom_Tensor:$lhs, Loom_Tensor:$rhs);
  let results = (outs Loom_BoolTensor:$result);
  let assemblyFormat =
      "$direction `,` $lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

def Loom_SelectOp : Loom_InferOp<"select", [Loom_Elementwise, Loom_CostInterface,
    AllElementTypesMatch<["on_true", "on_false", "result"]>]> {
  let summary = "elementwise choice `pred ? on_true : on_false`";
  let description = [{
    ```mlir
    %r = loom.select %pred, %a, %b : tensor<4xi1>, tensor<4xf32>
    ```
  }];
  let arguments = (ins Loom_BoolTensor:$pred, Loom_Tensor:$on_true,
                       Loom_Tensor:$on_false);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$pred `,` $on_true `,` $on_false attr-dict `:` "
      "type($pred) `,` custom<SameTypes>(type($on_true), type($on_false), "
      "type($result))";
  let hasFolder = 1;
}

def Loom_ConvertOp : Loom_Op<"convert", [Loom_Elementwise, Loom_CostInterface]> {
  let summary = "elementwise conversion to another element type";
  let description = [{
    Float to integer rounds toward zero; to `i1` yields `x != 0`; `i1` to a
    number yields 0 or 1. Shapes of operand and result agree.

    ```mlir
    %h = loom.convert %x : tensor<4xf32> -> tensor<4xbf16>
    ```
  }];
  let arguments = (ins Loom_Tensor:$operand);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

def Loom_SoftmaxOp : Loom_InferOp<"softmax", [Loom_SameShape, SameOperandsAndResultElementType,
    DeclareOpInterfaceMethods<Loom_CostInterface, ["getFlopCount"]>,
    DeclareOpInterfaceMethods<Loom_TensorPartitionInterface, ["getPartitionRule"]>]> {
  let summary = "softmax along one dimension";
  let description = [{
    `exp(x - max(x)) / sum(exp(x - max(x)))` along `axis`.

    ```mlir
    %p = loom.softmax %x, axis = 1 : tensor<8x10xf32>
    ```
  }];
  let arguments = (ins Loom_FloatTensor:$operand, I64Attr:$axis);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = "$operand `,` `axis` `=` $axis attr-dict `:` "
                       "custom<SameTypes>(type($operand), type($result))";
}

def Loom_LogSoftmaxOp : Loom_InferOp<"log_softmax", [Loom_SameShape, SameOperandsAndResultElementType,
    DeclareOpInterfaceMethods<Loom_CostInterface, ["getFlopCount"]>,
    DeclareOpInterfaceMethods<Loom_TensorPartitionInterface, ["getPartitionRule"]>]> {
  let summary = "log of softmax along one dimension";
  let description = [{
    `x - max(x) - log(sum(exp(x - max(x))))` along `axis`.

    ```mlir
    %p = loom.log_softmax %x, axis = 1 : tensor<8x10xf32>
    ```
  }];
  let arguments = (ins Loom_FloatTensor:$operand, I64Attr:$axis);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = "$operand `,` `axis` `=` $axis attr-dict `:` "
                       "custom<SameTypes>(type($operand), type($result))";
}

def Loom_LayerNormOp : Loom_InferOp<"layer_norm", [AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<Loom_CostInterface, ["getFlopCount"]>]> {
  let summary = "layer normalisation over the trailing dimensions";
  let description = [{
    Normalises `input` over dimensions `[axis, rank)`:
    `(x - mean) / sqrt(var + epsilon) * scale + bias`, with the biased
    variance (ONNX `LayerNormalization`, PyTorch `nn.LayerNorm`). `scale` and
    `bias` are optional and have the shape of the normalised dimensions.

    ```mlir
    %y = loom.layer_norm %x scale %g bias %b axis = 2 epsilon = 1.000000e-05
        : (tensor<2x8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
    ```
  }];
  let arguments = (ins Loom_FloatTensor:$input,
                       Optional<Loom_FloatTensor>:$scale,
                       Optional<Loom_FloatTensor>:$bias,
                       I64Attr:$axis, F64Attr:$epsilon);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`scale` $scale^)? (`bias` $bias^)? `axis` `=` $axis
    `epsilon` `=` $epsilon attr-dict `:` functional-type(operands, results)
  }];
}

def Loom_RmsNormOp : Loom_InferOp<"rms_norm",
    [DeclareOpInterfaceMethods<Loom_CostInterface, ["getFlopCount"]>]> {
  let summary = "root-mean-square normalisation over the trailing dimensions";
  let description = [{
    `x / sqrt(mean(x^2 over [axis, rank)) + epsilon) * scale` (LLaMA's
    RMSNorm, PyTorch `nn.RMSNorm`). `scale` is optional and has the shape of
    the normalised dimensions.

    ```mlir
    %y = loom.rms_norm %x scale %g axis = 1 epsilon = 1.000000e-06
        : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
    ```
  }];
  let arguments = (ins Loom_FloatTensor:$input,
                       Optional<Loom_FloatTensor>:$scale,
                       I64Attr:$axis, F64Attr:$epsilon);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`scale` $scale^)? `axis` `=` $axis `epsilon` `=` $epsilon attr-dict
    `:` functional-type(operands, results)
  }];
}

def Loom_NormGradOp : Loom_InferOp<"norm_grad", [
    DeclareOpInterfaceMethods<Loom_CostInterface, ["getFlopCount"]>]> {
  let summary = "vector-Jacobian product of a layer or RMS norm";
  let description = [{
    The gradient that `loom.layer_norm`'s and `loom.rms_norm`'s reverse-mode
    rules emit, one op rather than the derivative spelled out, so that a
    backend computes it in one pass over each row (PyTorch's
    `native_layer_norm_backward`). The statistics are recomputed from
    `input`. Over dimensions `[axis, rank)`, with `xhat` the normalised
    input, `rstd = 1 / sqrt(var + epsilon)` (`rms`: `1 / sqrt(mean(x^2) +
    epsilon)`) and `gh = cotangent * scale`:

    - `input_grad = rstd * (gh - mean(gh) - xhat * mean(gh * xhat))`,
      without the `mean(gh)` term with `rms`;
    - `scale_grad`: the sum of `cotangent * xhat` over the leading
      dimensions;
    - `bias_grad`: the sum of `cotangent` over the leading dimensions (a
      layer norm's bias gradient; unused for an RMS norm).

    `scale` is optional (a norm without one); the two parameter gradients
    have the shape of the normalised dimensions. Not differentiable itself
    (no second derivatives).

    ```mlir
    %dx, %dg, %db = loom.norm_grad %x, %dy scale %g axis = 1
        epsilon = 1.000000e-05
        : (tensor<8x64xf32>, tensor<8x64xf32>, tensor<64xf32>)
          -> (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>)
    ```
  }];
  let arguments = (ins Loom_FloatTensor:$input, Loom_FloatTensor:$cotangent,
                       Optional<Loom_FloatTensor>:$scale,
                       I64Attr:$axis, F64Attr:$epsilon, UnitAttr:$rms);
  let results = (outs Loom_FloatTensor:$input_grad,
                      Loom_FloatTensor:$scale_grad,
                      Loom_FloatTensor:$bias_grad);
  let assemblyFormat = [{
    $input `,` $cotangent (`scale` $scale^)? `axis` `=` $axis
    `epsilon` `=` $epsilon (`rms` $rms^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Contraction
//===----------------------------------------------------------------------===//

def Loom_DotGeneralOp : Loom_InferOp<"dot_general", [
    DeclareOpInterfaceMethods<Loom_CostInterface, ["getFlopCount"]>,
    DeclareOpInterfaceMethods<ShardingInterface, ["getLoopIteratorTypes",
        "getReductionLoopIteratorKinds", "getIndexingMaps"]>,
    DeclareOpInterfaceMethods<Loom_TensorPartitionInterface, ["getPartitionRule"]>]> {
  let summary = "batched matrix product with arbitrary batch and contracting dimensions";
  let description = [{
    StableHLO's `dot_general`: `lhs_batching_dims[i]` pairs with
    `rhs_batching_dims[i]`, `lhs_contracting_dims[i]` with
    `rhs_contracting_dims[i]`. The result has the batch dimensions, then the
    remaining lhs dimensions, then the remaining rhs dimensions, each in
    order. Operands and result share one element type.

    A plain matmul `[M, K] x [K, N]`:
    ```mlir
    %c = loom.dot_general %a, %b, contracting_dims = [1] x [0]
        : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    ```
    Batched attention scores `[B, H, S, D] x [B, H, S, D] -> [B, H, S, S]`:
    ```mlir
    %s = loom.dot_general %q, %k, batching_dims = [0, 1] x [0, 1],
        contracting_dims = [3] x [3]
        : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x8xf32>
    ```
  }];
  let arguments = (ins Loom_NumericTensor:$lhs, Loom_NumericTensor:$rhs,
      DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$lhs_batching_dims,
      DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$rhs_batching_dims,
      DenseI64ArrayAttr:$lhs_contracting_dims,
      DenseI64ArrayAttr:$rhs_contracting_dims);
  let results = (outs Loom_NumericTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,`
    (`batching_dims` `=` $lhs_batching_dims^ `x` $rhs_batching_dims `,`)?
    `contracting_dims` `=` $lhs_contracting_dims `x` $rhs_contracting_dims
    attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Shape and data movement
//===----------------------------------------------------------------------===//

def Loom_ReshapeOp : Loom_Op<"reshape", [Loom_DataMovement, Loom_CostInterface,
    DeclareOpInterfaceMethods<Loom_TensorPartitionInterface, ["getPartitionRule",
        "getExpandedOperandDim"]>]> {
  let summary = "reinterpret a tensor with another shape of the same size";
  let description = [{
    Row-major order is kept. The result type is the op's specification;
    when both shapes are static their element counts must agree.

    ```mlir
    %y = loom.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
    ```
  }];
  let arguments = (ins Loom_Tensor:$operand);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Loom_TransposeOp : Loom_InferOp<"transpose", [Loom_DataMovement,
    Loom_CostInterface,
    DeclareOpInterfaceMethods<Loom_TensorPartitionInterface, ["getPartitionRule"]>]> {
  let summary = "permute dimensions";
  let description = [{
    Result dimension `i` is operand dimension `permutation[i]`.

    ```mlir
    %y = loom.transpose %x, permutation = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
    ```
  }];
  let arguments = (ins Loom_Tensor:$operand, DenseI64ArrayAttr:$permutation);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$operand `,` `permutation` `=` $permutation attr-dict "
                       "`:` type($operand) `->` type($result)";
  let hasFolder = 1;
}

def Loom_BroadcastOp : Loom_Op<"broadcast", [Loom_DataMovement,
    Loom_CostInterface,
    DeclareOpInterfaceMethods<Loom_TensorPartitionInterface, ["getPartitionRule",
        "isUniformAlong", "buildResized", "getExpandedOperandDim"]>]> {
  let summary = "broadcast into a larger shape (StableHLO broadcast_in_dim)";
  let description = [{
    Operand dimension `i` becomes result dimension `dims[i]`; `dims` is
    strictly increasing and each operand dimension is 1 or equal to the
    result dimension it maps to. The result type is the op's specification.

    ```mlir
    %y = loom.broadcast %b, dims = [1] : tensor<4xf32> -> tensor<8x4xf32>
    ```
  }];
  let arguments = (ins Loom_Tensor:$operand, DenseI64ArrayAttr:$dims);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$operand `,` `dims` `=` $dims attr-dict `:` "
                       "type($operand) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Loom_SliceOp : Loom_InferOp<"slice", [Loom_DataMovement,
    Loom_CostInterface,
    DeclareOpInterfaceMethods<Loom_TensorPartitionInterface, ["getPartitionRule",
        "partitionAttributes"]>]> {
  let summary = "static strided slice";
  let description = [{
    Takes `start[i] <= j < limit[i]` with step `strides[i]` along each
    dimension (`0 <= start <= limit <= size`, `strides >= 1`).

    ```mlir
    %y = loom.slice %x, start = [0, 2], limit = [4, 6], strides = [1, 2]
        : tensor<4x8xf32> -> tensor<4x2xf32>
    ```
  }];
  let arguments = (ins Loom_Tensor:$operand, DenseI64ArrayAttr:$start,
                       DenseI64ArrayAttr:$limit, DenseI64ArrayAttr:$strides);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = [{
    $operand `,` `start` `=` $start `,` `limit` `=` $limit `,`
    `strides` `=` $strides attr-dict `:` type($operand) `->` type($result)
  }];
  let hasFolder = 1;
}

def Loom_ConcatOp : Loom_InferOp<"concat", [Loom_DataMovement,
    Loom_CostInterface,
    DeclareOpInterfaceMethods<Loom_TensorPartitionInterface, ["getPartitionRule"]>]> {
  let summary = "concatenate tensors along one dimension";
  let description = [{
    ```mlir
    %y = loom.concat %a, %b dim = 1
        : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Variadic<Loom_Tensor>:$inputs, I64Attr:$dim);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$inputs `dim` `=` $dim attr-dict `:` "
                       "functional-type($inputs, results)";
  let hasFolder = 1;
}

def Loom_SplitOp : Loom_InferOp<"split", [Loom_DataMovement,
    Loom_CostInterface,
    DeclareOpInterfaceMethods<Loom_TensorPartitionInterface, ["getPartitionRule",
        "partitionAttributes"]>]> {
  let summary = "split a tensor into consecutive pieces along one dimension";
  let description = [{
    Piece `i` has size `sizes[i]` along `dim`; the sizes add up to the
    operand's size.

    ```mlir
    %q, %k, %v = loom.split %qkv, dim = 2, sizes = [64, 64, 64]
        : tensor<2x8x192xf32> -> tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>
    ```
  }];
  let arguments = (ins Loom_Tensor:$operand, I64Attr:$dim,
                       DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<Loom_Tensor>:$results);
  let assemblyFormat = "$operand `,` `dim` `=` $dim `,` `sizes` `=` $sizes "
                       "attr-dict `:` type($operand) `->` type($results)";
}

def Loom_GatherOp : Loom_InferOp<"gather", [Loom_DataMovement,
    Loom_CostInterface]> {
  let summary = "take slices of a tensor at integer indices (embedding lookup)";
  let description = [{
    ONNX `Gather`: with `data` of shape `D` and `indices` of shape `I`, the
    result has shape `D[:axis] ++ I ++ D[axis+1:]`. An embedding lookup is
    `axis = 0` on a `[vocab, hidden]` table. Indices must lie in
    `[0, D[axis])`; importers normalise negative ones.

    ```mlir
    %e = loom.gather %wte[%ids], axis = 0
        : (tensor<50257x768xf32>, tensor<2x8xi64>) -> tensor<2x8x768xf32>
    ```
  }];
  let arguments = (ins Loom_Tensor:$data, Loom_IntTensor:$indices,
                       I64Attr:$axis);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$data `[` $indices `]` `,` `axis` `=` $axis attr-dict "
                       "`:` functional-type(operands, results)";
}

def Loom_ScatterAddOp : Loom_InferOp<"scatter_add", [
    DeclareOpInterfaceMethods<Loom_CostInterface, ["getFlopCount"]>]> {
  let summary = "add slices into a tensor at integer indices (embedding "
                "gradient)";
  let description = [{
    The dual of `loom.gather`: with `target` of shape `D` and `indices` of
    shape `I`, `updates` has shape `D[:axis] ++ I ++ D[axis+1:]` (the shape
    `loom.gather` of `target` at `indices` would have) and the result has
    the type of `target`. The result is `target` with, for every index
    position `p` and every slice, `updates[..., p, ...]` added at
    `target[..., indices[p], ...]`:

    ```
    result[o, indices[p], i] += updates[o, p, i]
    ```

    where `o` ranges over `D[:axis]` and `i` over `D[axis+1:]`. Duplicate
    indices accumulate. Indices must lie in `[0, D[axis])`; unlike
    StableHLO's `scatter`, which skips out-of-bounds indices, an index out
    of range is an error. It costs one flop per update element.

    The gradient of an embedding lookup `loom.gather %wte[%ids], axis = 0`
    with respect to `%wte`:

    ```mlir
    %g = loom.scatter_add %zeros[%ids], %dout, axis = 0
        : (tensor<50257x768xf32>, tensor<2x8xi64>, tensor<2x8x768xf32>)
          -> tensor<50257x768xf32>
    ```
  }];
  let arguments = (ins Loom_NumericTensor:$target, Loom_IntTensor:$indices,
                       Loom_NumericTensor:$updates, I64Attr:$axis);
  let results = (outs Loom_NumericTensor:$result);
  let assemblyFormat = "$target `[` $indices `]` `,` $updates `,` `axis` `=` "
                       "$axis attr-dict `:` functional-type(operands, results)";
}

def Loom_IotaOp : Loom_Op<"iota", [Loom_DataMovement, Loom_CostInterface]> {
  let summary = "a tensor counting 0, 1, 2, ... along one dimension";
  let description = [{
    ```mlir
    %pos = loom.iota dim = 1 : tensor<2x8xi64>
    ```
  }];
  let arguments = (ins I64Attr:$dim);
  let results = (outs RankedTensorOf<[F32, BF16, F16, I64, I32]>:$result);
  let assemblyFormat = "`dim` `=` $dim attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Loom_ConstantOp : Loom_InferOp<"constant", [ConstantLike,
    Loom_DataMovement, Loom_CostInterface,
    DeclareOpInterfaceMethods<Loom_TensorPartitionInterface, ["isUniformAlong",
        "buildResized"]>]> {
  let summary = "a constant tensor";
  let description = [{
    Only for constants that belong to the program (masks, scales, shape
    arithmetic). Model weights are never constants: they are `loom.param`
    arguments.

    ```mlir
    %c = loom.constant dense<1.0> : tensor<4xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Loom_ReduceOp<string mnemonic, Type elementType, list<Trait> traits = []>
    : Loom_InferOp<mnemonic, !listconcat([
        DeclareOpInterfaceMethods<Loom_CostInterface, ["getFlopCount"]>,
        DeclareOpInterfaceMethods<Loom_TensorPartitionInterface,
                                  ["getPartitionRule"]>],
        traits)> {
  let description = [{
    Reduces over `dims` (distinct, in range; may be empty). With `keepdims`
    the reduced dimensions stay as size 1, else they are removed.

    ```mlir
    %s = loom.}] # mnemonic # [{ %x, dims = [1] keepdims
        : tensor<8x16xf32> -> tensor<8x1xf32>
    ```
  }];
  let arguments = (ins elementType:$operand, DenseI64ArrayAttr:$dims,
                       UnitAttr:$keepdims);
  let results = (outs elementType:$result);
  let assemblyFormat = "$operand `,` `dims` `=` $dims (`keepdims` $keepdims^)? "
                       "attr-dict `:` type($operand) `->` type($result)";
  let hasFolder = 1;
  let extraClassDefinition = !strconcat(loomRefinableResultTypes, [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location> location,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &inferred) {
      return ::mlir::loom::detail::inferReduceType(
          location, getOperationName(), adaptor.getOperand(),
          adaptor.getDims(), adaptor.getKeepdims(), inferred);
    }
    ::mlir::OpFoldResult $cppClass::fold(FoldAdaptor) {
      // Reducing over no dimension is the identity.
      if (getDims().empty() && getOperand().getType() == getType())
        return getOperand();
      return {};
    }
    std::optional<int64_t> $cppClass::getFlopCount() {
      return ::mlir::loom::detail::getNumElements(getOperand().getType());
    }
    ::mlir::FailureOr<::mlir::loom::PartitionRule> $cppClass::getPartitionRule(
        ::llvm::ArrayRef<std::optional<::mlir::loom::ShardedDim>> operands) {
      return ::mlir::loom::detail::getReducePartitionRule(
          getDims(), getKeepdims(), operands);
    }
  }]);
}

def Loom_ReduceSumOp : Loom_ReduceOp<"reduce_sum", Loom_NumericTensor> {
  let summary = "sum over dimensions";
}
def Loom_ReduceMeanOp : Loom_ReduceOp<"reduce_mean", Loom_FloatTensor> {
  let summary = "arithmetic mean over dimensions";
}
def Loom_ReduceMaxOp : Loom_ReduceOp<"reduce_max", Loom_NumericTensor> {
  let summary = "maximum over dimensions";
}

//===----------------------------------------------------------------------===//
// Loss
//===----------------------------------------------------------------------===//

def Loom_CrossEntropyOp : Loom_InferOp<"cross_entropy", [
    DeclareOpInterfaceMethods<Loom_CostInterface, ["getFlopCount"]>]> {
  let summary = "softmax cross-entropy of logits against integer class labels";
  let description = [{
    `logits` has shape `[..., C]` (classes last), `labels` the leading shape
    `[...]` with values in `[0, C)`. The per-sample loss is
    `logsumexp(logits) - logits[label]`. Samples whose label equals
    `ignore_index` contribute nothing; `reduction = mean` divides by the
    number of samples not ignored (PyTorch's `F.cross_entropy`), `sum` adds,
    `none` returns the per-sample losses (0 where ignored).

    ```mlir
    %loss = loom.cross_entropy %logits, %labels reduction = mean ignore_index = -100
        : (tensor<16x50257xf32>, tensor<16xi64>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Loom_FloatTensor:$logits, Loom_IntTensor:$labels,
      DefaultValuedAttr<Loom_LossReduction,
                        "::mlir::loom::LossReduction::mean">:$reduction,
      OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels (`reduction` `=` $reduction^)?
    (`ignore_index` `=` $ignore_index^)? attr-dict
    `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Tensor parallelism
//===----------------------------------------------------------------------===//

def Loom_TpCopyOp : Loom_Op<"tp_copy", [Loom_DataMovement, Loom_CostInterface,
    SameOperandsAndResultType,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "identity whose gradient is summed over tensor-parallel ranks";
  let description = [{
    Megatron-LM's `f` operator: the identity in the forward pass; its
    vector-Jacobian product is `shard.all_reduce` (sum) of the cotangent
    over `grid_axes` of `grid`. `loom-tensor-parallel` puts it on the
    replicated input of a column-parallel linear layer (and
    `loom-vocab-parallel` on that of an LM head): every rank computes
    only its shard of the layer, so the input's cotangent on one rank is
    one term of a sum over the ranks.

    Its conjugate, `g` (all-reduce forward, identity backward), is
    `shard.all_reduce` itself, whose VJP is the identity (see
    `docs/training.md`, "loom-tensor-parallel").

    ```mlir
    %x_tp = loom.tp_copy %x on @mesh grid_axes = [2] : tensor<2x8x64xf32>
    ```
  }];
  let arguments = (ins Loom_Tensor:$operand, FlatSymbolRefAttr:$grid,
                       DenseI16ArrayAttr:$grid_axes);
  let results = (outs Loom_Tensor:$result);
  let assemblyFormat = "$operand `on` $grid `grid_axes` `=` $grid_axes "
                       "attr-dict `:` type($result)";
}

def Loom_GridIndexOp : Loom_Op<"grid_index", [Loom_DataMovement,
    Loom_CostInterface, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "the calling rank's index along axes of a shard.grid";
  let description = [{
    A 0-d `i64` tensor: the linear (row-major) index of the calling rank's
    coordinates along `grid_axes` of `grid`, in `[0, prod(sizes))`. The
    only op whose value differs between the ranks of one SPMD program;
    `loom-vocab-parallel` uses it to find a rank's vocabulary range in
    vocabulary-parallel embeddings and cross-entropy. It has no gradient.
    Lowered to `loomrt.grid_index` on the runtime group named like the grid
    (`tp`), whose index the runtime's `groupRank` gives.

    ```mlir
    %r = loom.grid_index on @mesh grid_axes = [2] : tensor<i64>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$grid, DenseI16ArrayAttr:$grid_axes);
  let results = (outs 0DTensorOf<[I64]>:$result);
  let assemblyFormat = "`on` $grid `grid_axes` `=` $grid_axes attr-dict `:` "
                       "type($result)";
}

#endif // LOOM_DIALECT_LOOM_IR_LOOMOPS_TD

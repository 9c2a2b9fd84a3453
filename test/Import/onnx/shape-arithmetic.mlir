// Shape arithmetic is evaluated at import time, so that the ops that need
// static shapes (Reshape, Expand, ...) get them: Shape -> Gather ->
// Unsqueeze -> Concat -> Reshape chains, ConstantOfShape, Range, Constant
// nodes, integer initializers used as shapes.
// REQUIRES: onnx

// Every foldable op on constants; the results are graph outputs.
// RUN: %loompy %S/Inputs/make_onnx.py shape_fold %t.fold.onnx
// RUN: loom-translate --import-onnx %t.fold.onnx -o - | FileCheck %s --check-prefix=FOLD
// v = [6, -7, 8], w = [2, 2, -3]
// FOLD-LABEL: func.func @main() -> (
// FOLD-NOT: loom.{{[a-z_]+}} %
// FOLD: %[[ADD:.*]] = loom.constant dense<[8, -5, 5]> : tensor<3xi64>
// FOLD-NEXT: %[[SUB:.*]] = loom.constant dense<[4, -9, 11]> : tensor<3xi64>
// FOLD-NEXT: %[[MUL:.*]] = loom.constant dense<[12, -14, -24]> : tensor<3xi64>
// Integer Div truncates toward zero.
// FOLD-NEXT: %[[DIV:.*]] = loom.constant dense<[3, -3, -2]> : tensor<3xi64>
// FOLD-NEXT: %[[NEG:.*]] = loom.constant dense<[-6, 7, -8]> : tensor<3xi64>
// FOLD-NEXT: %[[ABS:.*]] = loom.constant dense<[6, 7, 8]> : tensor<3xi64>
// FOLD-NEXT: %[[MAX:.*]] = loom.constant dense<[6, 2, 8]> : tensor<3xi64>
// FOLD-NEXT: %[[MIN:.*]] = loom.constant dense<[2, -7, -3]> : tensor<3xi64>
// FOLD-NEXT: %[[EQ:.*]] = loom.constant dense<false> : tensor<3xi1>
// FOLD-NEXT: %[[LT:.*]] = loom.constant dense<[false, true, false]> : tensor<3xi1>
// FOLD-NEXT: %[[GT:.*]] = loom.constant dense<[true, false, true]> : tensor<3xi1>
// FOLD-NEXT: %[[LE:.*]] = loom.constant dense<true> : tensor<3xi1>
// GreaterOrEqual(w, v)
// FOLD-NEXT: %[[GE:.*]] = loom.constant dense<[false, true, false]> : tensor<3xi1>
// FOLD-NEXT: %[[NOT:.*]] = loom.constant dense<[true, false, true]> : tensor<3xi1>
// Where(v < w, v, w) is the minimum.
// FOLD-NEXT: %[[WHERE:.*]] = loom.constant dense<[2, -7, -3]> : tensor<3xi64>
// Cast of [0.0, 0.5, -2.75]: to int64 truncates, to bool is "not zero".
// FOLD-NEXT: %[[F2I:.*]] = loom.constant dense<[0, 0, -2]> : tensor<3xi64>
// FOLD-NEXT: %[[F2B:.*]] = loom.constant dense<[false, true, true]> : tensor<3xi1>
// FOLD-NEXT: %[[I2F:.*]] = loom.constant dense<[6.000000e+00, -7.000000e+00, 8.000000e+00]> : tensor<3xf32>
// m = [[1, 2, 3], [4, 5, 6]]; Gather columns [2, -3] (= 0).
// FOLD-NEXT: %[[GATHER:.*]] = loom.constant dense<{{\[}}[3, 1], [6, 4]]> : tensor<2x2xi64>
// FOLD-NEXT: %[[CONCAT:.*]] = loom.constant dense<{{\[}}[1, 2, 3, 1, 2, 3], [4, 5, 6, 4, 5, 6]]> : tensor<2x6xi64>
// FOLD-NEXT: %[[UNSQ:.*]] = loom.constant dense<{{\[}}[6, -7, 8]]> : tensor<1x3xi64>
// FOLD-NEXT: %[[SQ:.*]] = loom.constant dense<[6, -7, 8]> : tensor<3xi64>
// FOLD-NEXT: %[[RESHAPE:.*]] = loom.constant dense<{{\[}}[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi64>
// v[-3::2]
// FOLD-NEXT: %[[SLICE:.*]] = loom.constant dense<[6, 8]> : tensor<2xi64>
// FOLD-NEXT: %[[ID:.*]] = loom.constant dense<[2, 2, -3]> : tensor<3xi64>
// FOLD-NEXT: %[[EXPAND:.*]] = loom.constant dense<{{\[}}[2, 2, -3], [2, 2, -3]]> : tensor<2x3xi64>
// FOLD-NEXT: return %[[ADD]], %[[SUB]], %[[MUL]], %[[DIV]], %[[NEG]], %[[ABS]], %[[MAX]], %[[MIN]], %[[EQ]], %[[LT]], %[[GT]], %[[LE]], %[[GE]], %[[NOT]], %[[WHERE]], %[[F2I]], %[[F2B]], %[[I2F]], %[[GATHER]], %[[CONCAT]], %[[UNSQ]], %[[SQ]], %[[RESHAPE]], %[[SLICE]], %[[ID]], %[[EXPAND]] :

// x.view(b, s, 4, h / 4) then .view(-1, last) of a [2, 8, 32] input, and
// Expand to Where(Equal(shape, -1), 1, shape): every shape is static.
// RUN: %loompy %S/Inputs/make_onnx.py shape_chain %t.chain.onnx
// RUN: loom-translate --import-onnx %t.chain.onnx -o - | FileCheck %s --check-prefix=CHAIN
// CHAIN-LABEL: func.func @main(%arg0: tensor<2x8x32xf32> {loom.name = "x"}, %arg1: tensor<8xf32> {loom.name = "bias"})
// CHAIN-NEXT: %[[Y:.*]] = loom.reshape %arg0 : tensor<2x8x32xf32> -> tensor<2x8x4x8xf32>
// CHAIN-NEXT: %[[Z:.*]] = loom.reshape %[[Y]] : tensor<2x8x4x8xf32> -> tensor<64x8xf32>
// Expand [8] to [1, 8], then numpy broadcasting against [64, 8].
// CHAIN-NEXT: %[[E:.*]] = loom.broadcast %arg1, dims = [1] : tensor<8xf32> -> tensor<1x8xf32>
// CHAIN-NEXT: %[[EB:.*]] = loom.broadcast %[[E]], dims = [0, 1] : tensor<1x8xf32> -> tensor<64x8xf32>
// CHAIN-NEXT: %[[OUT:.*]] = loom.add %[[Z]], %[[EB]] : tensor<64x8xf32>
// The shape values themselves: Concat(b, s, 4, 32 / 4); Concat(-1, 8); Where.
// CHAIN-NEXT: %[[T:.*]] = loom.constant dense<[2, 8, 4, 8]> : tensor<4xi64>
// CHAIN-NEXT: %[[T2:.*]] = loom.constant dense<[-1, 8]> : tensor<2xi64>
// CHAIN-NEXT: %[[ES:.*]] = loom.constant dense<[1, 8]> : tensor<2xi64>
// CHAIN-NEXT: return %[[Y]], %[[OUT]], %[[T]], %[[T2]], %[[ES]] :

// ConstantOfShape: float and int64 values, the default (0.0), and a fill
// too large to evaluate, which stays a splat constant.
// RUN: %loompy %S/Inputs/make_onnx.py constant_of_shape %t.cos.onnx
// RUN: loom-translate --import-onnx %t.cos.onnx -o - | FileCheck %s --check-prefix=COS
// COS: %[[ONES:.*]] = loom.constant dense<1.000000e+00> : tensor<2x3xf32>
// COS-NEXT: %[[PLUS:.*]] = loom.add %arg0, %[[ONES]] : tensor<2x3xf32>
// COS-NEXT: %[[BIG:.*]] = loom.constant dense<5.000000e-01> : tensor<1024x2048xf32>
// COS-NEXT: %[[SEVENS:.*]] = loom.constant dense<7> : tensor<3xi64>
// COS-NEXT: %[[ZEROS:.*]] = loom.constant dense<0.000000e+00> : tensor<3xf32>
// COS-NEXT: return %[[PLUS]], %[[SEVENS]], %[[ZEROS]], %[[BIG]] :

// Range(0, ids.shape[1], 1) gives position ids; float and descending ranges.
// RUN: %loompy %S/Inputs/make_onnx.py range %t.range.onnx
// RUN: loom-translate --import-onnx %t.range.onnx -o - | FileCheck %s --check-prefix=RANGE
// RANGE-LABEL: func.func @main(%arg0: tensor<2x6xi64> {loom.name = "ids"}, %arg1: tensor<8x4xf32> {loom.name = "wpe", loom.param})
// RANGE-NEXT: %[[POS:.*]] = loom.constant dense<[0, 1, 2, 3, 4, 5]> : tensor<6xi64>
// RANGE-NEXT: %[[EMB:.*]] = loom.gather %arg1[%[[POS]]], axis = 0 : (tensor<8x4xf32>, tensor<6xi64>) -> tensor<6x4xf32>
// RANGE-NEXT: %[[F:.*]] = loom.constant dense<[0.000000e+00, 2.500000e-01, 5.000000e-01, 7.500000e-01]> : tensor<4xf32>
// Range(10, 4, -3): ceil((4 - 10) / -3) = 2 elements.
// RANGE-NEXT: %[[DOWN:.*]] = loom.constant dense<[10, 7]> : tensor<2xi64>
// RANGE-NEXT: return %[[EMB]], %[[F]], %[[DOWN]] :

// A range of 2^21 elements is not evaluated: 5 + 3 * iota.
// RUN: %loompy %S/Inputs/make_onnx.py range_large %t.rlarge.onnx
// RUN: loom-translate --import-onnx %t.rlarge.onnx -o - | FileCheck %s --check-prefix=RLARGE
// RLARGE: %[[IOTA:.*]] = loom.iota dim = 0 : tensor<2097152xi64>
// RLARGE-NEXT: %[[THREE:.*]] = loom.constant dense<3> : tensor<2097152xi64>
// RLARGE-NEXT: %[[MUL:.*]] = loom.mul %[[IOTA]], %[[THREE]] : tensor<2097152xi64>
// RLARGE-NEXT: %[[FIVE:.*]] = loom.constant dense<5> : tensor<2097152xi64>
// RLARGE-NEXT: %[[ADD:.*]] = loom.add %[[MUL]], %[[FIVE]] : tensor<2097152xi64>
// RLARGE-NEXT: return %[[ADD]] : tensor<2097152xi64>

// Constant with value, value_float, value_floats, value_ints, value_int.
// RUN: %loompy %S/Inputs/make_onnx.py constants %t.const.onnx
// RUN: loom-translate --import-onnx %t.const.onnx -o - | FileCheck %s --check-prefix=CONST
// CONST: %[[V:.*]] = loom.constant dense<[1.500000e+00, -2.000000e+00]> : tensor<2xf32>
// CONST-NEXT: %[[VB:.*]] = loom.broadcast %[[V]], dims = [1] : tensor<2xf32> -> tensor<3x2xf32>
// CONST-NEXT: %[[A:.*]] = loom.add %arg0, %[[VB]] : tensor<3x2xf32>
// CONST-NEXT: %[[VF:.*]] = loom.constant dense<2.500000e+00> : tensor<f32>
// CONST-NEXT: %[[VFB:.*]] = loom.broadcast %[[VF]], dims = [] : tensor<f32> -> tensor<3x2xf32>
// CONST-NEXT: %[[B:.*]] = loom.mul %[[A]], %[[VFB]] : tensor<3x2xf32>
// CONST-NEXT: %[[VFS:.*]] = loom.constant dense<[2.500000e-01, 5.000000e-01]> : tensor<2xf32>
// CONST-NEXT: %[[VFSB:.*]] = loom.broadcast %[[VFS]], dims = [1] : tensor<2xf32> -> tensor<3x2xf32>
// CONST-NEXT: %[[C:.*]] = loom.sub %[[B]], %[[VFSB]] : tensor<3x2xf32>
// CONST-NEXT: %[[VI:.*]] = loom.constant dense<[1, 2, 3]> : tensor<3xi64>
// CONST-NEXT: %[[VIB:.*]] = loom.broadcast %[[VI]], dims = [1] : tensor<3xi64> -> tensor<2x3xi64>
// CONST-NEXT: %[[D:.*]] = loom.add %arg1, %[[VIB]] : tensor<2x3xi64>
// CONST-NEXT: %[[V1:.*]] = loom.constant dense<4> : tensor<i64>
// CONST-NEXT: %[[V1B:.*]] = loom.broadcast %[[V1]], dims = [] : tensor<i64> -> tensor<2x3xi64>
// CONST-NEXT: %[[E:.*]] = loom.mul %[[D]], %[[V1B]] : tensor<2x3xi64>
// A constant that is also a graph output is the same value.
// CONST-NEXT: return %[[C]], %[[E]], %[[VI]] :

// int64 initializers are program constants (a shape, indices), never
// arguments; a rank-0 float initializer is a constant too.
// RUN: %loompy %S/Inputs/make_onnx.py int_initializer_shape %t.intinit.onnx
// RUN: loom-translate --import-onnx %t.intinit.onnx -o - | FileCheck %s --check-prefix=INTINIT
// INTINIT-LABEL: func.func @main(%arg0: tensor<2x3x4xf32> {loom.name = "x"}) -> (tensor<3x2x2xf32> {loom.name = "out"})
// INTINIT-NEXT: %[[R:.*]] = loom.reshape %arg0 : tensor<2x3x4xf32> -> tensor<3x8xf32>
// idx [[0, 1], [3, -1]]: -1 of a dimension of 8 is 7.
// INTINIT-NEXT: %[[IDX:.*]] = loom.constant dense<{{\[}}[0, 1], [3, 7]]> : tensor<2x2xi64>
// INTINIT-NEXT: %[[G:.*]] = loom.gather %[[R]][%[[IDX]]], axis = 1 : (tensor<3x8xf32>, tensor<2x2xi64>) -> tensor<3x2x2xf32>
// INTINIT-NEXT: %[[HALF:.*]] = loom.constant dense<5.000000e-01> : tensor<f32>
// INTINIT-NEXT: %[[HB:.*]] = loom.broadcast %[[HALF]], dims = [] : tensor<f32> -> tensor<3x2x2xf32>
// INTINIT-NEXT: %[[M:.*]] = loom.mul %[[G]], %[[HB]] : tensor<3x2x2xf32>
// INTINIT-NEXT: return %[[M]] : tensor<3x2x2xf32>

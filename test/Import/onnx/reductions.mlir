// ReduceSum/Mean/Max: axes as an attribute (ReduceMean/Max up to opset 17)
// or an input (ReduceSum from 13, all from 18); keepdims; no axes reduces
// everything unless noop_with_empty_axes.
// REQUIRES: onnx

// RUN: %loompy %S/Inputs/make_onnx.py reduce13 %t.r13.onnx
// RUN: loom-translate --import-onnx %t.r13.onnx -o - | FileCheck %s --check-prefix=R13
// R13-LABEL: func.func @main(%arg0: tensor<2x3x4xf32> {loom.name = "x"})
// ReduceSum(x, axes=[1]) keeps dims by default.
// R13-NEXT: %[[SK:.*]] = loom.reduce_sum %arg0, dims = [1] keepdims : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
// axes [-1, 0] are dims [0, 2]; keepdims = 0.
// R13-NEXT: %[[SD:.*]] = loom.reduce_sum %arg0, dims = [0, 2] : tensor<2x3x4xf32> -> tensor<3xf32>
// No axes: every dimension.
// R13-NEXT: %[[SA:.*]] = loom.reduce_sum %arg0, dims = [0, 1, 2] keepdims : tensor<2x3x4xf32> -> tensor<1x1x1xf32>
// noop_with_empty_axes = 1 and no axes: the identity (returned as %arg0).
// ReduceMean with axes attribute [-1] at opset 13.
// R13-NEXT: %[[MA:.*]] = loom.reduce_mean %arg0, dims = [2] : tensor<2x3x4xf32> -> tensor<2x3xf32>
// R13-NEXT: %[[XA:.*]] = loom.reduce_max %arg0, dims = [1] keepdims : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
// R13-NEXT: %[[MALL:.*]] = loom.reduce_mean %arg0, dims = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
// R13-NEXT: return %[[SK]], %[[SD]], %[[SA]], %arg0, %[[MA]], %[[XA]], %[[MALL]] :

// RUN: %loompy %S/Inputs/make_onnx.py reduce18 %t.r18.onnx
// RUN: loom-translate --import-onnx %t.r18.onnx -o - | FileCheck %s --check-prefix=R18
// R18-LABEL: func.func @main(%arg0: tensor<2x3x4xf32> {loom.name = "x"}, %arg1: tensor<2x3xi64> {loom.name = "n"})
// ReduceMean axes input [1, 2].
// R18-NEXT: %[[MI:.*]] = loom.reduce_mean %arg0, dims = [1, 2] : tensor<2x3x4xf32> -> tensor<2xf32>
// ReduceMax axes input [-2].
// R18-NEXT: %[[XI:.*]] = loom.reduce_max %arg0, dims = [1] keepdims : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
// R18-NEXT: %[[MALL:.*]] = loom.reduce_mean %arg0, dims = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
// An empty axes input with noop_with_empty_axes = 1: the identity; with 0:
// every dimension.
// R18-NEXT: %[[SE:.*]] = loom.reduce_sum %arg0, dims = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
// R18-NEXT: %[[SI:.*]] = loom.reduce_sum %arg1, dims = [0] : tensor<2x3xi64> -> tensor<3xi64>
// R18-NEXT: return %[[MI]], %[[XI]], %[[MALL]], %arg0, %[[SE]], %[[SI]] :

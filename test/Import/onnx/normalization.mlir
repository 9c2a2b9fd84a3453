// Softmax/LogSoftmax (negative axes, the default -1 of opset 13+) and
// LayerNormalization (with and without bias, axis over several dimensions).
// REQUIRES: onnx

// RUN: %loompy %S/Inputs/make_onnx.py softmax %t.sm.onnx
// RUN: loom-translate --import-onnx %t.sm.onnx -o - | FileCheck %s --check-prefix=SM
// SM-LABEL: func.func @main(%arg0: tensor<2x3x4xf32> {loom.name = "x"})
// SM-NEXT: %[[D:.*]] = loom.softmax %arg0, axis = 2 : tensor<2x3x4xf32>
// SM-NEXT: %[[N:.*]] = loom.softmax %arg0, axis = 1 : tensor<2x3x4xf32>
// SM-NEXT: %[[Z:.*]] = loom.softmax %arg0, axis = 0 : tensor<2x3x4xf32>
// SM-NEXT: %[[LSN:.*]] = loom.log_softmax %arg0, axis = 0 : tensor<2x3x4xf32>
// SM-NEXT: %[[LD:.*]] = loom.log_softmax %arg0, axis = 2 : tensor<2x3x4xf32>
// SM-NEXT: return %[[D]], %[[N]], %[[Z]], %[[LSN]], %[[LD]] :

// RUN: %loompy %S/Inputs/make_onnx.py layer_norm %t.ln.onnx
// RUN: loom-translate --import-onnx %t.ln.onnx -o - | FileCheck %s --check-prefix=LN
// LN-LABEL: func.func @main(%arg0: tensor<2x3x4xf32> {loom.name = "x"}, %arg1: tensor<4xf32> {loom.name = "scale", loom.param}, %arg2: tensor<4xf32> {loom.name = "bias", loom.param}, %arg3: tensor<3x4xf32> {loom.name = "scale2", loom.param}, %arg4: tensor<1xf32> {loom.name = "one", loom.param})
// Default axis -1 and epsilon 1e-5 (as float32).
// LN-NEXT: %[[NORM:.*]] = loom.layer_norm %arg0 scale %arg1 bias %arg2 axis = 2 epsilon = 9.9999997473787516E-6 : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
// axis 1: normalise over [3, 4], scale [3, 4], no bias, epsilon 1e-6.
// LN-NEXT: %[[NB:.*]] = loom.layer_norm %arg0 scale %arg3 axis = 1 epsilon = 9.9999999747524271E-7 : (tensor<2x3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
// An empty bias input name is no bias.
// LN-NEXT: %[[EB:.*]] = loom.layer_norm %arg0 scale %arg1 axis = 2 epsilon = 9.9999997473787516E-6 : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
// A scale of shape [1] broadcasts to the normalised shape [4].
// LN-NEXT: %[[S:.*]] = loom.broadcast %arg4, dims = [0] : tensor<1xf32> -> tensor<4xf32>
// LN-NEXT: %[[SS:.*]] = loom.layer_norm %arg0 scale %[[S]] axis = 2 epsilon = 9.9999997473787516E-6 : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
// LN-NEXT: return %[[NORM]], %[[NB]], %[[EB]], %[[SS]] :

// SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss(LogSoftmax(x)) become
// loom.cross_entropy; ONNX's class dimension 1 is moved last first.
// REQUIRES: onnx

// RUN: %loompy %S/Inputs/make_onnx.py sce_2d %t.sce2.onnx
// RUN: loom-translate --import-onnx %t.sce2.onnx -o - | FileCheck %s --check-prefix=SCE2
// SCE2-LABEL: func.func @main(%arg0: tensor<4x10xf32> {loom.name = "scores"}, %arg1: tensor<4xi64> {loom.name = "labels"}) -> (tensor<f32> {loom.name = "loss"})
// [N, C]: classes already last; reduction mean (the default), no ignore_index.
// SCE2-NEXT: %[[L:.*]] = loom.cross_entropy %arg0, %arg1 : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
// SCE2-NEXT: return %[[L]] : tensor<f32>

// RUN: %loompy %S/Inputs/make_onnx.py sce_3d %t.sce3.onnx
// RUN: loom-translate --import-onnx %t.sce3.onnx -o - | FileCheck %s --check-prefix=SCE3
// SCE3-LABEL: func.func @main(%arg0: tensor<2x5x3xf32> {loom.name = "scores"}, %arg1: tensor<2x3xi64> {loom.name = "labels"}, %arg2: tensor<2x5x3x4xf32> {loom.name = "scores4"}, %arg3: tensor<2x3x4xi32> {loom.name = "labels4"})
// SCE3-SAME: -> (tensor<f32> {loom.name = "sum"}, tensor<2x3xf32> {loom.name = "none"}, tensor<f32> {loom.name = "mean"}, tensor<f32> {loom.name = "mean4"})
// [N, C, D] = [2, 5, 3] -> [N, D, C] = [2, 3, 5], labels [N, D].
// SCE3-NEXT: %[[T0:.*]] = loom.transpose %arg0, permutation = [0, 2, 1] : tensor<2x5x3xf32> -> tensor<2x3x5xf32>
// SCE3-NEXT: %[[SUM:.*]] = loom.cross_entropy %[[T0]], %arg1 reduction = sum ignore_index = -1 : (tensor<2x3x5xf32>, tensor<2x3xi64>) -> tensor<f32>
// SCE3-NEXT: %[[T1:.*]] = loom.transpose %arg0, permutation = [0, 2, 1] : tensor<2x5x3xf32> -> tensor<2x3x5xf32>
// reduction none: one loss per label.
// SCE3-NEXT: %[[NONE:.*]] = loom.cross_entropy %[[T1]], %arg1 reduction = none : (tensor<2x3x5xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
// SCE3-NEXT: %[[T2:.*]] = loom.transpose %arg0, permutation = [0, 2, 1] : tensor<2x5x3xf32> -> tensor<2x3x5xf32>
// SCE3-NEXT: %[[MEAN:.*]] = loom.cross_entropy %[[T2]], %arg1 ignore_index = 3 : (tensor<2x3x5xf32>, tensor<2x3xi64>) -> tensor<f32>
// [N, C, D1, D2] = [2, 5, 3, 4] -> [2, 3, 4, 5]; int32 labels.
// SCE3-NEXT: %[[T3:.*]] = loom.transpose %arg2, permutation = [0, 2, 3, 1] : tensor<2x5x3x4xf32> -> tensor<2x3x4x5xf32>
// SCE3-NEXT: %[[MEAN4:.*]] = loom.cross_entropy %[[T3]], %arg3 : (tensor<2x3x4x5xf32>, tensor<2x3x4xi32>) -> tensor<f32>
// SCE3-NEXT: return %[[SUM]], %[[NONE]], %[[MEAN]], %[[MEAN4]] :

// NLL(LogSoftmax(x, axis = 1)) is the cross-entropy of x; the LogSoftmax
// itself is left out when nothing else uses it.
// RUN: %loompy %S/Inputs/make_onnx.py nll %t.nll.onnx
// RUN: loom-translate --import-onnx %t.nll.onnx -o - | FileCheck %s --check-prefix=NLL
// NLL-LABEL: func.func @main(%arg0: tensor<4x10xf32> {loom.name = "scores"}, %arg1: tensor<4xi64> {loom.name = "labels"}, %arg2: tensor<2x5x3xf32> {loom.name = "scores3"}, %arg3: tensor<2x3xi64> {loom.name = "labels3"})
// NLL-NOT: log_softmax
// NLL-NEXT: %[[L:.*]] = loom.cross_entropy %arg0, %arg1 : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
// axis -2 of a rank-3 input is the class axis 1.
// NLL-NEXT: %[[T:.*]] = loom.transpose %arg2, permutation = [0, 2, 1] : tensor<2x5x3xf32> -> tensor<2x3x5xf32>
// NLL-NEXT: %[[L3:.*]] = loom.cross_entropy %[[T]], %arg3 reduction = none ignore_index = 0 : (tensor<2x3x5xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
// NLL-NEXT: return %[[L]], %[[L3]] :
// NLL-NOT: log_softmax

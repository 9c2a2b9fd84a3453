// Shape and data-movement ops: Reshape (0 and -1), Transpose, Flatten,
// Expand, Concat, Slice, Squeeze/Unsqueeze (axes inputs, opsets 13 and 21),
// Split (split input at 13, num_outputs at 18), Gather, Shape.
// REQUIRES: onnx

// RUN: %loompy %S/Inputs/make_onnx.py reshape %t.reshape.onnx
// RUN: loom-translate --import-onnx %t.reshape.onnx -o - | FileCheck %s --check-prefix=RESHAPE
// RESHAPE-LABEL: func.func @main(%arg0: tensor<2x3x4xf32> {loom.name = "x"})
// [0, -1]: keep dim 0 (2), infer 24 / 2 = 12.
// RESHAPE-NEXT: %[[R0:.*]] = loom.reshape %arg0 : tensor<2x3x4xf32> -> tensor<2x12xf32>
// [-1, 0, 2]: copy dim 1 (3), infer 24 / 6 = 4.
// RESHAPE-NEXT: %[[R1:.*]] = loom.reshape %arg0 : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
// RESHAPE-NEXT: %[[R2:.*]] = loom.reshape %arg0 : tensor<2x3x4xf32> -> tensor<24xf32>
// [4, 0, 2] with allowzero = 0: the 0 copies dim 1. The same shape is no op.
// RESHAPE-NEXT: %[[R4:.*]] = loom.reshape %arg0 : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
// RESHAPE-NEXT: return %[[R0]], %[[R1]], %[[R2]], %arg0, %[[R4]] :

// RUN: %loompy %S/Inputs/make_onnx.py transpose_flatten %t.tf.onnx
// RUN: loom-translate --import-onnx %t.tf.onnx -o - | FileCheck %s --check-prefix=TF
// Without perm, Transpose reverses the dimensions.
// TF: %[[T0:.*]] = loom.transpose %arg0, permutation = [2, 1, 0] : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
// TF-NEXT: %[[T1:.*]] = loom.transpose %arg0, permutation = [0, 2, 1] : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
// Flatten axis 1 (default), 0, -1 (= 2) and 3 (= rank).
// TF-NEXT: %[[F1:.*]] = loom.reshape %arg0 : tensor<2x3x4xf32> -> tensor<2x12xf32>
// TF-NEXT: %[[F0:.*]] = loom.reshape %arg0 : tensor<2x3x4xf32> -> tensor<1x24xf32>
// TF-NEXT: %[[FN:.*]] = loom.reshape %arg0 : tensor<2x3x4xf32> -> tensor<6x4xf32>
// TF-NEXT: %[[F3:.*]] = loom.reshape %arg0 : tensor<2x3x4xf32> -> tensor<24x1xf32>
// TF-NEXT: return %[[T0]], %[[T1]], %[[F1]], %[[F0]], %[[FN]], %[[F3]] :

// RUN: %loompy %S/Inputs/make_onnx.py expand_concat %t.ec.onnx
// RUN: loom-translate --import-onnx %t.ec.onnx -o - | FileCheck %s --check-prefix=EC
// EC-LABEL: func.func @main(%arg0: tensor<3x1xf32> {loom.name = "x"}, %arg1: tensor<2x3xf32> {loom.name = "a"}, %arg2: tensor<2x5xf32> {loom.name = "b"})
// Expand [3,1] to [2,3,4].
// EC-NEXT: %[[E3:.*]] = loom.broadcast %arg0, dims = [1, 2] : tensor<3x1xf32> -> tensor<2x3x4xf32>
// Expand to [1] broadcasts both ways: [3,1] stays (no op). To [4]: [3,4].
// EC-NEXT: %[[EW:.*]] = loom.broadcast %arg0, dims = [0, 1] : tensor<3x1xf32> -> tensor<3x4xf32>
// Concat axis -1 is dim 1.
// EC-NEXT: %[[C1:.*]] = loom.concat %arg1, %arg2 dim = 1 : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
// EC-NEXT: %[[C0:.*]] = loom.concat %arg1, %arg1, %arg1 dim = 0 : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<6x3xf32>
// EC-NEXT: return %[[E3]], %arg0, %[[EW]], %[[C1]], %[[C0]] :

// Slice on x[10, 8]; loom.slice takes [start, limit) with positive strides.
// RUN: %loompy %S/Inputs/make_onnx.py slice %t.slice.onnx
// RUN: loom-translate --import-onnx %t.slice.onnx -o - | FileCheck %s --check-prefix=SLICE
// x[-3:-1]: 10 - 3 = 7 to 10 - 1 = 9 on axis 0.
// SLICE: %[[S0:.*]] = loom.slice %arg0, start = [7, 0], limit = [9, 8], strides = [1, 1] : tensor<10x8xf32> -> tensor<2x8xf32>
// axes [1, 0]: axis 1 from 1 to INT64_MAX (clamped to 8) step 2 -> 1, 3, 5, 7;
// axis 0 from -100 (clamped to 0) to 6.
// SLICE-NEXT: %[[S1:.*]] = loom.slice %arg0, start = [0, 1], limit = [6, 8], strides = [1, 2] : tensor<10x8xf32> -> tensor<6x4xf32>
// No axes: starts/ends apply to axes 0, 1, ...
// SLICE-NEXT: %[[S2:.*]] = loom.slice %arg0, start = [0, 0], limit = [10, 8], strides = [1, 1] : tensor<10x8xf32> -> tensor<10x8xf32>
// start 5 > end 2: empty.
// SLICE-NEXT: %[[S3:.*]] = loom.slice %arg0, start = [5, 0], limit = [5, 8], strides = [1, 1] : tensor<10x8xf32> -> tensor<0x8xf32>
// axis -1 from 2 to -2 (= 6) step 3 -> 2, 5.
// SLICE-NEXT: %[[S4:.*]] = loom.slice %arg0, start = [0, 2], limit = [10, 6], strides = [1, 3] : tensor<10x8xf32> -> tensor<10x2xf32>
// SLICE-NEXT: return %[[S0]], %[[S1]], %[[S2]], %[[S3]], %[[S4]] :

// Squeeze/Unsqueeze take their axes as an input from opset 13 on; both
// opsets import alike.
// RUN: %loompy %S/Inputs/make_onnx.py squeeze13 %t.sq13.onnx
// RUN: loom-translate --import-onnx %t.sq13.onnx -o - | FileCheck %s --check-prefix=SQ
// RUN: %loompy %S/Inputs/make_onnx.py squeeze21 %t.sq21.onnx
// RUN: loom-translate --import-onnx %t.sq21.onnx -o - | FileCheck %s --check-prefix=SQ
// SQ-LABEL: func.func @main(%arg0: tensor<1x3x1x4xf32> {loom.name = "x"})
// axes [0, -2] drop dims 0 and 2.
// SQ-NEXT: %[[SQ:.*]] = loom.reshape %arg0 : tensor<1x3x1x4xf32> -> tensor<3x4xf32>
// No axes: every size-1 dimension.
// SQ-NEXT: %[[SQALL:.*]] = loom.reshape %arg0 : tensor<1x3x1x4xf32> -> tensor<3x4xf32>
// Unsqueeze [3,4] at [0, -1] (-1 of the output rank 4 is 3).
// SQ-NEXT: %[[UNSQ:.*]] = loom.reshape %[[SQ]] : tensor<3x4xf32> -> tensor<1x3x4x1xf32>
// SQ-NEXT: %[[MID:.*]] = loom.reshape %[[SQ]] : tensor<3x4xf32> -> tensor<3x1x4xf32>
// SQ-NEXT: return %[[SQ]], %[[SQALL]], %[[UNSQ]], %[[MID]] :

// RUN: %loompy %S/Inputs/make_onnx.py split13 %t.split13.onnx
// RUN: loom-translate --import-onnx %t.split13.onnx -o - | FileCheck %s --check-prefix=SPLIT13
// SPLIT13: %[[S:.*]]:2 = loom.split %arg0, dim = 1, sizes = [3, 7] : tensor<2x10xf32> -> tensor<2x3xf32>, tensor<2x7xf32>
// Without split sizes: equal pieces, one per output (axis -1 is 1).
// SPLIT13-NEXT: %[[E:.*]]:2 = loom.split %arg0, dim = 1, sizes = [5, 5] : tensor<2x10xf32> -> tensor<2x5xf32>, tensor<2x5xf32>
// SPLIT13-NEXT: return %[[S]]#0, %[[S]]#1, %[[E]]#0, %[[E]]#1 :

// RUN: %loompy %S/Inputs/make_onnx.py split18 %t.split18.onnx
// RUN: loom-translate --import-onnx %t.split18.onnx -o - | FileCheck %s --check-prefix=SPLIT18
// num_outputs = 3 of 10: pieces of ceil(10 / 3) = 4, the last smaller.
// SPLIT18: %[[N:.*]]:3 = loom.split %arg0, dim = 1, sizes = [4, 4, 2] : tensor<2x10xf32> -> tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x2xf32>
// SPLIT18-NEXT: %[[R:.*]]:2 = loom.split %arg0, dim = 0, sizes = [1, 1] : tensor<2x10xf32> -> tensor<1x10xf32>, tensor<1x10xf32>
// SPLIT18-NEXT: %[[Z:.*]]:2 = loom.split %arg0, dim = 1, sizes = [6, 4] : tensor<2x10xf32> -> tensor<2x6xf32>, tensor<2x4xf32>
// SPLIT18-NEXT: return %[[N]]#0, %[[N]]#1, %[[N]]#2, %[[R]]#0, %[[R]]#1, %[[Z]]#0, %[[Z]]#1 :

// RUN: %loompy %S/Inputs/make_onnx.py gather %t.gather.onnx
// RUN: loom-translate --import-onnx %t.gather.onnx -o - | FileCheck %s --check-prefix=GATHER
// GATHER-LABEL: func.func @main(%arg0: tensor<2x3xi64> {loom.name = "ids"}, %arg1: tensor<3x5xf32> {loom.name = "x"}, %arg2: tensor<2xi32> {loom.name = "ids32"}, %arg3: tensor<10x4xf32> {loom.name = "table", loom.param})
// An embedding lookup: [10,4][[2,3]] -> [2,3,4]. Run-time indices may be
// negative in ONNX: idx < 0 ? idx + 10 : idx.
// GATHER-NEXT: %[[ZERO:.*]] = loom.constant dense<0> : tensor<2x3xi64>
// GATHER-NEXT: %[[TEN:.*]] = loom.constant dense<10> : tensor<2x3xi64>
// GATHER-NEXT: %[[NEG:.*]] = loom.compare lt, %arg0, %[[ZERO]] : (tensor<2x3xi64>, tensor<2x3xi64>) -> tensor<2x3xi1>
// GATHER-NEXT: %[[WRAP:.*]] = loom.add %arg0, %[[TEN]] : tensor<2x3xi64>
// GATHER-NEXT: %[[IDX:.*]] = loom.select %[[NEG]], %[[WRAP]], %arg0 : tensor<2x3xi1>, tensor<2x3xi64>
// GATHER-NEXT: %[[EMB:.*]] = loom.gather %arg3[%[[IDX]]], axis = 0 : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
// A constant index -1 is row 9; a rank-0 index drops the axis.
// GATHER-NEXT: %[[NINE:.*]] = loom.constant dense<9> : tensor<i64>
// GATHER-NEXT: %[[LAST:.*]] = loom.gather %arg3[%[[NINE]]], axis = 0 : (tensor<10x4xf32>, tensor<i64>) -> tensor<4xf32>
// Columns [0, -2] of a [3,5]: 0 and 3.
// GATHER-NEXT: %[[COLS:.*]] = loom.constant dense<[0, 3]> : tensor<2xi64>
// GATHER-NEXT: %[[G1:.*]] = loom.gather %arg1[%[[COLS]]], axis = 1 : (tensor<3x5xf32>, tensor<2xi64>) -> tensor<3x2xf32>
// GATHER:      %[[IDX32:.*]] = loom.select {{.*}} : tensor<2xi1>, tensor<2xi32>
// GATHER-NEXT: %[[G2:.*]] = loom.gather %arg1[%[[IDX32]]], axis = 1 : (tensor<3x5xf32>, tensor<2xi32>) -> tensor<3x2xf32>
// GATHER-NEXT: return %[[EMB]], %[[LAST]], %[[G1]], %[[G2]] :

// Shape (start/end since opset 15) is known at import time.
// RUN: %loompy %S/Inputs/make_onnx.py shape %t.shape.onnx
// RUN: loom-translate --import-onnx %t.shape.onnx -o - | FileCheck %s --check-prefix=SHAPE
// SHAPE-LABEL: func.func @main(%arg0: tensor<2x3x4x5xf32> {loom.name = "x"})
// SHAPE-NEXT: %[[FULL:.*]] = loom.constant dense<[2, 3, 4, 5]> : tensor<4xi64>
// start 1, end -1: dims 1 and 2.
// SHAPE-NEXT: %[[MID:.*]] = loom.constant dense<[3, 4]> : tensor<2xi64>
// start -2: the last two.
// SHAPE-NEXT: %[[TAIL:.*]] = loom.constant dense<[4, 5]> : tensor<2xi64>
// start -10, end 10 clamp to the whole shape.
// SHAPE-NEXT: %[[CLAMPED:.*]] = loom.constant dense<[2, 3, 4, 5]> : tensor<4xi64>
// start 3 > end 1: empty.
// SHAPE-NEXT: %[[NONE:.*]] = loom.constant dense<> : tensor<0xi64>
// SHAPE-NEXT: return %[[FULL]], %[[MID]], %[[TAIL]], %[[CLAMPED]], %[[NONE]] :

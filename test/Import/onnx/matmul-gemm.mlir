// MatMul (numpy matmul: 2-D, batched with broadcast batch dimensions, 1-D
// vector operands) and Gemm (transA/transB, alpha/beta, broadcast C) become
// loom.dot_general; the contracting dimensions encode the transposes.
// REQUIRES: onnx

// RUN: %loompy %S/Inputs/make_onnx.py matmul %t.mm.onnx
// RUN: loom-translate --import-onnx %t.mm.onnx -o - | FileCheck %s --check-prefix=MM
// MM-LABEL: func.func @main(%arg0: tensor<4x8xf32> {loom.name = "a"}, %arg1: tensor<8x5xf32> {loom.name = "b"}, %arg2: tensor<2x4x8xf32> {loom.name = "a3"}, %arg3: tensor<2x3x4x8xf32> {loom.name = "a4"}, %arg4: tensor<3x8x5xf32> {loom.name = "b3"}, %arg5: tensor<2x1x4x8xf32> {loom.name = "a4b"}, %arg6: tensor<2x5x6xf32> {loom.name = "c"}, %arg7: tensor<8xf32> {loom.name = "v"})
// MM-SAME: -> (tensor<4x5xf32> {loom.name = "mm_2d"}, tensor<2x4x5xf32> {loom.name = "mm_3d_2d"}, tensor<2x3x4x5xf32> {loom.name = "mm_batched"}, tensor<2x3x4x5xf32> {loom.name = "mm_batched_both"}, tensor<2x8x6xf32> {loom.name = "mm_2d_3d"}, tensor<5xf32> {loom.name = "mm_vec_mat"}, tensor<4xf32> {loom.name = "mm_mat_vec"}, tensor<f32> {loom.name = "mm_dot"}, tensor<3x5xf32> {loom.name = "mm_vec_batched"}, tensor<2x4xf32> {loom.name = "mm_batched_vec"})
// [4,8] x [8,5]: K is lhs dim 1, rhs dim 0.
// MM-NEXT: %[[MM2D:.*]] = loom.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
// [2,4,8] x [8,5]: a 2-D rhs needs no batch dimensions, the lhs keeps its leading ones.
// MM-NEXT: %[[MM3D:.*]] = loom.dot_general %arg2, %arg1, contracting_dims = [2] x [0] : (tensor<2x4x8xf32>, tensor<8x5xf32>) -> tensor<2x4x5xf32>
// [2,3,4,8] x [3,8,5]: the rhs batch [3] broadcasts to [2,3].
// MM-NEXT: %[[B3:.*]] = loom.broadcast %arg4, dims = [1, 2, 3] : tensor<3x8x5xf32> -> tensor<2x3x8x5xf32>
// MM-NEXT: %[[BATCHED:.*]] = loom.dot_general %arg3, %[[B3]], batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] : (tensor<2x3x4x8xf32>, tensor<2x3x8x5xf32>) -> tensor<2x3x4x5xf32>
// [2,1,4,8] x [3,8,5]: both batch shapes broadcast to [2,3].
// MM-NEXT: %[[A4B:.*]] = loom.broadcast %arg5, dims = [0, 1, 2, 3] : tensor<2x1x4x8xf32> -> tensor<2x3x4x8xf32>
// MM-NEXT: %[[B3B:.*]] = loom.broadcast %arg4, dims = [1, 2, 3] : tensor<3x8x5xf32> -> tensor<2x3x8x5xf32>
// MM-NEXT: %[[BOTH:.*]] = loom.dot_general %[[A4B]], %[[B3B]], batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] : (tensor<2x3x4x8xf32>, tensor<2x3x8x5xf32>) -> tensor<2x3x4x5xf32>
// [8,5] x [2,5,6]: a 2-D lhs against a batched rhs.
// MM-NEXT: %[[B2:.*]] = loom.broadcast %arg1, dims = [1, 2] : tensor<8x5xf32> -> tensor<2x8x5xf32>
// MM-NEXT: %[[MM23:.*]] = loom.dot_general %[[B2]], %arg6, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x8x5xf32>, tensor<2x5x6xf32>) -> tensor<2x8x6xf32>
// [8] x [8,5]: the vector becomes [1,8], the 1 is dropped from the result.
// MM-NEXT: %[[V1:.*]] = loom.reshape %arg7 : tensor<8xf32> -> tensor<1x8xf32>
// MM-NEXT: %[[VM:.*]] = loom.dot_general %[[V1]], %arg1, contracting_dims = [1] x [0] : (tensor<1x8xf32>, tensor<8x5xf32>) -> tensor<1x5xf32>
// MM-NEXT: %[[VMR:.*]] = loom.reshape %[[VM]] : tensor<1x5xf32> -> tensor<5xf32>
// [4,8] x [8]: the vector becomes [8,1].
// MM-NEXT: %[[V2:.*]] = loom.reshape %arg7 : tensor<8xf32> -> tensor<8x1xf32>
// MM-NEXT: %[[MV:.*]] = loom.dot_general %arg0, %[[V2]], contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x1xf32>) -> tensor<4x1xf32>
// MM-NEXT: %[[MVR:.*]] = loom.reshape %[[MV]] : tensor<4x1xf32> -> tensor<4xf32>
// [8] x [8]: a dot product, rank 0.
// MM-NEXT: %[[V3:.*]] = loom.reshape %arg7 : tensor<8xf32> -> tensor<1x8xf32>
// MM-NEXT: %[[V4:.*]] = loom.reshape %arg7 : tensor<8xf32> -> tensor<8x1xf32>
// MM-NEXT: %[[DOT:.*]] = loom.dot_general %[[V3]], %[[V4]], contracting_dims = [1] x [0] : (tensor<1x8xf32>, tensor<8x1xf32>) -> tensor<1x1xf32>
// MM-NEXT: %[[DOTR:.*]] = loom.reshape %[[DOT]] : tensor<1x1xf32> -> tensor<f32>
// [8] x [3,8,5]: [1,8] broadcast over the batch, then [3,1,5] -> [3,5].
// MM-NEXT: %[[V5:.*]] = loom.reshape %arg7 : tensor<8xf32> -> tensor<1x8xf32>
// MM-NEXT: %[[V5B:.*]] = loom.broadcast %[[V5]], dims = [1, 2] : tensor<1x8xf32> -> tensor<3x1x8xf32>
// MM-NEXT: %[[VB:.*]] = loom.dot_general %[[V5B]], %arg4, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<3x1x8xf32>, tensor<3x8x5xf32>) -> tensor<3x1x5xf32>
// MM-NEXT: %[[VBR:.*]] = loom.reshape %[[VB]] : tensor<3x1x5xf32> -> tensor<3x5xf32>
// [2,4,8] x [8] -> [2,4].
// MM-NEXT: %[[V6:.*]] = loom.reshape %arg7 : tensor<8xf32> -> tensor<8x1xf32>
// MM-NEXT: %[[BV:.*]] = loom.dot_general %arg2, %[[V6]], contracting_dims = [2] x [0] : (tensor<2x4x8xf32>, tensor<8x1xf32>) -> tensor<2x4x1xf32>
// MM-NEXT: %[[BVR:.*]] = loom.reshape %[[BV]] : tensor<2x4x1xf32> -> tensor<2x4xf32>
// MM-NEXT: return %[[MM2D]], %[[MM3D]], %[[BATCHED]], %[[BOTH]], %[[MM23]], %[[VMR]], %[[MVR]], %[[DOTR]], %[[VBR]], %[[BVR]] :

// Gemm: Y = alpha * op(A) op(B) + beta * C, with op(X) = X^T when transX.
// RUN: %loompy %S/Inputs/make_onnx.py gemm %t.gemm.onnx
// RUN: loom-translate --import-onnx %t.gemm.onnx -o - | FileCheck %s --check-prefix=GEMM
// GEMM-LABEL: func.func @main(%arg0: tensor<4x8xf32> {loom.name = "a"}, %arg1: tensor<8x4xf32> {loom.name = "at"}, %arg2: tensor<8x5xf32> {loom.name = "b"}, %arg3: tensor<5x8xf32> {loom.name = "bt"}, %arg4: tensor<5xf32> {loom.name = "c1"}, %arg5: tensor<4x1xf32> {loom.name = "c2"}, %arg6: tensor<f32> {loom.name = "c0"}, %arg7: tensor<4x5xf32> {loom.name = "cf"})
// transA = 0, transB = 0: A[4,8] B[8,5] contract A1 with B0.
// GEMM-NEXT: %[[NN:.*]] = loom.dot_general %arg0, %arg2, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
// transA = 1: A is [K,M] = [8,4], contract A0.
// GEMM-NEXT: %[[TN:.*]] = loom.dot_general %arg1, %arg2, contracting_dims = [0] x [0] : (tensor<8x4xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
// transB = 1: B is [N,K] = [5,8], contract B1.
// GEMM-NEXT: %[[NT:.*]] = loom.dot_general %arg0, %arg3, contracting_dims = [1] x [1] : (tensor<4x8xf32>, tensor<5x8xf32>) -> tensor<4x5xf32>
// Both transposed, alpha = 0.5, beta = 2, C = [5] along the columns.
// GEMM-NEXT: %[[TT:.*]] = loom.dot_general %arg1, %arg3, contracting_dims = [0] x [1] : (tensor<8x4xf32>, tensor<5x8xf32>) -> tensor<4x5xf32>
// GEMM-NEXT: %[[ALPHA:.*]] = loom.constant dense<5.000000e-01> : tensor<4x5xf32>
// GEMM-NEXT: %[[SCALED:.*]] = loom.mul %[[TT]], %[[ALPHA]] : tensor<4x5xf32>
// GEMM-NEXT: %[[C1:.*]] = loom.broadcast %arg4, dims = [1] : tensor<5xf32> -> tensor<4x5xf32>
// GEMM-NEXT: %[[BETA:.*]] = loom.constant dense<2.000000e+00> : tensor<4x5xf32>
// GEMM-NEXT: %[[C1S:.*]] = loom.mul %[[C1]], %[[BETA]] : tensor<4x5xf32>
// GEMM-NEXT: %[[TTY:.*]] = loom.add %[[SCALED]], %[[C1S]] : tensor<4x5xf32>
// C = [4,1]: one bias per row.
// GEMM-NEXT: %[[D2:.*]] = loom.dot_general %arg0, %arg2, contracting_dims = [1] x [0]
// GEMM-NEXT: %[[C2:.*]] = loom.broadcast %arg5, dims = [0, 1] : tensor<4x1xf32> -> tensor<4x5xf32>
// GEMM-NEXT: %[[COL:.*]] = loom.add %[[D2]], %[[C2]] : tensor<4x5xf32>
// C scalar, beta = 0.25 (alpha = 1 multiplies nothing).
// GEMM-NEXT: %[[D3:.*]] = loom.dot_general %arg0, %arg2, contracting_dims = [1] x [0]
// GEMM-NEXT: %[[C0:.*]] = loom.broadcast %arg6, dims = [] : tensor<f32> -> tensor<4x5xf32>
// GEMM-NEXT: %[[QUARTER:.*]] = loom.constant dense<2.500000e-01> : tensor<4x5xf32>
// GEMM-NEXT: %[[C0S:.*]] = loom.mul %[[C0]], %[[QUARTER]] : tensor<4x5xf32>
// GEMM-NEXT: %[[SCALAR:.*]] = loom.add %[[D3]], %[[C0S]] : tensor<4x5xf32>
// C of the result's shape: added as it is.
// GEMM-NEXT: %[[D4:.*]] = loom.dot_general %arg0, %arg2, contracting_dims = [1] x [0]
// GEMM-NEXT: %[[FULL:.*]] = loom.add %[[D4]], %arg7 : tensor<4x5xf32>
// GEMM-NEXT: return %[[NN]], %[[TN]], %[[NT]], %[[TTY]], %[[COL]], %[[SCALAR]], %[[FULL]] :

// RUN: loom-opt %s -split-input-file -convert-loom-to-loomrt | FileCheck %s

// Results become buffer arguments; the matmul is a gemm; broadcast + add +
// gelu fuse into one kernel that reads the bias with stride 0 on dim 0;
// the loss is written straight into its result buffer.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[W:.*]]: memref<4x8xf32> {loom.name = "w1", loom.param}
// CHECK-SAME: %[[B:.*]]: memref<8xf32>
// CHECK-SAME: %[[X:.*]]: memref<2x4xf32>
// CHECK-SAME: %[[Y:.*]]: memref<2xi64>
// CHECK-SAME: %[[LOSS:.*]]: memref<f32> {loom.name = "loss", loomrt.result = 0 : i64})
// CHECK-SAME: loomrt.num_inputs = 4
// CHECK: %[[H:.*]] = loomrt.alloc {category = "activation"} : memref<2x8xf32>
// CHECK: loomrt.gemm ins(%[[X]], %[[W]] : {{.*}}) outs(%[[H]] : {{.*}}) {{{.*}}k = 4 : i64, m = 2 : i64, n = 8 : i64, origin = "dot_general", trans_a = false, trans_b = false}
// CHECK: %[[G:.*]] = loomrt.alloc
// CHECK: loomrt.kernel ins(%[[H]], %[[B]] : memref<2x8xf32>, memref<8xf32>) outs(%[[G]] : memref<2x8xf32>) attributes {in_strides = [array<i64: 8, 1>, array<i64: 0, 1>], origin = "add+gelu"}
// CHECK: arith.addf
// CHECK: math.erf
// CHECK: loomrt.yield
// CHECK: loomrt.cross_entropy "mean" ins(%[[G]], %[[Y]] : {{.*}}) outs(%[[LOSS]] : memref<f32>)
// CHECK-NEXT: return
func.func @main(%w1: tensor<4x8xf32> {loom.name = "w1", loom.param}, %b1: tensor<8xf32> {loom.name = "b1", loom.param},
                %x: tensor<2x4xf32> {loom.name = "x"}, %y: tensor<2xi64> {loom.name = "y"}) -> (tensor<f32> {loom.name = "loss"}) {
  %h = loom.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
  %bb = loom.broadcast %b1, dims = [1] : tensor<8xf32> -> tensor<2x8xf32>
  %a = loom.add %h, %bb : tensor<2x8xf32>
  %g = loom.gelu %a : tensor<2x8xf32>
  %l = loom.cross_entropy %g, %y : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A value used twice is materialised; splat constants become scalars; a
// contraction over lhs dim 0 uses BLAS's transpose instead of a copy; a
// reshape is a view; a returned argument is copied into its result.
// CHECK-LABEL: func.func @shared
// CHECK: %[[E:.*]] = loomrt.alloc {{.*}} : memref<3x2xf32>
// CHECK: loomrt.kernel ins(%arg0 : memref<3x2xf32>) outs(%[[E]] : memref<3x2xf32>) attributes {origin = "exp"}
// CHECK: loomrt.kernel ins(%[[E]] : memref<3x2xf32>) outs(%{{.*}} : memref<3x2xf32>) attributes {origin = "mul+add"}
// CHECK: arith.constant 2.0
// CHECK: loomrt.gemm {{.*}}trans_a = true, trans_b = false
// CHECK: %[[V:.*]] = loomrt.view %{{.*}} : memref<2x2xf32> to memref<4xf32>
// CHECK: loomrt.copy ins(%[[V]] : memref<4xf32>) outs(%arg1 : memref<4xf32>)
// CHECK: loomrt.copy ins(%arg0 : memref<3x2xf32>) outs(%arg2 : memref<3x2xf32>) {origin = "result"
func.func @shared(%x: tensor<3x2xf32>) -> (tensor<4xf32>, tensor<3x2xf32>) {
  %e = loom.exp %x : tensor<3x2xf32>
  %two = loom.constant dense<2.0> : tensor<3x2xf32>
  %m = loom.mul %e, %e : tensor<3x2xf32>
  %a = loom.add %m, %two : tensor<3x2xf32>
  %d = loom.dot_general %a, %e, contracting_dims = [0] x [0] : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %r = loom.reshape %d : tensor<2x2xf32> -> tensor<4xf32>
  return %r, %x : tensor<4xf32>, tensor<3x2xf32>
}

// -----

// Data movement: transpose and slice are strided copies, concat copies
// each input at its offset, reductions are loops.
// CHECK-LABEL: func.func @movement
// CHECK: loomrt.copy {{.*}}origin = "transpose", shape = array<i64: 3, 2>, source_offset = 0 : i64, source_strides = array<i64: 1, 3>
// CHECK: loomrt.copy {{.*}}origin = "slice", shape = array<i64: 1, 3>, source_offset = 3 : i64, source_strides = array<i64: 3, 1>
// CHECK: loomrt.copy {{.*}}origin = "concat"{{.*}}target_offset = 0
// CHECK: loomrt.copy {{.*}}origin = "concat"{{.*}}target_offset = 6
// CHECK: loomrt.reduce sum [1]
// CHECK: loomrt.softmax 1
func.func @movement(%x: tensor<2x3xf32>) -> (tensor<3x2xf32>, tensor<1x3xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<2x3xf32>) {
  %t = loom.transpose %x, permutation = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %s = loom.slice %x, start = [1, 0], limit = [2, 3], strides = [1, 1] : tensor<2x3xf32> -> tensor<1x3xf32>
  %c = loom.concat %x, %s dim = 0 : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<3x3xf32>
  %r = loom.reduce_sum %t, dims = [1] : tensor<3x2xf32> -> tensor<3xf32>
  %sm = loom.softmax %x, axis = 1 : tensor<2x3xf32>
  return %t, %s, %c, %r, %sm : tensor<3x2xf32>, tensor<1x3xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<2x3xf32>
}


// -----

// A weight transposed for a matmul (PyTorch's Linear) is read by BLAS with
// trans_b: no copy of the transpose.
// CHECK-LABEL: func.func @linear
// CHECK-NOT: loomrt.copy
// CHECK: loomrt.gemm ins(%arg0, %arg1 : memref<2x4xf32>, memref<8x4xf32>) outs(%arg2 : memref<2x8xf32>) {{.*}}trans_a = false, trans_b = true
// CHECK-NEXT: return
func.func @linear(%x: tensor<2x4xf32>, %w: tensor<8x4xf32>) -> tensor<2x8xf32> {
  %t = loom.transpose %w, permutation = [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
  %y = loom.dot_general %x, %t, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// An all-reduce starts on a copy of its operand and is waited for right
// before the first op that reads its result: the independent neg overlaps
// the transfer. The grid goes; the runtime owns the communicator.
// CHECK-LABEL: func.func @overlap
// CHECK-NOT: shard.grid
// CHECK: %[[A:.*]] = loomrt.alloc
// CHECK: loomrt.kernel ins(%arg0 {{.*}}origin = "exp"
// CHECK: %[[R:.*]] = loomrt.alloc
// CHECK: loomrt.copy ins(%[[A]] : memref<4xf32>) outs(%[[R]] : memref<4xf32>) {origin = "all_reduce"
// CHECK-NEXT: %[[H:.*]] = loomrt.all_reduce_start %[[R]] on @mesh grid_axes = [0] {reduction = "sum"} : memref<4xf32>
// CHECK: loomrt.kernel ins(%[[A]] {{.*}}origin = "neg"
// CHECK: loomrt.wait %[[H]]
// CHECK-NEXT: loomrt.kernel ins(%[[R]], %{{.*}}origin = "add"
// CHECK-NOT: loomrt.wait
shard.grid @mesh(shape = 2x1x1)
func.func @overlap(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = loom.exp %x : tensor<4xf32>
  %r = shard.all_reduce %a on @mesh grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  %b = loom.neg %a : tensor<4xf32>
  %c = loom.add %r, %b : tensor<4xf32>
  return %c, %b : tensor<4xf32>, tensor<4xf32>
}

// loom-tensor-parallel on linear layers in PyTorch's ONNX form: `x @ W.t()`
// with W [out, in] imports as dot_general(x, transpose(W)). The transpose is
// folded into the layer (W contracted on its dimension 1) and W is cut on
// its own dimensions: a column-parallel W on dim 0, a row-parallel one on
// dim 1.
//
// RUN: loom-opt %s --split-input-file --loom-tensor-parallel="function=main tp=2" \
// RUN:   -verify-diagnostics | FileCheck %s

// CHECK: shard.grid @mesh(shape = 1x1x2)
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.*]]: tensor<2x4x8xf32>
// CHECK-SAME: %[[W1:.*]]: tensor<16x8xf32> {loom.name = "fc.weight", loom.param, loom.shard = #loom.shard<dim = 0, parts = 2>}
// CHECK-SAME: %[[B1:.*]]: tensor<16xf32> {loom.name = "fc.bias", loom.param, loom.shard = #loom.shard<dim = 0, parts = 2>}
// CHECK-SAME: %[[W2:.*]]: tensor<8x16xf32> {loom.name = "proj.weight", loom.param, loom.shard = #loom.shard<dim = 1, parts = 2>}
// CHECK-SAME: %[[B2:.*]]: tensor<8xf32> {loom.name = "proj.bias", loom.param})
// CHECK-NOT: loom.transpose
// CHECK: %[[F:.*]] = loom.tp_copy %[[X]] on @mesh grid_axes = [2]
// CHECK: loom.dot_general %[[F]], %[[W1]], contracting_dims = [2] x [1] : (tensor<2x4x8xf32>, tensor<16x8xf32>) -> tensor<2x4x16xf32>
// CHECK: loom.broadcast %[[B1]], dims = [2] : tensor<16xf32> -> tensor<2x4x16xf32>
// CHECK: %[[P:.*]] = loom.dot_general %{{.*}}, %[[W2]], contracting_dims = [2] x [1] : (tensor<2x4x16xf32>, tensor<8x16xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[S:.*]] = shard.all_reduce %[[P]] on @mesh grid_axes = [2]
// CHECK: loom.broadcast %[[B2]], dims = [2] : tensor<8xf32> -> tensor<2x4x8xf32>
// CHECK-NOT: loom.transpose
// CHECK: return
func.func @main(%x: tensor<2x4x8xf32>,
                %w1: tensor<32x8xf32> {loom.name = "fc.weight", loom.param},
                %b1: tensor<32xf32> {loom.name = "fc.bias", loom.param},
                %w2: tensor<8x32xf32> {loom.name = "proj.weight", loom.param},
                %b2: tensor<8xf32> {loom.name = "proj.bias", loom.param}) -> tensor<f32> {
  %t1 = loom.transpose %w1, permutation = [1, 0] : tensor<32x8xf32> -> tensor<8x32xf32>
  %h = loom.dot_general %x, %t1, contracting_dims = [2] x [0] : (tensor<2x4x8xf32>, tensor<8x32xf32>) -> tensor<2x4x32xf32>
  %bb1 = loom.broadcast %b1, dims = [2] : tensor<32xf32> -> tensor<2x4x32xf32>
  %h1 = loom.add %bb1, %h : tensor<2x4x32xf32>
  %r = loom.relu %h1 : tensor<2x4x32xf32>
  %t2 = loom.transpose %w2, permutation = [1, 0] : tensor<8x32xf32> -> tensor<32x8xf32>
  %o = loom.dot_general %r, %t2, contracting_dims = [2] x [0] : (tensor<2x4x32xf32>, tensor<32x8xf32>) -> tensor<2x4x8xf32>
  %bb2 = loom.broadcast %b2, dims = [2] : tensor<8xf32> -> tensor<2x4x8xf32>
  %y = loom.add %o, %bb2 : tensor<2x4x8xf32>
  %l = loom.reduce_sum %y, dims = [0, 1, 2] : tensor<2x4x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A transposed weight that also feeds an op outside the block (a tied
// weight) is not cut: no block.

// CHECK-NOT: shard.grid
// CHECK-LABEL: func.func @main(
// CHECK-SAME: tensor<32x8xf32>
// CHECK-NOT: loom.shard
// CHECK-NOT: tp_copy
// CHECK-NOT: all_reduce
// expected-warning @+1 {{loom-tensor-parallel: @main has no attention or MLP block, embedding or LM head to partition}}
func.func @main(%x: tensor<2x4x8xf32>,
                %w1: tensor<32x8xf32> {loom.name = "fc.weight", loom.param},
                %w2: tensor<8x32xf32> {loom.name = "proj.weight", loom.param}) -> (tensor<f32>, tensor<8x32xf32>) {
  %t1 = loom.transpose %w1, permutation = [1, 0] : tensor<32x8xf32> -> tensor<8x32xf32>
  %h = loom.dot_general %x, %t1, contracting_dims = [2] x [0] : (tensor<2x4x8xf32>, tensor<8x32xf32>) -> tensor<2x4x32xf32>
  %r = loom.relu %h : tensor<2x4x32xf32>
  %t2 = loom.transpose %w2, permutation = [1, 0] : tensor<8x32xf32> -> tensor<32x8xf32>
  %o = loom.dot_general %r, %t2, contracting_dims = [2] x [0] : (tensor<2x4x32xf32>, tensor<32x8xf32>) -> tensor<2x4x8xf32>
  %l = loom.reduce_sum %o, dims = [0, 1, 2] : tensor<2x4x8xf32> -> tensor<f32>
  return %l, %t1 : tensor<f32>, tensor<8x32xf32>
}

// loom-tensor-parallel leaves a stacked parameter whole unless every layer
// it feeds is cut, each the same way: the layers' candidate blocks are one
// (tensor parallelism cannot cut some layers of one parameter and not
// others). loom.tp_replicated on the function says why, for
// loom-report-sharding.
//
// RUN: loom-opt %s --split-input-file --loom-shape-inference \
// RUN:   --loom-tensor-parallel=tp=2 | FileCheck %s

// The second layer's hidden values are also a result: its block escapes,
// so the first layer, which would be a block alone, stays whole too.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: loom.tp_replicated = {b1 = "'func.return' has no partition rule", w1 = "'func.return' has no partition rule", w2 = "'func.return' has no partition rule"}
// CHECK-NOT: loom.shard
// CHECK-NOT: loom.tp_copy
// CHECK-NOT: shard.all_reduce
// CHECK: return
func.func @main(%w1: tensor<2x8x16xf32> {loom.name = "w1", loom.param},
                   %b1: tensor<2x16xf32> {loom.name = "b1", loom.param},
                   %w2: tensor<2x16x8xf32> {loom.name = "w2", loom.param},
                   %x: tensor<4x8xf32> {loom.name = "x"})
    -> (tensor<4x8xf32>, tensor<4x16xf32>) {
  %zero = loom.constant dense<0.000000e+00> : tensor<4x16xf32>
  %s0 = loom.slice %w1, start = [0, 0, 0], limit = [1, 8, 16], strides = [1, 1, 1] : tensor<2x8x16xf32> -> tensor<1x8x16xf32>
  %k0 = loom.reshape %s0 : tensor<1x8x16xf32> -> tensor<8x16xf32>
  %c0 = loom.slice %b1, start = [0, 0], limit = [1, 16], strides = [1, 1] : tensor<2x16xf32> -> tensor<1x16xf32>
  %d0 = loom.slice %w2, start = [0, 0, 0], limit = [1, 16, 8], strides = [1, 1, 1] : tensor<2x16x8xf32> -> tensor<1x16x8xf32>
  %e0 = loom.reshape %d0 : tensor<1x16x8xf32> -> tensor<16x8xf32>
  %h0 = loom.dot_general %x, %k0, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %cb0 = loom.broadcast %c0, dims = [0, 1] : tensor<1x16xf32> -> tensor<4x16xf32>
  %a0 = loom.add %h0, %cb0 : tensor<4x16xf32>
  %r0 = loom.max %a0, %zero : tensor<4x16xf32>
  %o0 = loom.dot_general %r0, %e0, contracting_dims = [1] x [0] : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %s1 = loom.slice %w1, start = [1, 0, 0], limit = [2, 8, 16], strides = [1, 1, 1] : tensor<2x8x16xf32> -> tensor<1x8x16xf32>
  %k1 = loom.reshape %s1 : tensor<1x8x16xf32> -> tensor<8x16xf32>
  %c1 = loom.slice %b1, start = [1, 0], limit = [2, 16], strides = [1, 1] : tensor<2x16xf32> -> tensor<1x16xf32>
  %d1 = loom.slice %w2, start = [1, 0, 0], limit = [2, 16, 8], strides = [1, 1, 1] : tensor<2x16x8xf32> -> tensor<1x16x8xf32>
  %e1 = loom.reshape %d1 : tensor<1x16x8xf32> -> tensor<16x8xf32>
  %h1 = loom.dot_general %o0, %k1, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %cb1 = loom.broadcast %c1, dims = [0, 1] : tensor<1x16xf32> -> tensor<4x16xf32>
  %a1 = loom.add %h1, %cb1 : tensor<4x16xf32>
  %r1 = loom.max %a1, %zero : tensor<4x16xf32>
  %o1 = loom.dot_general %r1, %e1, contracting_dims = [1] x [0] : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  return %o1, %r1 : tensor<4x8xf32>, tensor<4x16xf32>
}

// -----

// One stacked parameter is the first layer's column-parallel weight
// (cut on dimension 2) and the second layer's row-parallel one (cut on
// dimension 1): one cut cannot serve both.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: loom.tp_replicated = {w = "the weight w is cut on dimension 2 by one layer and on dimension 1 by another"}
// CHECK-NOT: loom.shard
// CHECK-NOT: shard.all_reduce
// CHECK: return
func.func @main(%w: tensor<2x8x8xf32> {loom.name = "w", loom.param},
                    %x: tensor<4x8xf32> {loom.name = "x"}) -> tensor<4x8xf32> {
  %zero = loom.constant dense<0.000000e+00> : tensor<4x8xf32>
  %s0 = loom.slice %w, start = [0, 0, 0], limit = [1, 8, 8], strides = [1, 1, 1] : tensor<2x8x8xf32> -> tensor<1x8x8xf32>
  %k0 = loom.reshape %s0 : tensor<1x8x8xf32> -> tensor<8x8xf32>
  %s1 = loom.slice %w, start = [1, 0, 0], limit = [2, 8, 8], strides = [1, 1, 1] : tensor<2x8x8xf32> -> tensor<1x8x8xf32>
  %k1 = loom.reshape %s1 : tensor<1x8x8xf32> -> tensor<8x8xf32>
  %h = loom.dot_general %x, %k0, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %r = loom.max %h, %zero : tensor<4x8xf32>
  %o = loom.dot_general %r, %k1, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// Upstream `inline` (the first pass of the training pipeline) inlines calls
// of loom functions: the loom dialect's inliner interface allows every loom
// op, shard's and func's own interfaces the collectives and the call.
// RUN: loom-opt %s --inline | FileCheck %s

// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<4xf32>
// CHECK-NEXT:    %[[E:.*]] = loom.exp %[[X]] : tensor<4xf32>
// CHECK-NEXT:    %[[R:.*]] = shard.all_reduce %[[E]] on @mesh grid_axes = [2]
// CHECK-NEXT:    %[[G:.*]] = loom.grid_index on @mesh grid_axes = [2]
// CHECK-NEXT:    return %[[R]], %[[G]]
// The private callee is gone once inlined.
// CHECK-NOT:   func.func @helper
shard.grid @mesh(shape = 1x1x2)

func.func private @helper(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<i64>) {
  %e = loom.exp %x : tensor<4xf32>
  %r = shard.all_reduce %e on @mesh grid_axes = [2] : tensor<4xf32> -> tensor<4xf32>
  %g = loom.grid_index on @mesh grid_axes = [2] : tensor<i64>
  return %r, %g : tensor<4xf32>, tensor<i64>
}

func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<i64>) {
  %0:2 = func.call @helper(%x) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<i64>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<i64>
}

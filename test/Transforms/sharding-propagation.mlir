// RUN: loom-opt %s --pass-pipeline="builtin.module(func.func(sharding-propagation))" | FileCheck %s

// Loom ops implement upstream's ShardingInterface, so shard's
// sharding-propagation carries a sharding through them: the batch axis of
// %x, split over grid axis 0, reaches the matmul result and the relu.
shard.grid @grid(shape = 2)

// CHECK-LABEL: func.func @mlp_layer
func.func @mlp_layer(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<8x16xf32>
  // CHECK: %[[MM:.*]] = loom.dot_general
  // CHECK: %[[S1:.*]] = shard.sharding @grid split_axes = {{\[\[}}0]] : !shard.sharding
  // CHECK: shard.shard %[[MM]] to %[[S1]]
  %0 = loom.dot_general %xs, %w, contracting_dims = [1] x [0]
      : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  // CHECK: loom.relu
  %1 = loom.relu %0 : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}

// Splitting the contracting dimension of %x makes propagation split the
// matching (first) dimension of %w over the same grid axis: the indexing
// maps pair lhs dim 1 with rhs dim 0.
// CHECK-LABEL: func.func @contracting_split
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>, %[[W:.*]]: tensor<16x4xf32>)
func.func @contracting_split(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<8x16xf32>
  // CHECK: %[[SW:.*]] = shard.sharding @grid split_axes = {{\[\[}}0]] : !shard.sharding
  // CHECK: shard.shard %[[W]] to %[[SW]] annotate_for_users
  // CHECK: loom.dot_general
  %0 = loom.dot_general %xs, %w, contracting_dims = [1] x [0]
      : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// loom-recompute on a two-layer residual model with one tensor-parallel
// all-reduce per layer (layers marked by loom-mark-layers, gradient by
// loom-autodiff): where each policy clones forward ops into the backward
// pass, and which collectives it replays.
//
// RUN: loom-opt %s --loom-mark-layers --loom-autodiff --loom-recompute=policy=comm-free | FileCheck %s --check-prefix=CF
// RUN: loom-opt %s --loom-mark-layers --loom-autodiff --loom-recompute=policy=full | FileCheck %s --check-prefix=FULL
// RUN: loom-opt %s --loom-mark-layers --loom-autodiff --loom-recompute=policy=none | FileCheck %s --check-prefix=NONE
//
// Without the layer marks, full and comm-free recompute nothing, and say so.
// RUN: loom-opt %s --loom-autodiff --loom-recompute=policy=full 2>&1 | FileCheck %s --check-prefix=NOMARK

shard.grid @mesh(shape = 1x1x2)
func.func @main(%x: tensor<2x4xf32> {loom.name = "x"},
                %we: tensor<4x4xf32> {loom.param, loom.name = "we"},
                %w0: tensor<4x4xf32> {loom.param, loom.name = "w0"},
                %w1: tensor<4x4xf32> {loom.param, loom.name = "w1"}) -> tensor<f32> {
  %e = loom.dot_general %x, %we, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %h0 = loom.dot_general %e, %w0, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %a0 = shard.all_reduce %h0 on @mesh grid_axes = [2] : tensor<2x4xf32> -> tensor<2x4xf32>
  %g0 = loom.tanh %a0 : tensor<2x4xf32>
  %y0 = loom.add %e, %g0 : tensor<2x4xf32>
  %h1 = loom.dot_general %y0, %w1, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %a1 = shard.all_reduce %h1 on @mesh grid_axes = [2] : tensor<2x4xf32> -> tensor<2x4xf32>
  %g1 = loom.tanh %a1 : tensor<2x4xf32>
  %y1 = loom.add %y0, %g1 : tensor<2x4xf32>
  %l = loom.reduce_mean %y1, dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// comm-free: the backward pass reads recomputed tanh values computed from
// the saved all-reduce results; no collective is replayed, and the forward
// tanh results are read by the forward pass only.
// CF-LABEL: func.func @main_grad
// CF-SAME: loom.recompute = {collectives = 0 : i64, flops = 16 : i64, ops = 2 : i64, policy = "comm-free"}
// CF: %[[AR0:.*]] = shard.all_reduce
// CF: %[[T0:.*]] = loom.tanh %[[AR0]] {loom.layer = 0 : i64}
// CF: %[[AR1:.*]] = shard.all_reduce
// CF: %[[T1:.*]] = loom.tanh %[[AR1]] {loom.layer = 1 : i64}
// CF: loom.reduce_mean
// CF-NOT: shard.all_reduce
// CF-NOT: %[[T1]]{{[ ,]}}
// CF: %[[R1:.*]] = loom.tanh %[[AR1]] {loom.layer = 1 : i64, loom.phase = "recompute"}
// CF-NEXT: loom.mul %[[R1]], %[[R1]] {loom.phase = "backward"}
// CF-NOT: %[[T0]]{{[ ,]}}
// CF: %[[R0:.*]] = loom.tanh %[[AR0]] {loom.layer = 0 : i64, loom.phase = "recompute"}
// CF-NEXT: loom.mul %[[R0]], %[[R0]] {loom.phase = "backward"}
// CF-NOT: shard.all_reduce
// CF: return

// full (Megatron): each layer is replayed from its input (%e, then %y0)
// right before its backward pass, all-reduce included, the whole layer even
// where the backward pass reads only part of it.
// FULL-LABEL: func.func @main_grad
// FULL-SAME: loom.recompute = {collectives = 2 : i64, flops = 152 : i64, ops = 7 : i64, policy = "full"}
// FULL: %[[E:.*]] = loom.dot_general %arg0, %arg1
// FULL: %[[Y0:.*]] = loom.add %[[E]], %{{.*}} {loom.layer = 0 : i64}
// FULL: loom.reduce_mean
// FULL: %[[D1:.*]] = loom.dot_general %[[Y0]], %arg3, {{.*}}loom.phase = "recompute"
// FULL-NEXT: %[[A1:.*]] = shard.all_reduce %[[D1]] {{.*}}loom.phase = "recompute"
// FULL-NEXT: %[[T1:.*]] = loom.tanh %[[A1]] {{.*}}loom.phase = "recompute"
// FULL-NEXT: loom.add %[[Y0]], %[[T1]] {{.*}}loom.phase = "recompute"
// FULL: %[[D0:.*]] = loom.dot_general %[[E]], %arg2, {{.*}}loom.phase = "recompute"
// FULL-NEXT: %[[A0:.*]] = shard.all_reduce %[[D0]] {{.*}}loom.phase = "recompute"
// FULL-NEXT: loom.tanh %[[A0]] {{.*}}loom.phase = "recompute"
// FULL: return

// NONE-LABEL: func.func @main_grad
// NONE-NOT: recompute
// NONE: return

// NOMARK: warning: loom-recompute: policy=full recomputes ops inside layers, and no op of @main_grad has a loom.layer mark: nothing is recomputed (run loom-mark-layers on the forward function first)
// NOMARK-NOT: "recompute"

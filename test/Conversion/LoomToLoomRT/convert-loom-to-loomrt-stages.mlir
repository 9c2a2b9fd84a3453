// RUN: loom-opt %s -loom-fuse-elementwise -convert-loom-to-loomrt="function=f_stage0_step,f_stage1_step" | FileCheck %s


// Pipeline stage programs: function= takes a list and lowers each; the
// others go. A send copies its operand into its own buffer (the operand's
// may be reused while the transfer runs), starts, and is waited for at the
// end of the step; a receive starts into the result's buffer and is waited
// for before its first use; the receive's zeros get no buffer.
// CHECK-LABEL: func.func @f_stage0_step
// CHECK-SAME: loom.stage = 0 : i64
// CHECK: %[[A:.*]] = loomrt.alloc {category = "activation"} : memref<4xf32>
// CHECK: loomrt.kernel ins(%arg0 {{.*}}outs(%[[A]] {{.*}}origin = "exp"
// CHECK-NEXT: ^bb0
// CHECK: %[[S:.*]] = loomrt.alloc {category = "activation"} : memref<4xf32>
// CHECK-NEXT: loomrt.copy ins(%[[A]] : memref<4xf32>) outs(%[[S]] : memref<4xf32>) {origin = "send"
// CHECK-NEXT: %[[HS:.*]] = loomrt.send_start %[[S]] on @mesh grid_axes = [1] {peer = 1 : i64, tag = 7 : i64} : memref<4xf32>
// CHECK-NEXT: %[[HR0:.*]] = loomrt.recv_start %arg1 on @mesh grid_axes = [1] {peer = 1 : i64, tag = 8 : i64} : memref<4xf32>
// CHECK-NEXT: loomrt.wait %[[HR0]]
// CHECK-NEXT: loomrt.kernel ins(%[[A]], %arg1 {{.*}}origin = "neg+add"
// CHECK: loomrt.wait %[[HS]]
// CHECK-NEXT: return
// CHECK-LABEL: func.func @f_stage1_step
// CHECK-SAME: loom.stage = 1 : i64
// CHECK-NOT: loomrt.fill
// CHECK: %[[R:.*]] = loomrt.alloc
// CHECK-NEXT: %[[HR:.*]] = loomrt.recv_start %[[R]] on @mesh grid_axes = [1] {peer = 0 : i64, tag = 7 : i64}
// CHECK-NEXT: loomrt.wait %[[HR]]
// CHECK: loomrt.send_start {{.*}}on @mesh grid_axes = [1] {peer = 0 : i64, tag = 8 : i64}
// CHECK-NOT: func.func @unrelated
shard.grid @mesh(shape = 1x2x1)
func.func @f_stage0_step(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    attributes {loom.stage = 0 : i64} {
  %a = loom.exp %x : tensor<4xf32>
  %s = shard.send %a on @mesh grid_axes = [1] destination = [1] {loom.tag = 7 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %z = loom.constant dense<0.0> : tensor<4xf32>
  %r = shard.recv %z on @mesh grid_axes = [1] source = [1] {loom.tag = 8 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %b = loom.neg %a : tensor<4xf32>
  %c = loom.add %r, %b : tensor<4xf32>
  return %r, %c : tensor<4xf32>, tensor<4xf32>
}
func.func @f_stage1_step(%y: tensor<4xf32>) -> tensor<4xf32>
    attributes {loom.stage = 1 : i64} {
  %z = loom.constant dense<0.0> : tensor<4xf32>
  %r = shard.recv %z on @mesh grid_axes = [1] source = [0] {loom.tag = 7 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %m = loom.mul %r, %y : tensor<4xf32>
  %s = shard.send %m on @mesh grid_axes = [1] destination = [0] {loom.tag = 8 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %m : tensor<4xf32>
}
func.func @unrelated(%y: tensor<4xf32>) -> tensor<4xf32> {
  return %y : tensor<4xf32>
}

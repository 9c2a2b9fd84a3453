// The point-to-point transfers of pipeline stage programs, and function=
// as a list. One file each (split-file): the lowering takes the module's
// `_step` function, or the list function= names.
//
// RUN: split-file %s %t
// RUN: loom-opt %t/send.mlir -loom-fuse-elementwise -convert-loom-to-loomrt | FileCheck %s --check-prefix=SEND
// RUN: loom-opt %t/recv.mlir -loom-fuse-elementwise -convert-loom-to-loomrt | FileCheck %s --check-prefix=RECV
// RUN: loom-opt %t/recv-result.mlir -loom-fuse-elementwise -convert-loom-to-loomrt | FileCheck %s --check-prefix=RESULT
// RUN: loom-opt %t/list.mlir -loom-fuse-elementwise \
// RUN:   -convert-loom-to-loomrt="function=f_stage0_step,f_stage1_step" | FileCheck %s --check-prefix=LIST

// A send copies its operand into its own buffer (the operand's may be
// reused while the transfer runs), starts on the pp axis with the peer's
// pp index and the tag, and is waited for at the end of the step.
// SEND-LABEL: func.func @send_step
// SEND:       %[[A:.*]] = loomrt.alloc {category = "activation"} : memref<4xf32>
// SEND:       loomrt.kernel ins(%arg0 {{.*}}outs(%[[A]] {{.*}}origin = "exp"
// SEND:       %[[S:.*]] = loomrt.alloc {category = "activation"} : memref<4xf32>
// SEND-NEXT:  loomrt.copy ins(%[[A]] : memref<4xf32>) outs(%[[S]] : memref<4xf32>) {origin = "send"
// SEND-NEXT:  %[[HS:.*]] = loomrt.send_start %[[S]] on @mesh grid_axes = [1] {peer = 1 : i64, tag = 7 : i64} : memref<4xf32>
// SEND-NEXT:  loomrt.kernel ins(%[[A]] {{.*}}origin = "neg"
// SEND:       loomrt.wait %[[HS]]
// SEND-NEXT:  return
//--- send.mlir
shard.grid @mesh(shape = 1x2x1)
func.func @send_step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = loom.exp %x : tensor<4xf32>
  %s = shard.send %a on @mesh grid_axes = [1] destination = [1] {loom.tag = 7 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %b = loom.neg %a : tensor<4xf32>
  return %b : tensor<4xf32>
}

// A receive starts into a buffer of its own and is waited for right
// before its first use (after the independent neg); its zeros get no
// buffer.
// RECV-LABEL: func.func @recv_step
// RECV-NOT:   loomrt.fill
// RECV:       %[[R:.*]] = loomrt.alloc {category = "activation"} : memref<4xf32>
// RECV-NEXT:  %[[HR:.*]] = loomrt.recv_start %[[R]] on @mesh grid_axes = [1] {peer = 0 : i64, tag = 7 : i64} : memref<4xf32>
// RECV-NEXT:  loomrt.kernel ins(%arg0 {{.*}}origin = "neg"
// RECV:       loomrt.wait %[[HR]]
// RECV-NEXT:  loomrt.kernel ins(%[[R]], {{.*}}origin = "mul"
//--- recv.mlir
shard.grid @mesh(shape = 1x2x1)
func.func @recv_step(%y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %z = loom.constant dense<0.0> : tensor<4xf32>
  %r = shard.recv %z on @mesh grid_axes = [1] source = [0] {loom.tag = 7 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %n = loom.neg %y : tensor<4xf32>
  %m = loom.mul %r, %n : tensor<4xf32>
  return %m, %n : tensor<4xf32>, tensor<4xf32>
}

// A received value the function returns is received straight into the
// result's buffer.
// RESULT-LABEL: func.func @recv_result_step
// RESULT-SAME:  %[[OUT:[a-z0-9]+]]: memref<4xf32> {loomrt.result = 0 : i64}
// RESULT-NOT:   loomrt.alloc
// RESULT:       %[[HR:.*]] = loomrt.recv_start %[[OUT]] on @mesh grid_axes = [1] {peer = 1 : i64, tag = 8 : i64} : memref<4xf32>
// RESULT-NEXT:  loomrt.wait %[[HR]]
// RESULT-NEXT:  loomrt.kernel ins(%[[OUT]], {{.*}}origin = "mul"
//--- recv-result.mlir
shard.grid @mesh(shape = 1x2x1)
func.func @recv_result_step(%y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %z = loom.constant dense<0.0> : tensor<4xf32>
  %r = shard.recv %z on @mesh grid_axes = [1] source = [1] {loom.tag = 8 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %m = loom.mul %r, %y : tensor<4xf32>
  return %r, %m : tensor<4xf32>, tensor<4xf32>
}

// function= takes a list and lowers each, keeping its loom.stage; the
// other functions go.
// LIST-LABEL: func.func @f_stage0_step
// LIST-SAME:  loom.stage = 0 : i64
// LIST:       loomrt.kernel {{.*}}origin = "exp"
// LIST-LABEL: func.func @f_stage1_step
// LIST-SAME:  loom.stage = 1 : i64
// LIST:       loomrt.kernel {{.*}}origin = "neg"
// LIST-NOT:   func.func @unrelated
//--- list.mlir
func.func @f_stage0_step(%x: tensor<4xf32>) -> tensor<4xf32>
    attributes {loom.stage = 0 : i64} {
  %a = loom.exp %x : tensor<4xf32>
  return %a : tensor<4xf32>
}
func.func @f_stage1_step(%y: tensor<4xf32>) -> tensor<4xf32>
    attributes {loom.stage = 1 : i64} {
  %n = loom.neg %y : tensor<4xf32>
  return %n : tensor<4xf32>
}
func.func @unrelated(%y: tensor<4xf32>) -> tensor<4xf32> {
  return %y : tensor<4xf32>
}

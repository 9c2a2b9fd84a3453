// RUN: loom-opt %s -loom-memory-plan="report=%t.json" | FileCheck %s
// RUN: FileCheck %s --check-prefix=REPORT < %t.json

// A buffer being sent stays live until the wait on its handle (at the end
// of the step), though the send_start is its last direct use: the kernel
// after the send may not reuse its bytes. Every function is planned (pipeline
// stage programs), each reported in "functions".
// CHECK-LABEL: func.func @stage0
// CHECK: %[[S:.*]] = loomrt.alloc {category = "activation", offset = 0 : i64}
// CHECK: %[[H:.*]] = loomrt.send_start %[[S]]
// CHECK-NOT: loomrt.dealloc %[[S]]
// CHECK: %[[T:.*]] = loomrt.alloc {category = "activation", offset = 64 : i64}
// CHECK: loomrt.dealloc %[[T]]
// CHECK: loomrt.wait %[[H]]
// CHECK-NEXT: loomrt.dealloc %[[S]]
// CHECK-NEXT: return
// CHECK-LABEL: func.func @stage1
// CHECK-SAME: loomrt.arena_bytes = 64 : i64
// REPORT: "function": "stage0",
// REPORT: "function": "stage1",
shard.grid @mesh(shape = 1x2x1)
func.func @stage0(%x: memref<16xf32>, %out: memref<16xf32> {loomrt.result = 0 : i64})
    attributes {loomrt.num_inputs = 1 : i64, loom.stage = 0 : i64} {
  %0 = loomrt.alloc {category = "activation"} : memref<16xf32>
  loomrt.copy ins(%x : memref<16xf32>) outs(%0 : memref<16xf32>) {origin = "send", shape = array<i64: 16>, source_offset = 0 : i64, source_strides = array<i64: 1>, target_offset = 0 : i64, target_strides = array<i64: 1>}
  %h = loomrt.send_start %0 on @mesh grid_axes = [1] {peer = 1 : i64, tag = 0 : i64} : memref<16xf32>
  %1 = loomrt.alloc {category = "activation"} : memref<16xf32>
  loomrt.kernel ins(%x : memref<16xf32>) outs(%1 : memref<16xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    loomrt.yield %n : f32
  }
  loomrt.kernel ins(%1 : memref<16xf32>) outs(%out : memref<16xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    loomrt.yield %n : f32
  }
  loomrt.wait %h
  return
}
func.func @stage1(%out: memref<16xf32> {loomrt.result = 0 : i64})
    attributes {loomrt.num_inputs = 0 : i64, loom.stage = 1 : i64} {
  %0 = loomrt.alloc {category = "activation"} : memref<16xf32>
  %h = loomrt.recv_start %0 on @mesh grid_axes = [1] {peer = 0 : i64, tag = 0 : i64} : memref<16xf32>
  loomrt.wait %h
  loomrt.copy ins(%0 : memref<16xf32>) outs(%out : memref<16xf32>) {origin = "result", shape = array<i64: 16>, source_offset = 0 : i64, source_strides = array<i64: 1>, target_offset = 0 : i64, target_strides = array<i64: 1>}
  return
}

// RUN: loom-opt %s -loom-memory-plan="report=%t.json device-memory=256" | FileCheck %s
// RUN: FileCheck %s --check-prefix=REPORT < %t.json
// One byte less and stage 0 no longer fits (the errors themselves are in
// loom-memory-plan-device-memory-errors.mlir).
// RUN: not loom-opt %s -loom-memory-plan="device-memory=255" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OVER
// Without a budget the figures are the same and nothing is checked.
// RUN: loom-opt %s -loom-memory-plan="report=%t.none.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=NONE < %t.none.json

// Two pipeline stages. Worked out by hand (64-byte buffers of 16 f32):
// stage 0 holds its input (64) and its result (64) for the whole run, and
// an arena of 128: the sent buffer stays live until the wait at the end,
// so the kernel's buffer cannot reuse it. Device peak 128 + 128 = 256, of
// which the send buffer (64) is a communication buffer. Stage 1: its result
// (64) and the received buffer (64): 128. No swap: no host pool.
// Both of stage 0's arena buffers are activations, live together: its
// activation peak is 128.
// CHECK-LABEL: func.func @stage0
// CHECK-SAME: loomrt.activation_peak_bytes = 128 : i64
// CHECK-SAME: loomrt.device_memory_bytes = 256 : i64
// CHECK-SAME: loomrt.device_peak_bytes = 256 : i64
// CHECK-LABEL: func.func @stage1
// CHECK-SAME: loomrt.device_peak_bytes = 128 : i64

// REPORT: "device_memory": 256,
// REPORT: "functions": [
// REPORT-NEXT: {
// REPORT-NEXT: "activation_peak_bytes": 128,
// REPORT: "arena_bytes": 128,
// REPORT: "comm_at_peak_bytes": 64,
// REPORT-NEXT: "device_peak_bytes": 256,
// REPORT-NEXT: "function": "stage0",
// REPORT-NEXT: "host_peak_bytes": 0,
// REPORT-NEXT: "peak_bytes": 256,
// REPORT-NEXT: "peak_live_bytes": 128,
// REPORT-NEXT: "persistent_bytes": {
// REPORT-NEXT: "data": 64,
// REPORT-NEXT: "results": 64
// REPORT-NEXT: },
// REPORT-NEXT: "stage": 0
// REPORT: "arena_bytes": 64,
// REPORT: "comm_at_peak_bytes": 64,
// REPORT-NEXT: "device_peak_bytes": 128,
// REPORT-NEXT: "function": "stage1",
// REPORT-NEXT: "host_peak_bytes": 0,
// REPORT: "stage": 1

// OVER: error: loom-memory-plan: stage 0 (@stage0) needs 256 bytes of device memory at its peak, over the --device-memory budget of 255 bytes by 1: persistent 128
// OVER-NOT: stage 1

// NONE: "device_memory": 0,
// NONE: "device_peak_bytes": 256,
// NONE: "device_peak_bytes": 128,
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

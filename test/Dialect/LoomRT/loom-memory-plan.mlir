// RUN: loom-opt %s -loom-memory-plan="report=%t.json" | FileCheck %s
// RUN: FileCheck %s --check-prefix=REPORT < %t.json

// Three 64-byte buffers (16 f32 each): %0 dies at the kernel that creates
// %2, so %2 reuses %0's bytes only after %0's last use; %1 overlaps both.
// Worked out by hand: live sets {0}, {0,1}, {0,1,2} at the second kernel
// (its inputs are read while its output is written), then {1,2}: peak 192
// bytes, arena 192 bytes. A view extends its source's life. Persistent:
// params 64, data 64, results 64 + 64 + 4 = 132; total 192 + 260 = 452.
// CHECK-LABEL: func.func @plan
// CHECK-SAME: loomrt.alignment = 64 : i64, loomrt.arena_bytes = 192 : i64
// CHECK-SAME: loomrt.peak_live_bytes = 192 : i64
// CHECK: %[[A:.*]] = loomrt.alloc {category = "activation", offset = 0 : i64}
// CHECK: %[[B:.*]] = loomrt.alloc {category = "gradient", offset = 64 : i64}
// CHECK: %[[C:.*]] = loomrt.alloc {category = "workspace", offset = 128 : i64}
// CHECK: loomrt.kernel ins(%[[A]], %[[B]]
// CHECK: loomrt.yield
// CHECK-NEXT: }
// CHECK-NEXT: loomrt.dealloc %[[A]]
// CHECK: %[[V:.*]] = loomrt.view %[[C]]
// CHECK: loomrt.copy ins(%[[V]]
// CHECK-NEXT: loomrt.dealloc %[[C]]
// CHECK-NEXT: loomrt.kernel ins(%[[B]]
// CHECK: loomrt.dealloc %[[B]]
// CHECK-NEXT: return

// REPORT: "arena_at_peak_bytes": {
// REPORT-NEXT: "activation": 64,
// REPORT-NEXT: "gradient": 64,
// REPORT-NEXT: "workspace": 64
// REPORT: "arena_bytes": 192,
// REPORT: "peak_bytes": 452,
// REPORT: "peak_live_bytes": 192,
// REPORT: "persistent_bytes": {
// REPORT-NEXT: "data": 64,
// REPORT-NEXT: "params": 64,
// REPORT-NEXT: "results": 132
func.func @plan(%w: memref<16xf32> {loom.param}, %x: memref<16xf32>,
                %out: memref<16xf32> {loomrt.result = 0 : i64},
                %more: memref<2x8xf32> {loomrt.result = 1 : i64},
                %loss: memref<f32> {loomrt.result = 2 : i64})
    attributes {loomrt.num_inputs = 2 : i64} {
  %0 = loomrt.alloc {category = "activation"} : memref<16xf32>
  loomrt.kernel ins(%w, %x : memref<16xf32>, memref<16xf32>) outs(%0 : memref<16xf32>) attributes {origin = "add"} {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    loomrt.yield %s : f32
  }
  %1 = loomrt.alloc {category = "gradient"} : memref<16xf32>
  loomrt.kernel ins(%0 : memref<16xf32>) outs(%1 : memref<16xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    loomrt.yield %n : f32
  }
  %2 = loomrt.alloc {category = "workspace"} : memref<16xf32>
  loomrt.kernel ins(%0, %1 : memref<16xf32>, memref<16xf32>) outs(%2 : memref<16xf32>) attributes {origin = "mul"} {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    loomrt.yield %m : f32
  }
  %v = loomrt.view %2 : memref<16xf32> to memref<2x8xf32>
  loomrt.copy ins(%v : memref<2x8xf32>) outs(%more : memref<2x8xf32>) {origin = "result", shape = array<i64: 2, 8>, source_offset = 0 : i64, source_strides = array<i64: 8, 1>, target_offset = 0 : i64, target_strides = array<i64: 8, 1>}
  loomrt.kernel ins(%1 : memref<16xf32>) outs(%out : memref<16xf32>) attributes {origin = "exp"} {
  ^bb0(%a: f32):
    %e = math.exp %a : f32
    loomrt.yield %e : f32
  }
  return
}

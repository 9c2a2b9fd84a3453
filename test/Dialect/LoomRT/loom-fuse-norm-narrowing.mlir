// RUN: loom-opt %s -loom-fuse-norm-narrowing -split-input-file | FileCheck %s

// An RMS norm whose output only its conversion to bf16 reads writes the
// bf16 buffer (allocated after the norm: its alloc moves up); the f32
// buffer and the conversion go.
// CHECK-LABEL: func.func @rms_norm
// CHECK-NEXT: %[[H:.*]] = loomrt.alloc {category = "activation"} : memref<4x8xbf16>
// CHECK-NEXT: loomrt.layer_norm 1 ins(%arg0 scale %arg1 : memref<4x8xf32>, memref<8xf32>, memref<4x8xbf16>) outs(%[[H]])
// CHECK-NOT: loomrt.kernel
// CHECK: loomrt.gemm ins(%[[H]], %arg2
func.func @rms_norm(%x: memref<4x8xf32>, %s: memref<8xf32>, %w: memref<8x8xbf16>, %y: memref<4x8xbf16>) {
  %n = loomrt.alloc {category = "activation"} : memref<4x8xf32>
  loomrt.layer_norm 1 ins(%x scale %s : memref<4x8xf32>, memref<8xf32>, memref<4x8xf32>) outs(%n) {epsilon = 1.0e-06 : f64, origin = "rms_norm", rms = true}
  %h = loomrt.alloc {category = "activation"} : memref<4x8xbf16>
  loomrt.kernel ins(%n : memref<4x8xf32>) outs(%h : memref<4x8xbf16>) attributes {origin = "convert"} {
  ^bb0(%v: f32):
    %r = arith.truncf %v : f32 to bf16
    loomrt.yield %r : bf16
  }
  loomrt.gemm ins(%h, %w : memref<4x8xbf16>, memref<8x8xbf16>) outs(%y : memref<4x8xbf16>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 8 : i64, m = 4 : i64, n = 8 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  return
}

// -----

// The f32 output has another reader (the residual stream): both stay.
// CHECK-LABEL: func.func @second_reader
// CHECK: loomrt.layer_norm {{.*}} memref<4x8xf32>) outs(
// CHECK: origin = "convert"
func.func @second_reader(%x: memref<4x8xf32>, %s: memref<8xf32>, %h: memref<4x8xbf16>, %z: memref<4x8xf32>) {
  %n = loomrt.alloc {category = "activation"} : memref<4x8xf32>
  loomrt.layer_norm 1 ins(%x scale %s : memref<4x8xf32>, memref<8xf32>, memref<4x8xf32>) outs(%n) {epsilon = 1.0e-06 : f64, origin = "rms_norm", rms = true}
  loomrt.kernel ins(%n : memref<4x8xf32>) outs(%h : memref<4x8xbf16>) attributes {origin = "convert"} {
  ^bb0(%v: f32):
    %r = arith.truncf %v : f32 to bf16
    loomrt.yield %r : bf16
  }
  loomrt.kernel ins(%n, %x : memref<4x8xf32>, memref<4x8xf32>) outs(%z : memref<4x8xf32>) attributes {origin = "add"} {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    loomrt.yield %r : f32
  }
  return
}

// -----

// A reader that does more than round (here it also scales) and a bf16
// buffer read between the norm and the conversion keep their kernels.
// CHECK-LABEL: func.func @not_a_plain_rounding
// CHECK: origin = "mul+convert"
// CHECK-LABEL: func.func @narrow_read_between
// CHECK: origin = "convert"
func.func @not_a_plain_rounding(%x: memref<4x8xf32>, %h: memref<4x8xbf16>) {
  %n = loomrt.alloc {category = "activation"} : memref<4x8xf32>
  loomrt.layer_norm 1 ins(%x : memref<4x8xf32>, memref<4x8xf32>) outs(%n) {epsilon = 1.0e-05 : f64, origin = "layer_norm", rms = false}
  loomrt.kernel ins(%n : memref<4x8xf32>) outs(%h : memref<4x8xbf16>) attributes {origin = "mul+convert"} {
  ^bb0(%v: f32):
    %m = arith.mulf %v, %v : f32
    %r = arith.truncf %m : f32 to bf16
    loomrt.yield %r : bf16
  }
  return
}
func.func @narrow_read_between(%x: memref<4x8xf32>, %h: memref<4x8xbf16>, %c: memref<4x8xbf16>) {
  %n = loomrt.alloc {category = "activation"} : memref<4x8xf32>
  loomrt.layer_norm 1 ins(%x : memref<4x8xf32>, memref<4x8xf32>) outs(%n) {epsilon = 1.0e-05 : f64, origin = "layer_norm", rms = false}
  loomrt.copy ins(%h : memref<4x8xbf16>) outs(%c : memref<4x8xbf16>) {origin = "copy", shape = array<i64: 32>, source_offset = 0 : i64, source_strides = array<i64: 1>, target_offset = 0 : i64, target_strides = array<i64: 1>}
  loomrt.kernel ins(%n : memref<4x8xf32>) outs(%h : memref<4x8xbf16>) attributes {origin = "convert"} {
  ^bb0(%v: f32):
    %r = arith.truncf %v : f32 to bf16
    loomrt.yield %r : bf16
  }
  return
}

// -----

// Three products read the norm's output, each through its own conversion
// (q, k and v): the norm writes one bf16 buffer that all three read.
// CHECK-LABEL: func.func @three_products
// CHECK-NEXT: %[[H:.*]] = loomrt.alloc {category = "activation"} : memref<4x8xbf16>
// CHECK-NEXT: loomrt.layer_norm 1 {{.*}} outs(%[[H]])
// CHECK-NOT: loomrt.kernel
// CHECK-NOT: loomrt.alloc
// CHECK: loomrt.gemm ins(%[[H]], %arg1
// CHECK: loomrt.gemm ins(%[[H]], %arg1
// CHECK: loomrt.gemm ins(%[[H]], %arg1
func.func @three_products(%x: memref<4x8xf32>, %w: memref<8x8xbf16>, %q: memref<4x8xbf16>, %k: memref<4x8xbf16>, %v: memref<4x8xbf16>) {
  %n = loomrt.alloc {category = "activation"} : memref<4x8xf32>
  loomrt.layer_norm 1 ins(%x : memref<4x8xf32>, memref<4x8xf32>) outs(%n) {epsilon = 1.0e-06 : f64, origin = "rms_norm", rms = true}
  %h0 = loomrt.alloc {category = "activation"} : memref<4x8xbf16>
  loomrt.kernel ins(%n : memref<4x8xf32>) outs(%h0 : memref<4x8xbf16>) attributes {origin = "convert"} {
  ^bb0(%a: f32):
    %r = arith.truncf %a : f32 to bf16
    loomrt.yield %r : bf16
  }
  loomrt.gemm ins(%h0, %w : memref<4x8xbf16>, memref<8x8xbf16>) outs(%q : memref<4x8xbf16>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 8 : i64, m = 4 : i64, n = 8 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  %h1 = loomrt.alloc {category = "activation"} : memref<4x8xbf16>
  loomrt.kernel ins(%n : memref<4x8xf32>) outs(%h1 : memref<4x8xbf16>) attributes {origin = "convert"} {
  ^bb0(%a: f32):
    %r = arith.truncf %a : f32 to bf16
    loomrt.yield %r : bf16
  }
  loomrt.gemm ins(%h1, %w : memref<4x8xbf16>, memref<8x8xbf16>) outs(%k : memref<4x8xbf16>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 8 : i64, m = 4 : i64, n = 8 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  %h2 = loomrt.alloc {category = "activation"} : memref<4x8xbf16>
  loomrt.kernel ins(%n : memref<4x8xf32>) outs(%h2 : memref<4x8xbf16>) attributes {origin = "convert"} {
  ^bb0(%a: f32):
    %r = arith.truncf %a : f32 to bf16
    loomrt.yield %r : bf16
  }
  loomrt.gemm ins(%h2, %w : memref<4x8xbf16>, memref<8x8xbf16>) outs(%v : memref<4x8xbf16>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 8 : i64, m = 4 : i64, n = 8 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  return
}

// -----

// A second conversion's buffer that a later op writes (accumulates into)
// cannot be the shared one: nothing fuses.
// CHECK-LABEL: func.func @written_later
// CHECK-COUNT-2: origin = "convert"
func.func @written_later(%x: memref<4x8xf32>, %w: memref<8x8xbf16>) {
  %n = loomrt.alloc {category = "activation"} : memref<4x8xf32>
  loomrt.layer_norm 1 ins(%x : memref<4x8xf32>, memref<4x8xf32>) outs(%n) {epsilon = 1.0e-06 : f64, origin = "rms_norm", rms = true}
  %h0 = loomrt.alloc {category = "activation"} : memref<4x8xbf16>
  loomrt.kernel ins(%n : memref<4x8xf32>) outs(%h0 : memref<4x8xbf16>) attributes {origin = "convert"} {
  ^bb0(%a: f32):
    %r = arith.truncf %a : f32 to bf16
    loomrt.yield %r : bf16
  }
  %h1 = loomrt.alloc {category = "activation"} : memref<4x8xbf16>
  loomrt.kernel ins(%n : memref<4x8xf32>) outs(%h1 : memref<4x8xbf16>) attributes {origin = "convert"} {
  ^bb0(%a: f32):
    %r = arith.truncf %a : f32 to bf16
    loomrt.yield %r : bf16
  }
  loomrt.gemm ins(%h0, %w : memref<4x8xbf16>, memref<8x8xbf16>) outs(%h1 : memref<4x8xbf16>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 8 : i64, m = 4 : i64, n = 8 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  return
}

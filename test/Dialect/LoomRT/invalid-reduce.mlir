// RUN: loom-opt %s -split-input-file -verify-diagnostics

// A fused reduction reads every input at the reduced tensor's index: the
// inputs share its shape.
func.func @fused_inputs_differ(%a: memref<2x4xf32>, %b: memref<4xf32>, %s: memref<2xf32>) {
  // expected-error @+1 {{'loomrt.reduce' op fused inputs differ in shape: 'memref<4xf32>' and 'memref<2x4xf32>'}}
  loomrt.reduce sum [1] ins(%a, %b : memref<2x4xf32>, memref<4xf32>) outs(%s : memref<2xf32>) attributes {origin = "mul+reduce_sum"} {
  ^bb0(%x: f32, %y: f32):
    %p = arith.mulf %x, %y : f32
    loomrt.yield %p : f32
  }
  return
}

// -----

// The body yields the element folded, of the output's type.
func.func @fused_yield_type(%a: memref<4xi1>, %s: memref<f32>) {
  // expected-error @+1 {{'loomrt.reduce' op body must yield one 'f32'}}
  loomrt.reduce sum [0] ins(%a : memref<4xi1>) outs(%s : memref<f32>) attributes {origin = "x"} {
  ^bb0(%x: i1):
    loomrt.yield %x : i1
  }
  return
}

// -----

// Without a body there is one input.
func.func @plain_two_inputs(%a: memref<4xf32>, %s: memref<f32>) {
  // expected-error @+1 {{'loomrt.reduce' op without a body reduces one input, not 2}}
  loomrt.reduce sum [0] ins(%a, %a : memref<4xf32>, memref<4xf32>) outs(%s : memref<f32>) attributes {origin = "x"}
  return
}

// -----

func.func @dim_out_of_range(%a: memref<4xf32>, %s: memref<f32>) {
  // expected-error @+1 {{'loomrt.reduce' op reduces dimension 1 of a rank-1 input}}
  loomrt.reduce sum [1] ins(%a : memref<4xf32>) outs(%s : memref<f32>) attributes {origin = "x"}
  return
}

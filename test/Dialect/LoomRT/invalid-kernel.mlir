// RUN: loom-opt %s -split-input-file -verify-diagnostics

// An input of another shape is read through strides.
func.func @shape_without_strides(%a: memref<8xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{'loomrt.kernel' op input of type 'memref<8xf32>' differs in shape from the outputs; give in_strides}}
  loomrt.kernel ins(%a : memref<8xf32>) outs(%y : memref<4xf32>) attributes {origin = "neg"} {
  ^bb0(%x: f32):
    %n = arith.negf %x : f32
    loomrt.yield %n : f32
  }
  return
}

// -----

// One offset per input.
func.func @offsets_count(%a: memref<8xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{'loomrt.kernel' op has 2 in_offsets for 1 inputs}}
  loomrt.kernel ins(%a : memref<8xf32>) outs(%y : memref<4xf32>) attributes {origin = "neg", in_strides = [array<i64: 1>], in_offsets = array<i64: 4, 0>} {
  ^bb0(%x: f32):
    %n = arith.negf %x : f32
    loomrt.yield %n : f32
  }
  return
}

// -----

// Offsets come with strides.
func.func @offsets_without_strides(%a: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{'loomrt.kernel' op has in_offsets without in_strides}}
  loomrt.kernel ins(%a : memref<4xf32>) outs(%y : memref<4xf32>) attributes {origin = "neg", in_offsets = array<i64: 0>} {
  ^bb0(%x: f32):
    %n = arith.negf %x : f32
    loomrt.yield %n : f32
  }
  return
}

// -----

// The second half of an 8-element buffer ends at element 7; starting at 5
// reads element 8.
func.func @read_past_the_end(%a: memref<8xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{'loomrt.kernel' op reads input 0 at element 8 of 8 (in_strides and in_offsets out of bounds)}}
  loomrt.kernel ins(%a : memref<8xf32>) outs(%y : memref<4xf32>) attributes {origin = "neg", in_strides = [array<i64: 1>], in_offsets = array<i64: 5>} {
  ^bb0(%x: f32):
    %n = arith.negf %x : f32
    loomrt.yield %n : f32
  }
  return
}

// -----

func.func @negative_stride(%a: memref<8xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{'loomrt.kernel' op in_strides must not be negative}}
  loomrt.kernel ins(%a : memref<8xf32>) outs(%y : memref<4xf32>) attributes {origin = "neg", in_strides = [array<i64: -1>], in_offsets = array<i64: 7>} {
  ^bb0(%x: f32):
    %n = arith.negf %x : f32
    loomrt.yield %n : f32
  }
  return
}

// -----

// The second half, exactly: valid.
func.func @second_half(%a: memref<8xf32>, %y: memref<4xf32>) {
  loomrt.kernel ins(%a : memref<8xf32>) outs(%y : memref<4xf32>) attributes {origin = "neg", in_strides = [array<i64: 1>], in_offsets = array<i64: 4>} {
  ^bb0(%x: f32):
    %n = arith.negf %x : f32
    loomrt.yield %n : f32
  }
  return
}

// RUN: loom-opt %s -split-input-file -verify-diagnostics
// The swap ops' verifiers: a swapped-in buffer is read only after the wait
// on its copy (a prefetch that came too late cannot be used), and the
// copies keep the type.

func.func @used_before_wait(%x: memref<16xf32>, %out: memref<16xf32> {loomrt.result = 0 : i64})
    attributes {loomrt.num_inputs = 1 : i64} {
  %h = loomrt.alloc {category = "swap"} : memref<16xf32>
  %b = loomrt.alloc {category = "activation"} : memref<16xf32>
  // expected-error @+1 {{'loomrt.swap_in' op the swapped-in buffer is used before the wait on its handle: prefetched too late}}
  %in = loomrt.swap_in %h to %b : memref<16xf32>, memref<16xf32>
  // expected-note @+1 {{used here}}
  loomrt.kernel ins(%b : memref<16xf32>) outs(%out : memref<16xf32>) attributes {origin = "neg"} {
  ^bb0(%v: f32):
    %n = arith.negf %v : f32
    loomrt.yield %n : f32
  }
  loomrt.wait %in
  return
}

// -----

// Through a view too.
func.func @view_used_before_wait(%out: memref<2x8xf32> {loomrt.result = 0 : i64})
    attributes {loomrt.num_inputs = 0 : i64} {
  %h = loomrt.alloc {category = "swap"} : memref<16xf32>
  %b = loomrt.alloc {category = "activation"} : memref<16xf32>
  %v = loomrt.view %b : memref<16xf32> to memref<2x8xf32>
  // expected-error @+1 {{prefetched too late}}
  %in = loomrt.swap_in %h to %b : memref<16xf32>, memref<16xf32>
  // expected-note @+1 {{used here}}
  loomrt.copy ins(%v : memref<2x8xf32>) outs(%out : memref<2x8xf32>) {origin = "result", shape = array<i64: 2, 8>, source_offset = 0 : i64, source_strides = array<i64: 8, 1>, target_offset = 0 : i64, target_strides = array<i64: 8, 1>}
  loomrt.wait %in
  return
}

// -----

func.func @never_waited() attributes {loomrt.num_inputs = 0 : i64} {
  %h = loomrt.alloc {category = "swap"} : memref<16xf32>
  %b = loomrt.alloc {category = "activation"} : memref<16xf32>
  // expected-error @+1 {{'loomrt.swap_in' op the swapped-in buffer is never waited on}}
  %in = loomrt.swap_in %h to %b : memref<16xf32>, memref<16xf32>
  return
}

// -----

func.func @written_before_the_copy(%x: memref<16xf32>) attributes {loomrt.num_inputs = 1 : i64} {
  %h = loomrt.alloc {category = "swap"} : memref<16xf32>
  %b = loomrt.alloc {category = "activation"} : memref<16xf32>
  // expected-note @+1 {{used here}}
  loomrt.kernel ins(%x : memref<16xf32>) outs(%b : memref<16xf32>) attributes {origin = "neg"} {
  ^bb0(%v: f32):
    %n = arith.negf %v : f32
    loomrt.yield %n : f32
  }
  // expected-error @+1 {{prefetched too late}}
  %in = loomrt.swap_in %h to %b : memref<16xf32>, memref<16xf32>
  loomrt.wait %in
  return
}

// -----

func.func @types(%a: memref<16xf32>, %h: memref<2x8xf32>) attributes {loomrt.num_inputs = 2 : i64} {
  // expected-error @+1 {{'loomrt.swap_out' op copies 'memref<16xf32>' into 'memref<2x8xf32>': the types must be equal}}
  %out = loomrt.swap_out %a to %h : memref<16xf32>, memref<2x8xf32>
  loomrt.wait %out
  return
}

// RUN: loom-opt --convert-stablehlo-to-loom --split-input-file --verify-diagnostics %s

// Every unsupported op name is reported at its first use, with the reason,
// then a summary lists them all.

func.func @several(%x: tensor<4x8xf32>, %i: tensor<?x2xi64>, %c: tensor<f32>) -> (tensor<4x8xf32>, tensor<?xf32>, tensor<4xf32>, tensor<4x8xf32>) {
  // expected-error@+2 {{cannot convert 'stablehlo.cbrt' to loom: unknown op: not part of the StableHLO subset Loom imports (see convert-stablehlo-to-loom for that subset) (first of 2 uses)}}
  // expected-error@+1 {{StableHLO to loom: 4 unsupported op kind(s): 'stablehlo.cbrt', 'stablehlo.gather', 'stablehlo.reduce', 'stablehlo.custom_call'}}
  %0 = stablehlo.cbrt %x : tensor<4x8xf32>
  %1 = stablehlo.cbrt %0 : tensor<4x8xf32>
  // expected-error@+1 {{cannot convert 'stablehlo.gather' to loom: gather indexes 2 operand dimensions at once; a gather with dimensions of dynamic size must be a take along one axis}}
  %2 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>, slice_sizes = array<i64: 1, 1>}> : (tensor<4x8xf32>, tensor<?x2xi64>) -> tensor<?xf32>
  // expected-error@+1 {{cannot convert 'stablehlo.reduce' to loom: reduction body 'stablehlo.subtract' has no loom equivalent (supported: add, multiply, maximum, minimum; and, or of i1)}}
  %3 = stablehlo.reduce(%x init: %c) applies stablehlo.subtract across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  // expected-error@+1 {{cannot convert 'stablehlo.custom_call' to loom: custom_call target @foo has no loom equivalent (supported: @Sharding, @check.expect_eq, @check.expect_almost_eq, @check.expect_close)}}
  %4 = stablehlo.custom_call @foo(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1, %2, %3, %4 : tensor<4x8xf32>, tensor<?xf32>, tensor<4xf32>, tensor<4x8xf32>
}

// -----

// Element types loom lacks; further reasons of one op name are notes.
func.func @types(%a: tensor<4xf64>, %b: tensor<4xi8>, %z: tensor<4xcomplex<f32>>) -> (tensor<4xf64>, tensor<4xi8>, tensor<4xcomplex<f32>>) {
  // expected-error@+3 {{cannot convert 'stablehlo.add' to loom: element type 'f64' is not supported by loom (it has f32, bf16, f16, i64, i32, i1; export the model with those types) (first of 3 uses)}}
  // expected-error@+2 {{StableHLO to loom: 1 unsupported op kind(s): 'stablehlo.add'}}
  // expected-note@+2 {{another use: element type 'i8' is not supported by loom}}
  %0 = stablehlo.add %a, %a : tensor<4xf64>
  %1 = stablehlo.add %b, %b : tensor<4xi8>
  // expected-note@+1 {{another use: element type 'complex<f32>' is not supported by loom}}
  %2 = stablehlo.add %z, %z : tensor<4xcomplex<f32>>
  return %0, %1, %2 : tensor<4xf64>, tensor<4xi8>, tensor<4xcomplex<f32>>
}

// -----

// Element types loom has, but not for this op.
func.func @float_only(%i: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error@+2 {{cannot convert 'stablehlo.exponential' to loom: element type 'i32' is not supported by loom.exp (it takes f32, bf16, f16)}}
  // expected-error@+1 {{1 unsupported op kind(s)}}
  %0 = stablehlo.exponential %i : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @gather_batching_unpaired(%x: tensor<2x3x4xf32>, %i: tensor<2x5x1xi64>) -> tensor<2x5x4xf32> {
  // expected-error@+2 {{cannot convert 'stablehlo.gather' to loom: gather: pairs a different number of operand and index batching dimensions}}
  // expected-error@+1 {{1 unsupported op kind(s)}}
  %0 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [1], operand_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, slice_sizes = array<i64: 1, 1, 4>}> : (tensor<2x3x4xf32>, tensor<2x5x1xi64>) -> tensor<2x5x4xf32>
  return %0 : tensor<2x5x4xf32>
}

// -----

func.func @gather_partial(%x: tensor<10x8xf32>, %i: tensor<?x1xi64>) -> tensor<?x4xf32> {
  // expected-error@+2 {{cannot convert 'stablehlo.gather' to loom: gather takes partial slices of dimension 1; a gather with dimensions of dynamic size must be a take along one axis}}
  // expected-error@+1 {{1 unsupported op kind(s)}}
  %0 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 4>}> : (tensor<10x8xf32>, tensor<?x1xi64>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// A static gather of any other form reads single elements, if its
// dimension numbers describe one.
func.func @gather_window_too_big(%x: tensor<10x8xf32>, %i: tensor<3x1xi64>) -> tensor<3x9xf32> {
  // expected-error@+2 {{cannot convert 'stablehlo.gather' to loom: gather: a window of 9 elements of operand dimension 1 (of 8)}}
  // expected-error@+1 {{1 unsupported op kind(s)}}
  %0 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 9>}> : (tensor<10x8xf32>, tensor<3x1xi64>) -> tensor<3x9xf32>
  return %0 : tensor<3x9xf32>
}

// -----

// Algorithms of several components (bf16_bf16_f32_x3) are not f32 dots.
func.func @dot_algorithm(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error@+2 {{cannot convert 'stablehlo.dot_general' to loom: dot_general algorithm with several components or primitive operations is not supported}}
  // expected-error@+1 {{1 unsupported op kind(s)}}
  %0 = stablehlo.dot_general %a, %a, contracting_dims = [1] x [0],
    algorithm = <lhs_precision_type = bf16, rhs_precision_type = bf16, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 3, allow_imprecise_accumulation = false>
    : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @dot_narrowing(%a: tensor<2x2xf32>) -> tensor<2x2xbf16> {
  // expected-error@+2 {{cannot convert 'stablehlo.dot_general' to loom: operands of element types f32 and f32 with result bf16: loom.dot_general has one element type (only widening bf16/f16 to f32 and i32 to i64 operands is supported)}}
  // expected-error@+1 {{1 unsupported op kind(s)}}
  %0 = stablehlo.dot_general %a, %a, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xbf16>
  return %0 : tensor<2x2xbf16>
}

// -----

func.func @compare_types(%a: tensor<4xi32>, %f: tensor<4xf32>, %p: tensor<4xi1>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  // expected-error@+2 {{cannot convert 'stablehlo.compare' to loom: UNSIGNED comparison of signless integers has no loom equivalent (loom compares them as signed) (first of 3 uses)}}
  // expected-error@+1 {{1 unsupported op kind(s)}}
  %0 = stablehlo.compare LT, %a, %a, UNSIGNED : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  // expected-note@+1 {{another use: TOTALORDER comparison has no loom equivalent}}
  %1 = stablehlo.compare LT, %f, %f, TOTALORDER : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  // expected-note@+1 {{another use: SIGNED comparison of i1 (true < false) has no loom equivalent; StableHLO compares booleans UNSIGNED}}
  %2 = stablehlo.compare LT, %p, %p, SIGNED : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0, %1, %2 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// -----

func.func @reduce_forms(%x: tensor<4x8xf32>, %i: tensor<4x8xi32>, %c: tensor<f32>, %ci: tensor<i32>) -> (tensor<8xf32>, tensor<8xi32>, tensor<4xi32>) {
  // An argmax without JAX's NaN and tie handling.
  // expected-error@+2 {{cannot convert 'stablehlo.reduce' to loom: reduction body of 2 inputs is not one add, multiply, maximum, minimum, and or or per input of its accumulator and element, nor an argmax/argmin of values and indices (the form jax.numpy.argmax/argmin lower to) (first of 2 uses)}}
  // expected-error@+1 {{1 unsupported op kind(s)}}
  %0:2 = stablehlo.reduce(%x init: %c), (%i init: %ci) across dimensions = [0] : (tensor<4x8xf32>, tensor<4x8xi32>, tensor<f32>, tensor<i32>) -> (tensor<8xf32>, tensor<8xi32>)
   reducer(%a: tensor<f32>, %b: tensor<f32>) (%p: tensor<i32>, %q: tensor<i32>)  {
    %ge = stablehlo.compare GE, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %m = stablehlo.select %ge, %a, %b : tensor<i1>, tensor<f32>
    %n = stablehlo.select %ge, %p, %q : tensor<i1>, tensor<i32>
    stablehlo.return %m, %n : tensor<f32>, tensor<i32>
  }
  // expected-note@+1 {{another use: reduction with a bitwise 'stablehlo.and' body has no loom equivalent (only logical and/or of i1)}}
  %1 = stablehlo.reduce(%i init: %ci) applies stablehlo.and across dimensions = [1] : (tensor<4x8xi32>, tensor<i32>) -> tensor<4xi32>
  return %0#0, %0#1, %1 : tensor<8xf32>, tensor<8xi32>, tensor<4xi32>
}

// -----

func.func @window_forms(%x: tensor<4x6xf32>, %c: tensor<f32>) -> (tensor<2x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>) {
  // expected-error@+2 {{cannot convert 'stablehlo.reduce_window' to loom: reduce_window needs one positive window size, stride and base and window dilation and one [low, high] padding per dimension (first of 3 uses)}}
  // expected-error@+1 {{1 unsupported op kind(s)}}
  %0 = "stablehlo.reduce_window"(%x, %c) <{window_dimensions = array<i64: 2, 2>, window_dilations = array<i64: 0, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<4x6xf32>, tensor<f32>) -> tensor<2x5xf32>
  // expected-note@+1 {{another use: reduce_window of several inputs has no loom equivalent}}
  %1:2 = "stablehlo.reduce_window"(%x, %x, %c, %c) <{window_dimensions = array<i64: 2, 2>}> ({
  ^bb0(%a: tensor<f32>, %p: tensor<f32>, %b: tensor<f32>, %q: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    %t = stablehlo.add %p, %q : tensor<f32>
    stablehlo.return %s, %t : tensor<f32>, tensor<f32>
  }) : (tensor<4x6xf32>, tensor<4x6xf32>, tensor<f32>, tensor<f32>) -> (tensor<3x5xf32>, tensor<3x5xf32>)
  // expected-note@+1 {{another use: reduce_window result shape does not match its window, strides and padding in dimension 1}}
  %2 = "stablehlo.reduce_window"(%x, %c) <{window_dimensions = array<i64: 2, 3>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<4x6xf32>, tensor<f32>) -> tensor<3x5xf32>
  return %0, %1#0, %2 : tensor<2x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>
}

// -----

func.func @pad_forms(%x: tensor<2x3xf32>, %c: tensor<f32>, %d: tensor<4xf32>) -> (tensor<4x3xf32>, tensor<3x3xf32>) {
  // expected-error@+2 {{cannot convert 'stablehlo.pad' to loom: pad needs static shapes, a 0-d padding value of the operand's element type, one low, high and (non-negative) interior padding per dimension, and the result shape they give (first of 2 uses)}}
  // expected-error@+1 {{1 unsupported op kind(s)}}
  %0 = stablehlo.pad %x, %c, low = [1, 0], high = [0, 0], interior = [0, 0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %1 = stablehlo.pad %x, %c, low = [0, 0], high = [0, 0], interior = [-1, 0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3x3xf32>
  return %0, %1 : tensor<4x3xf32>, tensor<3x3xf32>
}

// -----

// Ops, attributes and types Loom does not define parse (the attributes and
// types as opaque ones), so that the ops are reported.
func.func @undefined(%x: tensor<4x8xf32>, %t: !stablehlo.token) -> (tensor<4x8xf32>, !stablehlo.token) {
  // expected-error@+2 {{cannot convert 'stablehlo.all_gather' to loom: unknown op: not part of the StableHLO subset Loom imports}}
  // expected-error@+1 {{StableHLO to loom: 2 unsupported op kind(s): 'stablehlo.all_gather', 'stablehlo.after_all'}}
  %0 = "stablehlo.all_gather"(%x) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0]]> : tensor<1x1xi64>}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-error@+1 {{cannot convert 'stablehlo.after_all' to loom: unknown op}}
  %1 = stablehlo.after_all %t : !stablehlo.token
  return %0, %1 : tensor<4x8xf32>, !stablehlo.token
}

// -----

func.func @select_and_scatter_forms(%x: tensor<4xf32>, %g: tensor<2xf32>, %c: tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error@+2 {{cannot convert 'stablehlo.select_and_scatter' to loom: select_and_scatter with padding has no loom equivalent (JAX pads the operand with an explicit stablehlo.pad instead) (first of 2 uses)}}
  // expected-error@+1 {{1 unsupported op kind(s)}}
  %0 = "stablehlo.select_and_scatter"(%x, %g, %c) <{window_dimensions = array<i64: 2>, window_strides = array<i64: 2>, padding = dense<[[1, 1]]> : tensor<1x2xi64>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %p = stablehlo.compare  GE, %a, %b,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<4xf32>, tensor<2xf32>, tensor<f32>) -> tensor<4xf32>
  // expected-note@+1 {{another use: select_and_scatter needs a select body that is one compare of its two arguments}}
  %1 = "stablehlo.select_and_scatter"(%x, %g, %c) <{window_dimensions = array<i64: 2>, window_strides = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %p = stablehlo.compare  GE, %b, %a,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<4xf32>, tensor<2xf32>, tensor<f32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Loops and slices at indices only known at run time.
func.func @runtime_indices(%x: tensor<4xf32>, %n: tensor<i32>, %i: tensor<i32>) -> (tensor<4xf32>, tensor<1xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  // expected-error@+2 {{cannot convert 'stablehlo.while' to loom: its condition is not known at import (iteration 0): Loom unrolls loops whose trip count is static (fori_loop and scan with constant bounds)}}
  // expected-error@+1 {{StableHLO to loom: 2 unsupported op kind(s): 'stablehlo.while', 'stablehlo.dynamic_slice'}}
  %r:2 = stablehlo.while(%k = %c0, %y = %x) : tensor<i32>, tensor<4xf32>
  cond {
    %p = stablehlo.compare  LT, %k, %n,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %k, %one : tensor<i32>
    %t = stablehlo.tanh %y : tensor<4xf32>
    stablehlo.return %next, %t : tensor<i32>, tensor<4xf32>
  }
  // expected-error@+1 {{cannot convert 'stablehlo.dynamic_slice' to loom: dynamic_slice start index of dimension 0 is computed at run time; Loom's programs are static: index with constants or the counter of a loop with constant bounds (which Loom unrolls)}}
  %s = stablehlo.dynamic_slice %x, %i, sizes = [1] : (tensor<4xf32>, tensor<i32>) -> tensor<1xf32>
  return %r#1, %s : tensor<4xf32>, tensor<1xf32>
}

// -----

func.func @reduce_precision_to_half(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+2 {{cannot convert 'stablehlo.reduce_precision' to loom: reduce_precision to e5m10 of 32-bit floats has no loom equivalent (supported: formats the type fits in, and e8m7 of f32)}}
  // expected-error@+1 {{1 unsupported op kind(s)}}
  %0 = stablehlo.reduce_precision %x, format = e5m10 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

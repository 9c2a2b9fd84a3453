// RUN: loom-opt --split-input-file --verify-diagnostics %s

// Input the import dialects cannot parse: errors with locations, no crash.

func.func @missing_type(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{expected ':'}}
  %0 = stablehlo.add %a, %a
  return %0 : tensor<4xf32>
}

// -----

func.func @bad_direction(%a: tensor<4xf32>) -> tensor<4xi1> {
  // expected-error@+2 {{to be one of: EQ, NE, GE, GT, LE, LT}}
  // expected-error@+1 {{failed to parse StableHLO_ComparisonDirectionAttr}}
  %0 = stablehlo.compare XX, %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @bad_gather_field(%a: tensor<4x8xf32>, %i: tensor<4xi64>) -> tensor<4x8xf32> {
  // expected-error@+1 {{unknown field 'offset_dim' in #stablehlo.gather (fields: offset_dims, collapsed_slice_dims, operand_batching_dims, start_indices_batching_dims, start_index_map, index_vector_dim)}}
  %0 = "stablehlo.gather"(%a, %i) <{dimension_numbers = #stablehlo.gather<offset_dim = [1]>, slice_sizes = array<i64: 1, 8>}> : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @bad_scatter_field(%a: tensor<4x8xf32>, %i: tensor<4xi64>) -> tensor<4x8xf32> {
  // expected-error@+1 {{unknown field 'update_window_dim' in #stablehlo.scatter (fields: update_window_dims, inserted_window_dims, input_batching_dims, scatter_indices_batching_dims, scatter_dims_to_operand_dims, index_vector_dim)}}
  %0 = "stablehlo.scatter"(%a, %i, %a) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dim = [1]>}> ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    stablehlo.return %y : tensor<f32>
  }) : (tensor<4x8xf32>, tensor<4xi64>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @repeated_field(%a: tensor<4x8xf32>, %i: tensor<4xi64>) -> tensor<4x8xf32> {
  // expected-error@+1 {{field 'offset_dims' of #stablehlo.gather is given twice}}
  %0 = "stablehlo.gather"(%a, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], offset_dims = [1]>, slice_sizes = array<i64: 1, 8>}> : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @incomplete_algorithm(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{#stablehlo.dot_algorithm needs all of: lhs_precision_type, rhs_precision_type, accumulation_type, lhs_component_count, rhs_component_count, num_primitive_operations, allow_imprecise_accumulation}}
  %0 = stablehlo.dot_general %a, %a, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = tf32> : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @bad_precision(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{unknown precision 'FAST' (expected DEFAULT, HIGH or HIGHEST)}}
  %0 = stablehlo.dot %a, %a, precision = [FAST] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @compact_reduce_two_inputs(%a: tensor<2x2xf32>, %c: tensor<f32>) -> (tensor<2xf32>, tensor<2xf32>) {
  // expected-error@+1 {{the compact `applies` form of stablehlo.reduce needs exactly one input; use the `reducer` form}}
  %0:2 = stablehlo.reduce(%a init: %c), (%a init: %c) applies stablehlo.add across dimensions = [1] : (tensor<2x2xf32>, tensor<2x2xf32>, tensor<f32>, tensor<f32>) -> (tensor<2xf32>, tensor<2xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<2xf32>
}

// -----

func.func @reduce_type_count(%a: tensor<2x2xf32>, %c: tensor<f32>) -> tensor<2xf32> {
  // expected-error@+1 {{stablehlo.reduce has 1 inputs and 1 init values, but its type lists 1 operand types}}
  %0 = stablehlo.reduce(%a init: %c) applies stablehlo.add across dimensions = [1] : (tensor<2x2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @concatenate_without_dim(%a: tensor<2xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{expected `, dim = N` after the inputs of stablehlo.concatenate}}
  %0 = stablehlo.concatenate %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Ops the dialects do not define parse only in simple forms.
func.func @unknown_op_form(%a: tensor<f32>) -> tensor<f32> {
  // expected-error@+2 {{expected ':'}}
  // expected-error@+1 {{custom op 'stablehlo.all_reduce' is not an op Loom's StableHLO importer defines: it reads such ops only in the generic form or as `operands (, key = value)* attr-dict : types`}}
  %0 = stablehlo.all_reduce(%iter = %a) : tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @unknown_op_types(%a: tensor<f32>) -> tensor<f32> {
  // expected-error@+1 {{custom op 'stablehlo.cbrt' has 2 operands but its type lists 1}}
  %0 = stablehlo.cbrt %a, %a : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @constant_type() -> tensor<3xf32> {
  // expected-error@+2 {{'stablehlo.constant' op inferred type(s) 'tensor<2xf32>' are incompatible with return type(s) of operation 'tensor<3xf32>'}}
  // expected-error@+1 {{'stablehlo.constant' op failed to infer returned types}}
  %0 = "stablehlo.constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @reduce_precision_format(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{expected a float format `e<exponent bits>m<mantissa bits>` (e.g. e8m7)}}
  %0 = stablehlo.reduce_precision %x, format = bf16 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

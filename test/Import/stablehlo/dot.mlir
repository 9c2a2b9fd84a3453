// RUN: loom-opt --convert-stablehlo-to-loom %s | FileCheck %s

// CHECK-LABEL: func.func @dot_general
// CHECK-SAME: (%[[A:.*]]: tensor<2x3x4xf32>, %[[B:.*]]: tensor<2x4x5xf32>)
func.func @dot_general(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> (tensor<2x3x5xf32>, tensor<2x3x5xf32>) {
  // CHECK: loom.dot_general %[[A]], %[[B]], batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %0 = stablehlo.dot_general %a, %b,
    batching_dims = [0] x [0],
    contracting_dims = [2] x [1],
    precision = [DEFAULT, DEFAULT]
    : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  // The generic form.
  // CHECK: loom.dot_general %[[A]], %[[B]], batching_dims = [0] x [0], contracting_dims = [2] x [1]
  %1 = "stablehlo.dot_general"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>]}> : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0, %1 : tensor<2x3x5xf32>, tensor<2x3x5xf32>
}

// bf16 operands with an f32 result (preferred_element_type=f32) are
// converted first: loom.dot_general has one element type.
// CHECK-LABEL: func.func @mixed_precision
// CHECK-SAME: (%[[A:.*]]: tensor<8x16xbf16>, %[[B:.*]]: tensor<16x4xbf16>)
func.func @mixed_precision(%a: tensor<8x16xbf16>, %b: tensor<16x4xbf16>) -> tensor<8x4xf32> {
  // CHECK: %[[A32:.*]] = loom.convert %[[A]] : tensor<8x16xbf16> -> tensor<8x16xf32>
  // CHECK: %[[B32:.*]] = loom.convert %[[B]] : tensor<16x4xbf16> -> tensor<16x4xf32>
  // CHECK: loom.dot_general %[[A32]], %[[B32]], contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<8x16xbf16>, tensor<16x4xbf16>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// CHECK-LABEL: func.func @dot
// CHECK-SAME: (%[[M:.*]]: tensor<3x4xf32>, %[[V:.*]]: tensor<4xf32>)
func.func @dot(%m: tensor<3x4xf32>, %v: tensor<4xf32>) -> (tensor<3xf32>, tensor<f32>) {
  // CHECK: loom.dot_general %[[M]], %[[V]], contracting_dims = [1] x [0] : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3xf32>
  %0 = stablehlo.dot %m, %v, precision = [DEFAULT, DEFAULT] : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3xf32>
  // CHECK: loom.dot_general %[[V]], %[[V]], contracting_dims = [0] x [0] : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  %1 = stablehlo.dot %v, %v : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return %0, %1 : tensor<3xf32>, tensor<f32>
}

// A dot algorithm of one component with f32 accumulation: tf32 operand
// precision computes in f32 (at least as precise as asked, as XLA's CPU
// backend does); bf16 rounds that operand through bf16 first.
// CHECK-LABEL: func.func @dot_algorithms
// CHECK-SAME: (%[[A:.*]]: tensor<2x4xf32>, %[[B:.*]]: tensor<4x3xf32>)
func.func @dot_algorithms(%a: tensor<2x4xf32>, %b: tensor<4x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: loom.dot_general %[[A]], %[[B]], contracting_dims = [1] x [0]
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0],
    algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false>
    : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[AB:.*]] = loom.convert %[[A]] : tensor<2x4xf32> -> tensor<2x4xbf16>
  // CHECK: %[[AR:.*]] = loom.convert %[[AB]] : tensor<2x4xbf16> -> tensor<2x4xf32>
  // CHECK: loom.dot_general %[[AR]], %[[B]], contracting_dims = [1] x [0]
  %1 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0],
    algorithm = <lhs_precision_type = bf16, rhs_precision_type = f32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false>
    : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

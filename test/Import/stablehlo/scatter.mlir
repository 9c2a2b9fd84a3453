// RUN: loom-opt --split-input-file --verify-diagnostics --convert-stablehlo-to-loom %s | FileCheck %s

// Embedding-gradient scatters (an add of whole slices along one axis)
// become loom.scatter_add. StableHLO skips out-of-bounds indices;
// loom.scatter_add rejects them, so the indices must be in range. Any
// other static add-scatter adds single elements into the flattened
// operand, and skips the windows that do not fit.

// The gradient of `table[ids]` as JAX emits it: the ids have a trailing
// index vector dimension of size 1, which is dropped.
// CHECK-LABEL: func.func @embedding_grad
// CHECK-SAME: (%[[T:.*]]: tensor<50x16xf32>, %[[IDS:.*]]: tensor<2x8x1xi32>, %[[U:.*]]: tensor<2x8x16xf32>)
func.func @embedding_grad(%t: tensor<50x16xf32>, %ids: tensor<2x8x1xi32>, %u: tensor<2x8x16xf32>) -> tensor<50x16xf32> {
  // CHECK: %[[R:.*]] = loom.reshape %[[IDS]] : tensor<2x8x1xi32> -> tensor<2x8xi32>
  // CHECK: %[[S:.*]] = loom.scatter_add %[[T]][%[[R]]], %[[U]], axis = 0 : (tensor<50x16xf32>, tensor<2x8xi32>, tensor<2x8x16xf32>) -> tensor<50x16xf32>
  // CHECK: return %[[S]]
  %0 = "stablehlo.scatter"(%t, %ids, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2>, unique_indices = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<50x16xf32>, tensor<2x8x1xi32>, tensor<2x8x16xf32>) -> tensor<50x16xf32>
  return %0 : tensor<50x16xf32>
}

// -----

// Along axis 1 StableHLO's updates put the index dimensions first; loom's
// put them at the axis, so the updates are transposed.
// CHECK-LABEL: func.func @axis1
// CHECK-SAME: (%[[X:.*]]: tensor<4x10x5xf32>, %[[I:.*]]: tensor<3x1xi64>, %[[U:.*]]: tensor<3x4x5xf32>)
func.func @axis1(%x: tensor<4x10x5xf32>, %i: tensor<3x1xi64>, %u: tensor<3x4x5xf32>) -> tensor<4x10x5xf32> {
  // CHECK: %[[R:.*]] = loom.reshape %[[I]] : tensor<3x1xi64> -> tensor<3xi64>
  // CHECK: %[[UT:.*]] = loom.transpose %[[U]], permutation = [1, 0, 2] : tensor<3x4x5xf32> -> tensor<4x3x5xf32>
  // CHECK: loom.scatter_add %[[X]][%[[R]]], %[[UT]], axis = 1 : (tensor<4x10x5xf32>, tensor<3xi64>, tensor<4x3x5xf32>) -> tensor<4x10x5xf32>
  %0 = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1, 2], inserted_window_dims = [1], scatter_dims_to_operand_dims = [1], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %b, %a : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<4x10x5xf32>, tensor<3x1xi64>, tensor<3x4x5xf32>) -> tensor<4x10x5xf32>
  return %0 : tensor<4x10x5xf32>
}

// -----

// A scatter that replaces instead of adding stays unsupported.
func.func @replace(%t: tensor<50x16xf32>, %ids: tensor<8x1xi32>, %u: tensor<8x16xf32>) -> tensor<50x16xf32> {
  // expected-error@+2 {{cannot convert 'stablehlo.scatter' to loom: scatter body is not an add of its two arguments; only add-scatters (gradients of gathers) are supported}}
  // expected-error@+1 {{StableHLO to loom: 1 unsupported op kind(s): 'stablehlo.scatter'}}
  %0 = "stablehlo.scatter"(%t, %ids, %u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    stablehlo.return %b : tensor<f32>
  }) : (tensor<50x16xf32>, tensor<8x1xi32>, tensor<8x16xf32>) -> tensor<50x16xf32>
  return %0 : tensor<50x16xf32>
}

// -----

// Partial slices (a window of 4 of the 16 columns) add single elements:
// element (p, c) of the updates goes to row ids[p], column c of the
// flattened operand; a row outside [0, 49] skips its window.
// CHECK-LABEL: func.func @partial
// CHECK-SAME: (%[[T:.*]]: tensor<50x16xf32>, %[[IDS:.*]]: tensor<8x1xi32>, %[[U:.*]]: tensor<8x4xf32>)
func.func @partial(%t: tensor<50x16xf32>, %ids: tensor<8x1xi32>, %u: tensor<8x4xf32>) -> tensor<50x16xf32> {
  // CHECK: %[[I64:.*]] = loom.convert %[[IDS]] : tensor<8x1xi32> -> tensor<8x1xi64>
  // CHECK: %[[COL:.*]] = loom.iota dim = 1 : tensor<8x4xi64>
  // CHECK: %[[ROW:.*]] = loom.broadcast %{{.*}}, dims = [0] : tensor<8xi64> -> tensor<8x4xi64>
  // CHECK-DAG: %[[LAST:.*]] = loom.constant dense<49> : tensor<8x4xi64>
  // CHECK-DAG: %[[ZERO:.*]] = loom.constant dense<0> : tensor<8x4xi64>
  // CHECK-DAG: %[[LE:.*]] = loom.compare le, %[[ROW]], %[[LAST]]
  // CHECK-DAG: %[[GE:.*]] = loom.compare ge, %[[ROW]], %[[ZERO]]
  // CHECK: %[[FITS:.*]] = loom.select %[[GE]], %[[LE]], %{{.*}} : tensor<8x4xi1>, tensor<8x4xi1>
  // CHECK: %[[STRIDE:.*]] = loom.constant dense<16> : tensor<8x4xi64>
  // CHECK: %[[R16:.*]] = loom.mul %[[ROW]], %[[STRIDE]]
  // CHECK: %[[POS:.*]] = loom.add %[[COL]], %[[R16]]
  // CHECK: %[[SAFE:.*]] = loom.select %[[FITS]], %[[POS]], %{{.*}} : tensor<8x4xi1>, tensor<8x4xi64>
  // CHECK: %[[KEPT:.*]] = loom.select %[[FITS]], %[[U]], %{{.*}} : tensor<8x4xi1>, tensor<8x4xf32>
  // CHECK: %[[FLAT:.*]] = loom.reshape %[[T]] : tensor<50x16xf32> -> tensor<800xf32>
  // CHECK: %[[S:.*]] = loom.scatter_add %[[FLAT]][%[[SAFE]]], %[[KEPT]], axis = 0 : (tensor<800xf32>, tensor<8x4xi64>, tensor<8x4xf32>) -> tensor<800xf32>
  // CHECK: %[[OUT:.*]] = loom.reshape %[[S]] : tensor<800xf32> -> tensor<50x16xf32>
  // CHECK: return %[[OUT]]
  %0 = "stablehlo.scatter"(%t, %ids, %u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<50x16xf32>, tensor<8x1xi32>, tensor<8x4xf32>) -> tensor<50x16xf32>
  return %0 : tensor<50x16xf32>
}

// -----

// With dimensions of dynamic size only the embedding-gradient form
// converts.
func.func @partial_dynamic(%t: tensor<50x16xf32>, %ids: tensor<?x1xi32>, %u: tensor<?x4xf32>) -> tensor<50x16xf32> {
  // expected-error@+2 {{cannot convert 'stablehlo.scatter' to loom: scatter updates partial slices of dimension 1; a scatter with dimensions of dynamic size must add whole slices along one axis}}
  // expected-error@+1 {{StableHLO to loom: 1 unsupported op kind(s): 'stablehlo.scatter'}}
  %0 = "stablehlo.scatter"(%t, %ids, %u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<50x16xf32>, tensor<?x1xi32>, tensor<?x4xf32>) -> tensor<50x16xf32>
  return %0 : tensor<50x16xf32>
}

// -----

// The index vector's dimension must hold one index per indexed dimension.
func.func @vector_mismatch(%t: tensor<5x6xf32>, %ids: tensor<3x2xi32>, %u: tensor<3xf32>) -> tensor<5x6xf32> {
  // expected-error@+2 {{cannot convert 'stablehlo.scatter' to loom: scatter: index vectors of 2 indices for 1 indexed dimensions}}
  // expected-error@+1 {{StableHLO to loom: 1 unsupported op kind(s): 'stablehlo.scatter'}}
  %0 = "stablehlo.scatter"(%t, %ids, %u) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<5x6xf32>, tensor<3x2xi32>, tensor<3xf32>) -> tensor<5x6xf32>
  return %0 : tensor<5x6xf32>
}

// -----

// The transpose of take_along_axis (JAX's gradient of optax's loss): the
// input is flattened as the gather's operand, scatter_add along axis 0,
// and reshaped back.
// CHECK-LABEL: func.func @take_along_axis_grad
// CHECK-SAME: (%[[Z:.*]]: tensor<2x4x10xf32>, %[[I:.*]]: tensor<2x4x1x1xi32>, %[[U:.*]]: tensor<2x4x1xf32>)
func.func @take_along_axis_grad(%z: tensor<2x4x10xf32>, %i: tensor<2x4x1x1xi32>, %u: tensor<2x4x1xf32>) -> tensor<2x4x10xf32> {
  // CHECK: %[[R:.*]] = loom.reshape %[[I]] : tensor<2x4x1x1xi32> -> tensor<2x4x1xi32>
  // CHECK: %[[FLAT:.*]] = loom.reshape %[[Z]] : tensor<2x4x10xf32> -> tensor<80xf32>
  // CHECK: %[[S:.*]] = loom.scatter_add %[[FLAT]][%{{.*}}], %[[U]], axis = 0
  // CHECK: %[[OUT:.*]] = loom.reshape %[[S]] : tensor<80xf32> -> tensor<2x4x10xf32>
  // CHECK: return %[[OUT]]
  %0 = "stablehlo.scatter"(%z, %i, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [2], input_batching_dims = [0, 1], scatter_indices_batching_dims = [0, 1], scatter_dims_to_operand_dims = [2], index_vector_dim = 3>, unique_indices = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<2x4x10xf32>, tensor<2x4x1x1xi32>, tensor<2x4x1xf32>) -> tensor<2x4x10xf32>
  return %0 : tensor<2x4x10xf32>
}

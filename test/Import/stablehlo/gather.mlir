// RUN: loom-opt --convert-stablehlo-to-loom %s | FileCheck %s

// Embedding-form gathers (a take along one axis) become loom.gather, with
// the indices clamped into range as StableHLO specifies.

// `table[ids]` as JAX emits it: the ids get a trailing index vector
// dimension of size 1, which is dropped.
// CHECK-LABEL: func.func @embedding
// CHECK-SAME: (%[[TABLE:.*]]: tensor<50x16xf32>, %[[IDS:.*]]: tensor<2x8x1xi32>)
func.func @embedding(%table: tensor<50x16xf32>, %ids: tensor<2x8x1xi32>) -> tensor<2x8x16xf32> {
  // CHECK: %[[R:.*]] = loom.reshape %[[IDS]] : tensor<2x8x1xi32> -> tensor<2x8xi32>
  // CHECK: %[[ZERO:.*]] = loom.constant dense<0> : tensor<2x8xi32>
  // CHECK: %[[LAST:.*]] = loom.constant dense<49> : tensor<2x8xi32>
  // CHECK: %[[LO:.*]] = loom.max %[[R]], %[[ZERO]] : tensor<2x8xi32>
  // CHECK: %[[IDX:.*]] = loom.min %[[LO]], %[[LAST]] : tensor<2x8xi32>
  // CHECK: %[[G:.*]] = loom.gather %[[TABLE]][%[[IDX]]], axis = 0 : (tensor<50x16xf32>, tensor<2x8xi32>) -> tensor<2x8x16xf32>
  // CHECK: return %[[G]]
  %0 = "stablehlo.gather"(%table, %ids) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 16>}> : (tensor<50x16xf32>, tensor<2x8x1xi32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// An implicit index vector dimension (index_vector_dim = rank of the
// indices), written over several lines as the interpreter tests do.
// CHECK-LABEL: func.func @implicit_index_vector
// CHECK-SAME: (%[[TABLE:.*]]: tensor<50x16xf32>, %[[IDS:.*]]: tensor<4xi64>)
func.func @implicit_index_vector(%table: tensor<50x16xf32>, %ids: tensor<4xi64>) -> tensor<4x16xf32> {
  // CHECK-NOT: loom.reshape
  // CHECK: %[[LO:.*]] = loom.max %[[IDS]], %{{.*}} : tensor<4xi64>
  // CHECK: %[[IDX:.*]] = loom.min %[[LO]], %{{.*}} : tensor<4xi64>
  // CHECK: loom.gather %[[TABLE]][%[[IDX]]], axis = 0 : (tensor<50x16xf32>, tensor<4xi64>) -> tensor<4x16xf32>
  %0 = "stablehlo.gather"(%table, %ids) {
    dimension_numbers = #stablehlo.gather<
      offset_dims = [1],
      collapsed_slice_dims = [0],
      start_index_map = [0],
      index_vector_dim = 1>,
    slice_sizes = array<i64: 1, 16>,
    indices_are_sorted = false
  } : (tensor<50x16xf32>, tensor<4xi64>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// A take along the last axis whose result puts the index dimension first:
// loom.gather's layout (10x10x3) is transposed to StableHLO's (3x10x10).
// CHECK-LABEL: func.func @take_last_axis
// CHECK-SAME: (%[[X:.*]]: tensor<10x10x10xf32>, %[[I:.*]]: tensor<3x1xi32>)
func.func @take_last_axis(%x: tensor<10x10x10xf32>, %i: tensor<3x1xi32>) -> tensor<3x10x10xf32> {
  // CHECK: %[[G:.*]] = loom.gather %[[X]][%{{.*}}], axis = 2 : (tensor<10x10x10xf32>, tensor<3xi32>) -> tensor<10x10x3xf32>
  // CHECK: %[[T:.*]] = loom.transpose %[[G]], permutation = [2, 0, 1] : tensor<10x10x3xf32> -> tensor<3x10x10xf32>
  // CHECK: return %[[T]]
  %0 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], collapsed_slice_dims = [2], start_index_map = [2], index_vector_dim = 1>, slice_sizes = array<i64: 10, 10, 1>}> : (tensor<10x10x10xf32>, tensor<3x1xi32>) -> tensor<3x10x10xf32>
  return %0 : tensor<3x10x10xf32>
}

// With batching dimensions (JAX's take_along_axis, here along axis 1 of a
// 2x3x4 operand with an offset dimension): the batching and indexed
// dimensions are moved first and flattened, each clamped index moves by
// 3 rows per batch coordinate (an iota along the indices' batching
// dimension), and one loom.gather along axis 0 gives batch ++ the offset
// dimension.
// CHECK-LABEL: func.func @take_along_axis
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>, %[[I:.*]]: tensor<2x5x1xi64>)
func.func @take_along_axis(%x: tensor<2x3x4xf32>, %i: tensor<2x5x1xi64>) -> tensor<2x5x4xf32> {
  // CHECK: %[[R:.*]] = loom.reshape %[[I]] : tensor<2x5x1xi64> -> tensor<2x5xi64>
  // CHECK: %[[LO:.*]] = loom.max %[[R]], %{{.*}} : tensor<2x5xi64>
  // CHECK: %[[IDX:.*]] = loom.min %[[LO]], %{{.*}} : tensor<2x5xi64>
  // CHECK: %[[FLAT:.*]] = loom.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<6x4xf32>
  // CHECK: %[[B:.*]] = loom.iota dim = 0 : tensor<2x5xi64>
  // CHECK: %[[THREE:.*]] = loom.constant dense<3> : tensor<2x5xi64>
  // CHECK: %[[ROW:.*]] = loom.mul %[[B]], %[[THREE]] : tensor<2x5xi64>
  // CHECK: %[[POS:.*]] = loom.add %[[IDX]], %[[ROW]] : tensor<2x5xi64>
  // CHECK: %[[G:.*]] = loom.gather %[[FLAT]][%[[POS]]], axis = 0 : (tensor<6x4xf32>, tensor<2x5xi64>) -> tensor<2x5x4xf32>
  // CHECK: return %[[G]]
  %0 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, slice_sizes = array<i64: 1, 1, 4>}> : (tensor<2x3x4xf32>, tensor<2x5x1xi64>) -> tensor<2x5x4xf32>
  return %0 : tensor<2x5x4xf32>
}

// The indexed dimension last and two batching dimensions, as optax's
// integer-label cross-entropy gathers the labels' logits: the batch
// coordinates' row-major position counts in units of the 10 classes.
// CHECK-LABEL: func.func @optax_labels
func.func @optax_labels(%logits: tensor<2x4x10xf32>, %labels: tensor<2x4x1x1xi32>) -> tensor<2x4x1xf32> {
  // CHECK: %[[FLAT:.*]] = loom.reshape %{{.*}} : tensor<2x4x10xf32> -> tensor<80xf32>
  // CHECK: loom.iota dim = 1 : tensor<2x4x1xi32>
  // CHECK: loom.constant dense<10> : tensor<2x4x1xi32>
  // CHECK: loom.iota dim = 0 : tensor<2x4x1xi32>
  // CHECK: loom.constant dense<40> : tensor<2x4x1xi32>
  // CHECK: loom.gather %[[FLAT]][%{{.*}}], axis = 0 : (tensor<80xf32>, tensor<2x4x1xi32>) -> tensor<2x4x1xf32>
  %0 = "stablehlo.gather"(%logits, %labels) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [2], operand_batching_dims = [0, 1], start_indices_batching_dims = [0, 1], start_index_map = [2], index_vector_dim = 3>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1, 1>}> : (tensor<2x4x10xf32>, tensor<2x4x1x1xi32>) -> tensor<2x4x1xf32>
  return %0 : tensor<2x4x1xf32>
}

// Any other static gather reads single elements of the flattened operand:
// `x[i[:, 0], i[:, 1]]` at row-major position 8 * row + column, each index
// clamped so its (one-element) window fits.
// CHECK-LABEL: func.func @two_indexed_dims
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[I:.*]]: tensor<5x2xi64>)
func.func @two_indexed_dims(%x: tensor<4x8xf32>, %i: tensor<5x2xi64>) -> tensor<5xf32> {
  // CHECK: %[[C:.*]] = loom.slice %[[I]], start = [0, 1], limit = [5, 2], strides = [1, 1]
  // CHECK: %[[COL:.*]] = loom.reshape %[[C]] : tensor<5x1xi64> -> tensor<5xi64>
  // CHECK: loom.constant dense<7> : tensor<5xi64>
  // CHECK: %[[R:.*]] = loom.slice %[[I]], start = [0, 0], limit = [5, 1], strides = [1, 1]
  // CHECK: loom.constant dense<3> : tensor<5xi64>
  // CHECK: %[[ROW:.*]] = loom.min
  // CHECK: %[[EIGHT:.*]] = loom.constant dense<8> : tensor<5xi64>
  // CHECK: %[[R8:.*]] = loom.mul %[[ROW]], %[[EIGHT]]
  // CHECK: %[[POS:.*]] = loom.add %{{.*}}, %[[R8]]
  // CHECK: %[[FLAT:.*]] = loom.reshape %[[X]] : tensor<4x8xf32> -> tensor<32xf32>
  // CHECK: %[[G:.*]] = loom.gather %[[FLAT]][%[[POS]]], axis = 0 : (tensor<32xf32>, tensor<5xi64>) -> tensor<5xf32>
  // CHECK: return %[[G]]
  %0 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>, slice_sizes = array<i64: 1, 1>}> : (tensor<4x8xf32>, tensor<5x2xi64>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

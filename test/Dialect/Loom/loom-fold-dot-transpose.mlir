// RUN: loom-opt %s -loom-fold-dot-transpose -split-input-file | FileCheck %s
// RUN: loom-opt %s -loom-fold-dot-transpose -split-input-file | loom-opt -split-input-file -verify-each

// A weight gradient: (xᵀ·dY)ᵀ is dYᵀ·x, operands swapped, no transpose left.
// CHECK-LABEL: func.func @weight_gradient
// CHECK-SAME: (%[[X:.*]]: tensor<16x4xf32>, %[[DY:.*]]: tensor<16x8xf32>)
// CHECK-NEXT: %[[G:.*]] = loom.dot_general %[[DY]], %[[X]], contracting_dims = [0] x [0] : (tensor<16x8xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: return %[[G]]
func.func @weight_gradient(%x: tensor<16x4xf32>, %dy: tensor<16x8xf32>) -> tensor<8x4xf32> {
  %p = loom.dot_general %x, %dy, contracting_dims = [0] x [0]
      : (tensor<16x4xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %g = loom.transpose %p, permutation = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  return %g : tensor<8x4xf32>
}

// -----

// Batch dimensions stay first; groups of several free dimensions swap whole.
// CHECK-LABEL: func.func @batched_groups
// CHECK-SAME: (%[[A:.*]]: tensor<2x3x5x7xf32>, %[[B:.*]]: tensor<2x7x4xf32>)
// CHECK-NEXT: %[[G:.*]] = loom.dot_general %[[B]], %[[A]], batching_dims = [0] x [0], contracting_dims = [1] x [3] : (tensor<2x7x4xf32>, tensor<2x3x5x7xf32>) -> tensor<2x4x3x5xf32>
// CHECK-NEXT: return %[[G]]
func.func @batched_groups(%a: tensor<2x3x5x7xf32>, %b: tensor<2x7x4xf32>) -> tensor<2x4x3x5xf32> {
  %p = loom.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [3] x [1]
      : (tensor<2x3x5x7xf32>, tensor<2x7x4xf32>) -> tensor<2x3x5x4xf32>
  %g = loom.transpose %p, permutation = [0, 3, 1, 2] : tensor<2x3x5x4xf32> -> tensor<2x4x3x5xf32>
  return %g : tensor<2x4x3x5xf32>
}

// -----

// Left alone: the product has another use; the permutation moves a batch
// dimension; it splits the lhs free group.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-3: loom.transpose
func.func @left_alone(%x: tensor<16x4xf32>, %dy: tensor<16x8xf32>,
                      %a: tensor<2x3x5x7xf32>, %b: tensor<2x7x4xf32>)
    -> (tensor<8x4xf32>, tensor<4x8xf32>, tensor<3x2x5x4xf32>, tensor<2x4x5x3xf32>) {
  %p = loom.dot_general %x, %dy, contracting_dims = [0] x [0]
      : (tensor<16x4xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %g = loom.transpose %p, permutation = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %q = loom.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [3] x [1]
      : (tensor<2x3x5x7xf32>, tensor<2x7x4xf32>) -> tensor<2x3x5x4xf32>
  %h = loom.transpose %q, permutation = [1, 0, 2, 3] : tensor<2x3x5x4xf32> -> tensor<3x2x5x4xf32>
  %r = loom.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [3] x [1]
      : (tensor<2x3x5x7xf32>, tensor<2x7x4xf32>) -> tensor<2x3x5x4xf32>
  %i = loom.transpose %r, permutation = [0, 3, 2, 1] : tensor<2x3x5x4xf32> -> tensor<2x4x5x3xf32>
  return %g, %p, %h, %i : tensor<8x4xf32>, tensor<4x8xf32>, tensor<3x2x5x4xf32>, tensor<2x4x5x3xf32>
}

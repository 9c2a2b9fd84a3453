// RUN: loom-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// A row-sparse all-reduce sums rows (dimension 0) of a buffer.

shard.grid @mesh(shape = 2x1x1)
func.func @max_by_rows(%x: memref<4x8xf32>) {
  // expected-error @+1 {{row_sparse sums rows; reduction must be "sum", got "max"}}
  %h = loomrt.all_reduce_start %x on @mesh grid_axes = [0] {reduction = "max", row_sparse} : memref<4x8xf32>
  loomrt.wait %h
  return
}

// -----

shard.grid @mesh(shape = 2x1x1)
func.func @scalar(%x: memref<f32>) {
  // expected-error @+1 {{row_sparse exchanges rows (dimension 0) of a buffer of rank >= 1}}
  %h = loomrt.all_reduce_start %x on @mesh grid_axes = [0] {reduction = "sum", row_sparse} : memref<f32>
  loomrt.wait %h
  return
}

// -----

// The valid form round-trips.
// CHECK: loomrt.all_reduce_start %{{.*}} on @mesh grid_axes = [0] {reduction = "sum", row_sparse} : memref<4x8xf32>
shard.grid @mesh(shape = 2x1x1)
func.func @rows(%x: memref<4x8xf32>) {
  %h = loomrt.all_reduce_start %x on @mesh grid_axes = [0] {reduction = "sum", row_sparse} : memref<4x8xf32>
  loomrt.wait %h
  return
}

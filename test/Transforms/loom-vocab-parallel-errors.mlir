// RUN: loom-opt %s -split-input-file --loom-tensor-parallel=tp=3 \
// RUN:   --loom-vocab-parallel=tp=3 -verify-diagnostics | FileCheck %s
//
// loom-vocab-parallel's errors, and the warning of the pair: when neither
// pass finds anything to partition, loom-tensor-parallel (which asks whether
// there is a vocabulary table) warns once and loom-vocab-parallel says
// nothing; when one of them finds something, neither warns
// (-verify-diagnostics fails on an unexpected warning).
//
// Invalid options, reported before the IR is looked at.
// RUN: not loom-opt %s -split-input-file -loom-vocab-parallel 2>&1 | FileCheck %s --check-prefix=NOTP
// RUN: not loom-opt %s -split-input-file -loom-vocab-parallel="tp=2 function=nope" 2>&1 | FileCheck %s --check-prefix=NOFUNC
// NOTP: error: loom-vocab-parallel: tp must be >= 1 (option tp=, the number of tensor-parallel ranks), got 0
// NOFUNC: error: loom-vocab-parallel: function 'nope' (option function=) is not in the module
//
// A mesh whose tp axis has another size (the last case, alone).
// RUN: sed -n '/^\/\/ MESH-CASE/,$p' %s | not loom-opt --loom-vocab-parallel=tp=3 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MESH
// MESH: error: loom-vocab-parallel: @mesh has 2 ranks on its tp axis, not tp=3 (run both tensor-parallel passes with one tp)

// Vocabulary tables that are not cut (never an error): %wte is also
// returned, %head's logits are scaled (not a bias) before the loss, and
// %wpe is indexed by constants. Nothing to partition: one warning for the pair.
// CHECK-LABEL: func.func @main(
// CHECK-NOT:   loom.shard
// CHECK:       return
// expected-warning @+1 {{loom-tensor-parallel: @main has no attention or MLP block, embedding or LM head to partition}}
func.func @main(%ids: tensor<2xi64>, %labels: tensor<2xi64>,
                %wte: tensor<10x4xf32> {loom.param},
                %head: tensor<10x4xf32> {loom.param},
                %bias: tensor<10xf32> {loom.param},
                %wpe: tensor<10x4xf32> {loom.param}) -> (tensor<f32>, tensor<10x4xf32>, tensor<f32>) {
  %e = loom.gather %wte[%ids], axis = 0 : (tensor<10x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  %logits = loom.dot_general %e, %head, contracting_dims = [1] x [1] : (tensor<2x4xf32>, tensor<10x4xf32>) -> tensor<2x10xf32>
  %b = loom.broadcast %bias, dims = [1] : tensor<10xf32> -> tensor<2x10xf32>
  %biased = loom.mul %logits, %b : tensor<2x10xf32>
  %loss = loom.cross_entropy %biased, %labels : (tensor<2x10xf32>, tensor<2xi64>) -> tensor<f32>
  %positions = loom.iota dim = 0 : tensor<2xi64>
  %p = loom.gather %wpe[%positions], axis = 0 : (tensor<10x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  %s = loom.reduce_sum %p, dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %loss, %wte, %s : tensor<f32>, tensor<10x4xf32>, tensor<f32>
}

// -----

// Only a vocabulary table (an embedding and its tied LM head, no block):
// loom-tensor-parallel is silent, loom-vocab-parallel cuts it.
// CHECK: shard.grid @mesh(shape = 1x1x3)
// CHECK-LABEL: func.func @main(
// CHECK-SAME: tensor<4x4xf32> {loom.param, loom.shard = #loom.shard<dim = 0, parts = 3, padded = 12>}
func.func @main(%ids: tensor<2xi64>, %labels: tensor<2xi64>,
                %wte: tensor<10x4xf32> {loom.param}) -> tensor<f32> {
  %e = loom.gather %wte[%ids], axis = 0 : (tensor<10x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  %logits = loom.dot_general %e, %wte, contracting_dims = [1] x [1] : (tensor<2x4xf32>, tensor<10x4xf32>) -> tensor<2x10xf32>
  %loss = loom.cross_entropy %logits, %labels : (tensor<2x10xf32>, tensor<2xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Only a block (an MLP): loom-vocab-parallel is silent.
// CHECK: shard.grid @mesh(shape = 1x1x3)
// CHECK-LABEL: func.func @main(
// CHECK: shard.all_reduce
func.func @main(%x: tensor<2x6xf32>, %w1: tensor<6x6xf32> {loom.param},
                %w2: tensor<6x6xf32> {loom.param}) -> tensor<2x6xf32> {
  %h = loom.dot_general %x, %w1, contracting_dims = [1] x [0]
      : (tensor<2x6xf32>, tensor<6x6xf32>) -> tensor<2x6xf32>
  %y = loom.dot_general %h, %w2, contracting_dims = [1] x [0]
      : (tensor<2x6xf32>, tensor<6x6xf32>) -> tensor<2x6xf32>
  return %y : tensor<2x6xf32>
}

// -----

// MESH-CASE: a table, but @mesh already has 2 tensor-parallel ranks; in the
// pair, loom-tensor-parallel refuses the module first.
shard.grid @mesh(shape = 1x1x2)
// expected-error @+1 {{loom-tensor-parallel: the module is already tensor-parallel (@mesh has 2 ranks on its tp axis)}}
func.func @main(%ids: tensor<2xi64>, %labels: tensor<2xi64>,
                %wte: tensor<10x4xf32> {loom.param}) -> tensor<f32> {
  %e = loom.gather %wte[%ids], axis = 0 : (tensor<10x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  %logits = loom.dot_general %e, %wte, contracting_dims = [1] x [1] : (tensor<2x4xf32>, tensor<10x4xf32>) -> tensor<2x10xf32>
  %loss = loom.cross_entropy %logits, %labels : (tensor<2x10xf32>, tensor<2xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

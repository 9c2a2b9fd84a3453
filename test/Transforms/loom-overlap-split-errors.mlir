// RUN: loom-opt %s --loom-tensor-parallel=tp=2 --loom-overlap-split=k=3 -verify-diagnostics
// RUN: not loom-opt %s --loom-overlap-split=k=2 2>&1 | FileCheck %s --check-prefix=NOTP
//
// Through the training pipeline (what loomc builds): tp=1 with the split.
// RUN: not loom-opt %s --loom-training-pipeline="overlap-split=2" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PIPE
// RUN: not loom-opt %s --loom-overlap-split=k=0 2>&1 | FileCheck %s --check-prefix=ZERO
//
// NOTP: error: loom-overlap-split: --overlap-split 2: @main has no tensor-parallel collective (loom.tp_copy, shard.all_reduce) on its batched rows to overlap; --overlap-split needs tensor parallelism (tp > 1
// PIPE: error: loom-overlap-split: --overlap-split 2: @main has no tensor-parallel collective
// PIPE-SAME: --overlap-split needs tensor parallelism (tp > 1
// ZERO: error: loom-overlap-split: k must be >= 1, got 0

// k=3 does not divide the 4 rows of x (the sequence dimension is not split
// instead); without tensor parallelism there is nothing to overlap.
// expected-error @+1 {{loom-overlap-split: --overlap-split 3 does not divide the batch of data argument 'x' (4 rows in dimension 0); every sub-batch needs the same number of rows, and the sequence dimension (1) cannot be split instead: 'x' (8 positions in dimension 1)}}
func.func @main(%x: tensor<4x8xf32> {loom.name = "x"},
                %labels: tensor<4xi64> {loom.name = "labels"},
                %w1: tensor<8x16xf32> {loom.param, loom.name = "fc1.weight"},
                %w2: tensor<16x8xf32> {loom.param, loom.name = "fc2.weight"})
    -> (tensor<f32> {loom.name = "loss"}) {
  %h = loom.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %a = loom.relu %h : tensor<4x16xf32>
  %y = loom.dot_general %a, %w2, contracting_dims = [1] x [0] : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %loss = loom.cross_entropy %y, %labels reduction = mean : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// RUN: split-file %s %t
// RUN: not loom-opt %t/chain.mlir -loom-pipeline-partition=stages=2 -loom-pipeline-split \
// RUN:   -loom-pipeline-schedule=microbatches=0 2>&1 | FileCheck %s --check-prefix=MICRO
// RUN: not loom-opt %t/chain.mlir -loom-pipeline-partition=stages=2 -loom-pipeline-split \
// RUN:   -loom-pipeline-schedule=schedule=zigzag 2>&1 | FileCheck %s --check-prefix=SCHED
// RUN: not loom-opt %t/chain.mlir -loom-pipeline-schedule 2>&1 | FileCheck %s --check-prefix=NOSPLIT
// RUN: not loom-opt %t/early-loss.mlir -loom-pipeline-partition="stages=2 stage-boundaries=2" \
// RUN:   -loom-pipeline-split -loom-pipeline-schedule 2>&1 | FileCheck %s --check-prefix=EARLY
// RUN: not loom-opt %t/scalar-data.mlir -loom-pipeline-partition=stages=2 -loom-pipeline-split \
// RUN:   -loom-pipeline-schedule 2>&1 | FileCheck %s --check-prefix=SCALAR
// RUN: not loom-opt %t/chain.mlir -loom-pipeline-partition=stages=2 -loom-pipeline-split \
// RUN:   -loom-pipeline-schedule=microbatches=20000 2>&1 | FileCheck %s --check-prefix=TAGS

// MICRO: error: loom-pipeline-schedule: microbatches must be >= 1, got 0
// SCHED: for the --schedule option: Cannot find option named 'zigzag'!
// NOSPLIT: error: loom-pipeline-schedule: no function calling pipeline stages (run loom-pipeline-partition and loom-pipeline-split first, or name the function with function=)
// EARLY: error: loom-pipeline-schedule: the loss must be computed by the last stage (1), but stage 0 computes it
// SCALAR: error: loom-pipeline-schedule: data argument #1 needs a static batch dimension (dimension 0) to hold the micro-batches, got 'tensor<f32>'
// TAGS: error: loom-pipeline-schedule: 20000 micro-batches of 1 transfers need MPI tags up to 39999, beyond the guaranteed 32767

//--- chain.mlir
func.func @main(%x: tensor<2x4xf32>, %w1: tensor<4x4xf32> {loom.param}, %w2: tensor<4x4xf32> {loom.param}) -> tensor<f32> {
  %h = loom.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %a = loom.tanh %h : tensor<2x4xf32>
  %o = loom.dot_general %a, %w2, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %l = loom.reduce_mean %o, dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

//--- early-loss.mlir
// The loss is made in stage 0; stage 1 computes a second result.
func.func @main(%x: tensor<2x4xf32>, %w1: tensor<4x4xf32> {loom.param}) -> (tensor<f32> {loom.name = "loss"}, tensor<2x4xf32> {loom.name = "extra"}) {
  %h = loom.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %l = loom.reduce_mean %h, dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
  %e = loom.tanh %h : tensor<2x4xf32>
  %f = loom.tanh %e : tensor<2x4xf32>
  return %l, %f : tensor<f32>, tensor<2x4xf32>
}

//--- scalar-data.mlir
func.func @main(%x: tensor<2x4xf32>, %s: tensor<f32>, %w1: tensor<4x4xf32> {loom.param}) -> tensor<f32> {
  %h = loom.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %a = loom.tanh %h : tensor<2x4xf32>
  %l = loom.reduce_mean %a, dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
  %m = loom.mul %l, %s : tensor<f32>
  return %m : tensor<f32>
}

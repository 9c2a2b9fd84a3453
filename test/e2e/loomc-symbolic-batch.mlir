// A loom IR model with a symbolic batch ('?'), as examples/mlp.mlir: loomc
// binds it to --micro-batch (the training pipeline's loom-shape-inference
// carries the size through the body), and without one says so.

// RUN: rm -rf %t && loomc %s -o %t --micro-batch 6 --emit-only
// RUN: FileCheck %s --check-prefix=STEP < %t/step.cpp
// STEP: {"x", Role::Data, DType::F32, 2, {6, 4}, -1, false},
// STEP: {"labels", Role::Data, DType::I64, 1, {6}, -1, false},

// RUN: not loomc %s -o %t.err --emit-only 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOBATCH
// NOBATCH: loomc: error: the model's batch is symbolic ('?' in its argument
// NOBATCH-SAME: 'x'): give its size with --micro-batch N
// RUN: not ls %t.err/weights.safetensors

func.func @main(%x: tensor<?x4xf32> {loom.name = "x"},
                %labels: tensor<?xi64> {loom.name = "labels"},
                %w: tensor<4x3xf32> {loom.param, loom.name = "w"})
    -> (tensor<f32> {loom.name = "loss"}) {
  %h = loom.dot_general %x, %w, contracting_dims = [1] x [0]
      : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  %loss = loom.cross_entropy %h, %labels reduction = mean
      : (tensor<?x3xf32>, tensor<?xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// Re-batching: --micro-batch N binds the dynamic batch (dimension 0) of the
// graph inputs, so one export imports at any size; a model whose batch is
// fixed (a static dimension 0, or a node that computes with the exported
// batch) is an error that names the input or node and says how to export.
// REQUIRES: onnx

// RUN: %loompy %S/Inputs/make_onnx.py mlp_dynamic %t.dyn.onnx
// RUN: loom-translate --import-onnx %t.dyn.onnx --micro-batch 3 -o - --no-weights | FileCheck %s --check-prefix=B3
// RUN: loom-translate --import-onnx %t.dyn.onnx --micro-batch 5 -o - --no-weights | FileCheck %s --check-prefix=B5
// B3: func.func @main(%arg0: tensor<3x4xf32> {loom.name = "x"}, %arg1: tensor<3xi64> {loom.name = "labels"},
// B5: func.func @main(%arg0: tensor<5x4xf32> {loom.name = "x"}, %arg1: tensor<5xi64> {loom.name = "labels"},

// RUN: %loompy %S/Inputs/make_onnx.py initializers %t.fixed.onnx
// RUN: loom-translate --import-onnx %t.fixed.onnx --micro-batch 2 -o /dev/null --no-weights
// RUN: not loom-translate --import-onnx %t.fixed.onnx --micro-batch 3 -o /dev/null --no-weights 2>&1 | FileCheck %s --check-prefix=FIXED
// FIXED: error: micro-batch 3 asked, but graph input 'x' fixes the batch at 2 (its dimension 0 is static: the model was exported with that batch); re-export it with a dynamic batch axis (torch.onnx.export(..., dynamic_axes={'x': {0: 'batch'}}), or dynamic_shapes with dynamo=True), or compile it at micro-batch 2

// RUN: %loompy %S/Inputs/make_onnx.py batch_fixed_reshape %t.reshape.onnx
// RUN: loom-translate --import-onnx %t.reshape.onnx --micro-batch 2 -o /dev/null --no-weights
// RUN: not loom-translate --import-onnx %t.reshape.onnx --micro-batch 3 -o /dev/null --no-weights 2>&1 | FileCheck %s --check-prefix=RESHAPE
// RESHAPE: error: node 'fix_batch' (Reshape):
// RESHAPE: error: (the graph inputs' dynamic batch was bound to the micro-batch 3: a node that failed above may compute with the batch the model was exported with, e.g. a Reshape to a constant shape; export with dynamic shapes so that its shape follows the inputs)

// RUN: not loom-translate --import-onnx %t.dyn.onnx --micro-batch -1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=NEG
// NEG: --micro-batch must be >= 1 (or 0: the model's batch), got -1

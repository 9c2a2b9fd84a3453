// float64 constants (PyTorch's exporter writes Python floats as doubles, as
// GPT-2's, BERT's and GPT-NeoX's attention scale `sqrt(head_dim)`) are
// evaluated at import: Sqrt, Pow, Reciprocal, Exp and Log fold on known
// values and a Cast narrows them to float32. A float64 constant that a
// run-time op reads is an error naming both nodes.
// REQUIRES: onnx

// RUN: %loompy %S/Inputs/make_onnx.py float64_scale %t.scale.onnx
// RUN: loom-translate --import-onnx %t.scale.onnx -o - | FileCheck %s
// sqrt(16) = 4; 1 / 16^2 + log(exp(2)) = 2.00390625.
// CHECK-LABEL: func.func @main(%arg0: tensor<2x3xf32> {loom.name = "x"})
// CHECK-NEXT: %[[S:.*]] = loom.constant dense<4.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[SB:.*]] = loom.broadcast %[[S]], dims = [] : tensor<f32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[D:.*]] = loom.div %arg0, %[[SB]] : tensor<2x3xf32>
// CHECK-NEXT: %[[T:.*]] = loom.constant dense<2.00390625> : tensor<f32>
// CHECK-NEXT: %[[TB:.*]] = loom.broadcast %[[T]], dims = [] : tensor<f32> -> tensor<2x3xf32>
// CHECK-NEXT: loom.mul %[[D]], %[[TB]] : tensor<2x3xf32>
// CHECK-NOT: f64

// RUN: %loompy %S/Inputs/make_onnx.py bad_float64_constant %t.bad.onnx
// RUN: not loom-translate --import-onnx %t.bad.onnx -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: node 'add64' (Add) reads 'c', a float64 constant made by node 'c' (Constant): Loom folds float64 constants at import but computes in float32 at run time; cast the value to float32 in the model (or make it a float32 constant)

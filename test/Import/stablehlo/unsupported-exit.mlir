// RUN: not loom-opt --inline --symbol-dce --convert-stablehlo-to-loom %s 2>&1 | FileCheck %s

// The tool fails, naming every unsupported op at its first use (through
// the inlined call), and the summary lists them.

// CHECK: error: cannot convert 'stablehlo.reduce_window' to loom: reduce_window needs one positive window size, stride and base and window dilation
// CHECK: note: called from
// CHECK: error: cannot convert 'stablehlo.reduce' to loom: reduction body of 2 inputs is not one
// CHECK: error: cannot convert 'chlo.lgamma' to loom: unknown op
// CHECK: error: StableHLO to loom: 3 unsupported op kind(s): 'stablehlo.reduce_window', 'stablehlo.reduce', 'chlo.lgamma'
// CHECK-NOT: error:
module @jit_main {
  func.func public @main(%x: tensor<4x6xf32>, %i: tensor<4x6xi32>) -> (tensor<3x4xf32>, tensor<6xi32>, tensor<4x6xf32>) {
    %0 = call @window(%x) : (tensor<4x6xf32>) -> tensor<3x4xf32>
    %c = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %ci = stablehlo.constant dense<0> : tensor<i32>
    %1:2 = stablehlo.reduce(%x init: %c), (%i init: %ci) across dimensions = [0] : (tensor<4x6xf32>, tensor<4x6xi32>, tensor<f32>, tensor<i32>) -> (tensor<6xf32>, tensor<6xi32>)
     reducer(%a: tensor<f32>, %b: tensor<f32>) (%p: tensor<i32>, %q: tensor<i32>)  {
      %ge = stablehlo.compare GE, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %m = stablehlo.select %ge, %a, %b : tensor<i1>, tensor<f32>
      %n = stablehlo.select %ge, %p, %q : tensor<i1>, tensor<i32>
      stablehlo.return %m, %n : tensor<f32>, tensor<i32>
    }
    %2 = chlo.lgamma %x : tensor<4x6xf32> -> tensor<4x6xf32>
    return %0, %1#1, %2 : tensor<3x4xf32>, tensor<6xi32>, tensor<4x6xf32>
  }
  func.func private @window(%x: tensor<4x6xf32>) -> tensor<3x4xf32> {
    %c = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = "stablehlo.reduce_window"(%x, %c) <{base_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 2, 2>, window_dilations = array<i64: 1, 0>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %m = stablehlo.maximum %a, %b : tensor<f32>
      stablehlo.return %m : tensor<f32>
    }) : (tensor<4x6xf32>, tensor<f32>) -> tensor<3x4xf32>
    return %0 : tensor<3x4xf32>
  }
}

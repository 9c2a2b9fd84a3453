// RUN: loom-opt %s -loom-mixed-precision | FileCheck %s

// A constant bf16 holds exactly (0.5) joins the bf16 chain; one it does
// not (0.1, as 1/sqrt(96) or GELU's 0.044715) stays exact: that op
// computes in f32 and its result is rounded to bf16 once, and the next op
// reads the rounded value in bf16.

// CHECK-LABEL: func.func @main(
// CHECK:         %[[P:.+]] = loom.dot_general {{.*}} -> tensor<4x4xbf16>
// CHECK:         %[[HALF:.+]] = loom.constant dense<5.000000e-01> : tensor<4x4xf32>
// CHECK-NEXT:    %[[HALFB:.+]] = loom.convert %[[HALF]] : tensor<4x4xf32> -> tensor<4x4xbf16>
// CHECK-NEXT:    %[[A:.+]] = loom.mul %[[P]], %[[HALFB]] : tensor<4x4xbf16>
// CHECK-NEXT:    %[[AF:.+]] = loom.convert %[[A]] : tensor<4x4xbf16> -> tensor<4x4xf32>
// CHECK-NEXT:    %[[TENTH:.+]] = loom.constant dense<1.000000e-01> : tensor<4x4xf32>
// CHECK-NEXT:    %[[B:.+]] = loom.mul %[[AF]], %[[TENTH]] : tensor<4x4xf32>
// CHECK-NEXT:    %[[BB:.+]] = loom.convert %[[B]] : tensor<4x4xf32> -> tensor<4x4xbf16>
// CHECK-NEXT:    %[[C:.+]] = loom.tanh %[[BB]] : tensor<4x4xbf16>
// CHECK-NEXT:    %[[CF:.+]] = loom.convert %[[C]] : tensor<4x4xbf16> -> tensor<4x4xf32>
// CHECK-NEXT:    return %[[CF]]
func.func @main(%x: tensor<4x4xf32> {loom.name = "x"},
                %w: tensor<4x4xf32> {loom.name = "w", loom.param})
    -> (tensor<4x4xf32> {loom.name = "y"}) {
  %p = loom.dot_general %x, %w, contracting_dims = [1] x [0]
      : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %half = loom.constant dense<0.5> : tensor<4x4xf32>
  %a = loom.mul %p, %half : tensor<4x4xf32>
  %tenth = loom.constant dense<0.1> : tensor<4x4xf32>
  %b = loom.mul %a, %tenth : tensor<4x4xf32>
  %c = loom.tanh %b : tensor<4x4xf32>
  return %c : tensor<4x4xf32>
}

// RUN: loom-opt %s -loom-mixed-precision | FileCheck %s

// Products that are not f32 (integers, or bf16 already) are left alone.

// CHECK-LABEL: func.func @main(
// CHECK-NOT:     loom.convert
// CHECK:         loom.dot_general {{.*}} -> tensor<2x2xi32>
// CHECK-NOT:     loom.convert
// CHECK:         loom.dot_general {{.*}} -> tensor<2x2xbf16>
// CHECK-NOT:     loom.convert
// CHECK:         return
func.func @main(%a: tensor<2x3xi32>, %b: tensor<3x2xi32>,
                %c: tensor<2x3xbf16>, %d: tensor<3x2xbf16>)
    -> (tensor<2x2xi32>, tensor<2x2xbf16>) {
  %0 = loom.dot_general %a, %b, contracting_dims = [1] x [0]
      : (tensor<2x3xi32>, tensor<3x2xi32>) -> tensor<2x2xi32>
  %1 = loom.dot_general %c, %d, contracting_dims = [1] x [0]
      : (tensor<2x3xbf16>, tensor<3x2xbf16>) -> tensor<2x2xbf16>
  return %0, %1 : tensor<2x2xi32>, tensor<2x2xbf16>
}

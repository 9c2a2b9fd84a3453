// RUN: loom-opt %s -loom-mixed-precision | FileCheck %s
// RUN: loom-opt %s -loom-mixed-precision -loom-autodiff="loss=loss" \
// RUN:   | FileCheck %s --check-prefix=GRAD
// RUN: not loom-opt %s -loom-mixed-precision="function=missing" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ERR

// Each f32 product runs on bf16 copies of its operands. What follows it
// stays bf16 while its other operands are no activations: the bias add
// (the bias converted before its broadcast), the activation, a softmax
// (f32 statistics inside its kernel), a head transpose, the next product. The residual add mixes in an f32 activation (%skip) and
// stays f32; so do the scale computing %skip and the loss.

// CHECK-LABEL: func.func @main(
// CHECK-SAME:      %[[X:[^:]+]]: tensor<4x3xf32>
// CHECK-SAME:      %[[W1:[^:]+]]: tensor<3x5xf32>
// CHECK-SAME:      %[[B1:[^:]+]]: tensor<5xf32>
// CHECK-SAME:      %[[W2:[^:]+]]: tensor<5x3xf32>
// CHECK:         %[[XB:.+]] = loom.convert %[[X]] : tensor<4x3xf32> -> tensor<4x3xbf16>
// CHECK-NEXT:    %[[W1B:.+]] = loom.convert %[[W1]] : tensor<3x5xf32> -> tensor<3x5xbf16>
// CHECK-NEXT:    %[[H:.+]] = loom.dot_general %[[XB]], %[[W1B]], contracting_dims = [1] x [0] {{.*}}-> tensor<4x5xbf16>
// CHECK-NEXT:    %[[B1B:.+]] = loom.convert %[[B1]] : tensor<5xf32> -> tensor<5xbf16>
// CHECK-NEXT:    %[[BB:.+]] = loom.broadcast %[[B1B]], dims = [1] : tensor<5xbf16> -> tensor<4x5xbf16>
// CHECK-NEXT:    %[[HB:.+]] = loom.add %[[H]], %[[BB]] : tensor<4x5xbf16>
// CHECK-NEXT:    %[[G:.+]] = loom.gelu %[[HB]] {{.*}}: tensor<4x5xbf16>
// CHECK-NEXT:    %[[SM:.+]] = loom.softmax %[[G]], axis = 1 : tensor<4x5xbf16>
// CHECK-NEXT:    %[[T:.+]] = loom.transpose %[[SM]], {{.*}} : tensor<4x5xbf16> -> tensor<5x4xbf16>
// CHECK-NEXT:    %[[W2B:.+]] = loom.convert %[[W2]] : tensor<5x3xf32> -> tensor<5x3xbf16>
// CHECK-NEXT:    %[[O:.+]] = loom.dot_general %[[T]], %[[W2B]], contracting_dims = [0] x [0] {{.*}}-> tensor<4x3xbf16>
// CHECK-NEXT:    %[[OF:.+]] = loom.convert %[[O]] : tensor<4x3xbf16> -> tensor<4x3xf32>
// CHECK:         %[[SKIP:.+]] = loom.mul %[[X]], {{.*}} : tensor<4x3xf32>
// CHECK-NEXT:    %[[RES:.+]] = loom.add %[[OF]], %[[SKIP]] : tensor<4x3xf32>
// CHECK-NEXT:    loom.cross_entropy %[[RES]]
// CHECK-SAME:      (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
// CHECK-NOT:     loom.convert

// Differentiated afterwards: every backward product is bf16 too, and the
// gradients the optimizer gets are f32 conversions of them.
// GRAD-LABEL: func.func @main_grad(
// GRAD-SAME:      -> (tensor<f32> {loom.name = "loss"},
// GRAD-SAME:          tensor<3x5xf32> {loom.grad_of = 1 : i64, loom.name = "grad.w1"},
// GRAD-SAME:          tensor<5xf32> {loom.grad_of = 2 : i64, loom.name = "grad.b1"},
// GRAD-SAME:          tensor<5x3xf32> {loom.grad_of = 3 : i64, loom.name = "grad.w2"},
// GRAD-SAME:          tensor<3xf32> {loom.grad_of = 4 : i64, loom.name = "grad.s"})
// GRAD-COUNT-5:  loom.dot_general {{.*}}xbf16>) -> tensor<{{.*}}xbf16>
// GRAD-NOT:      loom.dot_general
// GRAD:          %[[DW1:.+]] = loom.convert {{.*}} : tensor<3x5xbf16> -> tensor<3x5xf32>
// GRAD:          return {{.*}}, %[[DW1]], {{.*}} : tensor<f32>, tensor<3x5xf32>, tensor<5xf32>, tensor<5x3xf32>, tensor<3xf32>

// ERR: loom-mixed-precision: no function @missing with a body (function=missing)
func.func @main(%x: tensor<4x3xf32> {loom.name = "x"},
                %w1: tensor<3x5xf32> {loom.param, loom.name = "w1"},
                %b1: tensor<5xf32> {loom.param, loom.name = "b1"},
                %w2: tensor<5x3xf32> {loom.param, loom.name = "w2"},
                %s: tensor<3xf32> {loom.param, loom.name = "s"},
                %labels: tensor<4xi64> {loom.name = "labels"})
    -> (tensor<f32> {loom.name = "loss"}) {
  %h = loom.dot_general %x, %w1, contracting_dims = [1] x [0]
      : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %bb = loom.broadcast %b1, dims = [1] : tensor<5xf32> -> tensor<4x5xf32>
  %hb = loom.add %h, %bb : tensor<4x5xf32>
  %g = loom.gelu %hb : tensor<4x5xf32>
  %sm = loom.softmax %g, axis = 1 : tensor<4x5xf32>
  %t = loom.transpose %sm, permutation = [1, 0] : tensor<4x5xf32> -> tensor<5x4xf32>
  %o = loom.dot_general %t, %w2, contracting_dims = [0] x [0]
      : (tensor<5x4xf32>, tensor<5x3xf32>) -> tensor<4x3xf32>
  %sb = loom.broadcast %s, dims = [1] : tensor<3xf32> -> tensor<4x3xf32>
  %skip = loom.mul %x, %sb : tensor<4x3xf32>
  %res = loom.add %o, %skip : tensor<4x3xf32>
  %loss = loom.cross_entropy %res, %labels : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

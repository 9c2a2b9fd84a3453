// RUN: loom-run %s --print | FileCheck %s

// x = [-2, -0.5, 0, 1, 3].
func.func @main() -> (tensor<5xf32> {loom.name = "relu"}, tensor<5xf32> {loom.name = "silu"},
                      tensor<5xf32> {loom.name = "gelu"}, tensor<5xf32> {loom.name = "gelu_tanh"}) {
  %x = loom.constant dense<[-2.0, -0.5, 0.0, 1.0, 3.0]> : tensor<5xf32>
  %relu = loom.relu %x : tensor<5xf32>
  %silu = loom.silu %x : tensor<5xf32>
  %gelu = loom.gelu %x : tensor<5xf32>
  %gelu_tanh = loom.gelu %x approximate = tanh : tensor<5xf32>
  return %relu, %silu, %gelu, %gelu_tanh : tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>
}
// CHECK:      relu : tensor<5xf32>
// CHECK-NEXT: [0., 0., 0., 1., 3.]
// x * sigmoid(x): -2 * 0.11920292 = -0.23840584, -0.5 * 0.37754067 = -0.18877034,
// 1 * 0.7310586, 3 * 0.95257413 = 2.8577223.
// CHECK:      silu : tensor<5xf32>
// CHECK-NEXT: [-0.23840584, -0.18877034, 0., 0.7310586, 2.8577223]
// 0.5 x (1 + erf(x / sqrt 2)): erf(-1.4142135) = -0.9544997, so -2 -> -0.045500264;
// erf(-0.35355338) = -0.38292492 -> -0.15426877; erf(0.70710677) = 0.6826895 -> 0.8413448;
// erf(2.1213202) = 0.9973002 -> 2.9959502.
// CHECK:      gelu : tensor<5xf32>
// CHECK-NEXT: [-0.045500264, -0.15426877, 0., 0.8413448, 2.9959502]
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))): at x = 1,
// tanh(0.7978846 * 1.044715) = tanh(0.8335625) = 0.682384 -> 0.841192.
// CHECK:      gelu_tanh : tensor<5xf32>
// CHECK-NEXT: [-0.045402307, -0.154286, 0., 0.841192, 2.9963627]

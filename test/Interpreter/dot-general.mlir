// RUN: loom-run %s --print | FileCheck %s

func.func @main() -> (tensor<2x2xf32> {loom.name = "matmul"}, tensor<2x1x1xf32> {loom.name = "batched"},
                      tensor<2x2xf32> {loom.name = "transposed"}, tensor<2x2xi64> {loom.name = "int"},
                      tensor<2x2xf16> {loom.name = "half"}, tensor<f32> {loom.name = "dot"},
                      tensor<2x3xf32> {loom.name = "outer"}) {
  // [[1, 2, 3], [4, 5, 6]] x [[1, 0], [0, 1], [1, 1]] = [[1 + 3, 2 + 3], [4 + 6, 5 + 6]].
  %a = loom.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %b = loom.constant dense<[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]> : tensor<3x2xf32>
  %matmul = loom.dot_general %a, %b, contracting_dims = [1] x [0]
      : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  // Batch of two 1x3 . 3x1 products: [1, 2, 3] . [1, 0, 1] = 4, [4, 5, 6] . [0, 1, 1] = 11.
  %q = loom.reshape %a : tensor<2x3xf32> -> tensor<2x1x3xf32>
  %bt = loom.transpose %b, permutation = [1, 0] : tensor<3x2xf32> -> tensor<2x3xf32>
  %k = loom.reshape %bt : tensor<2x3xf32> -> tensor<2x1x3xf32>
  %batched = loom.dot_general %q, %k, batching_dims = [0] x [0], contracting_dims = [2] x [2]
      : (tensor<2x1x3xf32>, tensor<2x1x3xf32>) -> tensor<2x1x1xf32>
  // a . a^T contracting both dim 1: [[1+4+9, 4+10+18], [4+10+18, 16+25+36]].
  %transposed = loom.dot_general %a, %a, contracting_dims = [1] x [1]
      : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x2xf32>
  %ai = loom.convert %a : tensor<2x3xf32> -> tensor<2x3xi64>
  %bi = loom.convert %b : tensor<3x2xf32> -> tensor<3x2xi64>
  %int = loom.dot_general %ai, %bi, contracting_dims = [1] x [0]
      : (tensor<2x3xi64>, tensor<3x2xi64>) -> tensor<2x2xi64>
  // f16: [[0.1, 0.2]] rows; 0.1 is 0.099975586 in f16, 0.2 is 0.19995117, 0.3 is 0.30004883.
  // [0.1, 0.2] . [1, 1] = 0.29992676 -> f16 0.2998; [0.1, 0.2] . [0.3, 0] = 0.029996...
  %h1 = loom.constant dense<[[0.1, 0.2], [1.0, 2.0]]> : tensor<2x2xf16>
  %h2 = loom.constant dense<[[1.0, 0.3], [1.0, 0.0]]> : tensor<2x2xf16>
  %half = loom.dot_general %h1, %h2, contracting_dims = [1] x [0]
      : (tensor<2x2xf16>, tensor<2x2xf16>) -> tensor<2x2xf16>
  // Full contraction to a scalar: 1 + 4 + 9 + 16 + 25 + 36 = 91.
  %dot = loom.dot_general %a, %a, contracting_dims = [0, 1] x [0, 1]
      : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<f32>
  // No contraction: the outer product of [1, 2] and [1, 0, 1].
  %u = loom.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %v = loom.constant dense<[1.0, 0.0, 1.0]> : tensor<3xf32>
  %outer = loom.dot_general %u, %v, contracting_dims = [] x []
      : (tensor<2xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %matmul, %batched, %transposed, %int, %half, %dot, %outer
      : tensor<2x2xf32>, tensor<2x1x1xf32>, tensor<2x2xf32>, tensor<2x2xi64>, tensor<2x2xf16>, tensor<f32>, tensor<2x3xf32>
}
// CHECK:      matmul : tensor<2x2xf32>
// CHECK-NEXT: {{\[\[}}4., 5.],
// CHECK-NEXT:  [10., 11.]]
// CHECK:      batched : tensor<2x1x1xf32>
// CHECK-NEXT: {{\[\[\[}}4.]],
// CHECK-EMPTY:
// CHECK-NEXT:  {{\[\[}}11.]]]
// CHECK:      transposed : tensor<2x2xf32>
// CHECK-NEXT: {{\[\[}}14., 32.],
// CHECK-NEXT:  [32., 77.]]
// CHECK:      int : tensor<2x2xi64>
// CHECK-NEXT: {{\[\[}}4, 5],
// CHECK-NEXT:  [10, 11]]
// Row 0: 0.099975586 + 0.19995117 = 0.29992676 (f16 0.2998); 0.099975586 * 0.30004883 = 0.029997 (f16 0.03).
// Row 1: 1 + 2 = 3; 0.30004883.
// CHECK:      half : tensor<2x2xf16>
// CHECK-NEXT: {{\[\[}}0.2998, 0.03],
// CHECK-NEXT:  [3., 0.3]]
// CHECK:      dot : tensor<f32>
// CHECK-NEXT: 91.
// CHECK:      outer : tensor<2x3xf32>
// CHECK-NEXT: {{\[\[}}1., 0., 1.],
// CHECK-NEXT:  [2., 0., 2.]]

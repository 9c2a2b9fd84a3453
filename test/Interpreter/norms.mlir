// RUN: loom-run %s --print | FileCheck %s

func.func @main() -> (tensor<4xf32> {loom.name = "ln_eps0"}, tensor<4xf32> {loom.name = "ln"},
                      tensor<4xf32> {loom.name = "ln_affine"}, tensor<2x2x2xf32> {loom.name = "ln_2d"},
                      tensor<4xf32> {loom.name = "rms_eps0"}, tensor<2x2xf32> {loom.name = "rms_scale"}) {
  %x = loom.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %ln_eps0 = loom.layer_norm %x axis = 0 epsilon = 0.0 : (tensor<4xf32>) -> tensor<4xf32>
  %ln = loom.layer_norm %x axis = 0 epsilon = 1.0e-05 : (tensor<4xf32>) -> tensor<4xf32>
  %g = loom.constant dense<[1.0, 2.0, 0.5, -1.0]> : tensor<4xf32>
  %b = loom.constant dense<[0.0, 1.0, 0.0, 0.5]> : tensor<4xf32>
  %ln_affine = loom.layer_norm %x scale %g bias %b axis = 0 epsilon = 1.0e-05
      : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // Normalised over the last two dimensions: [1, 2, 3, 4] and [10, 10, 10, 10].
  %y = loom.constant dense<[[[1.0, 2.0], [3.0, 4.0]], [[10.0, 10.0], [10.0, 10.0]]]> : tensor<2x2x2xf32>
  %ln_2d = loom.layer_norm %y axis = 1 epsilon = 1.0e-05 : (tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %rms_eps0 = loom.rms_norm %x axis = 0 epsilon = 0.0 : (tensor<4xf32>) -> tensor<4xf32>
  %z = loom.constant dense<[[3.0, 4.0], [1.0, -1.0]]> : tensor<2x2xf32>
  %s = loom.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %rms_scale = loom.rms_norm %z scale %s axis = 1 epsilon = 0.0
      : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  return %ln_eps0, %ln, %ln_affine, %ln_2d, %rms_eps0, %rms_scale
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x2x2xf32>, tensor<4xf32>, tensor<2x2xf32>
}
// mean 2.5, biased variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25, sqrt 1.25 = 1.118034:
// 1.5 / 1.118034 = 1.3416408, 0.5 / 1.118034 = 0.4472136.
// CHECK:      ln_eps0 : tensor<4xf32>
// CHECK-NEXT: [-1.3416408, -0.4472136, 0.4472136, 1.3416408]
// With epsilon: sqrt(1.25001) = 1.1180384: 1.5 / 1.1180384 = 1.3416355.
// CHECK:      ln : tensor<4xf32>
// CHECK-NEXT: [-1.3416355, -0.4472118, 0.4472118, 1.3416355]
// * [1, 2, 0.5, -1] + [0, 1, 0, 0.5]: -0.4472118 * 2 + 1 = 0.10557639,
// 0.4472118 * 0.5 = 0.2236059, -1.3416355 + 0.5 = -0.8416355 (-0.84163547 before rounding,
// which prints as -0.8416354).
// CHECK:      ln_affine : tensor<4xf32>
// CHECK-NEXT: [-1.3416355, 0.10557639, 0.2236059, -0.8416354]
// A constant group has variance 0: 0 / sqrt(1e-5) = 0.
// CHECK:      ln_2d : tensor<2x2x2xf32>
// CHECK-NEXT: {{\[\[\[}}-1.3416355, -0.4472118],
// CHECK-NEXT:   [0.4472118, 1.3416355]],
// CHECK-EMPTY:
// CHECK-NEXT:  {{\[\[}}0., 0.],
// CHECK-NEXT:   [0., 0.]]]
// mean(x^2) = (1 + 4 + 9 + 16) / 4 = 7.5, sqrt 7.5 = 2.7386128: x / 2.7386128.
// CHECK:      rms_eps0 : tensor<4xf32>
// CHECK-NEXT: [0.36514837, 0.73029673, 1.0954452, 1.4605935]
// Rows [3, 4]: rms sqrt(12.5) = 3.535534 -> [0.8485281, 1.1313709] * [2, 0.5];
// [1, -1]: rms 1 -> [1, -1] * [2, 0.5].
// CHECK:      rms_scale : tensor<2x2xf32>
// CHECK-NEXT: {{\[\[}}1.6970563, 0.56568545],
// CHECK-NEXT:  [2., -0.5]]

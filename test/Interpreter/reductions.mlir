// RUN: loom-run %s --print | FileCheck %s

// x = [[1, 2, 3], [4, 5, 6.5]]
func.func @main() -> (tensor<3xf32> {loom.name = "sum0"}, tensor<2x1xf32> {loom.name = "sum1_keep"},
                      tensor<f32> {loom.name = "sum_all"}, tensor<2xf32> {loom.name = "mean1"},
                      tensor<1x3xf32> {loom.name = "max0_keep"}, tensor<2xi64> {loom.name = "sum_int"},
                      tensor<2xi32> {loom.name = "max_int"}, tensor<2x3xf32> {loom.name = "none"},
                      tensor<2xf32> {loom.name = "max_nan"}) {
  %x = loom.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.5]]> : tensor<2x3xf32>
  %sum0 = loom.reduce_sum %x, dims = [0] : tensor<2x3xf32> -> tensor<3xf32>
  %sum1_keep = loom.reduce_sum %x, dims = [1] keepdims : tensor<2x3xf32> -> tensor<2x1xf32>
  %sum_all = loom.reduce_sum %x, dims = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  %mean1 = loom.reduce_mean %x, dims = [1] : tensor<2x3xf32> -> tensor<2xf32>
  %max0_keep = loom.reduce_max %x, dims = [0] keepdims : tensor<2x3xf32> -> tensor<1x3xf32>
  %i = loom.constant dense<[[7, -2, 1], [0, 0, -9]]> : tensor<2x3xi64>
  %sum_int = loom.reduce_sum %i, dims = [1] : tensor<2x3xi64> -> tensor<2xi64>
  %j = loom.constant dense<[[7, -2, 1], [-3, -8, -9]]> : tensor<2x3xi32>
  %max_int = loom.reduce_max %j, dims = [1] : tensor<2x3xi32> -> tensor<2xi32>
  // No dimension: the identity.
  %none = loom.reduce_sum %x, dims = [] : tensor<2x3xf32> -> tensor<2x3xf32>
  // A NaN in a row makes its max NaN.
  %zero = loom.constant dense<0.0> : tensor<2x3xf32>
  %nan = loom.div %zero, %zero : tensor<2x3xf32>
  %m = loom.constant dense<[[false, true, false], [false, false, false]]> : tensor<2x3xi1>
  %xn = loom.select %m, %nan, %x : tensor<2x3xi1>, tensor<2x3xf32>
  %max_nan = loom.reduce_max %xn, dims = [1] : tensor<2x3xf32> -> tensor<2xf32>
  return %sum0, %sum1_keep, %sum_all, %mean1, %max0_keep, %sum_int, %max_int, %none, %max_nan
      : tensor<3xf32>, tensor<2x1xf32>, tensor<f32>, tensor<2xf32>, tensor<1x3xf32>, tensor<2xi64>,
        tensor<2xi32>, tensor<2x3xf32>, tensor<2xf32>
}
// CHECK:      sum0 : tensor<3xf32>
// CHECK-NEXT: [5., 7., 9.5]
// CHECK:      sum1_keep : tensor<2x1xf32>
// CHECK-NEXT: {{\[\[}}6.],
// CHECK-NEXT:  [15.5]]
// CHECK:      sum_all : tensor<f32>
// CHECK-NEXT: 21.5
// 6 / 3 = 2, 15.5 / 3 = 5.1666665 (f32).
// CHECK:      mean1 : tensor<2xf32>
// CHECK-NEXT: [2., 5.1666665]
// CHECK:      max0_keep : tensor<1x3xf32>
// CHECK-NEXT: {{\[\[}}4., 5., 6.5]]
// CHECK:      sum_int : tensor<2xi64>
// CHECK-NEXT: [6, -9]
// CHECK:      max_int : tensor<2xi32>
// CHECK-NEXT: [7, -3]
// CHECK:      none : tensor<2x3xf32>
// CHECK-NEXT: {{\[\[}}1., 2., 3.],
// CHECK-NEXT:  [4., 5., 6.5]]
// CHECK:      max_nan : tensor<2xf32>
// CHECK-NEXT: [nan, 6.5]

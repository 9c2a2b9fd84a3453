// RUN: loom-run %s --print | FileCheck %s

func.func @main() -> (tensor<3xf32> {loom.name = "softmax"}, tensor<3xf32> {loom.name = "log_softmax"},
                      tensor<2xf32> {loom.name = "large"}, tensor<2x3xf32> {loom.name = "axis0"},
                      tensor<2x3xf32> {loom.name = "log_axis0"}) {
  %x = loom.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %softmax = loom.softmax %x, axis = 0 : tensor<3xf32>
  %log_softmax = loom.log_softmax %x, axis = 0 : tensor<3xf32>
  // Stable form: exp(x - max) never overflows, so [1000, 1000] gives [0.5, 0.5].
  %big = loom.constant dense<[1000.0, 1000.0]> : tensor<2xf32>
  %large = loom.softmax %big, axis = 0 : tensor<2xf32>
  %y = loom.constant dense<[[1.0, 0.0, 3.0], [1.0, 2.0, 3.0]]> : tensor<2x3xf32>
  %axis0 = loom.softmax %y, axis = 0 : tensor<2x3xf32>
  %log_axis0 = loom.log_softmax %y, axis = 0 : tensor<2x3xf32>
  return %softmax, %log_softmax, %large, %axis0, %log_axis0
      : tensor<3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}
// sum(exp(x - 3)) = e^-2 + e^-1 + 1 = 0.13533528 + 0.36787944 + 1 = 1.5032147;
// softmax = [0.13533528, 0.36787944, 1] / 1.5032147.
// CHECK:      softmax : tensor<3xf32>
// CHECK-NEXT: [0.09003057, 0.24472848, 0.66524094]
// x - 3 - ln(1.5032147) = x - 3 - 0.40760596.
// CHECK:      log_softmax : tensor<3xf32>
// CHECK-NEXT: [-2.407606, -1.407606, -0.40760598]
// CHECK:      large : tensor<2xf32>
// CHECK-NEXT: [0.5, 0.5]
// Along the columns: equal entries give 0.5; (0, 2) gives 1 / (1 + e^2) = 0.11920292
// and 1 / (1 + e^-2) = 0.8807971.
// CHECK:      axis0 : tensor<2x3xf32>
// CHECK-NEXT: {{\[\[}}0.5, 0.11920292, 0.5],
// CHECK-NEXT:  [0.5, 0.8807971, 0.5]]
// log(0.5) = -0.6931472; (0, 2): -ln(1 + e^2) = -2.126928, 2 - ln(1 + e^2) = -0.12692802.
// CHECK:      log_axis0 : tensor<2x3xf32>
// CHECK-NEXT: {{\[\[}}-0.6931472, -2.126928, -0.6931472],
// CHECK-NEXT:  [-0.6931472, -0.12692802, -0.6931472]]

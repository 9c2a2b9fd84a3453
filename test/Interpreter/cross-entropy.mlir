// RUN: loom-run %s --print | FileCheck %s

// logits rows [1, 2, 3], [1, 1, 1], [0, 0, 10]; labels [2, 0, -100] (the last is ignored).
func.func @main() -> (tensor<f32> {loom.name = "mean"}, tensor<f32> {loom.name = "sum"},
                      tensor<3xf32> {loom.name = "none"}, tensor<f32> {loom.name = "all_ignored"},
                      tensor<1x2xf32> {loom.name = "batched"}) {
  %logits = loom.constant dense<[[1.0, 2.0, 3.0], [1.0, 1.0, 1.0], [0.0, 0.0, 10.0]]> : tensor<3x3xf32>
  %labels = loom.constant dense<[2, 0, -100]> : tensor<3xi64>
  %mean = loom.cross_entropy %logits, %labels reduction = mean ignore_index = -100
      : (tensor<3x3xf32>, tensor<3xi64>) -> tensor<f32>
  %sum = loom.cross_entropy %logits, %labels reduction = sum ignore_index = -100
      : (tensor<3x3xf32>, tensor<3xi64>) -> tensor<f32>
  %none = loom.cross_entropy %logits, %labels reduction = none ignore_index = -100
      : (tensor<3x3xf32>, tensor<3xi64>) -> tensor<3xf32>
  %ignored = loom.constant dense<-100> : tensor<3xi64>
  %all_ignored = loom.cross_entropy %logits, %ignored ignore_index = -100
      : (tensor<3x3xf32>, tensor<3xi64>) -> tensor<f32>
  // Leading dimensions [1, 2] with i32 labels, no ignore_index.
  %l3 = loom.reshape %logits : tensor<3x3xf32> -> tensor<1x3x3xf32>
  %l2 = loom.slice %l3, start = [0, 0, 0], limit = [1, 2, 3], strides = [1, 1, 1]
      : tensor<1x3x3xf32> -> tensor<1x2x3xf32>
  %lab = loom.constant dense<[[0, 1]]> : tensor<1x2xi32>
  %batched = loom.cross_entropy %l2, %lab reduction = none
      : (tensor<1x2x3xf32>, tensor<1x2xi32>) -> tensor<1x2xf32>
  return %mean, %sum, %none, %all_ignored, %batched
      : tensor<f32>, tensor<f32>, tensor<3xf32>, tensor<f32>, tensor<1x2xf32>
}
// Row 0: logsumexp = 3 + ln(1 + e^-1 + e^-2) = 3.4076059, minus logits[2] = 3: 0.40760596.
// Row 1: logsumexp = 1 + ln 3 = 2.0986123, minus 1: ln 3 = 1.0986123.
// mean over the 2 samples not ignored: (0.40760596 + 1.0986123) / 2 = 0.7531091.
// CHECK:      mean : tensor<f32>
// CHECK-NEXT: 0.7531091
// CHECK:      sum : tensor<f32>
// CHECK-NEXT: 1.5062182
// CHECK:      none : tensor<3xf32>
// CHECK-NEXT: [0.40760598, 1.0986123, 0.]
// Nothing counted: 0 / 0 = NaN, as PyTorch gives.
// CHECK:      all_ignored : tensor<f32>
// CHECK-NEXT: nan
// Row 0 label 0: 3.4076059 - 1 = 2.407606; row 1 label 1: ln 3.
// CHECK:      batched : tensor<1x2xf32>
// CHECK-NEXT: {{\[\[}}2.407606, 1.0986123]]

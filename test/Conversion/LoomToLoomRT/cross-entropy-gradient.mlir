// The cross-entropy gradient compares each logit's class index with its
// sample's label: the indices are one row of classes (loomrt.iota of the
// class count) that the comparing kernel reads with stride 0 along the
// samples, not a [samples, classes] int64 buffer (for an LM step that
// buffer would be tokens x vocabulary x 8 bytes).
// RUN: loom-opt %s -loom-autodiff=loss=loss -loom-fuse-elementwise -convert-loom-to-loomrt=function=main_grad | FileCheck %s

// CHECK-LABEL: func.func @main_grad
// CHECK-NOT: memref<16x40xi64>
// CHECK: loomrt.iota 0 outs(%[[CLASSES:.*]] : memref<40xi64>)
// CHECK-NOT: memref<16x40xi64>
// CHECK: loomrt.kernel ins({{.*}}%[[CLASSES]]{{.*}}memref<40xi64>
// CHECK-SAME: in_strides = [{{.*}}array<i64: 0, 1>
// CHECK-NOT: memref<16x40xi64>
// CHECK: return
func.func @main(%w: tensor<8x40xf32> {loom.name = "w", loom.param},
                %x: tensor<16x8xf32> {loom.name = "x"},
                %y: tensor<16xi64> {loom.name = "y"}) -> (tensor<f32> {loom.name = "loss"}) {
  %logits = loom.dot_general %x, %w, contracting_dims = [1] x [0]
      : (tensor<16x8xf32>, tensor<8x40xf32>) -> tensor<16x40xf32>
  %loss = loom.cross_entropy %logits, %y : (tensor<16x40xf32>, tensor<16xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

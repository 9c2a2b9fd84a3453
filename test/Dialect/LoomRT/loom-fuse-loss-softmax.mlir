// RUN: loom-opt %s -split-input-file -loom-fuse-loss-softmax | FileCheck %s

// The backward pass's softmax of the logits is written by the loss: its
// buffer is allocated before the cross-entropy, the softmax goes.
// CHECK-LABEL: func.func @fused
// CHECK:         %[[P:.*]] = loomrt.alloc {category = "gradient"} : memref<8x10xf32>
// CHECK-NEXT:    loomrt.cross_entropy "mean" ins(%arg0, %arg1 : memref<8x10xf32>, memref<8xi64>) outs(%arg2 : memref<f32>) probs(%[[P]] : memref<8x10xf32>)
// CHECK-NOT:     loomrt.softmax
// CHECK:         loomrt.kernel ins(%[[P]] : memref<8x10xf32>)
func.func @fused(%l: memref<8x10xf32>, %y: memref<8xi64>, %loss: memref<f32>, %out: memref<8x10xf32>) {
  loomrt.cross_entropy "mean" ins(%l, %y : memref<8x10xf32>, memref<8xi64>) outs(%loss : memref<f32>) {ignore_index = -100 : i64, origin = "cross_entropy"}
  %p = loomrt.alloc {category = "gradient"} : memref<8x10xf32>
  loomrt.softmax 1 ins(%l : memref<8x10xf32>) outs(%p : memref<8x10xf32>) {log = false, origin = "softmax"}
  loomrt.kernel ins(%p : memref<8x10xf32>) outs(%out : memref<8x10xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    loomrt.yield %n : f32
  }
  loomrt.dealloc %p : memref<8x10xf32>
  return
}

// -----

// The logits are written between the two, and a log-softmax is another
// function: neither fuses.
// CHECK-LABEL: func.func @kept
// CHECK:         loomrt.cross_entropy "mean" ins(%arg0, %arg1 : memref<8x10xf32>, memref<8xi64>) outs(%arg2 : memref<f32>) {
// CHECK:         loomrt.softmax 1 ins(%arg0
// CHECK:         loomrt.softmax 1 ins(%arg3
// CHECK:         loomrt.cross_entropy "mean" ins(%arg3, %arg1 : memref<8x10xf32>, memref<8xi64>) outs(%arg2 : memref<f32>) {
func.func @kept(%l: memref<8x10xf32>, %y: memref<8xi64>, %loss: memref<f32>, %l2: memref<8x10xf32>, %out: memref<8x10xf32>) {
  loomrt.cross_entropy "mean" ins(%l, %y : memref<8x10xf32>, memref<8xi64>) outs(%loss : memref<f32>) {ignore_index = -100 : i64, origin = "cross_entropy"}
  loomrt.kernel ins(%out : memref<8x10xf32>) outs(%l : memref<8x10xf32>) attributes {origin = "overwrite"} {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    loomrt.yield %n : f32
  }
  %p = loomrt.alloc {category = "gradient"} : memref<8x10xf32>
  loomrt.softmax 1 ins(%l : memref<8x10xf32>) outs(%p : memref<8x10xf32>) {log = false, origin = "softmax"}
  loomrt.dealloc %p : memref<8x10xf32>
  %q = loomrt.alloc {category = "gradient"} : memref<8x10xf32>
  loomrt.softmax 1 ins(%l2 : memref<8x10xf32>) outs(%q : memref<8x10xf32>) {log = true, origin = "log_softmax"}
  loomrt.cross_entropy "mean" ins(%l2, %y : memref<8x10xf32>, memref<8xi64>) outs(%loss : memref<f32>) {ignore_index = -100 : i64, origin = "cross_entropy"}
  loomrt.dealloc %q : memref<8x10xf32>
  return
}

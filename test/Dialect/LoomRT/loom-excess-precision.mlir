// RUN: loom-opt %s -loom-excess-precision -split-input-file | FileCheck %s

// SiLU's gradient as convert-loom-to-loomrt writes it: each bf16 op
// rounds. Inside the loop the roundings go (the sigmoid, 1 - sigmoid and
// the product read the f32 values); the stored result is rounded once.
// CHECK-LABEL: func.func @chain
// CHECK: ^bb0(%[[DY:.*]]: bf16, %[[X:.*]]: bf16):
// CHECK-NEXT: %[[ONE:.*]] = arith.constant
// CHECK-NEXT: %[[D:.*]] = arith.extf %[[DY]] : bf16 to f32
// CHECK-NEXT: %[[A:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK-NEXT: %[[N:.*]] = arith.negf %[[A]] : f32
// CHECK-NEXT: %[[E:.*]] = math.exp %[[N]] : f32
// CHECK-NEXT: %[[P:.*]] = arith.addf %[[E]], %[[ONE]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.divf %[[ONE]], %[[P]] : f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[D]], %[[S]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[M]] : f32 to bf16
// CHECK-NEXT: loomrt.yield %[[R]] : bf16
func.func @chain(%dy: memref<8xbf16>, %x: memref<8xbf16>, %dx: memref<8xbf16>) {
  loomrt.kernel ins(%dy, %x : memref<8xbf16>, memref<8xbf16>) outs(%dx : memref<8xbf16>) attributes {origin = "sigmoid+mul"} {
  ^bb0(%a: bf16, %b: bf16):
    %one = arith.constant 1.0 : f32
    %d = arith.extf %a : bf16 to f32
    %w = arith.extf %b : bf16 to f32
    %n = arith.negf %w : f32
    %n16 = arith.truncf %n : f32 to bf16
    %n32 = arith.extf %n16 : bf16 to f32
    %e = math.exp %n32 : f32
    %e16 = arith.truncf %e : f32 to bf16
    %e32 = arith.extf %e16 : bf16 to f32
    %p = arith.addf %e32, %one : f32
    %p16 = arith.truncf %p : f32 to bf16
    %p32 = arith.extf %p16 : bf16 to f32
    %s = arith.divf %one, %p32 : f32
    %s16 = arith.truncf %s : f32 to bf16
    %s32 = arith.extf %s16 : bf16 to f32
    %m = arith.mulf %d, %s32 : f32
    %m16 = arith.truncf %m : f32 to bf16
    loomrt.yield %m16 : bf16
  }
  return
}

// -----

// A value the loop also stores keeps its rounding for its readers in the
// loop (merged kernels: the producer's output, read by the consumer), so
// they see what the buffer holds. A round trip through another type is
// left alone.
// CHECK-LABEL: func.func @stored
// CHECK: %[[R:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK-NEXT: %[[W:.*]] = arith.extf %[[R]] : bf16 to f32
// CHECK-NEXT: %[[Q:.*]] = arith.addf %[[W]], %[[W]] : f32
// CHECK-NEXT: %[[H:.*]] = arith.truncf %[[Q]] : f32 to f16
// CHECK-NEXT: %[[HW:.*]] = arith.extf %[[H]] : f16 to f64
// CHECK-NEXT: %[[HR:.*]] = arith.truncf %[[HW]] : f64 to bf16
// CHECK-NEXT: loomrt.yield %[[R]], %[[HR]] : bf16, bf16
func.func @stored(%x: memref<8xbf16>, %y: memref<8xbf16>, %z: memref<8xbf16>) {
  loomrt.kernel ins(%x : memref<8xbf16>) outs(%y, %z : memref<8xbf16>, memref<8xbf16>) attributes {origin = "mul+add"} {
  ^bb0(%a: bf16):
    %w = arith.extf %a : bf16 to f32
    %m = arith.mulf %w, %w : f32
    %r = arith.truncf %m : f32 to bf16
    %r32 = arith.extf %r : bf16 to f32
    %q = arith.addf %r32, %r32 : f32
    %h = arith.truncf %q : f32 to f16
    %h64 = arith.extf %h : f16 to f64
    %hr = arith.truncf %h64 : f64 to bf16
    loomrt.yield %r, %hr : bf16, bf16
  }
  return
}

// -----

// A reduction's body: the product it folds is rounded (the element its
// unfused producer stored); the square before it is not.
// CHECK-LABEL: func.func @reduce_body
// CHECK: ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: bf16):
// CHECK-NEXT: %[[X:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT: %[[Y:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK-NEXT: %[[S:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[S]], %[[Y]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[P]] : f32 to bf16
// CHECK-NEXT: loomrt.yield %[[R]] : bf16
func.func @reduce_body(%a: memref<2x4xbf16>, %b: memref<2x4xbf16>, %s: memref<2xbf16>) {
  loomrt.reduce sum [1] ins(%a, %b : memref<2x4xbf16>, memref<2x4xbf16>) outs(%s : memref<2xbf16>) attributes {origin = "mul+mul+reduce_sum"} {
  ^bb0(%x: bf16, %y: bf16):
    %x32 = arith.extf %x : bf16 to f32
    %y32 = arith.extf %y : bf16 to f32
    %sq = arith.mulf %x32, %x32 : f32
    %sq16 = arith.truncf %sq : f32 to bf16
    %sq32 = arith.extf %sq16 : bf16 to f32
    %p = arith.mulf %sq32, %y32 : f32
    %p16 = arith.truncf %p : f32 to bf16
    loomrt.yield %p16 : bf16
  }
  return
}

// RUN: loom-opt %s -split-input-file -loom-fuse-norm-grad | FileCheck %s

// Both folds: the norm_grad reads the product's bf16 buffer (its dealloc
// moves after it), adds onto the skip connection's gradient, and writes the
// sum into its own input-gradient buffer, which the add's reader reads.
// CHECK-LABEL: func.func @both
// CHECK-SAME:    (%[[X:.*]]: memref<4x8xf32>, %[[S:.*]]: memref<8xf32>, %[[SKIP:.*]]: memref<4x8xf32>, %[[OUT:.*]]: memref<4x8xf32>)
// CHECK:         %[[P:.*]] = loomrt.alloc {category = "gradient"} : memref<4x8xbf16>
// CHECK-NEXT:    loomrt.kernel ins(%[[X]] : memref<4x8xf32>) outs(%[[P]] : memref<4x8xbf16>)
// CHECK:         %[[DX:.*]] = loomrt.alloc {category = "gradient"} : memref<4x8xf32>
// CHECK-NEXT:    %[[DS:.*]] = loomrt.alloc
// CHECK-NEXT:    %[[DB:.*]] = loomrt.alloc
// CHECK-NEXT:    loomrt.norm_grad 1 ins(%[[X]], %[[P]] : memref<4x8xf32>, memref<4x8xbf16>) scale(%[[S]] : memref<8xf32>) residual(%[[SKIP]] : memref<4x8xf32>) outs(%[[DX]], %[[DS]], %[[DB]] :
// CHECK-NEXT:    loomrt.dealloc %[[P]] : memref<4x8xbf16>
// CHECK-NEXT:    loomrt.kernel ins(%[[DX]] : memref<4x8xf32>) outs(%[[OUT]] : memref<4x8xf32>) attributes {origin = "neg"}
// CHECK-NOT:     origin = "add"
// CHECK:         loomrt.dealloc %[[DX]]
// CHECK-NOT:     loomrt.alloc
// CHECK:         return
func.func @both(%x: memref<4x8xf32>, %s: memref<8xf32>, %skip: memref<4x8xf32>, %out: memref<4x8xf32>) {
  %p = loomrt.alloc {category = "gradient"} : memref<4x8xbf16>
  loomrt.kernel ins(%x : memref<4x8xf32>) outs(%p : memref<4x8xbf16>) attributes {origin = "convert"} {
  ^bb0(%v: f32):
    %w = arith.truncf %v : f32 to bf16
    loomrt.yield %w : bf16
  }
  %g = loomrt.alloc {category = "gradient"} : memref<4x8xf32>
  loomrt.kernel ins(%p : memref<4x8xbf16>) outs(%g : memref<4x8xf32>) attributes {origin = "convert"} {
  ^bb0(%v: bf16):
    %w = arith.extf %v : bf16 to f32
    loomrt.yield %w : f32
  }
  loomrt.dealloc %p : memref<4x8xbf16>
  %dx = loomrt.alloc {category = "gradient"} : memref<4x8xf32>
  %ds = loomrt.alloc {category = "gradient"} : memref<8xf32>
  %db = loomrt.alloc {category = "gradient"} : memref<8xf32>
  loomrt.norm_grad 1 ins(%x, %g : memref<4x8xf32>, memref<4x8xf32>) scale(%s : memref<8xf32>) outs(%dx, %ds, %db : memref<4x8xf32>, memref<8xf32>, memref<8xf32>) {epsilon = 1.0e-05 : f64, origin = "norm_grad", rms = false}
  loomrt.dealloc %g : memref<4x8xf32>
  %sum = loomrt.alloc {category = "gradient"} : memref<4x8xf32>
  loomrt.kernel ins(%skip, %dx : memref<4x8xf32>, memref<4x8xf32>) outs(%sum : memref<4x8xf32>) attributes {origin = "add"} {
  ^bb0(%a: f32, %b: f32):
    %c = arith.addf %a, %b : f32
    loomrt.yield %c : f32
  }
  loomrt.dealloc %dx : memref<4x8xf32>
  loomrt.kernel ins(%sum : memref<4x8xf32>) outs(%out : memref<4x8xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    loomrt.yield %n : f32
  }
  loomrt.dealloc %sum : memref<4x8xf32>
  return
}

// -----

// The widened cotangent has another reader, and the residual is written
// between the norm_grad and the add: neither folds.
// CHECK-LABEL: func.func @kept
// CHECK:         origin = "convert"
// CHECK:         loomrt.norm_grad 1 ins(%{{.*}}, %{{.*}} : memref<4x8xf32>, memref<4x8xf32>) outs(
// CHECK:         origin = "skip"
// CHECK:         origin = "add"
func.func @kept(%x: memref<4x8xf32>, %p: memref<4x8xbf16>, %skip: memref<4x8xf32>, %out: memref<4x8xf32>, %out2: memref<4x8xf32>) {
  %g = loomrt.alloc {category = "gradient"} : memref<4x8xf32>
  loomrt.kernel ins(%p : memref<4x8xbf16>) outs(%g : memref<4x8xf32>) attributes {origin = "convert"} {
  ^bb0(%v: bf16):
    %w = arith.extf %v : bf16 to f32
    loomrt.yield %w : f32
  }
  %dx = loomrt.alloc {category = "gradient"} : memref<4x8xf32>
  %ds = loomrt.alloc {category = "gradient"} : memref<8xf32>
  %db = loomrt.alloc {category = "gradient"} : memref<8xf32>
  loomrt.norm_grad 1 ins(%x, %g : memref<4x8xf32>, memref<4x8xf32>) outs(%dx, %ds, %db : memref<4x8xf32>, memref<8xf32>, memref<8xf32>) {epsilon = 1.0e-05 : f64, origin = "norm_grad", rms = true}
  loomrt.kernel ins(%g : memref<4x8xf32>) outs(%out2 : memref<4x8xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    loomrt.yield %n : f32
  }
  loomrt.dealloc %g : memref<4x8xf32>
  loomrt.kernel ins(%x : memref<4x8xf32>) outs(%skip : memref<4x8xf32>) attributes {origin = "skip"} {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    loomrt.yield %n : f32
  }
  %sum = loomrt.alloc {category = "gradient"} : memref<4x8xf32>
  loomrt.kernel ins(%skip, %dx : memref<4x8xf32>, memref<4x8xf32>) outs(%sum : memref<4x8xf32>) attributes {origin = "add"} {
  ^bb0(%a: f32, %b: f32):
    %c = arith.addf %a, %b : f32
    loomrt.yield %c : f32
  }
  loomrt.dealloc %dx : memref<4x8xf32>
  loomrt.kernel ins(%sum : memref<4x8xf32>) outs(%out : memref<4x8xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    loomrt.yield %n : f32
  }
  loomrt.dealloc %sum : memref<4x8xf32>
  return
}

// -----

// The input gradient has a reader besides the add, and a widening's source
// is written before the norm_grad reads it: neither folds.
// CHECK-LABEL: func.func @read_twice
// CHECK:         origin = "convert"
// CHECK:         loomrt.norm_grad 1 ins(%{{.*}}, %{{.*}} : memref<4x8xf32>, memref<4x8xf32>) outs(
// CHECK:         origin = "add"
func.func @read_twice(%x: memref<4x8xf32>, %p: memref<4x8xbf16>, %skip: memref<4x8xf32>, %out: memref<4x8xf32>, %out2: memref<4x8xf32>) {
  %g = loomrt.alloc {category = "gradient"} : memref<4x8xf32>
  loomrt.kernel ins(%p : memref<4x8xbf16>) outs(%g : memref<4x8xf32>) attributes {origin = "convert"} {
  ^bb0(%v: bf16):
    %w = arith.extf %v : bf16 to f32
    loomrt.yield %w : f32
  }
  loomrt.kernel ins(%x : memref<4x8xf32>) outs(%p : memref<4x8xbf16>) attributes {origin = "overwrite"} {
  ^bb0(%v: f32):
    %w = arith.truncf %v : f32 to bf16
    loomrt.yield %w : bf16
  }
  %dx = loomrt.alloc {category = "gradient"} : memref<4x8xf32>
  %ds = loomrt.alloc {category = "gradient"} : memref<8xf32>
  %db = loomrt.alloc {category = "gradient"} : memref<8xf32>
  loomrt.norm_grad 1 ins(%x, %g : memref<4x8xf32>, memref<4x8xf32>) outs(%dx, %ds, %db : memref<4x8xf32>, memref<8xf32>, memref<8xf32>) {epsilon = 1.0e-05 : f64, origin = "norm_grad", rms = false}
  loomrt.dealloc %g : memref<4x8xf32>
  %sum = loomrt.alloc {category = "gradient"} : memref<4x8xf32>
  loomrt.kernel ins(%skip, %dx : memref<4x8xf32>, memref<4x8xf32>) outs(%sum : memref<4x8xf32>) attributes {origin = "add"} {
  ^bb0(%a: f32, %b: f32):
    %c = arith.addf %a, %b : f32
    loomrt.yield %c : f32
  }
  loomrt.kernel ins(%dx : memref<4x8xf32>) outs(%out2 : memref<4x8xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    loomrt.yield %n : f32
  }
  loomrt.dealloc %dx : memref<4x8xf32>
  loomrt.kernel ins(%sum : memref<4x8xf32>) outs(%out : memref<4x8xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    loomrt.yield %n : f32
  }
  loomrt.dealloc %sum : memref<4x8xf32>
  return
}

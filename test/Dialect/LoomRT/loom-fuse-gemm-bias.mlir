// RUN: loom-opt %s -allow-unregistered-dialect -loom-fuse-gemm-bias -split-input-file \
// RUN:   | FileCheck %s

// A linear layer: the bias add is the product's only reader, so the gemm
// adds the bias and writes the add's output; the product's buffer and the
// kernel are gone.
// CHECK-LABEL: func.func @linear
// CHECK-NOT: loomrt.kernel
// CHECK: %[[Y:.*]] = loomrt.alloc
// CHECK-NEXT: loomrt.gemm ins(%arg0, %arg1 : memref<4x3xf32>, memref<3x5xf32>) bias(%arg2 : memref<5xf32>) outs(%[[Y]] : memref<4x5xf32>)
// CHECK-SAME: origin = "dot_general+add"
// CHECK-NOT: loomrt.alloc
// CHECK-NOT: loomrt.kernel
// CHECK: return
func.func @linear(%x: memref<4x3xf32>, %w: memref<3x5xf32>, %b: memref<5xf32>) {
  %p = loomrt.alloc {category = "activation"} : memref<4x5xf32>
  loomrt.gemm ins(%x, %w : memref<4x3xf32>, memref<3x5xf32>) outs(%p : memref<4x5xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 4 : i64, n = 5 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  %y = loomrt.alloc {category = "activation"} : memref<4x5xf32>
  loomrt.kernel ins(%p, %b : memref<4x5xf32>, memref<5xf32>) outs(%y : memref<4x5xf32>) attributes {in_strides = [array<i64: 5, 1>, array<i64: 0, 1>], origin = "add"} {
  ^bb0(%u: f32, %v: f32):
    %s = arith.addf %u, %v : f32
    loomrt.yield %s : f32
  }
  "test.use"(%y) : (memref<4x5xf32>) -> ()
  return
}

// -----

// The bias first, a [batch, seq, features] product (rows are batch x seq),
// and a transposed weight.
// CHECK-LABEL: func.func @bias_first_3d
// CHECK: loomrt.gemm ins(%arg0, %arg1 : memref<2x3x4xf32>, memref<5x4xf32>) bias(%arg2 : memref<5xf32>) outs(%{{.*}} : memref<2x3x5xf32>)
// CHECK-SAME: trans_b = true
// CHECK-NOT: loomrt.kernel
func.func @bias_first_3d(%x: memref<2x3x4xf32>, %w: memref<5x4xf32>, %b: memref<5xf32>) {
  %p = loomrt.alloc {category = "activation"} : memref<2x3x5xf32>
  loomrt.gemm ins(%x, %w : memref<2x3x4xf32>, memref<5x4xf32>) outs(%p : memref<2x3x5xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 4 : i64, m = 6 : i64, n = 5 : i64, origin = "dot_general", trans_a = false, trans_b = true}
  %y = loomrt.alloc {category = "activation"} : memref<2x3x5xf32>
  loomrt.kernel ins(%b, %p : memref<5xf32>, memref<2x3x5xf32>) outs(%y : memref<2x3x5xf32>) attributes {in_strides = [array<i64: 0, 0, 1>, array<i64: 15, 5, 1>], origin = "add"} {
  ^bb0(%u: f32, %v: f32):
    %s = arith.addf %u, %v : f32
    loomrt.yield %s : f32
  }
  "test.use"(%y) : (memref<2x3x5xf32>) -> ()
  return
}

// -----

// The backward pass reads the product too: it keeps its buffer.
// CHECK-LABEL: func.func @product_read_again
// CHECK-NOT: bias(
// CHECK: loomrt.kernel
func.func @product_read_again(%x: memref<4x3xf32>, %w: memref<3x5xf32>, %b: memref<5xf32>) {
  %p = loomrt.alloc {category = "activation"} : memref<4x5xf32>
  loomrt.gemm ins(%x, %w : memref<4x3xf32>, memref<3x5xf32>) outs(%p : memref<4x5xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 4 : i64, n = 5 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  %y = loomrt.alloc {category = "activation"} : memref<4x5xf32>
  loomrt.kernel ins(%p, %b : memref<4x5xf32>, memref<5xf32>) outs(%y : memref<4x5xf32>) attributes {in_strides = [array<i64: 5, 1>, array<i64: 0, 1>], origin = "add"} {
  ^bb0(%u: f32, %v: f32):
    %s = arith.addf %u, %v : f32
    loomrt.yield %s : f32
  }
  "test.use"(%p, %y) : (memref<4x5xf32>, memref<4x5xf32>) -> ()
  return
}

// -----

// Not an add of a row bias: a product (mulf), and a per-row vector
// (strides [1, 0]).
// CHECK-LABEL: func.func @not_a_bias_add
// CHECK-NOT: bias(
// CHECK: arith.mulf
// CHECK-NOT: bias(
// CHECK: arith.addf
func.func @not_a_bias_add(%x: memref<4x3xf32>, %w: memref<3x4xf32>, %b: memref<4xf32>) {
  %p = loomrt.alloc {category = "activation"} : memref<4x4xf32>
  loomrt.gemm ins(%x, %w : memref<4x3xf32>, memref<3x4xf32>) outs(%p : memref<4x4xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 4 : i64, n = 4 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  %y = loomrt.alloc {category = "activation"} : memref<4x4xf32>
  loomrt.kernel ins(%p, %b : memref<4x4xf32>, memref<4xf32>) outs(%y : memref<4x4xf32>) attributes {in_strides = [array<i64: 4, 1>, array<i64: 0, 1>], origin = "mul"} {
  ^bb0(%u: f32, %v: f32):
    %s = arith.mulf %u, %v : f32
    loomrt.yield %s : f32
  }
  %q = loomrt.alloc {category = "activation"} : memref<4x4xf32>
  loomrt.gemm ins(%x, %w : memref<4x3xf32>, memref<3x4xf32>) outs(%q : memref<4x4xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 4 : i64, n = 4 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  %z = loomrt.alloc {category = "activation"} : memref<4x4xf32>
  loomrt.kernel ins(%q, %b : memref<4x4xf32>, memref<4xf32>) outs(%z : memref<4x4xf32>) attributes {in_strides = [array<i64: 4, 1>, array<i64: 1, 0>], origin = "add"} {
  ^bb0(%u: f32, %v: f32):
    %s = arith.addf %u, %v : f32
    loomrt.yield %s : f32
  }
  "test.use"(%y, %z) : (memref<4x4xf32>, memref<4x4xf32>) -> ()
  return
}

// -----

// The bias is written between the gemm and the add (a bf16 program
// narrows its f32 bias there): the fused gemm runs where the add did,
// after the write, so it fuses. A weight written in between would change
// what the fused gemm reads: no fusion (below).
// CHECK-LABEL: func.func @bias_written_between
// CHECK: loomrt.kernel ins(%arg3 : memref<5xf32>) outs(%[[B:.*]] : memref<5xf32>)
// CHECK: loomrt.gemm ins(%arg0, %arg1 : memref<4x3xf32>, memref<3x5xf32>) bias(%[[B]] : memref<5xf32>)
// CHECK-NOT: origin = "add"
// CHECK-LABEL: func.func @weight_written_between
// CHECK-NOT: bias(
// CHECK: origin = "add"
func.func @bias_written_between(%x: memref<4x3xf32>, %w: memref<3x5xf32>, %b: memref<5xf32>, %c: memref<5xf32>) {
  %p = loomrt.alloc {category = "activation"} : memref<4x5xf32>
  loomrt.gemm ins(%x, %w : memref<4x3xf32>, memref<3x5xf32>) outs(%p : memref<4x5xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 4 : i64, n = 5 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  %bias = loomrt.alloc {category = "activation"} : memref<5xf32>
  loomrt.kernel ins(%c : memref<5xf32>) outs(%bias : memref<5xf32>) attributes {origin = "copy"} {
  ^bb0(%u: f32):
    loomrt.yield %u : f32
  }
  %y = loomrt.alloc {category = "activation"} : memref<4x5xf32>
  loomrt.kernel ins(%p, %bias : memref<4x5xf32>, memref<5xf32>) outs(%y : memref<4x5xf32>) attributes {in_strides = [array<i64: 5, 1>, array<i64: 0, 1>], origin = "add"} {
  ^bb0(%u: f32, %v: f32):
    %s = arith.addf %u, %v : f32
    loomrt.yield %s : f32
  }
  "test.use"(%y) : (memref<4x5xf32>) -> ()
  return
}
func.func @weight_written_between(%x: memref<4x3xf32>, %v: memref<3x5xf32>, %b: memref<5xf32>) {
  %w = loomrt.alloc {category = "activation"} : memref<3x5xf32>
  %p = loomrt.alloc {category = "activation"} : memref<4x5xf32>
  loomrt.gemm ins(%x, %w : memref<4x3xf32>, memref<3x5xf32>) outs(%p : memref<4x5xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 4 : i64, n = 5 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  loomrt.kernel ins(%v : memref<3x5xf32>) outs(%w : memref<3x5xf32>) attributes {origin = "copy"} {
  ^bb0(%u: f32):
    loomrt.yield %u : f32
  }
  %y = loomrt.alloc {category = "activation"} : memref<4x5xf32>
  loomrt.kernel ins(%p, %b : memref<4x5xf32>, memref<5xf32>) outs(%y : memref<4x5xf32>) attributes {in_strides = [array<i64: 5, 1>, array<i64: 0, 1>], origin = "add"} {
  ^bb0(%u: f32, %v2: f32):
    %s = arith.addf %u, %v2 : f32
    loomrt.yield %s : f32
  }
  "test.use"(%y) : (memref<4x5xf32>) -> ()
  return
}

// -----

// A batched product (a bias per matrix would need a batch stride) keeps
// its kernel, and so does a bf16 add that is not convert-loom-to-loomrt's
// (bf16 arithmetic, not the widened sum rounded once, below).
// CHECK-LABEL: func.func @batched_and_bf16
// CHECK-NOT: bias(
// CHECK: origin = "add"
// CHECK-NOT: bias(
// CHECK: origin = "add"
func.func @batched_and_bf16(%x: memref<2x4x3xf32>, %w: memref<3x5xf32>, %b: memref<5xf32>,
                            %xh: memref<4x3xbf16>, %wh: memref<3x5xbf16>, %bh: memref<5xbf16>) {
  %p = loomrt.alloc {category = "activation"} : memref<2x4x5xf32>
  loomrt.gemm ins(%x, %w : memref<2x4x3xf32>, memref<3x5xf32>) outs(%p : memref<2x4x5xf32>) {a_batched = true, b_batched = false, batch = 2 : i64, k = 3 : i64, m = 4 : i64, n = 5 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  %y = loomrt.alloc {category = "activation"} : memref<2x4x5xf32>
  loomrt.kernel ins(%p, %b : memref<2x4x5xf32>, memref<5xf32>) outs(%y : memref<2x4x5xf32>) attributes {in_strides = [array<i64: 20, 5, 1>, array<i64: 0, 0, 1>], origin = "add"} {
  ^bb0(%u: f32, %v: f32):
    %s = arith.addf %u, %v : f32
    loomrt.yield %s : f32
  }
  %q = loomrt.alloc {category = "activation"} : memref<4x5xbf16>
  loomrt.gemm ins(%xh, %wh : memref<4x3xbf16>, memref<3x5xbf16>) outs(%q : memref<4x5xbf16>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 4 : i64, n = 5 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  %z = loomrt.alloc {category = "activation"} : memref<4x5xbf16>
  loomrt.kernel ins(%q, %bh : memref<4x5xbf16>, memref<5xbf16>) outs(%z : memref<4x5xbf16>) attributes {in_strides = [array<i64: 5, 1>, array<i64: 0, 1>], origin = "add"} {
  ^bb0(%u: bf16, %v: bf16):
    %s = arith.addf %u, %v : bf16
    loomrt.yield %s : bf16
  }
  "test.use"(%y, %z) : (memref<2x4x5xf32>, memref<4x5xbf16>) -> ()
  return
}

// -----

// A linear layer and its tanh GELU, as training lowers them: the bias add
// fuses, then the GELU, whose output becomes the gemm's and whose input
// (read again by the backward pass, here test.use) its gelu_input.
// CHECK-LABEL: func.func @linear_gelu
// CHECK-NEXT: %[[Y:.*]] = loomrt.alloc
// CHECK-NEXT: %[[A:.*]] = loomrt.alloc
// CHECK-NEXT: loomrt.gemm ins(%arg0, %arg1 : memref<4x3xf32>, memref<3x8xf32>) bias(%arg2 : memref<8xf32>) outs(%[[A]] : memref<4x8xf32>) gelu_input(%[[Y]] : memref<4x8xf32>)
// CHECK-SAME: origin = "dot_general+add+gelu"
// CHECK-NOT: loomrt.kernel
// CHECK: "test.use"(%[[A]], %[[Y]])
func.func @linear_gelu(%x: memref<4x3xf32>, %w: memref<3x8xf32>, %b: memref<8xf32>) {
  %p = loomrt.alloc {category = "activation"} : memref<4x8xf32>
  loomrt.gemm ins(%x, %w : memref<4x3xf32>, memref<3x8xf32>) outs(%p : memref<4x8xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 4 : i64, n = 8 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  %y = loomrt.alloc {category = "activation"} : memref<4x8xf32>
  loomrt.kernel ins(%p, %b : memref<4x8xf32>, memref<8xf32>) outs(%y : memref<4x8xf32>) attributes {in_strides = [array<i64: 8, 1>, array<i64: 0, 1>], origin = "add"} {
  ^bb0(%u: f32, %v: f32):
    %s = arith.addf %u, %v : f32
    loomrt.yield %s : f32
  }
  %a = loomrt.alloc {category = "activation"} : memref<4x8xf32>
  loomrt.kernel ins(%y : memref<4x8xf32>) outs(%a : memref<4x8xf32>) attributes {origin = "gelu"} {
  ^bb0(%v: f32):
    %c = arith.constant 0.797884583 : f32
    %h = arith.constant 5.000000e-01 : f32
    %i = arith.mulf %c, %v : f32
    %t = math.tanh %i : f32
    %o = arith.addf %h, %t : f32
    %r = arith.mulf %o, %v : f32
    loomrt.yield %r : f32
  }
  "test.use"(%a, %y) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
  return
}

// -----

// The exact GELU (erf) stays a kernel: cuBLASLt's GELU is the tanh form.
// CHECK-LABEL: func.func @erf_gelu
// CHECK: loomrt.gemm
// CHECK-SAME: bias(
// CHECK-NOT: gelu_input
// CHECK: loomrt.kernel
// CHECK-SAME: origin = "gelu"
func.func @erf_gelu(%x: memref<4x3xf32>, %w: memref<3x8xf32>, %b: memref<8xf32>, %y: memref<4x8xf32>) {
  %a = loomrt.alloc {category = "activation"} : memref<4x8xf32>
  loomrt.gemm ins(%x, %w : memref<4x3xf32>, memref<3x8xf32>) bias(%b : memref<8xf32>) outs(%y : memref<4x8xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 4 : i64, n = 8 : i64, origin = "dot_general+add", trans_a = false, trans_b = false}
  loomrt.kernel ins(%y : memref<4x8xf32>) outs(%a : memref<4x8xf32>) attributes {origin = "gelu"} {
  ^bb0(%v: f32):
    %e = math.erf %v : f32
    loomrt.yield %e : f32
  }
  "test.use"(%a, %y) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
  return
}

// -----

// The biased product is read before the GELU: the gemm keeps its output.
// CHECK-LABEL: func.func @read_before_gelu
// CHECK-NOT: gelu_input
// CHECK: "test.read"
// CHECK: loomrt.kernel
func.func @read_before_gelu(%x: memref<4x3xf32>, %w: memref<3x8xf32>, %b: memref<8xf32>) {
  %y = loomrt.alloc {category = "activation"} : memref<4x8xf32>
  %a = loomrt.alloc {category = "activation"} : memref<4x8xf32>
  loomrt.gemm ins(%x, %w : memref<4x3xf32>, memref<3x8xf32>) bias(%b : memref<8xf32>) outs(%y : memref<4x8xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 4 : i64, n = 8 : i64, origin = "dot_general+add", trans_a = false, trans_b = false}
  "test.read"(%y) : (memref<4x8xf32>) -> ()
  loomrt.kernel ins(%y : memref<4x8xf32>) outs(%a : memref<4x8xf32>) attributes {origin = "gelu"} {
  ^bb0(%v: f32):
    %t = math.tanh %v : f32
    loomrt.yield %t : f32
  }
  "test.use"(%a, %y) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
  return
}

// -----

// The backward pass of a linear layer after a tanh GELU: the input
// gradient's product is the tanh GELU gradient's cotangent and only that
// kernel reads it, so the gemm applies the gradient as it writes the
// kernel's output, GELU's input (the forward's gelu_input) as its
// dgelu_input; the product's buffer and the kernel are gone.
// CHECK-LABEL: func.func @linear_gelu_grad
// CHECK-NEXT: %[[G:.*]] = loomrt.alloc
// CHECK-NEXT: loomrt.gemm ins(%arg0, %arg1 : memref<4x5xf32>, memref<8x5xf32>) outs(%[[G]] : memref<4x8xf32>) dgelu_input(%arg2 : memref<4x8xf32>)
// CHECK-SAME: origin = "dot_general+gelu_grad"
// CHECK-SAME: trans_b = true
// CHECK-NOT: loomrt.kernel
// CHECK: "test.use"(%[[G]])
func.func @linear_gelu_grad(%dy: memref<4x5xf32>, %w: memref<8x5xf32>, %pre: memref<4x8xf32>) {
  %p = loomrt.alloc {category = "gradient"} : memref<4x8xf32>
  loomrt.gemm ins(%dy, %w : memref<4x5xf32>, memref<8x5xf32>) outs(%p : memref<4x8xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 5 : i64, m = 4 : i64, n = 8 : i64, origin = "dot_general", trans_a = false, trans_b = true}
  %g0 = loomrt.alloc {category = "gradient"} : memref<4x8xf32>
  loomrt.kernel ins(%pre, %p : memref<4x8xf32>, memref<4x8xf32>) outs(%g0 : memref<4x8xf32>) attributes {origin = "gelu_grad"} {
  ^bb0(%u: f32, %v: f32):
    %h = arith.constant 5.000000e-01 : f32
    %one = arith.constant 1.000000e+00 : f32
    %x2 = arith.mulf %u, %u : f32
    %k = arith.constant 0.797884583 : f32
    %x3 = arith.mulf %u, %x2 : f32
    %c = arith.constant 4.471500e-02 : f32
    %cx3 = arith.mulf %c, %x3 : f32
    %s = arith.addf %u, %cx3 : f32
    %ks = arith.mulf %k, %s : f32
    %t = math.tanh %ks : f32
    %c3 = arith.constant 1.341450e-01 : f32
    %c3x2 = arith.mulf %c3, %x2 : f32
    %di = arith.addf %one, %c3x2 : f32
    %kdi = arith.mulf %k, %di : f32
    %t2 = arith.mulf %t, %t : f32
    %omt2 = arith.subf %one, %t2 : f32
    %xo = arith.mulf %u, %omt2 : f32
    %r = arith.mulf %xo, %kdi : f32
    %opt = arith.addf %one, %t : f32
    %sum = arith.addf %opt, %r : f32
    %d = arith.mulf %h, %sum : f32
    %g = arith.mulf %v, %d : f32
    loomrt.yield %g : f32
  }
  "test.use"(%g0) : (memref<4x8xf32>) -> ()
  return
}

// -----

// The exact (erf) GELU's gradient stays a kernel: cuBLASLt offers only
// the tanh form.
// CHECK-LABEL: func.func @erf_gelu_grad
// CHECK-NOT: dgelu_input
// CHECK: origin = "gelu_grad"
func.func @erf_gelu_grad(%dy: memref<4x5xf32>, %w: memref<8x5xf32>, %pre: memref<4x8xf32>) {
  %p = loomrt.alloc {category = "gradient"} : memref<4x8xf32>
  loomrt.gemm ins(%dy, %w : memref<4x5xf32>, memref<8x5xf32>) outs(%p : memref<4x8xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 5 : i64, m = 4 : i64, n = 8 : i64, origin = "dot_general", trans_a = false, trans_b = true}
  %g0 = loomrt.alloc {category = "gradient"} : memref<4x8xf32>
  loomrt.kernel ins(%pre, %p : memref<4x8xf32>, memref<4x8xf32>) outs(%g0 : memref<4x8xf32>) attributes {origin = "gelu_grad"} {
  ^bb0(%u: f32, %v: f32):
    %h = arith.constant 5.000000e-01 : f32
    %one = arith.constant 1.000000e+00 : f32
    %r2 = arith.constant 0.707106769 : f32
    %s = arith.mulf %u, %r2 : f32
    %e = math.erf %s : f32
    %ope = arith.addf %one, %e : f32
    %cdf = arith.mulf %h, %ope : f32
    %d = arith.addf %cdf, %u : f32
    %g = arith.mulf %v, %d : f32
    loomrt.yield %g : f32
  }
  "test.use"(%g0) : (memref<4x8xf32>) -> ()
  return
}

// -----

// The product as GELU's input, not as the cotangent: no fusion.
// CHECK-LABEL: func.func @product_is_gelu_input
// CHECK-NOT: dgelu_input
// CHECK: origin = "gelu_grad"
func.func @product_is_gelu_input(%dy: memref<4x5xf32>, %w: memref<8x5xf32>, %pre: memref<4x8xf32>) {
  %p = loomrt.alloc {category = "gradient"} : memref<4x8xf32>
  loomrt.gemm ins(%dy, %w : memref<4x5xf32>, memref<8x5xf32>) outs(%p : memref<4x8xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 5 : i64, m = 4 : i64, n = 8 : i64, origin = "dot_general", trans_a = false, trans_b = true}
  %g0 = loomrt.alloc {category = "gradient"} : memref<4x8xf32>
  loomrt.kernel ins(%p, %pre : memref<4x8xf32>, memref<4x8xf32>) outs(%g0 : memref<4x8xf32>) attributes {origin = "gelu_grad"} {
  ^bb0(%u: f32, %v: f32):
    %h = arith.constant 5.000000e-01 : f32
    %one = arith.constant 1.000000e+00 : f32
    %x2 = arith.mulf %u, %u : f32
    %k = arith.constant 0.797884583 : f32
    %x3 = arith.mulf %u, %x2 : f32
    %c = arith.constant 4.471500e-02 : f32
    %cx3 = arith.mulf %c, %x3 : f32
    %s = arith.addf %u, %cx3 : f32
    %ks = arith.mulf %k, %s : f32
    %t = math.tanh %ks : f32
    %c3 = arith.constant 1.341450e-01 : f32
    %c3x2 = arith.mulf %c3, %x2 : f32
    %di = arith.addf %one, %c3x2 : f32
    %kdi = arith.mulf %k, %di : f32
    %t2 = arith.mulf %t, %t : f32
    %omt2 = arith.subf %one, %t2 : f32
    %xo = arith.mulf %u, %omt2 : f32
    %r = arith.mulf %xo, %kdi : f32
    %opt = arith.addf %one, %t : f32
    %sum = arith.addf %opt, %r : f32
    %d = arith.mulf %h, %sum : f32
    %g = arith.mulf %v, %d : f32
    loomrt.yield %g : f32
  }
  "test.use"(%g0) : (memref<4x8xf32>) -> ()
  return
}

// -----

// Another reader of the product, or a write of GELU's input between the
// gemm and the gradient (the fused gemm would read the new values): the
// kernels stay.
// CHECK-LABEL: func.func @read_again_or_written_between
// CHECK-NOT: dgelu_input
// CHECK: origin = "gelu_grad"
// CHECK-NOT: dgelu_input
// CHECK: origin = "gelu_grad"
func.func @read_again_or_written_between(%dy: memref<4x5xf32>, %w: memref<8x5xf32>, %pre: memref<4x8xf32>) {
  %p = loomrt.alloc {category = "gradient"} : memref<4x8xf32>
  loomrt.gemm ins(%dy, %w : memref<4x5xf32>, memref<8x5xf32>) outs(%p : memref<4x8xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 5 : i64, m = 4 : i64, n = 8 : i64, origin = "dot_general", trans_a = false, trans_b = true}
  %g0 = loomrt.alloc {category = "gradient"} : memref<4x8xf32>
  loomrt.kernel ins(%pre, %p : memref<4x8xf32>, memref<4x8xf32>) outs(%g0 : memref<4x8xf32>) attributes {origin = "gelu_grad"} {
  ^bb0(%u: f32, %v: f32):
    %h = arith.constant 5.000000e-01 : f32
    %one = arith.constant 1.000000e+00 : f32
    %x2 = arith.mulf %u, %u : f32
    %k = arith.constant 0.797884583 : f32
    %x3 = arith.mulf %u, %x2 : f32
    %c = arith.constant 4.471500e-02 : f32
    %cx3 = arith.mulf %c, %x3 : f32
    %s = arith.addf %u, %cx3 : f32
    %ks = arith.mulf %k, %s : f32
    %t = math.tanh %ks : f32
    %c3 = arith.constant 1.341450e-01 : f32
    %c3x2 = arith.mulf %c3, %x2 : f32
    %di = arith.addf %one, %c3x2 : f32
    %kdi = arith.mulf %k, %di : f32
    %t2 = arith.mulf %t, %t : f32
    %omt2 = arith.subf %one, %t2 : f32
    %xo = arith.mulf %u, %omt2 : f32
    %r = arith.mulf %xo, %kdi : f32
    %opt = arith.addf %one, %t : f32
    %sum = arith.addf %opt, %r : f32
    %d = arith.mulf %h, %sum : f32
    %g = arith.mulf %v, %d : f32
    loomrt.yield %g : f32
  }
  "test.use"(%g0, %p) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
  %q = loomrt.alloc {category = "gradient"} : memref<4x8xf32>
  loomrt.gemm ins(%dy, %w : memref<4x5xf32>, memref<8x5xf32>) outs(%q : memref<4x8xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 5 : i64, m = 4 : i64, n = 8 : i64, origin = "dot_general", trans_a = false, trans_b = true}
  loomrt.kernel ins(%g0 : memref<4x8xf32>) outs(%pre : memref<4x8xf32>) attributes {origin = "copy"} {
  ^bb0(%u: f32):
    loomrt.yield %u : f32
  }
  %g1 = loomrt.alloc {category = "gradient"} : memref<4x8xf32>
  loomrt.kernel ins(%pre, %q : memref<4x8xf32>, memref<4x8xf32>) outs(%g1 : memref<4x8xf32>) attributes {origin = "gelu_grad"} {
  ^bb0(%u: f32, %v: f32):
    %h = arith.constant 5.000000e-01 : f32
    %one = arith.constant 1.000000e+00 : f32
    %x2 = arith.mulf %u, %u : f32
    %k = arith.constant 0.797884583 : f32
    %x3 = arith.mulf %u, %x2 : f32
    %c = arith.constant 4.471500e-02 : f32
    %cx3 = arith.mulf %c, %x3 : f32
    %s = arith.addf %u, %cx3 : f32
    %ks = arith.mulf %k, %s : f32
    %t = math.tanh %ks : f32
    %c3 = arith.constant 1.341450e-01 : f32
    %c3x2 = arith.mulf %c3, %x2 : f32
    %di = arith.addf %one, %c3x2 : f32
    %kdi = arith.mulf %k, %di : f32
    %t2 = arith.mulf %t, %t : f32
    %omt2 = arith.subf %one, %t2 : f32
    %xo = arith.mulf %u, %omt2 : f32
    %r = arith.mulf %xo, %kdi : f32
    %opt = arith.addf %one, %t : f32
    %sum = arith.addf %opt, %r : f32
    %d = arith.mulf %h, %sum : f32
    %g = arith.mulf %v, %d : f32
    loomrt.yield %g : f32
  }
  "test.use"(%g1) : (memref<4x8xf32>) -> ()
  return
}

// -----

// bf16 (--precision bf16): the add widens both, sums in f32 and rounds
// once, as the runtimes' bf16 gemmBias does: the gemm takes the bias. Its
// tanh GELU stays a kernel (no runtime has a bf16 GELU epilogue).
// CHECK-LABEL: func.func @linear_bf16
// CHECK: %[[Y:.*]] = loomrt.alloc
// CHECK-NEXT: loomrt.gemm ins(%arg0, %arg1 : memref<4x3xbf16>, memref<3x5xbf16>) bias(%arg2 : memref<5xbf16>) outs(%[[Y]] : memref<4x5xbf16>)
// CHECK-NOT: gelu_input
// CHECK: loomrt.kernel ins(%[[Y]] : memref<4x5xbf16>)
// CHECK-SAME: origin = "gelu"
func.func @linear_bf16(%x: memref<4x3xbf16>, %w: memref<3x5xbf16>, %b: memref<5xbf16>) {
  %p = loomrt.alloc {category = "activation"} : memref<4x5xbf16>
  loomrt.gemm ins(%x, %w : memref<4x3xbf16>, memref<3x5xbf16>) outs(%p : memref<4x5xbf16>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 4 : i64, n = 5 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  %y = loomrt.alloc {category = "activation"} : memref<4x5xbf16>
  loomrt.kernel ins(%p, %b : memref<4x5xbf16>, memref<5xbf16>) outs(%y : memref<4x5xbf16>) attributes {in_strides = [array<i64: 5, 1>, array<i64: 0, 1>], origin = "add"} {
  ^bb0(%u: bf16, %v: bf16):
    %wu = arith.extf %u : bf16 to f32
    %wv = arith.extf %v : bf16 to f32
    %s = arith.addf %wu, %wv : f32
    %n = arith.truncf %s : f32 to bf16
    loomrt.yield %n : bf16
  }
  %g = loomrt.alloc {category = "activation"} : memref<4x5xbf16>
  loomrt.kernel ins(%y : memref<4x5xbf16>) outs(%g : memref<4x5xbf16>) attributes {in_strides = [array<i64: 5, 1>], origin = "gelu"} {
  ^bb0(%u: bf16):
    %wu = arith.extf %u : bf16 to f32
    %t = math.tanh %wu : f32
    %n = arith.truncf %t : f32 to bf16
    loomrt.yield %n : bf16
  }
  "test.use"(%g) : (memref<4x5xbf16>) -> ()
  return
}

// -----

// A bf16 product plus an f32 bias (mixed types) is not a bias epilogue.
// CHECK-LABEL: func.func @mixed_bias
// CHECK: loomrt.gemm ins(%arg0, %arg1 : memref<4x3xbf16>, memref<3x5xbf16>) outs(
// CHECK: loomrt.kernel
func.func @mixed_bias(%x: memref<4x3xbf16>, %w: memref<3x5xbf16>, %b: memref<5xf32>) {
  %p = loomrt.alloc {category = "activation"} : memref<4x5xbf16>
  loomrt.gemm ins(%x, %w : memref<4x3xbf16>, memref<3x5xbf16>) outs(%p : memref<4x5xbf16>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 4 : i64, n = 5 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  %y = loomrt.alloc {category = "activation"} : memref<4x5xbf16>
  loomrt.kernel ins(%p, %b : memref<4x5xbf16>, memref<5xf32>) outs(%y : memref<4x5xbf16>) attributes {in_strides = [array<i64: 5, 1>, array<i64: 0, 1>], origin = "add"} {
  ^bb0(%u: bf16, %v: f32):
    %wu = arith.extf %u : bf16 to f32
    %s = arith.addf %wu, %v : f32
    %n = arith.truncf %s : f32 to bf16
    loomrt.yield %n : bf16
  }
  "test.use"(%y) : (memref<4x5xbf16>) -> ()
  return
}

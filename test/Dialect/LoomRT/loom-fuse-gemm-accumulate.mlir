// RUN: loom-opt %s -allow-unregistered-dialect -loom-fuse-gemm-accumulate \
// RUN:   -split-input-file | FileCheck %s

// A gradient over two sub-batches: the later gemm adds its product onto
// the earlier one's buffer where the sum was; the add, the later product's
// buffer and the sum's are gone, and the sum's reader reads the first.
// CHECK-LABEL: func.func @two_products
// CHECK: %[[P0:.*]] = loomrt.alloc {category = "gradient"}
// CHECK-NEXT: loomrt.gemm ins(%arg0, %arg1 : {{.*}}) outs(%[[P0]] : memref<4x5xf32>) {
// CHECK-NOT: loomrt.alloc
// CHECK-NOT: loomrt.kernel
// CHECK: loomrt.gemm ins(%arg2, %arg3 : {{.*}}) outs(%[[P0]] : memref<4x5xf32>) accumulate {
// CHECK-SAME: origin = "dot_general+add"
// CHECK-NEXT: "test.use"(%[[P0]])
func.func @two_products(%x0: memref<4x3xf32>, %w0: memref<3x5xf32>, %x1: memref<4x3xf32>, %w1: memref<3x5xf32>, %x2: memref<4x3xf32>, %w2: memref<3x5xf32>) {
  %p0 = loomrt.alloc {category = "gradient"} : memref<4x5xf32>
  loomrt.gemm ins(%x0, %w0 : memref<4x3xf32>, memref<3x5xf32>) outs(%p0 : memref<4x5xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 4 : i64, n = 5 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  %p1 = loomrt.alloc {category = "gradient"} : memref<4x5xf32>
  loomrt.gemm ins(%x1, %w1 : memref<4x3xf32>, memref<3x5xf32>) outs(%p1 : memref<4x5xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 4 : i64, n = 5 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  %y = loomrt.alloc {category = "gradient"} : memref<4x5xf32>
  loomrt.kernel ins(%p0, %p1 : memref<4x5xf32>, memref<4x5xf32>) outs(%y : memref<4x5xf32>) attributes {origin = "add"} {
  ^bb0(%u: f32, %v: f32):
    %s = arith.addf %u, %v : f32
    loomrt.yield %s : f32
  }
  "test.use"(%y) : (memref<4x5xf32>) -> ()
  return
}

// -----

// A chain of sums collects in its first term's buffer: each later gemm
// accumulates onto it, in order.
// CHECK-LABEL: func.func @chain
// CHECK: %[[P0:.*]] = loomrt.alloc
// CHECK-NEXT: loomrt.gemm ins(%arg0, %arg1 : {{.*}}) outs(%[[P0]] : memref<4x5xf32>) {
// CHECK-NEXT: loomrt.gemm ins(%arg2, %arg3 : {{.*}}) outs(%[[P0]] : memref<4x5xf32>) accumulate
// CHECK-NEXT: loomrt.gemm ins(%arg4, %arg5 : {{.*}}) outs(%[[P0]] : memref<4x5xf32>) accumulate
// CHECK-NEXT: "test.use"(%[[P0]])
// CHECK-NOT: loomrt.kernel
func.func @chain(%x0: memref<4x3xf32>, %w0: memref<3x5xf32>, %x1: memref<4x3xf32>, %w1: memref<3x5xf32>, %x2: memref<4x3xf32>, %w2: memref<3x5xf32>) {
  %p0 = loomrt.alloc {category = "gradient"} : memref<4x5xf32>
  loomrt.gemm ins(%x0, %w0 : memref<4x3xf32>, memref<3x5xf32>) outs(%p0 : memref<4x5xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 4 : i64, n = 5 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  %p1 = loomrt.alloc {category = "gradient"} : memref<4x5xf32>
  loomrt.gemm ins(%x1, %w1 : memref<4x3xf32>, memref<3x5xf32>) outs(%p1 : memref<4x5xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 4 : i64, n = 5 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  %y1 = loomrt.alloc {category = "gradient"} : memref<4x5xf32>
  loomrt.kernel ins(%p0, %p1 : memref<4x5xf32>, memref<4x5xf32>) outs(%y1 : memref<4x5xf32>) attributes {origin = "add"} {
  ^bb0(%u: f32, %v: f32):
    %s = arith.addf %u, %v : f32
    loomrt.yield %s : f32
  }
  %p2 = loomrt.alloc {category = "gradient"} : memref<4x5xf32>
  loomrt.gemm ins(%x2, %w2 : memref<4x3xf32>, memref<3x5xf32>) outs(%p2 : memref<4x5xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 4 : i64, n = 5 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  %y2 = loomrt.alloc {category = "gradient"} : memref<4x5xf32>
  loomrt.kernel ins(%p2, %y1 : memref<4x5xf32>, memref<4x5xf32>) outs(%y2 : memref<4x5xf32>) attributes {origin = "add"} {
  ^bb0(%u: f32, %v: f32):
    %s = arith.addf %u, %v : f32
    loomrt.yield %s : f32
  }
  "test.use"(%y2) : (memref<4x5xf32>) -> ()
  return
}

// -----

// The term is a buffer some other op wrote (not a product), and an
// unrelated kernel between the gemm and the sum does not stop it.
// CHECK-LABEL: func.func @term_and_kernel_between
// CHECK: %[[T:.*]] = loomrt.alloc
// CHECK: "test.write"(%[[T]])
// CHECK: loomrt.kernel ins(%{{.*}}) outs(%{{.*}})
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK: loomrt.gemm ins(%arg0, %arg1 : {{.*}}) outs(%[[T]] : memref<4x5xf32>) accumulate
// CHECK-NEXT: "test.use"(%[[T]])
func.func @term_and_kernel_between(%x0: memref<4x3xf32>, %w0: memref<3x5xf32>, %x1: memref<4x3xf32>, %w1: memref<3x5xf32>, %x2: memref<4x3xf32>, %w2: memref<3x5xf32>) {
  %t = loomrt.alloc {category = "gradient"} : memref<4x5xf32>
  "test.write"(%t) {loom.writes} : (memref<4x5xf32>) -> ()
  %p0 = loomrt.alloc {category = "gradient"} : memref<4x5xf32>
  loomrt.gemm ins(%x0, %w0 : memref<4x3xf32>, memref<3x5xf32>) outs(%p0 : memref<4x5xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 4 : i64, n = 5 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  %q = loomrt.alloc {category = "gradient"} : memref<4x5xf32>
  loomrt.kernel ins(%w1 : memref<3x5xf32>) outs(%q : memref<4x5xf32>) attributes {in_strides = [array<i64: 0, 1>], origin = "mul"} {
  ^bb0(%u: f32):
    %m = arith.mulf %u, %u : f32
    loomrt.yield %m : f32
  }
  %y = loomrt.alloc {category = "gradient"} : memref<4x5xf32>
  loomrt.kernel ins(%t, %p0 : memref<4x5xf32>, memref<4x5xf32>) outs(%y : memref<4x5xf32>) attributes {origin = "add"} {
  ^bb0(%u: f32, %v: f32):
    %s = arith.addf %u, %v : f32
    loomrt.yield %s : f32
  }
  "test.use"(%y) : (memref<4x5xf32>) -> ()
  "test.use"(%q) : (memref<4x5xf32>) -> ()
  return
}

// -----

// The term is read after the sum: it keeps its value and the add stays.
// CHECK-LABEL: func.func @term_read_later
// CHECK-NOT: accumulate
// CHECK: loomrt.kernel
func.func @term_read_later(%x0: memref<4x3xf32>, %w0: memref<3x5xf32>, %x1: memref<4x3xf32>, %w1: memref<3x5xf32>, %x2: memref<4x3xf32>, %w2: memref<3x5xf32>) {
  %p0 = loomrt.alloc {category = "gradient"} : memref<4x5xf32>
  loomrt.gemm ins(%x0, %w0 : memref<4x3xf32>, memref<3x5xf32>) outs(%p0 : memref<4x5xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 4 : i64, n = 5 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  %p1 = loomrt.alloc {category = "gradient"} : memref<4x5xf32>
  loomrt.gemm ins(%x1, %w1 : memref<4x3xf32>, memref<3x5xf32>) outs(%p1 : memref<4x5xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 4 : i64, n = 5 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  %y = loomrt.alloc {category = "gradient"} : memref<4x5xf32>
  loomrt.kernel ins(%p0, %p1 : memref<4x5xf32>, memref<4x5xf32>) outs(%y : memref<4x5xf32>) attributes {origin = "add"} {
  ^bb0(%u: f32, %v: f32):
    %s = arith.addf %u, %v : f32
    loomrt.yield %s : f32
  }
  "test.use"(%y) : (memref<4x5xf32>) -> ()
  "test.use"(%p0) : (memref<4x5xf32>) -> ()
  return
}

// -----

// The term holds an activation and the sum a gradient: the memory report
// would misfile the buffer, so the add stays.
// CHECK-LABEL: func.func @category_differs
// CHECK-NOT: accumulate
// CHECK: loomrt.kernel
func.func @category_differs(%x0: memref<4x3xf32>, %w0: memref<3x5xf32>) {
  %t = loomrt.alloc {category = "activation"} : memref<4x5xf32>
  "test.write"(%t) : (memref<4x5xf32>) -> ()
  %p0 = loomrt.alloc {category = "gradient"} : memref<4x5xf32>
  loomrt.gemm ins(%x0, %w0 : memref<4x3xf32>, memref<3x5xf32>) outs(%p0 : memref<4x5xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 4 : i64, n = 5 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  %y = loomrt.alloc {category = "gradient"} : memref<4x5xf32>
  loomrt.kernel ins(%t, %p0 : memref<4x5xf32>, memref<4x5xf32>) outs(%y : memref<4x5xf32>) attributes {origin = "add"} {
  ^bb0(%u: f32, %v: f32):
    %s = arith.addf %u, %v : f32
    loomrt.yield %s : f32
  }
  "test.use"(%y) : (memref<4x5xf32>) -> ()
  return
}

// -----

// An operand of the gemm is written between the gemm and the sum, where
// the fused gemm would run: the add stays.
// CHECK-LABEL: func.func @operand_written_between
// CHECK-NOT: accumulate
// CHECK: loomrt.kernel
func.func @operand_written_between(%x0: memref<4x3xf32>, %w0: memref<3x5xf32>, %x1: memref<4x3xf32>, %w1: memref<3x5xf32>, %x2: memref<4x3xf32>, %w2: memref<3x5xf32>) {
  %p0 = loomrt.alloc {category = "gradient"} : memref<4x5xf32>
  loomrt.gemm ins(%x0, %w0 : memref<4x3xf32>, memref<3x5xf32>) outs(%p0 : memref<4x5xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 4 : i64, n = 5 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  %p1 = loomrt.alloc {category = "gradient"} : memref<4x5xf32>
  loomrt.gemm ins(%x1, %w1 : memref<4x3xf32>, memref<3x5xf32>) outs(%p1 : memref<4x5xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 4 : i64, n = 5 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  "test.write"(%w1) : (memref<3x5xf32>) -> ()
  %y = loomrt.alloc {category = "gradient"} : memref<4x5xf32>
  loomrt.kernel ins(%p0, %p1 : memref<4x5xf32>, memref<4x5xf32>) outs(%y : memref<4x5xf32>) attributes {origin = "add"} {
  ^bb0(%u: f32, %v: f32):
    %s = arith.addf %u, %v : f32
    loomrt.yield %s : f32
  }
  "test.use"(%y) : (memref<4x5xf32>) -> ()
  return
}

// -----

// The sum reads its terms through strides (a broadcast): the add stays.
// CHECK-LABEL: func.func @strided_read
// CHECK-NOT: accumulate
// CHECK: loomrt.kernel
func.func @strided_read(%x0: memref<4x3xf32>, %w0: memref<3x5xf32>, %x1: memref<4x3xf32>, %w1: memref<3x5xf32>, %x2: memref<4x3xf32>, %w2: memref<3x5xf32>) {
  %p0 = loomrt.alloc {category = "gradient"} : memref<4x5xf32>
  loomrt.gemm ins(%x0, %w0 : memref<4x3xf32>, memref<3x5xf32>) outs(%p0 : memref<4x5xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 4 : i64, n = 5 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  %p1 = loomrt.alloc {category = "gradient"} : memref<4x5xf32>
  loomrt.gemm ins(%x1, %w1 : memref<4x3xf32>, memref<3x5xf32>) outs(%p1 : memref<4x5xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 4 : i64, n = 5 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  %y = loomrt.alloc {category = "gradient"} : memref<4x5xf32>
  loomrt.kernel ins(%p0, %p1 : memref<4x5xf32>, memref<4x5xf32>) outs(%y : memref<4x5xf32>) attributes {in_strides = [array<i64: 0, 1>, array<i64: 5, 1>], origin = "add"} {
  ^bb0(%u: f32, %v: f32):
    %s = arith.addf %u, %v : f32
    loomrt.yield %s : f32
  }
  "test.use"(%y) : (memref<4x5xf32>) -> ()
  return
}

// -----

// A product with a view of the term: the add stays (the view could be
// read later under another name).
// CHECK-LABEL: func.func @term_viewed
// CHECK-NOT: accumulate
// CHECK: loomrt.kernel
func.func @term_viewed(%x0: memref<4x3xf32>, %w0: memref<3x5xf32>, %x1: memref<4x3xf32>, %w1: memref<3x5xf32>, %x2: memref<4x3xf32>, %w2: memref<3x5xf32>) {
  %p0 = loomrt.alloc {category = "gradient"} : memref<4x5xf32>
  loomrt.gemm ins(%x0, %w0 : memref<4x3xf32>, memref<3x5xf32>) outs(%p0 : memref<4x5xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 4 : i64, n = 5 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  %pv = loomrt.view %p0 : memref<4x5xf32> to memref<20xf32>
  %p1 = loomrt.alloc {category = "gradient"} : memref<4x5xf32>
  loomrt.gemm ins(%x1, %w1 : memref<4x3xf32>, memref<3x5xf32>) outs(%p1 : memref<4x5xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 4 : i64, n = 5 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  %y = loomrt.alloc {category = "gradient"} : memref<4x5xf32>
  loomrt.kernel ins(%p0, %p1 : memref<4x5xf32>, memref<4x5xf32>) outs(%y : memref<4x5xf32>) attributes {origin = "add"} {
  ^bb0(%u: f32, %v: f32):
    %s = arith.addf %u, %v : f32
    loomrt.yield %s : f32
  }
  "test.use"(%y) : (memref<4x5xf32>) -> ()
  "test.use"(%pv) : (memref<20xf32>) -> ()
  return
}

// -----

// A send still reads the term when the sum runs: the gemm must not write
// it there, so the add stays.
// CHECK-LABEL: func.func @term_in_flight
// CHECK-NOT: accumulate
// CHECK: loomrt.kernel
shard.grid @mesh(shape = 2x1x1)
func.func @term_in_flight(%x0: memref<4x3xf32>, %w0: memref<3x5xf32>) {
  %t = loomrt.alloc {category = "gradient"} : memref<4x5xf32>
  "test.write"(%t) : (memref<4x5xf32>) -> ()
  %h = loomrt.send_start %t on @mesh grid_axes = [0] {peer = 1 : i64, tag = 1 : i64} : memref<4x5xf32>
  %p0 = loomrt.alloc {category = "gradient"} : memref<4x5xf32>
  loomrt.gemm ins(%x0, %w0 : memref<4x3xf32>, memref<3x5xf32>) outs(%p0 : memref<4x5xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 4 : i64, n = 5 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  %y = loomrt.alloc {category = "gradient"} : memref<4x5xf32>
  loomrt.kernel ins(%t, %p0 : memref<4x5xf32>, memref<4x5xf32>) outs(%y : memref<4x5xf32>) attributes {origin = "add"} {
  ^bb0(%u: f32, %v: f32):
    %s = arith.addf %u, %v : f32
    loomrt.yield %s : f32
  }
  loomrt.wait %h
  "test.use"(%y) : (memref<4x5xf32>) -> ()
  return
}

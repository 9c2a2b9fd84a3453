// RUN: loom-opt %s -allow-unregistered-dialect -loom-merge-kernels \
// RUN:   -split-input-file | FileCheck %s

// AdamW's shape: two moment updates, then the parameter's update reading
// both. The step keeps the moments (they are arguments), so the merged
// kernel writes all three; it reads each input once, and computes the
// producers' values before the consumer reads them.
// CHECK-LABEL: func.func @moments_into_update
// CHECK: loomrt.kernel ins(%arg0, %arg1, %arg3, %arg2 : {{.*}}) outs(%arg6, %arg4, %arg5 : {{.*}}) attributes {origin = "mul+add+sub"} {
// CHECK-NEXT: ^bb0(%[[P:.*]]: f32, %[[G:.*]]: f32, %[[M:.*]]: f32, %[[V:.*]]: f32):
// CHECK-NEXT: %[[V2:.*]] = arith.mulf %[[G]], %[[V]]
// CHECK-NEXT: %[[M2:.*]] = arith.addf %[[G]], %[[M]]
// CHECK-NEXT: %[[D:.*]] = arith.mulf %[[M2]], %[[V2]]
// CHECK-NEXT: %[[P2:.*]] = arith.subf %[[P]], %[[D]]
// CHECK-NEXT: loomrt.yield %[[P2]], %[[M2]], %[[V2]]
// CHECK-NOT: loomrt.kernel
func.func @moments_into_update(%p: memref<8xf32>, %g: memref<8xf32>, %v: memref<8xf32>, %m: memref<8xf32>,
                               %m2: memref<8xf32>, %v2: memref<8xf32>, %p2: memref<8xf32>) {
  loomrt.kernel ins(%g, %m : memref<8xf32>, memref<8xf32>) outs(%m2 : memref<8xf32>) attributes {origin = "add"} {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    loomrt.yield %s : f32
  }
  loomrt.kernel ins(%g, %v : memref<8xf32>, memref<8xf32>) outs(%v2 : memref<8xf32>) attributes {origin = "mul"} {
  ^bb0(%a: f32, %b: f32):
    %s = arith.mulf %a, %b : f32
    loomrt.yield %s : f32
  }
  loomrt.kernel ins(%p, %m2, %v2 : memref<8xf32>, memref<8xf32>, memref<8xf32>) outs(%p2 : memref<8xf32>) attributes {origin = "sub"} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %d = arith.mulf %b, %c : f32
    %s = arith.subf %a, %d : f32
    loomrt.yield %s : f32
  }
  return
}

// -----

// An intermediate buffer only the consumer reads: the merged kernel does
// not write it, and its buffer goes. A broadcast input keeps its strides.
// CHECK-LABEL: func.func @single_reader
// CHECK-NOT: loomrt.alloc
// CHECK: loomrt.kernel ins(%arg2, %arg0, %arg1 : memref<4x8xf32>, memref<4x8xf32>, memref<8xf32>) outs(%arg3 : memref<4x8xf32>)
// CHECK-SAME: in_strides = [array<i64: 8, 1>, array<i64: 8, 1>, array<i64: 0, 1>]
// CHECK-SAME: origin = "mul+add"
// CHECK-NOT: loomrt.kernel
func.func @single_reader(%x: memref<4x8xf32>, %w: memref<8xf32>, %r: memref<4x8xf32>, %y: memref<4x8xf32>) {
  %t = loomrt.alloc {category = "gradient"} : memref<4x8xf32>
  loomrt.kernel ins(%x, %w : memref<4x8xf32>, memref<8xf32>) outs(%t : memref<4x8xf32>) attributes {in_strides = [array<i64: 8, 1>, array<i64: 0, 1>], origin = "mul"} {
  ^bb0(%a: f32, %b: f32):
    %s = arith.mulf %a, %b : f32
    loomrt.yield %s : f32
  }
  loomrt.kernel ins(%r, %t : memref<4x8xf32>, memref<4x8xf32>) outs(%y : memref<4x8xf32>) attributes {origin = "add"} {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    loomrt.yield %s : f32
  }
  return
}

// -----

// A buffer allocated between them: the producer's inputs would stay live
// across it, and the consumer reads that buffer, so it cannot run first
// either: they stay apart.
// CHECK-LABEL: func.func @alloc_between
// CHECK-COUNT-2: loomrt.kernel ins
func.func @alloc_between(%x: memref<8xf32>, %y: memref<8xf32>) {
  %t = loomrt.alloc {category = "gradient"} : memref<8xf32>
  loomrt.kernel ins(%x : memref<8xf32>) outs(%t : memref<8xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %s = arith.negf %a : f32
    loomrt.yield %s : f32
  }
  %u = loomrt.alloc {category = "gradient"} : memref<8xf32>
  "test.write"(%u) : (memref<8xf32>) -> ()
  loomrt.kernel ins(%t, %u : memref<8xf32>, memref<8xf32>) outs(%y : memref<8xf32>) attributes {origin = "add"} {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    loomrt.yield %s : f32
  }
  return
}

// -----

// The producer's input is written between them: it must run first.
// CHECK-LABEL: func.func @input_written_between
// CHECK-COUNT-2: loomrt.kernel ins
func.func @input_written_between(%x: memref<8xf32>, %t: memref<8xf32>, %y: memref<8xf32>) {
  loomrt.kernel ins(%x : memref<8xf32>) outs(%t : memref<8xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %s = arith.negf %a : f32
    loomrt.yield %s : f32
  }
  "test.write"(%x) : (memref<8xf32>) -> ()
  loomrt.kernel ins(%t : memref<8xf32>) outs(%y : memref<8xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %s = arith.negf %a : f32
    loomrt.yield %s : f32
  }
  return
}

// -----

// The consumer reads the output through a broadcast (another element than
// the one it writes): they stay apart.
// CHECK-LABEL: func.func @output_read_strided
// CHECK-COUNT-2: loomrt.kernel ins
func.func @output_read_strided(%x: memref<4x8xf32>, %t: memref<4x8xf32>, %y: memref<4x8xf32>) {
  loomrt.kernel ins(%x : memref<4x8xf32>) outs(%t : memref<4x8xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %s = arith.negf %a : f32
    loomrt.yield %s : f32
  }
  loomrt.kernel ins(%t : memref<4x8xf32>) outs(%y : memref<4x8xf32>) attributes {in_strides = [array<i64: 0, 1>], origin = "neg"} {
  ^bb0(%a: f32):
    %s = arith.negf %a : f32
    loomrt.yield %s : f32
  }
  return
}

// -----

// The next op reading the output is a reduction, not a kernel.
// CHECK-LABEL: func.func @reduce_reads_first
// CHECK-COUNT-2: loomrt.kernel ins
func.func @reduce_reads_first(%x: memref<8xf32>, %t: memref<8xf32>, %y: memref<8xf32>, %z: memref<f32>) {
  loomrt.kernel ins(%x : memref<8xf32>) outs(%t : memref<8xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %s = arith.negf %a : f32
    loomrt.yield %s : f32
  }
  loomrt.reduce sum [0] ins(%t : memref<8xf32>) outs(%z : memref<f32>) attributes {origin = "reduce_sum"}
  loomrt.kernel ins(%t : memref<8xf32>) outs(%y : memref<8xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %s = arith.negf %a : f32
    loomrt.yield %s : f32
  }
  return
}

// -----

// The consumer overwrites a buffer the producer reads through a broadcast
// (the element read is not the one written): they stay apart.
// CHECK-LABEL: func.func @overwritten_input_read_strided
// CHECK-COUNT-2: loomrt.kernel ins
func.func @overwritten_input_read_strided(%x: memref<4x8xf32>, %t: memref<4x8xf32>) {
  loomrt.kernel ins(%x : memref<4x8xf32>) outs(%t : memref<4x8xf32>) attributes {in_strides = [array<i64: 0, 1>], origin = "neg"} {
  ^bb0(%a: f32):
    %s = arith.negf %a : f32
    loomrt.yield %s : f32
  }
  loomrt.kernel ins(%t : memref<4x8xf32>) outs(%x : memref<4x8xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %s = arith.negf %a : f32
    loomrt.yield %s : f32
  }
  return
}

// -----

// A buffer allocated between them that the consumer does not read, and a
// producer input that dies at the producer: the consumer runs where the
// producer was, its output allocated first (it takes the place of the
// producer's output, which goes).
// CHECK-LABEL: func.func @consumer_moves_up
// CHECK: %[[W:.*]] = loomrt.alloc {category = "gradient"} : memref<8xf32>
// CHECK-NEXT: loomrt.copy ins(%arg0 : memref<8xf32>) outs(%[[W]] : memref<8xf32>)
// CHECK: %[[Y:.*]] = loomrt.alloc {category = "gradient"} : memref<8xf32>
// CHECK-NEXT: loomrt.kernel ins(%arg1, %[[W]] : memref<8xf32>, memref<8xf32>) outs(%[[Y]] : memref<8xf32>) attributes {origin = "neg+add"}
// CHECK: %[[Z:.*]] = loomrt.alloc {category = "gradient"} : memref<2xf32>
// CHECK-NEXT: loomrt.kernel ins(%arg1 : memref<8xf32>) outs(%[[Z]] : memref<2xf32>)
// CHECK: "test.use"(%[[Y]])
func.func @consumer_moves_up(%v: memref<8xf32>, %r: memref<8xf32>) {
  %x = loomrt.alloc {category = "gradient"} : memref<8xf32>
  loomrt.copy ins(%v : memref<8xf32>) outs(%x : memref<8xf32>) {origin = "copy", shape = array<i64: 8>, source_offset = 0 : i64, source_strides = array<i64: 1>, target_offset = 0 : i64, target_strides = array<i64: 1>}
  %t = loomrt.alloc {category = "gradient"} : memref<8xf32>
  loomrt.kernel ins(%x : memref<8xf32>) outs(%t : memref<8xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %s = arith.negf %a : f32
    loomrt.yield %s : f32
  }
  %z = loomrt.alloc {category = "gradient"} : memref<2xf32>
  loomrt.kernel ins(%r : memref<8xf32>) outs(%z : memref<2xf32>) attributes {in_strides = [array<i64: 1>], origin = "neg"} {
  ^bb0(%a: f32):
    %s = arith.negf %a : f32
    loomrt.yield %s : f32
  }
  %y = loomrt.alloc {category = "gradient"} : memref<8xf32>
  loomrt.kernel ins(%r, %t : memref<8xf32>, memref<8xf32>) outs(%y : memref<8xf32>) attributes {origin = "add"} {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    loomrt.yield %s : f32
  }
  "test.use"(%y) : (memref<8xf32>) -> ()
  return
}

// -----

// The same, but the consumer's output (f32) holds more bytes than the
// producer's (bf16) it would replace: moved up it could raise the peak.
// CHECK-LABEL: func.func @consumer_output_larger
// CHECK-COUNT-2: loomrt.kernel ins
func.func @consumer_output_larger(%x: memref<8xbf16>, %r: memref<8xf32>) {
  %t = loomrt.alloc {category = "gradient"} : memref<8xbf16>
  loomrt.kernel ins(%x : memref<8xbf16>) outs(%t : memref<8xbf16>) attributes {origin = "neg"} {
  ^bb0(%a: bf16):
    %s = arith.negf %a : bf16
    loomrt.yield %s : bf16
  }
  %z = loomrt.alloc {category = "gradient"} : memref<2xf32>
  loomrt.kernel ins(%r : memref<8xf32>) outs(%z : memref<2xf32>) attributes {in_strides = [array<i64: 1>], origin = "neg"} {
  ^bb0(%a: f32):
    %s = arith.negf %a : f32
    loomrt.yield %s : f32
  }
  %y = loomrt.alloc {category = "gradient"} : memref<8xf32>
  loomrt.kernel ins(%r, %t : memref<8xf32>, memref<8xbf16>) outs(%y : memref<8xf32>) attributes {origin = "add"} {
  ^bb0(%a: f32, %b: bf16):
    %e = arith.extf %b : bf16 to f32
    %s = arith.addf %a, %e : f32
    loomrt.yield %s : f32
  }
  "test.use"(%y) : (memref<8xf32>) -> ()
  return
}

// -----

// SwiGLU's forward: the SiLU of the gate's product is kept (the backward
// pass reads it), the up projection's gemm allocates its product between
// the SiLU and the product with it. The gate's product is read after the
// consumer anyway, so the SiLU moves down into the consumer's loop past
// the allocation and writes the kept value there.
// CHECK-LABEL: func.func @inputs_live_past_the_consumer
// CHECK: loomrt.gemm
// CHECK: loomrt.kernel ins(%{{.*}}, %[[G:.*]] : memref<8xf32>, memref<8xf32>) outs(%{{.*}}, %[[S:.*]] : memref<8xf32>, memref<8xf32>) attributes {origin = "silu+mul"}
// CHECK: "test.use"(%[[S]], %[[G]], %{{.*}})
func.func @inputs_live_past_the_consumer(%w: memref<1x8xf32>, %x: memref<1x1xf32>) {
  %g = loomrt.alloc {category = "activation"} : memref<8xf32>
  %s = loomrt.alloc {category = "activation"} : memref<8xf32>
  loomrt.kernel ins(%g : memref<8xf32>) outs(%s : memref<8xf32>) attributes {origin = "silu"} {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    loomrt.yield %n : f32
  }
  %u = loomrt.alloc {category = "activation"} : memref<1x8xf32>
  loomrt.gemm ins(%x, %w : memref<1x1xf32>, memref<1x8xf32>) outs(%u : memref<1x8xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 1 : i64, m = 1 : i64, n = 8 : i64, origin = "dot_general", trans_a = false, trans_b = false}
  %uv = loomrt.view %u : memref<1x8xf32> to memref<8xf32>
  %y = loomrt.alloc {category = "activation"} : memref<8xf32>
  loomrt.kernel ins(%s, %uv : memref<8xf32>, memref<8xf32>) outs(%y : memref<8xf32>) attributes {origin = "mul"} {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    loomrt.yield %m : f32
  }
  "test.use"(%s, %g, %y) : (memref<8xf32>, memref<8xf32>, memref<8xf32>) -> ()
  return
}

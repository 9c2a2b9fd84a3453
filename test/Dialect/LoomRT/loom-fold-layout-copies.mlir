// RUN: loom-opt %s -loom-fold-layout-copies -split-input-file | FileCheck %s

// Rotary embeddings on heads a transpose produced ([batch, seq, heads,
// dim] to [batch, heads, seq, dim]): the transpose and both slices fold.
// The negation reads the second half of each head's vector in place, the
// concatenation copies the first half from the product, and the last
// kernel reads the product through the transpose's strides.
// CHECK-LABEL: func.func @rotary
// CHECK-SAME: (%[[G:.*]]: memref<2x4x2x4xf32>, %[[Y:.*]]: memref<2x2x4x4xf32>)
// CHECK-NOT: origin = "transpose"
// CHECK-NOT: origin = "slice"
// CHECK: %[[N:.*]] = loomrt.alloc {category = "activation"} : memref<2x2x4x2xf32>
// CHECK-NEXT: loomrt.kernel ins(%[[G]] : memref<2x4x2x4xf32>) outs(%[[N]] : memref<2x2x4x2xf32>) attributes {in_offsets = array<i64: 2>, in_strides = [array<i64: 32, 4, 8, 1>], origin = "neg"}
// CHECK: %[[C:.*]] = loomrt.alloc {category = "activation"} : memref<2x2x4x4xf32>
// CHECK-NEXT: loomrt.copy ins(%[[N]] : {{.*}}) outs(%[[C]] : {{.*}}) {origin = "concat", {{.*}}target_offset = 0
// CHECK-NEXT: loomrt.copy ins(%[[G]] : memref<2x4x2x4xf32>) outs(%[[C]] : memref<2x2x4x4xf32>) {origin = "concat", shape = array<i64: 2, 2, 4, 2>, source_offset = 0 : i64, source_strides = array<i64: 32, 4, 8, 1>, target_offset = 2
// CHECK-NEXT: loomrt.kernel ins(%[[G]], %[[C]] : memref<2x4x2x4xf32>, memref<2x2x4x4xf32>) outs(%[[Y]] : memref<2x2x4x4xf32>) attributes {in_strides = [array<i64: 32, 4, 8, 1>, array<i64: 32, 16, 4, 1>], origin = "add"}
func.func @rotary(%g: memref<2x4x2x4xf32>, %y: memref<2x2x4x4xf32>) {
  %t = loomrt.alloc {category = "activation"} : memref<2x2x4x4xf32>
  loomrt.copy ins(%g : memref<2x4x2x4xf32>) outs(%t : memref<2x2x4x4xf32>) {origin = "transpose", shape = array<i64: 2, 2, 4, 4>, source_offset = 0 : i64, source_strides = array<i64: 32, 4, 8, 1>, target_offset = 0 : i64, target_strides = array<i64: 32, 16, 4, 1>}
  %s1 = loomrt.alloc {category = "activation"} : memref<2x2x4x2xf32>
  loomrt.copy ins(%t : memref<2x2x4x4xf32>) outs(%s1 : memref<2x2x4x2xf32>) {origin = "slice", shape = array<i64: 2, 2, 4, 2>, source_offset = 2 : i64, source_strides = array<i64: 32, 16, 4, 1>, target_offset = 0 : i64, target_strides = array<i64: 16, 8, 2, 1>}
  %n = loomrt.alloc {category = "activation"} : memref<2x2x4x2xf32>
  loomrt.kernel ins(%s1 : memref<2x2x4x2xf32>) outs(%n : memref<2x2x4x2xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %v = arith.negf %a : f32
    loomrt.yield %v : f32
  }
  %s0 = loomrt.alloc {category = "activation"} : memref<2x2x4x2xf32>
  loomrt.copy ins(%t : memref<2x2x4x4xf32>) outs(%s0 : memref<2x2x4x2xf32>) {origin = "slice", shape = array<i64: 2, 2, 4, 2>, source_offset = 0 : i64, source_strides = array<i64: 32, 16, 4, 1>, target_offset = 0 : i64, target_strides = array<i64: 16, 8, 2, 1>}
  %c = loomrt.alloc {category = "activation"} : memref<2x2x4x4xf32>
  loomrt.copy ins(%n : memref<2x2x4x2xf32>) outs(%c : memref<2x2x4x4xf32>) {origin = "concat", shape = array<i64: 2, 2, 4, 2>, source_offset = 0 : i64, source_strides = array<i64: 16, 8, 2, 1>, target_offset = 0 : i64, target_strides = array<i64: 32, 16, 4, 1>}
  loomrt.copy ins(%s0 : memref<2x2x4x2xf32>) outs(%c : memref<2x2x4x4xf32>) {origin = "concat", shape = array<i64: 2, 2, 4, 2>, source_offset = 0 : i64, source_strides = array<i64: 16, 8, 2, 1>, target_offset = 2 : i64, target_strides = array<i64: 32, 16, 4, 1>}
  loomrt.kernel ins(%t, %c : memref<2x2x4x4xf32>, memref<2x2x4x4xf32>) outs(%y : memref<2x2x4x4xf32>) attributes {origin = "add"} {
  ^bb0(%a: f32, %b: f32):
    %v = arith.addf %a, %b : f32
    loomrt.yield %v : f32
  }
  return
}

// -----

// A reader whose index would carry from one of the copy's dimensions into
// the next (a view of another shape read in its own order) keeps the copy.
// CHECK-LABEL: func.func @carry
// CHECK: loomrt.copy
// CHECK: loomrt.kernel ins(%{{.*}} : memref<6x4xf32>)
func.func @carry(%q: memref<2x4x3xf32>, %y: memref<6x4xf32>) {
  %t = loomrt.alloc {category = "activation"} : memref<2x3x4xf32>
  loomrt.copy ins(%q : memref<2x4x3xf32>) outs(%t : memref<2x3x4xf32>) {origin = "transpose", shape = array<i64: 2, 3, 4>, source_offset = 0 : i64, source_strides = array<i64: 12, 1, 3>, target_offset = 0 : i64, target_strides = array<i64: 12, 4, 1>}
  %v = loomrt.view %t : memref<2x3x4xf32> to memref<6x4xf32>
  loomrt.kernel ins(%v : memref<6x4xf32>) outs(%y : memref<6x4xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    loomrt.yield %n : f32
  }
  return
}

// -----

// The transpose read by one kernel in the copy's order folds, though the
// kernel's reads of the source are then not contiguous.
// CHECK-LABEL: func.func @one_gather_reader
// CHECK-NOT: loomrt.copy
// CHECK-NOT: loomrt.alloc
// CHECK: loomrt.kernel ins(%arg0 : memref<2x4x3xf32>) outs(%arg1 : memref<2x3x4xf32>) attributes {in_strides = [array<i64: 12, 1, 3>], origin = "neg"}
func.func @one_gather_reader(%q: memref<2x4x3xf32>, %y: memref<2x3x4xf32>) {
  %t = loomrt.alloc {category = "activation"} : memref<2x3x4xf32>
  loomrt.copy ins(%q : memref<2x4x3xf32>) outs(%t : memref<2x3x4xf32>) {origin = "transpose", shape = array<i64: 2, 3, 4>, source_offset = 0 : i64, source_strides = array<i64: 12, 1, 3>, target_offset = 0 : i64, target_strides = array<i64: 12, 4, 1>}
  loomrt.kernel ins(%t : memref<2x3x4xf32>) outs(%y : memref<2x3x4xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    loomrt.yield %n : f32
  }
  return
}

// -----

// Two readers of that transpose would both gather: the copy stays.
// CHECK-LABEL: func.func @two_gather_readers
// CHECK: loomrt.copy
// CHECK-COUNT-2: loomrt.kernel ins(%{{.*}} : memref<2x3x4xf32>)
func.func @two_gather_readers(%q: memref<2x4x3xf32>, %y: memref<2x3x4xf32>, %z: memref<2x3x4xf32>) {
  %t = loomrt.alloc {category = "activation"} : memref<2x3x4xf32>
  loomrt.copy ins(%q : memref<2x4x3xf32>) outs(%t : memref<2x3x4xf32>) {origin = "transpose", shape = array<i64: 2, 3, 4>, source_offset = 0 : i64, source_strides = array<i64: 12, 1, 3>, target_offset = 0 : i64, target_strides = array<i64: 12, 4, 1>}
  loomrt.kernel ins(%t : memref<2x3x4xf32>) outs(%y : memref<2x3x4xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    loomrt.yield %n : f32
  }
  loomrt.kernel ins(%t : memref<2x3x4xf32>) outs(%z : memref<2x3x4xf32>) attributes {origin = "exp"} {
  ^bb0(%a: f32):
    %n = math.exp %a : f32
    loomrt.yield %n : f32
  }
  return
}

// -----

// The source written between the copy and its reader: the reader must see
// the copied values, so the copy stays.
// CHECK-LABEL: func.func @source_written_between
// CHECK: loomrt.copy
// CHECK: origin = "fill"
// CHECK: loomrt.kernel ins(%{{.*}} : memref<2x2xf32>)
func.func @source_written_between(%q: memref<2x4xf32>, %y: memref<2x2xf32>) {
  %t = loomrt.alloc {category = "activation"} : memref<2x2xf32>
  loomrt.copy ins(%q : memref<2x4xf32>) outs(%t : memref<2x2xf32>) {origin = "slice", shape = array<i64: 2, 2>, source_offset = 1 : i64, source_strides = array<i64: 4, 1>, target_offset = 0 : i64, target_strides = array<i64: 2, 1>}
  loomrt.kernel outs(%q : memref<2x4xf32>) attributes {origin = "fill"} {
    %z = arith.constant 0.0 : f32
    loomrt.yield %z : f32
  }
  loomrt.kernel ins(%t : memref<2x2xf32>) outs(%y : memref<2x2xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    loomrt.yield %n : f32
  }
  return
}

// -----

// A slice of a larger buffer that dies at the copy: folding would keep the
// larger buffer live until the reader, so the copy stays. When the larger
// buffer is read after the slice's reader anyway, the slice folds.
// CHECK-LABEL: func.func @larger_source
// CHECK: loomrt.copy
// CHECK-LABEL: func.func @larger_source_live_anyway
// CHECK-NOT: loomrt.copy
// CHECK: loomrt.kernel ins(%{{.*}} : memref<2x8xf32>) outs(%{{.*}} : memref<2x4xf32>) attributes {in_offsets = array<i64: 4>, in_strides = [array<i64: 8, 1>], origin = "neg"}
func.func @larger_source(%x: memref<2x8xf32>, %y: memref<2x4xf32>, %w: memref<2x8xf32>) {
  %big = loomrt.alloc {category = "activation"} : memref<2x8xf32>
  loomrt.kernel ins(%x : memref<2x8xf32>) outs(%big : memref<2x8xf32>) attributes {origin = "exp"} {
  ^bb0(%a: f32):
    %e = math.exp %a : f32
    loomrt.yield %e : f32
  }
  %t = loomrt.alloc {category = "activation"} : memref<2x4xf32>
  loomrt.copy ins(%big : memref<2x8xf32>) outs(%t : memref<2x4xf32>) {origin = "slice", shape = array<i64: 2, 4>, source_offset = 4 : i64, source_strides = array<i64: 8, 1>, target_offset = 0 : i64, target_strides = array<i64: 4, 1>}
  loomrt.kernel ins(%x : memref<2x8xf32>) outs(%w : memref<2x8xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    loomrt.yield %n : f32
  }
  loomrt.kernel ins(%t : memref<2x4xf32>) outs(%y : memref<2x4xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    loomrt.yield %n : f32
  }
  return
}
func.func @larger_source_live_anyway(%x: memref<2x8xf32>, %y: memref<2x4xf32>, %w: memref<2x8xf32>) {
  %big = loomrt.alloc {category = "activation"} : memref<2x8xf32>
  loomrt.kernel ins(%x : memref<2x8xf32>) outs(%big : memref<2x8xf32>) attributes {origin = "exp"} {
  ^bb0(%a: f32):
    %e = math.exp %a : f32
    loomrt.yield %e : f32
  }
  %t = loomrt.alloc {category = "activation"} : memref<2x4xf32>
  loomrt.copy ins(%big : memref<2x8xf32>) outs(%t : memref<2x4xf32>) {origin = "slice", shape = array<i64: 2, 4>, source_offset = 4 : i64, source_strides = array<i64: 8, 1>, target_offset = 0 : i64, target_strides = array<i64: 4, 1>}
  loomrt.kernel ins(%t : memref<2x4xf32>) outs(%y : memref<2x4xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    loomrt.yield %n : f32
  }
  loomrt.kernel ins(%big : memref<2x8xf32>) outs(%w : memref<2x8xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    loomrt.yield %n : f32
  }
  return
}

// -----

// A split's two pieces: each alone is smaller than the source, which dies
// at the second copy, but together they free its bytes, so both fold. When
// one piece's reader cannot read in place (a reduction), the other piece
// alone frees too little, and both copies stay.
// CHECK-LABEL: func.func @split_pieces
// CHECK-NOT: loomrt.copy
// CHECK: loomrt.kernel ins(%[[G:.*]] : memref<2x8xf32>) outs(%{{.*}} : memref<2x4xf32>) attributes {in_strides = [array<i64: 8, 1>], origin = "neg"}
// CHECK: loomrt.kernel ins(%[[G]] : memref<2x8xf32>) outs(%{{.*}} : memref<2x4xf32>) attributes {in_offsets = array<i64: 4>, in_strides = [array<i64: 8, 1>], origin = "exp"}
// CHECK-LABEL: func.func @split_piece_reduced
// CHECK-COUNT-2: loomrt.copy
func.func @split_pieces(%x: memref<2x8xf32>, %y: memref<2x4xf32>, %z: memref<2x4xf32>) {
  %g = loomrt.alloc {category = "gradient"} : memref<2x8xf32>
  loomrt.kernel ins(%x : memref<2x8xf32>) outs(%g : memref<2x8xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    loomrt.yield %n : f32
  }
  %lo = loomrt.alloc {category = "gradient"} : memref<2x4xf32>
  loomrt.copy ins(%g : memref<2x8xf32>) outs(%lo : memref<2x4xf32>) {origin = "split", shape = array<i64: 2, 4>, source_offset = 0 : i64, source_strides = array<i64: 8, 1>, target_offset = 0 : i64, target_strides = array<i64: 4, 1>}
  %hi = loomrt.alloc {category = "gradient"} : memref<2x4xf32>
  loomrt.copy ins(%g : memref<2x8xf32>) outs(%hi : memref<2x4xf32>) {origin = "split", shape = array<i64: 2, 4>, source_offset = 4 : i64, source_strides = array<i64: 8, 1>, target_offset = 0 : i64, target_strides = array<i64: 4, 1>}
  loomrt.kernel ins(%lo : memref<2x4xf32>) outs(%y : memref<2x4xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    loomrt.yield %n : f32
  }
  loomrt.kernel ins(%hi : memref<2x4xf32>) outs(%z : memref<2x4xf32>) attributes {origin = "exp"} {
  ^bb0(%a: f32):
    %n = math.exp %a : f32
    loomrt.yield %n : f32
  }
  return
}
func.func @split_piece_reduced(%x: memref<2x8xf32>, %y: memref<2x4xf32>, %z: memref<2xf32>) {
  %g = loomrt.alloc {category = "gradient"} : memref<2x8xf32>
  loomrt.kernel ins(%x : memref<2x8xf32>) outs(%g : memref<2x8xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    loomrt.yield %n : f32
  }
  %lo = loomrt.alloc {category = "gradient"} : memref<2x4xf32>
  loomrt.copy ins(%g : memref<2x8xf32>) outs(%lo : memref<2x4xf32>) {origin = "split", shape = array<i64: 2, 4>, source_offset = 0 : i64, source_strides = array<i64: 8, 1>, target_offset = 0 : i64, target_strides = array<i64: 4, 1>}
  %hi = loomrt.alloc {category = "gradient"} : memref<2x4xf32>
  loomrt.copy ins(%g : memref<2x8xf32>) outs(%hi : memref<2x4xf32>) {origin = "split", shape = array<i64: 2, 4>, source_offset = 4 : i64, source_strides = array<i64: 8, 1>, target_offset = 0 : i64, target_strides = array<i64: 4, 1>}
  loomrt.kernel ins(%lo : memref<2x4xf32>) outs(%y : memref<2x4xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    loomrt.yield %n : f32
  }
  loomrt.reduce sum [1] ins(%hi : memref<2x4xf32>) outs(%z : memref<2xf32>) attributes {origin = "reduce_sum"}
  return
}

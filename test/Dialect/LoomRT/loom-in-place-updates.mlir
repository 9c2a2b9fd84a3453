// RUN: loom-opt %s -loom-in-place-updates -split-input-file | FileCheck %s

// An SGD-like step: the weight is read by the forward product's copy, then
// the update kernel reads it in place and writes the new weight; the
// momentum's update is read by the weight's update after it is written.
// Both results share their argument's buffer.
// CHECK-LABEL: func.func @update_last
// CHECK-SAME: %{{.*}}: memref<4xf32> {loom.name = "m_new", loom.updates = 1 : i64, loomrt.in_place, loomrt.result = 1 : i64}
// CHECK-SAME: %{{.*}}: memref<4xf32> {loom.name = "w_new", loom.updates = 0 : i64, loomrt.in_place, loomrt.result = 2 : i64}
func.func @update_last(%w: memref<4xf32> {loom.name = "w", loom.param},
                       %m: memref<4xf32> {loom.name = "m", loom.state},
                       %g: memref<4xf32> {loom.name = "g"},
                       %loss: memref<4xf32> {loom.name = "loss", loomrt.result = 0 : i64},
                       %m_new: memref<4xf32> {loom.name = "m_new", loom.updates = 1 : i64, loomrt.result = 1 : i64},
                       %w_new: memref<4xf32> {loom.name = "w_new", loom.updates = 0 : i64, loomrt.result = 2 : i64})
    attributes {loomrt.num_inputs = 3 : i64} {
  %v = loomrt.view %w : memref<4xf32> to memref<2x2xf32>
  %c = loomrt.alloc {category = "activation"} : memref<2x2xf32>
  loomrt.copy ins(%v : memref<2x2xf32>) outs(%c : memref<2x2xf32>) {origin = "read", shape = array<i64: 2, 2>, source_offset = 0 : i64, source_strides = array<i64: 2, 1>, target_offset = 0 : i64, target_strides = array<i64: 2, 1>}
  %cv = loomrt.view %c : memref<2x2xf32> to memref<4xf32>
  loomrt.kernel ins(%cv : memref<4xf32>) outs(%loss : memref<4xf32>) attributes {origin = "loss"} {
  ^bb0(%a: f32):
    loomrt.yield %a : f32
  }
  loomrt.kernel ins(%m, %g : memref<4xf32>, memref<4xf32>) outs(%m_new : memref<4xf32>) attributes {origin = "momentum"} {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    loomrt.yield %s : f32
  }
  loomrt.kernel ins(%w, %m_new : memref<4xf32>, memref<4xf32>) outs(%w_new : memref<4xf32>) attributes {origin = "update"} {
  ^bb0(%a: f32, %b: f32):
    %s = arith.subf %a, %b : f32
    loomrt.yield %s : f32
  }
  return
}

// -----

// Left as separate buffers: the weight is read after its update (an older
// version kept for the next op), and an all-reduce of the state is waited
// for only after the state's update.
// CHECK-LABEL: func.func @read_after_update
// CHECK-NOT: loomrt.in_place
// CHECK: return
shard.grid @mesh(shape = 2x1x1)
func.func @read_after_update(%w: memref<4xf32> {loom.name = "w", loom.param},
                             %m: memref<4xf32> {loom.name = "m", loom.state},
                             %loss: memref<4xf32> {loom.name = "loss", loomrt.result = 0 : i64},
                             %w_new: memref<4xf32> {loom.name = "w_new", loom.updates = 0 : i64, loomrt.result = 1 : i64},
                             %m_new: memref<4xf32> {loom.name = "m_new", loom.updates = 1 : i64, loomrt.result = 2 : i64})
    attributes {loomrt.num_inputs = 2 : i64} {
  loomrt.kernel ins(%w : memref<4xf32>) outs(%w_new : memref<4xf32>) attributes {origin = "update"} {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    loomrt.yield %n : f32
  }
  loomrt.kernel ins(%w : memref<4xf32>) outs(%loss : memref<4xf32>) attributes {origin = "late read"} {
  ^bb0(%a: f32):
    loomrt.yield %a : f32
  }
  %h = loomrt.all_reduce_start %m on @mesh grid_axes = [0] {reduction = "sum"} : memref<4xf32>
  loomrt.kernel ins(%m : memref<4xf32>) outs(%m_new : memref<4xf32>) attributes {origin = "update"} {
  ^bb0(%a: f32):
    loomrt.yield %a : f32
  }
  loomrt.wait %h
  return
}

// -----

// Left: the update reads the weight transposed (another element than the
// one it writes).
// CHECK-LABEL: func.func @strided_read
// CHECK-NOT: loomrt.in_place
// CHECK: return
func.func @strided_read(%w: memref<2x2xf32> {loom.name = "w", loom.param},
                        %loss: memref<f32> {loom.name = "loss", loomrt.result = 0 : i64},
                        %w_new: memref<2x2xf32> {loom.name = "w_new", loom.updates = 0 : i64, loomrt.result = 1 : i64})
    attributes {loomrt.num_inputs = 1 : i64} {
  loomrt.kernel ins(%w : memref<2x2xf32>) outs(%w_new : memref<2x2xf32>) attributes {origin = "transpose", in_strides = [array<i64: 1, 2>]} {
  ^bb0(%a: f32):
    loomrt.yield %a : f32
  }
  return
}

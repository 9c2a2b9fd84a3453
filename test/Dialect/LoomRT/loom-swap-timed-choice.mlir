// Timed copies choose what moves too: of the buffers live at the peak, one
// whose copies hide behind compute goes before a larger one whose would
// not; untimed, the largest goes.
// RUN: loom-opt %s -loom-swap="device-memory=600 host-link=32 gemm-flops=1e9 memory-bandwidth=128" \
// RUN:   | FileCheck %s --check-prefix=TIMED
// RUN: loom-opt %s -loom-swap="device-memory=600" | FileCheck %s --check-prefix=UNTIMED

// Worked out by hand. Persistent: %x and %out, 128 bytes. At the peak (%b's
// alloc, op 9, to its last use, op 11) %big (128 bytes), %small (64), %t
// (64) and %b (256) are live: 640 bytes of device peak over 600, and moving
// either %big or %small fits. Kernels on 16 floats take 1 s (128 bytes at
// 128 B/s). %big is read right after the peak (op 12): a copy back over
// the 32 B/s link (4 s) has no compute to hide behind. %small is read at
// the end: its copies (2 s each) hide behind two kernels on each side.
// TIMED: %[[SMALL:.*]] = loomrt.alloc {category = "activation", loomrt.swapped} : memref<16xf32>
// TIMED: loomrt.swap_out %[[SMALL]]
// TIMED-NOT: loomrt.swap_out
// UNTIMED: %[[BIG:.*]] = loomrt.alloc {category = "activation", loomrt.swapped} : memref<32xf32>
// UNTIMED: loomrt.swap_out %[[BIG]]
// UNTIMED-NOT: loomrt.swap_out
shard.grid @mesh(shape = 1x1x1)
func.func @stage0(%x: memref<16xf32>, %out: memref<4x4xf32> {loomrt.result = 0 : i64})
    attributes {loomrt.num_inputs = 1 : i64, loom.stage = 0 : i64} {
  %big = loomrt.alloc {category = "activation"} : memref<32xf32>
  loomrt.kernel outs(%big : memref<32xf32>) attributes {origin = "fill"} {
    %one = arith.constant 1.0 : f32
    loomrt.yield %one : f32
  }
  %small = loomrt.alloc {category = "activation"} : memref<16xf32>
  loomrt.kernel ins(%x : memref<16xf32>) outs(%small : memref<16xf32>) attributes {origin = "neg"} {
  ^bb0(%v: f32):
    %n = arith.negf %v : f32
    loomrt.yield %n : f32
  }
  %t = loomrt.alloc {category = "activation"} : memref<16xf32>
  loomrt.kernel ins(%x : memref<16xf32>) outs(%t : memref<16xf32>) attributes {origin = "neg"} {
  ^bb0(%v: f32):
    %n = arith.negf %v : f32
    loomrt.yield %n : f32
  }
  loomrt.kernel ins(%t : memref<16xf32>) outs(%t : memref<16xf32>) attributes {origin = "neg"} {
  ^bb0(%v: f32):
    %n = arith.negf %v : f32
    loomrt.yield %n : f32
  }
  loomrt.kernel ins(%t : memref<16xf32>) outs(%t : memref<16xf32>) attributes {origin = "neg"} {
  ^bb0(%v: f32):
    %n = arith.negf %v : f32
    loomrt.yield %n : f32
  }
  loomrt.kernel ins(%t : memref<16xf32>) outs(%t : memref<16xf32>) attributes {origin = "neg"} {
  ^bb0(%v: f32):
    %n = arith.negf %v : f32
    loomrt.yield %n : f32
  }
  %b = loomrt.alloc {category = "activation"} : memref<64xf32>
  loomrt.kernel outs(%b : memref<64xf32>) attributes {origin = "fill"} {
    %one = arith.constant 1.0 : f32
    loomrt.yield %one : f32
  }
  loomrt.copy ins(%b : memref<64xf32>) outs(%t : memref<16xf32>) {origin = "slice", shape = array<i64: 16>, source_offset = 0 : i64, source_strides = array<i64: 1>, target_offset = 0 : i64, target_strides = array<i64: 1>}
  loomrt.copy ins(%big : memref<32xf32>) outs(%t : memref<16xf32>) {origin = "slice", shape = array<i64: 16>, source_offset = 16 : i64, source_strides = array<i64: 1>, target_offset = 0 : i64, target_strides = array<i64: 1>}
  loomrt.kernel ins(%t : memref<16xf32>) outs(%t : memref<16xf32>) attributes {origin = "neg"} {
  ^bb0(%v: f32):
    %n = arith.negf %v : f32
    loomrt.yield %n : f32
  }
  loomrt.kernel ins(%t : memref<16xf32>) outs(%t : memref<16xf32>) attributes {origin = "neg"} {
  ^bb0(%v: f32):
    %n = arith.negf %v : f32
    loomrt.yield %n : f32
  }
  loomrt.kernel ins(%t : memref<16xf32>) outs(%t : memref<16xf32>) attributes {origin = "neg"} {
  ^bb0(%v: f32):
    %n = arith.negf %v : f32
    loomrt.yield %n : f32
  }
  %sv = loomrt.view %small : memref<16xf32> to memref<4x4xf32>
  %tv = loomrt.view %t : memref<16xf32> to memref<4x4xf32>
  loomrt.kernel ins(%sv, %tv : memref<4x4xf32>, memref<4x4xf32>) outs(%out : memref<4x4xf32>) attributes {origin = "add"} {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    loomrt.yield %s : f32
  }
  return
}

// Timed copies: with the host link's rate and the device's, loom-swap puts
// as many ops between each copy's start and its wait as it takes for their
// compute to cover the copy, instead of prefetch-distance ops.
// RUN: loom-opt %s -loom-swap="device-memory=450 host-link=32 gemm-flops=1e9 memory-bandwidth=128" \
// RUN:   | FileCheck %s --check-prefix=FAST
// RUN: loom-opt %s -loom-swap="device-memory=450 host-link=4 gemm-flops=1e9 memory-bandwidth=128 prefetch-distance=1" \
// RUN:   | FileCheck %s --check-prefix=SLOW
// RUN: loom-opt %s -loom-swap="device-memory=450 prefetch-distance=6" \
// RUN:   | FileCheck %s --check-prefix=LONG
// RUN: not loom-opt %s -loom-swap="device-memory=450 host-link=-1" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD

// Worked out by hand. Each kernel on 16 floats reads 64 bytes and writes 64:
// 1 s at 128 B/s; allocs take no time. %a (64 bytes) is written at op 1 and
// read at op 14 (a view); the peak is %b's alloc (op 7) to its last use,
// the copy (op 9), where %a is live unused (512 bytes of device peak over
// 450). Over a 32 B/s link its copies take 2 s: two kernels on each side.
// Over 4 B/s they take 16 s, more than the four kernels on either side of
// the peak: no window hides them, and each gets prefetch-distance ops (one
// here) rather than holding the buffer longer for part of the copy.
// FAST: %[[OUT:.*]] = loomrt.swap_out
// FAST-NEXT: loomrt.alloc {category = "activation"} : memref<16xf32>
// FAST-NEXT: loomrt.kernel
// FAST: loomrt.kernel
// FAST: loomrt.yield
// FAST-NEXT: }
// FAST-NEXT: loomrt.wait %[[OUT]]
// FAST-NEXT: loomrt.kernel
// FAST: loomrt.kernel
// FAST: loomrt.kernel
// FAST: loomrt.copy
// FAST-NEXT: loomrt.kernel
// FAST: loomrt.kernel
// FAST: loomrt.yield
// FAST-NEXT: }
// FAST-NEXT: loomrt.alloc {category = "activation", loomrt.swapped}
// FAST-NEXT: %[[IN:.*]] = loomrt.swap_in
// FAST-NEXT: loomrt.kernel
// FAST: loomrt.kernel
// FAST: loomrt.yield
// FAST-NEXT: }
// FAST-NEXT: loomrt.wait %[[IN]]
// FAST-NEXT: loomrt.view

// SLOW: %[[OUT:.*]] = loomrt.swap_out
// SLOW-NEXT: loomrt.alloc {category = "activation"} : memref<16xf32>
// SLOW-NEXT: loomrt.wait %[[OUT]]
// SLOW: %[[IN:.*]] = loomrt.swap_in
// SLOW-NEXT: loomrt.kernel
// SLOW: loomrt.yield
// SLOW-NEXT: }
// SLOW-NEXT: loomrt.wait %[[IN]]
// SLOW-NEXT: loomrt.view

// Untimed, six ops of distance would start the copy in at the copy (op 9),
// where %b still is: the peak lasts until its buffers' first last use, so
// the copy in starts right after.
// LONG: loomrt.copy
// LONG-NEXT: loomrt.alloc {category = "activation", loomrt.swapped}
// LONG-NEXT: loomrt.swap_in

// BAD: error: loom-swap: device-memory must be >= 0, prefetch-distance >= 1, and host-link, gemm-flops, memory-bandwidth and launch >= 0
shard.grid @mesh(shape = 1x1x1)
func.func @stage0(%x: memref<16xf32>, %out: memref<4x4xf32> {loomrt.result = 0 : i64})
    attributes {loomrt.num_inputs = 1 : i64, loom.stage = 0 : i64} {
  %a = loomrt.alloc {category = "activation"} : memref<16xf32>
  loomrt.kernel ins(%x : memref<16xf32>) outs(%a : memref<16xf32>) attributes {origin = "neg"} {
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
  loomrt.kernel ins(%t : memref<16xf32>) outs(%t : memref<16xf32>) attributes {origin = "neg"} {
  ^bb0(%v: f32):
    %n = arith.negf %v : f32
    loomrt.yield %n : f32
  }
  %av = loomrt.view %a : memref<16xf32> to memref<4x4xf32>
  %tv = loomrt.view %t : memref<16xf32> to memref<4x4xf32>
  loomrt.kernel ins(%av, %tv : memref<4x4xf32>, memref<4x4xf32>) outs(%out : memref<4x4xf32>) attributes {origin = "add"} {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    loomrt.yield %s : f32
  }
  return
}

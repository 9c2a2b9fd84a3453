// RUN: loom-opt %s -loom-swap="device-memory=450 prefetch-distance=1" | FileCheck %s
// RUN: loom-opt %s -loom-swap="device-memory=450 prefetch-distance=1" \
// RUN:   -loom-memory-plan="report=%t.json device-memory=450" -o %t.mlir
// RUN: FileCheck %s --check-prefix=REPORT < %t.json
// RUN: FileCheck %s --check-prefix=PLANNED < %t.mlir
// The C++ program: the host pool, the copies and their waits; it compiles
// against the runtime's headers. The CUDA program makes the same calls in
// cuda:: (the copy stream) and compiles as emulated host code.
// RUN: loom-translate --emit-cpp %t.mlir -o %t.cpp
// RUN: FileCheck %s --check-prefix=CPP < %t.cpp
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -I %loom_src/include %t.cpp
// RUN: loom-translate --emit-cuda %t.mlir -o %t.cu
// RUN: FileCheck %s --check-prefix=CUDA < %t.cu
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -DLOOM_CUDA_EMULATION -x c++ -I %loom_src/include %t.cu
// CPP: float *[[H:.*]] = reinterpret_cast<float *>(hostArena(ctx) + 0); // memref<16xf32> in the host pool
// CPP-NEXT: [[OUT:copies\[[0-9]+\]]] = swapOutStart(ctx, [[H]], [[A:.*]], 64);
// CPP: wait(ctx, [[OUT]]);
// CPP: [[IN:copies\[[0-9]+\]]] = swapInStart(ctx, [[A2:.*]], [[H]], 64);
// CPP: wait(ctx, [[IN]]);
// CPP: /*plannedDevicePeakBytes=*/448, /*deviceMemoryBytes=*/450, /*hostArenaBytes=*/64};
// CUDA: float *[[H:.*]] = reinterpret_cast<float *>(hostArena(ctx) + 0); // memref<16xf32> in the host pool
// CUDA-NEXT: [[OUT:copies\[[0-9]+\]]] = cuda::swapOutStart(ctx, [[H]], {{.*}}, 64);
// CUDA: cuda::wait(ctx, [[OUT]]);
// CUDA: [[IN:copies\[[0-9]+\]]] = cuda::swapInStart(ctx, {{.*}}, [[H]], 64);
// CUDA: cuda::wait(ctx, [[IN]]);
// Without a budget, or within it, nothing moves.
// RUN: loom-opt %s -loom-swap | FileCheck %s --check-prefix=NONE
// RUN: loom-opt %s -loom-swap="device-memory=512" | FileCheck %s --check-prefix=NONE
// NONE-NOT: swap
// Nothing left to move: the buffers live at the new peak are used there.
// RUN: not loom-opt %s -loom-swap="device-memory=300 prefetch-distance=1" \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOFIT
// The persistent buffers alone (128 bytes) over the budget: nothing moves.
// RUN: not loom-opt %s -loom-swap="device-memory=100" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PERSISTENT
// PERSISTENT: error: loom-swap: stage 0 (@stage0): its persistent buffers alone need 128 bytes (parameters 0, optimizer state 0, updated parameters, state and loss 64, input batch 64), over the --device-memory budget of 100 bytes; nothing swappable can fix it
// NOFIT: error: loom-swap: stage 0 (@stage0) still needs 448 bytes of device memory at its peak (512 before swapping), over the --device-memory budget of 300 bytes, after offloading 1 activation buffer(s) of 64 bytes: no activation live at the peak is left to offload (live there: activations 320

// Worked out by hand. Persistent: %x 64 + %out 64 = 128 bytes. %a (64
// bytes) is written by the first kernel (op 1), viewed (op 2) and read by
// the last (op 8); %b (256) lives over ops 3-6 and %c (64) over 5-8, so the
// arena peaks from %c's alloc (op 5) to the copy (op 6) with a, b and c
// live: 384 bytes, device peak 512 > 450. %a is live there without being
// used: it goes to the host pool after its view (the wait one op later
// with prefetch-distance=1, before the peak) and comes back into a fresh
// buffer one op before its use at op 8, after the peak (the view is made
// again of the new buffer). %b and %c are used at the peak and stay.
// Arena: a + b (320) before the peak, b + c (320) at it, c + a' (128)
// after: 320, device peak 448 <= 450; the host pool holds %a: 64.
// CHECK-LABEL: func.func @stage0
// CHECK: %[[A:.*]] = loomrt.alloc {category = "activation", loomrt.swapped} : memref<16xf32>
// CHECK-NEXT: loomrt.kernel ins(%{{.*}} : memref<16xf32>) outs(%[[A]] : memref<16xf32>)
// CHECK: loomrt.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[H:.*]] = loomrt.alloc {category = "swap"} : memref<16xf32>
// CHECK-NEXT: %[[OUT:.*]] = loomrt.swap_out %[[A]] to %[[H]] : memref<16xf32>, memref<16xf32>
// CHECK-NEXT: %[[B:.*]] = loomrt.alloc {category = "activation"} : memref<64xf32>
// CHECK-NEXT: loomrt.wait %[[OUT]]
// CHECK-NEXT: loomrt.kernel outs(%[[B]]
// CHECK: loomrt.copy ins(%[[B]]
// CHECK-NEXT: %[[A2:.*]] = loomrt.alloc {category = "activation", loomrt.swapped} : memref<16xf32>
// CHECK-NEXT: %[[IN:.*]] = loomrt.swap_in %[[H]] to %[[A2]] : memref<16xf32>, memref<16xf32>
// CHECK-NEXT: loomrt.kernel
// CHECK: loomrt.yield
// CHECK-NEXT: }
// CHECK-NEXT: loomrt.wait %[[IN]]
// CHECK-NEXT: %[[V:.*]] = loomrt.view %[[A2]] : memref<16xf32> to memref<4x4xf32>
// CHECK-NEXT: loomrt.kernel ins(%[[V]], %{{.*}} : memref<4x4xf32>, memref<4x4xf32>)
// CHECK-NOT: loomrt.kernel ins(%[[A]]

// REPORT: "arena_bytes": 320,
// REPORT: "device_peak_bytes": 448,
// REPORT: "host_peak_bytes": 64,
// PLANNED: func.func @stage0
// PLANNED-SAME: loomrt.host_arena_bytes = 64 : i64
// PLANNED: loomrt.alloc {category = "swap", offset = 0 : i64}
// The device buffer lives until the swap-out's wait, the host one until the
// swap-in's.
// PLANNED: %[[OUT:.*]] = loomrt.swap_out %[[A:[^ ]*]] to %[[H:[^ ]*]] :
// PLANNED: loomrt.wait %[[OUT]]
// PLANNED-NEXT: loomrt.dealloc %[[A]]
// PLANNED: %[[IN:.*]] = loomrt.swap_in %[[H]] to
// PLANNED: loomrt.wait %[[IN]]
// PLANNED-NEXT: loomrt.dealloc %[[H]]
shard.grid @mesh(shape = 1x1x1)
func.func @stage0(%x: memref<16xf32>, %out: memref<4x4xf32> {loomrt.result = 0 : i64})
    attributes {loomrt.num_inputs = 1 : i64, loom.stage = 0 : i64} {
  %a = loomrt.alloc {category = "activation"} : memref<16xf32>
  loomrt.kernel ins(%x : memref<16xf32>) outs(%a : memref<16xf32>) attributes {origin = "neg"} {
  ^bb0(%v: f32):
    %n = arith.negf %v : f32
    loomrt.yield %n : f32
  }
  %av = loomrt.view %a : memref<16xf32> to memref<4x4xf32>
  %b = loomrt.alloc {category = "activation"} : memref<64xf32>
  loomrt.kernel outs(%b : memref<64xf32>) attributes {origin = "fill"} {
    %one = arith.constant 1.0 : f32
    loomrt.yield %one : f32
  }
  %c = loomrt.alloc {category = "activation"} : memref<4x4xf32>
  loomrt.copy ins(%b : memref<64xf32>) outs(%c : memref<4x4xf32>) {origin = "slice", shape = array<i64: 4, 4>, source_offset = 0 : i64, source_strides = array<i64: 4, 1>, target_offset = 0 : i64, target_strides = array<i64: 4, 1>}
  loomrt.kernel ins(%c : memref<4x4xf32>) outs(%c : memref<4x4xf32>) attributes {origin = "neg"} {
  ^bb0(%v: f32):
    %n = arith.negf %v : f32
    loomrt.yield %n : f32
  }
  loomrt.kernel ins(%av, %c : memref<4x4xf32>, memref<4x4xf32>) outs(%out : memref<4x4xf32>) attributes {origin = "add"} {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    loomrt.yield %s : f32
  }
  return
}

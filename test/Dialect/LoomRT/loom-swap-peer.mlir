// loom-swap peer: stage 0 over the budget sends an activation to stage 1
// (which has room) over the pipeline link and receives it back before its
// use, and stage 1 gets the matching receive and send back, placed by the
// messages the two programs already exchange. Worked out by hand:
//
// Stage 0 (persistent 128 bytes) peaks at 512 > 450 with %a (64 bytes)
// live but unused from op 1 (its kernel) to op 11 (its view): it moves.
// With prefetch-distance=1 stage 0 sends it right after op 1 (tag 2, above
// every tag in use), waits for that send after op 2, posts the receive of
// it back (tag 3) before op 10 and waits right before the view. Stage 1
// (ops: 0 alloc, 1 recv tag 0, 2 wait, 3 view, 4 alloc, 5 kernel, 6 send
// tag 1, 7 kernel, 8 wait on that send, 9 return):
// * it must post its receive before any wait that needs stage 0 past
//   stage 0's wait for the send (op 3): its wait on the tag 1 send (op 8)
//   needs stage 0's receive of tag 1 (stage 0's op 8): post before op 8;
// * nothing stage 0 waits for before its send (op 2) comes from stage 1:
//   it may wait for the data right there, before op 8;
// * it sends it back before any wait needing stage 0 past op 11 (none: the
//   return) and as late as the last action stage 0 needs before posting
//   (none): right after the wait, before op 8;
// * it waits for that send by its first wait needing stage 0 past op 10
//   (none): before the return.
// Stage 0's device peak is then 448 <= 450. Stage 1's stays 192: it holds
// the 64 bytes with %o only (128 live), after %in (its peak is %in + %o).
//
// RUN: loom-opt %s -loom-swap="device-memory=450 prefetch-distance=1 peer=true" \
// RUN:   -loom-verify-messages | FileCheck %s
// RUN: loom-opt %s -loom-swap="device-memory=450 prefetch-distance=1 peer=true" \
// RUN:   -loom-memory-plan="report=%t.json device-memory=450" -o %t.mlir
// RUN: FileCheck %s --check-prefix=REPORT < %t.json
// The C++ program compiles against the runtime's headers.
// RUN: loom-translate --emit-cpp %t.mlir -o %t.cpp
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -I %loom_src/include %t.cpp
//
// A budget of 200 still lets stage 1 hold it (its peak stays 192), but
// stage 0 cannot get under 448. Under 190, stage 1 is itself over the
// budget with it and has no stage beyond to pass its own to.
// RUN: not loom-opt %s -loom-swap="device-memory=200 prefetch-distance=1 peer=true" \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOFIT
// NOFIT: error: loom-swap: stage 0 (@stage0) still needs 448 bytes of device memory at its peak (512 before swapping), over the --device-memory budget of 200 bytes, after sending to its neighbours 1 activation buffer(s) of 64 bytes: no activation live at the peak is left to offload
// RUN: not loom-opt %s -loom-swap="device-memory=190 prefetch-distance=1 peer=true" \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOROOM
// NOROOM: error: loom-swap: stage 0 (@stage0) still needs 512 bytes of device memory at its peak (512 before swapping), over the --device-memory budget of 190 bytes, after sending to its neighbours 0 activation buffer(s) of 0 bytes: no neighbouring stage has room for the next activation (64 bytes) under the budget, nor can make it by passing its own on
// With host-fallback (--swap balance) the activation stage 1 has no room
// for goes to the host pool instead: it moves, and stage 0 is left at 448
// as with the budget of 200.
// RUN: not loom-opt %s -loom-swap="device-memory=190 prefetch-distance=1 peer=true host-fallback=true" \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=FALLBACK
// FALLBACK: error: loom-swap: stage 0 (@stage0) still needs 448 bytes of device memory at its peak (512 before swapping), over the --device-memory budget of 190 bytes, after sending to its neighbours or offloading 1 activation buffer(s) of 64 bytes: no activation live at the peak is left to offload
// A module without stages has no neighbours.
// RUN: sed -e '/^func.func @stage1/,$d' %s | not loom-opt -loom-swap="device-memory=450 peer=true" \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=ALONE
// ALONE: error: loom-swap: peer sends activations to a neighbouring pipeline stage: the module must hold two or more stage programs

// CHECK-LABEL: func.func @stage0
// CHECK: %[[A:.*]] = loomrt.alloc {category = "activation", loomrt.swapped} : memref<16xf32>
// CHECK: loomrt.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[OUT:.*]] = loomrt.send_start %[[A]] on @mesh grid_axes = [1] {peer = 1 : i64, tag = 2 : i64} : memref<16xf32>
// CHECK-NEXT: loomrt.send_start %arg0 {{.*}}tag = 0
// CHECK-NEXT: loomrt.wait %[[OUT]]
// CHECK: %[[A2:.*]] = loomrt.alloc {category = "activation", loomrt.swapped} : memref<16xf32>
// CHECK-NEXT: %[[IN:.*]] = loomrt.recv_start %[[A2]] on @mesh grid_axes = [1] {peer = 1 : i64, tag = 3 : i64} : memref<16xf32>
// CHECK-NEXT: loomrt.wait
// CHECK-NEXT: loomrt.wait %[[IN]]
// CHECK-NEXT: loomrt.view %[[A2]]
// CHECK-LABEL: func.func @stage1
// CHECK: loomrt.send_start {{.*}}tag = 1
// CHECK: loomrt.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[S:.*]] = loomrt.alloc {category = "peer"} : memref<16xf32>
// CHECK-NEXT: %[[R:.*]] = loomrt.recv_start %[[S]] on @mesh grid_axes = [1] {peer = 0 : i64, tag = 2 : i64} : memref<16xf32>
// CHECK-NEXT: loomrt.wait %[[R]]
// CHECK-NEXT: %[[B:.*]] = loomrt.send_start %[[S]] on @mesh grid_axes = [1] {peer = 0 : i64, tag = 3 : i64} : memref<16xf32>
// CHECK-NEXT: loomrt.wait
// CHECK-NEXT: loomrt.wait %[[B]]
// CHECK-NEXT: return

// REPORT: "device_peak_bytes": 448,
// REPORT: "host_peak_bytes": 0,
// REPORT: "device_peak_bytes": 192,

shard.grid @mesh(shape = 1x2x1)
func.func @stage0(%x: memref<16xf32>, %out: memref<4x4xf32> {loomrt.result = 0 : i64})
    attributes {loomrt.num_inputs = 1 : i64, loom.stage = 0 : i64} {
  %a = loomrt.alloc {category = "activation"} : memref<16xf32>
  loomrt.kernel ins(%x : memref<16xf32>) outs(%a : memref<16xf32>) attributes {origin = "neg"} {
  ^bb0(%v: f32):
    %n = arith.negf %v : f32
    loomrt.yield %n : f32
  }
  %s = loomrt.send_start %x on @mesh grid_axes = [1] {peer = 1 : i64, tag = 0 : i64} : memref<16xf32>
  %b = loomrt.alloc {category = "activation"} : memref<64xf32>
  loomrt.kernel outs(%b : memref<64xf32>) attributes {origin = "fill"} {
    %one = arith.constant 1.0 : f32
    loomrt.yield %one : f32
  }
  %c = loomrt.alloc {category = "activation"} : memref<4x4xf32>
  loomrt.copy ins(%b : memref<64xf32>) outs(%c : memref<4x4xf32>) {origin = "slice", shape = array<i64: 4, 4>, source_offset = 0 : i64, source_strides = array<i64: 4, 1>, target_offset = 0 : i64, target_strides = array<i64: 4, 1>}
  %g = loomrt.alloc {category = "activation"} : memref<4x4xf32>
  %r = loomrt.recv_start %g on @mesh grid_axes = [1] {peer = 1 : i64, tag = 1 : i64} : memref<4x4xf32>
  loomrt.kernel ins(%c : memref<4x4xf32>) outs(%c : memref<4x4xf32>) attributes {origin = "neg"} {
  ^bb0(%v: f32):
    %n = arith.negf %v : f32
    loomrt.yield %n : f32
  }
  loomrt.wait %r
  %av = loomrt.view %a : memref<16xf32> to memref<4x4xf32>
  loomrt.kernel ins(%av, %c, %g : memref<4x4xf32>, memref<4x4xf32>, memref<4x4xf32>) outs(%out : memref<4x4xf32>) attributes {origin = "add"} {
  ^bb0(%p: f32, %q: f32, %w: f32):
    %t = arith.addf %p, %q : f32
    %u = arith.addf %t, %w : f32
    loomrt.yield %u : f32
  }
  loomrt.wait %s
  return
}
func.func @stage1(%out: memref<4x4xf32> {loomrt.result = 0 : i64})
    attributes {loomrt.num_inputs = 0 : i64, loom.stage = 1 : i64} {
  %in = loomrt.alloc {category = "activation"} : memref<16xf32>
  %r = loomrt.recv_start %in on @mesh grid_axes = [1] {peer = 0 : i64, tag = 0 : i64} : memref<16xf32>
  loomrt.wait %r
  %v = loomrt.view %in : memref<16xf32> to memref<4x4xf32>
  %o = loomrt.alloc {category = "activation"} : memref<4x4xf32>
  loomrt.kernel ins(%v : memref<4x4xf32>) outs(%o : memref<4x4xf32>) attributes {origin = "neg"} {
  ^bb0(%p: f32):
    %n = arith.negf %p : f32
    loomrt.yield %n : f32
  }
  %s = loomrt.send_start %o on @mesh grid_axes = [1] {peer = 0 : i64, tag = 1 : i64} : memref<4x4xf32>
  loomrt.kernel ins(%o : memref<4x4xf32>) outs(%out : memref<4x4xf32>) attributes {origin = "neg"} {
  ^bb0(%p: f32):
    %n = arith.negf %p : f32
    loomrt.yield %n : f32
  }
  loomrt.wait %s
  return
}

// RUN: loom-opt %s -split-input-file -allow-unregistered-dialect -loom-comm-schedule | FileCheck %s
// loom-comm-schedule (TriRace's one-way pipeline transfers): each send
// (its buffer, copy and start) moves up to right after the last op that
// writes what it sends; each receive (with its buffer) to right after the
// wait of the previous receive from the same peer. Waits and compute stay.

// CHECK-LABEL: func.func @send_after_its_producer
// The producer of %dx, then the send, ahead of the weight gradient's
// compute and of the dp bucket that became ready after it.
// CHECK:      loomrt.copy ins(%arg0 : memref<4xf32>) outs(%[[DX:.*]] : memref<4xf32>) {origin = "dx"
// CHECK-NEXT: %[[B:.*]] = loomrt.alloc {category = "send"}
// CHECK-NEXT: loomrt.copy ins(%[[DX]] : memref<4xf32>) outs(%[[B]] : memref<4xf32>) {origin = "send"
// CHECK-NEXT: %[[S:.*]] = loomrt.send_start %[[B]] on @mesh grid_axes = [1] {peer = 0 : i64, tag = 1 : i64}
// CHECK-NEXT: loomrt.alloc {category = "gradient"}
// CHECK-NEXT: loomrt.copy {{.*}} {origin = "dw"
// CHECK-NEXT: loomrt.all_reduce_start {{.*}} grid_axes = [0]
// CHECK:      loomrt.wait %[[S]]
shard.grid @mesh(shape = 2x2x1)
func.func @send_after_its_producer(%x: memref<4xf32>, %y: memref<4xf32>) {
  %dx = loomrt.alloc {category = "gradient"} : memref<4xf32>
  loomrt.copy ins(%x : memref<4xf32>) outs(%dx : memref<4xf32>) {origin = "dx", shape = array<i64: 4>, source_offset = 0 : i64, source_strides = array<i64: 1>, target_offset = 0 : i64, target_strides = array<i64: 1>}
  %dw = loomrt.alloc {category = "gradient"} : memref<4xf32>
  loomrt.copy ins(%y : memref<4xf32>) outs(%dw : memref<4xf32>) {origin = "dw", shape = array<i64: 4>, source_offset = 0 : i64, source_strides = array<i64: 1>, target_offset = 0 : i64, target_strides = array<i64: 1>}
  %hd = loomrt.all_reduce_start %dw on @mesh grid_axes = [0] {reduction = "sum"} : memref<4xf32>
  %b = loomrt.alloc {category = "send"} : memref<4xf32>
  loomrt.copy ins(%dx : memref<4xf32>) outs(%b : memref<4xf32>) {origin = "send", shape = array<i64: 4>, source_offset = 0 : i64, source_strides = array<i64: 1>, target_offset = 0 : i64, target_strides = array<i64: 1>}
  %s = loomrt.send_start %b on @mesh grid_axes = [1] {peer = 0 : i64, tag = 1 : i64} : memref<4xf32>
  loomrt.wait %hd
  loomrt.wait %s
  return
}

// -----

// A buffer that an all-reduce writes in place holds its values only after
// the wait: the send stays after the wait, not between start and wait.
// CHECK-LABEL: func.func @send_after_the_wait
// CHECK:      %[[H:.*]] = loomrt.all_reduce_start
// CHECK-NEXT: loomrt.alloc
// CHECK-NEXT: loomrt.iota
// CHECK-NEXT: loomrt.wait %[[H]]
// CHECK-NEXT: loomrt.alloc {category = "send"}
// CHECK-NEXT: loomrt.copy {{.*}} {origin = "send"
// CHECK-NEXT: loomrt.send_start
shard.grid @mesh(shape = 1x2x2)
func.func @send_after_the_wait(%x: memref<4xf32>) {
  %a = loomrt.alloc {category = "activation"} : memref<4xf32>
  loomrt.copy ins(%x : memref<4xf32>) outs(%a : memref<4xf32>) {origin = "a", shape = array<i64: 4>, source_offset = 0 : i64, source_strides = array<i64: 1>, target_offset = 0 : i64, target_strides = array<i64: 1>}
  %h = loomrt.all_reduce_start %a on @mesh grid_axes = [2] {reduction = "sum"} : memref<4xf32>
  %i = loomrt.alloc {category = "activation"} : memref<4xi64>
  loomrt.iota 0 outs(%i : memref<4xi64>)
  loomrt.wait %h
  %other = loomrt.alloc {category = "activation"} : memref<4xi64>
  loomrt.iota 0 outs(%other : memref<4xi64>)
  %b = loomrt.alloc {category = "send"} : memref<4xf32>
  loomrt.copy ins(%a : memref<4xf32>) outs(%b : memref<4xf32>) {origin = "send", shape = array<i64: 4>, source_offset = 0 : i64, source_strides = array<i64: 1>, target_offset = 0 : i64, target_strides = array<i64: 1>}
  %s = loomrt.send_start %b on @mesh grid_axes = [1] {peer = 1 : i64, tag = 0 : i64} : memref<4xf32>
  loomrt.wait %s
  return
}

// -----

// Through a view: a write of the viewed buffer stops the move; an op of
// unknown effects stops it too.
// CHECK-LABEL: func.func @send_of_a_view
// CHECK:      loomrt.iota 0 outs(%{{.*}} : memref<2x2xi64>)
// CHECK-NEXT: loomrt.alloc {category = "send"}
// CHECK-LABEL: func.func @unknown_op
// CHECK:      "test.opaque"()
// CHECK-NEXT: loomrt.alloc {category = "send"}
shard.grid @mesh(shape = 1x2x1)
func.func @send_of_a_view() {
  %a = loomrt.alloc {category = "activation"} : memref<4xi64>
  %v = loomrt.view %a : memref<4xi64> to memref<2x2xi64>
  loomrt.iota 0 outs(%v : memref<2x2xi64>)
  %other = loomrt.alloc {category = "activation"} : memref<4xi64>
  loomrt.iota 0 outs(%other : memref<4xi64>)
  %b = loomrt.alloc {category = "send"} : memref<2x2xi64>
  loomrt.copy ins(%v : memref<2x2xi64>) outs(%b : memref<2x2xi64>) {origin = "send", shape = array<i64: 2, 2>, source_offset = 0 : i64, source_strides = array<i64: 2, 1>, target_offset = 0 : i64, target_strides = array<i64: 2, 1>}
  %s = loomrt.send_start %b on @mesh grid_axes = [1] {peer = 1 : i64, tag = 0 : i64} : memref<2x2xi64>
  loomrt.wait %s
  return
}
func.func @unknown_op(%x: memref<4xf32>) {
  "test.opaque"() : () -> ()
  %b = loomrt.alloc {category = "send"} : memref<4xf32>
  loomrt.copy ins(%x : memref<4xf32>) outs(%b : memref<4xf32>) {origin = "send", shape = array<i64: 4>, source_offset = 0 : i64, source_strides = array<i64: 1>, target_offset = 0 : i64, target_strides = array<i64: 1>}
  %s = loomrt.send_start %b on @mesh grid_axes = [1] {peer = 1 : i64, tag = 0 : i64} : memref<4xf32>
  loomrt.wait %s
  return
}

// -----

// Receives: each moves up to right after the wait of the previous receive
// from the same peer (one receive prefetched per peer while the previous
// one's data is consumed), the first one from a peer to the top; peer 2's
// is independent of peer 0's.
// CHECK-LABEL: func.func @receives
// CHECK-NEXT: %[[G:.*]] = loomrt.alloc {category = "gradient"} : memref<4xf32>
// CHECK-NEXT: %[[RG:.*]] = loomrt.recv_start %[[G]] {{.*}} {peer = 2 : i64, tag = 1 : i64}
// CHECK-NEXT: %[[B0:.*]] = loomrt.alloc {category = "activation"} : memref<4xf32>
// CHECK-NEXT: %[[R0:.*]] = loomrt.recv_start %[[B0]] {{.*}} {peer = 0 : i64, tag = 0 : i64}
// CHECK-NEXT: loomrt.alloc
// CHECK-NEXT: loomrt.iota
// CHECK-NEXT: loomrt.wait %[[R0]]
// CHECK-NEXT: %[[B1:.*]] = loomrt.alloc {category = "activation"} : memref<4xf32>
// CHECK-NEXT: %[[R1:.*]] = loomrt.recv_start %[[B1]] {{.*}} {peer = 0 : i64, tag = 2 : i64}
// CHECK-NEXT: loomrt.copy ins(%[[B0]] {{.*}} {origin = "use0"
// CHECK-NEXT: loomrt.wait %[[R1]]
// CHECK-NEXT: %[[B2:.*]] = loomrt.alloc {category = "activation"} : memref<4xf32>
// CHECK-NEXT: %[[R2:.*]] = loomrt.recv_start %[[B2]] {{.*}} {peer = 0 : i64, tag = 4 : i64}
// CHECK-NEXT: loomrt.copy ins(%[[B1]] {{.*}} {origin = "use1"
// CHECK-NEXT: loomrt.wait %[[RG]]
// CHECK-NEXT: loomrt.copy ins(%[[G]] {{.*}} {origin = "use-g"
// CHECK-NEXT: loomrt.wait %[[R2]]
shard.grid @mesh(shape = 1x3x1)
func.func @receives(%out: memref<4xf32>) {
  %i = loomrt.alloc {category = "activation"} : memref<4xi64>
  loomrt.iota 0 outs(%i : memref<4xi64>)
  %b0 = loomrt.alloc {category = "activation"} : memref<4xf32>
  %r0 = loomrt.recv_start %b0 on @mesh grid_axes = [1] {peer = 0 : i64, tag = 0 : i64} : memref<4xf32>
  loomrt.wait %r0
  loomrt.copy ins(%b0 : memref<4xf32>) outs(%out : memref<4xf32>) {origin = "use0", shape = array<i64: 4>, source_offset = 0 : i64, source_strides = array<i64: 1>, target_offset = 0 : i64, target_strides = array<i64: 1>}
  %b1 = loomrt.alloc {category = "activation"} : memref<4xf32>
  %r1 = loomrt.recv_start %b1 on @mesh grid_axes = [1] {peer = 0 : i64, tag = 2 : i64} : memref<4xf32>
  loomrt.wait %r1
  loomrt.copy ins(%b1 : memref<4xf32>) outs(%out : memref<4xf32>) {origin = "use1", shape = array<i64: 4>, source_offset = 0 : i64, source_strides = array<i64: 1>, target_offset = 0 : i64, target_strides = array<i64: 1>}
  %g = loomrt.alloc {category = "gradient"} : memref<4xf32>
  %rg = loomrt.recv_start %g on @mesh grid_axes = [1] {peer = 2 : i64, tag = 1 : i64} : memref<4xf32>
  loomrt.wait %rg
  loomrt.copy ins(%g : memref<4xf32>) outs(%out : memref<4xf32>) {origin = "use-g", shape = array<i64: 4>, source_offset = 0 : i64, source_strides = array<i64: 1>, target_offset = 0 : i64, target_strides = array<i64: 1>}
  %b2 = loomrt.alloc {category = "activation"} : memref<4xf32>
  %r2 = loomrt.recv_start %b2 on @mesh grid_axes = [1] {peer = 0 : i64, tag = 4 : i64} : memref<4xf32>
  loomrt.wait %r2
  return
}

// -----

// A tensor-parallel all-reduce (the lowering's buffer and "all_reduce"
// copy) moves up to right after the input gradient is computed, ahead of
// the weight gradient: the transfer runs while dW is computed. The dealloc
// of the copied value stays where it was.
// CHECK-LABEL: func.func @all_reduce_after_its_producer
// CHECK:      loomrt.copy ins(%arg0 : memref<4xf32>) outs(%[[DX:.*]] : memref<4xf32>) {origin = "dx"
// CHECK-NEXT: %[[B:.*]] = loomrt.alloc {category = "gradient"}
// CHECK-NEXT: loomrt.copy ins(%[[DX]] : memref<4xf32>) outs(%[[B]] : memref<4xf32>) {origin = "all_reduce"
// CHECK-NEXT: %[[H:.*]] = loomrt.all_reduce_start %[[B]] on @mesh grid_axes = [2]
// CHECK-NEXT: loomrt.alloc {category = "gradient"}
// CHECK-NEXT: loomrt.copy {{.*}} {origin = "dw"
// CHECK-NEXT: loomrt.dealloc %[[DX]]
// CHECK-NEXT: loomrt.wait %[[H]]
shard.grid @mesh(shape = 1x1x2)
func.func @all_reduce_after_its_producer(%x: memref<4xf32>, %y: memref<4xf32>) {
  %dx = loomrt.alloc {category = "gradient"} : memref<4xf32>
  loomrt.copy ins(%x : memref<4xf32>) outs(%dx : memref<4xf32>) {origin = "dx", shape = array<i64: 4>, source_offset = 0 : i64, source_strides = array<i64: 1>, target_offset = 0 : i64, target_strides = array<i64: 1>}
  %dw = loomrt.alloc {category = "gradient"} : memref<4xf32>
  loomrt.copy ins(%y : memref<4xf32>) outs(%dw : memref<4xf32>) {origin = "dw", shape = array<i64: 4>, source_offset = 0 : i64, source_strides = array<i64: 1>, target_offset = 0 : i64, target_strides = array<i64: 1>}
  %b = loomrt.alloc {category = "gradient"} : memref<4xf32>
  loomrt.copy ins(%dx : memref<4xf32>) outs(%b : memref<4xf32>) {origin = "all_reduce", shape = array<i64: 4>, source_offset = 0 : i64, source_strides = array<i64: 1>, target_offset = 0 : i64, target_strides = array<i64: 1>}
  loomrt.dealloc %dx : memref<4xf32>
  %h = loomrt.all_reduce_start %b on @mesh grid_axes = [2] {reduction = "sum"} : memref<4xf32>
  loomrt.wait %h
  return
}

// -----

// It does not pass the wait for an all-reduce of its own group, which
// loom-max-inflight-collectives put there to bound the transfers in
// flight.
// CHECK-LABEL: func.func @all_reduce_stops_at_its_groups_wait
// CHECK:      %[[H0:.*]] = loomrt.all_reduce_start
// CHECK-NEXT: loomrt.wait %[[H0]]
// CHECK-NEXT: loomrt.alloc
// CHECK-NEXT: loomrt.copy {{.*}} {origin = "all_reduce"
shard.grid @mesh(shape = 1x1x2)
func.func @all_reduce_stops_at_its_groups_wait(%x: memref<4xf32>, %y: memref<4xf32>) {
  %dx = loomrt.alloc {category = "gradient"} : memref<4xf32>
  loomrt.copy ins(%x : memref<4xf32>) outs(%dx : memref<4xf32>) {origin = "dx", shape = array<i64: 4>, source_offset = 0 : i64, source_strides = array<i64: 1>, target_offset = 0 : i64, target_strides = array<i64: 1>}
  %a = loomrt.alloc {category = "gradient"} : memref<4xf32>
  loomrt.copy ins(%y : memref<4xf32>) outs(%a : memref<4xf32>) {origin = "first", shape = array<i64: 4>, source_offset = 0 : i64, source_strides = array<i64: 1>, target_offset = 0 : i64, target_strides = array<i64: 1>}
  %h0 = loomrt.all_reduce_start %a on @mesh grid_axes = [2] {reduction = "sum"} : memref<4xf32>
  loomrt.wait %h0
  %b = loomrt.alloc {category = "gradient"} : memref<4xf32>
  loomrt.copy ins(%dx : memref<4xf32>) outs(%b : memref<4xf32>) {origin = "all_reduce", shape = array<i64: 4>, source_offset = 0 : i64, source_strides = array<i64: 1>, target_offset = 0 : i64, target_strides = array<i64: 1>}
  %h1 = loomrt.all_reduce_start %b on @mesh grid_axes = [2] {reduction = "sum"} : memref<4xf32>
  loomrt.wait %h1
  return
}

// loom-verify-messages plays the stages' pipeline messages together: a
// wait on a receive passes once the peer started the send, a wait on a
// send once the peer posted the receive.
//
// RUN: not loom-opt %s -split-input-file -loom-verify-messages 2>&1 >/dev/null \
// RUN:   | FileCheck %s
// RUN: not loom-opt %s -split-input-file -loom-verify-messages 2>/dev/null \
// RUN:   | FileCheck %s --check-prefix=FINE

// Stage 0 sends, stage 1 receives and answers, stage 0 receives the
// answer: every stage finishes, the module is printed unchanged.
// FINE-LABEL: func.func @fine0
// FINE: loomrt.send_start {{.*}}tag = 0
// FINE-LABEL: func.func @fine1
// FINE-NOT: func.func @cycle
shard.grid @mesh(shape = 1x2x1)
func.func @fine0() attributes {loom.stage = 0 : i64} {
  %b = loomrt.alloc {category = "activation"} : memref<4xf32>
  %s = loomrt.send_start %b on @mesh grid_axes = [1] {peer = 1 : i64, tag = 0 : i64} : memref<4xf32>
  %r = loomrt.recv_start %b on @mesh grid_axes = [1] {peer = 1 : i64, tag = 1 : i64} : memref<4xf32>
  loomrt.wait %s
  loomrt.wait %r
  return
}
func.func @fine1() attributes {loom.stage = 1 : i64} {
  %b = loomrt.alloc {category = "activation"} : memref<4xf32>
  %r = loomrt.recv_start %b on @mesh grid_axes = [1] {peer = 0 : i64, tag = 0 : i64} : memref<4xf32>
  loomrt.wait %r
  %s = loomrt.send_start %b on @mesh grid_axes = [1] {peer = 0 : i64, tag = 1 : i64} : memref<4xf32>
  loomrt.wait %s
  return
}

// -----

// Each stage waits for the other's message before sending its own.
// CHECK: error: loom-verify-messages: the pipeline stage programs would wait for each other forever: stage 0 waits for its receive from stage 1 (tag 1); stage 1 waits for its receive from stage 0 (tag 0) (a bug in the pass that placed these messages)
// CHECK: note: stage 0 (@cycle0) is stuck here
// CHECK: note: stage 1 (@cycle1) is stuck here
shard.grid @mesh(shape = 1x2x1)
func.func @cycle0() attributes {loom.stage = 0 : i64} {
  %b = loomrt.alloc {category = "activation"} : memref<4xf32>
  %r = loomrt.recv_start %b on @mesh grid_axes = [1] {peer = 1 : i64, tag = 1 : i64} : memref<4xf32>
  loomrt.wait %r
  %s = loomrt.send_start %b on @mesh grid_axes = [1] {peer = 1 : i64, tag = 0 : i64} : memref<4xf32>
  loomrt.wait %s
  return
}
func.func @cycle1() attributes {loom.stage = 1 : i64} {
  %b = loomrt.alloc {category = "activation"} : memref<4xf32>
  %r = loomrt.recv_start %b on @mesh grid_axes = [1] {peer = 0 : i64, tag = 0 : i64} : memref<4xf32>
  loomrt.wait %r
  %s = loomrt.send_start %b on @mesh grid_axes = [1] {peer = 0 : i64, tag = 1 : i64} : memref<4xf32>
  loomrt.wait %s
  return
}

// -----

// A cycle through three stages that no pair shows alone: stage 0 waits
// for tag 1, which stage 1 sends after tag 2, which stage 2 sends after
// tag 3, which stage 1 sends after tag 0, which stage 0 sends after tag 1.
// (Waiting on a send needs only the receive posted: stage 1's wait for
// its send of tag 1 would pass, had it got there.)
// CHECK: error: loom-verify-messages: the pipeline stage programs would wait for each other forever: stage 0 waits for its receive from stage 1 (tag 1); stage 1 waits for its receive from stage 2 (tag 2); stage 2 waits for its receive from stage 1 (tag 3) (a bug
shard.grid @mesh(shape = 1x3x1)
func.func @three0() attributes {loom.stage = 0 : i64} {
  %b = loomrt.alloc {category = "activation"} : memref<4xf32>
  %r = loomrt.recv_start %b on @mesh grid_axes = [1] {peer = 1 : i64, tag = 1 : i64} : memref<4xf32>
  loomrt.wait %r
  %s = loomrt.send_start %b on @mesh grid_axes = [1] {peer = 1 : i64, tag = 0 : i64} : memref<4xf32>
  loomrt.wait %s
  return
}
func.func @three1() attributes {loom.stage = 1 : i64} {
  %b = loomrt.alloc {category = "activation"} : memref<4xf32>
  %r2 = loomrt.recv_start %b on @mesh grid_axes = [1] {peer = 2 : i64, tag = 2 : i64} : memref<4xf32>
  loomrt.wait %r2
  %s1 = loomrt.send_start %b on @mesh grid_axes = [1] {peer = 0 : i64, tag = 1 : i64} : memref<4xf32>
  loomrt.wait %s1
  %r0 = loomrt.recv_start %b on @mesh grid_axes = [1] {peer = 0 : i64, tag = 0 : i64} : memref<4xf32>
  loomrt.wait %r0
  %s3 = loomrt.send_start %b on @mesh grid_axes = [1] {peer = 2 : i64, tag = 3 : i64} : memref<4xf32>
  loomrt.wait %s3
  return
}
func.func @three2() attributes {loom.stage = 2 : i64} {
  %b = loomrt.alloc {category = "activation"} : memref<4xf32>
  %r = loomrt.recv_start %b on @mesh grid_axes = [1] {peer = 1 : i64, tag = 3 : i64} : memref<4xf32>
  loomrt.wait %r
  %s = loomrt.send_start %b on @mesh grid_axes = [1] {peer = 1 : i64, tag = 2 : i64} : memref<4xf32>
  loomrt.wait %s
  return
}

// -----

// A send whose receive the peer never posts: stage 0 cannot pass its wait
// (at worst the message is past the eager limit), though stage 1 ends.
// CHECK: error: loom-verify-messages: the pipeline stage programs would wait for each other forever: stage 0 waits for its send to stage 1 (tag 7), whose receive that stage never posts (a bug
shard.grid @mesh(shape = 1x2x1)
func.func @lost0() attributes {loom.stage = 0 : i64} {
  %b = loomrt.alloc {category = "activation"} : memref<4xf32>
  %s = loomrt.send_start %b on @mesh grid_axes = [1] {peer = 1 : i64, tag = 7 : i64} : memref<4xf32>
  loomrt.wait %s
  return
}
func.func @lost1() attributes {loom.stage = 1 : i64} {
  return
}

// -----

// The same tag twice in one direction: the n-th send matches the n-th
// receive, so stage 1's second wait needs stage 0's second send, which
// stage 0 starts only after stage 1's answer (tag 1), sent after it.
// CHECK: error: loom-verify-messages: {{.*}}stage 0 waits for its receive from stage 1 (tag 1); stage 1 waits for its receive from stage 0 (tag 0) (a bug
shard.grid @mesh(shape = 1x2x1)
func.func @twice0() attributes {loom.stage = 0 : i64} {
  %b = loomrt.alloc {category = "activation"} : memref<4xf32>
  %s = loomrt.send_start %b on @mesh grid_axes = [1] {peer = 1 : i64, tag = 0 : i64} : memref<4xf32>
  loomrt.wait %s
  %r = loomrt.recv_start %b on @mesh grid_axes = [1] {peer = 1 : i64, tag = 1 : i64} : memref<4xf32>
  loomrt.wait %r
  %t = loomrt.send_start %b on @mesh grid_axes = [1] {peer = 1 : i64, tag = 0 : i64} : memref<4xf32>
  loomrt.wait %t
  return
}
func.func @twice1() attributes {loom.stage = 1 : i64} {
  %b = loomrt.alloc {category = "activation"} : memref<4xf32>
  %r = loomrt.recv_start %b on @mesh grid_axes = [1] {peer = 0 : i64, tag = 0 : i64} : memref<4xf32>
  loomrt.wait %r
  %q = loomrt.recv_start %b on @mesh grid_axes = [1] {peer = 0 : i64, tag = 0 : i64} : memref<4xf32>
  loomrt.wait %q
  %s = loomrt.send_start %b on @mesh grid_axes = [1] {peer = 0 : i64, tag = 1 : i64} : memref<4xf32>
  loomrt.wait %s
  return
}

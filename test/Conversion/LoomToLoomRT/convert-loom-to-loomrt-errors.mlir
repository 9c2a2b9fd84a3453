// RUN: loom-opt %s -split-input-file -verify-diagnostics -convert-loom-to-loomrt="function=main"

// expected-error @+1 {{argument #0 has type 'tensor<?x3xf32>'; convert-loom-to-loomrt needs static shapes (run loom-shape-inference first)}}
func.func @main(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %e = loom.exp %x : tensor<?x3xf32>
  return %e : tensor<?x3xf32>
}

// -----

func.func @main(%x: tensor<3xf32>) -> tensor<3xf16> {
  %e = loom.convert %x : tensor<3xf32> -> tensor<3xf16>
  // expected-error @-2 {{result #0 has element type 'f16'; the runtime supports f32, bf16, i64, i32 and i1}}
  return %e : tensor<3xf16>
}

// -----

// expected-error @+1 {{convert-loom-to-loomrt: no function named 'main'}}
module {
  func.func @other(%x: tensor<3xf32>) -> tensor<3xf32> { return %x : tensor<3xf32> }
}

// -----

func.func private @callee(tensor<3xf32>) -> tensor<3xf32>
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{convert-loom-to-loomrt: unsupported op (only loom ops, shard.all_reduce, shard.send and shard.recv can be lowered; inline calls first)}}
  %y = func.call @callee(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

shard.grid @mesh(shape = 1x2x1)
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{convert-loom-to-loomrt: point-to-point transfers need a tag `loom.tag = N : i64` in [0, 32767] (unique per direction within a step)}}
  %s = shard.send %x on @mesh grid_axes = [1] destination = [1] : (tensor<3xf32>) -> tensor<3xf32>
  return %x : tensor<3xf32>
}

// -----

shard.grid @mesh(shape = 1x2x1)
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{convert-loom-to-loomrt: the result of shard.send is used; the runtime's send has no result}}
  %s = shard.send %x on @mesh grid_axes = [1] destination = [1] {loom.tag = 0 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  return %s : tensor<3xf32>
}

// -----

shard.grid @mesh(shape = 2x2x1)
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{convert-loom-to-loomrt: point-to-point transfers need one grid axis and a static peer coordinate}}
  %r = shard.recv %x on @mesh grid_axes = [0, 1] source = [1, 0] {loom.tag = 0 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

shard.grid @mesh(shape = 1x2x1)
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{convert-loom-to-loomrt: a receive result is never used}}
  %r = shard.recv %x on @mesh grid_axes = [1] source = [1] {loom.tag = 0 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  return %x : tensor<3xf32>
}

// -----

// The runtime's communicators are the axes of the device mesh: a collective
// on another grid has no group to run in.
shard.grid @rows(shape = 2)
func.func @main(%x: tensor<4xf32> {loom.name = "x"}) -> (tensor<f32> {loom.name = "loss"}) {
  // expected-error @+1 {{convert-loom-to-loomrt: the runtime communicates along one axis of the device mesh @mesh (grid_axes = [0], [1] or [2]: dp, pp, tp); this op runs on @rows grid_axes = [0]}}
  %a = shard.all_reduce %x on @rows grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  %l = loom.reduce_sum %a, dims = [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

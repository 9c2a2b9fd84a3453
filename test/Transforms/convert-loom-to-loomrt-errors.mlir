// RUN: loom-opt %s -split-input-file -verify-diagnostics -convert-loom-to-loomrt="function=main"

// expected-error @+1 {{argument #0 has type 'tensor<?x3xf32>'; convert-loom-to-loomrt needs static shapes (run loom-shape-inference first)}}
func.func @main(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %e = loom.exp %x : tensor<?x3xf32>
  return %e : tensor<?x3xf32>
}

// -----

func.func @main(%x: tensor<3xf32>) -> tensor<3xbf16> {
  %e = loom.convert %x : tensor<3xf32> -> tensor<3xbf16>
  // expected-error @-2 {{result #0 has element type 'bf16'; the runtime supports f32, i64, i32 and i1}}
  return %e : tensor<3xbf16>
}

// -----

// expected-error @+1 {{convert-loom-to-loomrt: no function named 'main'}}
module {
  func.func @other(%x: tensor<3xf32>) -> tensor<3xf32> { return %x : tensor<3xf32> }
}

// -----

func.func private @callee(tensor<3xf32>) -> tensor<3xf32>
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{convert-loom-to-loomrt: unsupported op (only loom ops and shard.all_reduce can be lowered; inline calls first)}}
  %y = func.call @callee(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}

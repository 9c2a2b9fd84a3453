// loom-tensor-parallel on the forms JAX's StableHLO gives the blocks (see
// loom-tensor-parallel-jax-{mlp,gpt}.mlir for whole models): bias chains of
// broadcasts, softmax as reductions and broadcasts of [.., 1] statistics,
// a fused projection cut by slices. Forms the pass must not accept leave
// the function unchanged.
//
// RUN: loom-opt %s --split-input-file --loom-tensor-parallel="function=main tp=2" \
// RUN:   -verify-diagnostics | FileCheck %s
//
// The first function on 2 ranks with loom-run: loss and gradients (the
// rank's slice of a sliced parameter's) equal the single-device ones.
// RUN: rm -rf %t && mkdir -p %t
// RUN: sed -e '/^\/\/ -----/q' %s > %t/fwd.mlir
// RUN: %loompy %S/Inputs/tensor_parallel.py make %t %t/fwd.mlir
// RUN: loom-opt %t/fwd.mlir --loom-autodiff -o %t/ref.mlir
// RUN: loom-run %t/ref.mlir --entry main_grad --weights %t/weights.safetensors \
// RUN:   --input x=%t/x.npy --output-dir %t/ref
// RUN: loom-opt %t/fwd.mlir --loom-tensor-parallel=tp=2 -o %t/tp2-fwd.mlir
// RUN: loom-opt %t/tp2-fwd.mlir --loom-autodiff -o %t/tp2.mlir
// RUN: %loompy %S/Inputs/tensor_parallel.py slice %t %t/tp2-fwd.mlir
// RUN: loom-run %t/tp2.mlir --entry main_grad --ranks 2 --weights %t/weights.safetensors \
// RUN:   @%t/2.rsp --input x=%t/x.npy --output-dir %t/tp2
// RUN: %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/tp2-fwd.mlir \
// RUN:   %t/tp2/rank0 %t/tp2/rank1 | FileCheck %s --check-prefix=EQ
// Negative control: the same slices without the partial sums' all-reduce.
// RUN: sed -e 's/shard.all_reduce \(%[0-9a-z_]*\) on @mesh grid_axes = \[2\] : \(.*\) -> .*$/loom.reshape \1 : \2 -> \2/' \
// RUN:   %t/tp2-fwd.mlir > %t/no-g.mlir
// RUN: not grep -q shard.all_reduce %t/no-g.mlir
// RUN: loom-opt %t/no-g.mlir --loom-autodiff -o %t/no-g-grad.mlir
// RUN: loom-run %t/no-g-grad.mlir --entry main_grad --ranks 2 --weights %t/weights.safetensors \
// RUN:   @%t/2.rsp --input x=%t/x.npy --output-dir %t/no-g
// RUN: not %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/tp2-fwd.mlir \
// RUN:   %t/no-g/rank0 %t/no-g/rank1 | FileCheck %s --check-prefix=NOG
// EQ: equivalent: yes (tolerance 1e-05, 2 ranks)
// NOG: equivalent: no

// Column-parallel QKV (W [in, out], its bias reshaped to [1, N] as Flax
// does, then broadcast) split by three slices into Q, K, V; the softmax
// over another axis spelled out with keepdims reductions; the row-parallel
// projection back.

// CHECK: shard.grid @mesh(shape = 1x1x2)
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x8xf32> {loom.name = "x"}
// CHECK-SAME: tensor<8x12xf32> {loom.name = "qkv.w", loom.param, loom.shard = #loom.shard<dim = 1, parts = 2, groups = 3>}
// CHECK-SAME: tensor<12xf32> {loom.name = "qkv.b", loom.param, loom.shard = #loom.shard<dim = 0, parts = 2, groups = 3>}
// CHECK-SAME: tensor<4x8xf32> {loom.name = "proj.w", loom.param, loom.shard = #loom.shard<dim = 0, parts = 2>}
// CHECK:      loom.tp_copy %[[X]]
// CHECK:      loom.reshape %{{.*}} : tensor<12xf32> -> tensor<1x12xf32>
// CHECK-NEXT: loom.broadcast %{{.*}}, dims = [0, 1] : tensor<1x12xf32> -> tensor<4x12xf32>
// CHECK-NEXT: %[[QKV:.*]] = loom.add {{.*}} : tensor<4x12xf32>
// CHECK-NEXT: loom.slice %[[QKV]], start = [0, 0], limit = [4, 4], strides = [1, 1] : tensor<4x12xf32> -> tensor<4x4xf32>
// CHECK-NEXT: loom.slice %[[QKV]], start = [0, 4], limit = [4, 8], strides = [1, 1] : tensor<4x12xf32> -> tensor<4x4xf32>
// CHECK-NEXT: loom.slice %[[QKV]], start = [0, 8], limit = [4, 12], strides = [1, 1] : tensor<4x12xf32> -> tensor<4x4xf32>
// The sequence slice keeps the whole (local) sharded dimension.
// CHECK-NEXT: loom.slice {{.*}}, start = [1, 0], limit = [4, 4], strides = [1, 1] : tensor<4x4xf32> -> tensor<3x4xf32>
// CHECK:      loom.reduce_max {{.*}}, dims = [0] keepdims : tensor<4x4xf32> -> tensor<1x4xf32>
// CHECK-NEXT: loom.broadcast {{.*}}, dims = [0, 1] : tensor<1x4xf32> -> tensor<4x4xf32>
// CHECK:      loom.reduce_sum {{.*}}, dims = [0] : tensor<4x4xf32> -> tensor<4xf32>
// CHECK-NEXT: loom.broadcast {{.*}}, dims = [1] : tensor<4xf32> -> tensor<4x4xf32>
// CHECK:      %[[P:.*]] = loom.dot_general {{.*}} : (tensor<4x4xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: shard.all_reduce %[[P]] on @mesh grid_axes = [2]
func.func @main(%x: tensor<4x8xf32> {loom.name = "x"},
                %w: tensor<8x24xf32> {loom.name = "qkv.w", loom.param},
                %b: tensor<24xf32> {loom.name = "qkv.b", loom.param},
                %wo: tensor<8x8xf32> {loom.name = "proj.w", loom.param}) -> tensor<f32> {
  %h = loom.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x24xf32>) -> tensor<4x24xf32>
  %b1 = loom.reshape %b : tensor<24xf32> -> tensor<1x24xf32>
  %b2 = loom.broadcast %b1, dims = [0, 1] : tensor<1x24xf32> -> tensor<4x24xf32>
  %qkv = loom.add %h, %b2 : tensor<4x24xf32>
  %q = loom.slice %qkv, start = [0, 0], limit = [4, 8], strides = [1, 1] : tensor<4x24xf32> -> tensor<4x8xf32>
  %k = loom.slice %qkv, start = [0, 8], limit = [4, 16], strides = [1, 1] : tensor<4x24xf32> -> tensor<4x8xf32>
  %v = loom.slice %qkv, start = [0, 16], limit = [4, 24], strides = [1, 1] : tensor<4x24xf32> -> tensor<4x8xf32>
  %tail = loom.slice %q, start = [1, 0], limit = [4, 8], strides = [1, 1] : tensor<4x8xf32> -> tensor<3x8xf32>
  %t = loom.reduce_sum %tail, dims = [0] : tensor<3x8xf32> -> tensor<8xf32>
  %tb = loom.broadcast %t, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  %qk = loom.mul %k, %tb : tensor<4x8xf32>
  %m = loom.reduce_max %qk, dims = [0] keepdims : tensor<4x8xf32> -> tensor<1x8xf32>
  %mb = loom.broadcast %m, dims = [0, 1] : tensor<1x8xf32> -> tensor<4x8xf32>
  %e = loom.sub %qk, %mb : tensor<4x8xf32>
  %ex = loom.exp %e : tensor<4x8xf32>
  %s = loom.reduce_sum %ex, dims = [0] : tensor<4x8xf32> -> tensor<8xf32>
  %sb = loom.broadcast %s, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  %p = loom.div %ex, %sb : tensor<4x8xf32>
  %pv = loom.mul %p, %v : tensor<4x8xf32>
  %o = loom.dot_general %pv, %wo, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %l = loom.reduce_sum %o, dims = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Slices of unequal parts of the sharded dimension: no block.

// CHECK-NOT: shard.grid
// CHECK-LABEL: func.func @main(
// CHECK-NOT: loom.shard
// CHECK-NOT: tp_copy
// expected-warning @+1 {{loom-tensor-parallel: @main has no attention or MLP block, embedding or LM head to partition}}
func.func @main(%x: tensor<4x8xf32>,
                %w: tensor<8x24xf32> {loom.name = "w", loom.param},
                %wo: tensor<16x8xf32> {loom.name = "wo", loom.param}) -> tensor<f32> {
  %h = loom.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x24xf32>) -> tensor<4x24xf32>
  %a = loom.slice %h, start = [0, 0], limit = [4, 16], strides = [1, 1] : tensor<4x24xf32> -> tensor<4x16xf32>
  %o = loom.dot_general %a, %wo, contracting_dims = [1] x [0] : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %l = loom.reduce_sum %o, dims = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A reduction over the sharded dimension (a softmax over the hidden units)
// would need all of it: no block.

// CHECK-NOT: shard.grid
// CHECK-LABEL: func.func @main(
// CHECK-NOT: loom.shard
// CHECK-NOT: tp_copy
// expected-warning @+1 {{loom-tensor-parallel: @main has no attention or MLP block, embedding or LM head to partition}}
func.func @main(%x: tensor<4x8xf32>,
                %w1: tensor<8x16xf32> {loom.name = "w1", loom.param},
                %w2: tensor<16x8xf32> {loom.name = "w2", loom.param}) -> tensor<f32> {
  %h = loom.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %m = loom.reduce_max %h, dims = [1] : tensor<4x16xf32> -> tensor<4xf32>
  %mb = loom.broadcast %m, dims = [0] : tensor<4xf32> -> tensor<4x16xf32>
  %e = loom.sub %h, %mb : tensor<4x16xf32>
  %o = loom.dot_general %e, %w2, contracting_dims = [1] x [0] : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %l = loom.reduce_sum %o, dims = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The first broadcast of a bias chain also feeds an op outside the block
// (it would see the rank's slice only): no block.

// CHECK-NOT: shard.grid
// CHECK-LABEL: func.func @main(
// CHECK-NOT: loom.shard
// CHECK-NOT: tp_copy
// expected-warning @+1 {{loom-tensor-parallel: @main has no attention or MLP block, embedding or LM head to partition}}
func.func @main(%x: tensor<4x8xf32>,
                %w1: tensor<8x16xf32> {loom.name = "w1", loom.param},
                %b1: tensor<16xf32> {loom.name = "b1", loom.param},
                %w2: tensor<16x8xf32> {loom.name = "w2", loom.param}) -> (tensor<f32>, tensor<1x16xf32>) {
  %h = loom.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %c1 = loom.broadcast %b1, dims = [1] : tensor<16xf32> -> tensor<1x16xf32>
  %c2 = loom.broadcast %c1, dims = [0, 1] : tensor<1x16xf32> -> tensor<4x16xf32>
  %a = loom.add %h, %c2 : tensor<4x16xf32>
  %o = loom.dot_general %a, %w2, contracting_dims = [1] x [0] : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %l = loom.reduce_sum %o, dims = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  return %l, %c1 : tensor<f32>, tensor<1x16xf32>
}

// -----

// tp does not divide a third of the fused projection's slices.

func.func @main(%x: tensor<4x8xf32>,
                %w: tensor<8x9xf32> {loom.name = "qkv.w", loom.param},
                %wo: tensor<3x8xf32> {loom.name = "proj.w", loom.param}) -> tensor<f32> {
  // expected-error @+1 {{loom-tensor-parallel: tp=2 does not divide dimension 1 (size 9, 3 blocks of 3) of the parameter 'qkv.w' (argument #1)}}
  %h = loom.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x9xf32>) -> tensor<4x9xf32>
  %q = loom.slice %h, start = [0, 0], limit = [4, 3], strides = [1, 1] : tensor<4x9xf32> -> tensor<4x3xf32>
  %k = loom.slice %h, start = [0, 3], limit = [4, 6], strides = [1, 1] : tensor<4x9xf32> -> tensor<4x3xf32>
  %qk = loom.mul %q, %k : tensor<4x3xf32>
  %o = loom.dot_general %qk, %wo, contracting_dims = [1] x [0] : (tensor<4x3xf32>, tensor<3x8xf32>) -> tensor<4x8xf32>
  %l = loom.reduce_sum %o, dims = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}

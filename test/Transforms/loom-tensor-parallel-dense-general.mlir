// loom-tensor-parallel on Flax's attention (nn.MultiHeadDotProductAttention
// as the StableHLO import writes it): the q/k/v projections are
// DenseGeneral layers with kernels [in, heads, head_dim] and biases [heads,
// head_dim], contracted on their first dimension, so the heads are a
// dimension of the projection's result from the start (no reshape splits
// them); the output projection contracts [B, S, heads, head_dim] with a
// kernel [heads, head_dim, out] on both. The kernels are cut on the heads
// (q/k/v dim 1, the output's dim 0), the biases on dim 0; loom-run --ranks
// 2 gives the single-device loss and gradients.
//
// RUN: loom-opt %s --loom-tensor-parallel=tp=2 | FileCheck %s
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %loompy %S/Inputs/tensor_parallel.py make %t %s --classes 4
// RUN: loom-opt %s --loom-autodiff -o %t/ref.mlir
// RUN: loom-run %t/ref.mlir --entry main_grad --weights %t/weights.safetensors \
// RUN:   --input x=%t/x.npy --output-dir %t/ref
// RUN: loom-opt %s --loom-tensor-parallel=tp=2 -o %t/tp2-fwd.mlir
// RUN: loom-opt %t/tp2-fwd.mlir --loom-autodiff -o %t/tp2.mlir
// RUN: %loompy %S/Inputs/tensor_parallel.py slice %t %t/tp2-fwd.mlir
// RUN: loom-run %t/tp2.mlir --entry main_grad --ranks 2 --weights %t/weights.safetensors \
// RUN:   @%t/2.rsp --input x=%t/x.npy --output-dir %t/tp2
// RUN: %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/tp2-fwd.mlir \
// RUN:   %t/tp2/rank0 %t/tp2/rank1 | FileCheck %s --check-prefix=EQ

// CHECK-LABEL: func.func @main(
// CHECK-SAME: tensor<8x2x2xf32> {loom.name = "query.kernel", loom.param, loom.shard = #loom.shard<dim = 1, parts = 2>}
// CHECK-SAME: tensor<2x2xf32> {loom.name = "query.bias", loom.param, loom.shard = #loom.shard<dim = 0, parts = 2>}
// CHECK-SAME: tensor<8x2x2xf32> {loom.name = "key.kernel", loom.param, loom.shard = #loom.shard<dim = 1, parts = 2>}
// CHECK-SAME: tensor<8x2x2xf32> {loom.name = "value.kernel", loom.param, loom.shard = #loom.shard<dim = 1, parts = 2>}
// CHECK-SAME: tensor<2x2x8xf32> {loom.name = "out.kernel", loom.param, loom.shard = #loom.shard<dim = 0, parts = 2>}
// CHECK-SAME: tensor<8xf32> {loom.name = "out.bias", loom.param}
// CHECK: loom.tp_copy
// CHECK: loom.dot_general %{{.*}}, contracting_dims = [2] x [0] : (tensor<2x3x8xf32>, tensor<8x2x2xf32>) -> tensor<2x3x2x2xf32>
// CHECK: loom.dot_general %{{.*}}, contracting_dims = [2, 3] x [0, 1] : (tensor<2x3x2x2xf32>, tensor<2x2x8xf32>) -> tensor<2x3x8xf32>
// CHECK-NEXT: shard.all_reduce
// EQ: equivalent: yes

module {
  func.func @main(
      %x: tensor<2x3x8xf32> {loom.name = "x"},
      %wq: tensor<8x4x2xf32> {loom.param, loom.name = "query.kernel"},
      %bq: tensor<4x2xf32> {loom.param, loom.name = "query.bias"},
      %wk: tensor<8x4x2xf32> {loom.param, loom.name = "key.kernel"},
      %wv: tensor<8x4x2xf32> {loom.param, loom.name = "value.kernel"},
      %wo: tensor<4x2x8xf32> {loom.param, loom.name = "out.kernel"},
      %bo: tensor<8xf32> {loom.param, loom.name = "out.bias"})
      -> (tensor<f32> {loom.name = "loss"}) {
    // [B, S, heads, head_dim], the bias reshaped to [1, 1, heads, head_dim]
    // and broadcast as Flax writes it.
    %q0 = loom.dot_general %x, %wq, contracting_dims = [2] x [0] : (tensor<2x3x8xf32>, tensor<8x4x2xf32>) -> tensor<2x3x4x2xf32>
    %bq1 = loom.reshape %bq : tensor<4x2xf32> -> tensor<1x1x4x2xf32>
    %bq2 = loom.broadcast %bq1, dims = [0, 1, 2, 3] : tensor<1x1x4x2xf32> -> tensor<2x3x4x2xf32>
    %q = loom.add %q0, %bq2 : tensor<2x3x4x2xf32>
    %k = loom.dot_general %x, %wk, contracting_dims = [2] x [0] : (tensor<2x3x8xf32>, tensor<8x4x2xf32>) -> tensor<2x3x4x2xf32>
    %v = loom.dot_general %x, %wv, contracting_dims = [2] x [0] : (tensor<2x3x8xf32>, tensor<8x4x2xf32>) -> tensor<2x3x4x2xf32>
    // Scores 'bqhd,bkhd->bhqk' and the weighted values 'bhqk,bkhd->bqhd'.
    %s = loom.dot_general %q, %k, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3] : (tensor<2x3x4x2xf32>, tensor<2x3x4x2xf32>) -> tensor<2x4x3x3xf32>
    %p = loom.softmax %s, axis = 3 : tensor<2x4x3x3xf32>
    %a0 = loom.dot_general %p, %v, batching_dims = [0, 1] x [0, 2], contracting_dims = [3] x [1] : (tensor<2x4x3x3xf32>, tensor<2x3x4x2xf32>) -> tensor<2x4x3x2xf32>
    %a = loom.transpose %a0, permutation = [0, 2, 1, 3] : tensor<2x4x3x2xf32> -> tensor<2x3x4x2xf32>
    %o0 = loom.dot_general %a, %wo, contracting_dims = [2, 3] x [0, 1] : (tensor<2x3x4x2xf32>, tensor<4x2x8xf32>) -> tensor<2x3x8xf32>
    %bo1 = loom.broadcast %bo, dims = [2] : tensor<8xf32> -> tensor<2x3x8xf32>
    %o = loom.add %o0, %bo1 : tensor<2x3x8xf32>
    %t = loom.tanh %o : tensor<2x3x8xf32>
    %loss = loom.reduce_sum %t, dims = [0, 1, 2] : tensor<2x3x8xf32> -> tensor<f32>
    return %loss : tensor<f32>
  }
}

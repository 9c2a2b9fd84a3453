// loom-tensor-parallel through attention whose batch and heads are merged
// into one dimension, as torch.onnx.export(dynamo=True) writes the key's
// transpose ([B, h, S, D] -> [B*h, S, D] -> transpose -> [B, h, D, S]): the
// merged dimension is cut in B groups (rank r holds, for every batch row,
// its heads), and splitting it back gives the heads cut whole again. The
// grouped-query form merges the repeated kv heads too ([B, kv, rep, S, D]
// -> [B*kv*rep, S, D]). loom-run --ranks 2 gives the single-device loss
// and gradients.
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
// CHECK-SAME: tensor<8x8xf32> {loom.name = "q.weight", loom.param, loom.shard = #loom.shard<dim = 1, parts = 2>}
// CHECK-SAME: tensor<8x4xf32> {loom.name = "k.weight", loom.param, loom.shard = #loom.shard<dim = 1, parts = 2>}
// CHECK-SAME: tensor<8x4xf32> {loom.name = "v.weight", loom.param, loom.shard = #loom.shard<dim = 1, parts = 2>}
// CHECK-SAME: tensor<8x8xf32> {loom.name = "o.weight", loom.param, loom.shard = #loom.shard<dim = 0, parts = 2>}
// The key: 1 kv head of 2 per rank, repeated twice, merged with the batch.
// CHECK: loom.reshape %{{.*}} : tensor<2x1x2x3x4xf32> -> tensor<4x3x4xf32>
// CHECK: loom.transpose %{{.*}}, permutation = [0, 2, 1] : tensor<4x3x4xf32> -> tensor<4x4x3xf32>
// CHECK: loom.reshape %{{.*}} : tensor<4x4x3xf32> -> tensor<2x2x4x3xf32>
// CHECK: shard.all_reduce
// EQ: equivalent: yes

module {
  func.func @main(
      %x: tensor<2x3x8xf32> {loom.name = "x"},
      %wq: tensor<8x16xf32> {loom.param, loom.name = "q.weight"},
      %wk: tensor<8x8xf32> {loom.param, loom.name = "k.weight"},
      %wv: tensor<8x8xf32> {loom.param, loom.name = "v.weight"},
      %wo: tensor<16x8xf32> {loom.param, loom.name = "o.weight"})
      -> (tensor<f32> {loom.name = "loss"}) {
    // q: [B, S, 4 heads, 4] -> [B, 4, S, 4]
    %q0 = loom.dot_general %x, %wq, contracting_dims = [2] x [0] : (tensor<2x3x8xf32>, tensor<8x16xf32>) -> tensor<2x3x16xf32>
    %q1 = loom.reshape %q0 : tensor<2x3x16xf32> -> tensor<2x3x4x4xf32>
    %q = loom.transpose %q1, permutation = [0, 2, 1, 3] : tensor<2x3x4x4xf32> -> tensor<2x4x3x4xf32>
    // k, v: 2 kv heads, each repeated twice.
    %k0 = loom.dot_general %x, %wk, contracting_dims = [2] x [0] : (tensor<2x3x8xf32>, tensor<8x8xf32>) -> tensor<2x3x8xf32>
    %k1 = loom.reshape %k0 : tensor<2x3x8xf32> -> tensor<2x3x2x4xf32>
    %k2 = loom.transpose %k1, permutation = [0, 2, 1, 3] : tensor<2x3x2x4xf32> -> tensor<2x2x3x4xf32>
    %k3 = loom.reshape %k2 : tensor<2x2x3x4xf32> -> tensor<2x2x1x3x4xf32>
    %k4 = loom.broadcast %k3, dims = [0, 1, 2, 3, 4] : tensor<2x2x1x3x4xf32> -> tensor<2x2x2x3x4xf32>
    %kf = loom.reshape %k4 : tensor<2x2x2x3x4xf32> -> tensor<8x3x4xf32>
    %kt = loom.transpose %kf, permutation = [0, 2, 1] : tensor<8x3x4xf32> -> tensor<8x4x3xf32>
    %k = loom.reshape %kt : tensor<8x4x3xf32> -> tensor<2x4x4x3xf32>
    %v0 = loom.dot_general %x, %wv, contracting_dims = [2] x [0] : (tensor<2x3x8xf32>, tensor<8x8xf32>) -> tensor<2x3x8xf32>
    %v1 = loom.reshape %v0 : tensor<2x3x8xf32> -> tensor<2x3x2x4xf32>
    %v2 = loom.transpose %v1, permutation = [0, 2, 1, 3] : tensor<2x3x2x4xf32> -> tensor<2x2x3x4xf32>
    %v3 = loom.reshape %v2 : tensor<2x2x3x4xf32> -> tensor<2x2x1x3x4xf32>
    %v4 = loom.broadcast %v3, dims = [0, 1, 2, 3, 4] : tensor<2x2x1x3x4xf32> -> tensor<2x2x2x3x4xf32>
    %v = loom.reshape %v4 : tensor<2x2x2x3x4xf32> -> tensor<2x4x3x4xf32>
    %s = loom.dot_general %q, %k, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] : (tensor<2x4x3x4xf32>, tensor<2x4x4x3xf32>) -> tensor<2x4x3x3xf32>
    %p = loom.softmax %s, axis = 3 : tensor<2x4x3x3xf32>
    %a = loom.dot_general %p, %v, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] : (tensor<2x4x3x3xf32>, tensor<2x4x3x4xf32>) -> tensor<2x4x3x4xf32>
    %a1 = loom.transpose %a, permutation = [0, 2, 1, 3] : tensor<2x4x3x4xf32> -> tensor<2x3x4x4xf32>
    %a2 = loom.reshape %a1 : tensor<2x3x4x4xf32> -> tensor<2x3x16xf32>
    %o = loom.dot_general %a2, %wo, contracting_dims = [2] x [0] : (tensor<2x3x16xf32>, tensor<16x8xf32>) -> tensor<2x3x8xf32>
    %t = loom.tanh %o : tensor<2x3x8xf32>
    %loss = loom.reduce_sum %t, dims = [0, 1, 2] : tensor<2x3x8xf32> -> tensor<f32>
    return %loss : tensor<f32>
  }
}

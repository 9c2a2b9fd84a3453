// loom-tensor-parallel on LLaMA-style attention with rotary position
// embeddings: separate q/k/v projections, rotate_half (two slices of the
// head dimension joined by a loom.concat) and non-uniform cos/sin tables
// broadcast over the heads. The heads are sharded through the rotation: the
// concat joins each rank's parts, the tables are rebuilt in the local shape,
// and with loom-run --ranks every rank's loss and gradients equal the
// single-device ones (a sliced parameter's gradient: the rank's slice).
//
// RUN: loom-opt %s --loom-tensor-parallel=tp=2 | FileCheck %s

// RUN: rm -rf %t && mkdir -p %t
// RUN: %loompy %S/Inputs/tensor_parallel.py make %t %s --classes 10
// RUN: loom-opt %s --loom-autodiff -o %t/ref.mlir
// RUN: loom-run %t/ref.mlir --entry main_grad --weights %t/weights.safetensors \
// RUN:   --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/ref
// RUN: loom-opt %s --loom-tensor-parallel=tp=2 -o %t/tp2-fwd.mlir
// RUN: loom-opt %t/tp2-fwd.mlir --loom-autodiff -o %t/tp2.mlir
// RUN: %loompy %S/Inputs/tensor_parallel.py slice %t %t/tp2-fwd.mlir
// RUN: loom-run %t/tp2.mlir --entry main_grad --ranks 2 --weights %t/weights.safetensors \
// RUN:   @%t/2.rsp --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/tp2
// RUN: %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/tp2-fwd.mlir \
// RUN:   %t/tp2/rank0 %t/tp2/rank1 | FileCheck %s --check-prefix=EQ

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[WQ:[a-z0-9]+]]: tensor<16x8xf32> {loom.name = "wq", loom.param, loom.shard = #loom.shard<dim = 1, parts = 2>}
// CHECK-SAME: %[[WK:[a-z0-9]+]]: tensor<16x8xf32> {loom.name = "wk", loom.param, loom.shard = #loom.shard<dim = 1, parts = 2>}
// CHECK-SAME: %[[WV:[a-z0-9]+]]: tensor<16x8xf32> {loom.name = "wv", loom.param, loom.shard = #loom.shard<dim = 1, parts = 2>}
// CHECK-SAME: %[[WO:[a-z0-9]+]]: tensor<8x16xf32> {loom.name = "wo", loom.param, loom.shard = #loom.shard<dim = 0, parts = 2>}
// CHECK-SAME: tensor<16x10xf32> {loom.name = "head", loom.param})
// CHECK:      %[[F:.*]] = loom.tp_copy
// CHECK-NEXT: loom.dot_general %[[F]], %[[WQ]], {{.*}} -> tensor<2x4x8xf32>
// Two of the four heads per rank, rotated on the rank.
// CHECK:      loom.broadcast %{{.*}}, dims = [2, 3] : tensor<4x4xf32> -> tensor<2x2x4x4xf32>
// CHECK:      loom.slice {{.*}} : tensor<2x2x4x4xf32> -> tensor<2x2x4x2xf32>
// CHECK:      loom.concat {{.*}} dim = 3 : (tensor<2x2x4x2xf32>, tensor<2x2x4x2xf32>) -> tensor<2x2x4x4xf32>
// CHECK:      loom.softmax {{.*}} : tensor<2x2x4x4xf32>
// CHECK:      %[[PO:.*]] = loom.dot_general %{{.*}}, %[[WO]], {{.*}} -> tensor<2x4x16xf32>
// CHECK-NEXT: shard.all_reduce %[[PO]] on @mesh grid_axes = [2]
// CHECK-NOT:  shard.all_reduce
// CHECK:      return

// EQ: grad.wq (sliced)
// EQ: equivalent: yes

module {
  func.func @main(
      %ids: tensor<2x4xi64> {loom.name = "ids"},
      %labels: tensor<2x4xi64> {loom.name = "labels"},
      %emb: tensor<10x16xf32> {loom.param, loom.name = "embed"},
      %wq: tensor<16x16xf32> {loom.param, loom.name = "wq"},
      %wk: tensor<16x16xf32> {loom.param, loom.name = "wk"},
      %wv: tensor<16x16xf32> {loom.param, loom.name = "wv"},
      %wo: tensor<16x16xf32> {loom.param, loom.name = "wo"},
      %head: tensor<16x10xf32> {loom.param, loom.name = "head"})
      -> (tensor<f32> {loom.name = "loss"}) {
    %x = loom.gather %emb[%ids], axis = 0 : (tensor<10x16xf32>, tensor<2x4xi64>) -> tensor<2x4x16xf32>
    %cos = loom.constant dense<[[1.0, 1.0, 1.0, 1.0], [0.54, 0.99, 0.54, 0.99], [-0.41, 0.98, -0.41, 0.98], [-0.99, 0.95, -0.99, 0.95]]> : tensor<4x4xf32>
    %sin = loom.constant dense<[[0.0, 0.0, 0.0, 0.0], [0.84, 0.1, 0.84, 0.1], [0.91, 0.2, 0.91, 0.2], [0.14, 0.3, 0.14, 0.3]]> : tensor<4x4xf32>
    %q_pos = loom.iota dim = 0 : tensor<4x4xi64>
    %k_pos = loom.iota dim = 1 : tensor<4x4xi64>
    %causal = loom.compare le, %k_pos, %q_pos : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %mask = loom.broadcast %causal, dims = [2, 3] : tensor<4x4xi1> -> tensor<2x4x4x4xi1>
    %masked = loom.constant dense<-1.000000000e+09> : tensor<2x4x4x4xf32>
    %scale = loom.constant dense<5.000000000e-01> : tensor<2x4x4x4xf32>
    %cos_b = loom.broadcast %cos, dims = [2, 3] : tensor<4x4xf32> -> tensor<2x4x4x4xf32>
    %sin_b = loom.broadcast %sin, dims = [2, 3] : tensor<4x4xf32> -> tensor<2x4x4x4xf32>
    %q_mm = loom.dot_general %x, %wq, contracting_dims = [2] x [0] : (tensor<2x4x16xf32>, tensor<16x16xf32>) -> tensor<2x4x16xf32>
    %k_mm = loom.dot_general %x, %wk, contracting_dims = [2] x [0] : (tensor<2x4x16xf32>, tensor<16x16xf32>) -> tensor<2x4x16xf32>
    %v_mm = loom.dot_general %x, %wv, contracting_dims = [2] x [0] : (tensor<2x4x16xf32>, tensor<16x16xf32>) -> tensor<2x4x16xf32>
    %q_r = loom.reshape %q_mm : tensor<2x4x16xf32> -> tensor<2x4x4x4xf32>
    %k_r = loom.reshape %k_mm : tensor<2x4x16xf32> -> tensor<2x4x4x4xf32>
    %v_r = loom.reshape %v_mm : tensor<2x4x16xf32> -> tensor<2x4x4x4xf32>
    %q = loom.transpose %q_r, permutation = [0, 2, 1, 3] : tensor<2x4x4x4xf32> -> tensor<2x4x4x4xf32>
    %k = loom.transpose %k_r, permutation = [0, 2, 1, 3] : tensor<2x4x4x4xf32> -> tensor<2x4x4x4xf32>
    %v = loom.transpose %v_r, permutation = [0, 2, 1, 3] : tensor<2x4x4x4xf32> -> tensor<2x4x4x4xf32>
    // rotate_half(q) = concat(-q[..., 2:], q[..., :2])
    %q_hi = loom.slice %q, start = [0, 0, 0, 2], limit = [2, 4, 4, 4], strides = [1, 1, 1, 1] : tensor<2x4x4x4xf32> -> tensor<2x4x4x2xf32>
    %q_lo = loom.slice %q, start = [0, 0, 0, 0], limit = [2, 4, 4, 2], strides = [1, 1, 1, 1] : tensor<2x4x4x4xf32> -> tensor<2x4x4x2xf32>
    %q_neg = loom.neg %q_hi : tensor<2x4x4x2xf32>
    %q_rot = loom.concat %q_neg, %q_lo dim = 3 : (tensor<2x4x4x2xf32>, tensor<2x4x4x2xf32>) -> tensor<2x4x4x4xf32>
    %q_c = loom.mul %q, %cos_b : tensor<2x4x4x4xf32>
    %q_s = loom.mul %q_rot, %sin_b : tensor<2x4x4x4xf32>
    %q_e = loom.add %q_c, %q_s : tensor<2x4x4x4xf32>
    %k_hi = loom.slice %k, start = [0, 0, 0, 2], limit = [2, 4, 4, 4], strides = [1, 1, 1, 1] : tensor<2x4x4x4xf32> -> tensor<2x4x4x2xf32>
    %k_lo = loom.slice %k, start = [0, 0, 0, 0], limit = [2, 4, 4, 2], strides = [1, 1, 1, 1] : tensor<2x4x4x4xf32> -> tensor<2x4x4x2xf32>
    %k_neg = loom.neg %k_hi : tensor<2x4x4x2xf32>
    %k_rot = loom.concat %k_neg, %k_lo dim = 3 : (tensor<2x4x4x2xf32>, tensor<2x4x4x2xf32>) -> tensor<2x4x4x4xf32>
    %k_c = loom.mul %k, %cos_b : tensor<2x4x4x4xf32>
    %k_s = loom.mul %k_rot, %sin_b : tensor<2x4x4x4xf32>
    %k_e = loom.add %k_c, %k_s : tensor<2x4x4x4xf32>
    %scores = loom.dot_general %q_e, %k_e, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : (tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
    %scaled = loom.mul %scores, %scale : tensor<2x4x4x4xf32>
    %sel = loom.select %mask, %scaled, %masked : tensor<2x4x4x4xi1>, tensor<2x4x4x4xf32>
    %p = loom.softmax %sel, axis = 3 : tensor<2x4x4x4xf32>
    %ctx = loom.dot_general %p, %v, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] : (tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
    %ctx_t = loom.transpose %ctx, permutation = [0, 2, 1, 3] : tensor<2x4x4x4xf32> -> tensor<2x4x4x4xf32>
    %ctx_r = loom.reshape %ctx_t : tensor<2x4x4x4xf32> -> tensor<2x4x16xf32>
    %o = loom.dot_general %ctx_r, %wo, contracting_dims = [2] x [0] : (tensor<2x4x16xf32>, tensor<16x16xf32>) -> tensor<2x4x16xf32>
    %y = loom.add %x, %o : tensor<2x4x16xf32>
    %logits = loom.dot_general %y, %head, contracting_dims = [2] x [0] : (tensor<2x4x16xf32>, tensor<16x10xf32>) -> tensor<2x4x10xf32>
    %loss = loom.cross_entropy %logits, %labels reduction = mean : (tensor<2x4x10xf32>, tensor<2x4xi64>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// loom-tensor-parallel on JAX's GPT (test/python/models/jax_models.py: gpt,
// one block, 4 heads, hidden 16, vocabulary 10, batch 2, sequence 4) as it
// arrives through StableHLO (Inputs/jax_gpt.stablehlo.mlir, written by
// Inputs/make_jax_tp.py): weights in [in, out] layout, biases as chains of
// broadcast_in_dim, the fused QKV projection split by three slices, heads
// by reshape + transpose around batched dot_generals, the softmax spelled
// out (reduce_max, exp, reduce_sum and broadcasts of the [.., 1]
// statistics), the causal mask a broadcast. With loom-run --ranks, every
// rank's loss and gradients equal the single-device ones.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: sed -n '1s|^// ||p' %S/Inputs/jax_gpt.stablehlo.mlir > %t/names.rsp
// RUN: loom-translate --import-stablehlo %S/Inputs/jax_gpt.stablehlo.mlir @%t/names.rsp \
// RUN:   '--trainable=params[.].*' \
// RUN: | loom-opt --pass-pipeline='builtin.module(inline, symbol-dce, loom-shape-inference)' \
// RUN:   -o %t/fwd.mlir
// RUN: loom-opt %t/fwd.mlir --loom-tensor-parallel=tp=2 -o %t/tp2-fwd.mlir
// RUN: FileCheck %s < %t/tp2-fwd.mlir
//
// RUN: %loompy %S/Inputs/tensor_parallel.py make %t %t/fwd.mlir
// RUN: loom-opt %t/fwd.mlir --loom-autodiff -o %t/ref.mlir
// RUN: loom-run %t/ref.mlir --entry main_grad --weights %t/weights.safetensors \
// RUN:   --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/ref
//
// tp=2, then the backward pass.
// RUN: loom-opt %t/tp2-fwd.mlir --loom-autodiff -o %t/tp2.mlir
// RUN: FileCheck %s --check-prefix=GRAD < %t/tp2.mlir
// RUN: %loompy %S/Inputs/tensor_parallel.py slice %t %t/tp2-fwd.mlir
// RUN: loom-run %t/tp2.mlir --entry main_grad --ranks 2 --weights %t/weights.safetensors \
// RUN:   @%t/2.rsp --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/tp2
// RUN: %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/tp2-fwd.mlir \
// RUN:   %t/tp2/rank0 %t/tp2/rank1 | FileCheck %s --check-prefix=EQ
//
// tp=4: one head per rank.
// RUN: loom-opt %t/fwd.mlir --loom-tensor-parallel=tp=4 -o %t/tp4-fwd.mlir
// RUN: loom-opt %t/tp4-fwd.mlir --loom-autodiff -o %t/tp4.mlir
// RUN: %loompy %S/Inputs/tensor_parallel.py slice %t %t/tp4-fwd.mlir
// RUN: loom-run %t/tp4.mlir --entry main_grad --ranks 4 --weights %t/weights.safetensors \
// RUN:   @%t/4.rsp --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/tp4
// RUN: %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/tp4-fwd.mlir \
// RUN:   %t/tp4/rank0 %t/tp4/rank1 %t/tp4/rank2 %t/tp4/rank3 | FileCheck %s --check-prefix=EQ4
//
// The comparison has teeth: without the backward all-reduce of loom.tp_copy
// (here: the op replaced by its operand), the gradients of the parameters
// before the blocks are one rank's share only.
// RUN: sed -e 's/loom.tp_copy \(%[0-9]*\) on @mesh grid_axes = \[2\] : \(.*\)$/loom.reshape \1 : \2 -> \2/' \
// RUN:   %t/tp2-fwd.mlir > %t/no-f.mlir
// RUN: not grep -q loom.tp_copy %t/no-f.mlir
// RUN: loom-opt %t/no-f.mlir --loom-autodiff -o %t/no-f-grad.mlir
// RUN: loom-run %t/no-f-grad.mlir --entry main_grad --ranks 2 --weights %t/weights.safetensors \
// RUN:   @%t/2.rsp --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/no-f
// RUN: not %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/tp2-fwd.mlir \
// RUN:   %t/no-f/rank0 %t/no-f/rank1 | FileCheck %s --check-prefix=NOF

// CHECK: shard.grid @mesh(shape = 1x1x2)
// CHECK-LABEL: func.func public @main(
// CHECK-SAME: %[[B1:[a-z0-9]+]]: tensor<32xf32> {loom.name = "params.blocks.0.fc.b", loom.param, loom.shard = #loom.shard<dim = 0, parts = 2>}
// CHECK-SAME: %[[W1:[a-z0-9]+]]: tensor<16x32xf32> {loom.name = "params.blocks.0.fc.w", loom.param, loom.shard = #loom.shard<dim = 1, parts = 2>}
// CHECK-SAME: tensor<16xf32> {loom.name = "params.blocks.0.out.b", loom.param}
// CHECK-SAME: %[[W2:[a-z0-9]+]]: tensor<32x16xf32> {loom.name = "params.blocks.0.out.w", loom.param, loom.shard = #loom.shard<dim = 0, parts = 2>}
// CHECK-SAME: tensor<16xf32> {loom.name = "params.blocks.0.proj.b", loom.param}
// CHECK-SAME: %[[WO:[a-z0-9]+]]: tensor<8x16xf32> {loom.name = "params.blocks.0.proj.w", loom.param, loom.shard = #loom.shard<dim = 0, parts = 2>}
// CHECK-SAME: %[[BQKV:[a-z0-9]+]]: tensor<24xf32> {loom.name = "params.blocks.0.qkv.b", loom.param, loom.shard = #loom.shard<dim = 0, parts = 2, groups = 3>}
// CHECK-SAME: %[[WQKV:[a-z0-9]+]]: tensor<16x24xf32> {loom.name = "params.blocks.0.qkv.w", loom.param, loom.shard = #loom.shard<dim = 1, parts = 2, groups = 3>}
// CHECK-SAME: tensor<10x16xf32> {loom.name = "params.wte", loom.param}
// Attention: two of the four heads per rank; the Q, K, V slices take the
// rank's part of each third.
// CHECK-NOT:  loom.tp_copy
// CHECK:      %[[F1:.*]] = loom.tp_copy %{{.*}} on @mesh grid_axes = [2] : tensor<2x4x16xf32>
// CHECK-NEXT: %[[QKV:.*]] = loom.dot_general %[[F1]], %[[WQKV]], contracting_dims = [2] x [0] : {{.*}} -> tensor<2x4x24xf32>
// CHECK-NEXT: loom.broadcast %[[BQKV]], dims = [2] : tensor<24xf32> -> tensor<1x1x24xf32>
// CHECK-NEXT: loom.broadcast {{.*}} : tensor<1x1x24xf32> -> tensor<2x4x24xf32>
// CHECK-NEXT: %[[QKVB:.*]] = loom.add %[[QKV]],
// CHECK-NEXT: loom.slice %[[QKVB]], start = [0, 0, 0], limit = [2, 4, 8], strides = [1, 1, 1] : tensor<2x4x24xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT: loom.slice %[[QKVB]], start = [0, 0, 8], limit = [2, 4, 16], strides = [1, 1, 1]
// CHECK-NEXT: loom.slice %[[QKVB]], start = [0, 0, 16], limit = [2, 4, 24], strides = [1, 1, 1]
// CHECK-NEXT: loom.reshape {{.*}} : tensor<2x4x8xf32> -> tensor<2x4x2x4xf32>
// CHECK:      loom.dot_general {{.*}} batching_dims = [0, 1] x [0, 1], {{.*}} -> tensor<2x2x4x4xf32>
// CHECK:      loom.broadcast {{.*}}, dims = [] : tensor<f32> -> tensor<2x2x4x4xf32>
// CHECK:      loom.broadcast {{.*}}, dims = [2, 3] : tensor<4x4xi1> -> tensor<2x2x4x4xi1>
// CHECK:      loom.reduce_max {{.*}}, dims = [3] : tensor<2x2x4x4xf32> -> tensor<2x2x4xf32>
// CHECK:      loom.reduce_sum {{.*}}, dims = [3] : tensor<2x2x4x4xf32> -> tensor<2x2x4xf32>
// CHECK:      loom.reshape {{.*}} : tensor<2x4x2x4xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[PO:.*]] = loom.dot_general %{{.*}}, %[[WO]], contracting_dims = [2] x [0] : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
// CHECK-NEXT: %[[RO:.*]] = shard.all_reduce %[[PO]] on @mesh grid_axes = [2] : tensor<2x4x16xf32> -> tensor<2x4x16xf32>
// CHECK-NEXT: loom.add %{{.*}}, %[[RO]] : tensor<2x4x16xf32>
// MLP: half of the 64 hidden units per rank.
// CHECK:      %[[F2:.*]] = loom.tp_copy
// CHECK-NEXT: loom.dot_general %[[F2]], %[[W1]], contracting_dims = [2] x [0] : (tensor<2x4x16xf32>, tensor<16x32xf32>) -> tensor<2x4x32xf32>
// CHECK-NEXT: loom.broadcast %[[B1]], dims = [2] : tensor<32xf32> -> tensor<1x1x32xf32>
// CHECK:      loom.erf {{.*}} : tensor<2x4x32xf32>
// CHECK:      %[[P2:.*]] = loom.dot_general %{{.*}}, %[[W2]], contracting_dims = [2] x [0] : (tensor<2x4x32xf32>, tensor<32x16xf32>) -> tensor<2x4x16xf32>
// CHECK-NEXT: shard.all_reduce %[[P2]] on @mesh grid_axes = [2]
// The tied LM head and the cross-entropy stay replicated.
// CHECK:      loom.dot_general {{.*}} -> tensor<2x4x10xf32>
// CHECK-NOT:  shard.all_reduce
// CHECK:      return

// The backward pass: the two forward all-reduces and those of the two f's.
// GRAD-LABEL: func.func public @main_grad(
// GRAD-COUNT-4: shard.all_reduce
// GRAD-NOT:     shard.all_reduce
// GRAD:         return

// EQ: loss (full): max abs diff
// EQ: equivalent: yes (tolerance 1e-05, 2 ranks)
// EQ4: equivalent: yes (tolerance 1e-05, 4 ranks)
// NOF: grad.params.wte (full)
// NOF: equivalent: no

// loom-tensor-parallel on a 1-layer GPT (python -m loom.models.gpt --layers 1
// --hidden 16 --heads 4 --seq 4 --vocab 10 --batch 2): the per-rank IR, and
// with loom-run --ranks, every rank's loss and gradients equal the
// single-device ones (a sliced parameter's gradient: the rank's slice). The
// tied embedding and LM head stay whole: they are loom-vocab-parallel's,
// which runs next (loom-vocab-parallel-gpt.mlir runs both on this model).
//
// RUN: loom-opt %s --loom-tensor-parallel=tp=2 | FileCheck %s
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %loompy %S/Inputs/tensor_parallel.py make %t %s
// RUN: loom-opt %s --loom-autodiff -o %t/ref.mlir
// RUN: loom-run %t/ref.mlir --entry main_grad --weights %t/weights.safetensors \
// RUN:   --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/ref
//
// tp=2, then the backward pass.
// RUN: loom-opt %s --loom-tensor-parallel=tp=2 -o %t/tp2-fwd.mlir
// RUN: loom-opt %t/tp2-fwd.mlir --loom-autodiff -o %t/tp2.mlir
// RUN: FileCheck %s --check-prefix=GRAD < %t/tp2.mlir
// RUN: %loompy %S/Inputs/tensor_parallel.py slice %t %t/tp2-fwd.mlir
// RUN: loom-run %t/tp2.mlir --entry main_grad --ranks 2 --weights %t/weights.safetensors \
// RUN:   @%t/2.rsp --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/tp2
// RUN: %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/tp2-fwd.mlir \
// RUN:   %t/tp2/rank0 %t/tp2/rank1 | FileCheck %s --check-prefix=EQ
//
// tp=4: one head and 3 vocabulary rows (2 of them padding on rank 3) per rank.
// RUN: loom-opt %s --loom-tensor-parallel=tp=4 -o %t/tp4-fwd.mlir
// RUN: loom-opt %t/tp4-fwd.mlir --loom-autodiff -o %t/tp4.mlir
// RUN: %loompy %S/Inputs/tensor_parallel.py slice %t %t/tp4-fwd.mlir
// RUN: loom-run %t/tp4.mlir --entry main_grad --ranks 4 --weights %t/weights.safetensors \
// RUN:   @%t/4.rsp --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/tp4
// RUN: %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/tp4-fwd.mlir \
// RUN:   %t/tp4/rank0 %t/tp4/rank1 %t/tp4/rank2 %t/tp4/rank3 | FileCheck %s --check-prefix=EQ
//
// The comparison has teeth: without the backward all-reduce of loom.tp_copy
// (here: the op replaced by its operand), the gradients of the parameters
// before the blocks are one rank's share only.
// RUN: sed -e 's/loom.tp_copy \(%[0-9]*\) on @mesh grid_axes = \[2\] : \(.*\)$/loom.reshape \1 : \2 -> \2/' \
// RUN:   %t/tp2-fwd.mlir > %t/no-f.mlir
// RUN: loom-opt %t/no-f.mlir --loom-autodiff -o %t/no-f-grad.mlir
// RUN: loom-run %t/no-f-grad.mlir --entry main_grad --ranks 2 --weights %t/weights.safetensors \
// RUN:   @%t/2.rsp --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/no-f
// RUN: not %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/tp2-fwd.mlir \
// RUN:   %t/no-f/rank0 %t/no-f/rank1 | FileCheck %s --check-prefix=NOF

// CHECK: shard.grid @mesh(shape = 1x1x2)
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[WTE:[a-z0-9]+]]: tensor<10x16xf32> {loom.name = "wte.weight", loom.param}
// CHECK-SAME: %[[WQKV:[a-z0-9]+]]: tensor<16x24xf32> {loom.name = "h.0.attn.c_attn.weight", loom.param, loom.shard = #loom.shard<dim = 1, parts = 2, groups = 3>}
// CHECK-SAME: %[[BQKV:[a-z0-9]+]]: tensor<24xf32> {loom.name = "h.0.attn.c_attn.bias", loom.param, loom.shard = #loom.shard<dim = 0, parts = 2, groups = 3>}
// CHECK-SAME: %[[WO:[a-z0-9]+]]: tensor<8x16xf32> {loom.name = "h.0.attn.c_proj.weight", loom.param, loom.shard = #loom.shard<dim = 0, parts = 2>}
// CHECK-SAME: tensor<16xf32> {loom.name = "h.0.attn.c_proj.bias", loom.param}
// CHECK-SAME: %[[W1:[a-z0-9]+]]: tensor<16x32xf32> {loom.name = "h.0.mlp.c_fc.weight", loom.param, loom.shard = #loom.shard<dim = 1, parts = 2>}
// CHECK-SAME: %[[B1:[a-z0-9]+]]: tensor<32xf32> {loom.name = "h.0.mlp.c_fc.bias", loom.param, loom.shard = #loom.shard<dim = 0, parts = 2>}
// CHECK-SAME: %[[W2:[a-z0-9]+]]: tensor<32x16xf32> {loom.name = "h.0.mlp.c_proj.weight", loom.param, loom.shard = #loom.shard<dim = 0, parts = 2>}
// The tied token embedding: the whole table.
// CHECK-NOT:  loom.grid_index
// CHECK:      loom.gather %[[WTE]][%{{.*}}], axis = 0 : (tensor<10x16xf32>, tensor<2x4xi64>) -> tensor<2x4x16xf32>
// CHECK-NOT:  shard.all_reduce
// Attention: two of the four heads per rank.
// CHECK:      %[[LN1:.*]] = loom.layer_norm
// CHECK-NEXT: %[[F1:.*]] = loom.tp_copy %[[LN1]] on @mesh grid_axes = [2] : tensor<2x4x16xf32>
// CHECK-NEXT: loom.dot_general %[[F1]], %[[WQKV]], {{.*}} -> tensor<2x4x24xf32>
// CHECK:      loom.split {{.*}} sizes = [8, 8, 8] : tensor<2x4x24xf32> -> tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
// CHECK:      loom.reshape {{.*}} : tensor<2x4x8xf32> -> tensor<2x4x2x4xf32>
// CHECK:      loom.dot_general {{.*}} -> tensor<2x2x4x4xf32>
// CHECK:      loom.constant dense<5.000000e-01> : tensor<2x2x4x4xf32>
// CHECK:      loom.broadcast {{.*}} -> tensor<2x2x4x4xi1>
// CHECK:      loom.softmax {{.*}} : tensor<2x2x4x4xf32>
// CHECK:      loom.reshape {{.*}} : tensor<2x4x2x4xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[PO:.*]] = loom.dot_general %{{.*}}, %[[WO]], {{.*}} -> tensor<2x4x16xf32>
// CHECK-NEXT: %[[RO:.*]] = shard.all_reduce %[[PO]] on @mesh grid_axes = [2] : tensor<2x4x16xf32> -> tensor<2x4x16xf32>
// CHECK-NEXT: loom.broadcast
// CHECK-NEXT: loom.add %[[RO]],
// MLP: half of the 64 hidden units per rank.
// CHECK:      %[[LN2:.*]] = loom.layer_norm
// CHECK-NEXT: %[[F2:.*]] = loom.tp_copy %[[LN2]]
// CHECK-NEXT: loom.dot_general %[[F2]], %[[W1]], {{.*}} -> tensor<2x4x32xf32>
// CHECK-NEXT: loom.broadcast %[[B1]], dims = [2] : tensor<32xf32> -> tensor<2x4x32xf32>
// CHECK:      loom.gelu {{.*}} : tensor<2x4x32xf32>
// CHECK-NEXT: %[[P2:.*]] = loom.dot_general %{{.*}}, %[[W2]], {{.*}} -> tensor<2x4x16xf32>
// CHECK-NEXT: shard.all_reduce %[[P2]] on @mesh grid_axes = [2]
// The tied LM head: all 10 logits per position, and the cross-entropy on
// them, replicated.
// CHECK:      %[[LNF:.*]] = loom.layer_norm
// CHECK-NEXT: %[[LOGITS:.*]] = loom.dot_general %[[LNF]], %[[WTE]], {{.*}} -> tensor<2x4x10xf32>
// CHECK-NEXT: loom.cross_entropy %[[LOGITS]]
// CHECK-NOT:  shard.all_reduce
// CHECK:      return

// The backward pass: per block, the all-reduce of the row-parallel layer has
// the identity as VJP and the tp_copy's VJP all-reduces the input's
// gradient: 2 forward and 2 backward all-reduces.
// GRAD-LABEL: func.func @main_grad(
// GRAD-COUNT-4: shard.all_reduce
// GRAD-NOT:     shard.all_reduce
// GRAD:         return

// EQ: loss (full): max abs diff
// EQ: equivalent: yes

// NOF: grad.h.0.ln_1.weight (full)
// NOF: equivalent: no

module {
  func.func @main(
      %ids: tensor<2x4xi64> {loom.name = "ids"},
      %labels: tensor<2x4xi64> {loom.name = "labels"},
      %wte: tensor<10x16xf32> {loom.param, loom.name = "wte.weight"},
      %wpe: tensor<4x16xf32> {loom.param, loom.name = "wpe.weight"},
      %h0_ln_1_w: tensor<16xf32> {loom.param, loom.name = "h.0.ln_1.weight"},
      %h0_ln_1_b: tensor<16xf32> {loom.param, loom.name = "h.0.ln_1.bias"},
      %h0_attn_c_attn_w: tensor<16x48xf32> {loom.param, loom.name = "h.0.attn.c_attn.weight"},
      %h0_attn_c_attn_b: tensor<48xf32> {loom.param, loom.name = "h.0.attn.c_attn.bias"},
      %h0_attn_c_proj_w: tensor<16x16xf32> {loom.param, loom.name = "h.0.attn.c_proj.weight"},
      %h0_attn_c_proj_b: tensor<16xf32> {loom.param, loom.name = "h.0.attn.c_proj.bias"},
      %h0_ln_2_w: tensor<16xf32> {loom.param, loom.name = "h.0.ln_2.weight"},
      %h0_ln_2_b: tensor<16xf32> {loom.param, loom.name = "h.0.ln_2.bias"},
      %h0_mlp_c_fc_w: tensor<16x64xf32> {loom.param, loom.name = "h.0.mlp.c_fc.weight"},
      %h0_mlp_c_fc_b: tensor<64xf32> {loom.param, loom.name = "h.0.mlp.c_fc.bias"},
      %h0_mlp_c_proj_w: tensor<64x16xf32> {loom.param, loom.name = "h.0.mlp.c_proj.weight"},
      %h0_mlp_c_proj_b: tensor<16xf32> {loom.param, loom.name = "h.0.mlp.c_proj.bias"},
      %ln_f_w: tensor<16xf32> {loom.param, loom.name = "ln_f.weight"},
      %ln_f_b: tensor<16xf32> {loom.param, loom.name = "ln_f.bias"})
      -> (tensor<f32> {loom.name = "loss"}) {
    %tok_emb = loom.gather %wte[%ids], axis = 0 : (tensor<10x16xf32>, tensor<2x4xi64>) -> tensor<2x4x16xf32>
    %pos_emb = loom.broadcast %wpe, dims = [1, 2] : tensor<4x16xf32> -> tensor<2x4x16xf32>
    %x = loom.add %tok_emb, %pos_emb : tensor<2x4x16xf32>
    %q_pos = loom.iota dim = 0 : tensor<4x4xi64>
    %k_pos = loom.iota dim = 1 : tensor<4x4xi64>
    %causal = loom.compare le, %k_pos, %q_pos : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
    %mask = loom.broadcast %causal, dims = [2, 3] : tensor<4x4xi1> -> tensor<2x4x4x4xi1>
    %masked = loom.constant dense<-1.000000000e+09> : tensor<2x4x4x4xf32>
    %scale = loom.constant dense<5.000000000e-01> : tensor<2x4x4x4xf32>
    %l0_ln_1 = loom.layer_norm %x scale %h0_ln_1_w bias %h0_ln_1_b axis = 2 epsilon = 1.000000e-05 : (tensor<2x4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x4x16xf32>
    %l0_qkv_mm = loom.dot_general %l0_ln_1, %h0_attn_c_attn_w, contracting_dims = [2] x [0] : (tensor<2x4x16xf32>, tensor<16x48xf32>) -> tensor<2x4x48xf32>
    %l0_qkv_bias = loom.broadcast %h0_attn_c_attn_b, dims = [2] : tensor<48xf32> -> tensor<2x4x48xf32>
    %l0_qkv = loom.add %l0_qkv_mm, %l0_qkv_bias : tensor<2x4x48xf32>
    %l0_q, %l0_k, %l0_v = loom.split %l0_qkv, dim = 2, sizes = [16, 16, 16] : tensor<2x4x48xf32> -> tensor<2x4x16xf32>, tensor<2x4x16xf32>, tensor<2x4x16xf32>
    %l0_q_heads = loom.reshape %l0_q : tensor<2x4x16xf32> -> tensor<2x4x4x4xf32>
    %l0_q_t = loom.transpose %l0_q_heads, permutation = [0, 2, 1, 3] : tensor<2x4x4x4xf32> -> tensor<2x4x4x4xf32>
    %l0_k_heads = loom.reshape %l0_k : tensor<2x4x16xf32> -> tensor<2x4x4x4xf32>
    %l0_k_t = loom.transpose %l0_k_heads, permutation = [0, 2, 1, 3] : tensor<2x4x4x4xf32> -> tensor<2x4x4x4xf32>
    %l0_v_heads = loom.reshape %l0_v : tensor<2x4x16xf32> -> tensor<2x4x4x4xf32>
    %l0_v_t = loom.transpose %l0_v_heads, permutation = [0, 2, 1, 3] : tensor<2x4x4x4xf32> -> tensor<2x4x4x4xf32>
    %l0_scores = loom.dot_general %l0_q_t, %l0_k_t, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : (tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
    %l0_scaled = loom.mul %l0_scores, %scale : tensor<2x4x4x4xf32>
    %l0_masked = loom.select %mask, %l0_scaled, %masked : tensor<2x4x4x4xi1>, tensor<2x4x4x4xf32>
    %l0_probs = loom.softmax %l0_masked, axis = 3 : tensor<2x4x4x4xf32>
    %l0_ctx = loom.dot_general %l0_probs, %l0_v_t, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] : (tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
    %l0_ctx_t = loom.transpose %l0_ctx, permutation = [0, 2, 1, 3] : tensor<2x4x4x4xf32> -> tensor<2x4x4x4xf32>
    %l0_ctx_merged = loom.reshape %l0_ctx_t : tensor<2x4x4x4xf32> -> tensor<2x4x16xf32>
    %l0_attn_out_mm = loom.dot_general %l0_ctx_merged, %h0_attn_c_proj_w, contracting_dims = [2] x [0] : (tensor<2x4x16xf32>, tensor<16x16xf32>) -> tensor<2x4x16xf32>
    %l0_attn_out_bias = loom.broadcast %h0_attn_c_proj_b, dims = [2] : tensor<16xf32> -> tensor<2x4x16xf32>
    %l0_attn_out = loom.add %l0_attn_out_mm, %l0_attn_out_bias : tensor<2x4x16xf32>
    %l0_res_1 = loom.add %x, %l0_attn_out : tensor<2x4x16xf32>
    %l0_ln_2 = loom.layer_norm %l0_res_1 scale %h0_ln_2_w bias %h0_ln_2_b axis = 2 epsilon = 1.000000e-05 : (tensor<2x4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x4x16xf32>
    %l0_fc_mm = loom.dot_general %l0_ln_2, %h0_mlp_c_fc_w, contracting_dims = [2] x [0] : (tensor<2x4x16xf32>, tensor<16x64xf32>) -> tensor<2x4x64xf32>
    %l0_fc_bias = loom.broadcast %h0_mlp_c_fc_b, dims = [2] : tensor<64xf32> -> tensor<2x4x64xf32>
    %l0_fc = loom.add %l0_fc_mm, %l0_fc_bias : tensor<2x4x64xf32>
    %l0_gelu = loom.gelu %l0_fc approximate = tanh : tensor<2x4x64xf32>
    %l0_mlp_out_mm = loom.dot_general %l0_gelu, %h0_mlp_c_proj_w, contracting_dims = [2] x [0] : (tensor<2x4x64xf32>, tensor<64x16xf32>) -> tensor<2x4x16xf32>
    %l0_mlp_out_bias = loom.broadcast %h0_mlp_c_proj_b, dims = [2] : tensor<16xf32> -> tensor<2x4x16xf32>
    %l0_mlp_out = loom.add %l0_mlp_out_mm, %l0_mlp_out_bias : tensor<2x4x16xf32>
    %l0_res_2 = loom.add %l0_res_1, %l0_mlp_out : tensor<2x4x16xf32>
    %ln_f = loom.layer_norm %l0_res_2 scale %ln_f_w bias %ln_f_b axis = 2 epsilon = 1.000000e-05 : (tensor<2x4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x4x16xf32>
    %logits = loom.dot_general %ln_f, %wte, contracting_dims = [2] x [1] : (tensor<2x4x16xf32>, tensor<10x16xf32>) -> tensor<2x4x10xf32>
    %loss = loom.cross_entropy %logits, %labels reduction = mean : (tensor<2x4x10xf32>, tensor<2x4xi64>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

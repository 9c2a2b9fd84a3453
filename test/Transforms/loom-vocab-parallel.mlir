// loom-vocab-parallel on the token embedding, the tied LM head and the
// cross-entropy (Megatron-LM's vocabulary parallelism), in the form of
// PyTorch's `F.cross_entropy(ln(wte(ids)) @ wte.weight.t(), labels)` as
// ONNX imports it: every rank holds a slice of the vocabulary rows, and
// the full logits are never formed. With loom-run --ranks, the loss and
// every gradient equal the single-device ones, for tp=2 (25 rows per rank)
// and tp=4 (the 50 rows padded to 52, 13 per rank), with ignored labels.
//
// RUN: loom-opt %s --loom-vocab-parallel=tp=2 | FileCheck %s
// RUN: loom-opt %s --loom-vocab-parallel=tp=4 | FileCheck %s --check-prefix=PAD
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %loompy %S/Inputs/tensor_parallel.py make %t %s --ignore-index=-100
// RUN: loom-opt %s --loom-autodiff -o %t/ref.mlir
// RUN: loom-run %t/ref.mlir --entry main_grad --weights %t/weights.safetensors \
// RUN:   --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/ref
//
// RUN: loom-opt %s --loom-vocab-parallel=tp=2 -o %t/tp2-fwd.mlir
// RUN: loom-opt %t/tp2-fwd.mlir --loom-autodiff -o %t/tp2.mlir
// RUN: FileCheck %s --check-prefix=GRAD < %t/tp2.mlir
// RUN: %loompy %S/Inputs/tensor_parallel.py slice %t %t/tp2-fwd.mlir
// RUN: loom-run %t/tp2.mlir --entry main_grad --ranks 2 --weights %t/weights.safetensors \
// RUN:   @%t/2.rsp --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/tp2
// RUN: %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/tp2-fwd.mlir \
// RUN:   %t/tp2/rank0 %t/tp2/rank1 | FileCheck %s --check-prefix=EQ
//
// RUN: loom-opt %s --loom-vocab-parallel=tp=4 -o %t/tp4-fwd.mlir
// RUN: loom-opt %t/tp4-fwd.mlir --loom-autodiff -o %t/tp4.mlir
// RUN: %loompy %S/Inputs/tensor_parallel.py slice %t %t/tp4-fwd.mlir
// RUN: loom-run %t/tp4.mlir --entry main_grad --ranks 4 --weights %t/weights.safetensors \
// RUN:   @%t/4.rsp --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/tp4
// RUN: %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/tp4-fwd.mlir \
// RUN:   %t/tp4/rank0 %t/tp4/rank1 %t/tp4/rank2 %t/tp4/rank3 | FileCheck %s --check-prefix=EQ
//
// Negative controls. Without the mask of the padding columns (-inf made 0),
// the loss counts exp(0) for the two padded classes:
// RUN: sed -e 's/dense<0xFF800000>/dense<0.000000e+00>/' %t/tp4-fwd.mlir > %t/no-mask.mlir
// RUN: loom-opt %t/no-mask.mlir --loom-autodiff -o %t/no-mask-grad.mlir
// RUN: loom-run %t/no-mask-grad.mlir --entry main_grad --ranks 4 --weights %t/weights.safetensors \
// RUN:   @%t/4.rsp --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/no-mask
// RUN: not %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/tp4-fwd.mlir \
// RUN:   %t/no-mask/rank0 %t/no-mask/rank1 %t/no-mask/rank2 %t/no-mask/rank3 \
// RUN:   | FileCheck %s --check-prefix=NOMASK
// Without the range mask of the embedding (its select's condition always
// true), a rank adds rows for ids of the other ranks' ranges:
// RUN: sed -e 's/loom.select %\([0-9]*\), %\([0-9]*\), %\([0-9]*\) : tensor<2x4x8xi1>/loom.select %\1, %\2, %\2 : tensor<2x4x8xi1>/' \
// RUN:   %t/tp2-fwd.mlir > %t/no-range.mlir
// RUN: loom-opt %t/no-range.mlir --loom-autodiff -o %t/no-range-grad.mlir
// RUN: loom-run %t/no-range-grad.mlir --entry main_grad --ranks 2 --weights %t/weights.safetensors \
// RUN:   @%t/2.rsp --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/no-range
// RUN: not %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/tp2-fwd.mlir \
// RUN:   %t/no-range/rank0 %t/no-range/rank1 | FileCheck %s --check-prefix=NORANGE

// tp=2: 25 rows per rank, no padding.
// CHECK: shard.grid @mesh(shape = 1x1x2)
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[IDS:[a-z0-9]+]]: tensor<2x4xi64> {loom.name = "ids"}
// CHECK-SAME: %[[LABELS:[a-z0-9]+]]: tensor<2x4xi64> {loom.name = "labels"}
// CHECK-SAME: %[[WTE:[a-z0-9]+]]: tensor<25x8xf32> {loom.name = "wte.weight", loom.param, loom.shard = #loom.shard<dim = 0, parts = 2>}
// The rank's first row, once.
// CHECK-NEXT: %[[RANK:.*]] = loom.grid_index on @mesh grid_axes = [2] : tensor<i64>
// CHECK-NEXT: %[[ROWS:.*]] = loom.constant dense<25> : tensor<i64>
// CHECK-NEXT: %[[START:.*]] = loom.mul %[[RANK]], %[[ROWS]] : tensor<i64>
// The embedding: local ids clamped into [0, 25), other ranks' rows zeroed,
// summed over the ranks.
// CHECK-NEXT: %[[S1:.*]] = loom.broadcast %[[START]], dims = [] : tensor<i64> -> tensor<2x4xi64>
// CHECK-NEXT: %[[LOCAL:.*]] = loom.sub %[[IDS]], %[[S1]]
// CHECK-NEXT: %[[ZERO:.*]] = loom.constant dense<0> : tensor<2x4xi64>
// CHECK-NEXT: %[[LO:.*]] = loom.max %[[LOCAL]], %[[ZERO]]
// CHECK-NEXT: %[[LAST:.*]] = loom.constant dense<24> : tensor<2x4xi64>
// CHECK-NEXT: %[[CLAMPED:.*]] = loom.min %[[LO]], %[[LAST]]
// CHECK-NEXT: %[[MINE:.*]] = loom.compare eq, %[[CLAMPED]], %[[LOCAL]]
// CHECK-NEXT: %[[LOOKUP:.*]] = loom.gather %[[WTE]][%[[CLAMPED]]], axis = 0 : (tensor<25x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[MASK:.*]] = loom.broadcast %[[MINE]], dims = [0, 1] : tensor<2x4xi1> -> tensor<2x4x8xi1>
// CHECK-NEXT: %[[ZEROS:.*]] = loom.constant dense<0.000000e+00> : tensor<2x4x8xf32>
// CHECK-NEXT: %[[KEPT:.*]] = loom.select %[[MASK]], %[[LOOKUP]], %[[ZEROS]]
// CHECK-NEXT: %[[EMB:.*]] = shard.all_reduce %[[KEPT]] on @mesh grid_axes = [2] : tensor<2x4x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[H:.*]] = loom.layer_norm %[[EMB]]
// The LM head: f on its input, the transpose folded, 25 logits per row.
// CHECK-NEXT: %[[HF:.*]] = loom.tp_copy %[[H]] on @mesh grid_axes = [2] : tensor<2x4x8xf32>
// CHECK-NEXT: %[[LOGITS:.*]] = loom.dot_general %[[HF]], %[[WTE]], contracting_dims = [2] x [1] : (tensor<2x4x8xf32>, tensor<25x8xf32>) -> tensor<2x4x25xf32>
// CHECK-NEXT: %[[FLAT:.*]] = loom.reshape %[[LOGITS]] : tensor<2x4x25xf32> -> tensor<8x25xf32>
// CHECK-NEXT: %[[TARGETS:.*]] = loom.reshape %[[LABELS]]
// No padding: no mask of the columns.
// CHECK-NEXT: %[[ROW:.*]] = loom.iota dim = 0 : tensor<25xi64>
// CHECK-NEXT: %[[COL:.*]] = loom.broadcast %[[ROW]], dims = [1] : tensor<25xi64> -> tensor<8x25xi64>
// CHECK-NEXT: %[[LMAX:.*]] = loom.reduce_max %[[FLAT]], dims = [1] : tensor<8x25xf32> -> tensor<8xf32>
// CHECK-NEXT: %[[MAX:.*]] = shard.all_reduce %[[LMAX]] on @mesh grid_axes = [2] reduction = max {loom.stop_gradient} : tensor<8xf32> -> tensor<8xf32>
// CHECK-NEXT: %[[MAXB:.*]] = loom.broadcast %[[MAX]], dims = [0] : tensor<8xf32> -> tensor<8x25xf32>
// CHECK-NEXT: %[[SHIFTED:.*]] = loom.sub %[[FLAT]], %[[MAXB]]
// CHECK-NEXT: %[[EXP:.*]] = loom.exp %[[SHIFTED]]
// CHECK-NEXT: %[[LSUM:.*]] = loom.reduce_sum %[[EXP]], dims = [1] : tensor<8x25xf32> -> tensor<8xf32>
// CHECK-NEXT: %[[SUM:.*]] = shard.all_reduce %[[LSUM]] on @mesh grid_axes = [2] : tensor<8xf32> -> tensor<8xf32>
// CHECK-NEXT: %[[LOG:.*]] = loom.log %[[SUM]]
// CHECK-NEXT: %[[LSE:.*]] = loom.add %[[LOG]], %[[MAX]]
// The target logit, on the rank whose range holds the label.
// CHECK-NEXT: %[[S2:.*]] = loom.broadcast %[[START]], dims = [] : tensor<i64> -> tensor<8xi64>
// CHECK-NEXT: %[[LLAB:.*]] = loom.sub %[[TARGETS]], %[[S2]]
// CHECK-NEXT: %[[LLABB:.*]] = loom.broadcast %[[LLAB]], dims = [0] : tensor<8xi64> -> tensor<8x25xi64>
// CHECK-NEXT: %[[HIT:.*]] = loom.compare eq, %[[COL]], %[[LLABB]]
// CHECK-NEXT: %[[Z:.*]] = loom.constant dense<0.000000e+00> : tensor<8x25xf32>
// CHECK-NEXT: %[[PICK:.*]] = loom.select %[[HIT]], %[[FLAT]], %[[Z]]
// CHECK-NEXT: %[[LT:.*]] = loom.reduce_sum %[[PICK]], dims = [1]
// CHECK-NEXT: %[[T:.*]] = shard.all_reduce %[[LT]] on @mesh grid_axes = [2] : tensor<8xf32> -> tensor<8xf32>
// CHECK-NEXT: %[[PER:.*]] = loom.sub %[[LSE]], %[[T]] : tensor<8xf32>
// ignore_index = -100 and the mean over the labels not ignored.
// CHECK-NEXT: %[[IGN:.*]] = loom.constant dense<-100> : tensor<8xi64>
// CHECK-NEXT: %[[VALID:.*]] = loom.compare ne, %[[TARGETS]], %[[IGN]]
// CHECK-NEXT: loom.constant dense<0.000000e+00> : tensor<8xf32>
// CHECK-NEXT: %[[KEPTL:.*]] = loom.select %[[VALID]], %[[PER]],
// CHECK-NEXT: %[[TOTAL:.*]] = loom.reduce_sum %[[KEPTL]], dims = [0] : tensor<8xf32> -> tensor<f32>
// CHECK-NEXT: %[[VF:.*]] = loom.convert %[[VALID]] : tensor<8xi1> -> tensor<8xf32>
// CHECK-NEXT: %[[COUNT:.*]] = loom.reduce_sum %[[VF]], dims = [0]
// CHECK-NEXT: %[[LOSS:.*]] = loom.div %[[TOTAL]], %[[COUNT]] : tensor<f32>
// CHECK-NEXT: return %[[LOSS]] : tensor<f32>

// tp=4: 50 rows padded to 52, 13 per rank; the padding columns are -inf.
// PAD-LABEL: func.func @main(
// PAD-SAME: tensor<13x8xf32> {loom.name = "wte.weight", loom.param, loom.shard = #loom.shard<dim = 0, parts = 4, padded = 52>}
// PAD:      %[[RANK:.*]] = loom.grid_index on @mesh grid_axes = [2] : tensor<i64>
// PAD-NEXT: loom.constant dense<13> : tensor<i64>
// PAD:      loom.constant dense<12> : tensor<2x4xi64>
// PAD:      %[[FLAT:.*]] = loom.reshape {{.*}} : tensor<2x4x13xf32> -> tensor<8x13xf32>
// PAD:      %[[ROW:.*]] = loom.iota dim = 0 : tensor<13xi64>
// PAD-NEXT: %[[COL:.*]] = loom.broadcast %[[ROW]], dims = [1] : tensor<13xi64> -> tensor<8x13xi64>
// PAD-NEXT: %[[S:.*]] = loom.broadcast %{{.*}}, dims = [] : tensor<i64> -> tensor<8x13xi64>
// PAD-NEXT: %[[GLOBAL:.*]] = loom.add %[[COL]], %[[S]]
// PAD-NEXT: %[[V:.*]] = loom.constant dense<50> : tensor<8x13xi64>
// PAD-NEXT: %[[REAL:.*]] = loom.compare lt, %[[GLOBAL]], %[[V]]
// PAD-NEXT: %[[NEGINF:.*]] = loom.constant dense<0xFF800000> : tensor<8x13xf32>
// PAD-NEXT: %[[LIVE:.*]] = loom.select %[[REAL]], %[[FLAT]], %[[NEGINF]]
// PAD-NEXT: loom.reduce_max %[[LIVE]], dims = [1]
// PAD:      loom.sub %[[LIVE]],
// The target logit is read from the unmasked logits.
// PAD:      loom.select %{{.*}}, %[[FLAT]], %{{.*}} : tensor<8x13xi1>, tensor<8x13xf32>

// The backward pass adds one all-reduce, the VJP of the LM head's f; the
// max is a constant.
// GRAD-LABEL: func.func @main_grad(
// GRAD-COUNT-4: shard.all_reduce
// GRAD:         shard.all_reduce {{.*}} {loom.phase = "backward"} : tensor<2x4x8xf32>
// GRAD-NOT:     shard.all_reduce
// GRAD:         loom.scatter_add {{.*}} : (tensor<25x8xf32>, tensor<2x4xi64>, tensor<2x4x8xf32>) -> tensor<25x8xf32>
// GRAD:         return

// Without loom.stop_gradient the max all-reduce has no gradient: an error.
// RUN: sed -e 's/ {loom.stop_gradient}//' %t/tp2-fwd.mlir > %t/no-stop.mlir
// RUN: not loom-opt %t/no-stop.mlir --loom-autodiff 2>&1 | FileCheck %s --check-prefix=NOSTOP
// NOSTOP: error: 'shard.all_reduce' op has no vector-Jacobian product: only a sum all-reduce is differentiable (a max or min one marked loom.stop_gradient is a constant), this one is 'max'

// EQ: loss (full): max abs diff
// EQ: equivalent: yes
// NOMASK: equivalent: no
// NORANGE: equivalent: no

module {
  func.func @main(
      %ids: tensor<2x4xi64> {loom.name = "ids"},
      %labels: tensor<2x4xi64> {loom.name = "labels"},
      %wte: tensor<50x8xf32> {loom.param, loom.name = "wte.weight"},
      %ln_w: tensor<8xf32> {loom.param, loom.name = "ln.weight"},
      %ln_b: tensor<8xf32> {loom.param, loom.name = "ln.bias"})
      -> (tensor<f32> {loom.name = "loss"}) {
    %e = loom.gather %wte[%ids], axis = 0 : (tensor<50x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
    %h = loom.layer_norm %e scale %ln_w bias %ln_b axis = 2 epsilon = 1.000000e-05 : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
    %wt = loom.transpose %wte, permutation = [1, 0] : tensor<50x8xf32> -> tensor<8x50xf32>
    %logits = loom.dot_general %h, %wt, contracting_dims = [2] x [0] : (tensor<2x4x8xf32>, tensor<8x50xf32>) -> tensor<2x4x50xf32>
    %flat = loom.reshape %logits : tensor<2x4x50xf32> -> tensor<8x50xf32>
    %targets = loom.reshape %labels : tensor<2x4xi64> -> tensor<8xi64>
    %loss = loom.cross_entropy %flat, %targets ignore_index = -100 : (tensor<8x50xf32>, tensor<8xi64>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

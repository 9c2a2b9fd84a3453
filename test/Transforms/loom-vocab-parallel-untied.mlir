// Vocabulary parallelism with an untied LM head in the [in, out] layout
// (`h @ lm_head`, lm_head: [hidden, vocab], cut on its dimension 1), a
// cross-entropy summed without ignore_index, and a position table indexed by
// constants whose rows are added to the token embedding's: it is cut too
// (one row per rank), and one all-reduce completes the sum of both lookups.
// tp=4 pads both 10-row vocabularies to 12 (3 per rank); loom-run --ranks 4
// gives the single-device loss and gradients.
//
// RUN: loom-opt %s --loom-vocab-parallel=tp=4 | FileCheck %s
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %loompy %S/Inputs/tensor_parallel.py make %t %s
// RUN: loom-opt %s --loom-autodiff -o %t/ref.mlir
// RUN: loom-run %t/ref.mlir --entry main_grad --weights %t/weights.safetensors \
// RUN:   --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/ref
// RUN: loom-opt %s --loom-vocab-parallel=tp=4 -o %t/tp4-fwd.mlir
// RUN: loom-opt %t/tp4-fwd.mlir --loom-autodiff -o %t/tp4.mlir
// RUN: %loompy %S/Inputs/tensor_parallel.py slice %t %t/tp4-fwd.mlir
// RUN: loom-run %t/tp4.mlir --entry main_grad --ranks 4 --weights %t/weights.safetensors \
// RUN:   @%t/4.rsp --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/tp4
// RUN: %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/tp4-fwd.mlir \
// RUN:   %t/tp4/rank0 %t/tp4/rank1 %t/tp4/rank2 %t/tp4/rank3 | FileCheck %s --check-prefix=EQ
//
// Negative control: without the sum all-reduce of the target logit, each
// rank subtracts only the logits of its own range.
// RUN: sed -e 's/%all_reduce_2 = shard.all_reduce \(%[0-9]*\) on @mesh grid_axes = \[2\] : \(.*\)$/%all_reduce_2 = loom.reshape \1 : \2/' \
// RUN:   %t/tp4-fwd.mlir > %t/no-target.mlir
// RUN: loom-opt %t/no-target.mlir --loom-autodiff -o %t/no-target-grad.mlir
// RUN: loom-run %t/no-target-grad.mlir --entry main_grad --ranks 4 --weights %t/weights.safetensors \
// RUN:   @%t/4.rsp --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/no-target
// RUN: not %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/tp4-fwd.mlir \
// RUN:   %t/no-target/rank0 %t/no-target/rank1 %t/no-target/rank2 %t/no-target/rank3 \
// RUN:   | FileCheck %s --check-prefix=NOTARGET

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[WTE:[a-z0-9]+]]: tensor<3x8xf32> {loom.name = "wte.weight", loom.param, loom.shard = #loom.shard<dim = 0, parts = 4, padded = 12>}
// CHECK-SAME: %[[WPE:[a-z0-9]+]]: tensor<1x8xf32> {loom.name = "wpe.weight", loom.param, loom.shard = #loom.shard<dim = 0, parts = 4>}
// CHECK-SAME: %[[HEAD:[a-z0-9]+]]: tensor<8x3xf32> {loom.name = "lm_head.weight", loom.param, loom.shard = #loom.shard<dim = 1, parts = 4, padded = 12>}
// One rank index; one range start for both vocabularies (3 rows each),
// one for the positions (1 row).
// CHECK-COUNT-1: loom.grid_index
// CHECK-NOT:  loom.grid_index
// Each lookup keeps this rank's rows; their sum is all-reduced once.
// CHECK-NOT:  shard.all_reduce
// CHECK:      loom.gather %[[WTE]]
// CHECK-NOT:  shard.all_reduce
// CHECK:      %[[POS:.*]] = loom.gather %[[WPE]][%{{.*}}], axis = 0 : (tensor<1x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
// CHECK-NOT:  shard.all_reduce
// CHECK:      %[[SUM:.*]] = loom.add %{{.*}}, %{{.*}} : tensor<2x4x8xf32>
// CHECK-NEXT: %[[X:.*]] = shard.all_reduce %[[SUM]] on @mesh grid_axes = [2] : tensor<2x4x8xf32>
// CHECK-NEXT: loom.tanh %[[X]]
// CHECK:      %[[HF:.*]] = loom.tp_copy
// CHECK-NEXT: loom.dot_general %[[HF]], %[[HEAD]], contracting_dims = [2] x [0] : (tensor<2x4x8xf32>, tensor<8x3xf32>) -> tensor<2x4x3xf32>
// CHECK:      loom.constant dense<10> : tensor<2x4x3xi64>
// CHECK:      loom.constant dense<0xFF800000> : tensor<2x4x3xf32>
// CHECK:      reduction = max {loom.stop_gradient}
// Reduction sum, no ignore_index: the per-sample losses are summed.
// CHECK:      %[[PER:.*]] = loom.sub {{.*}} : tensor<2x4xf32>
// CHECK-NEXT: %[[LOSS:.*]] = loom.reduce_sum %[[PER]], dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
// CHECK-NEXT: return %[[LOSS]]

// EQ: equivalent: yes
// NOTARGET: equivalent: no

module {
  func.func @main(
      %ids: tensor<2x4xi64> {loom.name = "ids"},
      %labels: tensor<2x4xi64> {loom.name = "labels"},
      %wte: tensor<10x8xf32> {loom.param, loom.name = "wte.weight"},
      %wpe: tensor<4x8xf32> {loom.param, loom.name = "wpe.weight"},
      %head: tensor<8x10xf32> {loom.param, loom.name = "lm_head.weight"})
      -> (tensor<f32> {loom.name = "loss"}) {
    %tok = loom.gather %wte[%ids], axis = 0 : (tensor<10x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
    %positions = loom.iota dim = 0 : tensor<4xi64>
    %pos = loom.gather %wpe[%positions], axis = 0 : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
    %posb = loom.broadcast %pos, dims = [1, 2] : tensor<4x8xf32> -> tensor<2x4x8xf32>
    %x = loom.add %tok, %posb : tensor<2x4x8xf32>
    %h = loom.tanh %x : tensor<2x4x8xf32>
    %logits = loom.dot_general %h, %head, contracting_dims = [2] x [0] : (tensor<2x4x8xf32>, tensor<8x10xf32>) -> tensor<2x4x10xf32>
    %loss = loom.cross_entropy %logits, %labels reduction = sum : (tensor<2x4x10xf32>, tensor<2x4xi64>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// Vocabulary parallelism of an LM head with a bias (BERT's MLM decoder:
// `h @ transpose(wte) + bias`, tied to the embedding): the bias is cut like
// the table's rows and zero-padded alike (10 rows on tp=4: 3 per rank,
// padded to 12), added to the rank's logits before the padding columns are
// masked. loom-run --ranks 4 gives the single-device loss and gradients
// (each rank's bias slice cut from the same full weights as its rows).
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

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[WTE:[a-z0-9]+]]: tensor<3x8xf32> {loom.name = "wte.weight", loom.param, loom.shard = #loom.shard<dim = 0, parts = 4, padded = 12>}
// CHECK-SAME: %[[BIAS:[a-z0-9]+]]: tensor<3xf32> {loom.name = "decoder.bias", loom.param, loom.shard = #loom.shard<dim = 0, parts = 4, padded = 12>}
// CHECK:      %[[HF:.*]] = loom.tp_copy
// CHECK-NEXT: %[[L:.*]] = loom.dot_general %[[HF]], %[[WTE]], contracting_dims = [2] x [1] : (tensor<2x4x8xf32>, tensor<3x8xf32>) -> tensor<2x4x3xf32>
// CHECK-NEXT: %[[B:.*]] = loom.broadcast %[[BIAS]], dims = [2] : tensor<3xf32> -> tensor<2x4x3xf32>
// CHECK-NEXT: %[[LB:.*]] = loom.add %[[L]], %[[B]] : tensor<2x4x3xf32>
// CHECK-NEXT: %[[FLAT:.*]] = loom.reshape %[[LB]] : tensor<2x4x3xf32> -> tensor<8x3xf32>
// CHECK:      loom.select %{{.*}}, %[[FLAT]], %{{.*}} : tensor<8x3xi1>, tensor<8x3xf32>
// CHECK:      reduction = max {loom.stop_gradient}

// EQ: equivalent: yes

module {
  func.func @main(
      %ids: tensor<2x4xi64> {loom.name = "ids"},
      %labels: tensor<2x4xi64> {loom.name = "labels"},
      %wte: tensor<10x8xf32> {loom.param, loom.name = "wte.weight"},
      %bias: tensor<10xf32> {loom.param, loom.name = "decoder.bias"})
      -> (tensor<f32> {loom.name = "loss"}) {
    %tok = loom.gather %wte[%ids], axis = 0 : (tensor<10x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
    %h = loom.tanh %tok : tensor<2x4x8xf32>
    %t = loom.transpose %wte, permutation = [1, 0] : tensor<10x8xf32> -> tensor<8x10xf32>
    %logits = loom.dot_general %h, %t, contracting_dims = [2] x [0] : (tensor<2x4x8xf32>, tensor<8x10xf32>) -> tensor<2x4x10xf32>
    %b = loom.broadcast %bias, dims = [2] : tensor<10xf32> -> tensor<2x4x10xf32>
    %biased = loom.add %logits, %b : tensor<2x4x10xf32>
    %flat = loom.reshape %biased : tensor<2x4x10xf32> -> tensor<8x10xf32>
    %lab = loom.reshape %labels : tensor<2x4xi64> -> tensor<8xi64>
    %loss = loom.cross_entropy %flat, %lab : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

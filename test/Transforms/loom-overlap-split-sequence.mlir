// The sequence-dimension fallback of loom-overlap-split: with one row per
// micro-batch (k=2 does not divide it), a model whose every op between two
// collectives is independent along the sequence (here a Megatron MLP block
// applied per position) is split along dimension 1 instead: each sub-batch
// holds half the positions, the join concatenates along dimension 1, and on
// 2 ranks the loss and gradients equal the single-device ones. A GPT cannot
// be: its attention mixes the positions before the next all-reduce.
//
// RUN: loom-opt %s --loom-tensor-parallel=tp=2 --loom-overlap-split=k=2 | FileCheck %s
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %loompy %S/Inputs/tensor_parallel.py make %t %s --classes 8
// RUN: loom-opt %s --loom-autodiff -o %t/ref.mlir
// RUN: loom-run %t/ref.mlir --entry main_grad --weights %t/weights.safetensors \
// RUN:   --input x=%t/x.npy --input labels=%t/labels.npy --output-dir %t/ref
// RUN: loom-opt %s --loom-tensor-parallel=tp=2 -o %t/tp2-fwd.mlir
// RUN: loom-opt %t/tp2-fwd.mlir --loom-overlap-split=k=2 --loom-autodiff -o %t/split.mlir
// RUN: %loompy %S/Inputs/tensor_parallel.py slice %t %t/tp2-fwd.mlir
// RUN: loom-run %t/split.mlir --entry main_grad --ranks 2 --weights %t/weights.safetensors \
// RUN:   @%t/2.rsp --input x=%t/x.npy --input labels=%t/labels.npy --output-dir %t/split
// RUN: %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/tp2-fwd.mlir \
// RUN:   %t/split/rank0 %t/split/rank1 | FileCheck %s --check-prefix=EQ
//
// RUN: %loompy -m loom.models.gpt --layers 1 --hidden 16 --heads 4 --seq 4 \
// RUN:   --vocab 10 --batch 1 -o %t/gpt.mlir
// RUN: not loom-opt %t/gpt.mlir --loom-tensor-parallel=tp=2 --loom-vocab-parallel=tp=2 \
// RUN:   --loom-overlap-split=k=2 --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ATTN
//
// CHECK-LABEL: func.func @main(
// CHECK-SAME:  %[[X:[a-z0-9]+]]: tensor<1x4x8xf32> {loom.name = "x"}, %[[L:[a-z0-9]+]]: tensor<1x4xi64>
// CHECK-NEXT:  %[[X0:.*]] = loom.slice %[[X]], start = [0, 0, 0], limit = [1, 2, 8], strides = [1, 1, 1] : tensor<1x4x8xf32> -> tensor<1x2x8xf32>
// CHECK-NEXT:  %[[X1:.*]] = loom.slice %[[X]], start = [0, 2, 0], limit = [1, 4, 8], strides = [1, 1, 1] : tensor<1x4x8xf32> -> tensor<1x2x8xf32>
// CHECK-NEXT:  loom.tp_copy %[[X0]]
// CHECK:       %[[Y0:.*]] = shard.all_reduce {{.*}} : tensor<1x2x8xf32> -> tensor<1x2x8xf32>
// CHECK-NEXT:  loom.tp_copy %[[X1]]
// CHECK:       %[[Y1:.*]] = shard.all_reduce {{.*}} : tensor<1x2x8xf32> -> tensor<1x2x8xf32>
// CHECK-NEXT:  %[[Y:.*]] = loom.concat %[[Y0]], %[[Y1]] dim = 1 : (tensor<1x2x8xf32>, tensor<1x2x8xf32>) -> tensor<1x4x8xf32>
// CHECK-NEXT:  loom.cross_entropy %[[Y]], %[[L]]
//
// EQ: equivalent: yes
//
// ATTN: error: loom-overlap-split: --overlap-split 2 does not divide the batch of data argument 'ids' (1 rows in dimension 0); every sub-batch needs the same number of rows, and the sequence dimension (1) cannot be split instead: 'loom.dot_general' mixes the sequence positions before a tensor-parallel collective
// ATTN: note: this op mixes the positions
// ATTN-NEXT: %l0_scores = loom.dot_general

func.func @main(%x: tensor<1x4x8xf32> {loom.name = "x"},
                %labels: tensor<1x4xi64> {loom.name = "labels"},
                %w1: tensor<8x16xf32> {loom.param, loom.name = "fc1.weight"},
                %w2: tensor<16x8xf32> {loom.param, loom.name = "fc2.weight"})
    -> (tensor<f32> {loom.name = "loss"}) {
  %h = loom.dot_general %x, %w1, contracting_dims = [2] x [0] : (tensor<1x4x8xf32>, tensor<8x16xf32>) -> tensor<1x4x16xf32>
  %a = loom.relu %h : tensor<1x4x16xf32>
  %y = loom.dot_general %a, %w2, contracting_dims = [2] x [0] : (tensor<1x4x16xf32>, tensor<16x8xf32>) -> tensor<1x4x8xf32>
  %loss = loom.cross_entropy %y, %labels reduction = mean : (tensor<1x4x8xf32>, tensor<1x4xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

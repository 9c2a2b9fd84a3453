// loom-overlap-split on a 2-layer GPT (python -m loom.models.gpt) after
// loom-tensor-parallel and loom-vocab-parallel, as the training pipeline
// runs them: with loom-run --ranks 2, every rank's loss and gradients equal
// the single-device ones (a sliced parameter's gradient: the rank's slice),
// and the forward has twice the all-reduces of the unsplit one, the two
// sub-batches' alternating from the embedding to the vocabulary-parallel
// cross-entropy, joined only at the loss's mean.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %loompy -m loom.models.gpt --layers 2 --hidden 16 --heads 4 --seq 4 \
// RUN:   --vocab 10 --batch 4 -o %t/gpt.mlir
// RUN: %loompy %S/Inputs/tensor_parallel.py make %t %t/gpt.mlir
// RUN: loom-opt %t/gpt.mlir --loom-autodiff -o %t/ref.mlir
// RUN: loom-run %t/ref.mlir --entry main_grad --weights %t/weights.safetensors \
// RUN:   --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/ref
//
// RUN: loom-opt %t/gpt.mlir --loom-tensor-parallel=tp=2 --loom-vocab-parallel=tp=2 -o %t/tp2-fwd.mlir
// RUN: loom-opt %t/tp2-fwd.mlir --loom-overlap-split=k=2 -o %t/split-fwd.mlir
// RUN: grep -c shard.all_reduce %t/tp2-fwd.mlir | FileCheck %s --check-prefix=PLAIN
// RUN: FileCheck %s < %t/split-fwd.mlir
// RUN: loom-opt %t/split-fwd.mlir --loom-autodiff -o %t/split.mlir
// RUN: %loompy %S/Inputs/tensor_parallel.py slice %t %t/tp2-fwd.mlir
// RUN: loom-run %t/split.mlir --entry main_grad --ranks 2 --weights %t/weights.safetensors \
// RUN:   @%t/2.rsp --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/split
// RUN: %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/tp2-fwd.mlir \
// RUN:   %t/split/rank0 %t/split/rank1 | FileCheck %s --check-prefix=EQ
//
// PLAIN: {{^8$}}
// The embedding's all-reduce, then per layer the attention's and the MLP's,
// then the cross-entropy's three: each as sub-batch 0's then sub-batch 1's.
// CHECK-LABEL: func.func @main(
// CHECK-COUNT-2: shard.all_reduce {{.*}} : tensor<2x4x16xf32> -> tensor<2x4x16xf32>
// CHECK-NOT:     loom.concat
// CHECK-COUNT-8: shard.all_reduce {{.*}} : tensor<2x4x16xf32> -> tensor<2x4x16xf32>
// CHECK-NOT:     loom.concat
// CHECK-COUNT-6: shard.all_reduce {{.*}} : tensor<2x4xf32> -> tensor<2x4xf32>
// CHECK-NOT:     shard.all_reduce
// CHECK:         loom.concat {{.*}} dim = 0 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
// CHECK:         return
//
// EQ: loss (full): max abs diff
// EQ: equivalent: yes

// loom-overlap-order after loom-overlap-split and autodiff: two Megatron MLP
// blocks (tp=2) with a bias add and a row scale between them, split into
// k=2 sub-batches. loom-overlap-split's segments end at an all-reduce and
// begin at a tp_copy, so the ops between the two blocks are a segment of
// their own: sub-batch 1's add reads its all-reduce right after it was
// issued, with nothing left to hide it behind (BEFORE). After the pass
// each sub-batch runs up to and including its next all-reduce in turn: in
// the forward pass sub-batch 0's add, scale and second block run before
// sub-batch 1's add; in the backward pass both all-reduces are issued
// before either is read. Only the order changes: on 2 ranks the loss and
// gradients equal the single-device ones (EQ).
//
// RUN: loom-opt %s --loom-tensor-parallel=tp=2 --loom-overlap-split=k=2 --loom-autodiff \
// RUN:   | FileCheck %s --check-prefix=BEFORE
// RUN: loom-opt %s --loom-tensor-parallel=tp=2 --loom-overlap-split=k=2 --loom-autodiff \
// RUN:   --loom-overlap-order | FileCheck %s
//
//
// With the optimizer, a parameter's update runs as soon as its gradient
// is complete (the gradient is freed), not at the end of the step: the
// second block's weights are updated before the first block's backward
// reads its all-reduce (OPT).
// RUN: loom-opt %s --loom-tensor-parallel=tp=2 --loom-overlap-split=k=2 --loom-autodiff \
// RUN:   "--loom-optimizer=function=main_grad optimizer=sgd lr=0.1" --loom-overlap-order \
// RUN:   | FileCheck %s --check-prefix=OPT
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %loompy %S/Inputs/tensor_parallel.py make %t %s --classes 8
// RUN: loom-opt %s --loom-autodiff -o %t/ref.mlir
// RUN: loom-run %t/ref.mlir --entry main_grad --weights %t/weights.safetensors \
// RUN:   --input x=%t/x.npy --input labels=%t/labels.npy --output-dir %t/ref
// RUN: loom-opt %s --loom-tensor-parallel=tp=2 -o %t/tp2-fwd.mlir
// RUN: loom-opt %t/tp2-fwd.mlir --loom-overlap-split=k=2 --loom-autodiff \
// RUN:   --loom-overlap-order -o %t/split.mlir
// RUN: %loompy %S/Inputs/tensor_parallel.py slice %t %t/tp2-fwd.mlir
// RUN: loom-run %t/split.mlir --entry main_grad --ranks 2 --weights %t/weights.safetensors \
// RUN:   @%t/2.rsp --input x=%t/x.npy --input labels=%t/labels.npy --output-dir %t/split
// RUN: %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/tp2-fwd.mlir \
// RUN:   %t/split/rank0 %t/split/rank1 | FileCheck %s --check-prefix=EQ
//
// BEFORE-LABEL: func.func @main_grad(
// BEFORE:       %[[G0:.*]] = shard.all_reduce {{.*}}loom.sub_batch = 0
// BEFORE:       %[[G1:.*]] = shard.all_reduce {{.*}}loom.sub_batch = 1
// BEFORE:       loom.add %[[G0]], {{.*}}loom.sub_batch = 0
// BEFORE-NOT:   shard.all_reduce
// BEFORE:       loom.add %[[G1]], {{.*}}loom.sub_batch = 1
// BEFORE:       shard.all_reduce {{.*}}loom.sub_batch = 0
//
// CHECK-LABEL: func.func @main_grad(
// Forward: sub-batch 0's first block, then sub-batch 1's.
// CHECK:       %[[G0:.*]] = shard.all_reduce {{.*}}loom.sub_batch = 0
// CHECK-NOT:   loom.sub_batch = 0
// CHECK:       %[[G1:.*]] = shard.all_reduce {{.*}}loom.sub_batch = 1
// Sub-batch 0 from its add through its second block's all-reduce, while
// sub-batch 1's first all-reduce is in flight; then sub-batch 1.
// CHECK:       loom.add %[[G0]], {{.*}}loom.sub_batch = 0
// CHECK-NOT:   loom.sub_batch = 1
// CHECK:       shard.all_reduce {{.*}}loom.sub_batch = 0
// CHECK:       loom.add %[[G1]], {{.*}}loom.sub_batch = 1
// CHECK:       shard.all_reduce {{.*}}loom.sub_batch = 1
// Backward: both sub-batches' all-reduces issued before either is read.
// CHECK:       %[[B0:.*]] = shard.all_reduce {{.*}}loom.phase = "backward"
// CHECK-NOT:   %[[B0]]
// CHECK:       %[[B1:.*]] = shard.all_reduce {{.*}}loom.phase = "backward"
// CHECK:       %[[B0]]
// CHECK:       %[[B1]]
// CHECK:       return
//
// OPT-LABEL: func.func @main_step(
// OPT:       %[[B0:.*]] = shard.all_reduce {{.*}}loom.phase = "backward"
// OPT:       shard.all_reduce {{.*}}loom.phase = "backward"
// OPT:       loom.sub %{{.*}}loom.phase = "optimizer"
// OPT:       loom.sub %{{.*}}loom.phase = "optimizer"
// OPT:       %[[B0]]
// OPT:       return
//
// EQ: equivalent: yes

module {
  func.func @main(%x: tensor<4x8xf32> {loom.name = "x"},
                  %labels: tensor<4xi64> {loom.name = "labels"},
                  %w1: tensor<8x16xf32> {loom.param, loom.name = "fc1.weight"},
                  %w2: tensor<16x8xf32> {loom.param, loom.name = "fc2.weight"},
                  %w3: tensor<8x16xf32> {loom.param, loom.name = "fc3.weight"},
                  %w4: tensor<16x8xf32> {loom.param, loom.name = "fc4.weight"},
                  %p: tensor<8xf32> {loom.param, loom.name = "shift"})
      -> (tensor<f32> {loom.name = "loss"}) {
    %h = loom.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    %a = loom.relu %h : tensor<4x16xf32>
    %y = loom.dot_general %a, %w2, contracting_dims = [1] x [0] : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
    %pb = loom.broadcast %p, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
    %rows = loom.constant dense<[[1.0], [2.0], [3.0], [4.0]]> : tensor<4x1xf32>
    %rb = loom.broadcast %rows, dims = [0, 1] : tensor<4x1xf32> -> tensor<4x8xf32>
    %z = loom.add %y, %pb : tensor<4x8xf32>
    %zs = loom.mul %z, %rb : tensor<4x8xf32>
    %h2 = loom.dot_general %zs, %w3, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    %a2 = loom.tanh %h2 : tensor<4x16xf32>
    %y2 = loom.dot_general %a2, %w4, contracting_dims = [1] x [0] : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
    %loss = loom.cross_entropy %y2, %labels reduction = mean : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

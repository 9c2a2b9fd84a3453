// RUN: loom-opt %s --loom-tensor-parallel=tp=2 --loom-overlap-split=k=2 | FileCheck %s
// RUN: loom-opt %s --loom-tensor-parallel=tp=2 --loom-overlap-split=k=1 | FileCheck %s --check-prefix=OFF
// RUN: loom-opt %s --loom-tensor-parallel=tp=2 --loom-overlap-split=k=2 --loom-autodiff \
// RUN:   | FileCheck %s --check-prefix=GRAD
//
// The training pipeline runs it between the tensor-parallel passes and
// autodiff, and loom-max-inflight-collectives after the lowering: each
// sub-batch's all-reduce is waited for right before the next one starts,
// with the other sub-batch's compute in between.
// RUN: loom-opt %s --loom-training-pipeline="tp=2 overlap-split=2" --dump-pass-pipeline \
// RUN:   -o %t.lowered.mlir 2>&1 | tr -d ' \n' | FileCheck %s --check-prefix=PIPE
// RUN: FileCheck %s --check-prefix=LOWERED < %t.lowered.mlir
// PIPE: loom-vocab-parallel{function=maintp=2},loom-report-sharding{function=mainmin-fraction=1.000000e-02report=require-sharded=false},loom-overlap-split{function=maink=2},loom-autodiff{
// PIPE: convert-loom-to-loomrt{function={main_step}},loom-fuse-gemm-bias,loom-fuse-gemm-accumulate,loom-fold-layout-copies,loom-fuse-norm-grad,loom-fuse-loss-softmax,loom-merge-kernels,loom-max-inflight-collectives{max=1},loom-comm-schedule,loom-in-place-updates,loom-memory-plan{
// LOWERED:      %[[H0:.*]] = loomrt.all_reduce_start {{.*}} grid_axes = [2]
// LOWERED-NOT:  loomrt.wait
// LOWERED:      loomrt.gemm
// LOWERED-NOT:  loomrt.wait
// LOWERED:      loomrt.gemm
// LOWERED-NOT:  loomrt.wait
// LOWERED:      loomrt.wait %[[H0]]
// LOWERED-NEXT: %[[H1:.*]] = loomrt.all_reduce_start {{.*}} grid_axes = [2]
// LOWERED-NOT:  loomrt.wait
// LOWERED:      loomrt.kernel
// LOWERED:      loomrt.wait %[[H1]]
//
// Two Megatron MLP blocks in a chain (tp=2), split into k=2 sub-batches of
// 2 rows. The data argument is sliced once per sub-batch; sub-batch 0 runs
// its first block up to and including its all-reduce, then sub-batch 1 its
// own, and so on through both blocks without re-joining in between: a
// segment ends after a shard.all_reduce and begins at a loom.tp_copy. The
// full-size operands without rows of their own: the bias broadcast is the
// same along the rows and rebuilt at 2 rows once, the row scale varies
// along them and is sliced per sub-batch. The cross-entropy's mean mixes
// rows: it is the join, on the concatenation of the sub-batches' logits
// (with the whole labels). k=1 changes nothing.
//
// CHECK-LABEL: func.func @main(
// CHECK-SAME:  %[[X:[a-z0-9]+]]: tensor<4x8xf32> {loom.name = "x"}, %[[L:[a-z0-9]+]]: tensor<4xi64>
// CHECK-NOT:   loom.broadcast {{.*}} -> tensor<4x8xf32>
// CHECK:       %[[ROWS:.*]] = loom.broadcast {{.*}} : tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:  %[[X0:.*]] = loom.slice %[[X]], start = [0, 0], limit = [2, 8], strides = [1, 1] : tensor<4x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:  %[[X1:.*]] = loom.slice %[[X]], start = [2, 0], limit = [4, 8], strides = [1, 1] : tensor<4x8xf32> -> tensor<2x8xf32>
// CHECK-NOT:   loom.slice %[[L]]
// First block: sub-batch 0, then sub-batch 1.
// CHECK-NEXT:  %[[F0:.*]] = loom.tp_copy %[[X0]] {{.*}} : tensor<2x8xf32>
// CHECK-NEXT:  loom.dot_general %[[F0]], {{.*}} -> tensor<2x8xf32>
// CHECK-NEXT:  loom.relu
// CHECK-NEXT:  loom.dot_general
// CHECK-NEXT:  %[[G0:.*]] = shard.all_reduce {{.*}} : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:  %[[F1:.*]] = loom.tp_copy %[[X1]] {{.*}} : tensor<2x8xf32>
// CHECK-NEXT:  loom.dot_general %[[F1]], {{.*}} -> tensor<2x8xf32>
// CHECK-NEXT:  loom.relu
// CHECK-NEXT:  loom.dot_general
// CHECK-NEXT:  %[[G1:.*]] = shard.all_reduce {{.*}} : tensor<2x8xf32> -> tensor<2x8xf32>
// Between the blocks: the bias (rebuilt once) and the row scale (sliced).
// CHECK-NEXT:  %[[B:.*]] = loom.broadcast %{{.*}}, dims = [1] : tensor<8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:  %[[Z0:.*]] = loom.add %[[G0]], %[[B]] {loom.sub_batch = 0 : i64} : tensor<2x8xf32>
// CHECK-NEXT:  %[[R0:.*]] = loom.slice %[[ROWS]], start = [0, 0], limit = [2, 8]
// CHECK-NEXT:  %[[S0:.*]] = loom.mul %[[Z0]], %[[R0]]
// CHECK-NEXT:  %[[Z1:.*]] = loom.add %[[G1]], %[[B]] {loom.sub_batch = 1 : i64} : tensor<2x8xf32>
// CHECK-NEXT:  %[[R1:.*]] = loom.slice %[[ROWS]], start = [2, 0], limit = [4, 8]
// CHECK-NEXT:  %[[S1:.*]] = loom.mul %[[Z1]], %[[R1]]
// Second block, not re-joined.
// CHECK-NEXT:  loom.tp_copy %[[S0]]
// CHECK-NEXT:  loom.dot_general
// CHECK-NEXT:  loom.tanh
// CHECK-NEXT:  loom.dot_general
// CHECK-NEXT:  %[[Y0:.*]] = shard.all_reduce
// CHECK-NEXT:  loom.tp_copy %[[S1]]
// CHECK-NEXT:  loom.dot_general
// CHECK-NEXT:  loom.tanh
// CHECK-NEXT:  loom.dot_general
// CHECK-NEXT:  %[[Y1:.*]] = shard.all_reduce
// The join.
// CHECK-NEXT:  %[[Y:.*]] = loom.concat %[[Y0]], %[[Y1]] dim = 0 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:  %[[LOSS:.*]] = loom.cross_entropy %[[Y]], %[[L]] : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<f32>
// CHECK-NEXT:  return %[[LOSS]]
//
// OFF-NOT: loom.slice
// OFF-NOT: loom.concat
// OFF-COUNT-2: shard.all_reduce
// OFF-NOT: shard.all_reduce
//
// The backward pass visits the ops in reverse: the gradient all-reduce of
// sub-batch 1's second tp_copy (Megatron's f) is in flight while sub-batch
// 0's second block is differentiated.
// GRAD-LABEL: func.func @main_grad(
// GRAD-COUNT-4: shard.all_reduce {{.*}} : tensor<2x8xf32>
// GRAD:         %[[D1:.*]] = shard.all_reduce %{{.*}} on @mesh grid_axes = [2] {loom.phase = "backward"}
// GRAD-NOT:     %[[D1]]
// GRAD:         loom.dot_general {{.*}}loom.phase = "backward"
// GRAD-NOT:     %[[D1]]
// GRAD:         %[[D0:.*]] = shard.all_reduce %{{.*}} on @mesh grid_axes = [2] {loom.phase = "backward"}
// GRAD-NEXT:    loom.mul %[[D1]]
// GRAD-NEXT:    loom.mul %[[D0]]
// GRAD-NOT:     shard.all_reduce
// GRAD:         return

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

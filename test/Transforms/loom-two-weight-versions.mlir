// loom-two-weight-versions (PipeDream-2BW, --pipeline-weights 2): the step
// all-reduces the previous step's gradient bucket, kept in a new state
// argument, at its top (so the exchange overlaps the forward and backward
// pass), and returns this step's bucket, unreduced, as that state's next
// value. The loss keeps its own all-reduce in place.
//
// RUN: loom-opt %s --loom-training-pipeline="dp=2 pipeline-weights=2" \
// RUN:   --mlir-print-ir-after=loom-two-weight-versions -o /dev/null 2>&1 | FileCheck %s
// Without data parallelism there is nothing to overlap.
// RUN: not loom-opt %s -loom-autodiff -loom-optimizer -loom-two-weight-versions 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ERR

// CHECK-LABEL: func.func @main_step(
// CHECK-SAME:    %arg2: tensor<f32> {loom.name = "step", loom.state},
// CHECK-SAME:    %arg3: tensor<136xf32> {loom.name = "pending_grad.0", loom.state},
// CHECK-SAME:    %arg4: tensor<2x4xi64> {loom.name = "ids"}
// CHECK-SAME:    tensor<f32> {loom.name = "step", loom.updates = 2 : i64},
// CHECK-SAME:    tensor<136xf32> {loom.name = "pending_grad.0", loom.updates = 3 : i64})
// CHECK-NEXT:  %[[R:.*]] = shard.all_reduce %arg3 on @mesh grid_axes = [0]
// CHECK:       shard.all_reduce {{.*}} : tensor<f32> -> tensor<f32>
// CHECK:       %[[LOCAL:.*]] = loom.concat
// CHECK-NOT:   shard.all_reduce %[[LOCAL]]
// CHECK:       loom.mul %[[R]]
// CHECK:       return {{.*}}, %[[LOCAL]] :

// ERR: error: loom-two-weight-versions: @main_step has no data-parallel gradient all-reduce to overlap with the next step (two weight versions need dp > 1, after loom-data-parallel)

module {
  func.func @main(
      %ids: tensor<2x4xi64> {loom.name = "ids"},
      %labels: tensor<2x4xi64> {loom.name = "labels"},
      %wte: tensor<10x8xf32> {loom.param, loom.name = "wte.weight"},
      %head: tensor<8x7xf32> {loom.param, loom.name = "lm_head.weight"})
      -> (tensor<f32> {loom.name = "loss"}) {
    %tok = loom.gather %wte[%ids], axis = 0 : (tensor<10x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
    %h = loom.tanh %tok : tensor<2x4x8xf32>
    %logits = loom.dot_general %h, %head, contracting_dims = [2] x [0] : (tensor<2x4x8xf32>, tensor<8x7xf32>) -> tensor<2x4x7xf32>
    %labels7 = loom.constant dense<1> : tensor<2x4xi64>
    %loss = loom.cross_entropy %logits, %labels7 reduction = mean : (tensor<2x4x7xf32>, tensor<2x4xi64>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

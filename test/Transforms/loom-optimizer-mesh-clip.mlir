// clip-grad-norm on a mesh: the global norm of the whole model.
// RUN: split-file %s %t
// RUN: loom-opt %t/tp-pp.mlir -loom-optimizer="lr=0.1 clip-grad-norm=1.0" | FileCheck %s
// RUN: loom-opt %t/no-grid.mlir -loom-optimizer="lr=0.1 clip-grad-norm=1.0" \
// RUN:   | FileCheck %s --check-prefix=NOGRID

// A stage of a pipeline (pp = 2) of tensor-parallel programs (tp = 2), as
// the module's @mesh says: %ws is a
// tp slice, %wr replicated, %wc another stage's copy of a shared parameter.
// The slice's square goes through the tp all-reduce; the replicated square
// is added after it (once per tp group); the copy is left out; the stage's
// sum goes through the pp all-reduce.
// CHECK-LABEL: func.func @f_step
// CHECK:      %[[SQS:.*]] = loom.mul %{{.*}}, %{{.*}} : tensor<f32>
// CHECK:      %[[SQR:.*]] = loom.mul %{{.*}}, %{{.*}} : tensor<f32>
// CHECK-NOT:  loom.reduce_sum
// CHECK:      %[[TP:.*]] = shard.all_reduce %[[SQS]] on @mesh grid_axes = [2]
// CHECK-NEXT: %[[LOCAL:.*]] = loom.add %[[TP]], %[[SQR]]
// CHECK-NEXT: %[[PP:.*]] = shard.all_reduce %[[LOCAL]] on @mesh grid_axes = [1]
// CHECK-NEXT: loom.sqrt %[[PP]]

// Without a mesh the program runs on one device: the norm is local.
// NOGRID-LABEL: func.func @f_step
// NOGRID-NOT:   shard.all_reduce
// NOGRID:       loom.sqrt
// NOGRID-NOT:   shard.all_reduce

//--- tp-pp.mlir
shard.grid @mesh(shape = 1x2x2)
func.func @f_grad(%ws: tensor<4xf32> {loom.param, loom.name = "ws", loom.shard = #loom.shard<dim = 0, parts = 2>},
                  %wr: tensor<4xf32> {loom.param, loom.name = "wr"},
                  %wc: tensor<4xf32> {loom.param, loom.name = "wc", loom.pipeline_copy})
    -> (tensor<f32> {loom.name = "loss"},
        tensor<4xf32> {loom.name = "grad.ws", loom.grad_of = 0 : i64},
        tensor<4xf32> {loom.name = "grad.wr", loom.grad_of = 1 : i64},
        tensor<4xf32> {loom.name = "grad.wc", loom.grad_of = 2 : i64}) {
  %zero = loom.constant dense<0.0> : tensor<f32>
  return %zero, %ws, %wr, %wc : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

//--- no-grid.mlir
func.func @f_grad(%w: tensor<4xf32> {loom.param, loom.name = "w"})
    -> (tensor<f32> {loom.name = "loss"},
        tensor<4xf32> {loom.name = "grad.w", loom.grad_of = 0 : i64}) {
  %zero = loom.constant dense<0.0> : tensor<f32>
  return %zero, %w : tensor<f32>, tensor<4xf32>
}

// loom-pipeline-schedule (with loom-pipeline-partition/-split), alone and
// combined with loom-tensor-parallel and loom-data-parallel: the per-rank
// gradient functions, run by loom-run on the ranks of a dp x pp x tp mesh
// (rank (d*P + p)*T + t; each rank its stage's function), return the loss and
// gradients that the single-device @main_grad returns on all 8 rows: the
// loss on every rank of the last stage, every gradient (its tensor-parallel
// slice) on the ranks that hold the parameter. Micro-batches have 2 rows;
// each data-parallel rank gets 8 / D rows.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %loompy %S/Inputs/pipeline_parallel.py make %t --rows 8 --dp 1 2 --tp 1 2
//
// The reference: one device, all 8 rows.
// RUN: loom-opt %s --loom-shape-inference="arg-shapes=x=8x8,y=8x8" --loom-autodiff -o %t/ref.mlir
// RUN: loom-run %t/ref.mlir --entry main_grad --weights %t/weights.safetensors \
// RUN:   --input x=%t/x.npy --input y=%t/y.npy --output-dir %t/ref
//
// dp2:
// RUN: loom-opt %s --loom-shape-inference="arg-shapes=x=4x8,y=4x8" --loom-autodiff --loom-data-parallel=dp=2 -o %t/dp2.mlir
// RUN: loom-run %t/dp2.mlir --ranks 2 --mesh dp=2,pp=1,tp=1 \
// RUN:   --entry main_grad,main_grad \
// RUN:   --weights %t/weights.safetensors \
// RUN:   --input x@0=%t/x.dp2.0.npy --input y@0=%t/y.dp2.0.npy \
// RUN:   --input x@1=%t/x.dp2.1.npy --input y@1=%t/y.dp2.1.npy \
// RUN:   --output-dir %t/dp2
// RUN: %loompy %S/Inputs/pipeline_parallel.py compare %t/ref --mesh 2,1,1 \
// RUN:   %t/dp2/rank0 %t/dp2/rank1 | FileCheck %s --check-prefix=EQ
//
// tp2:
// RUN: loom-opt %s --loom-shape-inference="arg-shapes=x=8x8,y=8x8" --loom-tensor-parallel=tp=2 --loom-autodiff -o %t/tp2.mlir
// RUN: loom-run %t/tp2.mlir --ranks 2 --mesh dp=1,pp=1,tp=2 \
// RUN:   --entry main_grad,main_grad \
// RUN:   --input x@0=%t/x.npy --input y@0=%t/y.npy \
// RUN:   --input w1@0=%t/w1.tp2.0.npy --input w2@0=%t/w2.tp2.0.npy --input w3@0=%t/w3.tp2.0.npy --input w4@0=%t/w4.tp2.0.npy \
// RUN:   --input x@1=%t/x.npy --input y@1=%t/y.npy \
// RUN:   --input w1@1=%t/w1.tp2.1.npy --input w2@1=%t/w2.tp2.1.npy --input w3@1=%t/w3.tp2.1.npy --input w4@1=%t/w4.tp2.1.npy \
// RUN:   --output-dir %t/tp2
// RUN: %loompy %S/Inputs/pipeline_parallel.py compare %t/ref --mesh 1,1,2 \
// RUN:   %t/tp2/rank0 %t/tp2/rank1 | FileCheck %s --check-prefix=EQ
//
// pp2:
// RUN: loom-opt %s --loom-shape-inference="arg-shapes=x=2x8,y=2x8" --loom-pipeline-partition=stages=2 \
// RUN:   --loom-pipeline-split --loom-pipeline-schedule=microbatches=4 -o %t/pp2.mlir
// RUN: loom-run %t/pp2.mlir --ranks 2 --mesh dp=1,pp=2,tp=1 \
// RUN:   --entry main_stage0_grad,main_stage1_grad \
// RUN:   --weights %t/weights.safetensors \
// RUN:   --input x@0=%t/x.npy --input y@0=%t/y.npy \
// RUN:   --input x@1=%t/x.npy --input y@1=%t/y.npy \
// RUN:   --output-dir %t/pp2
// RUN: %loompy %S/Inputs/pipeline_parallel.py compare %t/ref --mesh 1,2,1 \
// RUN:   %t/pp2/rank0 %t/pp2/rank1 | FileCheck %s --check-prefix=EQ
//
// dp2tp2:
// RUN: loom-opt %s --loom-shape-inference="arg-shapes=x=4x8,y=4x8" --loom-tensor-parallel=tp=2 --loom-autodiff \
// RUN:   --loom-data-parallel=dp=2 -o %t/dp2tp2.mlir
// RUN: loom-run %t/dp2tp2.mlir --ranks 4 --mesh dp=2,pp=1,tp=2 \
// RUN:   --entry main_grad,main_grad,main_grad,main_grad \
// RUN:   --input x@0=%t/x.dp2.0.npy --input y@0=%t/y.dp2.0.npy \
// RUN:   --input w1@0=%t/w1.tp2.0.npy --input w2@0=%t/w2.tp2.0.npy --input w3@0=%t/w3.tp2.0.npy --input w4@0=%t/w4.tp2.0.npy \
// RUN:   --input x@1=%t/x.dp2.0.npy --input y@1=%t/y.dp2.0.npy \
// RUN:   --input w1@1=%t/w1.tp2.1.npy --input w2@1=%t/w2.tp2.1.npy --input w3@1=%t/w3.tp2.1.npy --input w4@1=%t/w4.tp2.1.npy \
// RUN:   --input x@2=%t/x.dp2.1.npy --input y@2=%t/y.dp2.1.npy \
// RUN:   --input w1@2=%t/w1.tp2.0.npy --input w2@2=%t/w2.tp2.0.npy --input w3@2=%t/w3.tp2.0.npy --input w4@2=%t/w4.tp2.0.npy \
// RUN:   --input x@3=%t/x.dp2.1.npy --input y@3=%t/y.dp2.1.npy \
// RUN:   --input w1@3=%t/w1.tp2.1.npy --input w2@3=%t/w2.tp2.1.npy --input w3@3=%t/w3.tp2.1.npy --input w4@3=%t/w4.tp2.1.npy \
// RUN:   --output-dir %t/dp2tp2
// RUN: %loompy %S/Inputs/pipeline_parallel.py compare %t/ref --mesh 2,1,2 \
// RUN:   %t/dp2tp2/rank0 %t/dp2tp2/rank1 %t/dp2tp2/rank2 %t/dp2tp2/rank3 | FileCheck %s --check-prefix=EQ
//
// tp2pp2:
// RUN: loom-opt %s --loom-shape-inference="arg-shapes=x=2x8,y=2x8" --loom-tensor-parallel=tp=2 \
// RUN:   --loom-pipeline-partition=stages=2 --loom-pipeline-split --loom-pipeline-schedule="microbatches=4 schedule=gpipe" -o %t/tp2pp2.mlir
// RUN: loom-run %t/tp2pp2.mlir --ranks 4 --mesh dp=1,pp=2,tp=2 \
// RUN:   --entry main_stage0_grad,main_stage0_grad,main_stage1_grad,main_stage1_grad \
// RUN:   --input x@0=%t/x.npy --input y@0=%t/y.npy \
// RUN:   --input w1@0=%t/w1.tp2.0.npy --input w2@0=%t/w2.tp2.0.npy --input w3@0=%t/w3.tp2.0.npy --input w4@0=%t/w4.tp2.0.npy \
// RUN:   --input x@1=%t/x.npy --input y@1=%t/y.npy \
// RUN:   --input w1@1=%t/w1.tp2.1.npy --input w2@1=%t/w2.tp2.1.npy --input w3@1=%t/w3.tp2.1.npy --input w4@1=%t/w4.tp2.1.npy \
// RUN:   --input x@2=%t/x.npy --input y@2=%t/y.npy \
// RUN:   --input w1@2=%t/w1.tp2.0.npy --input w2@2=%t/w2.tp2.0.npy --input w3@2=%t/w3.tp2.0.npy --input w4@2=%t/w4.tp2.0.npy \
// RUN:   --input x@3=%t/x.npy --input y@3=%t/y.npy \
// RUN:   --input w1@3=%t/w1.tp2.1.npy --input w2@3=%t/w2.tp2.1.npy --input w3@3=%t/w3.tp2.1.npy --input w4@3=%t/w4.tp2.1.npy \
// RUN:   --output-dir %t/tp2pp2
// RUN: %loompy %S/Inputs/pipeline_parallel.py compare %t/ref --mesh 1,2,2 \
// RUN:   %t/tp2pp2/rank0 %t/tp2pp2/rank1 %t/tp2pp2/rank2 %t/tp2pp2/rank3 | FileCheck %s --check-prefix=EQ
//
// dp2tp2pp2:
// RUN: loom-opt %s --loom-shape-inference="arg-shapes=x=2x8,y=2x8" --loom-tensor-parallel=tp=2 \
// RUN:   --loom-pipeline-partition=stages=2 --loom-pipeline-split --loom-pipeline-schedule=microbatches=2 \
// RUN:   --loom-data-parallel="function=main_stage0_grad dp=2" --loom-data-parallel="function=main_stage1_grad dp=2" -o %t/dp2tp2pp2.mlir
// RUN: loom-run %t/dp2tp2pp2.mlir --ranks 8 --mesh dp=2,pp=2,tp=2 \
// RUN:   --entry main_stage0_grad,main_stage0_grad,main_stage1_grad,main_stage1_grad,main_stage0_grad,main_stage0_grad,main_stage1_grad,main_stage1_grad \
// RUN:   --input x@0=%t/x.dp2.0.npy --input y@0=%t/y.dp2.0.npy \
// RUN:   --input w1@0=%t/w1.tp2.0.npy --input w2@0=%t/w2.tp2.0.npy --input w3@0=%t/w3.tp2.0.npy --input w4@0=%t/w4.tp2.0.npy \
// RUN:   --input x@1=%t/x.dp2.0.npy --input y@1=%t/y.dp2.0.npy \
// RUN:   --input w1@1=%t/w1.tp2.1.npy --input w2@1=%t/w2.tp2.1.npy --input w3@1=%t/w3.tp2.1.npy --input w4@1=%t/w4.tp2.1.npy \
// RUN:   --input x@2=%t/x.dp2.0.npy --input y@2=%t/y.dp2.0.npy \
// RUN:   --input w1@2=%t/w1.tp2.0.npy --input w2@2=%t/w2.tp2.0.npy --input w3@2=%t/w3.tp2.0.npy --input w4@2=%t/w4.tp2.0.npy \
// RUN:   --input x@3=%t/x.dp2.0.npy --input y@3=%t/y.dp2.0.npy \
// RUN:   --input w1@3=%t/w1.tp2.1.npy --input w2@3=%t/w2.tp2.1.npy --input w3@3=%t/w3.tp2.1.npy --input w4@3=%t/w4.tp2.1.npy \
// RUN:   --input x@4=%t/x.dp2.1.npy --input y@4=%t/y.dp2.1.npy \
// RUN:   --input w1@4=%t/w1.tp2.0.npy --input w2@4=%t/w2.tp2.0.npy --input w3@4=%t/w3.tp2.0.npy --input w4@4=%t/w4.tp2.0.npy \
// RUN:   --input x@5=%t/x.dp2.1.npy --input y@5=%t/y.dp2.1.npy \
// RUN:   --input w1@5=%t/w1.tp2.1.npy --input w2@5=%t/w2.tp2.1.npy --input w3@5=%t/w3.tp2.1.npy --input w4@5=%t/w4.tp2.1.npy \
// RUN:   --input x@6=%t/x.dp2.1.npy --input y@6=%t/y.dp2.1.npy \
// RUN:   --input w1@6=%t/w1.tp2.0.npy --input w2@6=%t/w2.tp2.0.npy --input w3@6=%t/w3.tp2.0.npy --input w4@6=%t/w4.tp2.0.npy \
// RUN:   --input x@7=%t/x.dp2.1.npy --input y@7=%t/y.dp2.1.npy \
// RUN:   --input w1@7=%t/w1.tp2.1.npy --input w2@7=%t/w2.tp2.1.npy --input w3@7=%t/w3.tp2.1.npy --input w4@7=%t/w4.tp2.1.npy \
// RUN:   --output-dir %t/dp2tp2pp2
// RUN: %loompy %S/Inputs/pipeline_parallel.py compare %t/ref --mesh 2,2,2 \
// RUN:   %t/dp2tp2pp2/rank0 %t/dp2tp2pp2/rank1 %t/dp2tp2pp2/rank2 %t/dp2tp2pp2/rank3 %t/dp2tp2pp2/rank4 %t/dp2tp2pp2/rank5 %t/dp2tp2pp2/rank6 %t/dp2tp2pp2/rank7 | FileCheck %s --check-prefix=EQ
//
// The comparison has teeth: a pipeline of 2 micro-batches sees only the
// first 4 rows, and its loss and gradients differ from the reference.
// RUN: loom-opt %s --loom-shape-inference="arg-shapes=x=2x8,y=2x8" --loom-pipeline-partition=stages=2 \
// RUN:   --loom-pipeline-split --loom-pipeline-schedule=microbatches=2 -o %t/short.mlir
// RUN: %loompy -c "import numpy as np; [np.save('%t/' + n + '4.npy', np.load('%t/' + n + '.npy')[:4]) for n in 'xy']"
// RUN: loom-run %t/short.mlir --ranks 2 --entry main_stage0_grad,main_stage1_grad \
// RUN:   --weights %t/weights.safetensors --input x=%t/x4.npy --input y=%t/y4.npy --output-dir %t/short
// RUN: not %loompy %S/Inputs/pipeline_parallel.py compare %t/ref --mesh 1,2,1 \
// RUN:   %t/short/rank0 %t/short/rank1 | FileCheck %s --check-prefix=NEQ
//
// EQ: equivalent: yes
// NEQ: equivalent: no
//
// The schedule in the IR: 1F1B on stage 0 of 2 with 4 micro-batches runs
// one warm-up forward, then alternates (F1 B0 F2 B1 F3 B2), then B3; each
// forward sends its output (tags (m*E + e)*2, one edge E = 1), each
// backward receives its cotangent (tag + 1). GPipe runs all forwards first.
// RUN: FileCheck %s --check-prefix=F1B1 < %t/pp2.mlir
// RUN: FileCheck %s --check-prefix=GPIPE < %t/tp2pp2.mlir
// F1B1:       shard.grid @mesh(shape = 1x2x1)
// F1B1-LABEL: func.func @main_stage0_grad
// F1B1-SAME:    %arg0: tensor<8x8xf32> {loom.name = "x"}
// F1B1-SAME:    attributes {loom.microbatches = 4 : i64, loom.schedule = "1f1b", loom.stage = 0 : i64}
// F1B1:         loom.slice %arg0, start = [0, 0], limit = [2, 8]
// F1B1:         shard.send {{.*}} on @mesh grid_axes = [1] destination = [1] {loom.tag = 0 : i64}
// F1B1:         loom.slice %arg0, start = [2, 0], limit = [4, 8]
// F1B1:         shard.send {{.*}} destination = [1] {loom.tag = 2 : i64}
// F1B1:         shard.recv {{.*}} source = [1] {loom.tag = 1 : i64}
// F1B1:         shard.send {{.*}} destination = [1] {loom.tag = 4 : i64}
// F1B1:         shard.recv {{.*}} source = [1] {loom.tag = 3 : i64}
// F1B1:         shard.send {{.*}} destination = [1] {loom.tag = 6 : i64}
// F1B1:         shard.recv {{.*}} source = [1] {loom.tag = 5 : i64}
// F1B1:         shard.recv {{.*}} source = [1] {loom.tag = 7 : i64}
// F1B1:         loom.div {{.*}} {loom.phase = "backward"}
// F1B1:         return
// The last stage receives, then sends the cotangent back, per micro-batch.
// F1B1-LABEL: func.func @main_stage1_grad
// F1B1:         shard.recv {{.*}} source = [0] {loom.tag = 0 : i64}
// F1B1:         shard.send {{.*}} destination = [0] {loom.tag = 1 : i64}
// F1B1:         shard.recv {{.*}} source = [0] {loom.tag = 2 : i64}
// F1B1:         shard.send {{.*}} destination = [0] {loom.tag = 3 : i64}
//
// One device mesh: 2 stages of 2 tensor-parallel ranks.
// GPIPE:       shard.grid @mesh(shape = 1x2x2)
// GPIPE-LABEL: func.func @main_stage0_grad
// GPIPE-SAME:    loom.schedule = "gpipe"
// GPIPE:         shard.send {{.*}} {loom.tag = 0 : i64}
// GPIPE:         shard.send {{.*}} {loom.tag = 2 : i64}
// GPIPE:         shard.send {{.*}} {loom.tag = 4 : i64}
// GPIPE:         shard.send {{.*}} {loom.tag = 6 : i64}
// GPIPE:         shard.recv {{.*}} {loom.tag = 1 : i64}
// GPIPE:         shard.recv {{.*}} {loom.tag = 3 : i64}
// GPIPE:         shard.recv {{.*}} {loom.tag = 5 : i64}
// GPIPE:         shard.recv {{.*}} {loom.tag = 7 : i64}

// Two residual MLP blocks (Megatron column/row pairs under tp).
func.func @main(%x: tensor<?x8xf32> {loom.name = "x"}, %y: tensor<?x8xf32> {loom.name = "y"},
                %w1: tensor<8x16xf32> {loom.param, loom.name = "w1"},
                %w2: tensor<16x8xf32> {loom.param, loom.name = "w2"},
                %w3: tensor<8x16xf32> {loom.param, loom.name = "w3"},
                %w4: tensor<16x8xf32> {loom.param, loom.name = "w4"})
    -> (tensor<f32> {loom.name = "loss"}) {
  %h1 = loom.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<?x8xf32>, tensor<8x16xf32>) -> tensor<?x16xf32>
  %a1 = loom.tanh %h1 : tensor<?x16xf32>
  %p1 = loom.dot_general %a1, %w2, contracting_dims = [1] x [0] : (tensor<?x16xf32>, tensor<16x8xf32>) -> tensor<?x8xf32>
  %o1 = loom.add %p1, %x : tensor<?x8xf32>
  %h2 = loom.dot_general %o1, %w3, contracting_dims = [1] x [0] : (tensor<?x8xf32>, tensor<8x16xf32>) -> tensor<?x16xf32>
  %a2 = loom.tanh %h2 : tensor<?x16xf32>
  %p2 = loom.dot_general %a2, %w4, contracting_dims = [1] x [0] : (tensor<?x16xf32>, tensor<16x8xf32>) -> tensor<?x8xf32>
  %o2 = loom.add %p2, %o1 : tensor<?x8xf32>
  %d = loom.sub %o2, %y : tensor<?x8xf32>
  %sq = loom.mul %d, %d : tensor<?x8xf32>
  %l = loom.reduce_mean %sq, dims = [0, 1] : tensor<?x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}

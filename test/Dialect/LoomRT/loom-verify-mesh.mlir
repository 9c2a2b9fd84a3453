// RUN: split-file %s %t
// RUN: loom-opt %t/dp.mlir -loom-verify-mesh="dp=2" | FileCheck %s --check-prefix=DP
// RUN: not loom-opt %t/dp.mlir -loom-verify-mesh="dp=2 tp=2" 2>&1 | FileCheck %s --check-prefix=TP
// RUN: not loom-opt %t/dp.mlir -loom-verify-mesh="dp=4" 2>&1 | FileCheck %s --check-prefix=SHAPE
// RUN: not loom-opt %t/silent.mlir -loom-verify-mesh="dp=2" 2>&1 | FileCheck %s --check-prefix=SILENT
// RUN: loom-opt %t/single.mlir -loom-verify-mesh | FileCheck %s --check-prefix=SINGLE

// The requested mesh, with its dp all-reduce: the module is unchanged.
// DP: shard.grid @mesh(shape = 2x1x1)
// DP: loomrt.all_reduce_start

// A tp axis that stayed at one rank: loom-tensor-parallel found nothing.
// TP: error: loom-verify-mesh: tp=2 was asked for, but neither loom-tensor-parallel nor loom-vocab-parallel found an attention or MLP block, an embedding or an LM head to partition (see the warning above); compile without tp

// Another mesh than the requested one.
// SHAPE: error: loom-verify-mesh: the program's device mesh @mesh is dp=2,tp=1,pp=1, not the requested dp=4,tp=1,pp=1 (a bug in the parallelisation passes)

// An axis of two ranks that never communicates.
// SILENT: error: loom-verify-mesh: the compiled program has no dp communication over 2 ranks (a bug in the parallelisation passes)

// One rank: no mesh at all.
// SINGLE-NOT: shard.grid
// SINGLE: func.func @step

//--- dp.mlir
shard.grid @mesh(shape = 2x1x1)
func.func @step(%g: memref<4xf32> {loomrt.result = 0 : i64})
    attributes {loomrt.num_inputs = 0 : i64} {
  %h = loomrt.all_reduce_start %g on @mesh grid_axes = [0] {reduction = "sum"} : memref<4xf32>
  loomrt.wait %h
  return
}

//--- silent.mlir
shard.grid @mesh(shape = 2x1x1)
func.func @step(%g: memref<4xf32> {loomrt.result = 0 : i64})
    attributes {loomrt.num_inputs = 0 : i64} {
  return
}

//--- single.mlir
func.func @step(%g: memref<4xf32> {loomrt.result = 0 : i64})
    attributes {loomrt.num_inputs = 0 : i64} {
  return
}

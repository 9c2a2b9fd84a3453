// RUN: split-file %s %t
// RUN: not loom-translate --emit-cpp %t/unmarked.mlir -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNMARKED
// RUN: not loom-translate --emit-cpp %t/twice.mlir -o /dev/null 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not loom-translate --emit-cpp %t/pp.mlir -o /dev/null 2>&1 | FileCheck %s --check-prefix=PP
// RUN: not loom-translate --emit-cpp %t/batch.mlir -o /dev/null 2>&1 | FileCheck %s --check-prefix=BATCH

// Several functions must be the stages 0..P-1 of one pipeline (loom.stage;
// P is the pp axis of the module's @mesh), whose data inputs agree on the
// batch.

//--- unmarked.mlir
// UNMARKED: error: emit-cpp: the module holds 2 functions, so each must be a pipeline stage program with `loom.stage = k : i64` (this one has none)
shard.grid @mesh(shape = 1x2x1)
func.func @a(%x: memref<2xf32>, %l: memref<f32> {loom.name = "loss", loomrt.result = 0 : i64})
    attributes {loom.stage = 0 : i64, loomrt.num_inputs = 1 : i64, loomrt.arena_bytes = 0 : i64, loomrt.peak_live_bytes = 0 : i64} {
  return
}
func.func @b(%x: memref<2xf32>, %l: memref<f32> {loom.name = "loss", loomrt.result = 0 : i64})
    attributes {loomrt.num_inputs = 1 : i64, loomrt.arena_bytes = 0 : i64, loomrt.peak_live_bytes = 0 : i64} {
  return
}

//--- twice.mlir
// TWICE: error: emit-cpp: stage 0 appears twice (the stages of pp = 2 are 0 to 1)
shard.grid @mesh(shape = 1x2x1)
func.func @a(%x: memref<2xf32>, %l: memref<f32> {loom.name = "loss", loomrt.result = 0 : i64})
    attributes {loom.stage = 0 : i64, loomrt.num_inputs = 1 : i64, loomrt.arena_bytes = 0 : i64, loomrt.peak_live_bytes = 0 : i64} {
  return
}
func.func @b(%x: memref<2xf32>, %l: memref<f32> {loom.name = "loss", loomrt.result = 0 : i64})
    attributes {loom.stage = 0 : i64, loomrt.num_inputs = 1 : i64, loomrt.arena_bytes = 0 : i64, loomrt.peak_live_bytes = 0 : i64} {
  return
}

//--- pp.mlir
// PP: error: emit-cpp: the module holds 2 stage programs, but its device mesh @mesh has 3 pipeline stages (pp axis)
shard.grid @mesh(shape = 1x3x1)
func.func @a(%x: memref<2xf32>, %l: memref<f32> {loom.name = "loss", loomrt.result = 0 : i64})
    attributes {loom.stage = 0 : i64, loomrt.num_inputs = 1 : i64, loomrt.arena_bytes = 0 : i64, loomrt.peak_live_bytes = 0 : i64} {
  return
}
func.func @b(%x: memref<2xf32>, %l: memref<f32> {loom.name = "loss", loomrt.result = 0 : i64})
    attributes {loom.stage = 1 : i64, loomrt.num_inputs = 1 : i64, loomrt.arena_bytes = 0 : i64, loomrt.peak_live_bytes = 0 : i64} {
  return
}

//--- batch.mlir
// BATCH: error: emit-cpp: the stages' data inputs disagree on the batch dimension: argument #0 has 4 rows, @a's 2
shard.grid @mesh(shape = 1x2x1)
func.func @a(%x: memref<2xf32>, %l: memref<f32> {loom.name = "loss", loomrt.result = 0 : i64})
    attributes {loom.stage = 0 : i64, loomrt.num_inputs = 1 : i64, loomrt.arena_bytes = 0 : i64, loomrt.peak_live_bytes = 0 : i64} {
  return
}
func.func @b(%x: memref<4xf32>, %l: memref<f32> {loom.name = "loss", loomrt.result = 0 : i64})
    attributes {loom.stage = 1 : i64, loomrt.num_inputs = 1 : i64, loomrt.arena_bytes = 0 : i64, loomrt.peak_live_bytes = 0 : i64} {
  return
}

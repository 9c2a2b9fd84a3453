// Errors of --ranks: a deadlock (every rank waits in recv before sending)
// lists each rank's blocked op and exits 1 instead of hanging; a grid whose
// size differs from --ranks; --ranks 0; an --input for a rank that does not
// exist.
//
// RUN: not loom-run %s --ranks 4 2>&1 | FileCheck %s --check-prefix=DEADLOCK
// RUN: not loom-run %s --ranks 2 2>&1 | FileCheck %s --check-prefix=GRID
// RUN: not loom-run %s --ranks 0 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not loom-run %s --ranks 4 --input x@4=x.npy 2>&1 | FileCheck %s --check-prefix=RANK
// RUN: not loom-run %s --ranks 4 --input x@a=x.npy 2>&1 | FileCheck %s --check-prefix=BADRANK

shard.grid @g(shape = 4)

func.func @main() -> tensor<2xf32> {
  %x = loom.constant dense<1.0> : tensor<2xf32>
  %r = shard.process_linear_index on @g : index
  %one = arith.constant 1 : index
  %four = arith.constant 4 : index
  %n1 = arith.addi %r, %one : index
  %next = arith.remsi %n1, %four : index
  %y = shard.recv %x on @g grid_axes = [0] source = [%next] : (tensor<2xf32>, index) -> tensor<2xf32>
  %s = shard.send %y on @g grid_axes = [0] destination = [%next] : (tensor<2xf32>, index) -> tensor<2xf32>
  return %s : tensor<2xf32>
}
// DEADLOCK: error: deadlock: every unfinished rank of @main is blocked at a communication op
// DEADLOCK: ranks-errors.mlir:21:8: note: rank 0 is blocked at 'shard.recv'
// DEADLOCK: ranks-errors.mlir:21:8: note: rank 1 is blocked at 'shard.recv'
// DEADLOCK: ranks-errors.mlir:21:8: note: rank 2 is blocked at 'shard.recv'
// DEADLOCK: ranks-errors.mlir:21:8: note: rank 3 is blocked at 'shard.recv'

// GRID: ranks-errors.mlir:16:8: error: 'shard.process_linear_index' op uses grid @g of 4 devices (shape [4]), but loom-run runs 2 rank(s); give --ranks 4
// ZERO: loom-run: error: --ranks must be at least 1
// RANK: loom-run: error: --input 'x@4=x.npy' names rank 4, but there are 4 rank(s) (--ranks)
// BADRANK: loom-run: error: invalid --input 'x@a=x.npy': expected NAME@RANK=FILE.npy

// RUN: split-file %s %t
//
// Options checked before the IR is looked at.
// RUN: not loom-opt %t/mlp.mlir -loom-pipeline-partition 2>&1 | FileCheck %s --check-prefix=NOSTAGES
// RUN: not loom-opt %t/mlp.mlir -loom-pipeline-partition="stages=-2" 2>&1 | FileCheck %s --check-prefix=NEGSTAGES
// RUN: not loom-opt %t/mlp.mlir -loom-pipeline-partition="stages=2 memory-budget=-1" 2>&1 | FileCheck %s --check-prefix=NEGBUDGET
// RUN: not loom-opt %t/mlp.mlir -loom-pipeline-partition="stages=2 function=nope" 2>&1 | FileCheck %s --check-prefix=NOFUNC
// NOSTAGES: error: loom-pipeline-partition: option 'stages' must be at least 1, got 0
// NEGSTAGES: error: loom-pipeline-partition: option 'stages' must be at least 1, got -2
// NEGBUDGET: error: loom-pipeline-partition: option 'memory-budget' must be >= 0 bytes (0: no limit), got -1
// NOFUNC: error: loom-pipeline-partition: function 'nope' (option function=) is not in the module
//
// Errors at the function or the op, one option value per file.
// RUN: loom-opt %t/too-many-stages.mlir -loom-pipeline-partition=stages=4 -verify-diagnostics -o /dev/null
// RUN: loom-opt %t/op-over-budget.mlir -loom-pipeline-partition="stages=2 memory-budget=500" -verify-diagnostics -o /dev/null
// RUN: loom-opt %t/stages-over-budget.mlir -loom-pipeline-partition="stages=2 memory-budget=600" -verify-diagnostics -o /dev/null
// RUN: loom-opt %t/boundary-range.mlir -loom-pipeline-partition="stages=3 stage-boundaries=3" -verify-diagnostics -o /dev/null
// RUN: loom-opt %t/boundary-zero.mlir -loom-pipeline-partition="stages=3 stage-boundaries=0" -verify-diagnostics -o /dev/null
// RUN: loom-opt %t/boundary-order.mlir -loom-pipeline-partition="stages=3 stage-boundaries=2,1" -verify-diagnostics -o /dev/null
// RUN: loom-opt %t/boundary-count.mlir -loom-pipeline-partition="stages=2 stage-boundaries=1,2" -verify-diagnostics -o /dev/null
// RUN: loom-opt %t/boundary-name.mlir -loom-pipeline-partition="stages=2 stage-boundaries=fc9" -verify-diagnostics -o /dev/null
// RUN: loom-opt %t/boundary-replicated.mlir -loom-pipeline-partition="stages=2 stage-boundaries=ones" -verify-diagnostics -o /dev/null
// RUN: loom-opt %t/boundary-param.mlir -loom-pipeline-partition="stages=2 stage-boundaries=param:nope" -verify-diagnostics -o /dev/null
// RUN: loom-opt %t/dynamic.mlir -loom-pipeline-partition="stages=2" -verify-diagnostics -o /dev/null
// RUN: loom-opt %t/dynamic-arg.mlir -loom-pipeline-partition="stages=2" -verify-diagnostics -o /dev/null
// RUN: loom-opt %t/no-main.mlir -loom-pipeline-partition="stages=2" -verify-diagnostics -o /dev/null
//
// loom-pipeline-split.
// RUN: loom-opt %t/split-unpartitioned.mlir -loom-pipeline-split -verify-diagnostics -o /dev/null
// RUN: loom-opt %t/split-no-stage.mlir -loom-pipeline-split -verify-diagnostics -o /dev/null
// RUN: loom-opt %t/split-backwards.mlir -loom-pipeline-split -verify-diagnostics -o /dev/null
// RUN: loom-opt %t/split-taken.mlir -loom-pipeline-split -verify-diagnostics -o /dev/null

//--- mlp.mlir
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {loom.param}) -> tensor<4x8xf32> {
  %0 = loom.dot_general %x, %w, contracting_dims = [1] x [0]
      : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = loom.relu %0 : tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

//--- too-many-stages.mlir
// The constant depends on no argument: only the two other ops count.
// expected-error @+1 {{loom-pipeline-partition: option 'stages' is 4, more than the 3 ops of @main that can be separated}}
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {loom.param}) -> tensor<4x8xf32> {
  %c = loom.constant dense<1.0> : tensor<4x8xf32>
  %0 = loom.dot_general %x, %w, contracting_dims = [1] x [0]
      : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = loom.relu %0 : tensor<4x8xf32>
  %2 = loom.add %1, %c : tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

//--- op-over-budget.mlir
// The matmul alone holds w (256 bytes), reads x (128) and makes 128.
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {loom.param}) -> tensor<4x8xf32> {
  // expected-error @+1 {{loom-pipeline-partition: option 'memory-budget' (500 bytes) is below the 512 bytes of parameters and activations this op needs alone}}
  %0 = loom.dot_general %x, %w, contracting_dims = [1] x [0]
      : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = loom.relu %0 : tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

//--- stages-over-budget.mlir
// Each matmul alone needs 512 bytes (weight, input, result); the relu adds
// 128 to either neighbour: one op per stage.
// expected-error @+1 {{loom-pipeline-partition: option 'memory-budget' (600 bytes per stage) needs at least 3 stages, but stages=2}}
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {loom.param},
                %v: tensor<8x8xf32> {loom.param}) -> tensor<4x8xf32> {
  %0 = loom.dot_general %x, %w, contracting_dims = [1] x [0]
      : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = loom.relu %0 : tensor<4x8xf32>
  %2 = loom.dot_general %1, %v, contracting_dims = [1] x [0]
      : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

//--- boundary-range.mlir
// expected-error @+1 {{loom-pipeline-partition: option 'stage-boundaries' entry '3' is position 3, outside [1, 2] (@main has 3 ops that can be separated)}}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = loom.exp %x : tensor<4xf32>
  %1 = loom.exp %0 : tensor<4xf32>
  %2 = loom.exp %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
}

//--- boundary-zero.mlir
// Position 0 already begins the first stage; it cannot be a cut.
// expected-error @+1 {{option 'stage-boundaries' entry '0' is position 0, outside [1, 2]}}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = loom.exp %x : tensor<4xf32>
  %1 = loom.exp %0 : tensor<4xf32>
  %2 = loom.exp %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
}

//--- boundary-order.mlir
// expected-error @+1 {{loom-pipeline-partition: option 'stage-boundaries' must be strictly increasing, but entry '1' (position 1) follows position 2}}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = loom.exp %x : tensor<4xf32>
  %1 = loom.exp %0 : tensor<4xf32>
  %2 = loom.exp %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
}

//--- boundary-count.mlir
// expected-error @+1 {{loom-pipeline-partition: option 'stage-boundaries' forces 2 cuts, but stages=2 has at most 1}}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = loom.exp %x : tensor<4xf32>
  %1 = loom.exp %0 : tensor<4xf32>
  %2 = loom.exp %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
}

//--- boundary-name.mlir
// expected-error @+1 {{loom-pipeline-partition: option 'stage-boundaries' entry 'fc9' is neither a position nor the location name of an op of @main}}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = loom.exp %x : tensor<4xf32> loc("fc1")
  %1 = loom.exp %0 : tensor<4xf32> loc("fc2")
  return %1 : tensor<4xf32>
}

//--- boundary-param.mlir
// expected-error @+1 {{loom-pipeline-partition: option 'stage-boundaries' entry 'param:nope' names no argument of @main}}
func.func @main(%x: tensor<4xf32>, %w: tensor<4xf32> {loom.param, loom.name = "w"})
    -> tensor<4xf32> {
  %0 = loom.mul %x, %w : tensor<4xf32>
  %1 = loom.exp %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}

//--- boundary-replicated.mlir
// expected-error @+1 {{loom-pipeline-partition: option 'stage-boundaries' entry 'ones' names an op that depends on no argument; such ops are computed in every stage that needs them and cannot begin a stage}}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = loom.exp %x : tensor<4xf32>
  %c = loom.constant dense<1.0> : tensor<4xf32> loc("ones")
  %1 = loom.add %0, %c : tensor<4xf32>
  return %1 : tensor<4xf32>
}

//--- dynamic.mlir
func.func @main(%x: tensor<2x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{loom-pipeline-partition: the cost of this op depends on a dynamic shape; run loom-shape-inference first}}
  %0 = loom.exp %x : (tensor<2x4xf32>) -> tensor<?x4xf32>
  %1 = loom.exp %0 : tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}

//--- dynamic-arg.mlir
// expected-error @+1 {{loom-pipeline-partition: argument 0 of @main has the dynamic type 'tensor<?x4xf32>'; run loom-shape-inference (arg-shapes=...) first}}
func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = loom.exp %x : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

//--- no-main.mlir
// expected-error @+1 {{loom-pipeline-partition: several functions with a body and public visibility (@f, @g); choose one with function=}}
module {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
  func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

//--- split-unpartitioned.mlir
// expected-error @+1 {{loom-pipeline-split: no function with 'loom.stages' (run loom-pipeline-partition first, or name the function with function=)}}
module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = loom.exp %x : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

//--- split-no-stage.mlir
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {loom.stages = 2 : i64} {
  %0 = loom.exp %x {loom.stage = 0 : i64} : tensor<4xf32>
  // expected-error @+1 {{loom-pipeline-split: needs 'loom.stage' = k : i64 with 0 <= k < 2 (the loom.stages of @main)}}
  %1 = loom.exp %0 {loom.stage = 2 : i64} : tensor<4xf32>
  return %1 : tensor<4xf32>
}

//--- split-backwards.mlir
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {loom.stages = 2 : i64} {
  // expected-note @+1 {{the value is defined here}}
  %0 = loom.exp %x {loom.stage = 1 : i64} : tensor<4xf32>
  // expected-error @+1 {{loom-pipeline-split: this op of stage 0 uses a value of stage 1; a stage may only use values of itself and earlier stages}}
  %1 = loom.exp %0 {loom.stage = 0 : i64} : tensor<4xf32>
  return %1 : tensor<4xf32>
}

//--- split-taken.mlir
module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {loom.stages = 2 : i64} {
    %0 = loom.exp %x {loom.stage = 0 : i64} : tensor<4xf32>
    %1 = loom.exp %0 {loom.stage = 1 : i64} : tensor<4xf32>
    return %1 : tensor<4xf32>
  }
  // expected-error @+1 {{loom-pipeline-split: cannot create @main_stage1 for stage 1 of @main: the name is taken}}
  func.func private @main_stage1(%x: tensor<4xf32>) -> tensor<4xf32>
}

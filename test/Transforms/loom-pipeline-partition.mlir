// RUN: split-file %s %t
//
// A four-layer MLP with a skip connection from the first layer to the output.
// RUN: loom-opt %t/chain.mlir -loom-pipeline-partition=stages=2 | FileCheck %s --check-prefix=P2
// RUN: loom-opt %t/chain.mlir -loom-pipeline-partition="stages=3 report=-" -o /dev/null | FileCheck %s --check-prefix=P3
// RUN: loom-opt %t/chain.mlir -loom-pipeline-partition="stages=3 stage-boundaries=4 report=-" -o /dev/null | FileCheck %s --check-prefix=FORCED
// RUN: loom-opt %t/chain.mlir -loom-pipeline-partition="stages=3 stage-boundaries=layer3 report=-" -o /dev/null | FileCheck %s --check-prefix=FORCED
// The planner names a cut by the parameter whose first reader begins it.
// RUN: loom-opt %t/chain.mlir -loom-pipeline-partition="stages=3 stage-boundaries=param:w3 report=-" -o /dev/null | FileCheck %s --check-prefix=FORCED
// RUN: loom-opt %t/chain.mlir -loom-pipeline-partition="stages=4 memory-budget=1000 report=-" -o /dev/null | FileCheck %s --check-prefix=BUDGET
// RUN: loom-opt %t/chain.mlir -loom-pipeline-partition=stages=3 -loom-pipeline-split | FileCheck %s --check-prefix=SPLIT
// RUN: loom-run %t/chain.mlir --compare-after='builtin.module(loom-pipeline-partition{stages=3},loom-pipeline-split)' --tolerance 0 | FileCheck %s --check-prefix=SAME
// RUN: loom-run %t/chain.mlir --compare-after='builtin.module(loom-pipeline-partition{stages=8},loom-pipeline-split)' --tolerance 0 | FileCheck %s --check-prefix=SAME
//
// Constants are computed in every stage that needs them, never sent.
// RUN: loom-opt %t/replicated.mlir -loom-pipeline-partition="stages=2 report=-" -o /dev/null | FileCheck %s --check-prefix=REPREPORT
// RUN: loom-opt %t/replicated.mlir -loom-pipeline-partition=stages=2 -loom-pipeline-split | FileCheck %s --check-prefix=REP
// RUN: loom-run %t/replicated.mlir --compare-after='builtin.module(loom-pipeline-partition{stages=2},loom-pipeline-split)' --tolerance 0 | FileCheck %s --check-prefix=REPSAME

// Costs, worked out by hand (time = 3 x forward flops; every value is a
// 4x8 f32 tensor of 128 bytes, every weight 8x8 f32 = 256 bytes):
//   pos 0 %h1 = x.w1   512 flops, time 1536
//   pos 1 %a1 = relu    32 flops, time   96
//   pos 2 %h2 = a1.w2  1536     pos 3 %a2 = relu 96
//   pos 4 %h3 = a2.w3  1536     pos 5 %a3 = relu 96
//   pos 6 %h4 = a3.w4  1536     pos 7 %s  = h4 + a1 (skip) 96
// Total 6528. The cut before position c carries the value made at c-1 and
// the skip %a1 (for c in 2..7): 128 bytes at c = 1 and 2, else 256.
//
// Two stages: 3264 each, cut before %h3.
// P2-LABEL: func.func @main
// P2-SAME:    attributes {loom.stages = 2 : i64}
// P2:         %[[H1:.*]] = loom.dot_general {{.*}} {loom.stage = 0 : i64}
// P2-NEXT:    loom.relu {{.*}} {loom.stage = 0 : i64}
// P2-NEXT:    loom.dot_general {{.*}} {loom.stage = 0 : i64}
// P2-NEXT:    loom.relu {{.*}} {loom.stage = 0 : i64}
// P2-NEXT:    loom.dot_general {{.*}} {loom.stage = 1 : i64}
// P2-NEXT:    loom.relu {{.*}} {loom.stage = 1 : i64}
// P2-NEXT:    loom.dot_general {{.*}} {loom.stage = 1 : i64}
// P2-NEXT:    loom.add {{.*}} {loom.stage = 1 : i64}

// Three stages: some stage holds two matmuls, at best 3168 (two matmuls
// and a relu) with cuts (3, 5), (3, 6) or (2, 5); the skip %a1 crosses both
// cuts and is counted in each: (2, 5) sends 128 + 256 bytes, the others 512.
// P3:      "stages": 3,
// P3:      "sequence_ops": 8,
// P3-NEXT: "replicated_ops": 0,
// P3-NEXT: "cuts": [
// P3-NEXT:   2,
// P3-NEXT:   5
// P3-NEXT: ],
// P3:      "max_stage_time": 3168,
// P3-NEXT: "mean_stage_time": 2176,
// P3:      "total_cut_bytes": 384,
// P3:      "stage": 0,
// P3-NEXT: "first": 0,
// P3-NEXT: "last": 1,
// P3-NEXT: "ops": 2,
// P3-NEXT: "flops": 544,
// P3-NEXT: "time": 1632,
// P3-NEXT: "params": 64,
// P3-NEXT: "param_bytes": 256,
// Results of %h1, %a1 and the input x.
// P3-NEXT: "activation_bytes": 384,
// P3-NEXT: "memory_bytes": 640,
// P3-NEXT: "cut_bytes": 128,
// %a1 goes once to each of the two later stages.
// P3-NEXT: "sends": [
// P3-NEXT:   {
// P3-NEXT:     "to": 1,
// P3-NEXT:     "bytes": 128
// P3-NEXT:   },
// P3-NEXT:   {
// P3-NEXT:     "to": 2,
// P3-NEXT:     "bytes": 128
// P3-NEXT:   }
// P3-NEXT: ]
// P3:      "stage": 1,
// P3:      "time": 3168,
// P3:      "cut_bytes": 256,
// P3:      "stage": 2,
// P3:      "time": 1728,
// P3-NEXT: "params": 64,
// P3-NEXT: "param_bytes": 256,
// Results of %a3, %h4, %s and the received %a1, %h3.
// P3-NEXT: "activation_bytes": 640,
// P3:      "cut_bytes": 0,
// P3-NEXT: "sends": []
// Per op: the sequence values and arguments it reads.
// P3:      "pos": 7,
// P3-NEXT: "op": "loom.add",
// P3-NEXT: "loc": "",
// P3-NEXT: "stage": 2,
// P3-NEXT: "flops": 32,
// P3-NEXT: "time": 96,
// P3-NEXT: "results": [
// P3-NEXT:   128
// P3-NEXT: ],
// P3-NEXT: "inputs": [
// P3-NEXT:   [
// P3-NEXT:     1,
// P3-NEXT:     0
// P3-NEXT:   ],
// P3-NEXT:   [
// P3-NEXT:     6,
// P3-NEXT:     0
// P3-NEXT:   ]
// P3-NEXT: ],
// P3-NEXT: "args": []

// A cut forced before %h3 (by position or by its location name): the
// best max stage time is then 3264, reached with cuts (1, 4), (2, 4) and
// others; (1, 4) and (2, 4) both send 384 bytes, and the earlier wins.
// FORCED:      "cuts": [
// FORCED-NEXT:   1,
// FORCED-NEXT:   4
// FORCED-NEXT: ],
// FORCED-NEXT: "forced_cuts": [
// FORCED-NEXT:   4
// FORCED-NEXT: ],
// FORCED-NEXT: "max_stage_time": 3264,

// With 1000 bytes per stage no stage holds two matmuls (each such range
// needs 1024), so four stages of one matmul each.
// BUDGET:      "memory_budget": 1000,
// BUDGET:      "cuts": [
// BUDGET-NEXT:   2,
// BUDGET-NEXT:   4,
// BUDGET-NEXT:   6
// BUDGET-NEXT: ],
// BUDGET:      "max_stage_time": 1632,
// BUDGET-NOT:  "memory_bytes": {{1[0-9][0-9][0-9]}},

// SPLIT-LABEL: func.func @main(
// SPLIT-SAME:      %[[X:[^:]*]]: tensor<4x8xf32> {loom.name = "x"}, %[[W1:[^:]*]]: {{.*}}, %[[W2:[^:]*]]: {{.*}}, %[[W3:[^:]*]]: {{.*}}, %[[W4:[^:]*]]: {{.*}})
// SPLIT-SAME:      attributes {loom.stages = 3 : i64}
// SPLIT-NEXT:    %[[S0:.*]] = call @main_stage0(%[[X]], %[[W1]]) {loom.stage = 0 : i64} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// SPLIT-NEXT:    %[[S1:.*]] = call @main_stage1(%[[W2]], %[[W3]], %[[S0]]) {loom.stage = 1 : i64}
// SPLIT-NEXT:    %[[S2:.*]] = call @main_stage2(%[[W4]], %[[S0]], %[[S1]]) {loom.stage = 2 : i64}
// SPLIT-NEXT:    return %[[S2]]
// SPLIT-NEXT:  }
// SPLIT:       func.func private @main_stage0(%{{.*}}: tensor<4x8xf32> {loom.name = "x"}, %{{.*}}: tensor<8x8xf32> {loom.name = "w1", loom.param}) -> tensor<4x8xf32> attributes {loom.stage = 0 : i64}
// SPLIT-NEXT:    loom.dot_general {{[^{]*$}}
// SPLIT-NEXT:    %[[A1:.*]] = loom.relu {{[^{]*$}}
// SPLIT-NEXT:    return %[[A1]]
// SPLIT:       func.func private @main_stage1(%{{.*}}: tensor<8x8xf32> {loom.name = "w2", loom.param}, %{{.*}}: tensor<8x8xf32> {loom.name = "w3", loom.param}, %{{.*}}: tensor<4x8xf32>) -> tensor<4x8xf32>
// SPLIT-COUNT-2: loom.dot_general
// SPLIT:       func.func private @main_stage2(%[[W:[^:]*]]: tensor<8x8xf32> {loom.name = "w4", loom.param}, %[[SKIP:[^:]*]]: tensor<4x8xf32>, %[[H3:[^:]*]]: tensor<4x8xf32>) -> (tensor<4x8xf32> {loom.name = "out"})
// SPLIT-NEXT:    %[[A3:.*]] = loom.relu %[[H3]]
// SPLIT-NEXT:    %[[H4:.*]] = loom.dot_general %[[A3]], %[[W]]
// SPLIT-NEXT:    %[[S:.*]] = loom.add %[[H4]], %[[SKIP]]
// SPLIT-NEXT:    return %[[S]]

// SAME:      result out: max abs diff 0, max rel diff 0
// SAME-NEXT: equivalent: yes (tolerance 0)

//--- chain.mlir
func.func @main(%x: tensor<4x8xf32> {loom.name = "x"},
                %w1: tensor<8x8xf32> {loom.param, loom.name = "w1"},
                %w2: tensor<8x8xf32> {loom.param, loom.name = "w2"},
                %w3: tensor<8x8xf32> {loom.param, loom.name = "w3"},
                %w4: tensor<8x8xf32> {loom.param, loom.name = "w4"})
    -> (tensor<4x8xf32> {loom.name = "out"}) {
  %h1 = loom.dot_general %x, %w1, contracting_dims = [1] x [0]
      : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %a1 = loom.relu %h1 : tensor<4x8xf32>
  %h2 = loom.dot_general %a1, %w2, contracting_dims = [1] x [0]
      : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %a2 = loom.relu %h2 : tensor<4x8xf32>
  %h3 = loom.dot_general %a2, %w3, contracting_dims = [1] x [0]
      : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("layer3")
  %a3 = loom.relu %h3 : tensor<4x8xf32>
  %h4 = loom.dot_general %a3, %w4, contracting_dims = [1] x [0]
      : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %s = loom.add %h4, %a1 : tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

// A scale constant and a mask built from iota, used on both sides of the
// cut: each stage computes its own copy.
// REPREPORT: "sequence_ops": 4,
// REPREPORT: "replicated_ops": 4,
// REPREPORT: "cuts": [
// REPREPORT-NEXT: 2
// REPREPORT: "total_cut_bytes": 32,

// REP-LABEL: func.func @main(
// REP-NEXT:    %[[A:.*]] = call @main_stage0(%arg0) {loom.stage = 0 : i64}
// REP-NEXT:    %[[B:.*]] = call @main_stage1(%[[A]]) {loom.stage = 1 : i64}
// The mask is also a result of @main: @main keeps its own copy.
// REP-NEXT:    %[[I:.*]] = loom.iota
// REP-NEXT:    %[[M:.*]] = loom.compare ge, %[[I]], %[[I]]
// REP-NEXT:    return %[[B]], %[[M]]
// REP:       func.func private @main_stage0
// REP-NEXT:    loom.constant dense<2.000000e+00>
// REP-NEXT:    loom.mul
// REP-NEXT:    loom.exp
// REP-NEXT:    return
// REP:       func.func private @main_stage1
// REP-NEXT:    loom.constant dense<2.000000e+00>
// REP-NEXT:    loom.iota
// REP-NEXT:    loom.compare
// REP-NEXT:    loom.constant dense<0.000000e+00>
// REP-NEXT:    loom.mul
// REP-NEXT:    loom.select
// REP-NEXT:    return

// REPSAME:      result result0: max abs diff 0, max rel diff 0
// REPSAME-NEXT: result mask: max abs diff 0, max rel diff 0
// REPSAME-NEXT: equivalent: yes (tolerance 0)

//--- replicated.mlir
func.func @main(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xi1> {loom.name = "mask"}) {
  %two = loom.constant dense<2.0> : tensor<8xf32>
  %i = loom.iota dim = 0 : tensor<8xi64>
  %mask = loom.compare ge, %i, %i : (tensor<8xi64>, tensor<8xi64>) -> tensor<8xi1>
  %zero = loom.constant dense<0.0> : tensor<8xf32>
  %0 = loom.mul %x, %two : tensor<8xf32>
  %1 = loom.exp %0 : tensor<8xf32>
  %2 = loom.mul %1, %two : tensor<8xf32>
  %3 = loom.select %mask, %2, %zero : tensor<8xi1>, tensor<8xf32>
  return %3, %mask : tensor<8xf32>, tensor<8xi1>
}

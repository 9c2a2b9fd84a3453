// loom-report-sharding after the tensor-parallel passes: an MLP block is
// cut (fc1 by columns, fc2 by rows); a third linear layer's candidate block
// stops at a reduction over its cut dimension, and a position table is read
// by an add that no rule covers. Both stay replicated and, being >= 1 % of
// the parameters, are warned about with the reason; with require-sharded
// they are errors. The report counts full sizes: 128 + 128 of 352 elements
// are cut (72.7 %), a rank holds 64 + 64 + 64 + 32.
//
// RUN: loom-opt %s \
// RUN:   --pass-pipeline="builtin.module(loom-tensor-parallel{tp=2}, loom-vocab-parallel{tp=2}, loom-report-sharding{report=%t.json})" \
// RUN:   -o %t.mlir 2>&1 | FileCheck %s --check-prefix=WARN
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// The IR is the tensor-parallel passes' (the block is cut).
// RUN: FileCheck %s --check-prefix=IR < %t.mlir
//
// RUN: not loom-opt %s \
// RUN:   --pass-pipeline="builtin.module(loom-tensor-parallel{tp=2}, loom-vocab-parallel{tp=2}, loom-report-sharding{require-sharded=true})" \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=ERR
//
// A higher threshold silences the position table (9.1 %), not the head.
// RUN: loom-opt %s \
// RUN:   --pass-pipeline="builtin.module(loom-tensor-parallel{tp=2}, loom-vocab-parallel{tp=2}, loom-report-sharding{min-fraction=0.1})" \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=TENTH

// JSON: "function": "main",
// JSON: "tp": 2,
// JSON: "parameters": 4,
// JSON: "elements": 352,
// JSON: "sharded_elements": 256,
// JSON: "sharded_fraction": 0.72727
// JSON: "per_rank_elements": 224,
// JSON: "name": "pos",
// JSON-NEXT: "shape": [
// JSON-NEXT: 4,
// JSON-NEXT: 8
// JSON-NEXT: ],
// JSON-NEXT: "elements": 32,
// JSON: "sharded": null,
// JSON-NEXT: "replicated_because": "read by 'loom.add' (node 'add_pos'), which no linear layer or vocabulary table rule covers"
// JSON: "name": "fc1.weight",
// JSON-NEXT: "shape": [
// JSON-NEXT: 8,
// JSON-NEXT: 16
// JSON: "sharded": {
// JSON-NEXT: "dim": 1,
// JSON-NEXT: "parts": 2
// JSON: "name": "fc2.weight",
// JSON: "sharded": {
// JSON-NEXT: "dim": 0,
// JSON-NEXT: "parts": 2
// JSON: "name": "head.weight",
// JSON: "sharded": null,
// JSON-NEXT: "replicated_because": "the partition rule of 'loom.reduce_sum' (node 'total') refuses the cut of its operands"

// WARN-DAG: warning: loc("add_pos"): loom-report-sharding: parameter 'pos' (9.1 % of the parameters) stays replicated on all 2 tensor-parallel ranks: read by 'loom.add' (node 'add_pos'), which no linear layer or vocabulary table rule covers
// WARN-DAG: warning: loc("head"): loom-report-sharding: parameter 'head.weight' (18.2 % of the parameters) stays replicated on all 2 tensor-parallel ranks: the partition rule of 'loom.reduce_sum' (node 'total') refuses the cut of its operands
// WARN-NOT: fc1.weight

// IR: %arg2: tensor<8x8xf32> {loom.name = "fc1.weight", loom.param, loom.shard = #loom.shard<dim = 1, parts = 2>}
// IR: attributes {loom.tp_replicated = {head.weight = "the partition rule of 'loom.reduce_sum' (node 'total') refuses the cut of its operands"}

// ERR-DAG: error: loc("add_pos"): loom-report-sharding: parameter 'pos' (9.1 % of the parameters) stays replicated on all 2 tensor-parallel ranks: read by 'loom.add' (node 'add_pos'), which no linear layer or vocabulary table rule covers (--require-sharded)
// ERR-DAG: error: loc("head"): loom-report-sharding: parameter 'head.weight' (18.2 % of the parameters) stays replicated on all 2 tensor-parallel ranks: the partition rule of 'loom.reduce_sum' (node 'total') refuses the cut of its operands (--require-sharded)

// TENTH-NOT: 'pos'
// TENTH: warning: loc("head"): loom-report-sharding: parameter 'head.weight' (18.2 % of the parameters)
// TENTH-NOT: 'pos'

func.func @main(%x: tensor<4x8xf32>,
                %pos: tensor<4x8xf32> {loom.name = "pos", loom.param},
                %w1: tensor<8x16xf32> {loom.name = "fc1.weight", loom.param},
                %w2: tensor<16x8xf32> {loom.name = "fc2.weight", loom.param},
                %w3: tensor<8x8xf32> {loom.name = "head.weight", loom.param}) -> tensor<f32> {
  %xp = loom.add %x, %pos : tensor<4x8xf32> loc("add_pos")
  %h = loom.dot_general %xp, %w1, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %a = loom.gelu %h approximate = tanh : tensor<4x16xf32>
  %y = loom.dot_general %a, %w2, contracting_dims = [1] x [0] : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %z = loom.dot_general %y, %w3, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("head")
  %s = loom.reduce_sum %z, dims = [0, 1] : tensor<4x8xf32> -> tensor<f32> loc("total")
  return %s : tensor<f32>
}

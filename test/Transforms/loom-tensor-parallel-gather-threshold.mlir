// A lone linear layer before a LayerNorm is cut (its output gathered) only
// when its weight is at least 1 % of the parameters: here the 8x8 dense is
// 0.79 % of them, beside a 1000-row vocabulary, and gathering its output
// would cost two all-reduces for 32 floats of weight per rank. It stays
// replicated, and the sharding report says why.
//
// RUN: loom-opt %s \
// RUN:   --pass-pipeline="builtin.module(loom-tensor-parallel{tp=2}, loom-vocab-parallel{tp=2}, loom-report-sharding{min-fraction=0.005})" \
// RUN:   2>&1 | FileCheck %s

// CHECK: warning: loc("dense"): loom-report-sharding: parameter 'dense.weight' (0.8 % of the parameters) stays replicated on all 2 tensor-parallel ranks: it is a lone linear layer before a norm, and a weight of under 1 % of the parameters is not worth the two all-reduces that gathering its output costs
// CHECK-LABEL: func.func @main(
// CHECK-SAME: tensor<500x8xf32> {loom.name = "wte", loom.param, loom.shard = #loom.shard<dim = 0, parts = 2>}
// CHECK-SAME: tensor<8x8xf32> {loom.name = "dense.weight", loom.param}
// CHECK-NOT: loom.iota
// CHECK: loom.dot_general %{{.*}} : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>

module {
  func.func @main(
      %ids: tensor<2x4xi64> {loom.name = "ids"},
      %labels: tensor<2x4xi64> {loom.name = "labels"},
      %wte: tensor<1000x8xf32> {loom.param, loom.name = "wte"},
      %wd: tensor<8x8xf32> {loom.param, loom.name = "dense.weight"},
      %g: tensor<8xf32> {loom.param, loom.name = "ln.scale"},
      %b: tensor<8xf32> {loom.param, loom.name = "ln.bias"})
      -> (tensor<f32> {loom.name = "loss"}) {
    %e = loom.gather %wte[%ids], axis = 0 : (tensor<1000x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
    %wdt = loom.transpose %wd, permutation = [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32> loc("dense")
    %t0 = loom.dot_general %e, %wdt, contracting_dims = [2] x [0] : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32> loc("dense")
    %t = loom.tanh %t0 : tensor<2x4x8xf32>
    %n = loom.layer_norm %t scale %g bias %b axis = 2 epsilon = 1.0e-05 : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
    %wtet = loom.transpose %wte, permutation = [1, 0] : tensor<1000x8xf32> -> tensor<8x1000xf32>
    %logits = loom.dot_general %n, %wtet, contracting_dims = [2] x [0] : (tensor<2x4x8xf32>, tensor<8x1000xf32>) -> tensor<2x4x1000xf32>
    %loss = loom.cross_entropy %logits, %labels : (tensor<2x4x1000xf32>, tensor<2x4xi64>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

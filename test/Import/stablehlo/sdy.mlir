// RUN: loom-opt --inline --symbol-dce --convert-stablehlo-to-loom %s | FileCheck %s
// RUN: loom-opt %s | loom-opt | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: loom-opt --inline --symbol-dce --convert-stablehlo-to-loom %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WARN

// A sharded function as JAX 0.10 lowers it with the Shardy partitioner:
// the mesh and the argument shardings stay, a sharding constraint becomes
// an `sdy.sharding` hint on the value's definition (unless it has one).

// CHECK: sdy.mesh @mesh = <["x"=2, "y"=1]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}]}}
// ROUNDTRIP: sdy.mesh @mesh = <["x"=2, "y"=1]>
module @jit_f attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=1]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}]}}
  // CHECK: func.func public @main(%[[A:.*]]: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %[[W:.*]]: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>})
  func.func public @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> (tensor<f32>, tensor<4x6xf32>) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
    // CHECK: %[[T:.*]] = loom.tanh %{{.*}} {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x":(1)2}]>} : tensor<8x6xf32>
    %1 = stablehlo.tanh %0 : tensor<8x6xf32>
    // ROUNDTRIP: sdy.sharding_constraint %{{.*}} <@mesh, [{}, {"x":(1)2}]> : tensor<8x6xf32>
    %2 = sdy.sharding_constraint %1 <@mesh, [{}, {"x":(1)2}]> : tensor<8x6xf32>
    // The argument keeps the sharding JAX gave it.
    // WARN: warning: sharding hint #sdy.sharding<@mesh, [{?}, {"y", ?}p1]> dropped: the value already has #sdy.sharding<@mesh, [{}, {}]>
    %3 = sdy.sharding_constraint %arg1 <@mesh, [{?}, {"y", ?}p1]> : tensor<4x6xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    // CHECK: loom.reduce_sum %[[T]], dims = [0, 1]
    %4 = stablehlo.reduce(%2 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x6xf32>, tensor<f32>) -> tensor<f32>
    // CHECK: return %{{.*}}, %[[W]]
    return %4, %3 : tensor<f32>, tensor<4x6xf32>
  }
}

// RUN: loom-opt --inline --symbol-dce --convert-stablehlo-to-loom %s | FileCheck %s

// A module as JAX exports it: mhlo/jax/sdy attributes with builtin values
// on the module, arguments and results, helpers in private functions.
// They are inlined and dropped; the attributes stay.

// CHECK: module @jit_loss attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32}
module @jit_loss attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  // CHECK: func.func public @main(%[[X:.*]]: tensor<8x4xf32> {jax.arg_info = "x", mhlo.sharding = "{replicated}"}, %[[W:.*]]: tensor<4x2xf32> {sdy.sharding = "replicated"})
  // CHECK-SAME: -> (tensor<f32> {jax.result_info = "", mhlo.layout_mode = "default"})
  func.func public @main(%x: tensor<8x4xf32> {jax.arg_info = "x", mhlo.sharding = "{replicated}"},
                         %w: tensor<4x2xf32> {sdy.sharding = "replicated"})
      -> (tensor<f32> {jax.result_info = "", mhlo.layout_mode = "default"}) {
    // CHECK-NOT: call
    // CHECK: %[[Y:.*]] = loom.dot_general %[[X]], %[[W]], contracting_dims = [1] x [0]
    // CHECK: %[[T:.*]] = loom.tanh %[[Y]]
    // CHECK: %[[S:.*]] = loom.reduce_sum %[[T]], dims = [0, 1] : tensor<8x2xf32> -> tensor<f32>
    // CHECK: return %[[S]]
    %0 = call @dense(%x, %w) : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
    %1 = call @sum(%0) : (tensor<8x2xf32>) -> tensor<f32>
    return %1 : tensor<f32>
  }
  // CHECK-NOT: func.func private
  func.func private @dense(%x: tensor<8x4xf32>, %w: tensor<4x2xf32>) -> (tensor<8x2xf32> {mhlo.layout_mode = "default"}) {
    %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
    %1 = stablehlo.tanh %0 : tensor<8x2xf32>
    return %1 : tensor<8x2xf32>
  }
  func.func private @sum(%x: tensor<8x2xf32>) -> tensor<f32> {
    %c = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x2xf32>, tensor<f32>) -> tensor<f32>
    return %0 : tensor<f32>
  }
}

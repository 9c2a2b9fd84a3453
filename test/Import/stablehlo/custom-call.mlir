// RUN: loom-opt --convert-stablehlo-to-loom %s | FileCheck %s

// custom_call @Sharding forwards its operand and keeps the hint as
// `mhlo.sharding` on the value's definition (an argument attribute for a
// function argument).
// CHECK-LABEL: func.func @sharding
// CHECK-SAME: (%[[X:.*]]: tensor<8x4xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"}, %[[W:.*]]: tensor<4x4xf32>)
func.func @sharding(%x: tensor<8x4xf32>, %w: tensor<4x4xf32>) -> tensor<8x4xf32> {
  %0 = stablehlo.custom_call @Sharding(%x) {mhlo.sharding = "{devices=[2,1]<=[2]}"} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  // CHECK: %[[D:.*]] = loom.dot_general %[[X]], %[[W]], contracting_dims = [1] x [0] {mhlo.sharding = "{replicated}"}
  %1 = stablehlo.dot_general %0, %w, contracting_dims = [1] x [0] : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
  %2 = "stablehlo.custom_call"(%1) <{call_target_name = "Sharding", has_side_effect = false}> {mhlo.sharding = "{replicated}"} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  // CHECK-NOT: custom_call
  // CHECK: return %[[D]]
  return %2 : tensor<8x4xf32>
}

// The checks of JAX's test data become check ops, which stay, as do the
// interpreter tests' check ops.
// CHECK-LABEL: func.func @checks
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>)
func.func @checks(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // CHECK: check.expect_close %[[A]], %[[B]] : tensor<4xf32>, tensor<4xf32>
  stablehlo.custom_call @check.expect_close(%a, %b) {has_side_effect = true} : (tensor<4xf32>, tensor<4xf32>) -> ()
  // CHECK: check.expect_eq %[[A]], %[[B]] : tensor<4xf32>, tensor<4xf32>
  stablehlo.custom_call @check.expect_eq(%a, %b) {has_side_effect = true} : (tensor<4xf32>, tensor<4xf32>) -> ()
  // CHECK: check.expect_almost_eq %[[A]], %[[B]] : tensor<4xf32>, tensor<4xf32>
  stablehlo.custom_call @check.expect_almost_eq(%a, %b) {has_side_effect = true} : (tensor<4xf32>, tensor<4xf32>) -> ()
  // CHECK: check.expect_eq_const %[[A]], dense<1.000000e+00> : tensor<4xf32>
  check.expect_eq_const %a, dense<1.0> : tensor<4xf32>
  // CHECK: check.expect_almost_eq_const %[[A]], dense<1.000000e+00> : tensor<4xf32>
  check.expect_almost_eq_const %a, dense<1.0> : tensor<4xf32>
  func.return
}

// optimization_barrier forwards its operands.
// CHECK-LABEL: func.func @barrier
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<2xi32>)
func.func @barrier(%a: tensor<4xf32>, %b: tensor<2xi32>) -> (tensor<4xf32>, tensor<2xi32>) {
  %0:2 = stablehlo.optimization_barrier %a, %b : tensor<4xf32>, tensor<2xi32>
  // CHECK-NEXT: return %[[A]], %[[B]]
  return %0#0, %0#1 : tensor<4xf32>, tensor<2xi32>
}

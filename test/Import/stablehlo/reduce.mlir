// RUN: loom-opt --convert-stablehlo-to-loom %s | FileCheck %s

// The compact form.
// CHECK-LABEL: func.func @sum
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
func.func @sum(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  // CHECK: %[[S:.*]] = loom.reduce_sum %[[X]], dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  // CHECK: return %[[S]]
  %0 = stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// The region form, with the body's operands swapped.
// CHECK-LABEL: func.func @max_region
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
func.func @max_region(%x: tensor<4x8xf32>) -> tensor<8xf32> {
  %c = stablehlo.constant dense<0xFF800000> : tensor<f32>
  // CHECK: %[[M:.*]] = loom.reduce_max %[[X]], dims = [0] : tensor<4x8xf32> -> tensor<8xf32>
  // CHECK: return %[[M]]
  %0 = stablehlo.reduce(%x init: %c) across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
   reducer(%a: tensor<f32>, %b: tensor<f32>)  {
    %m = stablehlo.maximum %b, %a : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }
  return %0 : tensor<8xf32>
}

// The generic form, as the interpreter tests write it.
// CHECK-LABEL: func.func @sum_generic
// CHECK-SAME: (%[[X:.*]]: tensor<1x6xi64>)
func.func @sum_generic(%x: tensor<1x6xi64>) -> tensor<1xi64> {
  %init = stablehlo.constant dense<0> : tensor<i64>
  // CHECK: loom.reduce_sum %[[X]], dims = [1] : tensor<1x6xi64> -> tensor<1xi64>
  %0 = "stablehlo.reduce"(%x, %init) ({
    ^bb0(%a: tensor<i64>, %b: tensor<i64>):
      %s = stablehlo.add %a, %b : tensor<i64>
      stablehlo.return %s : tensor<i64>
  }) {
    dimensions = array<i64: 1>
  } : (tensor<1x6xi64>, tensor<i64>) -> tensor<1xi64>
  return %0 : tensor<1xi64>
}

// An init value that is not the identity is added to the result.
// CHECK-LABEL: func.func @sum_with_init
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[INIT:.*]]: tensor<f32>)
func.func @sum_with_init(%x: tensor<4x8xf32>, %init: tensor<f32>) -> tensor<4xf32> {
  // CHECK: %[[S:.*]] = loom.reduce_sum %[[X]], dims = [1]
  // CHECK: %[[I:.*]] = loom.broadcast %[[INIT]], dims = [] : tensor<f32> -> tensor<4xf32>
  // CHECK: %[[R:.*]] = loom.add %[[S]], %[[I]] : tensor<4xf32>
  // CHECK: return %[[R]]
  %0 = stablehlo.reduce(%x init: %init) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// Minimum through negation: -max(-x) for floats ...
// CHECK-LABEL: func.func @min_float
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
func.func @min_float(%x: tensor<2x3xf32>) -> tensor<3xf32> {
  %c = stablehlo.constant dense<0x7F800000> : tensor<f32>
  // CHECK: %[[N:.*]] = loom.neg %[[X]] : tensor<2x3xf32>
  // CHECK: %[[M:.*]] = loom.reduce_max %[[N]], dims = [0] : tensor<2x3xf32> -> tensor<3xf32>
  // CHECK: %[[R:.*]] = loom.neg %[[M]] : tensor<3xf32>
  // CHECK: return %[[R]]
  %0 = stablehlo.reduce(%x init: %c) applies stablehlo.minimum across dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// ... and -1 - max(-1 - x) for integers (no overflow).
// CHECK-LABEL: func.func @min_int
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xi32>)
func.func @min_int(%x: tensor<2x3xi32>) -> tensor<3xi32> {
  %c = stablehlo.constant dense<2147483647> : tensor<i32>
  // CHECK: %[[M1:.*]] = loom.constant dense<-1> : tensor<2x3xi32>
  // CHECK: %[[F:.*]] = loom.sub %[[M1]], %[[X]] : tensor<2x3xi32>
  // CHECK: %[[M:.*]] = loom.reduce_max %[[F]], dims = [0] : tensor<2x3xi32> -> tensor<3xi32>
  // CHECK: %[[M2:.*]] = loom.constant dense<-1> : tensor<3xi32>
  // CHECK: %[[R:.*]] = loom.sub %[[M2]], %[[M]] : tensor<3xi32>
  // CHECK: return %[[R]]
  %0 = stablehlo.reduce(%x init: %c) applies stablehlo.minimum across dimensions = [0] : (tensor<2x3xi32>, tensor<i32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// Logical reductions of i1: any = max of the values as i32, all = not any
// of not.
// CHECK-LABEL: func.func @any_all
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xi1>)
func.func @any_all(%x: tensor<2x3xi1>) -> (tensor<2xi1>, tensor<2xi1>) {
  %false = stablehlo.constant dense<false> : tensor<i1>
  %true = stablehlo.constant dense<true> : tensor<i1>
  // CHECK: %[[C:.*]] = loom.convert %[[X]] : tensor<2x3xi1> -> tensor<2x3xi32>
  // CHECK: %[[M:.*]] = loom.reduce_max %[[C]], dims = [1] : tensor<2x3xi32> -> tensor<2xi32>
  // CHECK: %[[Z:.*]] = loom.constant dense<0> : tensor<2xi32>
  // CHECK: %[[ANY:.*]] = loom.compare ne, %[[M]], %[[Z]]
  %0 = stablehlo.reduce(%x init: %false) applies stablehlo.or across dimensions = [1] : (tensor<2x3xi1>, tensor<i1>) -> tensor<2xi1>
  // CHECK: %[[F:.*]] = loom.constant dense<false> : tensor<2x3xi1>
  // CHECK: %[[NX:.*]] = loom.compare eq, %[[X]], %[[F]]
  // CHECK: %[[NC:.*]] = loom.convert %[[NX]] : tensor<2x3xi1> -> tensor<2x3xi32>
  // CHECK: %[[NM:.*]] = loom.reduce_max %[[NC]], dims = [1]
  // CHECK: %[[Z2:.*]] = loom.constant dense<0> : tensor<2xi32>
  // CHECK: %[[ALL:.*]] = loom.compare eq, %[[NM]], %[[Z2]]
  %1 = stablehlo.reduce(%x init: %true) applies stablehlo.and across dimensions = [1] : (tensor<2x3xi1>, tensor<i1>) -> tensor<2xi1>
  // CHECK: return %[[ANY]], %[[ALL]]
  return %0, %1 : tensor<2xi1>, tensor<2xi1>
}

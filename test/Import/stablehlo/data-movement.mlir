// RUN: loom-opt --convert-stablehlo-to-loom %s | FileCheck %s

// Constants, iota, convert and the shape ops.

// CHECK-LABEL: func.func @constants
func.func @constants() -> (tensor<2xf32>, tensor<3xi32>, tensor<2x3xi64>) {
  // CHECK: %[[C:.*]] = loom.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // The generic form.
  // CHECK: %[[D:.*]] = loom.constant dense<[1, 2, 3]> : tensor<3xi32>
  %1 = "stablehlo.constant"() <{value = dense<[1, 2, 3]> : tensor<3xi32>}> : () -> tensor<3xi32>
  // CHECK: %[[I:.*]] = loom.iota dim = 1 : tensor<2x3xi64>
  %2 = stablehlo.iota dim = 1 : tensor<2x3xi64>
  // CHECK: return %[[C]], %[[D]], %[[I]]
  return %0, %1, %2 : tensor<2xf32>, tensor<3xi32>, tensor<2x3xi64>
}

// CHECK-LABEL: func.func @convert
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
func.func @convert(%x: tensor<4xf32>) -> (tensor<4xbf16>, tensor<4xf32>) {
  // CHECK: %[[H:.*]] = loom.convert %[[X]] : tensor<4xf32> -> tensor<4xbf16>
  %0 = stablehlo.convert %x : (tensor<4xf32>) -> tensor<4xbf16>
  // A conversion to the same type is dropped.
  %1 = stablehlo.convert %x : tensor<4xf32>
  // CHECK: return %[[H]], %[[X]]
  return %0, %1 : tensor<4xbf16>, tensor<4xf32>
}

// CHECK-LABEL: func.func @broadcast
// CHECK-SAME: (%[[B:.*]]: tensor<4xf32>, %[[M:.*]]: tensor<2x3xf32>)
func.func @broadcast(%b: tensor<4xf32>, %m: tensor<2x3xf32>) -> (tensor<8x4xf32>, tensor<3x5x2xf32>) {
  // CHECK: %[[R0:.*]] = loom.broadcast %[[B]], dims = [1] : tensor<4xf32> -> tensor<8x4xf32>
  %0 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<4xf32>) -> tensor<8x4xf32>
  // Non-increasing dims transpose first.
  // CHECK: %[[T:.*]] = loom.transpose %[[M]], permutation = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  // CHECK: %[[R1:.*]] = loom.broadcast %[[T]], dims = [0, 2] : tensor<3x2xf32> -> tensor<3x5x2xf32>
  %1 = "stablehlo.broadcast_in_dim"(%m) {broadcast_dimensions = array<i64: 2, 0>} : (tensor<2x3xf32>) -> tensor<3x5x2xf32>
  // CHECK: return %[[R0]], %[[R1]]
  return %0, %1 : tensor<8x4xf32>, tensor<3x5x2xf32>
}

// CHECK-LABEL: func.func @reshape_transpose
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
func.func @reshape_transpose(%x: tensor<2x3x4xf32>) -> (tensor<6x4xf32>, tensor<4x2x3xf32>, tensor<4x3x2xf32>) {
  // CHECK: loom.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %0 = stablehlo.reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  // CHECK: loom.transpose %[[X]], permutation = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %1 = stablehlo.transpose %x, dims = [2, 0, 1] : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  // CHECK: loom.transpose %[[X]], permutation = [2, 1, 0]
  %2 = "stablehlo.transpose"(%x) {permutation = array<i64: 2,1,0>} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  return %0, %1, %2 : tensor<6x4xf32>, tensor<4x2x3xf32>, tensor<4x3x2xf32>
}

// CHECK-LABEL: func.func @slice
// CHECK-SAME: (%[[X:.*]]: tensor<3x6xi64>)
func.func @slice(%x: tensor<3x6xi64>) -> (tensor<2x2xi64>, tensor<2x2xi64>) {
  // CHECK: loom.slice %[[X]], start = [0, 2], limit = [3, 6], strides = [2, 3] : tensor<3x6xi64> -> tensor<2x2xi64>
  %0 = stablehlo.slice %x [0:3:2, 2:6:3] : (tensor<3x6xi64>) -> tensor<2x2xi64>
  // The attribute form of older printers.
  // CHECK: loom.slice %[[X]], start = [1, 1], limit = [3, 3], strides = [1, 1] : tensor<3x6xi64> -> tensor<2x2xi64>
  %1 = "stablehlo.slice"(%x) {
    start_indices = array<i64: 1, 1>,
    limit_indices = array<i64: 3, 3>,
    strides = array<i64: 1, 1>
  } : (tensor<3x6xi64>) -> tensor<2x2xi64>
  return %0, %1 : tensor<2x2xi64>, tensor<2x2xi64>
}

// CHECK-LABEL: func.func @concatenate
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x5xf32>)
func.func @concatenate(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x11xf32> {
  // CHECK: loom.concat %[[A]], %[[B]], %[[A]] dim = 1 : (tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x3xf32>) -> tensor<2x11xf32>
  %0 = stablehlo.concatenate %a, %b, %a, dim = 1 : (tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x3xf32>) -> tensor<2x11xf32>
  return %0 : tensor<2x11xf32>
}

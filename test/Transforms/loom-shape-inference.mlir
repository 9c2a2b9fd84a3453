// RUN: loom-opt %s -loom-shape-inference -split-input-file -verify-diagnostics | FileCheck %s

// Results written less precisely than their operands allow are refined, in
// order, and the function's result type follows.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: -> tensor<8x4xf32>
// CHECK: loom.dot_general {{.*}} -> tensor<8x4xf32>
// CHECK: loom.exp %{{.*}} : tensor<8x4xf32>
// CHECK: loom.reduce_sum {{.*}} : tensor<8x4xf32> -> tensor<8xf32>
// CHECK: return {{.*}} : tensor<8x4xf32>
func.func @forward(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>) -> tensor<?x?xf32> {
  %0 = "loom.dot_general"(%a, %b) <{lhs_contracting_dims = array<i64: 1>, rhs_contracting_dims = array<i64: 0>}>
      : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<?x?xf32>
  %1 = "loom.exp"(%0) : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %2 = "loom.reduce_sum"(%1) <{dims = array<i64: 1>}> : (tensor<?x?xf32>) -> tensor<?xf32>
  return %1 : tensor<?x?xf32>
}

// -----

// Refinement crosses calls: the callee's result type is refined first, then
// the call site and everything after it.
// CHECK-LABEL: func.func private @callee
// CHECK-SAME: -> tensor<2x3xf32>
// CHECK-LABEL: func.func @caller
// CHECK-SAME: -> tensor<3x2xf32>
// CHECK: call @callee{{.*}} -> tensor<2x3xf32>
// CHECK: loom.transpose {{.*}} : tensor<2x3xf32> -> tensor<3x2xf32>
func.func private @callee(%x: tensor<2x3xf32>) -> tensor<?x3xf32> {
  %0 = "loom.neg"(%x) : (tensor<2x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}
func.func @caller(%x: tensor<2x3xf32>) -> tensor<?x?xf32> {
  %0 = call @callee(%x) : (tensor<2x3xf32>) -> tensor<?x3xf32>
  %1 = "loom.transpose"(%0) <{permutation = array<i64: 1, 0>}> : (tensor<?x3xf32>) -> tensor<?x?xf32>
  return %1 : tensor<?x?xf32>
}

// -----

// Ops that state their result type are refined through elementwise users:
// the broadcast feeds an add whose other operand is static.
// CHECK-LABEL: func.func @backward_through_elementwise
// CHECK: loom.broadcast {{.*}} : tensor<4xf32> -> tensor<8x4xf32>
// CHECK: loom.add {{.*}} : tensor<8x4xf32>
func.func @backward_through_elementwise(%a: tensor<8x4xf32>, %b: tensor<4xf32>) -> tensor<8x4xf32> {
  %0 = loom.broadcast %b, dims = [1] : tensor<4xf32> -> tensor<?x4xf32>
  %1 = "loom.add"(%a, %0) : (tensor<8x4xf32>, tensor<?x4xf32>) -> tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}

// -----

// convert keeps its element type and takes its operand's shape.
// CHECK-LABEL: func.func @convert_result
// CHECK: loom.convert {{.*}} : tensor<5xf32> -> tensor<5xbf16>
func.func @convert_result(%a: tensor<5xf32>) -> tensor<?xbf16> {
  %0 = loom.convert %a : tensor<5xf32> -> tensor<?xbf16>
  return %0 : tensor<?xbf16>
}

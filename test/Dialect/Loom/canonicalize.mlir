// RUN: loom-opt %s -canonicalize -split-input-file | FileCheck %s

// The folders of the loom ops. Folded constant values are worked out by hand
// in the comments.

//===----------------------------------------------------------------------===//
// Identities of the binary ops
//===----------------------------------------------------------------------===//

// x + (-0.0) == x for every float x.
// CHECK-LABEL: func.func @add_neg_zero
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NOT: loom.add
// CHECK: return %[[X]], %[[X]] : tensor<4xf32>, tensor<4xf32>
func.func @add_neg_zero(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %z = loom.constant dense<-0.0> : tensor<4xf32>
  %0 = loom.add %x, %z : tensor<4xf32>
  %1 = loom.add %z, %x : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// x + 0.0 is not x when x is -0.0 (the sum is +0.0): no fold.
// CHECK-LABEL: func.func @add_pos_zero_float
// CHECK-SAME: (%[[X:.*]]: tensor<4xbf16>)
// CHECK: %[[Z:.*]] = loom.constant dense<0.000000e+00> : tensor<4xbf16>
// CHECK: %[[R:.*]] = loom.add %[[X]], %[[Z]] : tensor<4xbf16>
// CHECK: return %[[R]]
func.func @add_pos_zero_float(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %z = loom.constant dense<0.0> : tensor<4xbf16>
  %0 = loom.add %x, %z : tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// CHECK-LABEL: func.func @add_zero_int
// CHECK-SAME: (%[[X:.*]]: tensor<4xi32>, %[[Y:.*]]: tensor<2xi64>)
// CHECK-NOT: loom.add
// CHECK: return %[[X]], %[[Y]] : tensor<4xi32>, tensor<2xi64>
func.func @add_zero_int(%x: tensor<4xi32>, %y: tensor<2xi64>) -> (tensor<4xi32>, tensor<2xi64>) {
  %z = loom.constant dense<0> : tensor<4xi32>
  %0 = loom.add %x, %z : tensor<4xi32>
  %zz = loom.constant dense<0> : tensor<2xi64>
  %1 = loom.add %zz, %y : tensor<2xi64>
  return %0, %1 : tensor<4xi32>, tensor<2xi64>
}

// -----

// x - (+0.0) == x for every float x; x - (-0.0) == x + 0.0 is not.
// CHECK-LABEL: func.func @sub_zero
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<3xi64>)
// CHECK: %[[NZ:.*]] = loom.constant dense<-0.000000e+00> : tensor<4xf32>
// CHECK: %[[R:.*]] = loom.sub %[[X]], %[[NZ]] : tensor<4xf32>
// CHECK-NOT: loom.sub
// CHECK: return %[[X]], %[[R]], %[[I]] : tensor<4xf32>, tensor<4xf32>, tensor<3xi64>
func.func @sub_zero(%x: tensor<4xf32>, %i: tensor<3xi64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<3xi64>) {
  %z = loom.constant dense<0.0> : tensor<4xf32>
  %0 = loom.sub %x, %z : tensor<4xf32>
  %nz = loom.constant dense<-0.0> : tensor<4xf32>
  %1 = loom.sub %x, %nz : tensor<4xf32>
  %iz = loom.constant dense<0> : tensor<3xi64>
  %2 = loom.sub %i, %iz : tensor<3xi64>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<3xi64>
}

// -----

// 0 - x is not an identity.
// CHECK-LABEL: func.func @zero_sub
// CHECK: loom.sub
func.func @zero_sub(%x: tensor<4xi32>) -> tensor<4xi32> {
  %z = loom.constant dense<0> : tensor<4xi32>
  %0 = loom.sub %z, %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @mul_one
// CHECK-SAME: (%[[X:.*]]: tensor<2x2xf16>, %[[I:.*]]: tensor<5xi32>)
// CHECK-NOT: loom.mul
// CHECK: return %[[X]], %[[I]] : tensor<2x2xf16>, tensor<5xi32>
func.func @mul_one(%x: tensor<2x2xf16>, %i: tensor<5xi32>) -> (tensor<2x2xf16>, tensor<5xi32>) {
  %one = loom.constant dense<1.0> : tensor<2x2xf16>
  %0 = loom.mul %x, %one : tensor<2x2xf16>
  %ione = loom.constant dense<1> : tensor<5xi32>
  %1 = loom.mul %ione, %i : tensor<5xi32>
  return %0, %1 : tensor<2x2xf16>, tensor<5xi32>
}

// -----

// Multiplying by a constant other than 1 stays.
// CHECK-LABEL: func.func @mul_two
// CHECK: loom.mul
func.func @mul_two(%x: tensor<4xf32>) -> tensor<4xf32> {
  %two = loom.constant dense<2.0> : tensor<4xf32>
  %0 = loom.mul %x, %two : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @div_one
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<4xi64>)
// CHECK-NOT: loom.div
// CHECK: return %[[X]], %[[I]] : tensor<4xf32>, tensor<4xi64>
func.func @div_one(%x: tensor<4xf32>, %i: tensor<4xi64>) -> (tensor<4xf32>, tensor<4xi64>) {
  %one = loom.constant dense<1.0> : tensor<4xf32>
  %0 = loom.div %x, %one : tensor<4xf32>
  %ione = loom.constant dense<1> : tensor<4xi64>
  %1 = loom.div %i, %ione : tensor<4xi64>
  return %0, %1 : tensor<4xf32>, tensor<4xi64>
}

// -----

// 1 / x is not an identity.
// CHECK-LABEL: func.func @one_div
// CHECK: loom.div
func.func @one_div(%x: tensor<4xf32>) -> tensor<4xf32> {
  %one = loom.constant dense<1.0> : tensor<4xf32>
  %0 = loom.div %one, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Integer division by zero has no value: it stays for run time, also when
// only one element of the divisor is zero.
// CHECK-LABEL: func.func @div_int_by_zero
// CHECK-DAG: %[[A:.*]] = loom.constant dense<[6, 7]> : tensor<2xi32>
// CHECK-DAG: %[[Z:.*]] = loom.constant dense<0> : tensor<2xi32>
// CHECK-DAG: %[[B:.*]] = loom.constant dense<[2, 0]> : tensor<2xi32>
// CHECK: %[[R0:.*]] = loom.div %[[A]], %[[Z]] : tensor<2xi32>
// CHECK: %[[R1:.*]] = loom.div %[[A]], %[[B]] : tensor<2xi32>
// CHECK: return %[[R0]], %[[R1]]
func.func @div_int_by_zero() -> (tensor<2xi32>, tensor<2xi32>) {
  %a = loom.constant dense<[6, 7]> : tensor<2xi32>
  %z = loom.constant dense<0> : tensor<2xi32>
  %0 = loom.div %a, %z : tensor<2xi32>
  %b = loom.constant dense<[2, 0]> : tensor<2xi32>
  %1 = loom.div %a, %b : tensor<2xi32>
  return %0, %1 : tensor<2xi32>, tensor<2xi32>
}

// -----

// CHECK-LABEL: func.func @pow_one
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NOT: loom.pow
// CHECK: %[[TWO:.*]] = loom.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK: %[[P:.*]] = loom.pow %[[X]], %[[TWO]] : tensor<4xf32>
// CHECK: return %[[X]], %[[P]]
func.func @pow_one(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %one = loom.constant dense<1.0> : tensor<4xf32>
  %0 = loom.pow %x, %one : tensor<4xf32>
  %two = loom.constant dense<2.0> : tensor<4xf32>
  %1 = loom.pow %x, %two : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @max_min_same
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>, %[[I:.*]]: tensor<3xi32>)
// CHECK-NOT: loom.max
// CHECK-NOT: loom.min
// CHECK: return %[[X]], %[[I]] : tensor<3xf32>, tensor<3xi32>
func.func @max_min_same(%x: tensor<3xf32>, %i: tensor<3xi32>) -> (tensor<3xf32>, tensor<3xi32>) {
  %0 = loom.max %x, %x : tensor<3xf32>
  %1 = loom.min %i, %i : tensor<3xi32>
  return %0, %1 : tensor<3xf32>, tensor<3xi32>
}

// -----

// CHECK-LABEL: func.func @neg_neg
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>, %[[I:.*]]: tensor<3xi64>)
// CHECK: %[[N:.*]] = loom.neg %[[X]] : tensor<3xf32>
// CHECK-NOT: loom.neg
// CHECK: return %[[X]], %[[N]], %[[I]] : tensor<3xf32>, tensor<3xf32>, tensor<3xi64>
func.func @neg_neg(%x: tensor<3xf32>, %i: tensor<3xi64>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xi64>) {
  %0 = loom.neg %x : tensor<3xf32>
  %1 = loom.neg %0 : tensor<3xf32>
  // Three negations leave one.
  %2 = loom.neg %1 : tensor<3xf32>
  %3 = loom.neg %i : tensor<3xi64>
  %4 = loom.neg %3 : tensor<3xi64>
  return %1, %2, %4 : tensor<3xf32>, tensor<3xf32>, tensor<3xi64>
}

// -----

//===----------------------------------------------------------------------===//
// Constant folding of elementwise ops
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @fold_add
// 1.5 + 2.25 = 3.75
// CHECK-DAG: loom.constant dense<3.750000e+00> : tensor<4xf32>
// [1, 2, -3] + [0.5, -2, 1] = [1.5, 0, -2]
// CHECK-DAG: loom.constant dense<[1.500000e+00, 0.000000e+00, -2.000000e+00]> : tensor<3xf32>
// [1, 2] + 40 = [41, 42]
// CHECK-DAG: loom.constant dense<[41, 42]> : tensor<2xi64>
// 1 + 2 = 3 in bf16
// CHECK-DAG: loom.constant dense<3.000000e+00> : tensor<2xbf16>
// CHECK-NOT: loom.add
func.func @fold_add() -> (tensor<4xf32>, tensor<3xf32>, tensor<2xi64>, tensor<2xbf16>) {
  %a = loom.constant dense<1.5> : tensor<4xf32>
  %b = loom.constant dense<2.25> : tensor<4xf32>
  %0 = loom.add %a, %b : tensor<4xf32>
  %c = loom.constant dense<[1.0, 2.0, -3.0]> : tensor<3xf32>
  %d = loom.constant dense<[0.5, -2.0, 1.0]> : tensor<3xf32>
  %1 = loom.add %c, %d : tensor<3xf32>
  %e = loom.constant dense<[1, 2]> : tensor<2xi64>
  %f = loom.constant dense<40> : tensor<2xi64>
  %2 = loom.add %e, %f : tensor<2xi64>
  %g = loom.constant dense<1.0> : tensor<2xbf16>
  %h = loom.constant dense<2.0> : tensor<2xbf16>
  %3 = loom.add %g, %h : tensor<2xbf16>
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<3xf32>, tensor<2xi64>, tensor<2xbf16>
}

// -----

// CHECK-LABEL: func.func @fold_sub
// [10, -3] - [4, 5] = [6, -8]
// CHECK-DAG: loom.constant dense<[6, -8]> : tensor<2xi64>
// 0.5 - 2 = -1.5
// CHECK-DAG: loom.constant dense<-1.500000e+00> : tensor<2x2xf16>
// CHECK-NOT: loom.sub
func.func @fold_sub() -> (tensor<2xi64>, tensor<2x2xf16>) {
  %a = loom.constant dense<[10, -3]> : tensor<2xi64>
  %b = loom.constant dense<[4, 5]> : tensor<2xi64>
  %0 = loom.sub %a, %b : tensor<2xi64>
  %c = loom.constant dense<0.5> : tensor<2x2xf16>
  %d = loom.constant dense<2.0> : tensor<2x2xf16>
  %1 = loom.sub %c, %d : tensor<2x2xf16>
  return %0, %1 : tensor<2xi64>, tensor<2x2xf16>
}

// -----

// CHECK-LABEL: func.func @fold_mul
// [2, -3, 4] * 3 = [6, -9, 12]
// CHECK-DAG: loom.constant dense<[6, -9, 12]> : tensor<3xi32>
// [1.5, -2] * [2, 0.25] = [3, -0.5]
// CHECK-DAG: loom.constant dense<[3.000000e+00, -5.000000e-01]> : tensor<2xf32>
// CHECK-NOT: loom.mul
func.func @fold_mul() -> (tensor<3xi32>, tensor<2xf32>) {
  %a = loom.constant dense<[2, -3, 4]> : tensor<3xi32>
  %b = loom.constant dense<3> : tensor<3xi32>
  %0 = loom.mul %a, %b : tensor<3xi32>
  %c = loom.constant dense<[1.5, -2.0]> : tensor<2xf32>
  %d = loom.constant dense<[2.0, 0.25]> : tensor<2xf32>
  %1 = loom.mul %c, %d : tensor<2xf32>
  return %0, %1 : tensor<3xi32>, tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @fold_div
// [1, -3] / [4, 2] = [0.25, -1.5]
// CHECK-DAG: loom.constant dense<[2.500000e-01, -1.500000e+00]> : tensor<2xf32>
// Integer division rounds toward zero: [7, -7, 9] / 2 = [3, -3, 4]
// CHECK-DAG: loom.constant dense<[3, -3, 4]> : tensor<3xi32>
// Float division by zero folds: 1 / 0 = +inf
// CHECK-DAG: loom.constant dense<0x7F800000> : tensor<2xf32>
// CHECK-NOT: loom.div
func.func @fold_div() -> (tensor<2xf32>, tensor<3xi32>, tensor<2xf32>) {
  %a = loom.constant dense<[1.0, -3.0]> : tensor<2xf32>
  %b = loom.constant dense<[4.0, 2.0]> : tensor<2xf32>
  %0 = loom.div %a, %b : tensor<2xf32>
  %c = loom.constant dense<[7, -7, 9]> : tensor<3xi32>
  %d = loom.constant dense<2> : tensor<3xi32>
  %1 = loom.div %c, %d : tensor<3xi32>
  %one = loom.constant dense<1.0> : tensor<2xf32>
  %zero = loom.constant dense<0.0> : tensor<2xf32>
  %2 = loom.div %one, %zero : tensor<2xf32>
  return %0, %1, %2 : tensor<2xf32>, tensor<3xi32>, tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @fold_max_min
// max([1, -2, -0], [0.5, 3, 0]) = [1, 3, 0]   (max(-0, +0) = +0)
// CHECK-DAG: loom.constant dense<[1.000000e+00, 3.000000e+00, 0.000000e+00]> : tensor<3xf32>
// min([1, -2, -0], [0.5, 3, 0]) = [0.5, -2, -0]   (min(-0, +0) = -0)
// CHECK-DAG: loom.constant dense<[5.000000e-01, -2.000000e+00, -0.000000e+00]> : tensor<3xf32>
// max([5, -1], [2, 4]) = [5, 4]
// CHECK-DAG: loom.constant dense<[5, 4]> : tensor<2xi32>
// min([5, -1], [2, 4]) = [2, -1]
// CHECK-DAG: loom.constant dense<[2, -1]> : tensor<2xi32>
// CHECK-NOT: loom.max
// CHECK-NOT: loom.min
func.func @fold_max_min() -> (tensor<3xf32>, tensor<3xf32>, tensor<2xi32>, tensor<2xi32>) {
  %a = loom.constant dense<[1.0, -2.0, -0.0]> : tensor<3xf32>
  %b = loom.constant dense<[0.5, 3.0, 0.0]> : tensor<3xf32>
  %0 = loom.max %a, %b : tensor<3xf32>
  %1 = loom.min %a, %b : tensor<3xf32>
  %c = loom.constant dense<[5, -1]> : tensor<2xi32>
  %d = loom.constant dense<[2, 4]> : tensor<2xi32>
  %2 = loom.max %c, %d : tensor<2xi32>
  %3 = loom.min %c, %d : tensor<2xi32>
  return %0, %1, %2, %3 : tensor<3xf32>, tensor<3xf32>, tensor<2xi32>, tensor<2xi32>
}

// -----

// CHECK-LABEL: func.func @fold_neg
// -[1, -0] = [-1, 0]
// CHECK-DAG: loom.constant dense<[-1.000000e+00, 0.000000e+00]> : tensor<2xf32>
// -[3, -4] = [-3, 4]
// CHECK-DAG: loom.constant dense<[-3, 4]> : tensor<2xi64>
// -(2.5) = -2.5
// CHECK-DAG: loom.constant dense<-2.500000e+00> : tensor<3xbf16>
// CHECK-NOT: loom.neg
func.func @fold_neg() -> (tensor<2xf32>, tensor<2xi64>, tensor<3xbf16>) {
  %a = loom.constant dense<[1.0, -0.0]> : tensor<2xf32>
  %0 = loom.neg %a : tensor<2xf32>
  %b = loom.constant dense<[3, -4]> : tensor<2xi64>
  %1 = loom.neg %b : tensor<2xi64>
  %c = loom.constant dense<2.5> : tensor<3xbf16>
  %2 = loom.neg %c : tensor<3xbf16>
  return %0, %1, %2 : tensor<2xf32>, tensor<2xi64>, tensor<3xbf16>
}

// -----

// Folding chains: (2 * 3) - 1 = 5, then 5 + x stays.
// CHECK-LABEL: func.func @fold_chain
// CHECK-SAME: (%[[X:.*]]: tensor<2xi32>)
// CHECK: %[[C:.*]] = loom.constant dense<5> : tensor<2xi32>
// CHECK: %[[R:.*]] = loom.add %[[X]], %[[C]] : tensor<2xi32>
// CHECK: return %[[R]]
func.func @fold_chain(%x: tensor<2xi32>) -> tensor<2xi32> {
  %two = loom.constant dense<2> : tensor<2xi32>
  %three = loom.constant dense<3> : tensor<2xi32>
  %one = loom.constant dense<1> : tensor<2xi32>
  %0 = loom.mul %two, %three : tensor<2xi32>
  %1 = loom.sub %0, %one : tensor<2xi32>
  %2 = loom.add %1, %x : tensor<2xi32>
  return %2 : tensor<2xi32>
}

// -----

//===----------------------------------------------------------------------===//
// select, convert
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @select_const_pred
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK-NOT: loom.select
// CHECK: return %[[A]], %[[B]] : tensor<4xf32>, tensor<4xf32>
func.func @select_const_pred(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %t = loom.constant dense<true> : tensor<4xi1>
  %f = loom.constant dense<false> : tensor<4xi1>
  %0 = loom.select %t, %a, %b : tensor<4xi1>, tensor<4xf32>
  %1 = loom.select %f, %a, %b : tensor<4xi1>, tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @select_same_branches
// CHECK-SAME: (%[[P:.*]]: tensor<4xi1>, %[[A:.*]]: tensor<4xi64>)
// CHECK-NOT: loom.select
// CHECK: return %[[A]] : tensor<4xi64>
func.func @select_same_branches(%p: tensor<4xi1>, %a: tensor<4xi64>) -> tensor<4xi64> {
  %0 = loom.select %p, %a, %a : tensor<4xi1>, tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// A predicate that is constant but not a splat does not fold.
// CHECK-LABEL: func.func @select_nonsplat_pred
// CHECK: loom.select
func.func @select_nonsplat_pred(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %p = loom.constant dense<[true, false]> : tensor<2xi1>
  %0 = loom.select %p, %a, %b : tensor<2xi1>, tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @convert_same_type
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK: %[[H:.*]] = loom.convert %[[X]] : tensor<4xf32> -> tensor<4xf16>
// CHECK-NOT: loom.convert
// CHECK: return %[[X]], %[[H]] : tensor<4xf32>, tensor<4xf16>
func.func @convert_same_type(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf16>) {
  %0 = loom.convert %x : tensor<4xf32> -> tensor<4xf32>
  %1 = loom.convert %x : tensor<4xf32> -> tensor<4xf16>
  return %0, %1 : tensor<4xf32>, tensor<4xf16>
}

// -----

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @reshape_identity
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NOT: loom.reshape
// CHECK: return %[[X]] : tensor<2x3xf32>
func.func @reshape_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = loom.reshape %x : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// reshape(reshape(x)) is one reshape of x.
// CHECK-LABEL: func.func @reshape_reshape
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK: %[[R:.*]] = loom.reshape %[[X]] : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK-NOT: loom.reshape
// CHECK: return %[[R]] : tensor<3x2xf32>
func.func @reshape_reshape(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = loom.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  %1 = loom.reshape %0 : tensor<6xf32> -> tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}

// -----

// A round trip through another shape vanishes.
// CHECK-LABEL: func.func @reshape_round_trip
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xi32>)
// CHECK-NOT: loom.reshape
// CHECK: return %[[X]] : tensor<2x3xi32>
func.func @reshape_round_trip(%x: tensor<2x3xi32>) -> tensor<2x3xi32> {
  %0 = loom.reshape %x : tensor<2x3xi32> -> tensor<6xi32>
  %1 = loom.reshape %0 : tensor<6xi32> -> tensor<3x2xi32>
  %2 = loom.reshape %1 : tensor<3x2xi32> -> tensor<2x3xi32>
  return %2 : tensor<2x3xi32>
}

// -----

// CHECK-LABEL: func.func @reshape_splat
// CHECK: %[[C:.*]] = loom.constant dense<2.000000e+00> : tensor<2x3xf32>
// CHECK-NOT: loom.reshape
// CHECK: return %[[C]]
func.func @reshape_splat() -> tensor<2x3xf32> {
  %c = loom.constant dense<2.0> : tensor<6xf32>
  %0 = loom.reshape %c : tensor<6xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// A non-splat constant is not reshaped by the folder.
// CHECK-LABEL: func.func @reshape_nonsplat
// CHECK: loom.reshape
func.func @reshape_nonsplat() -> tensor<2x1xi64> {
  %c = loom.constant dense<[1, 2]> : tensor<2xi64>
  %0 = loom.reshape %c : tensor<2xi64> -> tensor<2x1xi64>
  return %0 : tensor<2x1xi64>
}

// -----

// CHECK-LABEL: func.func @broadcast_identity
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NOT: loom.broadcast
// CHECK: return %[[X]] : tensor<4xf32>
func.func @broadcast_identity(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = loom.broadcast %x, dims = [0] : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_splat
// CHECK-DAG: %[[C:.*]] = loom.constant dense<1> : tensor<2x4xi32>
// CHECK-DAG: %[[D:.*]] = loom.constant dense<true> : tensor<3x2xi1>
// CHECK-NOT: loom.broadcast
// CHECK: return %[[C]], %[[D]]
func.func @broadcast_splat() -> (tensor<2x4xi32>, tensor<3x2xi1>) {
  %c = loom.constant dense<1> : tensor<4xi32>
  %0 = loom.broadcast %c, dims = [1] : tensor<4xi32> -> tensor<2x4xi32>
  %d = loom.constant dense<true> : tensor<i1>
  %1 = loom.broadcast %d, dims = [] : tensor<i1> -> tensor<3x2xi1>
  return %0, %1 : tensor<2x4xi32>, tensor<3x2xi1>
}

// -----

// CHECK-LABEL: func.func @broadcast_nonsplat
// CHECK: loom.broadcast
func.func @broadcast_nonsplat() -> tensor<2x2xf32> {
  %c = loom.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = loom.broadcast %c, dims = [1] : tensor<2xf32> -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// CHECK-LABEL: func.func @slice_full
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK: %[[S:.*]] = loom.slice %[[X]], start = [0, 0], limit = [4, 8], strides = [1, 2] : tensor<4x8xf32> -> tensor<4x4xf32>
// CHECK-NOT: loom.slice
// CHECK: return %[[X]], %[[S]] : tensor<4x8xf32>, tensor<4x4xf32>
func.func @slice_full(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x4xf32>) {
  %0 = loom.slice %x, start = [0, 0], limit = [4, 8], strides = [1, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = loom.slice %x, start = [0, 0], limit = [4, 8], strides = [1, 2] : tensor<4x8xf32> -> tensor<4x4xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x4xf32>
}

// -----

// CHECK-LABEL: func.func @concat_single
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK: %[[C:.*]] = loom.concat %[[X]], %[[X]] dim = 0
// CHECK-NOT: loom.concat
// CHECK: return %[[X]], %[[C]]
func.func @concat_single(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<4x3xf32>) {
  %0 = loom.concat %x dim = 1 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = loom.concat %x, %x dim = 0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_identity
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NOT: loom.transpose
// CHECK: return %[[X]] : tensor<2x3xf32>
func.func @transpose_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = loom.transpose %x, permutation = [0, 1] : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// transpose(transpose(x, p1), p2) = transpose(x, q) with q[i] = p1[p2[i]].
// p1 = [1, 0, 2]: [2, 3, 4] -> [3, 2, 4]; p2 = [0, 2, 1]: -> [3, 4, 2].
// q = [p1[0], p1[2], p1[1]] = [1, 2, 0]: [2, 3, 4] -> [3, 4, 2].
// CHECK-LABEL: func.func @transpose_transpose
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK: %[[T:.*]] = loom.transpose %[[X]], permutation = [1, 2, 0] : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
// CHECK-NOT: loom.transpose
// CHECK: return %[[T]] : tensor<3x4x2xf32>
func.func @transpose_transpose(%x: tensor<2x3x4xf32>) -> tensor<3x4x2xf32> {
  %0 = loom.transpose %x, permutation = [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %1 = loom.transpose %0, permutation = [0, 2, 1] : tensor<3x2x4xf32> -> tensor<3x4x2xf32>
  return %1 : tensor<3x4x2xf32>
}

// -----

// A permutation followed by its inverse vanishes:
// p1 = [1, 2, 0], p2 = [2, 0, 1]: q = [p1[2], p1[0], p1[1]] = [0, 1, 2].
// CHECK-LABEL: func.func @transpose_inverse
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xi1>)
// CHECK-NOT: loom.transpose
// CHECK: return %[[X]] : tensor<2x3x4xi1>
func.func @transpose_inverse(%x: tensor<2x3x4xi1>) -> tensor<2x3x4xi1> {
  %0 = loom.transpose %x, permutation = [1, 2, 0] : tensor<2x3x4xi1> -> tensor<3x4x2xi1>
  %1 = loom.transpose %0, permutation = [2, 0, 1] : tensor<3x4x2xi1> -> tensor<2x3x4xi1>
  return %1 : tensor<2x3x4xi1>
}

// -----

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @reduce_no_dims
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[I:.*]]: tensor<4xi32>)
// CHECK-NOT: loom.reduce
// CHECK: return %[[X]], %[[X]], %[[I]] : tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi32>
func.func @reduce_no_dims(%x: tensor<2x3xf32>, %i: tensor<4xi32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi32>) {
  %0 = loom.reduce_sum %x, dims = [] : tensor<2x3xf32> -> tensor<2x3xf32>
  %1 = loom.reduce_mean %x, dims = [] keepdims : tensor<2x3xf32> -> tensor<2x3xf32>
  %2 = loom.reduce_max %i, dims = [] : tensor<4xi32> -> tensor<4xi32>
  return %0, %1, %2 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi32>
}

// -----

// Reducing a size-1 dimension with keepdims does not change the type, but
// is no identity fold (only an empty `dims` is).
// CHECK-LABEL: func.func @reduce_unit_dim
// CHECK: loom.reduce_sum
func.func @reduce_unit_dim(%x: tensor<1x3xf32>) -> tensor<1x3xf32> {
  %0 = loom.reduce_sum %x, dims = [0] keepdims : tensor<1x3xf32> -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}

// -----

//===----------------------------------------------------------------------===//
// No fold when the replacement would have another type
//===----------------------------------------------------------------------===//

// Each op below is an identity on values, but its result type is more
// refined than its operand's: replacing the result by the operand would
// change the type, so none folds.
// CHECK-LABEL: func.func @no_fold_refined_result
// CHECK-SAME: (%[[X:.*]]: tensor<?xf32>, %[[P:.*]]: tensor<?xi1>, %[[M:.*]]: tensor<?x3xf32>)
// CHECK: %[[R0:.*]] = loom.add %[[X]], %{{.*}} : (tensor<?xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[R1:.*]] = loom.max %[[X]], %[[X]] : (tensor<?xf32>, tensor<?xf32>) -> tensor<4xf32>
// CHECK: %[[R2:.*]] = loom.select %[[P]], %[[X]], %[[X]] : tensor<?xi1>, (tensor<?xf32>, tensor<?xf32>) -> tensor<4xf32>
// CHECK: %[[R3:.*]] = loom.convert %[[X]] : tensor<?xf32> -> tensor<4xf32>
// CHECK: %[[R4:.*]] = loom.reshape %[[X]] : tensor<?xf32> -> tensor<4xf32>
// CHECK: %[[R5:.*]] = loom.broadcast %[[X]], dims = [0] : tensor<?xf32> -> tensor<4xf32>
// CHECK: %[[R6:.*]] = loom.slice %[[M]], start = [0, 0], limit = [2, 3], strides = [1, 1] : tensor<?x3xf32> -> tensor<2x3xf32>
// CHECK: %[[R7:.*]] = loom.concat %[[M]] dim = 0 : (tensor<?x3xf32>) -> tensor<2x3xf32>
// CHECK: %[[R8:.*]] = loom.transpose %[[M]], permutation = [0, 1] : tensor<?x3xf32> -> tensor<2x3xf32>
// CHECK: %[[R9:.*]] = loom.reduce_sum %[[X]], dims = [] : tensor<?xf32> -> tensor<4xf32>
// CHECK: %[[N:.*]] = loom.neg %[[X]] : tensor<?xf32>
// CHECK: %[[R10:.*]] = loom.neg %[[N]] : (tensor<?xf32>) -> tensor<4xf32>
// CHECK: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]], %[[R6]], %[[R7]], %[[R8]], %[[R9]], %[[R10]] :
func.func @no_fold_refined_result(%x: tensor<?xf32>, %p: tensor<?xi1>, %m: tensor<?x3xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xf32>, tensor<4xf32>) {
  %nz = loom.constant dense<-0.0> : tensor<4xf32>
  %0 = loom.add %x, %nz : (tensor<?xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = loom.max %x, %x : (tensor<?xf32>, tensor<?xf32>) -> tensor<4xf32>
  %2 = loom.select %p, %x, %x : tensor<?xi1>, (tensor<?xf32>, tensor<?xf32>) -> tensor<4xf32>
  %3 = loom.convert %x : tensor<?xf32> -> tensor<4xf32>
  %4 = loom.reshape %x : tensor<?xf32> -> tensor<4xf32>
  %5 = loom.broadcast %x, dims = [0] : tensor<?xf32> -> tensor<4xf32>
  %6 = loom.slice %m, start = [0, 0], limit = [2, 3], strides = [1, 1] : tensor<?x3xf32> -> tensor<2x3xf32>
  %7 = loom.concat %m dim = 0 : (tensor<?x3xf32>) -> tensor<2x3xf32>
  %8 = "loom.transpose"(%m) <{permutation = array<i64: 0, 1>}> : (tensor<?x3xf32>) -> tensor<2x3xf32>
  %9 = loom.reduce_sum %x, dims = [] : tensor<?xf32> -> tensor<4xf32>
  %10 = loom.neg %x : tensor<?xf32>
  %11 = loom.neg %10 : (tensor<?xf32>) -> tensor<4xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %11
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Constant folding yields a value of the constants' type, tensor<2xi32>;
// the op's result type is tensor<?xi32>, so the constant is not
// materialised and the op stays.
// CHECK-LABEL: func.func @no_fold_constant_less_refined_result
// CHECK: loom.add %{{.*}}, %{{.*}} : (tensor<2xi32>, tensor<2xi32>) -> tensor<?xi32>
func.func @no_fold_constant_less_refined_result() -> tensor<?xi32> {
  %a = loom.constant dense<[1, 2]> : tensor<2xi32>
  %0 = loom.add %a, %a : (tensor<2xi32>, tensor<2xi32>) -> tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

// A slice of a dynamic dimension is not the identity even when its operand
// and result types print alike: elements 1 and 3 of a `?`-sized vector.
// CHECK-LABEL: func.func @slice_dynamic_not_identity
// CHECK: %[[S:.*]] = loom.slice
// CHECK: return %[[S]]
func.func @slice_dynamic_not_identity(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = loom.slice %x, start = [1], limit = [5], strides = [2] : tensor<?xf32> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// A `?` between two reshapes may hide an element-count mismatch (6 vs 7);
// folding them would turn a verified module into an invalid one.
// CHECK-LABEL: func.func @reshape_chain_hidden_mismatch
// CHECK: loom.reshape %{{.*}} : tensor<6xf32> -> tensor<?xf32>
// CHECK: loom.reshape %{{.*}} : tensor<?xf32> -> tensor<7xf32>
func.func @reshape_chain_hidden_mismatch(%x: tensor<6xf32>) -> tensor<7xf32> {
  %0 = loom.reshape %x : tensor<6xf32> -> tensor<?xf32>
  %1 = loom.reshape %0 : tensor<?xf32> -> tensor<7xf32>
  return %1 : tensor<7xf32>
}

// -----

// Same for two transposes through `?x?`: [2, 3] swapped twice is [2, 3], not
// the declared [5, 7].
// CHECK-LABEL: func.func @transpose_chain_hidden_mismatch
// CHECK: loom.transpose %{{.*}} : tensor<2x3xf32> -> tensor<?x?xf32>
// CHECK: loom.transpose %{{.*}} : tensor<?x?xf32> -> tensor<5x7xf32>
func.func @transpose_chain_hidden_mismatch(%x: tensor<2x3xf32>) -> tensor<5x7xf32> {
  %0 = "loom.transpose"(%x) <{permutation = array<i64: 1, 0>}> : (tensor<2x3xf32>) -> tensor<?x?xf32>
  %1 = "loom.transpose"(%0) <{permutation = array<i64: 1, 0>}> : (tensor<?x?xf32>) -> tensor<5x7xf32>
  return %1 : tensor<5x7xf32>
}

// -----

// INT_MIN / -1 overflows; like division by zero it is left to run time.
// CHECK-LABEL: func.func @div_int_overflow
// CHECK: loom.div
func.func @div_int_overflow() -> tensor<2xi32> {
  %a = loom.constant dense<-2147483648> : tensor<2xi32>
  %b = loom.constant dense<-1> : tensor<2xi32>
  %0 = loom.div %a, %b : tensor<2xi32>
  return %0 : tensor<2xi32>
}

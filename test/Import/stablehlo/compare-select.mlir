// RUN: loom-opt --convert-stablehlo-to-loom %s | FileCheck %s

// compare, select, clamp and the logical ops.

// CHECK-LABEL: func.func @compare
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<4xi64>, %[[J:.*]]: tensor<4xi64>)
func.func @compare(%a: tensor<4xf32>, %b: tensor<4xf32>, %i: tensor<4xi64>, %j: tensor<4xi64>)
    -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  // CHECK: loom.compare gt, %[[A]], %[[B]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %0 = stablehlo.compare  GT, %a, %b,  FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  // CHECK: loom.compare eq, %[[A]], %[[B]]
  %1 = stablehlo.compare EQ, %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  // CHECK: loom.compare ne, %[[A]], %[[B]]
  %2 = "stablehlo.compare"(%a, %b) {comparison_direction = #stablehlo<comparison_direction NE>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  // CHECK: loom.compare lt, %[[I]], %[[J]] : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  %3 = stablehlo.compare  LT, %i, %j,  SIGNED : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  // CHECK: loom.compare le, %[[I]], %[[J]]
  %4 = stablehlo.compare  LE, %i, %j,  SIGNED : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  // CHECK: loom.compare ge, %[[I]], %[[J]]
  %5 = stablehlo.compare  GE, %i, %j : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  return %0, %1, %2, %3, %4, %5 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// Ordering comparisons of i1 (false < true) become selects.
// CHECK-LABEL: func.func @compare_bool
// CHECK-SAME: (%[[P:.*]]: tensor<2xi1>, %[[Q:.*]]: tensor<2xi1>)
func.func @compare_bool(%p: tensor<2xi1>, %q: tensor<2xi1>) -> (tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>) {
  // p < q = p ? false : q
  // CHECK: %[[F:.*]] = loom.constant dense<false> : tensor<2xi1>
  // CHECK: %[[LT:.*]] = loom.select %[[P]], %[[F]], %[[Q]]
  %0 = stablehlo.compare  LT, %p, %q,  UNSIGNED : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  // p >= q = q ? p : true
  // CHECK: %[[T:.*]] = loom.constant dense<true> : tensor<2xi1>
  // CHECK: %[[GE:.*]] = loom.select %[[Q]], %[[P]], %[[T]]
  %1 = stablehlo.compare  GE, %p, %q,  UNSIGNED : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  // p > q = q ? false : p
  // CHECK: %[[F2:.*]] = loom.constant dense<false> : tensor<2xi1>
  // CHECK: %[[GT:.*]] = loom.select %[[Q]], %[[F2]], %[[P]]
  %2 = stablehlo.compare  GT, %p, %q,  UNSIGNED : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  // p <= q = p ? q : true
  // CHECK: %[[T2:.*]] = loom.constant dense<true> : tensor<2xi1>
  // CHECK: %[[LE:.*]] = loom.select %[[P]], %[[Q]], %[[T2]]
  %3 = stablehlo.compare  LE, %p, %q,  UNSIGNED : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  // CHECK: %[[EQ:.*]] = loom.compare eq, %[[P]], %[[Q]]
  %4 = stablehlo.compare  EQ, %p, %q,  UNSIGNED : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  // CHECK: return %[[LT]], %[[GE]], %[[GT]], %[[LE]], %[[EQ]]
  return %0, %1, %2, %3, %4 : tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>
}

// CHECK-LABEL: func.func @logic
// CHECK-SAME: (%[[P:.*]]: tensor<2xi1>, %[[Q:.*]]: tensor<2xi1>)
func.func @logic(%p: tensor<2xi1>, %q: tensor<2xi1>) -> (tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>) {
  // CHECK: %[[AND:.*]] = loom.select %[[P]], %[[Q]], %[[P]]
  %0 = stablehlo.and %p, %q : tensor<2xi1>
  // CHECK: %[[OR:.*]] = loom.select %[[P]], %[[P]], %[[Q]]
  %1 = stablehlo.or %p, %q : tensor<2xi1>
  // CHECK: %[[XOR:.*]] = loom.compare ne, %[[P]], %[[Q]]
  %2 = stablehlo.xor %p, %q : tensor<2xi1>
  // CHECK: %[[F:.*]] = loom.constant dense<false> : tensor<2xi1>
  // CHECK: %[[NOT:.*]] = loom.compare eq, %[[P]], %[[F]]
  %3 = stablehlo.not %p : tensor<2xi1>
  // maximum and minimum of i1 are or and and.
  // CHECK: %[[MAX:.*]] = loom.select %[[P]], %[[P]], %[[Q]]
  %4 = stablehlo.maximum %p, %q : tensor<2xi1>
  // CHECK: %[[MIN:.*]] = loom.select %[[P]], %[[Q]], %[[P]]
  %5 = stablehlo.minimum %p, %q : tensor<2xi1>
  // CHECK: return %[[AND]], %[[OR]], %[[XOR]], %[[NOT]], %[[MAX]], %[[MIN]]
  return %0, %1, %2, %3, %4, %5 : tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>
}

// A 0-d predicate is broadcast to the operands' shape.
// CHECK-LABEL: func.func @select
// CHECK-SAME: (%[[P:.*]]: tensor<i1>, %[[M:.*]]: tensor<2x3xi1>, %[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x3xf32>)
func.func @select(%p: tensor<i1>, %m: tensor<2x3xi1>, %a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: %[[S0:.*]] = loom.select %[[M]], %[[A]], %[[B]] : tensor<2x3xi1>, tensor<2x3xf32>
  %0 = stablehlo.select %m, %a, %b : tensor<2x3xi1>, tensor<2x3xf32>
  // CHECK: %[[PB:.*]] = loom.broadcast %[[P]], dims = [] : tensor<i1> -> tensor<2x3xi1>
  // CHECK: %[[S1:.*]] = loom.select %[[PB]], %[[A]], %[[B]] : tensor<2x3xi1>, tensor<2x3xf32>
  %1 = stablehlo.select %p, %a, %b : (tensor<i1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: return %[[S0]], %[[S1]]
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// clamp(lo, x, hi) = min(max(x, lo), hi), 0-d bounds broadcast.
// CHECK-LABEL: func.func @clamp
// CHECK-SAME: (%[[LO:.*]]: tensor<f32>, %[[X:.*]]: tensor<2x3xf32>, %[[HI:.*]]: tensor<2x3xf32>)
func.func @clamp(%lo: tensor<f32>, %x: tensor<2x3xf32>, %hi: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK: %[[LOB:.*]] = loom.broadcast %[[LO]], dims = [] : tensor<f32> -> tensor<2x3xf32>
  // CHECK: %[[LOW:.*]] = loom.max %[[X]], %[[LOB]] : tensor<2x3xf32>
  // CHECK: %[[R:.*]] = loom.min %[[LOW]], %[[HI]] : tensor<2x3xf32>
  // CHECK: return %[[R]]
  %0 = stablehlo.clamp %lo, %x, %hi : (tensor<f32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// RUN: loom-opt --convert-stablehlo-to-loom %s | FileCheck %s

// Elementwise stablehlo ops map to loom ops one to one; the fused forms
// expand.

// CHECK-LABEL: func.func @unary
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<4xi32>)
func.func @unary(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
  // CHECK: %[[ABS:.*]] = loom.abs %[[X]] : tensor<4xf32>
  %0 = stablehlo.abs %x : tensor<4xf32>
  // CHECK: %[[NEG:.*]] = loom.neg %[[ABS]] : tensor<4xf32>
  %1 = stablehlo.negate %0 : tensor<4xf32>
  // CHECK: %[[EXP:.*]] = loom.exp %[[NEG]] : tensor<4xf32>
  %2 = stablehlo.exponential %1 : tensor<4xf32>
  // CHECK: %[[LOG:.*]] = loom.log %[[EXP]] : tensor<4xf32>
  %3 = stablehlo.log %2 : tensor<4xf32>
  // CHECK: %[[TANH:.*]] = loom.tanh %[[LOG]] : tensor<4xf32>
  %4 = stablehlo.tanh %3 : tensor<4xf32>
  // CHECK: %[[SIG:.*]] = loom.sigmoid %[[TANH]] : tensor<4xf32>
  %5 = stablehlo.logistic %4 : tensor<4xf32>
  // CHECK: %[[SQRT:.*]] = loom.sqrt %[[SIG]] : tensor<4xf32>
  %6 = stablehlo.sqrt %5 : tensor<4xf32>
  // CHECK: %[[RSQRT:.*]] = loom.rsqrt %[[SQRT]] : tensor<4xf32>
  %7 = "stablehlo.rsqrt"(%6) : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: %[[INEG:.*]] = loom.neg %[[I]] : tensor<4xi32>
  %8 = stablehlo.negate %i : tensor<4xi32>
  // CHECK: %[[IABS:.*]] = loom.abs %[[INEG]] : tensor<4xi32>
  %9 = stablehlo.abs %8 : tensor<4xi32>
  // CHECK: return %[[RSQRT]], %[[IABS]]
  return %7, %9 : tensor<4xf32>, tensor<4xi32>
}

// CHECK-LABEL: func.func @binary
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x3xf32>)
func.func @binary(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK: %[[ADD:.*]] = loom.add %[[A]], %[[B]] : tensor<2x3xf32>
  %0 = stablehlo.add %a, %b : tensor<2x3xf32>
  // CHECK: %[[SUB:.*]] = loom.sub %[[ADD]], %[[B]] : tensor<2x3xf32>
  %1 = stablehlo.subtract %0, %b : tensor<2x3xf32>
  // CHECK: %[[MUL:.*]] = loom.mul %[[SUB]], %[[B]] : tensor<2x3xf32>
  %2 = stablehlo.multiply %1, %b : tensor<2x3xf32>
  // CHECK: %[[DIV:.*]] = loom.div %[[MUL]], %[[B]] : tensor<2x3xf32>
  %3 = stablehlo.divide %2, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[POW:.*]] = loom.pow %[[DIV]], %[[B]] : tensor<2x3xf32>
  %4 = stablehlo.power %3, %b : tensor<2x3xf32>
  // CHECK: %[[MAX:.*]] = loom.max %[[POW]], %[[B]] : tensor<2x3xf32>
  %5 = stablehlo.maximum %4, %b : tensor<2x3xf32>
  // CHECK: %[[MIN:.*]] = loom.min %[[MAX]], %[[B]] : tensor<2x3xf32>
  %6 = "stablehlo.minimum"(%5, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: return %[[MIN]]
  return %6 : tensor<2x3xf32>
}

// log_plus_one(x) = log(x + 1), exponential_minus_one(x) = exp(x) - 1.
// CHECK-LABEL: func.func @fused
// CHECK-SAME: (%[[X:.*]]: tensor<4xbf16>)
func.func @fused(%x: tensor<4xbf16>) -> (tensor<4xbf16>, tensor<4xbf16>) {
  // CHECK: %[[ONE:.*]] = loom.constant dense<1.000000e+00> : tensor<4xbf16>
  // CHECK: %[[SUM:.*]] = loom.add %[[X]], %[[ONE]] : tensor<4xbf16>
  // CHECK: %[[LOG1P:.*]] = loom.log %[[SUM]] : tensor<4xbf16>
  %0 = stablehlo.log_plus_one %x : tensor<4xbf16>
  // CHECK: %[[EXP:.*]] = loom.exp %[[X]] : tensor<4xbf16>
  // CHECK: %[[ONE2:.*]] = loom.constant dense<1.000000e+00> : tensor<4xbf16>
  // CHECK: %[[EXPM1:.*]] = loom.sub %[[EXP]], %[[ONE2]] : tensor<4xbf16>
  %1 = stablehlo.exponential_minus_one %x : tensor<4xbf16>
  // CHECK: return %[[LOG1P]], %[[EXPM1]]
  return %0, %1 : tensor<4xbf16>, tensor<4xbf16>
}

// A dynamic size: the constant 1 is a 0-d constant broadcast to the shape.
// CHECK-LABEL: func.func @fused_dynamic
func.func @fused_dynamic(%x: tensor<?x4xf16>) -> tensor<?x4xf16> {
  // CHECK: %[[C:.*]] = loom.constant dense<1.000000e+00> : tensor<f16>
  // CHECK: %[[ONE:.*]] = loom.broadcast %[[C]], dims = [] : tensor<f16> -> tensor<?x4xf16>
  // CHECK: loom.add %{{.*}}, %[[ONE]] : tensor<?x4xf16>
  %0 = stablehlo.log_plus_one %x : tensor<?x4xf16>
  return %0 : tensor<?x4xf16>
}

// i1 arithmetic is logic: add is or, multiply is and.
// CHECK-LABEL: func.func @bool_arith
// CHECK-SAME: (%[[P:.*]]: tensor<4xi1>, %[[Q:.*]]: tensor<4xi1>)
func.func @bool_arith(%p: tensor<4xi1>, %q: tensor<4xi1>) -> (tensor<4xi1>, tensor<4xi1>) {
  // CHECK: %[[OR:.*]] = loom.select %[[P]], %[[P]], %[[Q]] : tensor<4xi1>, tensor<4xi1>
  %0 = stablehlo.add %p, %q : tensor<4xi1>
  // CHECK: %[[AND:.*]] = loom.select %[[P]], %[[Q]], %[[P]] : tensor<4xi1>, tensor<4xi1>
  %1 = stablehlo.multiply %p, %q : tensor<4xi1>
  // CHECK: return %[[OR]], %[[AND]]
  return %0, %1 : tensor<4xi1>, tensor<4xi1>
}

// is_finite: |x| < inf (false for infinities and NaN).
// CHECK-LABEL: func.func @is_finite
// CHECK: %[[A:.*]] = loom.abs %arg0 : tensor<4xf32>
// CHECK: %[[INF:.*]] = loom.constant dense<0x7F800000> : tensor<4xf32>
// CHECK: loom.compare lt, %[[A]], %[[INF]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
func.func @is_finite(%x: tensor<4xf32>) -> tensor<4xi1> {
  %0 = stablehlo.is_finite %x : (tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// sign: 1 above 0, -1 below, x * 0 otherwise (0 stays 0, NaN stays NaN).
// CHECK-LABEL: func.func @sign
// CHECK: %[[POS:.*]] = loom.compare gt, %arg0, %[[ZERO:.*]] :
// CHECK: %[[NEG:.*]] = loom.compare lt, %arg0, %[[ZERO]] :
// CHECK: %[[REST:.*]] = loom.mul %arg0, %[[ZERO]] : tensor<4xf32>
// CHECK: %[[INNER:.*]] = loom.select %[[NEG]], %{{.*}}, %[[REST]] :
// CHECK: loom.select %[[POS]], %{{.*}}, %[[INNER]] :
func.func @sign(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.sign %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// reduce_precision: to a format f32 fits in, nothing; to bf16's e8m7, a
// round trip through bf16. Values: reduce_precision_* of the StableHLO test
// data (test_stablehlo_conformance.py).
// CHECK-LABEL: func.func @reduce_precision
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK: %[[B:.*]] = loom.convert %[[X]] : tensor<4xf32> -> tensor<4xbf16>
// CHECK: %[[R:.*]] = loom.convert %[[B]] : tensor<4xbf16> -> tensor<4xf32>
// CHECK: return %[[X]], %[[R]]
func.func @reduce_precision(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = stablehlo.reduce_precision %x, format = e11m52 : tensor<4xf32>
  %1 = stablehlo.reduce_precision %x, format = e8m7 : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

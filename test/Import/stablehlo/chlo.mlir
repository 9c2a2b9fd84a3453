// RUN: loom-opt --convert-stablehlo-to-loom %s | FileCheck %s

// CHECK-LABEL: func.func @erf
// CHECK-SAME: (%[[X:.*]]: tensor<20x20xf32>)
func.func @erf(%x: tensor<20x20xf32>) -> tensor<20x20xf32> {
  // CHECK: %[[E:.*]] = loom.erf %[[X]] : tensor<20x20xf32>
  // CHECK: return %[[E]]
  %0 = chlo.erf %x : tensor<20x20xf32> -> tensor<20x20xf32>
  return %0 : tensor<20x20xf32>
}

// CHECK-LABEL: func.func @erf_inv
// CHECK-SAME: (%[[X:.*]]: tensor<20x20xf32>)
func.func @erf_inv(%x: tensor<20x20xf32>) -> tensor<20x20xf32> {
  // CHECK: %[[E:.*]] = loom.erf_inv %[[X]] : tensor<20x20xf32>
  // CHECK: return %[[E]]
  %0 = chlo.erf_inv %x : tensor<20x20xf32> -> tensor<20x20xf32>
  return %0 : tensor<20x20xf32>
}

// jax.nn.gelu(x, approximate=False) = x / 2 * erfc(-x / sqrt(2)), as JAX
// lowers it: chlo.erfc becomes 1 - erf.
// CHECK-LABEL: func.func @gelu_exact
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
func.func @gelu_exact(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %half = stablehlo.constant dense<5.000000e-01> : tensor<f32>
  %sqrt_half = stablehlo.constant dense<0.707106769> : tensor<f32>
  %0 = stablehlo.negate %x : tensor<4x8xf32>
  %1 = stablehlo.broadcast_in_dim %sqrt_half, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
  %2 = stablehlo.multiply %0, %1 : tensor<4x8xf32>
  // CHECK: %[[ARG:.*]] = loom.mul
  // CHECK: %[[ERF:.*]] = loom.erf %[[ARG]] : tensor<4x8xf32>
  // CHECK: %[[ONE:.*]] = loom.constant dense<1.000000e+00> : tensor<4x8xf32>
  // CHECK: %[[ERFC:.*]] = loom.sub %[[ONE]], %[[ERF]] : tensor<4x8xf32>
  %3 = chlo.erfc %2 : tensor<4x8xf32> -> tensor<4x8xf32>
  %4 = stablehlo.broadcast_in_dim %half, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
  %5 = stablehlo.multiply %4, %x : tensor<4x8xf32>
  // CHECK: loom.mul %{{.*}}, %[[ERFC]] : tensor<4x8xf32>
  %6 = stablehlo.multiply %5, %3 : tensor<4x8xf32>
  return %6 : tensor<4x8xf32>
}

// x ** 2 (and the gradient of gelu) as JAX lowers it.
// CHECK-LABEL: func.func @square
// CHECK-SAME: (%[[X:.*]]: tensor<2x4xf32>)
func.func @square(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // CHECK: %[[S:.*]] = loom.mul %[[X]], %[[X]] : tensor<2x4xf32>
  // CHECK: return %[[S]]
  %0 = chlo.square %x : tensor<2x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

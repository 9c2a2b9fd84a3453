// RUN: loom-opt %s --split-input-file --loom-raise-composites | FileCheck %s
//
// GELU, SiLU and RMSNorm as exporters write them become loom.gelu,
// loom.silu and loom.rms_norm; the formula's other ops are erased. Whether
// the raised ops compute what the formulas do is checked end to end:
// test_hf_models.py trains GPT-2 (tanh GELU), BERT and GPT-NeoX (erf
// GELU), LLaMA and Qwen2 (SiLU, RMSNorm) through this pass against
// PyTorch's losses.

// GPT-2's gelu_new as the TorchScript exporter writes it.
// CHECK-LABEL: func.func @gelu_new(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>
// CHECK-NEXT: %[[Y:.*]] = loom.gelu %[[X]] approximate = tanh : tensor<4x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @gelu_new(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %half = loom.constant dense<5.000000e-01> : tensor<4x8xf32>
  %three = loom.constant dense<3.000000e+00> : tensor<4x8xf32>
  %kappa = loom.constant dense<4.471500e-02> : tensor<4x8xf32>
  %beta = loom.constant dense<0.797884583> : tensor<4x8xf32>
  %one = loom.constant dense<1.000000e+00> : tensor<4x8xf32>
  %h = loom.mul %x, %half : tensor<4x8xf32>
  %c = loom.pow %x, %three : tensor<4x8xf32>
  %d = loom.mul %c, %kappa : tensor<4x8xf32>
  %e = loom.add %x, %d : tensor<4x8xf32>
  %f = loom.mul %e, %beta : tensor<4x8xf32>
  %t = loom.tanh %f : tensor<4x8xf32>
  %u = loom.add %t, %one : tensor<4x8xf32>
  %y = loom.mul %h, %u : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// PyTorch's own decomposition of gelu(approximate="tanh"): x * x * x, the
// constants on the left, scalars broadcast.
// CHECK-LABEL: func.func @gelu_tanh_symbolic(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>
// CHECK-NOT: loom.tanh
// CHECK: %[[Y:.*]] = loom.gelu %[[X]] approximate = tanh : tensor<4x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @gelu_tanh_symbolic(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s_half = loom.constant dense<5.000000e-01> : tensor<f32>
  %s_kappa = loom.constant dense<4.471500e-02> : tensor<f32>
  %s_beta = loom.constant dense<0.797884583> : tensor<f32>
  %s_one = loom.constant dense<1.000000e+00> : tensor<f32>
  %half = loom.broadcast %s_half, dims = [] : tensor<f32> -> tensor<4x8xf32>
  %kappa = loom.broadcast %s_kappa, dims = [] : tensor<f32> -> tensor<4x8xf32>
  %beta = loom.broadcast %s_beta, dims = [] : tensor<f32> -> tensor<4x8xf32>
  %one = loom.broadcast %s_one, dims = [] : tensor<f32> -> tensor<4x8xf32>
  %x2 = loom.mul %x, %x : tensor<4x8xf32>
  %x3 = loom.mul %x, %x2 : tensor<4x8xf32>
  %d = loom.mul %kappa, %x3 : tensor<4x8xf32>
  %e = loom.add %d, %x : tensor<4x8xf32>
  %f = loom.mul %beta, %e : tensor<4x8xf32>
  %t = loom.tanh %f : tensor<4x8xf32>
  %u = loom.add %one, %t : tensor<4x8xf32>
  %v = loom.mul %x, %u : tensor<4x8xf32>
  %y = loom.mul %half, %v : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// The exact GELU, x * (1 + erf(x / sqrt 2)) * 0.5 (BERT, GPT-NeoX).
// CHECK-LABEL: func.func @gelu_erf(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>
// CHECK-NEXT: %[[Y:.*]] = loom.gelu %[[X]] : tensor<4x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @gelu_erf(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %sqrt2 = loom.constant dense<1.41421354> : tensor<4x8xf32>
  %one = loom.constant dense<1.000000e+00> : tensor<4x8xf32>
  %half = loom.constant dense<5.000000e-01> : tensor<4x8xf32>
  %a = loom.div %x, %sqrt2 : tensor<4x8xf32>
  %b = loom.erf %a : tensor<4x8xf32>
  %c = loom.add %b, %one : tensor<4x8xf32>
  %d = loom.mul %x, %c : tensor<4x8xf32>
  %y = loom.mul %d, %half : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// SiLU, sigmoid first (LLaMA's MLP); the intermediate read elsewhere stays.
// CHECK-LABEL: func.func @silu(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>
// CHECK-NEXT: %[[S:.*]] = loom.sigmoid %[[X]]
// CHECK-NEXT: %[[Y:.*]] = loom.silu %[[X]] : tensor<4x8xf32>
// CHECK-NEXT: return %[[Y]], %[[S]]
func.func @silu(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = loom.sigmoid %x : tensor<4x8xf32>
  %y = loom.mul %s, %x : tensor<4x8xf32>
  return %y, %s : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Not GELU: another cubic coefficient.
// CHECK-LABEL: func.func @not_gelu(
// CHECK-NOT: loom.gelu
// CHECK: loom.tanh
// CHECK-NOT: loom.gelu
func.func @not_gelu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %half = loom.constant dense<5.000000e-01> : tensor<4x8xf32>
  %three = loom.constant dense<3.000000e+00> : tensor<4x8xf32>
  %kappa = loom.constant dense<4.400000e-02> : tensor<4x8xf32>
  %beta = loom.constant dense<0.797884583> : tensor<4x8xf32>
  %one = loom.constant dense<1.000000e+00> : tensor<4x8xf32>
  %h = loom.mul %x, %half : tensor<4x8xf32>
  %c = loom.pow %x, %three : tensor<4x8xf32>
  %d = loom.mul %c, %kappa : tensor<4x8xf32>
  %e = loom.add %x, %d : tensor<4x8xf32>
  %f = loom.mul %e, %beta : tensor<4x8xf32>
  %t = loom.tanh %f : tensor<4x8xf32>
  %u = loom.add %t, %one : tensor<4x8xf32>
  %y = loom.mul %h, %u : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Not SiLU: the sigmoid of another value (a gate).
// CHECK-LABEL: func.func @gate(
// CHECK-NOT: loom.silu
// CHECK: loom.sigmoid
// CHECK-NEXT: loom.mul
func.func @gate(%x: tensor<4x8xf32>, %g: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = loom.sigmoid %g : tensor<4x8xf32>
  %y = loom.mul %s, %x : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// LLaMA's RMSNorm as the TorchScript exporter writes it: x^2, its mean
// over the last dimension kept, + eps, 1 / sqrt, broadcast back, times x,
// times the broadcast weight.
// CHECK-LABEL: func.func @rms_norm(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x4x8xf32>, %[[W:[a-z0-9]+]]: tensor<8xf32>
// CHECK-NEXT: %[[Y:.*]] = loom.rms_norm %[[X]] scale %[[W]] axis = 2 epsilon = 9.9999999747524271E-7 : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @rms_norm(%x: tensor<2x4x8xf32>, %w: tensor<8xf32>) -> tensor<2x4x8xf32> {
  %two = loom.constant dense<2.000000e+00> : tensor<2x4x8xf32>
  %eps = loom.constant dense<9.99999997E-7> : tensor<2x4x1xf32>
  %one = loom.constant dense<1.000000e+00> : tensor<2x4x1xf32>
  %p = loom.pow %x, %two : tensor<2x4x8xf32>
  %m = loom.reduce_mean %p, dims = [2] keepdims : tensor<2x4x8xf32> -> tensor<2x4x1xf32>
  %s = loom.add %m, %eps : tensor<2x4x1xf32>
  %q = loom.sqrt %s : tensor<2x4x1xf32>
  %r = loom.div %one, %q : tensor<2x4x1xf32>
  %b = loom.broadcast %r, dims = [0, 1, 2] : tensor<2x4x1xf32> -> tensor<2x4x8xf32>
  %n = loom.mul %x, %b : tensor<2x4x8xf32>
  %wb = loom.broadcast %w, dims = [2] : tensor<8xf32> -> tensor<2x4x8xf32>
  %y = loom.mul %wb, %n : tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// Without a scale, rsqrt of x * x's mean, over the last two dimensions.
// CHECK-LABEL: func.func @rms_norm_rsqrt(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x4x8xf32>
// CHECK-NEXT: %[[Y:.*]] = loom.rms_norm %[[X]] axis = 1 epsilon = 9.9999997473787516E-6 : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @rms_norm_rsqrt(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %eps = loom.constant dense<9.99999974E-6> : tensor<2x1x1xf32>
  %p = loom.mul %x, %x : tensor<2x4x8xf32>
  %m = loom.reduce_mean %p, dims = [1, 2] keepdims : tensor<2x4x8xf32> -> tensor<2x1x1xf32>
  %s = loom.add %eps, %m : tensor<2x1x1xf32>
  %r = loom.rsqrt %s : tensor<2x1x1xf32>
  %b = loom.broadcast %r, dims = [0, 1, 2] : tensor<2x1x1xf32> -> tensor<2x4x8xf32>
  %y = loom.mul %b, %x : tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// Not an RMS norm: the mean of another value's squares.
// CHECK-LABEL: func.func @not_rms_norm(
// CHECK-NOT: loom.rms_norm
// CHECK: loom.reduce_mean
func.func @not_rms_norm(%x: tensor<2x8xf32>, %z: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %eps = loom.constant dense<9.99999974E-6> : tensor<2x1xf32>
  %p = loom.mul %z, %z : tensor<2x8xf32>
  %m = loom.reduce_mean %p, dims = [1] keepdims : tensor<2x8xf32> -> tensor<2x1xf32>
  %s = loom.add %m, %eps : tensor<2x1xf32>
  %r = loom.rsqrt %s : tensor<2x1xf32>
  %b = loom.broadcast %r, dims = [0, 1] : tensor<2x1xf32> -> tensor<2x8xf32>
  %y = loom.mul %x, %b : tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

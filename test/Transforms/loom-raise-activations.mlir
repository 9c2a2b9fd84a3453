// RUN: loom-opt %s --split-input-file --loom-raise-activations | FileCheck %s
//
// GELU and SiLU as exporters write them become loom.gelu / loom.silu; the
// formula's other ops are erased. Whether the raised ops compute what the
// formulas do is checked end to end: test_hf_models.py trains GPT-2
// (tanh GELU), BERT and GPT-NeoX (erf GELU), LLaMA and Qwen2 (SiLU)
// through this pass against PyTorch's losses.

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

// RUN: loom-opt %s -split-input-file -verify-diagnostics

// The strided form of loomrt.gemm needs all three of its attributes.
func.func @gemm_partial_strides(%a: memref<2x3xf32>, %b: memref<3x4xf32>, %c: memref<2x4xf32>) {
  // expected-error @+1 {{'loomrt.gemm' op needs all of batch_outer, a_strides and b_strides, or none}}
  loomrt.gemm ins(%a, %b : memref<2x3xf32>, memref<3x4xf32>) outs(%c : memref<2x4xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, batch_outer = 1 : i64, k = 3 : i64, m = 2 : i64, n = 4 : i64, origin = "x", trans_a = false, trans_b = false}
  return
}

// -----

// A leading dimension shorter than the rows it separates would overlap them.
func.func @gemm_short_leading_dim(%a: memref<2x3xf32>, %b: memref<3x4xf32>, %c: memref<2x4xf32>) {
  // expected-error @+1 {{'loomrt.gemm' op a_strides: negative stride, or a leading dimension below the row length 3}}
  loomrt.gemm ins(%a, %b : memref<2x3xf32>, memref<3x4xf32>) outs(%c : memref<2x4xf32>) {a_batched = false, a_strides = array<i64: 0, 0, 2>, b_batched = false, b_strides = array<i64: 0, 0, 4>, batch = 1 : i64, batch_outer = 1 : i64, k = 3 : i64, m = 2 : i64, n = 4 : i64, origin = "x", trans_a = false, trans_b = false}
  return
}

// -----

// The output must hold batch x m x n elements.
func.func @gemm_output_size(%a: memref<2x3xf32>, %b: memref<3x4xf32>, %c: memref<2x5xf32>) {
  // expected-error @+1 {{'loomrt.gemm' op output 'memref<2x5xf32>' does not hold 1 x 2 x 4 elements}}
  loomrt.gemm ins(%a, %b : memref<2x3xf32>, memref<3x4xf32>) outs(%c : memref<2x5xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 2 : i64, n = 4 : i64, origin = "x", trans_a = false, trans_b = false}
  return
}

// -----

// bf16 products write a bf16 output (f32 accumulation inside the call).
func.func @gemm_mixed_types(%a: memref<2x3xbf16>, %b: memref<3x4xbf16>, %c: memref<2x4xf32>) {
  // expected-error @+1 {{'loomrt.gemm' op operands and output must share one element type, got 'memref<2x3xbf16>' and 'memref<2x4xf32>'}}
  loomrt.gemm ins(%a, %b : memref<2x3xbf16>, memref<3x4xbf16>) outs(%c : memref<2x4xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 2 : i64, n = 4 : i64, origin = "x", trans_a = false, trans_b = false}
  return
}

// -----

// A bias epilogue is for one plain matrix.
func.func @gemm_bias_batched(%a: memref<2x2x3xf32>, %b: memref<3x4xf32>, %bias: memref<4xf32>, %c: memref<2x2x4xf32>) {
  // expected-error @+1 {{'loomrt.gemm' op takes a bias only in the plain form of one matrix (batch 1, no strides)}}
  loomrt.gemm ins(%a, %b : memref<2x2x3xf32>, memref<3x4xf32>) bias(%bias : memref<4xf32>) outs(%c : memref<2x2x4xf32>) {a_batched = true, b_batched = false, batch = 2 : i64, k = 3 : i64, m = 2 : i64, n = 4 : i64, origin = "x", trans_a = false, trans_b = false}
  return
}

// -----

// The bias holds one value per output column.
func.func @gemm_bias_size(%a: memref<2x3xf32>, %b: memref<3x4xf32>, %bias: memref<2xf32>, %c: memref<2x4xf32>) {
  // expected-error @+1 {{'loomrt.gemm' op bias 'memref<2xf32>' must hold n = 4 elements of the output's type 'f32'}}
  loomrt.gemm ins(%a, %b : memref<2x3xf32>, memref<3x4xf32>) bias(%bias : memref<2xf32>) outs(%c : memref<2x4xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 2 : i64, n = 4 : i64, origin = "x", trans_a = false, trans_b = false}
  return
}

// -----

// A bf16 output's bias is bf16 (one rounding of the f32 sum).
func.func @gemm_bias_type(%a: memref<2x3xbf16>, %b: memref<3x4xbf16>, %bias: memref<4xf32>, %c: memref<2x4xbf16>) {
  // expected-error @+1 {{'loomrt.gemm' op bias 'memref<4xf32>' must hold n = 4 elements of the output's type 'bf16'}}
  loomrt.gemm ins(%a, %b : memref<2x3xbf16>, memref<3x4xbf16>) bias(%bias : memref<4xf32>) outs(%c : memref<2x4xbf16>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 2 : i64, n = 4 : i64, origin = "x", trans_a = false, trans_b = false}
  return
}

// -----

// The GELU epilogue needs the bias epilogue (GELU_AUX_BIAS).
func.func @gemm_gelu_without_bias(%a: memref<2x3xf32>, %b: memref<3x4xf32>, %pre: memref<2x4xf32>, %c: memref<2x4xf32>) {
  // expected-error @+1 {{'loomrt.gemm' op takes a gelu_input only with a bias (cuBLASLt's GELU_AUX_BIAS epilogue)}}
  loomrt.gemm ins(%a, %b : memref<2x3xf32>, memref<3x4xf32>) outs(%c : memref<2x4xf32>) gelu_input(%pre : memref<2x4xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 2 : i64, n = 4 : i64, origin = "x", trans_a = false, trans_b = false}
  return
}

// -----

// The pre-activation is another buffer of the activation's type.
func.func @gemm_gelu_input_type(%a: memref<2x3xf32>, %b: memref<3x4xf32>, %bias: memref<4xf32>, %pre: memref<8xf32>, %c: memref<2x4xf32>) {
  // expected-error @+1 {{'loomrt.gemm' op gelu_input must be another buffer of the output's type 'memref<2x4xf32>'}}
  loomrt.gemm ins(%a, %b : memref<2x3xf32>, memref<3x4xf32>) bias(%bias : memref<4xf32>) outs(%c : memref<2x4xf32>) gelu_input(%pre : memref<8xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 2 : i64, n = 4 : i64, origin = "x", trans_a = false, trans_b = false}
  return
}

// -----

// The GELU gradient epilogue (cuBLASLt's DGELU) takes no bias.
func.func @gemm_dgelu_with_bias(%a: memref<2x3xf32>, %b: memref<3x4xf32>, %bias: memref<4xf32>, %pre: memref<2x4xf32>, %c: memref<2x4xf32>) {
  // expected-error @+1 {{'loomrt.gemm' op takes a dgelu_input only in the plain form of one f32 matrix without a bias (cuBLASLt's DGELU epilogue)}}
  loomrt.gemm ins(%a, %b : memref<2x3xf32>, memref<3x4xf32>) bias(%bias : memref<4xf32>) outs(%c : memref<2x4xf32>) dgelu_input(%pre : memref<2x4xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 2 : i64, n = 4 : i64, origin = "x", trans_a = false, trans_b = false}
  return
}

// -----

// GELU's input is read after the product is written: another buffer.
func.func @gemm_dgelu_in_place(%a: memref<2x3xf32>, %b: memref<3x4xf32>, %c: memref<2x4xf32>) {
  // expected-error @+1 {{'loomrt.gemm' op dgelu_input must be another buffer of the output's type 'memref<2x4xf32>'}}
  loomrt.gemm ins(%a, %b : memref<2x3xf32>, memref<3x4xf32>) outs(%c : memref<2x4xf32>) dgelu_input(%c : memref<2x4xf32>) {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 2 : i64, n = 4 : i64, origin = "x", trans_a = false, trans_b = false}
  return
}

// -----

// Accumulating (beta = 1) is for one f32 matrix: not a batch.
func.func @gemm_accumulate_batched(%a: memref<2x2x3xf32>, %b: memref<2x3x4xf32>, %c: memref<2x2x4xf32>) {
  // expected-error @+1 {{'loomrt.gemm' op accumulates only in the plain form of one f32 matrix without another epilogue (beta = 1)}}
  loomrt.gemm ins(%a, %b : memref<2x2x3xf32>, memref<2x3x4xf32>) outs(%c : memref<2x2x4xf32>) accumulate {a_batched = true, b_batched = true, batch = 2 : i64, k = 3 : i64, m = 2 : i64, n = 4 : i64, origin = "x", trans_a = false, trans_b = false}
  return
}

// -----

// Nor with a bias epilogue.
func.func @gemm_accumulate_with_bias(%a: memref<2x3xf32>, %b: memref<3x4xf32>, %bias: memref<4xf32>, %c: memref<2x4xf32>) {
  // expected-error @+1 {{'loomrt.gemm' op accumulates only in the plain form of one f32 matrix without another epilogue (beta = 1)}}
  loomrt.gemm ins(%a, %b : memref<2x3xf32>, memref<3x4xf32>) bias(%bias : memref<4xf32>) outs(%c : memref<2x4xf32>) accumulate {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 2 : i64, n = 4 : i64, origin = "x", trans_a = false, trans_b = false}
  return
}

// -----

// Nor bf16 (the CPU backend rounds a bf16 product once, as it writes it).
func.func @gemm_accumulate_bf16(%a: memref<2x3xbf16>, %b: memref<3x4xbf16>, %c: memref<2x4xbf16>) {
  // expected-error @+1 {{'loomrt.gemm' op accumulates only in the plain form of one f32 matrix without another epilogue (beta = 1)}}
  loomrt.gemm ins(%a, %b : memref<2x3xbf16>, memref<3x4xbf16>) outs(%c : memref<2x4xbf16>) accumulate {a_batched = false, b_batched = false, batch = 1 : i64, k = 3 : i64, m = 2 : i64, n = 4 : i64, origin = "x", trans_a = false, trans_b = false}
  return
}

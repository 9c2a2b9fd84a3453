// RUN: loom-opt %s -split-input-file -verify-diagnostics

// The cotangent and the input gradient have the input's shape.
func.func @cotangent_shape(%x: memref<4x8xf32>, %g: memref<8x4xf32>, %dx: memref<4x8xf32>, %ds: memref<8xf32>, %db: memref<8xf32>) {
  // expected-error @+1 {{'loomrt.norm_grad' op needs the input's shape for 'memref<8x4xf32>', the input is 'memref<4x8xf32>'}}
  loomrt.norm_grad 1 ins(%x, %g : memref<4x8xf32>, memref<8x4xf32>) outs(%dx, %ds, %db : memref<4x8xf32>, memref<8xf32>, memref<8xf32>) {epsilon = 1.0e-05 : f64, origin = "x", rms = false}
  return
}

// -----

// The scale and the parameter gradients have the normalised dimensions'.
func.func @param_shape(%x: memref<4x8xf32>, %g: memref<4x8xf32>, %s: memref<8xf32>, %dx: memref<4x8xf32>, %ds: memref<32xf32>, %db: memref<8xf32>) {
  // expected-error @+1 {{'loomrt.norm_grad' op needs the normalised dimensions' shape for 'memref<32xf32>', the input is 'memref<4x8xf32>' normalised from axis 1}}
  loomrt.norm_grad 1 ins(%x, %g : memref<4x8xf32>, memref<4x8xf32>) scale(%s : memref<8xf32>) outs(%dx, %ds, %db : memref<4x8xf32>, memref<32xf32>, memref<8xf32>) {epsilon = 1.0e-05 : f64, origin = "x", rms = false}
  return
}

// -----

func.func @axis(%x: memref<4x8xf32>, %g: memref<4x8xf32>, %dx: memref<4x8xf32>, %ds: memref<8xf32>, %db: memref<8xf32>) {
  // expected-error @+1 {{'loomrt.norm_grad' op axis 3 is out of range for rank 2}}
  loomrt.norm_grad 3 ins(%x, %g : memref<4x8xf32>, memref<4x8xf32>) outs(%dx, %ds, %db : memref<4x8xf32>, memref<8xf32>, memref<8xf32>) {epsilon = 1.0e-05 : f64, origin = "x", rms = false}
  return
}

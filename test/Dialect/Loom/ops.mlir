// RUN: loom-opt %s | loom-opt | FileCheck %s
// RUN: loom-opt %s -mlir-print-op-generic | loom-opt | FileCheck %s

// Round trip of every loom op in its custom syntax, directly and through the
// generic form.

//===----------------------------------------------------------------------===//
// Elementwise arithmetic
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @binary_f32
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x3xf32>)
func.func @binary_f32(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK: %[[ADD:.*]] = loom.add %[[A]], %[[B]] : tensor<2x3xf32>
  %0 = loom.add %a, %b : tensor<2x3xf32>
  // CHECK: %[[SUB:.*]] = loom.sub %[[ADD]], %[[B]] : tensor<2x3xf32>
  %1 = loom.sub %0, %b : tensor<2x3xf32>
  // CHECK: %[[MUL:.*]] = loom.mul %[[SUB]], %[[A]] : tensor<2x3xf32>
  %2 = loom.mul %1, %a : tensor<2x3xf32>
  // CHECK: %[[DIV:.*]] = loom.div %[[MUL]], %[[B]] : tensor<2x3xf32>
  %3 = loom.div %2, %b : tensor<2x3xf32>
  // CHECK: %[[POW:.*]] = loom.pow %[[DIV]], %[[A]] : tensor<2x3xf32>
  %4 = loom.pow %3, %a : tensor<2x3xf32>
  // CHECK: %[[MAX:.*]] = loom.max %[[POW]], %[[B]] : tensor<2x3xf32>
  %5 = loom.max %4, %b : tensor<2x3xf32>
  // CHECK: %[[MIN:.*]] = loom.min %[[MAX]], %[[A]] : tensor<2x3xf32>
  %6 = loom.min %5, %a : tensor<2x3xf32>
  // CHECK: return %[[MIN]] : tensor<2x3xf32>
  return %6 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @binary_int
func.func @binary_int(%a: tensor<4xi64>, %b: tensor<4xi32>) -> (tensor<4xi64>, tensor<4xi32>) {
  // CHECK: loom.add %{{.*}}, %{{.*}} : tensor<4xi64>
  %0 = loom.add %a, %a : tensor<4xi64>
  // CHECK: loom.div %{{.*}}, %{{.*}} : tensor<4xi64>
  %1 = loom.div %0, %a : tensor<4xi64>
  // CHECK: loom.sub %{{.*}}, %{{.*}} : tensor<4xi32>
  %2 = loom.sub %b, %b : tensor<4xi32>
  // CHECK: loom.max %{{.*}}, %{{.*}} : tensor<4xi32>
  %3 = loom.max %2, %b : tensor<4xi32>
  return %1, %3 : tensor<4xi64>, tensor<4xi32>
}

// CHECK-LABEL: func.func @binary_half
func.func @binary_half(%a: tensor<8xbf16>, %b: tensor<8xf16>) -> (tensor<8xbf16>, tensor<8xf16>) {
  // CHECK: loom.mul %{{.*}}, %{{.*}} : tensor<8xbf16>
  %0 = loom.mul %a, %a : tensor<8xbf16>
  // CHECK: loom.min %{{.*}}, %{{.*}} : tensor<8xf16>
  %1 = loom.min %b, %b : tensor<8xf16>
  return %0, %1 : tensor<8xbf16>, tensor<8xf16>
}

// Operands and result may be refined differently; the types are then printed
// in functional form.
// CHECK-LABEL: func.func @binary_mixed_refinement
func.func @binary_mixed_refinement(%a: tensor<?x4xf32>, %b: tensor<8x4xf32>) -> tensor<?x4xf32> {
  // CHECK: loom.add %{{.*}}, %{{.*}} : (tensor<?x4xf32>, tensor<8x4xf32>) -> tensor<?x4xf32>
  %0 = "loom.add"(%a, %b) : (tensor<?x4xf32>, tensor<8x4xf32>) -> tensor<?x4xf32>
  // CHECK: loom.sub %{{.*}}, %{{.*}} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<8x4xf32>
  %1 = loom.sub %0, %a : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<8x4xf32>
  // CHECK: loom.neg %{{.*}} : (tensor<8x4xf32>) -> tensor<?x4xf32>
  %2 = loom.neg %1 : (tensor<8x4xf32>) -> tensor<?x4xf32>
  return %2 : tensor<?x4xf32>
}

// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<2x3xf32>, %i: tensor<5xi32>, %h: tensor<4xf16>) -> (tensor<2x3xf32>, tensor<5xi32>, tensor<4xf16>) {
  // CHECK: loom.neg %{{.*}} : tensor<2x3xf32>
  %0 = loom.neg %x : tensor<2x3xf32>
  // CHECK: loom.abs %{{.*}} : tensor<2x3xf32>
  %1 = loom.abs %0 : tensor<2x3xf32>
  // CHECK: loom.exp %{{.*}} : tensor<2x3xf32>
  %2 = loom.exp %1 : tensor<2x3xf32>
  // CHECK: loom.log %{{.*}} : tensor<2x3xf32>
  %3 = loom.log %2 : tensor<2x3xf32>
  // CHECK: loom.sqrt %{{.*}} : tensor<2x3xf32>
  %4 = loom.sqrt %3 : tensor<2x3xf32>
  // CHECK: loom.rsqrt %{{.*}} : tensor<2x3xf32>
  %5 = loom.rsqrt %4 : tensor<2x3xf32>
  // CHECK: loom.tanh %{{.*}} : tensor<2x3xf32>
  %6 = loom.tanh %5 : tensor<2x3xf32>
  // CHECK: loom.cos %{{.*}} : tensor<2x3xf32>
  %c = loom.cos %6 : tensor<2x3xf32>
  // CHECK: loom.sin %{{.*}} : tensor<2x3xf32>
  %s = loom.sin %c : tensor<2x3xf32>
  // CHECK: loom.sigmoid %{{.*}} : tensor<2x3xf32>
  %7 = loom.sigmoid %s : tensor<2x3xf32>
  // CHECK: loom.erf %{{.*}} : tensor<2x3xf32>
  %e = loom.erf %7 : tensor<2x3xf32>
  // CHECK: loom.erf_inv %{{.*}} : tensor<2x3xf32>
  %8 = loom.erf_inv %e : tensor<2x3xf32>
  // CHECK: loom.neg %{{.*}} : tensor<5xi32>
  %9 = loom.neg %i : tensor<5xi32>
  // CHECK: loom.abs %{{.*}} : tensor<5xi32>
  %10 = loom.abs %9 : tensor<5xi32>
  // CHECK: loom.exp %{{.*}} : tensor<4xf16>
  %11 = loom.exp %h : tensor<4xf16>
  return %8, %10, %11 : tensor<2x3xf32>, tensor<5xi32>, tensor<4xf16>
}

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @activations
func.func @activations(%x: tensor<8x16xbf16>) -> tensor<8x16xbf16> {
  // CHECK: loom.relu %{{.*}} : tensor<8x16xbf16>
  %0 = loom.relu %x : tensor<8x16xbf16>
  // CHECK: loom.silu %{{.*}} : tensor<8x16xbf16>
  %1 = loom.silu %0 : tensor<8x16xbf16>
  // The default approximation (none) is not printed.
  // CHECK: loom.gelu %{{.*}} : tensor<8x16xbf16>
  %2 = loom.gelu %1 : tensor<8x16xbf16>
  // CHECK: loom.gelu %{{.*}} : tensor<8x16xbf16>
  %3 = loom.gelu %2 approximate = none : tensor<8x16xbf16>
  // CHECK: loom.gelu %{{.*}} approximate = tanh : tensor<8x16xbf16>
  %4 = loom.gelu %3 approximate = tanh : tensor<8x16xbf16>
  // CHECK: loom.gelu %{{.*}} approximate = tanh : (tensor<8x16xbf16>) -> tensor<?x16xbf16>
  %5 = loom.gelu %4 approximate = tanh : (tensor<8x16xbf16>) -> tensor<?x16xbf16>
  // CHECK: loom.relu %{{.*}} : (tensor<?x16xbf16>) -> tensor<8x16xbf16>
  %6 = loom.relu %5 : (tensor<?x16xbf16>) -> tensor<8x16xbf16>
  return %6 : tensor<8x16xbf16>
}

//===----------------------------------------------------------------------===//
// Comparison, selection, conversion
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @compare
func.func @compare(%a: tensor<4xi64>, %b: tensor<4xi64>, %f: tensor<2x2xf32>, %p: tensor<3xi1>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<3xi1>) {
  // CHECK: loom.compare eq, %{{.*}}, %{{.*}} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  %0 = loom.compare eq, %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  // CHECK: loom.compare ne, %{{.*}}, %{{.*}} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  %1 = loom.compare ne, %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  // CHECK: loom.compare lt, %{{.*}}, %{{.*}} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  %2 = loom.compare lt, %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  // CHECK: loom.compare le, %{{.*}}, %{{.*}} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xi1>
  %3 = loom.compare le, %f, %f : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xi1>
  // CHECK: loom.compare gt, %{{.*}}, %{{.*}} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xi1>
  %4 = loom.compare gt, %f, %f : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xi1>
  // CHECK: loom.compare ge, %{{.*}}, %{{.*}} : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  %5 = loom.compare ge, %p, %p : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  return %0, %1, %2, %3, %4, %5 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<3xi1>
}

// CHECK-LABEL: func.func @select
// CHECK-SAME: (%[[P:.*]]: tensor<4xi1>, %[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>, %[[Q:.*]]: tensor<?xi1>, %[[I:.*]]: tensor<?xi32>)
func.func @select(%p: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf32>, %q: tensor<?xi1>, %i: tensor<?xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
  // CHECK: loom.select %[[P]], %[[A]], %[[B]] : tensor<4xi1>, tensor<4xf32>
  %0 = loom.select %p, %a, %b : tensor<4xi1>, tensor<4xf32>
  // CHECK: loom.select %[[Q]], %[[I]], %[[I]] : tensor<?xi1>, (tensor<?xi32>, tensor<?xi32>) -> tensor<4xi32>
  %1 = loom.select %q, %i, %i : tensor<?xi1>, (tensor<?xi32>, tensor<?xi32>) -> tensor<4xi32>
  return %0, %1 : tensor<4xf32>, tensor<4xi32>
}

// CHECK-LABEL: func.func @convert
func.func @convert(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // CHECK: %[[BF:.*]] = loom.convert %{{.*}} : tensor<2x4xf32> -> tensor<2x4xbf16>
  %0 = loom.convert %x : tensor<2x4xf32> -> tensor<2x4xbf16>
  // CHECK: %[[H:.*]] = loom.convert %[[BF]] : tensor<2x4xbf16> -> tensor<2x4xf16>
  %1 = loom.convert %0 : tensor<2x4xbf16> -> tensor<2x4xf16>
  // CHECK: %[[I64:.*]] = loom.convert %[[H]] : tensor<2x4xf16> -> tensor<2x4xi64>
  %2 = loom.convert %1 : tensor<2x4xf16> -> tensor<2x4xi64>
  // CHECK: %[[I32:.*]] = loom.convert %[[I64]] : tensor<2x4xi64> -> tensor<2x4xi32>
  %3 = loom.convert %2 : tensor<2x4xi64> -> tensor<2x4xi32>
  // CHECK: %[[I1:.*]] = loom.convert %[[I32]] : tensor<2x4xi32> -> tensor<2x4xi1>
  %4 = loom.convert %3 : tensor<2x4xi32> -> tensor<2x4xi1>
  // CHECK: %[[DYN:.*]] = loom.convert %[[I1]] : tensor<2x4xi1> -> tensor<?x4xf32>
  %5 = loom.convert %4 : tensor<2x4xi1> -> tensor<?x4xf32>
  // CHECK: loom.convert %[[DYN]] : tensor<?x4xf32> -> tensor<2x4xf32>
  %6 = loom.convert %5 : tensor<?x4xf32> -> tensor<2x4xf32>
  return %6 : tensor<2x4xf32>
}

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @softmax
func.func @softmax(%x: tensor<8x10xf32>) -> (tensor<8x10xf32>, tensor<8x10xf32>) {
  // CHECK: loom.softmax %{{.*}}, axis = 1 : tensor<8x10xf32>
  %0 = loom.softmax %x, axis = 1 : tensor<8x10xf32>
  // CHECK: loom.log_softmax %{{.*}}, axis = 0 : tensor<8x10xf32>
  %1 = loom.log_softmax %x, axis = 0 : tensor<8x10xf32>
  return %0, %1 : tensor<8x10xf32>, tensor<8x10xf32>
}

// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x64xf32>, %[[G:.*]]: tensor<64xf32>, %[[B:.*]]: tensor<64xf32>, %[[G2:.*]]: tensor<8x64xf32>)
func.func @layer_norm(%x: tensor<2x8x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>, %g2: tensor<8x64xf32>) -> (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>) {
  // epsilon is an f64 attribute, so 1e-5 keeps its value.
  // CHECK: loom.layer_norm %[[X]] scale %[[G]] bias %[[B]] axis = 2 epsilon = 1.000000e-05 : (tensor<2x8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
  %0 = loom.layer_norm %x scale %g bias %b axis = 2 epsilon = 1.0e-05
      : (tensor<2x8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
  // CHECK: loom.layer_norm %[[X]] scale %[[G]] axis = 2 epsilon = 2.500000e-01 : (tensor<2x8x64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
  %1 = loom.layer_norm %x scale %g axis = 2 epsilon = 0.25
      : (tensor<2x8x64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
  // CHECK: loom.layer_norm %[[X]] bias %[[B]] axis = 2 epsilon = 0.000000e+00 : (tensor<2x8x64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
  %2 = loom.layer_norm %x bias %b axis = 2 epsilon = 0.0
      : (tensor<2x8x64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
  // CHECK: loom.layer_norm %[[X]] scale %[[G2]] axis = 1 epsilon = 5.000000e-01 : (tensor<2x8x64xf32>, tensor<8x64xf32>) -> tensor<2x8x64xf32>
  %3 = loom.layer_norm %x scale %g2 axis = 1 epsilon = 0.5
      : (tensor<2x8x64xf32>, tensor<8x64xf32>) -> tensor<2x8x64xf32>
  return %0, %1, %2, %3 : tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>
}

// CHECK-LABEL: func.func @layer_norm_no_affine
func.func @layer_norm_no_affine(%x: tensor<4x16xf16>) -> tensor<4x16xf16> {
  // CHECK: loom.layer_norm %{{.*}} axis = 0 epsilon = 1.000000e+00 : (tensor<4x16xf16>) -> tensor<4x16xf16>
  %0 = loom.layer_norm %x axis = 0 epsilon = 1.0 : (tensor<4x16xf16>) -> tensor<4x16xf16>
  return %0 : tensor<4x16xf16>
}

// CHECK-LABEL: func.func @rms_norm
// CHECK-SAME: (%[[X:.*]]: tensor<8x64xbf16>, %[[G:.*]]: tensor<64xbf16>)
func.func @rms_norm(%x: tensor<8x64xbf16>, %g: tensor<64xbf16>) -> (tensor<8x64xbf16>, tensor<8x64xbf16>) {
  // CHECK: loom.rms_norm %[[X]] scale %[[G]] axis = 1 epsilon = 9.9999999999999995E-7 : (tensor<8x64xbf16>, tensor<64xbf16>) -> tensor<8x64xbf16>
  %0 = loom.rms_norm %x scale %g axis = 1 epsilon = 1.0e-06
      : (tensor<8x64xbf16>, tensor<64xbf16>) -> tensor<8x64xbf16>
  // 2^-10 is exact in f32.
  // CHECK: loom.rms_norm %[[X]] axis = 0 epsilon = 9.765625E-4 : (tensor<8x64xbf16>) -> tensor<8x64xbf16>
  %1 = loom.rms_norm %x axis = 0 epsilon = 9.765625e-04 : (tensor<8x64xbf16>) -> tensor<8x64xbf16>
  return %0, %1 : tensor<8x64xbf16>, tensor<8x64xbf16>
}

// CHECK-LABEL: func.func @norm_grad
// CHECK-SAME: (%[[X:.*]]: tensor<8x64xf32>, %[[D:.*]]: tensor<8x64xf32>, %[[G:.*]]: tensor<64xf32>)
func.func @norm_grad(%x: tensor<8x64xf32>, %d: tensor<8x64xf32>, %g: tensor<64xf32>) -> (tensor<8x64xf32>, tensor<512xf32>) {
  // CHECK: loom.norm_grad %[[X]], %[[D]] scale %[[G]] axis = 1 epsilon = 9.9999999999999995E-7 rms : (tensor<8x64xf32>, tensor<8x64xf32>, tensor<64xf32>) -> (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>)
  %0:3 = loom.norm_grad %x, %d scale %g axis = 1 epsilon = 1.0e-06 rms
      : (tensor<8x64xf32>, tensor<8x64xf32>, tensor<64xf32>)
        -> (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>)
  // CHECK: loom.norm_grad %[[X]], %[[D]] axis = 0 epsilon = 9.765625E-4 : (tensor<8x64xf32>, tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>)
  %1:3 = loom.norm_grad %x, %d axis = 0 epsilon = 9.765625e-04
      : (tensor<8x64xf32>, tensor<8x64xf32>)
        -> (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>)
  %2 = loom.reshape %1#1 : tensor<8x64xf32> -> tensor<512xf32>
  return %0#0, %2 : tensor<8x64xf32>, tensor<512xf32>
}

//===----------------------------------------------------------------------===//
// Contraction
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @dot_general
func.func @dot_general(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>, %q: tensor<2x4x8x16xbf16>, %k: tensor<2x4x8x16xbf16>, %i: tensor<3x5xi32>) -> (tensor<8x4xf32>, tensor<2x4x8x8xbf16>, tensor<5x5xi32>) {
  // CHECK: loom.dot_general %{{.*}}, %{{.*}}, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %0 = loom.dot_general %a, %b, contracting_dims = [1] x [0]
      : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  // CHECK: loom.dot_general %{{.*}}, %{{.*}}, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : (tensor<2x4x8x16xbf16>, tensor<2x4x8x16xbf16>) -> tensor<2x4x8x8xbf16>
  %1 = loom.dot_general %q, %k, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3]
      : (tensor<2x4x8x16xbf16>, tensor<2x4x8x16xbf16>) -> tensor<2x4x8x8xbf16>
  // Contracting the leading dimension: [3, 5] x [3, 5] -> [5, 5].
  // CHECK: loom.dot_general %{{.*}}, %{{.*}}, contracting_dims = [0] x [0] : (tensor<3x5xi32>, tensor<3x5xi32>) -> tensor<5x5xi32>
  %2 = loom.dot_general %i, %i, contracting_dims = [0] x [0]
      : (tensor<3x5xi32>, tensor<3x5xi32>) -> tensor<5x5xi32>
  return %0, %1, %2 : tensor<8x4xf32>, tensor<2x4x8x8xbf16>, tensor<5x5xi32>
}

// An outer product contracts nothing.
// CHECK-LABEL: func.func @dot_general_outer
func.func @dot_general_outer(%a: tensor<3xf32>, %b: tensor<4xf32>) -> tensor<3x4xf32> {
  // CHECK: loom.dot_general %{{.*}}, %{{.*}}, contracting_dims = [] x [] : (tensor<3xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %0 = loom.dot_general %a, %b, contracting_dims = [] x [] : (tensor<3xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

//===----------------------------------------------------------------------===//
// Shape and data movement
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @reshape
func.func @reshape(%x: tensor<2x3x4xf32>, %d: tensor<?x4xi1>) -> (tensor<6x4xf32>, tensor<?xi1>) {
  // CHECK: loom.reshape %{{.*}} : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %0 = loom.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  // CHECK: loom.reshape %{{.*}} : tensor<?x4xi1> -> tensor<?xi1>
  %1 = loom.reshape %d : tensor<?x4xi1> -> tensor<?xi1>
  return %0, %1 : tensor<6x4xf32>, tensor<?xi1>
}

// CHECK-LABEL: func.func @transpose
func.func @transpose(%x: tensor<2x3xf32>, %y: tensor<2x3x4xi64>) -> (tensor<3x2xf32>, tensor<4x2x3xi64>) {
  // CHECK: loom.transpose %{{.*}}, permutation = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %0 = loom.transpose %x, permutation = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  // CHECK: loom.transpose %{{.*}}, permutation = [2, 0, 1] : tensor<2x3x4xi64> -> tensor<4x2x3xi64>
  %1 = loom.transpose %y, permutation = [2, 0, 1] : tensor<2x3x4xi64> -> tensor<4x2x3xi64>
  return %0, %1 : tensor<3x2xf32>, tensor<4x2x3xi64>
}

// CHECK-LABEL: func.func @broadcast
func.func @broadcast(%b: tensor<4xf32>, %s: tensor<f16>, %o: tensor<1x4xi32>) -> (tensor<8x4xf32>, tensor<2x3xf16>, tensor<5x3x4xi32>) {
  // CHECK: loom.broadcast %{{.*}}, dims = [1] : tensor<4xf32> -> tensor<8x4xf32>
  %0 = loom.broadcast %b, dims = [1] : tensor<4xf32> -> tensor<8x4xf32>
  // CHECK: loom.broadcast %{{.*}}, dims = [] : tensor<f16> -> tensor<2x3xf16>
  %1 = loom.broadcast %s, dims = [] : tensor<f16> -> tensor<2x3xf16>
  // CHECK: loom.broadcast %{{.*}}, dims = [1, 2] : tensor<1x4xi32> -> tensor<5x3x4xi32>
  %2 = loom.broadcast %o, dims = [1, 2] : tensor<1x4xi32> -> tensor<5x3x4xi32>
  return %0, %1, %2 : tensor<8x4xf32>, tensor<2x3xf16>, tensor<5x3x4xi32>
}

// CHECK-LABEL: func.func @slice
func.func @slice(%x: tensor<4x8xf32>) -> tensor<4x2xf32> {
  // Dimension 1: indices 2 and 4 of [2, 6) with step 2.
  // CHECK: loom.slice %{{.*}}, start = [0, 2], limit = [4, 6], strides = [1, 2] : tensor<4x8xf32> -> tensor<4x2xf32>
  %0 = loom.slice %x, start = [0, 2], limit = [4, 6], strides = [1, 2] : tensor<4x8xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// CHECK-LABEL: func.func @concat
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>, %c: tensor<2x1xf32>) -> (tensor<2x9xf32>, tensor<2x3xf32>) {
  // CHECK: loom.concat %{{.*}}, %{{.*}}, %{{.*}} dim = 1 : (tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x1xf32>) -> tensor<2x9xf32>
  %0 = loom.concat %a, %b, %c dim = 1 : (tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x1xf32>) -> tensor<2x9xf32>
  // CHECK: loom.concat %{{.*}} dim = 0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = loom.concat %a dim = 0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1 : tensor<2x9xf32>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @split
func.func @split(%qkv: tensor<2x8x192xf32>) -> (tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x3x192xf32>) {
  // The result types are a bare list: `type($results)` takes no parentheses.
  // CHECK: %[[S:.*]]:3 = loom.split %{{.*}}, dim = 2, sizes = [64, 64, 64] : tensor<2x8x192xf32> -> tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>
  %q, %k, %v = loom.split %qkv, dim = 2, sizes = [64, 64, 64]
      : tensor<2x8x192xf32> -> tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>
  // CHECK: %[[T:.*]]:2 = loom.split %{{.*}}, dim = 1, sizes = [3, 5] : tensor<2x8x192xf32> -> tensor<2x3x192xf32>, tensor<2x5x192xf32>
  %a, %b = loom.split %qkv, dim = 1, sizes = [3, 5]
      : tensor<2x8x192xf32> -> tensor<2x3x192xf32>, tensor<2x5x192xf32>
  // CHECK: return %[[S]]#0, %[[S]]#1, %[[S]]#2, %[[T]]#0
  return %q, %k, %v, %a : tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>, tensor<2x3x192xf32>
}

// CHECK-LABEL: func.func @split_one
func.func @split_one(%x: tensor<6xi32>) -> tensor<6xi32> {
  // CHECK: loom.split %{{.*}}, dim = 0, sizes = [6] : tensor<6xi32> -> tensor<6xi32>
  %0 = loom.split %x, dim = 0, sizes = [6] : tensor<6xi32> -> tensor<6xi32>
  return %0 : tensor<6xi32>
}

// CHECK-LABEL: func.func @gather
func.func @gather(%wte: tensor<50257x768xf32>, %ids: tensor<2x8xi64>, %t: tensor<3x4x5xbf16>, %j: tensor<7xi32>) -> (tensor<2x8x768xf32>, tensor<3x7x5xbf16>) {
  // CHECK: loom.gather %{{.*}}[%{{.*}}], axis = 0 : (tensor<50257x768xf32>, tensor<2x8xi64>) -> tensor<2x8x768xf32>
  %0 = loom.gather %wte[%ids], axis = 0 : (tensor<50257x768xf32>, tensor<2x8xi64>) -> tensor<2x8x768xf32>
  // CHECK: loom.gather %{{.*}}[%{{.*}}], axis = 1 : (tensor<3x4x5xbf16>, tensor<7xi32>) -> tensor<3x7x5xbf16>
  %1 = loom.gather %t[%j], axis = 1 : (tensor<3x4x5xbf16>, tensor<7xi32>) -> tensor<3x7x5xbf16>
  return %0, %1 : tensor<2x8x768xf32>, tensor<3x7x5xbf16>
}

// CHECK-LABEL: func.func @scatter_add
func.func @scatter_add(%wte: tensor<100x16xf32>, %ids: tensor<2x8xi64>, %d: tensor<2x8x16xf32>, %t: tensor<3x4x5xi32>, %j: tensor<7xi32>, %u: tensor<3x7x5xi32>, %v: tensor<?x16xf32>, %w: tensor<2x?x16xf32>) -> (tensor<100x16xf32>, tensor<3x4x5xi32>, tensor<?x16xf32>) {
  // CHECK: loom.scatter_add %{{.*}}[%{{.*}}], %{{.*}}, axis = 0 : (tensor<100x16xf32>, tensor<2x8xi64>, tensor<2x8x16xf32>) -> tensor<100x16xf32>
  %0 = loom.scatter_add %wte[%ids], %d, axis = 0 : (tensor<100x16xf32>, tensor<2x8xi64>, tensor<2x8x16xf32>) -> tensor<100x16xf32>
  // CHECK: loom.scatter_add %{{.*}}[%{{.*}}], %{{.*}}, axis = 1 : (tensor<3x4x5xi32>, tensor<7xi32>, tensor<3x7x5xi32>) -> tensor<3x4x5xi32>
  %1 = loom.scatter_add %t[%j], %u, axis = 1 : (tensor<3x4x5xi32>, tensor<7xi32>, tensor<3x7x5xi32>) -> tensor<3x4x5xi32>
  // `?` sizes are compatible with any size.
  // CHECK: loom.scatter_add %{{.*}}[%{{.*}}], %{{.*}}, axis = 0 : (tensor<?x16xf32>, tensor<2x8xi64>, tensor<2x?x16xf32>) -> tensor<?x16xf32>
  %2 = loom.scatter_add %v[%ids], %w, axis = 0 : (tensor<?x16xf32>, tensor<2x8xi64>, tensor<2x?x16xf32>) -> tensor<?x16xf32>
  return %0, %1, %2 : tensor<100x16xf32>, tensor<3x4x5xi32>, tensor<?x16xf32>
}

// CHECK-LABEL: func.func @iota
func.func @iota() -> (tensor<2x8xi64>, tensor<5xf32>, tensor<3x4xi32>) {
  // CHECK: loom.iota dim = 1 : tensor<2x8xi64>
  %0 = loom.iota dim = 1 : tensor<2x8xi64>
  // CHECK: loom.iota dim = 0 : tensor<5xf32>
  %1 = loom.iota dim = 0 : tensor<5xf32>
  // CHECK: loom.iota dim = 0 : tensor<3x4xi32>
  %2 = loom.iota dim = 0 : tensor<3x4xi32>
  return %0, %1, %2 : tensor<2x8xi64>, tensor<5xf32>, tensor<3x4xi32>
}

// CHECK-LABEL: func.func @constant
func.func @constant() -> (tensor<4xf32>, tensor<2x2xi64>, tensor<3xi1>, tensor<bf16>, tensor<2xf16>, tensor<i32>) {
  // CHECK: loom.constant dense<1.000000e+00> : tensor<4xf32>
  %0 = loom.constant dense<1.0> : tensor<4xf32>
  // CHECK: loom.constant dense<{{\[}}[1, 2], [3, 4]]> : tensor<2x2xi64>
  %1 = loom.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  // CHECK: loom.constant dense<[true, false, true]> : tensor<3xi1>
  %2 = loom.constant dense<[true, false, true]> : tensor<3xi1>
  // CHECK: loom.constant dense<-2.500000e+00> : tensor<bf16>
  %3 = loom.constant dense<-2.5> : tensor<bf16>
  // CHECK: loom.constant dense<[5.000000e-01, -0.000000e+00]> : tensor<2xf16>
  %4 = loom.constant dense<[0.5, -0.0]> : tensor<2xf16>
  // CHECK: loom.constant dense<-7> : tensor<i32>
  %5 = loom.constant dense<-7> : tensor<i32>
  return %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<2x2xi64>, tensor<3xi1>, tensor<bf16>, tensor<2xf16>, tensor<i32>
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<8x16xf32>, %i: tensor<2x3x4xi64>) -> (tensor<8x1xf32>, tensor<8xf32>, tensor<1x1xf32>, tensor<f32>, tensor<3xi64>, tensor<2x1x4xi64>, tensor<2x3x4xi64>) {
  // CHECK: loom.reduce_sum %{{.*}}, dims = [1] keepdims : tensor<8x16xf32> -> tensor<8x1xf32>
  %0 = loom.reduce_sum %x, dims = [1] keepdims : tensor<8x16xf32> -> tensor<8x1xf32>
  // CHECK: loom.reduce_sum %{{.*}}, dims = [1] : tensor<8x16xf32> -> tensor<8xf32>
  %1 = loom.reduce_sum %x, dims = [1] : tensor<8x16xf32> -> tensor<8xf32>
  // CHECK: loom.reduce_mean %{{.*}}, dims = [0, 1] keepdims : tensor<8x16xf32> -> tensor<1x1xf32>
  %2 = loom.reduce_mean %x, dims = [0, 1] keepdims : tensor<8x16xf32> -> tensor<1x1xf32>
  // CHECK: loom.reduce_mean %{{.*}}, dims = [1, 0] : tensor<8x16xf32> -> tensor<f32>
  %3 = loom.reduce_mean %x, dims = [1, 0] : tensor<8x16xf32> -> tensor<f32>
  // CHECK: loom.reduce_max %{{.*}}, dims = [0, 2] : tensor<2x3x4xi64> -> tensor<3xi64>
  %4 = loom.reduce_max %i, dims = [0, 2] : tensor<2x3x4xi64> -> tensor<3xi64>
  // CHECK: loom.reduce_max %{{.*}}, dims = [1] keepdims : tensor<2x3x4xi64> -> tensor<2x1x4xi64>
  %5 = loom.reduce_max %i, dims = [1] keepdims : tensor<2x3x4xi64> -> tensor<2x1x4xi64>
  // CHECK: loom.reduce_sum %{{.*}}, dims = [] : tensor<2x3x4xi64> -> tensor<2x3x4xi64>
  %6 = loom.reduce_sum %i, dims = [] : tensor<2x3x4xi64> -> tensor<2x3x4xi64>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<8x1xf32>, tensor<8xf32>, tensor<1x1xf32>, tensor<f32>, tensor<3xi64>, tensor<2x1x4xi64>, tensor<2x3x4xi64>
}

//===----------------------------------------------------------------------===//
// Loss
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @cross_entropy
func.func @cross_entropy(%logits: tensor<16x10xf32>, %labels: tensor<16xi64>, %l3: tensor<2x8x10xbf16>, %y3: tensor<2x8xi32>) -> (tensor<f32>, tensor<f32>, tensor<16xf32>, tensor<f32>, tensor<2x8xbf16>, tensor<bf16>) {
  // The default reduction (mean) is not printed.
  // CHECK: loom.cross_entropy %{{.*}}, %{{.*}} : (tensor<16x10xf32>, tensor<16xi64>) -> tensor<f32>
  %0 = loom.cross_entropy %logits, %labels : (tensor<16x10xf32>, tensor<16xi64>) -> tensor<f32>
  // CHECK: loom.cross_entropy %{{.*}}, %{{.*}} ignore_index = -100 : (tensor<16x10xf32>, tensor<16xi64>) -> tensor<f32>
  %1 = loom.cross_entropy %logits, %labels reduction = mean ignore_index = -100
      : (tensor<16x10xf32>, tensor<16xi64>) -> tensor<f32>
  // CHECK: loom.cross_entropy %{{.*}}, %{{.*}} reduction = none : (tensor<16x10xf32>, tensor<16xi64>) -> tensor<16xf32>
  %2 = loom.cross_entropy %logits, %labels reduction = none : (tensor<16x10xf32>, tensor<16xi64>) -> tensor<16xf32>
  // CHECK: loom.cross_entropy %{{.*}}, %{{.*}} reduction = sum ignore_index = 0 : (tensor<16x10xf32>, tensor<16xi64>) -> tensor<f32>
  %3 = loom.cross_entropy %logits, %labels reduction = sum ignore_index = 0 : (tensor<16x10xf32>, tensor<16xi64>) -> tensor<f32>
  // CHECK: loom.cross_entropy %{{.*}}, %{{.*}} reduction = none ignore_index = 3 : (tensor<2x8x10xbf16>, tensor<2x8xi32>) -> tensor<2x8xbf16>
  %4 = loom.cross_entropy %l3, %y3 reduction = none ignore_index = 3 : (tensor<2x8x10xbf16>, tensor<2x8xi32>) -> tensor<2x8xbf16>
  // CHECK: loom.cross_entropy %{{.*}}, %{{.*}} reduction = sum : (tensor<2x8x10xbf16>, tensor<2x8xi32>) -> tensor<bf16>
  %5 = loom.cross_entropy %l3, %y3 reduction = sum : (tensor<2x8x10xbf16>, tensor<2x8xi32>) -> tensor<bf16>
  return %0, %1, %2, %3, %4, %5 : tensor<f32>, tensor<f32>, tensor<16xf32>, tensor<f32>, tensor<2x8xbf16>, tensor<bf16>
}

//===----------------------------------------------------------------------===//
// Function argument and result attributes
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @attributes
// CHECK-SAME: (%{{.*}}: tensor<2x8xi64> {loom.name = "input_ids"}, %{{.*}}: tensor<100x16xf32> {loom.name = "wte", loom.param}, %{{.*}}: tensor<16xf32> {loom.param})
// CHECK-SAME: -> (tensor<2x8x16xf32> {loom.name = "hidden"})
func.func @attributes(%ids: tensor<2x8xi64> {loom.name = "input_ids"},
                      %wte: tensor<100x16xf32> {loom.param, loom.name = "wte"},
                      %b: tensor<16xf32> {loom.param})
    -> (tensor<2x8x16xf32> {loom.name = "hidden"}) {
  // CHECK: loom.gather
  %0 = loom.gather %wte[%ids], axis = 0 : (tensor<100x16xf32>, tensor<2x8xi64>) -> tensor<2x8x16xf32>
  // CHECK: loom.broadcast %{{.*}}, dims = [2] : tensor<16xf32> -> tensor<2x8x16xf32>
  %1 = loom.broadcast %b, dims = [2] : tensor<16xf32> -> tensor<2x8x16xf32>
  // CHECK: loom.add
  %2 = loom.add %0, %1 : tensor<2x8x16xf32>
  return %2 : tensor<2x8x16xf32>
}

// The training attributes of docs/training.md.
// CHECK-LABEL: func.func @training_attributes
// CHECK-SAME: (%{{.*}}: tensor<4xf32> {loom.param}, %{{.*}}: tensor<f32> {loom.name = "step", loom.state})
// CHECK-SAME: -> (tensor<4xf32> {loom.grad_of = 0 : i64}, tensor<f32> {loom.updates = 1 : i64})
func.func @training_attributes(%w: tensor<4xf32> {loom.param},
                               %step: tensor<f32> {loom.state, loom.name = "step"})
    -> (tensor<4xf32> {loom.grad_of = 0 : i64}, tensor<f32> {loom.updates = 1 : i64}) {
  return %w, %step : tensor<4xf32>, tensor<f32>
}

// #loom.shard prints groups and padded only when they are not 1 and 0; its
// fields may be written in any order.
// CHECK-LABEL: func.func @shard_attributes
// CHECK-SAME: (%{{.*}}: tensor<4x16xf32> {loom.param, loom.shard = #loom.shard<dim = 1, parts = 2>},
// CHECK-SAME: %{{.*}}: tensor<16x8xf32> {loom.param, loom.shard = #loom.shard<dim = 1, parts = 2, groups = 3>},
// CHECK-SAME: %{{.*}}: tensor<13x8xf32> {loom.param, loom.shard = #loom.shard<dim = 0, parts = 4, padded = 52>})
func.func @shard_attributes(
    %a: tensor<4x16xf32> {loom.param, loom.shard = #loom.shard<dim = 1, parts = 2, groups = 1, padded = 0>},
    %b: tensor<16x8xf32> {loom.param, loom.shard = #loom.shard<groups = 3, parts = 2, dim = 1>},
    %c: tensor<13x8xf32> {loom.param, loom.shard = #loom.shard<dim = 0, parts = 4, padded = 52>}) {
  return
}

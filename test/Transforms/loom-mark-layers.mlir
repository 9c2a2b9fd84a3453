// RUN: loom-opt %s -split-input-file -verify-diagnostics --loom-mark-layers | FileCheck %s

// Two residual layers after an embedding: each layer is one period of the
// repeated segments; the embedding and the loss are outside.
// CHECK-LABEL: func.func @main
// CHECK: %[[E:.*]] = loom.dot_general %arg0, %arg1, {{[^{]*$}}
// CHECK: loom.dot_general %[[E]], %arg2, {{.*}}{loom.layer = 0 : i64}
// CHECK-NEXT: loom.tanh {{.*}}{loom.layer = 0 : i64}
// CHECK-NEXT: %[[Y0:.*]] = loom.add {{.*}}{loom.layer = 0 : i64}
// CHECK-NEXT: loom.dot_general %[[Y0]], %arg3, {{.*}}{loom.layer = 1 : i64}
// CHECK-NEXT: loom.tanh {{.*}}{loom.layer = 1 : i64}
// CHECK-NEXT: loom.add {{.*}}{loom.layer = 1 : i64}
// CHECK-NEXT: loom.reduce_mean {{[^{]*$}}
func.func @main(%x: tensor<2x4xf32> {loom.name = "x"},
                %we: tensor<4x4xf32> {loom.param, loom.name = "we"},
                %w0: tensor<4x4xf32> {loom.param, loom.name = "w0"},
                %w1: tensor<4x4xf32> {loom.param, loom.name = "w1"}) -> tensor<f32> {
  %e = loom.dot_general %x, %we, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %h0 = loom.dot_general %e, %w0, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %g0 = loom.tanh %h0 : tensor<2x4xf32>
  %y0 = loom.add %e, %g0 : tensor<2x4xf32>
  %h1 = loom.dot_general %y0, %w1, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %g1 = loom.tanh %h1 : tensor<2x4xf32>
  %y1 = loom.add %y0, %g1 : tensor<2x4xf32>
  %l = loom.reduce_mean %y1, dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// One layer: nothing repeats, so the segments between the first and the
// last are the layer. A mask computed from the data alone (%m) is not an
// activation and starts no segment.
// CHECK-LABEL: func.func @main
// CHECK: %[[E:.*]] = loom.dot_general %arg0, %arg2, {{[^{]*$}}
// CHECK: loom.compare {{.*}}{loom.layer = 0 : i64}
// CHECK: loom.dot_general %[[E]], %arg3, {{.*}}{loom.layer = 0 : i64}
// CHECK: loom.add {{.*}}{loom.layer = 0 : i64}
// CHECK-NEXT: loom.reduce_mean {{[^{]*$}}
func.func @main(%x: tensor<2x4xf32> {loom.name = "x"},
                %keep: tensor<2x4xf32> {loom.name = "keep"},
                %we: tensor<4x4xf32> {loom.param, loom.name = "we"},
                %w0: tensor<4x4xf32> {loom.param, loom.name = "w0"}) -> tensor<f32> {
  %e = loom.dot_general %x, %we, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %zero = loom.constant dense<0.0> : tensor<2x4xf32>
  %m = loom.compare gt, %keep, %zero : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xi1>
  %h0 = loom.dot_general %e, %w0, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %s0 = loom.select %m, %h0, %zero : tensor<2x4xi1>, tensor<2x4xf32>
  %y0 = loom.add %e, %s0 : tensor<2x4xf32>
  %l = loom.reduce_mean %y0, dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// expected-error @below {{loom-mark-layers: no function @main with a body (function=main)}}
module {
  func.func private @main(tensor<2xf32>) -> tensor<f32>
}

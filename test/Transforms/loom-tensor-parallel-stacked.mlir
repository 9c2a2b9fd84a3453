// loom-tensor-parallel on parameters stacked on a leading layer axis, as
// Flax's nn.scan keeps them and the importer's unrolled loop reads them: each
// layer is a loom.slice of one index along dimension 0 (then a reshape that
// drops it, for kernels). The kernels and biases are cut a dimension further
// on than one layer's would be, every layer alike, and each layer gets its
// own f and g. With loom-run --ranks 2 every rank's loss and gradients
// equal the single-device ones (the gradients of the stacked parameters
// sliced as their loom.shard says).
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: loom-opt %s --loom-shape-inference -o %t/fwd.mlir
// RUN: loom-opt %t/fwd.mlir --loom-tensor-parallel=tp=2 -o %t/tp2-fwd.mlir
// RUN: FileCheck %s < %t/tp2-fwd.mlir
//
// RUN: %loompy %S/Inputs/tensor_parallel.py make %t %t/fwd.mlir --classes 8
// RUN: loom-opt %t/fwd.mlir --loom-autodiff -o %t/ref.mlir
// RUN: loom-run %t/ref.mlir --entry main_grad --weights %t/weights.safetensors \
// RUN:   --input x=%t/x.npy --input labels=%t/labels.npy --output-dir %t/ref
// RUN: loom-opt %t/tp2-fwd.mlir --loom-autodiff -o %t/tp2.mlir
// RUN: %loompy %S/Inputs/tensor_parallel.py slice %t %t/tp2-fwd.mlir
// RUN: loom-run %t/tp2.mlir --entry main_grad --ranks 2 --weights %t/weights.safetensors \
// RUN:   @%t/2.rsp --input x=%t/x.npy --input labels=%t/labels.npy --output-dir %t/tp2
// RUN: %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/tp2-fwd.mlir \
// RUN:   %t/tp2/rank0 %t/tp2/rank1 | FileCheck %s --check-prefix=EQ

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[W1:[a-z0-9]+]]: tensor<2x8x8xf32> {loom.name = "w1", loom.param, loom.shard = #loom.shard<dim = 2, parts = 2>}
// CHECK-SAME: %[[B1:[a-z0-9]+]]: tensor<2x8xf32> {loom.name = "b1", loom.param, loom.shard = #loom.shard<dim = 1, parts = 2>}
// CHECK-SAME: %[[W2:[a-z0-9]+]]: tensor<2x8x8xf32> {loom.name = "w2", loom.param, loom.shard = #loom.shard<dim = 1, parts = 2>}
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x8xf32> {loom.name = "x"}
// CHECK: %[[S0:.*]] = loom.slice %[[W1]], start = [0, 0, 0], limit = [1, 8, 8], strides = [1, 1, 1] : tensor<2x8x8xf32> -> tensor<1x8x8xf32>
// CHECK: %[[K0:.*]] = loom.reshape %[[S0]] : tensor<1x8x8xf32> -> tensor<8x8xf32>
// CHECK: %[[C0:.*]] = loom.slice %[[B1]], start = [0, 0], limit = [1, 8], strides = [1, 1] : tensor<2x8xf32> -> tensor<1x8xf32>
// CHECK: %[[D0:.*]] = loom.slice %[[W2]], start = [0, 0, 0], limit = [1, 8, 8], strides = [1, 1, 1] : tensor<2x8x8xf32> -> tensor<1x8x8xf32>
// CHECK: %[[E0:.*]] = loom.reshape %[[D0]] : tensor<1x8x8xf32> -> tensor<8x8xf32>
// CHECK: %[[F0:.*]] = loom.tp_copy %[[X]]
// CHECK: loom.dot_general %[[F0]], %[[K0]]
// CHECK: loom.broadcast %[[C0]], dims = [0, 1] : tensor<1x8xf32> -> tensor<4x8xf32>
// CHECK: %[[P0:.*]] = loom.dot_general %{{.*}}, %[[E0]]
// CHECK: shard.all_reduce %[[P0]]
// CHECK: loom.slice %[[W1]], start = [1, 0, 0], limit = [2, 8, 8]
// CHECK: loom.slice %[[B1]], start = [1, 0], limit = [2, 8]
// CHECK: %[[D1:.*]] = loom.slice %[[W2]], start = [1, 0, 0], limit = [2, 8, 8]
// CHECK: %[[E1:.*]] = loom.reshape %[[D1]]
// CHECK: loom.tp_copy
// CHECK: %[[P1:.*]] = loom.dot_general %{{.*}}, %[[E1]]
// CHECK: shard.all_reduce %[[P1]]
// CHECK-NOT: shard.all_reduce
// CHECK: return

// EQ: equivalent: yes (tolerance 1e-05, 2 ranks)

module {
  func.func @main(%w1: tensor<2x8x16xf32> {loom.name = "w1", loom.param},
                  %b1: tensor<2x16xf32> {loom.name = "b1", loom.param},
                  %w2: tensor<2x16x8xf32> {loom.name = "w2", loom.param},
                  %x: tensor<4x8xf32> {loom.name = "x"},
                  %labels: tensor<4xi32> {loom.name = "labels"}) -> tensor<f32> {
    %zero = loom.constant dense<0.000000e+00> : tensor<4x16xf32>
    %n = loom.constant dense<4.000000e+00> : tensor<f32>
    %s0 = loom.slice %w1, start = [0, 0, 0], limit = [1, 8, 16], strides = [1, 1, 1] : tensor<2x8x16xf32> -> tensor<1x8x16xf32>
    %k0 = loom.reshape %s0 : tensor<1x8x16xf32> -> tensor<8x16xf32>
    %c0 = loom.slice %b1, start = [0, 0], limit = [1, 16], strides = [1, 1] : tensor<2x16xf32> -> tensor<1x16xf32>
    %d0 = loom.slice %w2, start = [0, 0, 0], limit = [1, 16, 8], strides = [1, 1, 1] : tensor<2x16x8xf32> -> tensor<1x16x8xf32>
    %e0 = loom.reshape %d0 : tensor<1x16x8xf32> -> tensor<16x8xf32>
    %h0 = loom.dot_general %x, %k0, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    %cb0 = loom.broadcast %c0, dims = [0, 1] : tensor<1x16xf32> -> tensor<4x16xf32>
    %a0 = loom.add %h0, %cb0 : tensor<4x16xf32>
    %r0 = loom.max %a0, %zero : tensor<4x16xf32>
    %o0 = loom.dot_general %r0, %e0, contracting_dims = [1] x [0] : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
    %y0 = loom.add %x, %o0 : tensor<4x8xf32>
    %s1 = loom.slice %w1, start = [1, 0, 0], limit = [2, 8, 16], strides = [1, 1, 1] : tensor<2x8x16xf32> -> tensor<1x8x16xf32>
    %k1 = loom.reshape %s1 : tensor<1x8x16xf32> -> tensor<8x16xf32>
    %c1 = loom.slice %b1, start = [1, 0], limit = [2, 16], strides = [1, 1] : tensor<2x16xf32> -> tensor<1x16xf32>
    %d1 = loom.slice %w2, start = [1, 0, 0], limit = [2, 16, 8], strides = [1, 1, 1] : tensor<2x16x8xf32> -> tensor<1x16x8xf32>
    %e1 = loom.reshape %d1 : tensor<1x16x8xf32> -> tensor<16x8xf32>
    %h1 = loom.dot_general %y0, %k1, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    %cb1 = loom.broadcast %c1, dims = [0, 1] : tensor<1x16xf32> -> tensor<4x16xf32>
    %a1 = loom.add %h1, %cb1 : tensor<4x16xf32>
    %r1 = loom.max %a1, %zero : tensor<4x16xf32>
    %o1 = loom.dot_general %r1, %e1, contracting_dims = [1] x [0] : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
    %y1 = loom.add %y0, %o1 : tensor<4x8xf32>
    %l = loom.cross_entropy %y1, %labels reduction = none : (tensor<4x8xf32>, tensor<4xi32>) -> tensor<4xf32>
    %t = loom.reduce_sum %l, dims = [0] : tensor<4xf32> -> tensor<f32>
    %m = loom.div %t, %n : tensor<f32>
    return %m : tensor<f32>
  }
}

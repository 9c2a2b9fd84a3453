// RUN: loom-opt %s -split-input-file -loom-data-parallel=dp=2 | FileCheck %s
// RUN: loom-opt %s -split-input-file -loom-data-parallel="dp=2 bucket-bytes=300" | FileCheck %s --check-prefix=B300
// RUN: loom-opt %s -split-input-file -loom-data-parallel="dp=4 bucket-bytes=0" | FileCheck %s --check-prefix=B0
// RUN: loom-opt %s -split-input-file -loom-data-parallel=dp=1 | FileCheck %s --check-prefix=DP1
// The pass is deterministic.
// RUN: loom-opt %s -split-input-file -loom-data-parallel="dp=2 bucket-bytes=300" > %t.1
// RUN: loom-opt %s -split-input-file -loom-data-parallel="dp=2 bucket-bytes=300" > %t.2
// RUN: cmp %t.1 %t.2

// A two-layer MLP's @main_grad as loom-autodiff makes it: the forward ops,
// then the backward ops producing the gradients of fc2.bias (16 bytes),
// fc2.weight (256), fc1.bias (64) and fc1.weight (512) in that order, and
// the zero gradient (8 bytes) of a parameter that does not reach the loss,
// a constant made last.

// The device mesh is added at the top of the module, dp ranks on axis 0.
// CHECK:       shard.grid @mesh(shape = 2x1x1)
// CHECK-LABEL: func.func @main_grad
// The constant gradient is ready first: it moves to the top.
// CHECK-NEXT:  %[[GU:.*]] = loom.constant {loom.phase = "backward"} dense<0.000000e+00> : tensor<2xf32>
// CHECK-NEXT:  loom.dot_general %arg0, %arg2
// The loss is averaged right after it is defined.
// CHECK:       %[[LOSS:.*]] = loom.cross_entropy
// CHECK-NEXT:  %[[LSUM:.*]] = shard.all_reduce %[[LOSS]] on @mesh grid_axes = [0] {loom.phase = "backward"} : tensor<f32> -> tensor<f32>
// CHECK-NEXT:  %[[HALF:.*]] = loom.constant {loom.phase = "backward"} dense<5.000000e-01> : tensor<f32>
// With 25 MiB buckets every gradient shares one bucket, in ready order,
// reduced after the last one (fc1.weight) is defined.
// CHECK-NEXT:  %[[DL:.*]] = loom.softmax
// CHECK-NEXT:  %[[GB2:.*]] = loom.reduce_sum %[[DL]]
// CHECK-NEXT:  %[[GW2:.*]] = loom.dot_general {{.*}} -> tensor<16x4xf32>
// CHECK-NEXT:  %[[DA:.*]] = loom.dot_general
// CHECK-NEXT:  %[[GB1:.*]] = loom.reduce_sum %[[DA]]
// CHECK-NEXT:  %[[GW1:.*]] = loom.dot_general {{.*}} -> tensor<8x16xf32>
// CHECK-NEXT:  %[[FW2:.*]] = loom.reshape %[[GW2]] {loom.phase = "backward"} : tensor<16x4xf32> -> tensor<64xf32>
// CHECK-NEXT:  %[[FW1:.*]] = loom.reshape %[[GW1]] {loom.phase = "backward"} : tensor<8x16xf32> -> tensor<128xf32>
// CHECK-NEXT:  %[[CAT:.*]] = loom.concat %[[GU]], %[[GB2]], %[[FW2]], %[[GB1]], %[[FW1]] dim = 0 {loom.phase = "backward"}
// CHECK-SAME:    -> tensor<214xf32>
// CHECK-NEXT:  %[[SUM:.*]] = shard.all_reduce %[[CAT]] on @mesh grid_axes = [0] {loom.phase = "backward"} : tensor<214xf32> -> tensor<214xf32>
// CHECK-NEXT:  %[[K:.*]] = loom.constant {loom.phase = "backward"} dense<5.000000e-01> : tensor<214xf32>
// What is computed from the all-reduces waits for the return, in order, so
// that the lowering waits for each transfer only there.
// CHECK-NEXT:  %[[LAVG:.*]] = loom.mul %[[LSUM]], %[[HALF]] {loom.phase = "backward"} : tensor<f32>
// CHECK-NEXT:  %[[AVG:.*]] = loom.mul %[[SUM]], %[[K]] {loom.phase = "backward"} : tensor<214xf32>
// CHECK-NEXT:  %[[P:.*]]:5 = loom.split %[[AVG]], dim = 0, sizes = [2, 4, 64, 16, 128] {loom.phase = "backward"}
// CHECK-NEXT:  %[[AW2:.*]] = loom.reshape %[[P]]#2 {loom.phase = "backward"} : tensor<64xf32> -> tensor<16x4xf32>
// CHECK-NEXT:  %[[AW1:.*]] = loom.reshape %[[P]]#4 {loom.phase = "backward"} : tensor<128xf32> -> tensor<8x16xf32>
// CHECK-NEXT:  return %[[LAVG]], %[[AW1]], %[[P]]#3, %[[AW2]], %[[P]]#1, %[[P]]#0 :

// bucket-bytes=300: {unused, fc2.bias, fc2.weight} (280 bytes) is reduced
// as soon as fc2.weight's gradient exists, before the fc1 backward ops;
// fc1.bias (64) and fc1.weight (512, over the limit) get a bucket each.
// B300:       shard.grid @mesh(shape = 2x1x1)
// B300-LABEL: func.func @main_grad
// B300:       %[[GU:.*]] = loom.constant {{.*}} dense<0.000000e+00> : tensor<2xf32>
// B300:       shard.all_reduce {{.*}} : tensor<f32> -> tensor<f32>
// B300:       %[[GB2:.*]] = loom.reduce_sum {{.*}} -> tensor<4xf32>
// B300-NEXT:  %[[GW2:.*]] = loom.dot_general {{.*}} -> tensor<16x4xf32>
// B300-NEXT:  %[[FW2:.*]] = loom.reshape %[[GW2]] {{.*}} -> tensor<64xf32>
// B300-NEXT:  %[[CAT:.*]] = loom.concat %[[GU]], %[[GB2]], %[[FW2]] dim = 0 {{.*}} -> tensor<70xf32>
// B300-NEXT:  %[[S0:.*]] = shard.all_reduce %[[CAT]] on @mesh grid_axes = [0] {{.*}} : tensor<70xf32> -> tensor<70xf32>
// B300-NEXT:  %[[K0:.*]] = loom.constant {{.*}} dense<5.000000e-01> : tensor<70xf32>
// The fc1 backward ops come after the first bucket's all-reduce.
// B300-NEXT:  %[[DA:.*]] = loom.dot_general {{.*}} -> tensor<4x16xf32>
// B300-NEXT:  %[[GB1:.*]] = loom.reduce_sum %[[DA]]
// B300-NEXT:  %[[S1:.*]] = shard.all_reduce %[[GB1]] on @mesh grid_axes = [0] {{.*}} : tensor<16xf32> -> tensor<16xf32>
// B300-NEXT:  %[[K1:.*]] = loom.constant {{.*}} dense<5.000000e-01> : tensor<16xf32>
// B300-NEXT:  %[[GW1:.*]] = loom.dot_general {{.*}} -> tensor<8x16xf32>
// B300-NEXT:  %[[S2:.*]] = shard.all_reduce %[[GW1]] on @mesh grid_axes = [0] {{.*}} : tensor<8x16xf32> -> tensor<8x16xf32>
// B300-NEXT:  %[[K2:.*]] = loom.constant {{.*}} dense<5.000000e-01> : tensor<8x16xf32>
// Then the scales, the split and the reshape, in order, before the return.
// B300-NEXT:  %[[LAVG:.*]] = loom.mul {{.*}} : tensor<f32>
// B300-NEXT:  %[[A0:.*]] = loom.mul %[[S0]], %[[K0]]
// B300-NEXT:  %[[P:.*]]:3 = loom.split %[[A0]], dim = 0, sizes = [2, 4, 64]
// B300-NEXT:  %[[AW2:.*]] = loom.reshape %[[P]]#2 {{.*}} : tensor<64xf32> -> tensor<16x4xf32>
// B300-NEXT:  %[[AB1:.*]] = loom.mul %[[S1]], %[[K1]]
// B300-NEXT:  %[[AW1:.*]] = loom.mul %[[S2]], %[[K2]]
// B300-NEXT:  return %[[LAVG]], %[[AW1]], %[[AB1]], %[[AW2]], %[[P]]#1, %[[P]]#0 :

// bucket-bytes=0: one bucket per gradient, each right after its gradient;
// the constant's is first, even before the loss. 1/D = 0.25, each scale
// right before the return.
// B0:       shard.grid @mesh(shape = 4x1x1)
// B0-LABEL: func.func @main_grad
// B0-NEXT:  %[[GU:.*]] = loom.constant {{.*}} dense<0.000000e+00> : tensor<2xf32>
// B0-NEXT:  shard.all_reduce %[[GU]] on @mesh grid_axes = [0] {{.*}} : tensor<2xf32> -> tensor<2xf32>
// B0-NEXT:  loom.constant {{.*}} dense<2.500000e-01> : tensor<2xf32>
// B0-NOT:   loom.mul
// B0:       %[[LOSS:.*]] = loom.cross_entropy
// B0-NEXT:  shard.all_reduce %[[LOSS]]
// B0-NEXT:  loom.constant {{.*}} dense<2.500000e-01> : tensor<f32>
// B0-NEXT:  loom.softmax
// B0-NEXT:  %[[GB2:.*]] = loom.reduce_sum
// B0-NEXT:  shard.all_reduce %[[GB2]] {{.*}} : tensor<4xf32> -> tensor<4xf32>
// B0-NEXT:  loom.constant
// B0-NEXT:  %[[GW2:.*]] = loom.dot_general
// B0-NEXT:  shard.all_reduce %[[GW2]] {{.*}} : tensor<16x4xf32> -> tensor<16x4xf32>
// B0-NOT:   loom.concat
// B0-NOT:   loom.split
// B0-COUNT-2: shard.all_reduce
// B0-NOT:   shard.all_reduce
// The six scales (loss and five gradients) come last.
// B0-COUNT-6: loom.mul %all_reduce
// B0-NEXT:  return

// dp=1: nothing changes.
// DP1-NOT:   shard.grid
// DP1-LABEL: func.func @main_grad
// DP1-NOT:   shard.all_reduce
// DP1:       %[[GU:.*]] = loom.constant {loom.phase = "backward"} dense<0.000000e+00> : tensor<2xf32>
// DP1-NEXT:  return %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %[[GU]] :

func.func @main_grad(%x: tensor<4x8xf32> {loom.name = "x"},
                     %labels: tensor<4xi64> {loom.name = "labels"},
                     %w1: tensor<8x16xf32> {loom.param, loom.name = "fc1.weight"},
                     %b1: tensor<16xf32> {loom.param, loom.name = "fc1.bias"},
                     %w2: tensor<16x4xf32> {loom.param, loom.name = "fc2.weight"},
                     %b2: tensor<4xf32> {loom.param, loom.name = "fc2.bias"},
                     %u: tensor<2xf32> {loom.param, loom.name = "unused"})
    -> (tensor<f32> {loom.name = "loss"},
        tensor<8x16xf32> {loom.name = "grad.fc1.weight", loom.grad_of = 2 : i64},
        tensor<16xf32> {loom.name = "grad.fc1.bias", loom.grad_of = 3 : i64},
        tensor<16x4xf32> {loom.name = "grad.fc2.weight", loom.grad_of = 4 : i64},
        tensor<4xf32> {loom.name = "grad.fc2.bias", loom.grad_of = 5 : i64},
        tensor<2xf32> {loom.name = "grad.unused", loom.grad_of = 6 : i64}) {
  // Forward.
  %h = loom.dot_general %x, %w1, contracting_dims = [1] x [0]
      : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %bb1 = loom.broadcast %b1, dims = [1] : tensor<16xf32> -> tensor<4x16xf32>
  %h1 = loom.add %h, %bb1 : tensor<4x16xf32>
  %a = loom.tanh %h1 : tensor<4x16xf32>
  %o = loom.dot_general %a, %w2, contracting_dims = [1] x [0]
      : (tensor<4x16xf32>, tensor<16x4xf32>) -> tensor<4x4xf32>
  %bb2 = loom.broadcast %b2, dims = [1] : tensor<4xf32> -> tensor<4x4xf32>
  %logits = loom.add %o, %bb2 : tensor<4x4xf32>
  %loss = loom.cross_entropy %logits, %labels reduction = mean
      : (tensor<4x4xf32>, tensor<4xi64>) -> tensor<f32>
  // Backward (schematic): fc2.bias, fc2.weight, fc1.bias, fc1.weight.
  %dlogits = loom.softmax %logits, axis = 1 {loom.phase = "backward"} : tensor<4x4xf32>
  %gb2 = loom.reduce_sum %dlogits, dims = [0] {loom.phase = "backward"}
      : tensor<4x4xf32> -> tensor<4xf32>
  %gw2 = loom.dot_general %a, %dlogits, contracting_dims = [0] x [0] {loom.phase = "backward"}
      : (tensor<4x16xf32>, tensor<4x4xf32>) -> tensor<16x4xf32>
  %da = loom.dot_general %dlogits, %w2, contracting_dims = [1] x [1] {loom.phase = "backward"}
      : (tensor<4x4xf32>, tensor<16x4xf32>) -> tensor<4x16xf32>
  %gb1 = loom.reduce_sum %da, dims = [0] {loom.phase = "backward"}
      : tensor<4x16xf32> -> tensor<16xf32>
  %gw1 = loom.dot_general %x, %da, contracting_dims = [0] x [0] {loom.phase = "backward"}
      : (tensor<4x8xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  // The zero gradient of a parameter that does not reach the loss, made
  // last as loom-autodiff does.
  %gu = loom.constant {loom.phase = "backward"} dense<0.0> : tensor<2xf32>
  return %loss, %gw1, %gb1, %gw2, %gb2, %gu
      : tensor<f32>, tensor<8x16xf32>, tensor<16xf32>, tensor<16x4xf32>, tensor<4xf32>, tensor<2xf32>
}

// -----

// An existing mesh gets its dp axis (here: a tensor-parallel one, 1x1x2,
// becomes 2x1x2); no second grid.
// CHECK:       shard.grid @mesh(shape = 2x1x2)
// CHECK-NOT:   shard.grid
// CHECK-LABEL: func.func @mesh_grad
// CHECK:       shard.all_reduce %arg1 on @mesh grid_axes = [0]
shard.grid @mesh(shape = 1x1x2)

func.func @mesh_grad(%a: tensor<3xf32> {loom.param}, %x: tensor<3xf32>)
    -> (tensor<f32>, tensor<3xf32> {loom.grad_of = 0 : i64}) {
  %p = loom.mul %a, %x : tensor<3xf32>
  %l = loom.reduce_sum %p, dims = [0] : tensor<3xf32> -> tensor<f32>
  return %l, %x : tensor<f32>, tensor<3xf32>
}

// -----

// A gradient that is an argument is ready first: it is reduced at the
// top, in its own shape when alone in its bucket.
// CHECK-LABEL: func.func @argument_grad
// CHECK-NEXT:  %[[S:.*]] = shard.all_reduce %arg1 on @mesh grid_axes = [0] {{.*}} : tensor<3xf32> -> tensor<3xf32>
// CHECK-NEXT:  %[[K:.*]] = loom.constant {{.*}} dense<5.000000e-01> : tensor<3xf32>
// CHECK-NEXT:  loom.mul %arg0, %arg1
// CHECK-NEXT:  %[[L:.*]] = loom.reduce_sum
// CHECK-NEXT:  %[[SL:.*]] = shard.all_reduce %[[L]] on @mesh grid_axes = [0]
// CHECK-NEXT:  %[[KL:.*]] = loom.constant
// The scales come last, the loss's first (as they were made).
// CHECK-NEXT:  %[[AL:.*]] = loom.mul %[[SL]], %[[KL]]
// CHECK-NEXT:  %[[A:.*]] = loom.mul %[[S]], %[[K]]
// CHECK-NEXT:  return %[[AL]], %[[A]] :
func.func @argument_grad(%a: tensor<3xf32> {loom.param}, %x: tensor<3xf32>)
    -> (tensor<f32>, tensor<3xf32> {loom.grad_of = 0 : i64}) {
  %p = loom.mul %a, %x : tensor<3xf32>
  %l = loom.reduce_sum %p, dims = [0] : tensor<3xf32> -> tensor<f32>
  return %l, %x : tensor<f32>, tensor<3xf32>
}

// -----

// One value returned as two gradients is reduced once.
// CHECK-LABEL: func.func @twice_grad
// CHECK-NEXT:  %[[S:.*]] = shard.all_reduce %arg2 on @mesh grid_axes = [0] {{.*}} : tensor<3xf32> -> tensor<3xf32>
// CHECK-NEXT:  %[[K:.*]] = loom.constant {{.*}} dense<5.000000e-01> : tensor<3xf32>
// CHECK-NOT:   shard.all_reduce %arg2
// CHECK:       %[[A:.*]] = loom.mul %[[S]], %[[K]]
// CHECK:       return %{{.*}}, %[[A]], %[[A]] :
func.func @twice_grad(%a: tensor<3xf32> {loom.param}, %b: tensor<3xf32> {loom.param},
                      %x: tensor<3xf32>)
    -> (tensor<f32>, tensor<3xf32> {loom.grad_of = 0 : i64},
        tensor<3xf32> {loom.grad_of = 1 : i64}) {
  %p = loom.mul %a, %x : tensor<3xf32>
  %l = loom.reduce_sum %p, dims = [0] : tensor<3xf32> -> tensor<f32>
  return %l, %x, %x : tensor<f32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// A bucket holds one element type: the f32 and the f16 gradient, both
// ready at the top, are reduced apart, each in its own shape.
// CHECK-LABEL: func.func @types_grad
// CHECK-NEXT:  %[[SX:.*]] = shard.all_reduce %arg2 on @mesh grid_axes = [0] {{.*}} : tensor<3xf32> -> tensor<3xf32>
// CHECK-NEXT:  %[[KX:.*]] = loom.constant {{.*}} dense<5.000000e-01> : tensor<3xf32>
// CHECK-NEXT:  %[[SY:.*]] = shard.all_reduce %arg3 on @mesh grid_axes = [0] {{.*}} : tensor<2xf16> -> tensor<2xf16>
// CHECK-NEXT:  %[[KY:.*]] = loom.constant {{.*}} dense<5.000000e-01> : tensor<2xf16>
// CHECK-NOT:   loom.concat
// CHECK:       %[[AX:.*]] = loom.mul %[[SX]], %[[KX]]
// CHECK-NEXT:  %[[AY:.*]] = loom.mul %[[SY]], %[[KY]]
// CHECK-NOT:   loom.concat
// CHECK:       return %{{.*}}, %[[AX]], %[[AY]] :
func.func @types_grad(%a: tensor<3xf32> {loom.param}, %c: tensor<2xf16> {loom.param},
                      %x: tensor<3xf32>, %y: tensor<2xf16>)
    -> (tensor<f32>, tensor<3xf32> {loom.grad_of = 0 : i64},
        tensor<2xf16> {loom.grad_of = 1 : i64}) {
  %p = loom.mul %a, %x : tensor<3xf32>
  %l = loom.reduce_sum %p, dims = [0] : tensor<3xf32> -> tensor<f32>
  return %l, %x, %y : tensor<f32>, tensor<3xf32>, tensor<2xf16>
}

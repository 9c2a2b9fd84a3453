// RUN: loom-opt %s -loom-optimizer="function=b_grad" | FileCheck %s
// RUN: not loom-opt %s -loom-optimizer 2>&1 | FileCheck %s --check-prefix=SEVERAL

// RUN: not loom-opt %s -loom-optimizer="function=helper" 2>&1 | FileCheck %s --check-prefix=SUFFIX
// RUN: echo 'func.func @main() { return }' | not loom-opt -loom-optimizer 2>&1 | FileCheck %s --check-prefix=NONE

// SEVERAL: error: loom-optimizer: several functions named '*_grad' (@a_grad, @b_grad); choose one with function=
// SUFFIX: error: loom-optimizer: the name of @helper does not end in '_grad', so the step function cannot be named
// NONE: error: loom-optimizer: no function named '*_grad' (run loom-autodiff first, or name the function with function=)

// Only the named function gets a step function. An argument without
// loom.name gets loom.name = "argN", N its index in @b_grad; a loom.param
// argument without a gradient is frozen: it stays with the data arguments.
// CHECK-NOT: @a_step
// CHECK-LABEL: func.func @b_step(
// CHECK-SAME: %{{.*}}: tensor<2xf32> {loom.name = "arg1", loom.param},
// CHECK-SAME: %{{.*}}: tensor<f32> {loom.name = "step", loom.state},
// CHECK-SAME: %{{.*}}: tensor<3xf32> {loom.name = "frozen", loom.param})
// CHECK-SAME: -> (tensor<f32> {loom.name = "loss"},
// CHECK-SAME: tensor<2xf32> {loom.name = "arg1", loom.updates = 0 : i64},
// CHECK-SAME: tensor<f32> {loom.name = "step", loom.updates = 1 : i64})
// CHECK-NOT: @a_step

func.func @a_grad(%v: tensor<2xf32> {loom.param})
    -> (tensor<f32> {loom.name = "loss"}, tensor<2xf32> {loom.grad_of = 0 : i64}) {
  %0 = loom.reduce_sum %v, dims = [0] : tensor<2xf32> -> tensor<f32>
  return %0, %v : tensor<f32>, tensor<2xf32>
}

func.func @b_grad(%frozen: tensor<3xf32> {loom.param, loom.name = "frozen"},
                  %v: tensor<2xf32> {loom.param})
    -> (tensor<f32> {loom.name = "loss"}, tensor<2xf32> {loom.grad_of = 1 : i64}) {
  %0 = loom.reduce_sum %v, dims = [0] : tensor<2xf32> -> tensor<f32>
  return %0, %v : tensor<f32>, tensor<2xf32>
}

func.func @helper(%v: tensor<2xf32> {loom.param})
    -> (tensor<f32> {loom.name = "loss"}, tensor<2xf32> {loom.grad_of = 0 : i64}) {
  %0 = loom.reduce_sum %v, dims = [0] : tensor<2xf32> -> tensor<f32>
  return %0, %v : tensor<f32>, tensor<2xf32>
}

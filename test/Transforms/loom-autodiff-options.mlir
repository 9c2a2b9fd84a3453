// RUN: loom-opt %s -loom-autodiff="function=model loss=total wrt=x,arg2" | FileCheck %s

// function= picks @model, loss= its second result; wrt= adds the data
// argument x (by loom.name) and argument #2 (by index) to the parameter w.
// Gradients come in argument order; an argument without loom.name is
// called argN.

// CHECK-LABEL: func.func @model_grad(
// CHECK-SAME:      -> (tensor<f32> {loom.name = "loss"},
// CHECK-SAME:          tensor<3xf32> {loom.grad_of = 0 : i64, loom.name = "grad.x"},
// CHECK-SAME:          tensor<3xf32> {loom.grad_of = 1 : i64, loom.name = "grad.w"},
// CHECK-SAME:          tensor<3xf32> {loom.grad_of = 2 : i64, loom.name = "grad.arg2"})
// CHECK-NOT:     loom.exp
// CHECK:         return
// CHECK-NOT:     func.func @other_grad
func.func @model(%x: tensor<3xf32> {loom.name = "x"},
                 %w: tensor<3xf32> {loom.param, loom.name = "w"},
                 %z: tensor<3xf32>)
    -> (tensor<3xf32> {loom.name = "act"}, tensor<f32> {loom.name = "total"}) {
  %0 = loom.mul %x, %w : tensor<3xf32>
  %1 = loom.add %0, %z : tensor<3xf32>
  %act = loom.exp %x : tensor<3xf32>
  %2 = loom.reduce_sum %1, dims = [0] : tensor<3xf32> -> tensor<f32>
  return %act, %2 : tensor<3xf32>, tensor<f32>
}

func.func @other(%w: tensor<f32> {loom.param}) -> tensor<f32> {
  return %w : tensor<f32>
}

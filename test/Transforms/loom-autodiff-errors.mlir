// RUN: loom-opt %s -split-input-file -loom-autodiff -verify-diagnostics
// RUN: not loom-opt %s -split-input-file -loom-autodiff="function=nope" 2>&1 | FileCheck %s --check-prefix=NOFUNC
// RUN: not loom-opt %s -split-input-file -loom-autodiff="loss=nosuch" 2>&1 | FileCheck %s --check-prefix=NOLOSS
// RUN: not loom-opt %s -split-input-file -loom-autodiff="wrt=nosuch" 2>&1 | FileCheck %s --check-prefix=NOWRT
// RUN: not loom-opt %s -split-input-file -loom-autodiff="wrt=ids" 2>&1 | FileCheck %s --check-prefix=WRTINT

// NOFUNC: error: function 'nope' (option function=) is not defined in the module
// NOLOSS: error: @main: no result named 'nosuch' (option loss=); its results are: 'loss'
// NOWRT: error: @main: no argument named 'nosuch' (option wrt=; name an argument by its loom.name or argN)

// The loss must be a rank-0 float tensor.
// expected-error @+1 {{@main: the loss 'per_sample' (result #0) has type 'tensor<4xf32>'; loom-autodiff needs a rank-0 float tensor such as tensor<f32>}}
func.func @main(%w: tensor<4xf32> {loom.param, loom.name = "w"})
    -> (tensor<4xf32> {loom.name = "per_sample"}) {
  return %w : tensor<4xf32>
}

// -----

// expected-error @+1 {{@main: the loss 'loss' (result #0) has type 'tensor<i64>'}}
func.func @main(%w: tensor<4xf32> {loom.param, loom.name = "w"},
                %n: tensor<i64>) -> (tensor<i64> {loom.name = "loss"}) {
  return %n : tensor<i64>
}

// -----

// Several results and no loss= option.
// expected-error @+1 {{@main: 2 results and no loss= option; name the loss result with loss=NAME}}
func.func @main(%w: tensor<f32> {loom.param, loom.name = "w"})
    -> (tensor<f32> {loom.name = "loss"}, tensor<f32> {loom.name = "other"}) {
  return %w, %w : tensor<f32>, tensor<f32>
}

// -----

// The parameter's only way to the loss is through integer indices: the
// convert to i64 is where its gradient stops.
func.func @main(%w: tensor<2xf32> {loom.param, loom.name = "w"},
                %table: tensor<4x3xf32> {loom.name = "table"})
    -> (tensor<f32> {loom.name = "loss"}) {
  // expected-error @+1 {{'loom.convert' op is not differentiable with respect to operand #0 (of type 'tensor<2xf32>'), but the gradient of parameter 'w' (argument #0 of @main) would have to flow through it to reach the loss}}
  %ids = loom.convert %w : tensor<2xf32> -> tensor<2xi64>
  %rows = loom.gather %table[%ids], axis = 0 : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %loss = loom.reduce_sum %rows, dims = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Through a comparison only.
func.func @main(%w: tensor<3xf32> {loom.param, loom.name = "w"},
                %x: tensor<3xf32> {loom.name = "x"}) -> (tensor<f32> {loom.name = "loss"}) {
  // expected-error @+1 {{'loom.compare' op is not differentiable with respect to operand #1 (of type 'tensor<3xf32>'), but the gradient of parameter 'w' (argument #0 of @main) would have to flow through it to reach the loss}}
  %c = loom.compare lt, %x, %w : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  %zero = loom.constant dense<0.0> : tensor<3xf32>
  %y = loom.select %c, %x, %zero : tensor<3xi1>, tensor<3xf32>
  %loss = loom.reduce_sum %y, dims = [0] : tensor<3xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// A parameter that does not reach the loss: zero gradient and a warning.
// expected-warning @+1 {{parameter 'unused' (argument #1 of @main) does not reach the loss; its gradient is zero}}
func.func @main(%w: tensor<3xf32> {loom.param, loom.name = "w"},
                %u: tensor<2xf32> {loom.param, loom.name = "unused"})
    -> (tensor<f32> {loom.name = "loss"}) {
  %loss = loom.reduce_sum %w, dims = [0] : tensor<3xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Calls are not differentiated: the importers inline, and so can `inline`.
func.func private @square(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = loom.mul %x, %x : tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @main(%w: tensor<3xf32> {loom.param, loom.name = "w"})
    -> (tensor<f32> {loom.name = "loss"}) {
  // expected-error @+1 {{'func.call' op calls another function; loom-autodiff differentiates one function body: inline the callee first (--inline)}}
  %0 = func.call @square(%w) : (tensor<3xf32>) -> tensor<3xf32>
  %loss = loom.reduce_sum %0, dims = [0] : tensor<3xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Shapes must be static.
func.func @main(%w: tensor<3xf32> {loom.param, loom.name = "w"},
                %x: tensor<?xf32>) -> (tensor<f32> {loom.name = "loss"}) {
  // expected-error @+1 {{'loom.reduce_sum' op has a value of dynamic shape 'tensor<?xf32>'; run loom-shape-inference before loom-autodiff}}
  %s = loom.reduce_sum %x, dims = [0] : tensor<?xf32> -> tensor<f32>
  %l = loom.reduce_sum %w, dims = [0] : tensor<3xf32> -> tensor<f32>
  %loss = loom.add %s, %l : tensor<f32>
  return %loss : tensor<f32>
}

// -----

// A non-loom op on the gradient path has no VJP.
func.func @main(%w: tensor<3xf32> {loom.param, loom.name = "w"})
    -> (tensor<f32> {loom.name = "loss"}) {
  // expected-error @+1 {{'arith.mulf' op has no vector-Jacobian product (VJPInterface), but the gradient of the loss must flow through it to parameter 'w' (argument #0 of @main)}}
  %0 = arith.mulf %w, %w : tensor<3xf32>
  %loss = loom.reduce_sum %0, dims = [0] : tensor<3xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// wrt= may only name float arguments.
// WRTINT: error: @main: cannot differentiate with respect to argument 'ids' (option wrt=) of type 'tensor<2xi64>': only float tensors have gradients
func.func @main(%w: tensor<3xf32> {loom.param, loom.name = "w"},
                %ids: tensor<2xi64> {loom.name = "ids"}) -> (tensor<f32> {loom.name = "loss"}) {
  %loss = loom.reduce_sum %w, dims = [0] : tensor<3xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// @F_grad must not exist yet.
func.func @main(%w: tensor<f32> {loom.param, loom.name = "w"}) -> (tensor<f32> {loom.name = "loss"}) {
  return %w : tensor<f32>
}
// expected-error @+1 {{@main_grad already exists; it is the name of the gradient function loom-autodiff would add for @main}}
func.func @main_grad(%w: tensor<f32>) -> tensor<f32> {
  return %w : tensor<f32>
}

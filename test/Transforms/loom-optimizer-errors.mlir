// RUN: loom-opt %s -split-input-file -loom-optimizer -verify-diagnostics
//
// Invalid options, reported before the IR is looked at.
// RUN: not loom-opt %s -split-input-file -loom-optimizer="optimizer=adagrad" 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: not loom-opt %s -split-input-file -loom-optimizer="schedule=step" 2>&1 | FileCheck %s --check-prefix=SCHED
// RUN: not loom-opt %s -split-input-file -loom-optimizer="lr=-0.1" 2>&1 | FileCheck %s --check-prefix=LR
// RUN: not loom-opt %s -split-input-file -loom-optimizer="momentum=0.9 dampening=0.1" 2>&1 | FileCheck %s --check-prefix=DAMP
// RUN: not loom-opt %s -split-input-file -loom-optimizer="nesterov=true" 2>&1 | FileCheck %s --check-prefix=NEST
// RUN: not loom-opt %s -split-input-file -loom-optimizer="optimizer=adam momentum=0.9" 2>&1 | FileCheck %s --check-prefix=ADAMMOM
// RUN: not loom-opt %s -split-input-file -loom-optimizer="beta1=0.5" 2>&1 | FileCheck %s --check-prefix=SGDBETA
// RUN: not loom-opt %s -split-input-file -loom-optimizer="optimizer=adamw beta2=1.0" 2>&1 | FileCheck %s --check-prefix=BETA2
// RUN: not loom-opt %s -split-input-file -loom-optimizer="weight-decay=-0.5" 2>&1 | FileCheck %s --check-prefix=WD
// RUN: not loom-opt %s -split-input-file -loom-optimizer="clip-grad-norm=-1" 2>&1 | FileCheck %s --check-prefix=CLIP
// RUN: not loom-opt %s -split-input-file -loom-optimizer="schedule=cosine" 2>&1 | FileCheck %s --check-prefix=COSTOTAL
// RUN: not loom-opt %s -split-input-file -loom-optimizer="schedule=cosine warmup-steps=10 total-steps=10" 2>&1 | FileCheck %s --check-prefix=COSWARM
// RUN: not loom-opt %s -split-input-file -loom-optimizer="schedule=cosine total-steps=10 lr=0.1 min-lr=0.2" 2>&1 | FileCheck %s --check-prefix=MINLR
// RUN: not loom-opt %s -split-input-file -loom-optimizer="schedule=warmup" 2>&1 | FileCheck %s --check-prefix=WARM
// RUN: not loom-opt %s -split-input-file -loom-optimizer="warmup-steps=5" 2>&1 | FileCheck %s --check-prefix=CONSTWARM
// RUN: not loom-opt %s -split-input-file -loom-optimizer="function=nope_grad" 2>&1 | FileCheck %s --check-prefix=NOFUNC

// The choices are enum options: the option parser names the bad value.
// OPT: for the --optimizer option: Cannot find option named 'adagrad'!
// SCHED: for the --schedule option: Cannot find option named 'step'!
// LR: error: loom-optimizer: lr must be a finite value >= 0, got -1.000000e-01
// DAMP: error: loom-optimizer: dampening must be 0, got 1.000000e-01
// NEST: error: loom-optimizer: nesterov requires momentum > 0 (as torch.optim.SGD)
// ADAMMOM: error: loom-optimizer: momentum, dampening and nesterov apply to optimizer=sgd, not adam
// SGDBETA: error: loom-optimizer: beta1, beta2 and eps apply to optimizer=adam and adamw, not sgd
// BETA2: error: loom-optimizer: beta2 must be in [0, 1), got 1.000000e+00
// WD: error: loom-optimizer: weight-decay must be >= 0 (or -1 for the optimizer's default), got -5.000000e-01
// CLIP: error: loom-optimizer: clip-grad-norm must be >= 0 (0: no clipping), got -1.000000e+00
// COSTOTAL: error: loom-optimizer: schedule=cosine needs total-steps > 0
// COSWARM: error: loom-optimizer: schedule=cosine needs total-steps (10) > warmup-steps (10)
// MINLR: error: loom-optimizer: min-lr (2.000000e-01) exceeds lr (1.000000e-01)
// WARM: error: loom-optimizer: schedule=warmup needs warmup-steps > 0
// CONSTWARM: error: loom-optimizer: warmup-steps needs schedule=warmup or cosine
// NOFUNC: error: loom-optimizer: function 'nope_grad' (option function=) is not in the module

// expected-error @+1 {{loom-optimizer: result 2 of @f_grad has no 'loom.grad_of' (every result after the loss must be a gradient)}}
func.func @f_grad(%w: tensor<4xf32> {loom.param}, %b: tensor<f32> {loom.param})
    -> (tensor<f32>, tensor<4xf32> {loom.grad_of = 0 : i64}, tensor<f32>) {
  %0 = loom.reduce_sum %w, dims = [0] : tensor<4xf32> -> tensor<f32>
  return %0, %w, %b : tensor<f32>, tensor<4xf32>, tensor<f32>
}

// -----

// expected-error @+1 {{loom-optimizer: result 0 of @f_grad must be the loss, a rank-0 float tensor without 'loom.grad_of'}}
func.func @f_grad(%w: tensor<4xf32> {loom.param})
    -> (tensor<4xf32>, tensor<4xf32> {loom.grad_of = 0 : i64}) {
  return %w, %w : tensor<4xf32>, tensor<4xf32>
}

// -----

// expected-error @+1 {{loom-optimizer: results 1 and 2 of @f_grad are both gradients of argument 0 ('w')}}
func.func @f_grad(%w: tensor<4xf32> {loom.param, loom.name = "w"})
    -> (tensor<f32>, tensor<4xf32> {loom.grad_of = 0 : i64}, tensor<4xf32> {loom.grad_of = 0 : i64}) {
  %0 = loom.reduce_sum %w, dims = [0] : tensor<4xf32> -> tensor<f32>
  return %0, %w, %w : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// expected-error @+1 {{loom-optimizer: gradient result 1 has type 'tensor<2xf32>', but its parameter 'w' has type 'tensor<4xf32>'}}
func.func @f_grad(%w: tensor<4xf32> {loom.param, loom.name = "w"}, %x: tensor<2xf32>)
    -> (tensor<f32>, tensor<2xf32> {loom.grad_of = 0 : i64}) {
  %0 = loom.reduce_sum %w, dims = [0] : tensor<4xf32> -> tensor<f32>
  return %0, %x : tensor<f32>, tensor<2xf32>
}

// -----

// expected-error @+1 {{loom-optimizer: parameter 'w' (argument 0) has type 'tensor<?xf32>'; only f32 tensors of static shape are supported}}
func.func @f_grad(%w: tensor<?xf32> {loom.param, loom.name = "w"})
    -> (tensor<f32>, tensor<?xf32> {loom.grad_of = 0 : i64}) {
  %0 = loom.reduce_sum %w, dims = [0] : tensor<?xf32> -> tensor<f32>
  return %0, %w : tensor<f32>, tensor<?xf32>
}

// -----

// expected-error @+1 {{loom-optimizer: parameter 'w' (argument 0) has type 'tensor<4xbf16>'; only f32 tensors of static shape are supported}}
func.func @f_grad(%w: tensor<4xbf16> {loom.param, loom.name = "w"})
    -> (tensor<bf16>, tensor<4xbf16> {loom.grad_of = 0 : i64}) {
  %0 = loom.reduce_sum %w, dims = [0] : tensor<4xbf16> -> tensor<bf16>
  return %0, %w : tensor<bf16>, tensor<4xbf16>
}

// -----

// expected-error @+1 {{loom-optimizer: @f_grad has no gradient results (loom.grad_of): nothing to optimize}}
func.func @f_grad(%w: tensor<4xf32> {loom.param})
    -> tensor<f32> {
  %0 = loom.reduce_sum %w, dims = [0] : tensor<4xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// expected-error @+1 {{loom-optimizer: @f_step already exists}}
func.func @f_grad(%w: tensor<4xf32> {loom.param})
    -> (tensor<f32>, tensor<4xf32> {loom.grad_of = 0 : i64}) {
  %0 = loom.reduce_sum %w, dims = [0] : tensor<4xf32> -> tensor<f32>
  return %0, %w : tensor<f32>, tensor<4xf32>
}

func.func @f_step() {
  return
}

// -----

// expected-error @+1 {{loom-optimizer: @f_grad must have a body of one block}}
func.func private @f_grad(tensor<4xf32> {loom.param})
    -> (tensor<f32>, tensor<4xf32> {loom.grad_of = 0 : i64})

// -----

// expected-error @+1 {{loom-optimizer: an argument of @f_grad is named 'step', the name of an optimizer state argument}}
func.func @f_grad(%w: tensor<4xf32> {loom.param}, %s: tensor<f32> {loom.name = "step"})
    -> (tensor<f32>, tensor<4xf32> {loom.grad_of = 0 : i64}) {
  %0 = loom.reduce_sum %w, dims = [0] : tensor<4xf32> -> tensor<f32>
  return %0, %w : tensor<f32>, tensor<4xf32>
}

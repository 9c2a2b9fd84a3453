// RUN: loom-opt %s -split-input-file -loom-data-parallel=dp=2 -verify-diagnostics
//
// Invalid options, reported before the IR is looked at.
// RUN: not loom-opt %s -split-input-file -loom-data-parallel 2>&1 | FileCheck %s --check-prefix=NODP
// RUN: not loom-opt %s -split-input-file -loom-data-parallel=dp=-2 2>&1 | FileCheck %s --check-prefix=NEGDP
// RUN: not loom-opt %s -split-input-file -loom-data-parallel="dp=2 bucket-bytes=-1" 2>&1 | FileCheck %s --check-prefix=BUCKET
// RUN: not loom-opt %s -split-input-file -loom-data-parallel="dp=2 function=nope_grad" 2>&1 | FileCheck %s --check-prefix=NOFUNC

// NODP: error: loom-data-parallel: dp must be >= 1 (option dp=, the number of data-parallel ranks), got 0
// NEGDP: error: loom-data-parallel: dp must be >= 1 (option dp=, the number of data-parallel ranks), got -2
// BUCKET: error: loom-data-parallel: bucket-bytes must be >= 0 (0: one bucket per gradient), got -1
// NOFUNC: error: loom-data-parallel: function 'nope_grad' (option function=) is not in the module

// expected-error @+1 {{loom-data-parallel: no function named '*_grad' (run loom-autodiff first, or name the function with function=)}}
module {
  func.func @main(%w: tensor<4xf32> {loom.param}) -> tensor<4xf32> {
    return %w : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{loom-data-parallel: several functions named '*_grad' (@a_grad, @b_grad); choose one with function=}}
module {
  func.func @a_grad(%w: tensor<4xf32> {loom.param}, %l: tensor<f32>)
      -> (tensor<f32>, tensor<4xf32> {loom.grad_of = 0 : i64}) {
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
  func.func @b_grad(%w: tensor<4xf32> {loom.param}, %l: tensor<f32>)
      -> (tensor<f32>, tensor<4xf32> {loom.grad_of = 0 : i64}) {
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{loom-data-parallel: @f_grad: must have a body of one block}}
func.func private @f_grad(tensor<4xf32> {loom.param}, tensor<f32>)
    -> (tensor<f32>, tensor<4xf32> {loom.grad_of = 0 : i64})

// -----

// expected-error @+1 {{loom-data-parallel: @f_grad: result 0 must be the loss, a rank-0 float tensor without 'loom.grad_of'}}
func.func @f_grad(%w: tensor<4xf32> {loom.param}, %l: tensor<1xf32>)
    -> (tensor<1xf32>, tensor<4xf32> {loom.grad_of = 0 : i64}) {
  return %l, %w : tensor<1xf32>, tensor<4xf32>
}

// -----

// expected-error @+1 {{loom-data-parallel: @f_grad: result 2 ('aux') has no 'loom.grad_of'; every result after the loss must be a gradient}}
func.func @f_grad(%w: tensor<4xf32> {loom.param}, %l: tensor<f32>)
    -> (tensor<f32>, tensor<4xf32> {loom.grad_of = 0 : i64},
        tensor<4xf32> {loom.name = "aux"}) {
  return %l, %w, %w : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// expected-error @+1 {{loom-data-parallel: @f_grad: gradient result 1 ('grad.n') has type 'tensor<4xi32>'; only float tensors of static shape can be averaged over the ranks}}
func.func @f_grad(%n: tensor<4xi32> {loom.name = "n"}, %l: tensor<f32>)
    -> (tensor<f32>, tensor<4xi32> {loom.grad_of = 0 : i64, loom.name = "grad.n"}) {
  return %l, %n : tensor<f32>, tensor<4xi32>
}

// -----

// expected-error @+1 {{loom-data-parallel: @f_grad: gradient result 1 (#1) has type 'tensor<?xf32>'; only float tensors of static shape can be averaged over the ranks}}
func.func @f_grad(%w: tensor<?xf32> {loom.param}, %l: tensor<f32>)
    -> (tensor<f32>, tensor<?xf32> {loom.grad_of = 0 : i64}) {
  return %l, %w : tensor<f32>, tensor<?xf32>
}

// -----

// Running the pass twice would average twice.
shard.grid @mesh(shape = 2x1x1)
// expected-error @+1 {{loom-data-parallel: @f_grad: is already data-parallel (it all-reduces over the dp axis of @mesh)}}
func.func @f_grad(%w: tensor<4xf32> {loom.param}, %l: tensor<f32>)
    -> (tensor<f32>, tensor<4xf32> {loom.grad_of = 0 : i64}) {
  %s = shard.all_reduce %l on @mesh grid_axes = [0] : tensor<f32> -> tensor<f32>
  return %s, %w : tensor<f32>, tensor<4xf32>
}

// -----

// The dp axis of the mesh already has another size.
// expected-error @+1 {{loom-data-parallel: the dp axis (axis 0) of @mesh already has 4 ranks, not 2}}
shard.grid @mesh(shape = 4x1x1)

func.func @f_grad(%w: tensor<4xf32> {loom.param}, %l: tensor<f32>)
    -> (tensor<f32>, tensor<4xf32> {loom.grad_of = 0 : i64}) {
  return %l, %w : tensor<f32>, tensor<4xf32>
}

// -----

// @mesh is reserved for the device mesh.
// expected-error @+1 {{the symbol @mesh must be Loom's device mesh, a shard.grid of static shape DxPxT (data, pipeline and tensor parallelism)}}
func.func private @mesh()

func.func @f_grad(%w: tensor<4xf32> {loom.param}, %l: tensor<f32>)
    -> (tensor<f32>, tensor<4xf32> {loom.grad_of = 0 : i64}) {
  return %l, %w : tensor<f32>, tensor<4xf32>
}

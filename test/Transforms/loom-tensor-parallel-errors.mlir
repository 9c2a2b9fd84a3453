// RUN: loom-opt %s -split-input-file -loom-tensor-parallel=tp=3 -verify-diagnostics
//
// Invalid options, reported before the IR is looked at.
// RUN: not loom-opt %s -split-input-file -loom-tensor-parallel 2>&1 | FileCheck %s --check-prefix=NOTP
// RUN: not loom-opt %s -split-input-file -loom-tensor-parallel="tp=2 function=nope" 2>&1 | FileCheck %s --check-prefix=NOFUNC

// NOTP: error: loom-tensor-parallel: tp must be >= 1 (option tp=, the number of tensor-parallel ranks), got 0
// NOFUNC: error: loom-tensor-parallel: function 'nope' (option function=) is not in the module

// Attention with 4 heads of 3: tp=3 divides the hidden size (12) but not
// the heads; the error names the reshape that makes the heads.
func.func @main(%x: tensor<2x12xf32>, %wq: tensor<12x12xf32> {loom.param},
                %wo: tensor<12x12xf32> {loom.param}) -> tensor<2x12xf32> {
  %q = loom.dot_general %x, %wq, contracting_dims = [1] x [0]
      : (tensor<2x12xf32>, tensor<12x12xf32>) -> tensor<2x12xf32>
  // expected-error @+1 {{loom-tensor-parallel: tp=3 does not divide the 4 attention heads (result dimension 1 of this reshape)}}
  %h = loom.reshape %q : tensor<2x12xf32> -> tensor<2x4x3xf32>
  %t = loom.transpose %h, permutation = [1, 0, 2] : tensor<2x4x3xf32> -> tensor<4x2x3xf32>
  %s = loom.dot_general %t, %t, batching_dims = [0] x [0], contracting_dims = [2] x [2]
      : (tensor<4x2x3xf32>, tensor<4x2x3xf32>) -> tensor<4x2x2xf32>
  %p = loom.softmax %s, axis = 2 : tensor<4x2x2xf32>
  %c = loom.dot_general %p, %t, batching_dims = [0] x [0], contracting_dims = [2] x [1]
      : (tensor<4x2x2xf32>, tensor<4x2x3xf32>) -> tensor<4x2x3xf32>
  %ct = loom.transpose %c, permutation = [1, 0, 2] : tensor<4x2x3xf32> -> tensor<2x4x3xf32>
  %m = loom.reshape %ct : tensor<2x4x3xf32> -> tensor<2x12xf32>
  %o = loom.dot_general %m, %wo, contracting_dims = [1] x [0]
      : (tensor<2x12xf32>, tensor<12x12xf32>) -> tensor<2x12xf32>
  return %o : tensor<2x12xf32>
}

// -----

// An MLP whose hidden size (16) tp=3 does not divide: the error names the
// column-parallel weight and its dimension.
func.func @main(%x: tensor<2x8xf32>,
                %w1: tensor<8x16xf32> {loom.param, loom.name = "fc1.weight"},
                %w2: tensor<16x8xf32> {loom.param, loom.name = "fc2.weight"})
    -> tensor<2x8xf32> {
  // expected-error @+1 {{loom-tensor-parallel: tp=3 does not divide dimension 1 (size 16) of the parameter 'fc1.weight' (argument #1)}}
  %h = loom.dot_general %x, %w1, contracting_dims = [1] x [0]
      : (tensor<2x8xf32>, tensor<8x16xf32>) -> tensor<2x16xf32>
  %a = loom.relu %h : tensor<2x16xf32>
  %y = loom.dot_general %a, %w2, contracting_dims = [1] x [0]
      : (tensor<2x16xf32>, tensor<16x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// A fused QKV projection of hidden size 4: tp=3 divides neither the
// output dimension (12) nor its blocks of 4.
func.func @main(%x: tensor<2x4xf32>,
                %w: tensor<4x12xf32> {loom.param, loom.name = "c_attn.weight"},
                %wo: tensor<4x4xf32> {loom.param}) -> tensor<2x4xf32> {
  // expected-error @+1 {{loom-tensor-parallel: tp=3 does not divide dimension 1 (size 12, 3 blocks of 4) of the parameter 'c_attn.weight' (argument #1)}}
  %qkv = loom.dot_general %x, %w, contracting_dims = [1] x [0]
      : (tensor<2x4xf32>, tensor<4x12xf32>) -> tensor<2x12xf32>
  %q, %k, %v = loom.split %qkv, dim = 1, sizes = [4, 4, 4]
      : tensor<2x12xf32> -> tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
  %qk = loom.mul %q, %k : tensor<2x4xf32>
  %a = loom.mul %qk, %v : tensor<2x4xf32>
  %y = loom.dot_general %a, %wo, contracting_dims = [1] x [0]
      : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// No block: the only linear layer's output is returned.
// expected-warning @+1 {{loom-tensor-parallel: @main has no attention or MLP block, embedding or LM head to partition}}
func.func @main(%x: tensor<2x6xf32>, %w: tensor<6x6xf32> {loom.param})
    -> tensor<2x6xf32> {
  %y = loom.dot_general %x, %w, contracting_dims = [1] x [0]
      : (tensor<2x6xf32>, tensor<6x6xf32>) -> tensor<2x6xf32>
  return %y : tensor<2x6xf32>
}

// -----

// The module's device mesh already has tensor-parallel ranks.
shard.grid @mesh(shape = 1x1x3)
// expected-error @+1 {{loom-tensor-parallel: the module is already tensor-parallel (@mesh has 3 ranks on its tp axis)}}
func.func @main(%x: tensor<2x6xf32>) -> tensor<2x6xf32> {
  return %x : tensor<2x6xf32>
}

// -----

// @mesh is the device mesh, DxPxT.
// expected-error @+1 {{the symbol @mesh must be Loom's device mesh, a shard.grid of static shape DxPxT (data, pipeline and tensor parallelism)}}
shard.grid @mesh(shape = 2x2)
func.func @main(%x: tensor<2x6xf32>, %w1: tensor<6x6xf32> {loom.param},
                %w2: tensor<6x6xf32> {loom.param}) -> tensor<2x6xf32> {
  %h = loom.dot_general %x, %w1, contracting_dims = [1] x [0]
      : (tensor<2x6xf32>, tensor<6x6xf32>) -> tensor<2x6xf32>
  %y = loom.dot_general %h, %w2, contracting_dims = [1] x [0]
      : (tensor<2x6xf32>, tensor<6x6xf32>) -> tensor<2x6xf32>
  return %y : tensor<2x6xf32>
}

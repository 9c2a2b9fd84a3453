// A parameter read by two pipeline stages (as a tied embedding and LM head
// are): each stage holds a copy, and after the micro-batches both return
// the sum of the two stages' gradients, so the copies stay equal and match
// the single-device gradient.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %loompy %S/Inputs/pipeline_parallel.py make %t --rows 8
// RUN: loom-opt %s --loom-shape-inference="arg-shapes=x=8x8,y=8x8" --loom-autodiff -o %t/ref.mlir
// RUN: loom-run %t/ref.mlir --entry main_grad --weights %t/weights.safetensors \
// RUN:   --input x=%t/x.npy --input y=%t/y.npy --output-dir %t/ref
// RUN: loom-opt %s --loom-shape-inference="arg-shapes=x=2x8,y=2x8" --loom-pipeline-partition=stages=2 \
// RUN:   --loom-pipeline-split --loom-pipeline-schedule=microbatches=4 -o %t/pp2.mlir
// RUN: FileCheck %s < %t/pp2.mlir
// RUN: loom-run %t/pp2.mlir --ranks 2 --entry main_stage0_grad,main_stage1_grad \
// RUN:   --weights %t/weights.safetensors --input x=%t/x.npy --input y=%t/y.npy --output-dir %t/pp2
// RUN: %loompy %S/Inputs/pipeline_parallel.py compare %t/ref --mesh 1,2,1 \
// RUN:   %t/pp2/rank0 %t/pp2/rank1 | FileCheck %s --check-prefix=EQ
// EQ: grad.w1: max abs diff
// EQ: grad.w2: max abs diff
// EQ: equivalent: yes
//
// The exchange after the 4 micro-batches (tags from 4 * E * 2 on; E = 1).
// CHECK-LABEL: func.func @main_stage0_grad
// CHECK:         shard.send {{.*}} destination = [1] {loom.tag = 8 : i64}
// CHECK:         shard.recv {{.*}} source = [1] {loom.tag = 9 : i64}
// CHECK:         shard.send {{.*}} destination = [1] {loom.tag = 10 : i64}
// CHECK:         shard.recv {{.*}} source = [1] {loom.tag = 11 : i64}
// CHECK-LABEL: func.func @main_stage1_grad
// CHECK:         shard.send {{.*}} destination = [0] {loom.tag = 9 : i64}
// CHECK:         shard.recv {{.*}} source = [0] {loom.tag = 8 : i64}

func.func @main(%x: tensor<?x8xf32> {loom.name = "x"}, %y: tensor<?x8xf32> {loom.name = "y"},
                %w1: tensor<8x16xf32> {loom.param, loom.name = "w1"},
                %w2: tensor<16x8xf32> {loom.param, loom.name = "w2"})
    -> (tensor<f32> {loom.name = "loss"}) {
  %h1 = loom.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<?x8xf32>, tensor<8x16xf32>) -> tensor<?x16xf32>
  %a1 = loom.tanh %h1 : tensor<?x16xf32>
  %h2 = loom.dot_general %a1, %w2, contracting_dims = [1] x [0] : (tensor<?x16xf32>, tensor<16x8xf32>) -> tensor<?x8xf32>
  %a2 = loom.tanh %h2 : tensor<?x8xf32>
  %h3 = loom.dot_general %a2, %w1, contracting_dims = [1] x [0] : (tensor<?x8xf32>, tensor<8x16xf32>) -> tensor<?x16xf32>
  %a3 = loom.tanh %h3 : tensor<?x16xf32>
  %o = loom.dot_general %a3, %w2, contracting_dims = [1] x [0] : (tensor<?x16xf32>, tensor<16x8xf32>) -> tensor<?x8xf32>
  %d = loom.sub %o, %y : tensor<?x8xf32>
  %sq = loom.mul %d, %d : tensor<?x8xf32>
  %l = loom.reduce_mean %sq, dims = [0, 1] : tensor<?x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}

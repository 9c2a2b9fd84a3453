// BERT's embeddings and MLM head as ONNX imports them (word, token-type and
// position tables summed; a dense "transform" before a LayerNorm; the
// decoder tied to the word table, with a bias), under tp=2:
// * loom-vocab-parallel cuts the token-type and position tables too, though
//   they are indexed by constants: their rows are added to the token
//   embedding's, so each lookup keeps this rank's rows and one all-reduce
//   of the sum completes all three (no more communication than the word
//   table alone);
// * loom-tensor-parallel cuts the transform's weight by columns and gathers
//   its output before the LayerNorm (Megatron-LM's ColumnParallelLinear
//   with gather_output): this rank's columns looked up at every column
//   index, zero elsewhere, all-reduced.
// loom-run --ranks 2 gives the single-device loss and gradients.
//
// RUN: loom-opt %s --loom-tensor-parallel=tp=2 --loom-vocab-parallel=tp=2 | FileCheck %s
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %loompy %S/Inputs/tensor_parallel.py make %t %s --classes 10 --ignore-index=-100
// RUN: loom-opt %s --loom-autodiff -o %t/ref.mlir
// RUN: loom-run %t/ref.mlir --entry main_grad --weights %t/weights.safetensors \
// RUN:   --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/ref
// RUN: loom-opt %s --loom-tensor-parallel=tp=2 --loom-vocab-parallel=tp=2 -o %t/tp2-fwd.mlir
// RUN: loom-opt %t/tp2-fwd.mlir --loom-autodiff -o %t/tp2.mlir
// RUN: %loompy %S/Inputs/tensor_parallel.py slice %t %t/tp2-fwd.mlir
// RUN: loom-run %t/tp2.mlir --entry main_grad --ranks 2 --weights %t/weights.safetensors \
// RUN:   @%t/2.rsp --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/tp2
// RUN: %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/tp2-fwd.mlir \
// RUN:   %t/tp2/rank0 %t/tp2/rank1 | FileCheck %s --check-prefix=EQ
//
// Negative controls: without the all-reduce of the embedding sum, or
// without that of the transform's gathered output, the ranks differ from
// the single device.
// RUN: sed -e 's/%all_reduce = shard.all_reduce \(%[0-9]*\) on @mesh grid_axes = \[2\] : \(.*\)$/%all_reduce = loom.reshape \1 : \2/' \
// RUN:   %t/tp2-fwd.mlir > %t/no-sum.mlir
// RUN: loom-opt %t/no-sum.mlir --loom-autodiff -o %t/no-sum-grad.mlir
// RUN: loom-run %t/no-sum-grad.mlir --entry main_grad --ranks 2 --weights %t/weights.safetensors \
// RUN:   @%t/2.rsp --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/no-sum
// RUN: not %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/tp2-fwd.mlir \
// RUN:   %t/no-sum/rank0 %t/no-sum/rank1 | FileCheck %s --check-prefix=NE
// RUN: sed -e 's/%all_reduce_0 = shard.all_reduce \(%[0-9]*\) on @mesh grid_axes = \[2\] : \(.*\)$/%all_reduce_0 = loom.reshape \1 : \2/' \
// RUN:   %t/tp2-fwd.mlir > %t/no-gather.mlir
// RUN: loom-opt %t/no-gather.mlir --loom-autodiff -o %t/no-gather-grad.mlir
// RUN: loom-run %t/no-gather-grad.mlir --entry main_grad --ranks 2 --weights %t/weights.safetensors \
// RUN:   @%t/2.rsp --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/no-gather
// RUN: not %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/tp2-fwd.mlir \
// RUN:   %t/no-gather/rank0 %t/no-gather/rank1 | FileCheck %s --check-prefix=NE

// Every table and the transform are cut; the norms stay whole.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: tensor<5x8xf32> {loom.name = "wte", loom.param, loom.shard = #loom.shard<dim = 0, parts = 2>}
// CHECK-SAME: tensor<1x8xf32> {loom.name = "wtt", loom.param, loom.shard = #loom.shard<dim = 0, parts = 2>}
// CHECK-SAME: tensor<2x8xf32> {loom.name = "wpe", loom.param, loom.shard = #loom.shard<dim = 0, parts = 2>}
// CHECK-SAME: tensor<8xf32> {loom.name = "ln0.scale", loom.param}
// CHECK-SAME: tensor<4x8xf32> {loom.name = "dense.weight", loom.param, loom.shard = #loom.shard<dim = 0, parts = 2>}
// CHECK-SAME: tensor<4xf32> {loom.name = "dense.bias", loom.param, loom.shard = #loom.shard<dim = 0, parts = 2>}
// CHECK-SAME: tensor<5xf32> {loom.name = "decoder.bias", loom.param, loom.shard = #loom.shard<dim = 0, parts = 2>}
// The three lookups, then their sum, all-reduced once.
// CHECK-NOT:  shard.all_reduce
// CHECK:      loom.gather %{{.*}} : (tensor<5x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
// CHECK-NOT:  shard.all_reduce
// CHECK:      loom.gather %{{.*}} : (tensor<1x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
// CHECK-NOT:  shard.all_reduce
// CHECK:      loom.gather %{{.*}} : (tensor<2x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
// CHECK-NOT:  shard.all_reduce
// CHECK:      %[[SUM:.*]] = loom.add %{{.*}}, %{{.*}} : tensor<2x4x8xf32>
// CHECK-NEXT: %[[X:.*]] = shard.all_reduce %[[SUM]] on @mesh grid_axes = [2] : tensor<2x4x8xf32>
// CHECK-NEXT: loom.layer_norm %[[X]]
// The transform: f on its input, 4 of the 8 features, bias and tanh local.
// CHECK:      %[[HF:.*]] = loom.tp_copy
// CHECK-NEXT: %[[T:.*]] = loom.dot_general %[[HF]], %{{.*}} : (tensor<2x4x8xf32>, tensor<4x8xf32>) -> tensor<2x4x4xf32>
// CHECK:      %[[A:.*]] = loom.tanh %{{.*}} : tensor<2x4x4xf32>
// Gathered: columns 0..7 looked up in this rank's 4, summed over the ranks.
// CHECK-NEXT: %[[COLS:.*]] = loom.iota dim = 0 : tensor<8xi64>
// CHECK:      %[[LOOKUP:.*]] = loom.gather %[[A]][%{{.*}}], axis = 2 : (tensor<2x4x4xf32>, tensor<8xi64>) -> tensor<2x4x8xf32>
// CHECK:      %[[MINE:.*]] = loom.select %{{.*}}, %[[LOOKUP]], %{{.*}} : tensor<2x4x8xi1>, tensor<2x4x8xf32>
// CHECK-NEXT: %[[FULL:.*]] = shard.all_reduce %[[MINE]] on @mesh grid_axes = [2] : tensor<2x4x8xf32>
// CHECK-NEXT: loom.layer_norm %[[FULL]]

// EQ: equivalent: yes
// NE: equivalent: no

module {
  func.func @main(
      %ids: tensor<2x4xi64> {loom.name = "ids"},
      %labels: tensor<2x4xi64> {loom.name = "labels"},
      %wte: tensor<10x8xf32> {loom.param, loom.name = "wte"},
      %wtt: tensor<2x8xf32> {loom.param, loom.name = "wtt"},
      %wpe: tensor<4x8xf32> {loom.param, loom.name = "wpe"},
      %g0: tensor<8xf32> {loom.param, loom.name = "ln0.scale"},
      %b0: tensor<8xf32> {loom.param, loom.name = "ln0.bias"},
      %wd: tensor<8x8xf32> {loom.param, loom.name = "dense.weight"},
      %bd: tensor<8xf32> {loom.param, loom.name = "dense.bias"},
      %g1: tensor<8xf32> {loom.param, loom.name = "ln1.scale"},
      %b1: tensor<8xf32> {loom.param, loom.name = "ln1.bias"},
      %bias: tensor<10xf32> {loom.param, loom.name = "decoder.bias"})
      -> (tensor<f32> {loom.name = "loss"}) {
    %tok = loom.gather %wte[%ids], axis = 0 : (tensor<10x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
    %zeros = loom.constant dense<0> : tensor<2x4xi64>
    %type = loom.gather %wtt[%zeros], axis = 0 : (tensor<2x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
    %e0 = loom.add %tok, %type : tensor<2x4x8xf32>
    %positions = loom.iota dim = 0 : tensor<4xi64>
    %pos = loom.gather %wpe[%positions], axis = 0 : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
    %posb = loom.broadcast %pos, dims = [1, 2] : tensor<4x8xf32> -> tensor<2x4x8xf32>
    %e = loom.add %e0, %posb : tensor<2x4x8xf32>
    %h = loom.layer_norm %e scale %g0 bias %b0 axis = 2 epsilon = 1.0e-05 : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
    %wdt = loom.transpose %wd, permutation = [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
    %t0 = loom.dot_general %h, %wdt, contracting_dims = [2] x [0] : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
    %bdb = loom.broadcast %bd, dims = [2] : tensor<8xf32> -> tensor<2x4x8xf32>
    %t1 = loom.add %t0, %bdb : tensor<2x4x8xf32>
    %t = loom.tanh %t1 : tensor<2x4x8xf32>
    %n = loom.layer_norm %t scale %g1 bias %b1 axis = 2 epsilon = 1.0e-05 : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
    %wtet = loom.transpose %wte, permutation = [1, 0] : tensor<10x8xf32> -> tensor<8x10xf32>
    %l0 = loom.dot_general %n, %wtet, contracting_dims = [2] x [0] : (tensor<2x4x8xf32>, tensor<8x10xf32>) -> tensor<2x4x10xf32>
    %biasb = loom.broadcast %bias, dims = [2] : tensor<10xf32> -> tensor<2x4x10xf32>
    %logits = loom.add %l0, %biasb : tensor<2x4x10xf32>
    %loss = loom.cross_entropy %logits, %labels ignore_index = -100 : (tensor<2x4x10xf32>, tensor<2x4xi64>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

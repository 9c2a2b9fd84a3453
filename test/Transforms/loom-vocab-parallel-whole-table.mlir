// The embedding as Flax writes it: `nn.Embed` fills the rows of invalid
// ids with NaN (a select after the lookup), and the learned positions are
// a parameter added whole (`x + pos[None, :S]`, a broadcast). Under tp=2
// the token table and the position table are both cut by rows: the select
// passes the partial lookup (summed over the ranks, a select of partial
// rows or NaN is the select of the whole lookup), the position table is
// looked up at every row (this rank's, zero elsewhere), and one all-reduce
// completes the sum. loom-run --ranks 2 gives the single-device loss and
// gradients.
//
// RUN: loom-opt %s --loom-vocab-parallel=tp=2 | FileCheck %s
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %loompy %S/Inputs/tensor_parallel.py make %t %s --classes 10
// RUN: loom-opt %s --loom-autodiff -o %t/ref.mlir
// RUN: loom-run %t/ref.mlir --entry main_grad --weights %t/weights.safetensors \
// RUN:   --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/ref
// RUN: loom-opt %s --loom-vocab-parallel=tp=2 -o %t/tp2-fwd.mlir
// RUN: loom-opt %t/tp2-fwd.mlir --loom-autodiff -o %t/tp2.mlir
// RUN: %loompy %S/Inputs/tensor_parallel.py slice %t %t/tp2-fwd.mlir
// RUN: loom-run %t/tp2.mlir --entry main_grad --ranks 2 --weights %t/weights.safetensors \
// RUN:   @%t/2.rsp --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/tp2
// RUN: %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/tp2-fwd.mlir \
// RUN:   %t/tp2/rank0 %t/tp2/rank1 | FileCheck %s --check-prefix=EQ
//
// Negative control: without the sum's all-reduce each rank keeps its part.
// RUN: sed -e 's/%all_reduce = shard.all_reduce \(%[0-9]*\) on @mesh grid_axes = \[2\] : \(.*\)$/%all_reduce = loom.reshape \1 : \2/' \
// RUN:   %t/tp2-fwd.mlir > %t/no-sum.mlir
// RUN: loom-opt %t/no-sum.mlir --loom-autodiff -o %t/no-sum-grad.mlir
// RUN: loom-run %t/no-sum-grad.mlir --entry main_grad --ranks 2 --weights %t/weights.safetensors \
// RUN:   @%t/2.rsp --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/no-sum
// RUN: not %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/tp2-fwd.mlir \
// RUN:   %t/no-sum/rank0 %t/no-sum/rank1 | FileCheck %s --check-prefix=NE

// CHECK-LABEL: func.func @main(
// CHECK-SAME: tensor<5x8xf32> {loom.name = "embed", loom.param, loom.shard = #loom.shard<dim = 0, parts = 2>}
// CHECK-SAME: tensor<2x8xf32> {loom.name = "pos", loom.param, loom.shard = #loom.shard<dim = 0, parts = 2>}
// The token lookup: partial rows, NaN where the id is invalid; no
// all-reduce of its own.
// CHECK-NOT:  shard.all_reduce
// CHECK:      %[[TOK:.*]] = loom.gather %{{.*}} : (tensor<5x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
// CHECK-NOT:  shard.all_reduce
// CHECK:      loom.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x4x8xi1>, tensor<2x4x8xf32>
// The positions: every row looked up in this rank's two.
// CHECK-NOT:  shard.all_reduce
// CHECK:      %[[ROWS:.*]] = loom.iota dim = 0 : tensor<4xi64>
// CHECK:      loom.gather %{{.*}}[%{{.*}}], axis = 0 : (tensor<2x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
// CHECK-NOT:  shard.all_reduce
// CHECK:      %[[SUM:.*]] = loom.add %{{.*}}, %{{.*}} : tensor<2x4x8xf32>
// CHECK-NEXT: %[[X:.*]] = shard.all_reduce %[[SUM]] on @mesh grid_axes = [2] : tensor<2x4x8xf32>
// CHECK-NEXT: loom.tanh %[[X]]

// EQ: equivalent: yes
// NE: equivalent: no

module {
  func.func @main(
      %ids: tensor<2x4xi64> {loom.name = "ids"},
      %labels: tensor<2x4xi64> {loom.name = "labels"},
      %embed: tensor<10x8xf32> {loom.param, loom.name = "embed"},
      %pos: tensor<4x8xf32> {loom.param, loom.name = "pos"},
      %head: tensor<8x10xf32> {loom.param, loom.name = "head"})
      -> (tensor<f32> {loom.name = "loss"}) {
    %tok = loom.gather %embed[%ids], axis = 0 : (tensor<10x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
    %zero = loom.constant dense<0> : tensor<2x4xi64>
    %valid = loom.compare ge, %ids, %zero : (tensor<2x4xi64>, tensor<2x4xi64>) -> tensor<2x4xi1>
    %validb = loom.broadcast %valid, dims = [0, 1] : tensor<2x4xi1> -> tensor<2x4x8xi1>
    %nan = loom.constant dense<0x7FC00000> : tensor<f32>
    %nanb = loom.broadcast %nan, dims = [] : tensor<f32> -> tensor<2x4x8xf32>
    %filled = loom.select %validb, %tok, %nanb : tensor<2x4x8xi1>, tensor<2x4x8xf32>
    %pos1 = loom.broadcast %pos, dims = [1, 2] : tensor<4x8xf32> -> tensor<1x4x8xf32>
    %posb = loom.broadcast %pos1, dims = [0, 1, 2] : tensor<1x4x8xf32> -> tensor<2x4x8xf32>
    %x = loom.add %filled, %posb : tensor<2x4x8xf32>
    %h = loom.tanh %x : tensor<2x4x8xf32>
    %logits = loom.dot_general %h, %head, contracting_dims = [2] x [0] : (tensor<2x4x8xf32>, tensor<8x10xf32>) -> tensor<2x4x10xf32>
    %loss = loom.cross_entropy %logits, %labels : (tensor<2x4x10xf32>, tensor<2x4xi64>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

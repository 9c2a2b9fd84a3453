// loom-data-parallel on D ranks with B rows each returns what the
// single-device @main_grad returns on all D*B rows (mean loss): every rank's
// loss and gradients equal the reference.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %loompy %S/Inputs/data_parallel.py make %t --rows 4 --ranks 2 4
//
// The reference: one device, 4 rows.
// RUN: loom-opt %s --loom-shape-inference="arg-shapes=x=4x8,labels=4" \
// RUN:   --loom-autodiff -o %t/ref.mlir
// RUN: loom-run %t/ref.mlir --entry main_grad --weights %t/weights.safetensors \
// RUN:   --input x=%t/x.npy --input labels=%t/labels.npy --output-dir %t/ref
//
// dp=2: each rank has 2 rows. A small bucket-bytes gives several buckets.
// RUN: loom-opt %s --loom-shape-inference="arg-shapes=x=2x8,labels=2" \
// RUN:   --loom-autodiff --loom-data-parallel="dp=2 bucket-bytes=300" -o %t/dp2.mlir
// RUN: FileCheck %s --check-prefix=IR2 < %t/dp2.mlir
// RUN: loom-run %t/dp2.mlir --entry main_grad --weights %t/weights.safetensors \
// RUN:   --ranks 2 --input x@0=%t/x.2.0.npy --input x@1=%t/x.2.1.npy \
// RUN:   --input labels@0=%t/labels.2.0.npy --input labels@1=%t/labels.2.1.npy \
// RUN:   --output-dir %t/dp2
// RUN: %loompy %S/Inputs/data_parallel.py compare %t/ref %t/dp2/rank0 %t/dp2/rank1 \
// RUN:   | FileCheck %s --check-prefixes=EQ,DP2
//
// dp=4: one row per rank, one bucket (the default 25 MiB).
// RUN: loom-opt %s --loom-shape-inference="arg-shapes=x=1x8,labels=1" \
// RUN:   --loom-autodiff --loom-data-parallel=dp=4 -o %t/dp4.mlir
// RUN: FileCheck %s --check-prefix=IR4 < %t/dp4.mlir
// RUN: loom-run %t/dp4.mlir --entry main_grad --weights %t/weights.safetensors \
// RUN:   --ranks 4 --input x@0=%t/x.4.0.npy --input x@1=%t/x.4.1.npy \
// RUN:   --input x@2=%t/x.4.2.npy --input x@3=%t/x.4.3.npy \
// RUN:   --input labels@0=%t/labels.4.0.npy --input labels@1=%t/labels.4.1.npy \
// RUN:   --input labels@2=%t/labels.4.2.npy --input labels@3=%t/labels.4.3.npy \
// RUN:   --output-dir %t/dp4
// RUN: %loompy %S/Inputs/data_parallel.py compare %t/ref %t/dp4/rank0 \
// RUN:   %t/dp4/rank1 %t/dp4/rank2 %t/dp4/rank3 | FileCheck %s --check-prefixes=EQ,DP4
//
// The comparison has teeth: without the pass, each rank returns the loss
// and gradients of its own rows only.
// RUN: loom-opt %s --loom-shape-inference="arg-shapes=x=2x8,labels=2" \
// RUN:   --loom-autodiff -o %t/local.mlir
// RUN: loom-run %t/local.mlir --entry main_grad --weights %t/weights.safetensors \
// RUN:   --input x=%t/x.2.0.npy --input labels=%t/labels.2.0.npy --output-dir %t/local
// RUN: not %loompy %S/Inputs/data_parallel.py compare %t/ref %t/local \
// RUN:   | FileCheck %s --check-prefix=LOCAL

// dp=2: the loss, then buckets {fc2.bias, fc2.weight}, {fc1.bias},
// {fc1.weight}; the 1/dp scales and the bucket's split only after the last
// all-reduce, right before the return.
// IR2:     shard.all_reduce {{.*}} : tensor<f32> -> tensor<f32>
// IR2:     loom.concat {{.*}} -> tensor<68xf32>
// IR2:     shard.all_reduce {{.*}} : tensor<68xf32> -> tensor<68xf32>
// IR2-NOT: loom.split
// IR2:     shard.all_reduce {{.*}} : tensor<16xf32> -> tensor<16xf32>
// IR2-NOT: loom.split
// IR2:     shard.all_reduce {{.*}} : tensor<8x16xf32> -> tensor<8x16xf32>
// IR2-NOT: shard.all_reduce
// IR2:     loom.split
// IR2:     return
// dp=4: the loss, then one bucket of all 212 gradient values.
// IR4:     shard.all_reduce {{.*}} : tensor<f32> -> tensor<f32>
// IR4:     shard.all_reduce {{.*}} : tensor<212xf32> -> tensor<212xf32>
// IR4-NOT: shard.all_reduce

// Every result of the reference is compared, on every rank.
// EQ:       grad.fc1.bias: max abs diff
// EQ-NEXT:  grad.fc1.weight: max abs diff
// EQ-NEXT:  grad.fc2.bias: max abs diff
// EQ-NEXT:  grad.fc2.weight: max abs diff
// EQ-NEXT:  loss: max abs diff
// DP2-NEXT: equivalent: yes (tolerance 1e-06, 2 ranks)
// DP4-NEXT: equivalent: yes (tolerance 1e-06, 4 ranks)

// LOCAL: equivalent: no

func.func @main(%x: tensor<?x8xf32> {loom.name = "x"},
                %labels: tensor<?xi64> {loom.name = "labels"},
                %w1: tensor<8x16xf32> {loom.param, loom.name = "fc1.weight"},
                %b1: tensor<16xf32> {loom.param, loom.name = "fc1.bias"},
                %w2: tensor<16x4xf32> {loom.param, loom.name = "fc2.weight"},
                %b2: tensor<4xf32> {loom.param, loom.name = "fc2.bias"})
    -> (tensor<f32> {loom.name = "loss"}) {
  %h = loom.dot_general %x, %w1, contracting_dims = [1] x [0]
      : (tensor<?x8xf32>, tensor<8x16xf32>) -> tensor<?x16xf32>
  %bb1 = loom.broadcast %b1, dims = [1] : tensor<16xf32> -> tensor<?x16xf32>
  %h1 = loom.add %h, %bb1 : tensor<?x16xf32>
  %a1 = loom.tanh %h1 : tensor<?x16xf32>
  %o = loom.dot_general %a1, %w2, contracting_dims = [1] x [0]
      : (tensor<?x16xf32>, tensor<16x4xf32>) -> tensor<?x4xf32>
  %bb2 = loom.broadcast %b2, dims = [1] : tensor<4xf32> -> tensor<?x4xf32>
  %logits = loom.add %o, %bb2 : tensor<?x4xf32>
  %loss = loom.cross_entropy %logits, %labels reduction = mean
      : (tensor<?x4xf32>, tensor<?xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// loom-tensor-parallel on JAX's MLP (test/python/models/jax_models.py: mlp,
// x [4, 16], fc1 16->32, relu, fc2 32->10) as it arrives through StableHLO
// (Inputs/jax_mlp.stablehlo.mlir, written by Inputs/make_jax_tp.py):
// dot_general with W in [in, out] layout, each bias a chain of two
// broadcast_in_dim ops, relu as `max` with a splat. With loom-run --ranks 2
// every rank's loss and gradients equal the single-device ones.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: sed -n '1s|^// ||p' %S/Inputs/jax_mlp.stablehlo.mlir > %t/names.rsp
// RUN: loom-translate --import-stablehlo %S/Inputs/jax_mlp.stablehlo.mlir @%t/names.rsp \
// RUN:   '--trainable=params[.].*' \
// RUN: | loom-opt --pass-pipeline='builtin.module(inline, symbol-dce, loom-shape-inference)' \
// RUN:   -o %t/fwd.mlir
// RUN: loom-opt %t/fwd.mlir --loom-tensor-parallel=tp=2 -o %t/tp2-fwd.mlir
// RUN: FileCheck %s < %t/tp2-fwd.mlir
//
// RUN: %loompy %S/Inputs/tensor_parallel.py make %t %t/fwd.mlir --classes 10
// RUN: loom-opt %t/fwd.mlir --loom-autodiff -o %t/ref.mlir
// RUN: loom-run %t/ref.mlir --entry main_grad --weights %t/weights.safetensors \
// RUN:   --input x=%t/x.npy --input labels=%t/labels.npy --output-dir %t/ref
// RUN: loom-opt %t/tp2-fwd.mlir --loom-autodiff -o %t/tp2.mlir
// RUN: FileCheck %s --check-prefix=GRAD < %t/tp2.mlir
// RUN: %loompy %S/Inputs/tensor_parallel.py slice %t %t/tp2-fwd.mlir
// RUN: loom-run %t/tp2.mlir --entry main_grad --ranks 2 --weights %t/weights.safetensors \
// RUN:   @%t/2.rsp --input x=%t/x.npy --input labels=%t/labels.npy --output-dir %t/tp2
// RUN: %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/tp2-fwd.mlir \
// RUN:   %t/tp2/rank0 %t/tp2/rank1 | FileCheck %s --check-prefix=EQ
//
// The comparison has teeth: without the all-reduce of the row-parallel
// partial sums (here: the op replaced by its operand), each rank's logits
// are its share only.
// RUN: sed -e 's/shard.all_reduce \(%[0-9]*\) on @mesh grid_axes = \[2\] : \(.*\) -> .*$/loom.reshape \1 : \2 -> \2/' \
// RUN:   %t/tp2-fwd.mlir > %t/no-g.mlir
// RUN: not grep -q shard.all_reduce %t/no-g.mlir
// RUN: loom-opt %t/no-g.mlir --loom-autodiff -o %t/no-g-grad.mlir
// RUN: loom-run %t/no-g-grad.mlir --entry main_grad --ranks 2 --weights %t/weights.safetensors \
// RUN:   @%t/2.rsp --input x=%t/x.npy --input labels=%t/labels.npy --output-dir %t/no-g
// RUN: not %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/tp2-fwd.mlir \
// RUN:   %t/no-g/rank0 %t/no-g/rank1 | FileCheck %s --check-prefix=NOG

// fc1 is column-parallel: W [in, out] and its bias cut on out; fc2
// row-parallel: W cut on in, its bias whole.
// CHECK: shard.grid @mesh(shape = 1x1x2)
// CHECK-LABEL: func.func public @main(
// CHECK-SAME: %[[B1:[a-z0-9]+]]: tensor<16xf32> {loom.name = "params.fc1.b", loom.param, loom.shard = #loom.shard<dim = 0, parts = 2>}
// CHECK-SAME: %[[W1:[a-z0-9]+]]: tensor<16x16xf32> {loom.name = "params.fc1.w", loom.param, loom.shard = #loom.shard<dim = 1, parts = 2>}
// CHECK-SAME: %[[B2:[a-z0-9]+]]: tensor<10xf32> {loom.name = "params.fc2.b", loom.param}
// CHECK-SAME: %[[W2:[a-z0-9]+]]: tensor<16x10xf32> {loom.name = "params.fc2.w", loom.param, loom.shard = #loom.shard<dim = 0, parts = 2>}
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x16xf32> {loom.name = "x"}
// CHECK-NOT:  tensor<4x32xf32>
// CHECK:      %[[F:.*]] = loom.tp_copy %[[X]] on @mesh grid_axes = [2] : tensor<4x16xf32>
// CHECK-NEXT: %[[H:.*]] = loom.dot_general %[[F]], %[[W1]], contracting_dims = [1] x [0] : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: %[[BB:.*]] = loom.broadcast %[[B1]], dims = [1] : tensor<16xf32> -> tensor<1x16xf32>
// CHECK-NEXT: %[[BB2:.*]] = loom.broadcast %[[BB]], dims = [0, 1] : tensor<1x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT: %[[H1:.*]] = loom.add %[[H]], %[[BB2]] : tensor<4x16xf32>
// CHECK-NEXT: %[[ZERO:.*]] = loom.constant dense<0.000000e+00> : tensor<4x16xf32>
// CHECK-NEXT: %[[R:.*]] = loom.max %[[H1]], %[[ZERO]] : tensor<4x16xf32>
// CHECK-NEXT: %[[P:.*]] = loom.dot_general %[[R]], %[[W2]], contracting_dims = [1] x [0] : (tensor<4x16xf32>, tensor<16x10xf32>) -> tensor<4x10xf32>
// CHECK-NEXT: %[[S:.*]] = shard.all_reduce %[[P]] on @mesh grid_axes = [2] : tensor<4x10xf32> -> tensor<4x10xf32>
// CHECK-NEXT: loom.broadcast %[[B2]], dims = [1] : tensor<10xf32> -> tensor<1x10xf32>
// CHECK-NEXT: %[[C2:.*]] = loom.broadcast {{.*}} -> tensor<4x10xf32>
// CHECK-NEXT: loom.add %[[S]], %[[C2]] : tensor<4x10xf32>
// CHECK-NOT:  shard.all_reduce
// CHECK-NOT:  tensor<4x32xf32>
// CHECK:      return

// The backward pass: g's gradient passes through, and f's all-reduce is
// not needed (x is an input, not a parameter): the forward all-reduce only.
// GRAD-LABEL: func.func public @main_grad(
// GRAD:       loom.tp_copy
// GRAD:       shard.all_reduce
// GRAD-NOT:   shard.all_reduce
// GRAD:       return

// EQ: loss (full): max abs diff
// EQ: equivalent: yes (tolerance 1e-05, 2 ranks)
// NOG: equivalent: no

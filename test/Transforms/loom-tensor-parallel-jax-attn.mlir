// loom-tensor-parallel on a JAX attention block with separate Q, K and V
// projections of one input and the heads handled by einsum (batched
// dot_generals on [b, s, h, d] without transposes), imported from the
// checked-in StableHLO (Inputs/jax_attn.stablehlo.mlir, written by
// Inputs/make_jax_tp.py attn). The three column-parallel layers share one
// loom.tp_copy, placed before the first of them. With loom-run --ranks 2
// and 4 every rank's loss and gradients equal the single-device ones.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: sed -n '1s|^// ||p' %S/Inputs/jax_attn.stablehlo.mlir > %t/names.rsp
// RUN: loom-translate --import-stablehlo %S/Inputs/jax_attn.stablehlo.mlir @%t/names.rsp \
// RUN:   '--trainable=params[.].*' \
// RUN: | loom-opt --pass-pipeline='builtin.module(inline, symbol-dce, loom-shape-inference)' \
// RUN:   -o %t/fwd.mlir
// RUN: loom-opt %t/fwd.mlir --loom-tensor-parallel=tp=2 -o %t/tp2-fwd.mlir
// RUN: FileCheck %s < %t/tp2-fwd.mlir
//
// RUN: %loompy %S/Inputs/tensor_parallel.py make %t %t/fwd.mlir
// RUN: loom-opt %t/fwd.mlir --loom-autodiff -o %t/ref.mlir
// RUN: loom-run %t/ref.mlir --entry main_grad --weights %t/weights.safetensors \
// RUN:   --input x=%t/x.npy --output-dir %t/ref
// RUN: loom-opt %t/tp2-fwd.mlir --loom-autodiff -o %t/tp2.mlir
// RUN: %loompy %S/Inputs/tensor_parallel.py slice %t %t/tp2-fwd.mlir
// RUN: loom-run %t/tp2.mlir --entry main_grad --ranks 2 --weights %t/weights.safetensors \
// RUN:   @%t/2.rsp --input x=%t/x.npy --output-dir %t/tp2
// RUN: %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/tp2-fwd.mlir \
// RUN:   %t/tp2/rank0 %t/tp2/rank1 | FileCheck %s --check-prefix=EQ
// RUN: loom-opt %t/fwd.mlir --loom-tensor-parallel=tp=4 -o %t/tp4-fwd.mlir
// RUN: loom-opt %t/tp4-fwd.mlir --loom-autodiff -o %t/tp4.mlir
// RUN: %loompy %S/Inputs/tensor_parallel.py slice %t %t/tp4-fwd.mlir
// RUN: loom-run %t/tp4.mlir --entry main_grad --ranks 4 --weights %t/weights.safetensors \
// RUN:   @%t/4.rsp --input x=%t/x.npy --output-dir %t/tp4
// RUN: %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/tp4-fwd.mlir \
// RUN:   %t/tp4/rank0 %t/tp4/rank1 %t/tp4/rank2 %t/tp4/rank3 | FileCheck %s --check-prefix=EQ4
//
// Negative control: without the all-reduce of the output projection's
// partial sums the comparison fails.
// RUN: sed -e 's/shard.all_reduce \(%[0-9]*\) on @mesh grid_axes = \[2\] : \(.*\) -> .*$/loom.reshape \1 : \2 -> \2/' \
// RUN:   %t/tp2-fwd.mlir > %t/no-g.mlir
// RUN: not grep -q shard.all_reduce %t/no-g.mlir
// RUN: loom-opt %t/no-g.mlir --loom-autodiff -o %t/no-g-grad.mlir
// RUN: loom-run %t/no-g-grad.mlir --entry main_grad --ranks 2 --weights %t/weights.safetensors \
// RUN:   @%t/2.rsp --input x=%t/x.npy --output-dir %t/no-g
// RUN: not %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/tp2-fwd.mlir \
// RUN:   %t/no-g/rank0 %t/no-g/rank1 | FileCheck %s --check-prefix=NOG

// CHECK: shard.grid @mesh(shape = 1x1x2)
// CHECK-LABEL: func.func public @main(
// CHECK-SAME: %[[WK:[a-z0-9]+]]: tensor<16x8xf32> {loom.name = "params.wk", loom.param, loom.shard = #loom.shard<dim = 1, parts = 2>}
// CHECK-SAME: %[[WO:[a-z0-9]+]]: tensor<8x16xf32> {loom.name = "params.wo", loom.param, loom.shard = #loom.shard<dim = 0, parts = 2>}
// CHECK-SAME: %[[WQ:[a-z0-9]+]]: tensor<16x8xf32> {loom.name = "params.wq", loom.param, loom.shard = #loom.shard<dim = 1, parts = 2>}
// CHECK-SAME: %[[WV:[a-z0-9]+]]: tensor<16x8xf32> {loom.name = "params.wv", loom.param, loom.shard = #loom.shard<dim = 1, parts = 2>}
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x4x16xf32> {loom.name = "x"}
// CHECK-NOT:  loom.dot_general
// CHECK:      %[[F:.*]] = loom.tp_copy %[[X]] on @mesh grid_axes = [2] : tensor<2x4x16xf32>
// CHECK-NEXT: loom.dot_general %[[F]], %[[WQ]], {{.*}} -> tensor<2x4x8xf32>
// CHECK-NEXT: loom.reshape {{.*}} : tensor<2x4x8xf32> -> tensor<2x4x2x4xf32>
// CHECK-NEXT: loom.dot_general %[[F]], %[[WK]], {{.*}} -> tensor<2x4x8xf32>
// CHECK-NEXT: loom.reshape
// CHECK-NEXT: loom.dot_general %[[F]], %[[WV]], {{.*}} -> tensor<2x4x8xf32>
// CHECK-NEXT: loom.reshape
// CHECK-NEXT: loom.dot_general {{.*}} batching_dims = [0, 2] x [0, 2], {{.*}} -> tensor<2x2x4x4xf32>
// CHECK:      loom.dot_general {{.*}} batching_dims = [0, 2] x [0, 1], {{.*}} -> tensor<2x2x4x4xf32>
// CHECK-NEXT: loom.transpose {{.*}} -> tensor<2x4x2x4xf32>
// CHECK-NEXT: loom.reshape {{.*}} : tensor<2x4x2x4xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[P:.*]] = loom.dot_general %{{.*}}, %[[WO]], {{.*}} -> tensor<2x4x16xf32>
// CHECK-NEXT: shard.all_reduce %[[P]] on @mesh grid_axes = [2]
// CHECK-NOT:  loom.tp_copy
// CHECK-NOT:  shard.all_reduce
// CHECK:      return

// EQ: equivalent: yes (tolerance 1e-05, 2 ranks)
// EQ4: equivalent: yes (tolerance 1e-05, 4 ranks)
// NOG: equivalent: no

// RUN: loom-opt %s -split-input-file -convert-loom-to-loomrt -loom-memory-plan | FileCheck %s --check-prefix=RT
// RUN: loom-opt %s -split-input-file -convert-loom-to-loomrt -loom-memory-plan > %t.all.mlir
// RUN: sed -n '1,/^\/\/ -----/p' %t.all.mlir > %t.first.mlir
// RUN: loom-translate --emit-cpp %t.first.mlir -o %t.cpp
// RUN: FileCheck %s < %t.cpp
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -I %loom_src/include %t.cpp
// RUN: sed -n '/^\/\/ -----/,$p' %t.all.mlir > %t.second.mlir
// RUN: not loom-translate --emit-cpp %t.second.mlir -o /dev/null 2>&1 | FileCheck %s --check-prefix=ERR

// Each all-reduce runs on the group its grid names: dp and tp of a
// dp x tp mesh are different sub-communicators.
// RT: loomrt.all_reduce_start {{.*}}group = "tp"
// RT: loomrt.all_reduce_start {{.*}}group = "dp"
// CHECK: allReduceStart(ctx, {{.*}}, 4, ReduceOp::Sum, Group::Tp);
// CHECK: allReduceStart(ctx, {{.*}}, 4, ReduceOp::Sum, Group::Dp);
// CHECK: /*dp=*/2, /*tp=*/2, /*pp=*/1, /*stage=*/0};
shard.grid @dp(shape = 2)
shard.grid @tp(shape = 2)
func.func @main(%x: tensor<4xf32> {loom.name = "x"}) -> (tensor<f32> {loom.name = "loss"})
    attributes {loom.dp = 2 : i64, loom.tp = 2 : i64} {
  %a = shard.all_reduce %x on @tp grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  %b = shard.all_reduce %a on @dp grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  %l = loom.reduce_sum %b, dims = [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A grid the runtime has no group for is an emission error.
// ERR: error: emit-cpp: unknown group 'rows' (the runtime's groups are dp, tp, pp and world)
shard.grid @rows(shape = 2)
func.func @main(%x: tensor<4xf32> {loom.name = "x"}) -> (tensor<f32> {loom.name = "loss"}) {
  %a = shard.all_reduce %x on @rows grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  %l = loom.reduce_sum %a, dims = [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

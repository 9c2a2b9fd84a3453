// RUN: loom-opt %s -loom-fuse-elementwise -convert-loom-to-loomrt -loom-memory-plan -o %t.rt.mlir
// RUN: FileCheck %s --check-prefix=RT < %t.rt.mlir
// RUN: loom-translate --emit-cpp %t.rt.mlir -o %t.cpp
// RUN: FileCheck %s < %t.cpp
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -I %loom_src/include %t.cpp

// Each all-reduce runs on the group of the mesh axis it names: dp and tp of
// a dp x tp mesh are different sub-communicators. The lowering keeps the
// mesh; the emitter reads dp, tp and pp from it.
// RT: shard.grid @mesh(shape = 2x1x2)
// RT: loomrt.all_reduce_start {{.*}} on @mesh grid_axes = [2]
// RT: loomrt.all_reduce_start {{.*}} on @mesh grid_axes = [0]
// CHECK: allReduceStart(ctx, {{.*}}, 4, ReduceOp::Sum, Group::Tp);
// CHECK: allReduceStart(ctx, {{.*}}, 4, ReduceOp::Sum, Group::Dp);
// CHECK: /*dp=*/2, /*tp=*/2, /*pp=*/1, /*stage=*/0,
shard.grid @mesh(shape = 2x1x2)
func.func @main(%x: tensor<4xf32> {loom.name = "x"}) -> (tensor<f32> {loom.name = "loss"}) {
  %a = shard.all_reduce %x on @mesh grid_axes = [2] : tensor<4xf32> -> tensor<4xf32>
  %b = shard.all_reduce %a on @mesh grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  %l = loom.reduce_sum %b, dims = [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}


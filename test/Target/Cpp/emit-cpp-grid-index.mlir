// loom.grid_index lowers to loomrt.grid_index and prints as the rank's
// index in the runtime group of its mesh axis (tp: axis 2 of @mesh); two reductions to a
// scalar in one step (as the vocabulary-parallel cross-entropy's mean over
// the labels not ignored has) keep their accumulator in a block.
// RUN: loom-opt %s -loom-fuse-elementwise -convert-loom-to-loomrt -loom-memory-plan -o %t.rt.mlir
// RUN: FileCheck %s --check-prefix=RT < %t.rt.mlir
// RUN: loom-translate --emit-cpp %t.rt.mlir -o %t.cpp
// RUN: FileCheck %s < %t.cpp
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -I %loom_src/include %t.cpp

// RT: shard.grid @mesh(shape = 1x1x2)
// RT: loomrt.grid_index on @mesh grid_axes = [2] outs(%{{.*}} : memref<i64>)

// The two reductions are one function (the same loop on other buffers),
// its accumulator in a block, called twice.
// CHECK: static LOOM_KERNEL void [[R:k[0-9]+_reduce_sum]]({{.*}}) {
// CHECK-NEXT: {
// CHECK-NEXT: double acc = 0;
// CHECK-NOT: static LOOM_KERNEL void {{.*}}reduce_sum
// CHECK: [[RANK:t[0-9]+_[a-z_]+]][0] = static_cast<int64_t>(groupRank(ctx, Group::Tp));
// CHECK: // reduce sum over [0]
// CHECK-NEXT: [[R]](ctx, a0_w, [[S1:t[0-9]+_[a-z_]+]]);
// CHECK: // reduce sum over [0]
// CHECK-NEXT: [[R]](ctx, a1_x, [[S2:t[0-9]+_[a-z_]+]]);
shard.grid @mesh(shape = 1x1x2)
func.func @main(%w: tensor<4xf32> {loom.name = "w", loom.param},
                %x: tensor<4xf32> {loom.name = "x"}) -> (tensor<f32> {loom.name = "loss"}) {
  %r = loom.grid_index on @mesh grid_axes = [2] : tensor<i64>
  %rf = loom.convert %r : tensor<i64> -> tensor<f32>
  %s1 = loom.reduce_sum %w, dims = [0] : tensor<4xf32> -> tensor<f32>
  %s2 = loom.reduce_sum %x, dims = [0] : tensor<4xf32> -> tensor<f32>
  %q = loom.div %s1, %s2 : tensor<f32>
  %l = loom.add %q, %rf : tensor<f32>
  return %l : tensor<f32>
}

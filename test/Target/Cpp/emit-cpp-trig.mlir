// Rotary embeddings' cos and sin: loom.cos / loom.sin become math.cos /
// math.sin in a fused kernel and std::cos / std::sin in C++.
// RUN: loom-opt %s -loom-fuse-elementwise -convert-loom-to-loomrt -loom-memory-plan -o %t.rt.mlir
// RUN: FileCheck %s --check-prefix=RT < %t.rt.mlir
// RUN: loom-translate --emit-cpp %t.rt.mlir -o %t.cpp
// RUN: FileCheck %s < %t.cpp
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -I %loom_src/include %t.cpp

// RT: loomrt.kernel
// RT: math.cos
// RT: math.sin
// RT: arith.mulf

// CHECK: static LOOM_KERNEL void [[K:k[0-9]+_cos_sin_mul]](
// CHECK: const float [[C:v[0-9]+]] = std::cos(x{{[0-9]+}});
// CHECK-NEXT: const float [[S:v[0-9]+]] = std::sin([[C]]);
// CHECK-NEXT: const float [[M:v[0-9]+]] = [[S]] * x{{[0-9]+}};
// CHECK: // kernel cos+sin+mul -> r0_y
// CHECK-NEXT: [[K]](ctx, a0_x, a1_w, r0_y);
func.func @main(%x: tensor<2x8xf32> {loom.name = "x"}, %w: tensor<2x8xf32> {loom.name = "w", loom.param})
    -> (tensor<2x8xf32> {loom.name = "y"}) {
  %c = loom.cos %x : tensor<2x8xf32>
  %s = loom.sin %c : tensor<2x8xf32>
  %y = loom.mul %s, %w : tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

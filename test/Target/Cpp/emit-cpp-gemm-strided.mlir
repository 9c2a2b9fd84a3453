// Attention's heads read in place: the strided loomrt.gemm is one
// cpu::gemmStrided call (b x h matrices; rows h*d apart in q and k; the
// scores dense), and neither head transpose is copied.
// RUN: loom-opt %s -loom-fuse-elementwise -convert-loom-to-loomrt -loom-memory-plan -o %t.rt.mlir
// RUN: loom-translate --emit-cpp %t.rt.mlir -o %t.cpp
// RUN: FileCheck %s < %t.cpp
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -I %loom_src/include %t.cpp

// CHECK-NOT: cpu::copyStrided
// CHECK: cpu::gemmStrided(false, true, 2, 3, 5, 5, 4, a0_q, 60, 4, 12, a1_k, 60, 4, 12, [[S:[a-z0-9_]+]], 75, 25, 5);
// CHECK-NOT: cpu::copyStrided
func.func @main(%q: tensor<2x5x3x4xf32> {loom.name = "q", loom.param},
                %k: tensor<2x5x3x4xf32> {loom.name = "k", loom.param},
                %y: tensor<30xi64> {loom.name = "y"}) -> (tensor<f32> {loom.name = "loss"}) {
  %qt = loom.transpose %q, permutation = [0, 2, 1, 3] : tensor<2x5x3x4xf32> -> tensor<2x3x5x4xf32>
  %kt = loom.transpose %k, permutation = [0, 2, 1, 3] : tensor<2x5x3x4xf32> -> tensor<2x3x5x4xf32>
  %s = loom.dot_general %qt, %kt, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>) -> tensor<2x3x5x5xf32>
  %r = loom.reshape %s : tensor<2x3x5x5xf32> -> tensor<30x5xf32>
  %l = loom.cross_entropy %r, %y : (tensor<30x5xf32>, tensor<30xi64>) -> tensor<f32>
  return %l : tensor<f32>
}

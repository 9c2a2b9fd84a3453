// A bool computed from 64-bit integers (the cross-entropy gradient's
// one-hot `labels == iota`) and widened to float is a select in the
// generated loop: GCC vectorises no loop that converts such a bool with
// static_cast, and the loop runs over the whole logits tensor. The
// program compiles warning-free.
// RUN: loom-opt %s -loom-fuse-elementwise -convert-loom-to-loomrt \
// RUN:   -loom-memory-plan | loom-translate --emit-cpp - -o %t.cpp
// RUN: FileCheck %s < %t.cpp
// RUN: c++ -std=c++17 -fsyntax-only -fopenmp -Wall -Wextra -Werror -I %loom_src/include %t.cpp

// CHECK: static LOOM_KERNEL void {{k[0-9]+_compare_convert_sub}}(
// CHECK: const bool [[HIT:v[0-9]+]] = ({{x[0-9]+}} == {{x[0-9]+}});
// CHECK-NEXT: const float {{v[0-9]+}} = ([[HIT]] ? static_cast<float>(1) : static_cast<float>(0));
// CHECK-NOT: static_cast<float>([[HIT]])
func.func @main(%labels: tensor<4x8xi64> {loom.name = "labels"},
                %iota: tensor<4x8xi64> {loom.name = "iota"},
                %p: tensor<4x8xf32> {loom.name = "p"})
    -> (tensor<4x8xf32> {loom.name = "g"}) {
  %hit = loom.compare eq, %labels, %iota : (tensor<4x8xi64>, tensor<4x8xi64>) -> tensor<4x8xi1>
  %onehot = loom.convert %hit : tensor<4x8xi1> -> tensor<4x8xf32>
  %g = loom.sub %p, %onehot : tensor<4x8xf32>
  return %g : tensor<4x8xf32>
}

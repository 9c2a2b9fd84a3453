// loom-fuse-elementwise folds a reduction's single-reader elementwise
// operand chain into the reduction: convert-loom-to-loomrt gives one
// loomrt.reduce whose body computes each element from the chain's inputs
// (no buffer for the product), and both emitters compute it inside the
// reduction's loop. The numbers: test/python/test_training.py (the GPT's
// softmax and layer-norm gradients and the mean's count fold this way).
// RUN: loom-opt %s -loom-fuse-elementwise -convert-loom-to-loomrt -loom-memory-plan -o %t.rt.mlir
// RUN: FileCheck %s < %t.rt.mlir
// RUN: loom-translate --emit-cpp %t.rt.mlir -o %t.cpp
// RUN: FileCheck %s --check-prefix=CPP < %t.cpp
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -I %loom_src/include %t.cpp
// RUN: loom-translate --emit-cuda %t.rt.mlir -o %t.cu
// RUN: FileCheck %s --check-prefix=CUDA < %t.cu
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -DLOOM_CUDA_EMULATION -x c++ -I %loom_src/include %t.cu

// CHECK-LABEL: func.func @main
// CHECK-NOT: memref<4x8xf32>{{.*}}category
// CHECK: loomrt.reduce sum [1] ins(%arg0, %arg1 : memref<4x8xf32>, memref<4x8xf32>) outs(%{{.*}} : memref<4xf32>) attributes {origin = "mul+reduce_sum"} {
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT: loomrt.yield %[[P]] : f32
// CHECK: loomrt.reduce sum [0] ins(%arg2 : memref<4xi64>) outs(%{{.*}} : memref<f32>) attributes {origin = "convert+reduce_sum"} {
// CHECK: arith.sitofp

// The row sum reads both inputs at one index and sums their product.
// CPP: const int64_t e = base + r0;
// CPP-NEXT: const float x0 = p0[e];
// CPP-NEXT: const float x1 = p1[e];
// CPP-NEXT: const float [[V:v[0-9]+]] = x0 * x1;
// CPP-NEXT: const double x = [[V]];
// CPP-NEXT: acc += x;
// A sum of converted integers accumulates as the output's type (double,
// stored as float), not the input's.
// CPP: const int64_t x0 = p0[e];
// CPP: const double x = v{{[0-9]+}};
// CPP: static_cast<float>(acc)

// CUDA: const int64_t e = base + r0;
// CUDA-NEXT: const float x0 = p0[e];
// CUDA-NEXT: const float x1 = p1[e];
func.func @main(%dy: tensor<4x8xf32> {loom.name = "dy"}, %y: tensor<4x8xf32> {loom.name = "y"},
                %m: tensor<4xi64> {loom.name = "m"}) -> (tensor<4xf32> {loom.name = "s"}, tensor<f32> {loom.name = "n"}) {
  %p = loom.mul %dy, %y : tensor<4x8xf32>
  %s = loom.reduce_sum %p, dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %c = loom.convert %m : tensor<4xi64> -> tensor<4xf32>
  %n = loom.reduce_sum %c, dims = [0] : tensor<4xf32> -> tensor<f32>
  return %s, %n : tensor<4xf32>, tensor<f32>
}

// A sum of two products (loom-fuse-gemm-accumulate): the first gemm writes
// its product, the second adds its own onto it (cpu::gemmAccumulate on the
// CPU, cuda::gemmAccumulate: cuBLAS with beta = 1 on CUDA), no add kernel,
// and the loss reads the first product's buffer; both sources compile
// warning-free (CUDA against the emulation header).
// RUN: loom-opt %s -loom-fuse-elementwise -convert-loom-to-loomrt -loom-fuse-gemm-accumulate -loom-memory-plan -o %t.rt.mlir
// RUN: loom-translate --emit-cpp %t.rt.mlir -o %t.cpp
// RUN: FileCheck %s --check-prefix=CPU < %t.cpp
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -I %loom_src/include %t.cpp
// RUN: loom-translate --emit-cuda %t.rt.mlir -o %t.cu
// RUN: FileCheck %s --check-prefix=CUDA < %t.cu
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -DLOOM_CUDA_EMULATION -x c++ -I %loom_src/include %t.cu

// CPU-NOT: void k{{[0-9]+}}_add
// CPU: cpu::gemm(false, false, 1, 2, 8, 4, a2_x0, 0, a0_w0, 0, [[L:t[0-9]+_activation]], 16);
// CPU: cpu::gemmAccumulate(false, false, 2, 8, 4, a3_x1, a1_w1, [[L]]);
// CPU-NEXT: traceOp(ctx, "gemm dot_general+add");
// CPU: cpu::crossEntropy(ctx, "cross_entropy", [[L]], a4_y, r0_loss, 2, 8,

// CUDA-NOT: __global__
// CUDA: cuda::gemmAccumulate(ctx, false, false, 2, 8, 4, a3_x1, a1_w1, [[L:t[0-9]+_activation]]);
// CUDA: cuda::crossEntropy(ctx, "cross_entropy", [[L]], a4_y, r0_loss, 2, 8,
func.func @main(%w0: tensor<4x8xf32> {loom.name = "w0", loom.param},
                %w1: tensor<4x8xf32> {loom.name = "w1", loom.param},
                %x0: tensor<2x4xf32> {loom.name = "x0"},
                %x1: tensor<2x4xf32> {loom.name = "x1"},
                %y: tensor<2xi64> {loom.name = "y"}) -> (tensor<f32> {loom.name = "loss"}) {
  %h0 = loom.dot_general %x0, %w0, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
  %h1 = loom.dot_general %x1, %w1, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
  %l = loom.add %h0, %h1 : tensor<2x8xf32>
  %loss = loom.cross_entropy %l, %y : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

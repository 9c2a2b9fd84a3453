// A linear layer's bias added by its gemm (loom-fuse-gemm-bias): one
// cpu::gemmBias call on the CPU, one cuda::gemmBias (cuBLASLt's bias
// epilogue) on CUDA, writing the logits the loss reads; both sources
// compile warning-free (CUDA against the emulation header).
// RUN: loom-opt %s -loom-fuse-elementwise -convert-loom-to-loomrt -loom-fuse-gemm-bias -loom-memory-plan -o %t.rt.mlir
// RUN: loom-translate --emit-cpp %t.rt.mlir -o %t.cpp
// RUN: FileCheck %s --check-prefix=CPU < %t.cpp
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -I %loom_src/include %t.cpp
// RUN: loom-translate --emit-cuda %t.rt.mlir -o %t.cu
// RUN: FileCheck %s --check-prefix=CUDA < %t.cu
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -DLOOM_CUDA_EMULATION -x c++ -I %loom_src/include %t.cu

// CPU-NOT: void k{{[0-9]+}}_add
// CPU: cpu::gemmBias(false, false, 2, 8, 4, a2_x, a0_w, a1_b, [[L:t[0-9]+_activation]]);
// CPU-NEXT: traceOp(ctx, "gemm dot_general+add");
// CPU: cpu::crossEntropy(ctx, "cross_entropy", [[L]], a3_y, r0_loss, 2, 8,

// CUDA-NOT: __global__
// CUDA: cuda::gemmBias(ctx, false, false, 2, 8, 4, a2_x, a0_w, a1_b, [[L:t[0-9]+_activation]]);
// CUDA: cuda::crossEntropy(ctx, "cross_entropy", [[L]], a3_y, r0_loss, 2, 8,
func.func @main(%w: tensor<4x8xf32> {loom.name = "w", loom.param},
                %b: tensor<8xf32> {loom.name = "b", loom.param},
                %x: tensor<2x4xf32> {loom.name = "x"},
                %y: tensor<2xi64> {loom.name = "y"}) -> (tensor<f32> {loom.name = "loss"}) {
  %h = loom.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
  %bb = loom.broadcast %b, dims = [1] : tensor<8xf32> -> tensor<2x8xf32>
  %l = loom.add %h, %bb : tensor<2x8xf32>
  %loss = loom.cross_entropy %l, %y : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

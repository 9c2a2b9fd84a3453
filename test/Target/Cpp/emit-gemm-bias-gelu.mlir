// A linear layer, its bias and its tanh GELU in one gemm of the training
// step (loom-fuse-gemm-bias): cpu::gemmBiasGelu on the CPU,
// cuda::gemmBiasGelu (cuBLASLt's GELU_AUX_BIAS epilogue) on CUDA, writing
// the activation the next layer reads and the pre-activation the GELU's
// gradient reads; in the backward pass the next layer's input gradient
// and the GELU gradient in one gemm reading that pre-activation
// (gemmDGelu, cuBLASLt's DGELU epilogue), no GELU kernel left; both
// sources compile warning-free (CUDA against the emulation header).
// RUN: loom-opt %s -loom-autodiff -loom-optimizer="optimizer=sgd lr=0.1" \
// RUN:   -loom-fuse-elementwise -convert-loom-to-loomrt="function=main_step" \
// RUN:   -loom-fuse-gemm-bias -loom-memory-plan -o %t.rt.mlir
// RUN: loom-translate --emit-cpp %t.rt.mlir -o %t.cpp
// RUN: FileCheck %s --check-prefix=CPU < %t.cpp
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -I %loom_src/include %t.cpp
// RUN: loom-translate --emit-cuda %t.rt.mlir -o %t.cu
// RUN: FileCheck %s --check-prefix=CUDA < %t.cu
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -DLOOM_CUDA_EMULATION -x c++ -I %loom_src/include %t.cu

// CPU-NOT: {{k[0-9]+_gelu|tanh}}
// CPU: cpu::gemmBiasGelu(false, false, 2, 8, 4, [[X:a[0-9]+_x]], {{a[0-9]+_w}}, {{a[0-9]+_b}}, [[PRE:t[0-9]+_activation]], [[H:t[0-9]+_activation]]);
// CPU-NEXT: traceOp(ctx, "gemm dot_general+add+gelu");
// CPU: cpu::gemm(false, false, 1, 2, 8, 8, [[H]], 0, {{a[0-9]+_v}},
// CPU: cpu::gemm(true, false, 1, 8, 8, 2, [[H]], 0, [[DO:t[0-9]+_gradient]], 0,
// CPU: cpu::gemmDGelu(false, true, 2, 8, 8, [[DO]], {{a[0-9]+_v}}, [[PRE]], {{t[0-9]+_gradient}});
// CPU-NEXT: traceOp(ctx, "gemm dot_general+gelu_grad");

// CUDA-NOT: gelu(
// CUDA: cuda::gemmBiasGelu(ctx, false, false, 2, 8, 4, {{a[0-9]+_x}}, {{a[0-9]+_w}}, {{a[0-9]+_b}}, [[CPRE:t[0-9]+_activation]], [[H:t[0-9]+_activation]]);
// CUDA: cuda::gemm(ctx, false, false, 1, 2, 8, 8, [[H]], 0, {{a[0-9]+_v}},
// CUDA: cuda::gemmDGelu(ctx, false, true, 2, 8, 8, {{t[0-9]+_gradient}}, {{a[0-9]+_v}}, [[CPRE]], {{t[0-9]+_gradient}});
func.func @main(%w: tensor<4x8xf32> {loom.name = "w", loom.param},
                %b: tensor<8xf32> {loom.name = "b", loom.param},
                %x: tensor<2x4xf32> {loom.name = "x"},
                %y: tensor<2xi64> {loom.name = "y"},
                %v: tensor<8x8xf32> {loom.name = "v", loom.param}) -> (tensor<f32> {loom.name = "loss"}) {
  %h = loom.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
  %bb = loom.broadcast %b, dims = [1] : tensor<8xf32> -> tensor<2x8xf32>
  %l = loom.add %h, %bb : tensor<2x8xf32>
  %g = loom.gelu %l approximate = tanh : tensor<2x8xf32>
  %o = loom.dot_general %g, %v, contracting_dims = [1] x [0] : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %loss = loom.cross_entropy %o, %y : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

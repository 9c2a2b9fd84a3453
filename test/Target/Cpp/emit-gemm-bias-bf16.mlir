// --precision bf16's linear layer: the bias, narrowed to bf16 after the
// gemm, is still added by the gemm (loom-fuse-gemm-bias: the add widens
// both and rounds the f32 sum once, as the runtimes' bf16 gemmBias does).
// One cpu::gemmBias / cuda::gemmBias call on bf16 buffers; both sources
// compile warning-free (CUDA against the emulation header).
// RUN: loom-opt %s -loom-mixed-precision=function=main -loom-fuse-elementwise -convert-loom-to-loomrt -loom-fuse-gemm-bias -loom-memory-plan -o %t.rt.mlir
// RUN: loom-translate --emit-cpp %t.rt.mlir -o %t.cpp
// RUN: FileCheck %s --check-prefix=CPU < %t.cpp
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -I %loom_src/include %t.cpp
// RUN: loom-translate --emit-cuda %t.rt.mlir -o %t.cu
// RUN: FileCheck %s --check-prefix=CUDA < %t.cu
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -DLOOM_CUDA_EMULATION -x c++ -I %loom_src/include %t.cu

// CPU-NOT: void k{{[0-9]+}}_add(
// CPU: bf16 *[[B:t[0-9]+_activation]] = {{.*}} // memref<8xbf16>
// CPU: cpu::gemmBias(false, false, 2, 8, 4, {{t[0-9]+_activation}}, {{t[0-9]+_activation}}, [[B]], [[H:t[0-9]+_activation]]);
// CPU-NEXT: traceOp(ctx, "gemm dot_general+add");
// CPU: cpu::gemm(false, false, 1, 2, 8, 8, [[H]],

// CUDA: cuda::gemmBias(ctx, false, false, 2, 8, 4, {{t[0-9]+_activation}}, {{t[0-9]+_activation}}, {{t[0-9]+_activation}}, [[H:t[0-9]+_activation]]);
// CUDA: cuda::gemm(ctx, false, false, 1, 2, 8, 8, [[H]],
func.func @main(%w: tensor<4x8xf32> {loom.name = "w", loom.param},
                %b: tensor<8xf32> {loom.name = "b", loom.param},
                %v: tensor<8x8xf32> {loom.name = "v", loom.param},
                %x: tensor<2x4xf32> {loom.name = "x"},
                %y: tensor<2xi64> {loom.name = "y"}) -> (tensor<f32> {loom.name = "loss"}) {
  %h = loom.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
  %bb = loom.broadcast %b, dims = [1] : tensor<8xf32> -> tensor<2x8xf32>
  %l = loom.add %h, %bb : tensor<2x8xf32>
  %z = loom.dot_general %l, %v, contracting_dims = [1] x [0] : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %s = loom.add %z, %l : tensor<2x8xf32>
  %loss = loom.cross_entropy %s, %y : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

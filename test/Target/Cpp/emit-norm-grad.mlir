// An f32 layer norm's and RMS norm's gradients (loom.norm_grad, what their
// reverse-mode rules emit) lower to one loomrt.norm_grad each and are one
// runtime call, cpu::normGrad / cuda::normGrad: the input's gradient and
// the scale's and bias's sums over the rows (2 x 3 = 6 rows of 4), no
// kernels for the statistics. Both sources compile warning-free (CUDA
// against the emulation header).
// RUN: loom-opt %s -loom-fuse-elementwise -convert-loom-to-loomrt -o %t.lowered.mlir
// RUN: FileCheck %s --check-prefix=RT < %t.lowered.mlir
// RUN: loom-opt %t.lowered.mlir -loom-memory-plan -o %t.rt.mlir
// RUN: loom-translate --emit-cpp %t.rt.mlir -o %t.cpp
// RUN: FileCheck %s --check-prefix=CPU < %t.cpp
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -I %loom_src/include %t.cpp
// RUN: loom-translate --emit-cuda %t.rt.mlir -o %t.cu
// RUN: FileCheck %s --check-prefix=CUDA < %t.cu
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -DLOOM_CUDA_EMULATION -x c++ -I %loom_src/include %t.cu

// RT-LABEL: func.func @main(
// RT-NOT:     loomrt.reduce
// RT:         loomrt.norm_grad 2 ins(%arg0, %arg1 : memref<2x3x4xf32>, memref<2x3x4xf32>) scale(%arg2 : memref<4xf32>) outs(%arg3, %arg4, %arg5 : memref<2x3x4xf32>, memref<4xf32>, memref<4xf32>) {epsilon = 1.000000e-05 : f64, origin = "norm_grad", rms = false}
// RT:         loomrt.norm_grad 1 ins(%arg0, %arg1 : memref<2x3x4xf32>, memref<2x3x4xf32>) outs(%arg6, %{{.+}}, %{{.+}} : memref<2x3x4xf32>, memref<3x4xf32>, memref<3x4xf32>) {epsilon = 9.9999999999999995E-7 : f64, origin = "norm_grad", rms = true}
// RT-NOT:     loomrt.kernel

// CPU: cpu::normGrad(a0_x, a1_dy, a2_g, nullptr, r0_dx, r1_dg, r2_db, 6, 4, 1.0000000000000001e-05, false);
// CPU: cpu::normGrad(a0_x, a1_dy, nullptr, nullptr, r3_dx_rms, {{t[0-9]+_[a-z]+}}, {{t[0-9]+_[a-z]+}}, 2, 12, 9.9999999999999995e-07, true);

// CUDA: cuda::normGrad(ctx, a0_x, a1_dy, a2_g, nullptr, r0_dx, r1_dg, r2_db, 6, 4, 1.0000000000000001e-05, false);
// CUDA: cuda::normGrad(ctx, a0_x, a1_dy, nullptr, nullptr, r3_dx_rms,
func.func @main(%x: tensor<2x3x4xf32> {loom.name = "x"},
                %dy: tensor<2x3x4xf32> {loom.name = "dy"},
                %g: tensor<4xf32> {loom.name = "g", loom.param})
    -> (tensor<2x3x4xf32> {loom.name = "dx"}, tensor<4xf32> {loom.name = "dg"},
        tensor<4xf32> {loom.name = "db"},
        tensor<2x3x4xf32> {loom.name = "dx_rms"}) {
  %dx, %dg, %db = loom.norm_grad %x, %dy scale %g axis = 2 epsilon = 1.0e-05
      : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<4xf32>)
        -> (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>)
  %r:3 = loom.norm_grad %x, %dy axis = 1 epsilon = 1.0e-06 rms
      : (tensor<2x3x4xf32>, tensor<2x3x4xf32>)
        -> (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>)
  return %dx, %dg, %db, %r#0 : tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x3x4xf32>
}

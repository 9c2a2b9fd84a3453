// bf16 buffers (--precision bf16): loops load bf16 into float, compute in
// float and round at each bf16 op's result, and store that rounded value
// by its bits (no second rounding); the product
// is the runtime's bf16 gemm overload on bf16 buffers. A loop holds bf16
// values as floats and reads and writes the buffers' bits (a loop that
// copies the bf16 struct is not vectorised). The program compiles
// warning-free.
// RUN: loom-opt %s -loom-mixed-precision -convert-loom-to-loomrt -loom-memory-plan \
// RUN:   | loom-translate --emit-cpp - -o %t.cpp
// RUN: FileCheck %s < %t.cpp
// RUN: c++ -std=c++17 -fsyntax-only -fopenmp -Wall -Wextra -Werror -I %loom_src/include %t.cpp

// The conversions to bf16 of x and w (one loop function, same shape).
// CHECK: static LOOM_KERNEL void [[NARROW:k[0-9]+_convert]]({{.*}}, const float *p0, bf16 *p1) {
// CHECK: const float x0 = p0[i];
// CHECK-NEXT: const float v1 = bf16::roundToFloat(static_cast<float>(x0));
// CHECK-NEXT: p1[i].bits = bf16::bitsOf(v1);
// The activation on the bf16 product: widened, computed in float (erf's
// constants are float), stored as bf16.
// CHECK: static LOOM_KERNEL void [[GELU:k[0-9]+_gelu]]({{.*}}, const bf16 *p0, bf16 *p1) {
// CHECK: const float x0 = bf16::toFloat(p0[i].bits);
// CHECK-NEXT: const float v1 = static_cast<float>(x0);
// CHECK: vm::erf(
// CHECK: const float [[R:v[0-9]+]] = bf16::roundToFloat(static_cast<float>(
// CHECK-NEXT: p1[i].bits = bf16::bitsOf([[R]]);
// CHECK-NOT: const bf16 
// CHECK: static LOOM_KERNEL void {{k[0-9]+_convert}}({{.*}}, const bf16 *p0, float *p1) {
// CHECK-LABEL: void step(
// CHECK: bf16 *[[XB:t[0-9]+_activation]] = reinterpret_cast<bf16 *>(
// CHECK: [[NARROW]](ctx, a0_x, [[XB]]);
// CHECK: bf16 *[[WB:t[0-9]+_activation]] = reinterpret_cast<bf16 *>(
// CHECK: [[NARROW]](ctx, a1_w, [[WB]]);
// CHECK: bf16 *[[P:t[0-9]+_activation]] = reinterpret_cast<bf16 *>(
// CHECK: cpu::gemm(false, false, 1, 4, 4, 4, [[XB]], 0, [[WB]], 0, [[P]], 16);
// CHECK: [[GELU]](ctx, [[P]],
func.func @main(%x: tensor<4x4xf32> {loom.name = "x"},
                %w: tensor<4x4xf32> {loom.name = "w", loom.param})
    -> (tensor<4x4xf32> {loom.name = "y"}) {
  %p = loom.dot_general %x, %w, contracting_dims = [1] x [0]
      : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = loom.gelu %p : tensor<4x4xf32>
  return %g : tensor<4x4xf32>
}

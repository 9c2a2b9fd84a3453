// Generated loops are functions of their buffers, one per distinct text:
// the same loop on other buffers of the same shape (the next layer's, the
// next micro-batch's) calls the same function; a loop over another shape
// is another function. The program compiles warning-free.
// RUN: loom-opt %s -convert-loom-to-loomrt -loom-memory-plan | loom-translate --emit-cpp - -o %t.cpp
// RUN: FileCheck %s < %t.cpp
// RUN: c++ -std=c++17 -fsyntax-only -fopenmp -Wall -Wextra -Werror -I %loom_src/include %t.cpp

// CHECK: static LOOM_KERNEL void [[SMALL:k[0-9]+_tanh]]({{.*}}, const float *p0, float *p1) {
// CHECK-NEXT: #pragma GCC ivdep
// CHECK-NEXT: for (int64_t i = 0; i < 16; ++i) {
// CHECK: static LOOM_KERNEL void [[BIG:k[0-9]+_tanh]]({{.*}}, const float *p0, float *p1) {
// CHECK-NEXT: #pragma GCC ivdep
// CHECK-NEXT: for (int64_t i = 0; i < 32; ++i) {
// CHECK-NOT: static LOOM_KERNEL
// CHECK-LABEL: void step(
// CHECK: // kernel tanh -> r0_a
// CHECK-NEXT: [[SMALL]](ctx, a0_x, r0_a);
// CHECK: // kernel tanh -> r1_b
// CHECK-NEXT: [[SMALL]](ctx, a1_y, r1_b);
// CHECK: // kernel tanh -> r2_c
// CHECK-NEXT: [[BIG]](ctx, a2_z, r2_c);
func.func @main(%x: tensor<2x8xf32> {loom.name = "x"}, %y: tensor<2x8xf32> {loom.name = "y"},
                %z: tensor<4x8xf32> {loom.name = "z", loom.param})
    -> (tensor<2x8xf32> {loom.name = "a"}, tensor<2x8xf32> {loom.name = "b"},
        tensor<4x8xf32> {loom.name = "c"}) {
  %a = loom.tanh %x : tensor<2x8xf32>
  %b = loom.tanh %y : tensor<2x8xf32>
  %c = loom.tanh %z : tensor<4x8xf32>
  return %a, %b, %c : tensor<2x8xf32>, tensor<2x8xf32>, tensor<4x8xf32>
}

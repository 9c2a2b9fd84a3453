// A bool buffer (an attention mask, broadcast along the batch) is read as
// its byte in the generated loop: GCC does not vectorise a loop that loads
// bool next to floats. The program compiles warning-free.
// RUN: loom-opt %s -convert-loom-to-loomrt -loom-memory-plan \
// RUN:   | loom-translate --emit-cpp - -o %t.cpp
// RUN: FileCheck %s < %t.cpp
// RUN: c++ -std=c++17 -fsyntax-only -fopenmp -Wall -Wextra -Werror -I %loom_src/include %t.cpp

// CHECK: static LOOM_KERNEL void {{k[0-9]+_select}}({{.*}}const bool *[[M:p[0-9]+]]{{.*}}) {
// CHECK: const bool [[X:x[0-9]+]] = (reinterpret_cast<const unsigned char *>([[M]])[{{.*}}] != 0);
// CHECK: ([[X]] ? 
// CHECK-NOT: const bool {{x[0-9]+}} = [[M]][
func.func @main(%x: tensor<2x4x4xf32> {loom.name = "x"})
    -> (tensor<2x4x4xf32> {loom.name = "y"}) {
  %causal = loom.constant dense<[[true, false, false, false],
                                 [true, true, false, false],
                                 [true, true, true, false],
                                 [true, true, true, true]]> : tensor<4x4xi1>
  %mask = loom.broadcast %causal, dims = [1, 2]
      : tensor<4x4xi1> -> tensor<2x4x4xi1>
  %low = loom.constant dense<-1.000000000e+09> : tensor<2x4x4xf32>
  %y = loom.select %mask, %x, %low : tensor<2x4x4xi1>, tensor<2x4x4xf32>
  return %y : tensor<2x4x4xf32>
}

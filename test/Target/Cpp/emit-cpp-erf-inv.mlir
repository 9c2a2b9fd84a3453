// loom.erf_inv has no math dialect op: a kernel computes it from
// Winitzki's closed-form start and two Newton steps on erf(y) - |x|, +-inf
// at |x| = 1, the sign restored last. The C++ compiles warning-free.
// RUN: loom-opt %s -loom-fuse-elementwise -convert-loom-to-loomrt -loom-memory-plan -o %t.rt.mlir
// RUN: FileCheck %s --check-prefix=RT < %t.rt.mlir
// RUN: loom-translate --emit-cpp %t.rt.mlir -o %t.cpp
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -I %loom_src/include %t.cpp
// RUN: loom-translate --emit-cuda %t.rt.mlir -o %t.cu
// RUN: FileCheck %s --check-prefix=CUDA < %t.cu

// RT: loomrt.kernel
// RT: %[[AX:.*]] = math.absf %[[X:[^ ]*]] : f32
// RT: math.log
// RT-COUNT-2: math.sqrt
// RT: math.erf
// RT: math.exp
// RT: math.erf
// RT: math.exp
// RT: %[[ONE:.*]] = arith.cmpf oeq, %[[AX]]
// RT: %[[INF:.*]] = arith.select %[[ONE]], %{{.*}}
// RT: %[[NEG:.*]] = arith.cmpf olt, %[[X]]
// RT: arith.select %[[NEG]]

// CUDA: __global__ void k0_erf_inv(
// CUDA: std::erf(
// CUDA: INFINITY
func.func @main(%x: tensor<2x8xf32> {loom.name = "x"})
    -> (tensor<2x8xf32> {loom.name = "y"}) {
  %y = loom.erf_inv %x : tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

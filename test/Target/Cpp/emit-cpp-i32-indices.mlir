// JAX (through StableHLO) indexes with i32: embedding lookups, their
// gradients (scatter_add) and labels. The emitted calls pass the i32
// buffers to the runtime's i32 overloads, with no widening copy.
// RUN: loom-opt %s -loom-fuse-elementwise -convert-loom-to-loomrt -loom-memory-plan -o %t.rt.mlir
// RUN: FileCheck %s --check-prefix=RT < %t.rt.mlir
// RUN: loom-translate --emit-cpp %t.rt.mlir -o %t.cpp
// RUN: FileCheck %s < %t.cpp
// Overload resolution picks the int32_t kernels; an int32_t * would not
// convert to the int64_t * ones, so this compile checks the declarations.
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -I %loom_src/include %t.cpp

// RT: loomrt.gather {{.*}}memref<3xi32>
// RT: loomrt.scatter_add {{.*}}memref<3xi32>
// RT: loomrt.cross_entropy {{.*}}memref<3xi32>
// RT-NOT: loomrt.kernel

// CHECK: int32_t *a1_ids = static_cast<int32_t *>(args[1]); // memref<3xi32>
// CHECK: int32_t *a2_labels = static_cast<int32_t *>(args[2]); // memref<3xi32>
// CHECK: cpu::gather(ctx, "gather", a0_wte, 4, a1_ids, [[E:t[0-9]+_[a-z]+]], 1, 5, 4, 3);
// CHECK: cpu::scatterAdd(ctx, "scatter_add", a0_wte, a1_ids, [[E]], r1_table, 1, 5, 4, 3);
// CHECK: cpu::crossEntropy(ctx, "cross_entropy", [[L:[a-z0-9_]+]], a2_labels, r0_loss, 3, 5, cpu::Reduction::Mean, false, 0);
// CHECK: {"ids", Role::Data, DType::I32, 1, {3}, -1, false},
// CHECK-NEXT: {"labels", Role::Data, DType::I32, 1, {3}, -1, false},
func.func @main(%wte: tensor<5x4xf32> {loom.name = "wte", loom.param},
                %ids: tensor<3xi32> {loom.name = "ids"},
                %labels: tensor<3xi32> {loom.name = "labels"})
    -> (tensor<f32> {loom.name = "loss"}, tensor<5x4xf32> {loom.name = "table"}) {
  %e = loom.gather %wte[%ids], axis = 0 : (tensor<5x4xf32>, tensor<3xi32>) -> tensor<3x4xf32>
  %s = loom.scatter_add %wte[%ids], %e, axis = 0 : (tensor<5x4xf32>, tensor<3xi32>, tensor<3x4xf32>) -> tensor<5x4xf32>
  %logits = loom.dot_general %e, %s, contracting_dims = [1] x [1] : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<3x5xf32>
  %l = loom.cross_entropy %logits, %labels : (tensor<3x5xf32>, tensor<3xi32>) -> tensor<f32>
  return %l, %s : tensor<f32>, tensor<5x4xf32>
}

// RUN: loom-opt %s -loom-shape-inference | FileCheck %s
// RUN: loom-opt %s -loom-shape-inference="arg-shapes=x=8x4" | FileCheck %s --check-prefix=BIND
// RUN: loom-opt %s -loom-shape-inference="arg-shapes=arg0=8x4 function=symbolic_batch" | FileCheck %s --check-prefix=BIND

// Without arg-shapes, dynamic arguments stay dynamic and so does what
// depends on them; with arg-shapes=x=8x4 everything becomes static.
// CHECK-LABEL: func.func @symbolic_batch
// CHECK-SAME: (%{{.*}}: tensor<?x4xf32> {loom.name = "x"}
// CHECK-SAME: -> tensor<?xf32>
// BIND-LABEL: func.func @symbolic_batch
// BIND-SAME: (%{{.*}}: tensor<8x4xf32> {loom.name = "x"}
// BIND-SAME: -> tensor<8xf32>
// BIND: loom.softmax {{.*}} : tensor<8x4xf32>
// BIND: loom.reduce_max {{.*}} : tensor<8x4xf32> -> tensor<8xf32>
func.func @symbolic_batch(%x: tensor<?x4xf32> {loom.name = "x"}) -> tensor<?xf32> {
  %0 = loom.softmax %x, axis = 1 : tensor<?x4xf32>
  %1 = loom.reduce_max %0, dims = [1] : tensor<?x4xf32> -> tensor<?xf32>
  return %1 : tensor<?xf32>
}

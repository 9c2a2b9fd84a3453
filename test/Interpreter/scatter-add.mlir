// loom.scatter_add: each update slice is added at its index; duplicate
// indices accumulate, and an index out of range is an error.
//
// RUN: loom-run %s --print | FileCheck %s
// RUN: not loom-run %s --entry out_of_range 2>&1 | FileCheck %s --check-prefix=RANGE

func.func @main() -> (tensor<3x2xf32> {loom.name = "rows"}, tensor<2x3xi32> {loom.name = "cols"}) {
  %t = loom.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  // Index 2 appears twice: row 2 gets [10, 20] + [100, 200].
  %ids = loom.constant dense<[[2, 0], [2, 1]]> : tensor<2x2xi64>
  %u = loom.constant dense<[[[10.0, 20.0], [30.0, 40.0]], [[100.0, 200.0], [1000.0, 2000.0]]]> : tensor<2x2x2xf32>
  %rows = loom.scatter_add %t[%ids], %u, axis = 0 : (tensor<3x2xf32>, tensor<2x2xi64>, tensor<2x2x2xf32>) -> tensor<3x2xf32>
  // Along axis 1: column 0 of each row gets the first two updates of the row,
  // column 2 the third.
  %x = loom.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %cols_ids = loom.constant dense<[0, 0, 2]> : tensor<3xi32>
  %v = loom.constant dense<[[1, 10, 100], [2, 20, 200]]> : tensor<2x3xi32>
  %cols = loom.scatter_add %x[%cols_ids], %v, axis = 1 : (tensor<2x3xi32>, tensor<3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  return %rows, %cols : tensor<3x2xf32>, tensor<2x3xi32>
}
// CHECK:      rows : tensor<3x2xf32>
// CHECK-NEXT: {{\[\[}}31., 42.],
// CHECK-NEXT:  [1003., 2004.],
// CHECK-NEXT:  [115., 226.]]
// CHECK:      cols : tensor<2x3xi32>
// CHECK-NEXT: {{\[\[}}12, 2, 103],
// CHECK-NEXT:  [26, 5, 206]]

func.func @out_of_range() -> tensor<2x2xf32> {
  %t = loom.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %ids = loom.constant dense<[1, -1]> : tensor<2xi64>
  %u = loom.constant dense<1.0> : tensor<2x2xf32>
  // RANGE: scatter-add.mlir:[[@LINE+1]]:8: error: 'loom.scatter_add' op index -1 at position [1] of the indices is out of range [0, 2) for axis 0 of the target tensor<2x2xf32>
  %r = loom.scatter_add %t[%ids], %u, axis = 0 : (tensor<2x2xf32>, tensor<2xi64>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

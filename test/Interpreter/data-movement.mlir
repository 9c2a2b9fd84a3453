// RUN: loom-run %s --entry-all --print | FileCheck %s

// The data-movement ops, one function each. Most read
// x = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]] (row-major counting).

// CHECK-LABEL: @reshape:
// CHECK-NEXT:  reshape : tensor<2x6xi64>
// CHECK-NEXT: {{\[\[}}0, 1, 2, 3, 4, 5],
// CHECK-NEXT:  [6, 7, 8, 9, 10, 11]]
func.func @reshape() -> (tensor<2x6xi64> {loom.name = "reshape"}) {
  %r = loom.iota dim = 1 : tensor<1x12xi64>
  %x = loom.reshape %r : tensor<1x12xi64> -> tensor<3x4xi64>
  %reshape = loom.reshape %x : tensor<3x4xi64> -> tensor<2x6xi64>
  return %reshape : tensor<2x6xi64>
}

// CHECK-LABEL: @transpose:
// CHECK-NEXT:  transpose : tensor<4x3xi64>
// CHECK-NEXT: {{\[\[}}0, 4, 8],
// CHECK-NEXT:  [1, 5, 9],
// CHECK-NEXT:  [2, 6, 10],
// CHECK-NEXT:  [3, 7, 11]]
func.func @transpose() -> (tensor<4x3xi64> {loom.name = "transpose"}) {
  %r = loom.iota dim = 1 : tensor<1x12xi64>
  %x = loom.reshape %r : tensor<1x12xi64> -> tensor<3x4xi64>
  %transpose = loom.transpose %x, permutation = [1, 0] : tensor<3x4xi64> -> tensor<4x3xi64>
  return %transpose : tensor<4x3xi64>
}

// y[i, j, k] = 6i + 2j + k; result[a, b, c] = y[c, a, b] = 6c + 2a + b. In
// row-major order over (a, b, c): 0 6 1 7 2 8 3 9 4 10 5 11, reshaped 2x3x2.
// CHECK-LABEL: @transpose3:
// CHECK-NEXT:  transpose3 : tensor<2x3x2xi64>
// CHECK-NEXT: {{\[\[\[}}0, 6],
// CHECK-NEXT:   [1, 7],
// CHECK-NEXT:   [2, 8]],
// CHECK-EMPTY:
// CHECK-NEXT:  {{\[\[}}3, 9],
// CHECK-NEXT:   [4, 10],
// CHECK-NEXT:   [5, 11]]]
func.func @transpose3() -> (tensor<2x3x2xi64> {loom.name = "transpose3"}) {
  %r = loom.iota dim = 1 : tensor<1x12xi64>
  %y = loom.reshape %r : tensor<1x12xi64> -> tensor<2x3x2xi64>
  %transpose3 = loom.transpose %y, permutation = [1, 2, 0] : tensor<2x3x2xi64> -> tensor<3x2x2xi64>
  %t3 = loom.reshape %transpose3 : tensor<3x2x2xi64> -> tensor<2x3x2xi64>
  return %t3 : tensor<2x3x2xi64>
}

// CHECK-LABEL: @broadcast:
// CHECK-NEXT:  broadcast : tensor<2x3xf32>
// CHECK-NEXT: {{\[\[}}1.5, 2.5, 3.5],
// CHECK-NEXT:  [1.5, 2.5, 3.5]]
func.func @broadcast() -> (tensor<2x3xf32> {loom.name = "broadcast"}) {
  %v = loom.constant dense<[1.5, 2.5, 3.5]> : tensor<3xf32>
  %broadcast = loom.broadcast %v, dims = [1] : tensor<3xf32> -> tensor<2x3xf32>
  return %broadcast : tensor<2x3xf32>
}

// A size-1 operand dimension stretches: [[10], [20]] mapped to dims 0 and 2.
// CHECK-LABEL: @broadcast_size1:
// CHECK-NEXT:  broadcast1 : tensor<2x2x3xi64>
// CHECK-NEXT: {{\[\[\[}}10, 10, 10],
// CHECK-NEXT:   [10, 10, 10]],
// CHECK-EMPTY:
// CHECK-NEXT:  {{\[\[}}20, 20, 20],
// CHECK-NEXT:   [20, 20, 20]]]
func.func @broadcast_size1() -> (tensor<2x2x3xi64> {loom.name = "broadcast1"}) {
  %w = loom.constant dense<[[10], [20]]> : tensor<2x1xi64>
  %broadcast1 = loom.broadcast %w, dims = [0, 2] : tensor<2x1xi64> -> tensor<2x2x3xi64>
  return %broadcast1 : tensor<2x2x3xi64>
}

// Rows 1..3 step 1, columns 0..4 step 2: [[4, 6], [8, 10]].
// CHECK-LABEL: @slice:
// CHECK-NEXT:  slice : tensor<2x2xi64>
// CHECK-NEXT: {{\[\[}}4, 6],
// CHECK-NEXT:  [8, 10]]
func.func @slice() -> (tensor<2x2xi64> {loom.name = "slice"}) {
  %r = loom.iota dim = 1 : tensor<1x12xi64>
  %x = loom.reshape %r : tensor<1x12xi64> -> tensor<3x4xi64>
  %slice = loom.slice %x, start = [1, 0], limit = [3, 4], strides = [1, 2] : tensor<3x4xi64> -> tensor<2x2xi64>
  return %slice : tensor<2x2xi64>
}

// CHECK-LABEL: @concat:
// CHECK-NEXT:  concat : tensor<3x5xi64>
// CHECK-NEXT: {{\[\[}}0, 1, 2, 3, -1],
// CHECK-NEXT:  [4, 5, 6, 7, -1],
// CHECK-NEXT:  [8, 9, 10, 11, -1]]
func.func @concat() -> (tensor<3x5xi64> {loom.name = "concat"}) {
  %r = loom.iota dim = 1 : tensor<1x12xi64>
  %x = loom.reshape %r : tensor<1x12xi64> -> tensor<3x4xi64>
  %ones = loom.constant dense<-1> : tensor<3x1xi64>
  %concat = loom.concat %x, %ones dim = 1 : (tensor<3x4xi64>, tensor<3x1xi64>) -> tensor<3x5xi64>
  return %concat : tensor<3x5xi64>
}

// CHECK-LABEL: @split:
// CHECK-NEXT:  split0 : tensor<3x1xi64>
// CHECK-NEXT: {{\[\[}}0],
// CHECK-NEXT:  [4],
// CHECK-NEXT:  [8]]
// CHECK-NEXT:  split1 : tensor<3x3xi64>
// CHECK-NEXT: {{\[\[}}1, 2, 3],
// CHECK-NEXT:  [5, 6, 7],
// CHECK-NEXT:  [9, 10, 11]]
func.func @split() -> (tensor<3x1xi64> {loom.name = "split0"}, tensor<3x3xi64> {loom.name = "split1"}) {
  %r = loom.iota dim = 1 : tensor<1x12xi64>
  %x = loom.reshape %r : tensor<1x12xi64> -> tensor<3x4xi64>
  %split0, %split1 = loom.split %x, dim = 1, sizes = [1, 3] : tensor<3x4xi64> -> tensor<3x1xi64>, tensor<3x3xi64>
  return %split0, %split1 : tensor<3x1xi64>, tensor<3x3xi64>
}

// Embedding lookup: rows [2, 0] and [1, 1] of x, with i32 indices.
// CHECK-LABEL: @gather_rows:
// CHECK-NEXT:  gather0 : tensor<2x2x4xi64>
// CHECK-NEXT: {{\[\[\[}}8, 9, 10, 11],
// CHECK-NEXT:   [0, 1, 2, 3]],
// CHECK-EMPTY:
// CHECK-NEXT:  {{\[\[}}4, 5, 6, 7],
// CHECK-NEXT:   [4, 5, 6, 7]]]
func.func @gather_rows() -> (tensor<2x2x4xi64> {loom.name = "gather0"}) {
  %r = loom.iota dim = 1 : tensor<1x12xi64>
  %x = loom.reshape %r : tensor<1x12xi64> -> tensor<3x4xi64>
  %ids = loom.constant dense<[[2, 0], [1, 1]]> : tensor<2x2xi32>
  %gather0 = loom.gather %x[%ids], axis = 0 : (tensor<3x4xi64>, tensor<2x2xi32>) -> tensor<2x2x4xi64>
  return %gather0 : tensor<2x2x4xi64>
}

// Columns [3, 0] of each row.
// CHECK-LABEL: @gather_columns:
// CHECK-NEXT:  gather1 : tensor<3x2xi64>
// CHECK-NEXT: {{\[\[}}3, 0],
// CHECK-NEXT:  [7, 4],
// CHECK-NEXT:  [11, 8]]
func.func @gather_columns() -> (tensor<3x2xi64> {loom.name = "gather1"}) {
  %r = loom.iota dim = 1 : tensor<1x12xi64>
  %x = loom.reshape %r : tensor<1x12xi64> -> tensor<3x4xi64>
  %cols = loom.constant dense<[3, 0]> : tensor<2xi64>
  %gather1 = loom.gather %x[%cols], axis = 1 : (tensor<3x4xi64>, tensor<2xi64>) -> tensor<3x2xi64>
  return %gather1 : tensor<3x2xi64>
}

// CHECK-LABEL: @iota:
// CHECK-NEXT:  iota : tensor<2x3xf32>
// CHECK-NEXT: {{\[\[}}0., 0., 0.],
// CHECK-NEXT:  [1., 1., 1.]]
func.func @iota() -> (tensor<2x3xf32> {loom.name = "iota"}) {
  %iota = loom.iota dim = 0 : tensor<2x3xf32>
  return %iota : tensor<2x3xf32>
}

// CHECK-LABEL: @constant_i1:
// CHECK-NEXT:  constant_i1 : tensor<2x2xi1>
// CHECK-NEXT: {{\[\[}}True, False],
// CHECK-NEXT:  [False, True]]
func.func @constant_i1() -> (tensor<2x2xi1> {loom.name = "constant_i1"}) {
  %constant_i1 = loom.constant dense<[[true, false], [false, true]]> : tensor<2x2xi1>
  return %constant_i1 : tensor<2x2xi1>
}

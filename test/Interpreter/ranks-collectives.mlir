// shard.reduce_scatter reduces over the group like all_reduce, then the
// group's k-th rank keeps the k-th equal slice along scatter_axis.
// shard.all_to_all splits each rank's input into group-size pieces along
// split_axis, sends piece j to member j, and each rank concatenates what it
// receives, in member order, along concat_axis.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: loom-run %s --entry make_inputs --output-dir %t
// RUN: loom-run %s --ranks 4 --input x@0=%t/x0.npy --input x@1=%t/x1.npy \
// RUN:   --input x@2=%t/x2.npy --input x@3=%t/x3.npy --print | FileCheck %s
// RUN: not loom-run %s --entry bad --ranks 4 --input x=%t/x0.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ERR

// Rank r's x is x[a][b] = 10r + 4a + b.
shard.grid @g(shape = 4)

func.func @make_inputs() -> (tensor<2x4xf32> {loom.name = "x0"}, tensor<2x4xf32> {loom.name = "x1"},
                             tensor<2x4xf32> {loom.name = "x2"}, tensor<2x4xf32> {loom.name = "x3"}) {
  %a = loom.constant dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]]> : tensor<2x4xf32>
  %b = loom.constant dense<[[10.0, 11.0, 12.0, 13.0], [14.0, 15.0, 16.0, 17.0]]> : tensor<2x4xf32>
  %c = loom.constant dense<[[20.0, 21.0, 22.0, 23.0], [24.0, 25.0, 26.0, 27.0]]> : tensor<2x4xf32>
  %d = loom.constant dense<[[30.0, 31.0, 32.0, 33.0], [34.0, 35.0, 36.0, 37.0]]> : tensor<2x4xf32>
  return %a, %b, %c, %d : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

func.func @main(%x: tensor<2x4xf32> {loom.name = "x"})
    -> (tensor<2x1xf32> {loom.name = "rs"}, tensor<8x1xf32> {loom.name = "a2a"},
        tensor<2x4xf32> {loom.name = "cols"}) {
  %rs = shard.reduce_scatter %x on @g grid_axes = [0] scatter_axis = 1 : tensor<2x4xf32> -> tensor<2x1xf32>
  %a = shard.all_to_all %x on @g grid_axes = [0] split_axis = 1 concat_axis = 0 : tensor<2x4xf32> -> tensor<8x1xf32>
  %c = shard.all_to_all %x on @g grid_axes = [0] split_axis = 1 concat_axis = 1 : tensor<2x4xf32> -> tensor<2x4xf32>
  return %rs, %a, %c : tensor<2x1xf32>, tensor<8x1xf32>, tensor<2x4xf32>
}

// Rank r gets:
// rs   = column r of sum_r x = [[60, 64, 68, 72], [76, 80, 84, 88]].
// a2a  = x0[:, r], x1[:, r], x2[:, r], x3[:, r] stacked as rows (8x1).
// cols = the same four 2x1 columns side by side (2x4).
// CHECK:      rank 0: rs : tensor<2x1xf32>
// CHECK-NEXT: {{\[}}[60.],
// CHECK-NEXT:  [76.]]
// CHECK-NEXT: rank 0: a2a : tensor<8x1xf32>
// CHECK-NEXT: {{\[}}[0.],
// CHECK-NEXT:  [4.],
// CHECK-NEXT:  [10.],
// CHECK-NEXT:  [14.],
// CHECK-NEXT:  [20.],
// CHECK-NEXT:  [24.],
// CHECK-NEXT:  [30.],
// CHECK-NEXT:  [34.]]
// CHECK-NEXT: rank 0: cols : tensor<2x4xf32>
// CHECK-NEXT: {{\[}}[0., 10., 20., 30.],
// CHECK-NEXT:  [4., 14., 24., 34.]]
// CHECK:      rank 1: rs : tensor<2x1xf32>
// CHECK-NEXT: {{\[}}[64.],
// CHECK-NEXT:  [80.]]
// CHECK:      rank 1: cols : tensor<2x4xf32>
// CHECK-NEXT: {{\[}}[1., 11., 21., 31.],
// CHECK-NEXT:  [5., 15., 25., 35.]]
// CHECK:      rank 2: rs : tensor<2x1xf32>
// CHECK-NEXT: {{\[}}[68.],
// CHECK-NEXT:  [84.]]
// CHECK:      rank 3: rs : tensor<2x1xf32>
// CHECK-NEXT: {{\[}}[72.],
// CHECK-NEXT:  [88.]]
// CHECK-NEXT: rank 3: a2a : tensor<8x1xf32>
// CHECK-NEXT: {{\[}}[3.],
// CHECK-NEXT:  [7.],
// CHECK-NEXT:  [13.],
// CHECK-NEXT:  [17.],
// CHECK-NEXT:  [23.],
// CHECK-NEXT:  [27.],
// CHECK-NEXT:  [33.],
// CHECK-NEXT:  [37.]]
// CHECK-NEXT: rank 3: cols : tensor<2x4xf32>
// CHECK-NEXT: {{\[}}[3., 13., 23., 33.],
// CHECK-NEXT:  [7., 17., 27., 37.]]

// Dim 0 has size 2, which 4 ranks cannot split evenly (the static verifier
// rejects this, so the shape is dynamic).
// ERR: error: 'shard.reduce_scatter' op (rank {{[0-3]}}) cannot split dim 0 of size 2 (scatter_axis) into 4 equal pieces
func.func @bad(%x: tensor<?x4xf32> {loom.name = "x"}) -> tensor<?x4xf32> {
  %rs = shard.reduce_scatter %x on @g grid_axes = [0] scatter_axis = 0 : tensor<?x4xf32> -> tensor<?x4xf32>
  return %rs : tensor<?x4xf32>
}

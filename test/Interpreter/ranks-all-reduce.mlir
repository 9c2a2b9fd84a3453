// --ranks N runs N ranks of one function in one process; shard.all_reduce
// and shard.all_gather combine the ranks' values (in rank order). Each
// rank's input comes from --input x@R=FILE; --input y=FILE is shared.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: loom-run %s --entry make_inputs --output-dir %t
// RUN: loom-run %s --ranks 4 --input x@0=%t/x0.npy --input x@1=%t/x1.npy \
// RUN:   --input x@2=%t/x2.npy --input x@3=%t/x3.npy --input y=%t/x0.npy \
// RUN:   --print --output-dir %t/out | FileCheck %s
// RUN: ls %t/out/rank0 %t/out/rank3 | FileCheck %s --check-prefix=FILES
// A rank's own input overrides the shared one.
// RUN: loom-run %s --ranks 4 --input x=%t/x0.npy --input x@2=%t/x2.npy \
// RUN:   --input y=%t/x0.npy --print | FileCheck %s --check-prefix=OVERRIDE

shard.grid @g(shape = 4)

func.func @make_inputs() -> (tensor<2xf32> {loom.name = "x0"}, tensor<2xf32> {loom.name = "x1"},
                             tensor<2xf32> {loom.name = "x2"}, tensor<2xf32> {loom.name = "x3"}) {
  %a = loom.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %b = loom.constant dense<[2.0, -1.0]> : tensor<2xf32>
  %c = loom.constant dense<[3.0, -2.0]> : tensor<2xf32>
  %d = loom.constant dense<[4.0, -3.0]> : tensor<2xf32>
  return %a, %b, %c, %d : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

func.func @main(%x: tensor<2xf32> {loom.name = "x"}, %y: tensor<2xf32> {loom.name = "y"})
    -> (tensor<2xf32> {loom.name = "sum"}, tensor<2xf32> {loom.name = "max"},
        tensor<2xf32> {loom.name = "min"}, tensor<8xf32> {loom.name = "all"}) {
  %xy = loom.add %x, %y : tensor<2xf32>
  %s = shard.all_reduce %xy on @g grid_axes = [0] : tensor<2xf32> -> tensor<2xf32>
  %m = shard.all_reduce %x on @g grid_axes = [0] reduction = max : tensor<2xf32> -> tensor<2xf32>
  %n = shard.all_reduce %x on @g grid_axes = [0] reduction = min : tensor<2xf32> -> tensor<2xf32>
  %a = shard.all_gather %x on @g grid_axes = [0] gather_axis = 0 : tensor<2xf32> -> tensor<8xf32>
  return %s, %m, %n, %a : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<8xf32>
}
// x + y per rank: [2, 0], [3, -1], [4, -2], [5, -3]; summed: [14, -6].
// CHECK:      rank 0: sum : tensor<2xf32>
// CHECK-NEXT: [14., -6.]
// CHECK-NEXT: rank 0: max : tensor<2xf32>
// CHECK-NEXT: [4., 0.]
// CHECK-NEXT: rank 0: min : tensor<2xf32>
// CHECK-NEXT: [1., -3.]
// CHECK-NEXT: rank 0: all : tensor<8xf32>
// CHECK-NEXT: [1., 0., 2., -1., 3., -2., 4., -3.]
// CHECK:      rank 3: sum : tensor<2xf32>
// CHECK-NEXT: [14., -6.]
// CHECK:      rank 3: all : tensor<8xf32>
// CHECK-NEXT: [1., 0., 2., -1., 3., -2., 4., -3.]

// FILES: all.npy
// FILES: sum.npy

// Ranks 0, 1, 3 have x0 = [1, 0], rank 2 has x2 = [3, -2]; y = [1, 0].
// OVERRIDE:      rank 0: sum : tensor<2xf32>
// OVERRIDE-NEXT: [10., -2.]
// OVERRIDE:      rank 0: all : tensor<8xf32>
// OVERRIDE-NEXT: [1., 0., 1., 0., 3., -2., 1., 0.]

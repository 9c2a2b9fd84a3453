// shard.send / shard.recv between ranks: a ring where each rank sends its
// value to the next rank and receives the previous one's, twice. Peers are
// computed from shard.process_linear_index (the rank id) with index
// arithmetic. Sends are buffered, so send-then-recv never blocks.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: loom-run %s --entry make_inputs --output-dir %t
// RUN: loom-run %s --ranks 4 --input x@0=%t/x0.npy --input x@1=%t/x1.npy \
// RUN:   --input x@2=%t/x2.npy --input x@3=%t/x3.npy --print | FileCheck %s

shard.grid @g(shape = 4)

func.func @make_inputs() -> (tensor<2xi64> {loom.name = "x0"}, tensor<2xi64> {loom.name = "x1"},
                             tensor<2xi64> {loom.name = "x2"}, tensor<2xi64> {loom.name = "x3"}) {
  %a = loom.constant dense<[0, 100]> : tensor<2xi64>
  %b = loom.constant dense<[1, 200]> : tensor<2xi64>
  %c = loom.constant dense<[2, 300]> : tensor<2xi64>
  %d = loom.constant dense<[3, 400]> : tensor<2xi64>
  return %a, %b, %c, %d : tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>
}

func.func @main(%x: tensor<2xi64> {loom.name = "x"})
    -> (tensor<2xi64> {loom.name = "from_left"}, tensor<2xi64> {loom.name = "two_left"}) {
  %r = shard.process_linear_index on @g : index
  %one = arith.constant 1 : index
  %three = arith.constant 3 : index
  %four = arith.constant 4 : index
  %n1 = arith.addi %r, %one : index
  %next = arith.remsi %n1, %four : index
  %p1 = arith.addi %r, %three : index
  %prev = arith.remsi %p1, %four : index
  %s0 = shard.send %x on @g grid_axes = [0] destination = [%next] : (tensor<2xi64>, index) -> tensor<2xi64>
  %y = shard.recv %x on @g grid_axes = [0] source = [%prev] : (tensor<2xi64>, index) -> tensor<2xi64>
  // Pass on what was received, plus [10, 0].
  %ten = loom.constant dense<[10, 0]> : tensor<2xi64>
  %z = loom.add %y, %ten : tensor<2xi64>
  %s1 = shard.send %z on @g grid_axes = [0] destination = [%next] : (tensor<2xi64>, index) -> tensor<2xi64>
  %w = shard.recv %x on @g grid_axes = [0] source = [%prev] : (tensor<2xi64>, index) -> tensor<2xi64>
  return %y, %w : tensor<2xi64>, tensor<2xi64>
}
// Rank r receives x[r-1] and then x[r-2] + [10, 0] (indices mod 4).
// CHECK:      rank 0: from_left : tensor<2xi64>
// CHECK-NEXT: [3, 400]
// CHECK-NEXT: rank 0: two_left : tensor<2xi64>
// CHECK-NEXT: [12, 300]
// CHECK-NEXT: rank 1: from_left : tensor<2xi64>
// CHECK-NEXT: [0, 100]
// CHECK-NEXT: rank 1: two_left : tensor<2xi64>
// CHECK-NEXT: [13, 400]
// CHECK-NEXT: rank 2: from_left : tensor<2xi64>
// CHECK-NEXT: [1, 200]
// CHECK-NEXT: rank 2: two_left : tensor<2xi64>
// CHECK-NEXT: [10, 100]
// CHECK-NEXT: rank 3: from_left : tensor<2xi64>
// CHECK-NEXT: [2, 300]
// CHECK-NEXT: rank 3: two_left : tensor<2xi64>
// CHECK-NEXT: [11, 200]

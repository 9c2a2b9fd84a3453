// RUN: loom-opt %s -split-input-file -loom-fuse-elementwise | FileCheck %s
// Marking is idempotent: a second run finds the same groups.
// RUN: loom-opt %s -split-input-file -loom-fuse-elementwise -loom-fuse-elementwise | FileCheck %s

// A chain of single-use elementwise ops is one group: every member but the
// last (the root) is marked; nothing moves.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT: %[[A:.*]] = loom.add %arg0, %arg1 {loom.fused} : tensor<2x8xf32>
// CHECK-NEXT: %[[T:.*]] = loom.tanh %[[A]] {loom.fused} : tensor<2x8xf32>
// CHECK-NEXT: %[[G:.*]] = loom.gelu %[[T]] : tensor<2x8xf32>
// CHECK-NEXT: return %[[G]]
func.func @chain(%x: tensor<2x8xf32>, %y: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %a = loom.add %x, %y : tensor<2x8xf32>
  %t = loom.tanh %a : tensor<2x8xf32>
  %g = loom.gelu %t : tensor<2x8xf32>
  return %g : tensor<2x8xf32>
}

// -----

// A value read twice by one loop (a diamond) is computed once in it.
// CHECK-LABEL: func.func @used_twice
// CHECK-NEXT: loom.exp %arg0 {loom.fused} : tensor<4xf32>
// CHECK-NEXT: loom.mul %{{.*}}, %{{.*}} : tensor<4xf32>
func.func @used_twice(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = loom.exp %x : tensor<4xf32>
  %m = loom.mul %e, %e : tensor<4xf32>
  return %m : tensor<4xf32>
}

// -----

// SiLU's gradient as autodiff writes it: the sigmoid is read twice, both
// times inside the group the last mul roots, so the whole gradient is one
// loop and the sigmoid is never written.
// CHECK-LABEL: func.func @silu_gradient
// CHECK-NEXT: loom.sigmoid %arg0 {loom.fused}
// CHECK-NEXT: loom.constant
// CHECK-NEXT: loom.sub {{.*}} {loom.fused}
// CHECK-NEXT: loom.mul {{.*}} {loom.fused}
// CHECK-NEXT: loom.add {{.*}} {loom.fused}
// CHECK-NEXT: loom.mul {{.*}} {loom.fused}
// CHECK-NEXT: loom.mul %arg1, %{{.*}} : tensor<4xf32>
func.func @silu_gradient(%x: tensor<4xf32>, %dy: tensor<4xf32>) -> tensor<4xf32> {
  %s = loom.sigmoid %x : tensor<4xf32>
  %one = loom.constant dense<1.0> : tensor<4xf32>
  %a = loom.sub %one, %s : tensor<4xf32>
  %b = loom.mul %x, %a : tensor<4xf32>
  %c = loom.add %b, %one : tensor<4xf32>
  %d = loom.mul %s, %c : tensor<4xf32>
  %g = loom.mul %dy, %d : tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

// Read by two loops: cheap arithmetic on one dense input (the broadcast
// reads a smaller tensor) is computed in both; an exp is not repeated.
// CHECK-LABEL: func.func @shared_by_two_loops
// CHECK: loom.mul %arg0, %{{.*}} {loom.fused} : tensor<2x4xf32>
// CHECK-NEXT: loom.add
// CHECK-NEXT: loom.sub
// CHECK-NEXT: loom.exp %arg0 : tensor<2x4xf32>
// CHECK-NEXT: loom.add
// CHECK-NEXT: loom.sub
func.func @shared_by_two_loops(%x: tensor<2x4xf32>, %r: tensor<2x1xf32>,
                               %y: tensor<2x4xf32>)
    -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %rb = loom.broadcast %r, dims = [0, 1] : tensor<2x1xf32> -> tensor<2x4xf32>
  %p = loom.mul %x, %rb : tensor<2x4xf32>
  %a = loom.add %p, %y : tensor<2x4xf32>
  %b = loom.sub %y, %p : tensor<2x4xf32>
  %e = loom.exp %x : tensor<2x4xf32>
  %c = loom.add %e, %y : tensor<2x4xf32>
  %d = loom.sub %y, %e : tensor<2x4xf32>
  return %a, %b, %c, %d : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// Not repeated: a product of two dense inputs read by four loops (each
// would read both inputs: 2 * 3 > 4 + 1), nor a value one of whose
// readers is a reduction that would read a broadcast through strides.
// CHECK-LABEL: func.func @shared_not_repeated
// CHECK: loom.mul %arg0, %arg1 : tensor<2x4xf32>
// CHECK: loom.mul %arg0, %{{.*}} : tensor<2x4xf32>
// CHECK-NOT: loom.fused
func.func @shared_not_repeated(%x: tensor<2x4xf32>, %y: tensor<2x4xf32>,
                               %r: tensor<2x1xf32>)
    -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>,
        tensor<2x4xf32>, tensor<2xf32>) {
  %p = loom.mul %x, %y : tensor<2x4xf32>
  %a = loom.add %p, %x : tensor<2x4xf32>
  %b = loom.sub %p, %x : tensor<2x4xf32>
  %c = loom.max %p, %x : tensor<2x4xf32>
  %d = loom.min %p, %x : tensor<2x4xf32>
  %rb = loom.broadcast %r, dims = [0, 1] : tensor<2x1xf32> -> tensor<2x4xf32>
  %q = loom.mul %x, %rb : tensor<2x4xf32>
  %e = loom.add %q, %y : tensor<2x4xf32>
  %s = loom.reduce_sum %q, dims = [1] : tensor<2x4xf32> -> tensor<2xf32>
  return %a, %b, %c, %d, %e, %s : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2xf32>
}

// -----

// A returned value is written into its own result buffer: not marked,
// though its one other reader is elementwise.
// CHECK-LABEL: func.func @returned
// CHECK-NEXT: loom.exp %arg0 : tensor<4xf32>
// CHECK-NEXT: loom.neg
// CHECK-NOT: loom.fused
func.func @returned(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = loom.exp %x : tensor<4xf32>
  %n = loom.neg %e : tensor<4xf32>
  return %e, %n : tensor<4xf32>, tensor<4xf32>
}

// -----

// Both operands of the root join its group: "exp+neg+add".
// CHECK-LABEL: func.func @two_producers
// CHECK-NEXT: loom.exp %arg0 {loom.fused}
// CHECK-NEXT: loom.neg %arg0 {loom.fused}
// CHECK-NEXT: loom.add %{{.*}}, %{{.*}} : tensor<4xf32>
func.func @two_producers(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = loom.exp %x : tensor<4xf32>
  %n = loom.neg %x : tensor<4xf32>
  %a = loom.add %e, %n : tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

// Members may have other element types than the root (a compare feeding a
// select), and other ops between them stay where they are.
// CHECK-LABEL: func.func @mixed_types
// CHECK-NEXT: loom.compare gt, %arg0, %arg1 {loom.fused} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
// CHECK-NEXT: loom.reduce_sum
// CHECK-NEXT: loom.select %{{.*}}, %arg0, %arg1 : tensor<4xi1>, tensor<4xf32>
func.func @mixed_types(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>) {
  %c = loom.compare gt, %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %s = loom.reduce_sum %x, dims = [0] : tensor<4xf32> -> tensor<f32>
  %r = loom.select %c, %x, %y : tensor<4xi1>, tensor<4xf32>
  return %r, %s : tensor<4xf32>, tensor<f32>
}

// -----

// Broadcasts and splat constants are not elementwise ops: the lowering reads
// them inside the loop (strides, scalars) without a mark.
// CHECK-LABEL: func.func @broadcast_and_splat
// CHECK-NEXT: loom.broadcast
// CHECK-NEXT: loom.constant dense<2.000000e+00>
// CHECK-NEXT: loom.add %{{.*}}, %{{.*}} {loom.fused}
// CHECK-NEXT: loom.mul %{{.*}}, %{{.*}} : tensor<2x8xf32>
func.func @broadcast_and_splat(%x: tensor<2x8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  %bb = loom.broadcast %b, dims = [1] : tensor<8xf32> -> tensor<2x8xf32>
  %two = loom.constant dense<2.0> : tensor<2x8xf32>
  %a = loom.add %x, %bb : tensor<2x8xf32>
  %m = loom.mul %a, %two : tensor<2x8xf32>
  return %m : tensor<2x8xf32>
}

// -----

// A reduction folds its operand's chain in its own loop when the chain is
// read only by it and reads every input at the reduced tensor's index: the
// chain is marked, and nothing is written between the product and the sum.
// CHECK-LABEL: func.func @reduction_folds_chain
// CHECK-NEXT: loom.exp %arg0 {loom.fused} : tensor<2x4xf32>
// CHECK-NEXT: loom.mul %{{.*}}, %arg1 {loom.fused} : tensor<2x4xf32>
// CHECK-NEXT: loom.reduce_sum
func.func @reduction_folds_chain(%x: tensor<2x4xf32>, %y: tensor<2x4xf32>) -> tensor<2xf32> {
  %e = loom.exp %x : tensor<2x4xf32>
  %p = loom.mul %e, %y : tensor<2x4xf32>
  %s = loom.reduce_sum %p, dims = [1] : tensor<2x4xf32> -> tensor<2xf32>
  return %s : tensor<2xf32>
}

// -----

// Not when the chain reads a broadcast tensor (it would be read through
// strides), nor when the reduction's operand has another reader. A splat
// constant is a scalar: that chain folds.
// CHECK-LABEL: func.func @reduction_keeps_chain
// CHECK-NEXT: loom.broadcast
// CHECK-NEXT: loom.mul %arg0, %{{.*}} : tensor<2x4xf32>
// CHECK-NEXT: loom.reduce_max
// CHECK-NEXT: loom.exp %arg0 : tensor<2x4xf32>
// CHECK-NEXT: loom.reduce_sum
// CHECK-NEXT: loom.constant
// CHECK-NEXT: loom.mul %arg0, %{{.*}} {loom.fused} : tensor<2x4xf32>
// CHECK-NEXT: loom.reduce_mean
func.func @reduction_keeps_chain(%x: tensor<2x4xf32>, %g: tensor<4xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2x4xf32>, tensor<2xf32>) {
  %gb = loom.broadcast %g, dims = [1] : tensor<4xf32> -> tensor<2x4xf32>
  %p = loom.mul %x, %gb : tensor<2x4xf32>
  %m = loom.reduce_max %p, dims = [1] : tensor<2x4xf32> -> tensor<2xf32>
  %e = loom.exp %x : tensor<2x4xf32>
  %s = loom.reduce_sum %e, dims = [1] : tensor<2x4xf32> -> tensor<2xf32>
  %two = loom.constant dense<2.0> : tensor<2x4xf32>
  %q = loom.mul %x, %two : tensor<2x4xf32>
  %n = loom.reduce_mean %q, dims = [1] : tensor<2x4xf32> -> tensor<2xf32>
  return %m, %s, %e, %n : tensor<2xf32>, tensor<2xf32>, tensor<2x4xf32>, tensor<2xf32>
}

// -----

// A gradient accumulated over micro-batches: each sum's terms die at it,
// and the next micro-batch's work (a matmul) runs before the next sum.
// Fusing %s1 into %s2 would keep %g0 and %g1 live until %s2; %s1 is
// materialized instead. The adjacent tanh (nothing in between) still
// fuses into its user.
// CHECK-LABEL: func.func @accumulation_apart
// CHECK-NEXT: %[[S1:.*]] = loom.add %arg0, %arg1 : tensor<4x4xf32>
// CHECK-NEXT: loom.dot_general
// CHECK-NEXT: %[[T:.*]] = loom.tanh %{{.*}} {loom.fused} : tensor<4x4xf32>
// CHECK-NEXT: loom.add %[[S1]], %[[T]] : tensor<4x4xf32>
func.func @accumulation_apart(%g0: tensor<4x4xf32>, %g1: tensor<4x4xf32>,
                              %x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %s1 = loom.add %g0, %g1 : tensor<4x4xf32>
  %g2 = loom.dot_general %x, %x, contracting_dims = [1] x [0] : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %t = loom.tanh %g2 : tensor<4x4xf32>
  %s2 = loom.add %s1, %t : tensor<4x4xf32>
  return %s2 : tensor<4x4xf32>
}

// -----

// Apart, but the input that dies is no larger than the result (a unary
// op): fusing keeps no more live than materializing would.
// CHECK-LABEL: func.func @unary_apart
// CHECK-NEXT: loom.neg %arg0 {loom.fused} : tensor<4x4xf32>
func.func @unary_apart(%a: tensor<4x4xf32>, %x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %n = loom.neg %a : tensor<4x4xf32>
  %d = loom.dot_general %x, %x, contracting_dims = [1] x [0] : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = loom.add %n, %d : tensor<4x4xf32>
  return %s : tensor<4x4xf32>
}

// -----

// Not when a reader's loop runs after other work that %x would otherwise
// not live through: repeating the product there would keep %x live across
// the matmul. Without the matmul in between it is repeated (above).
// CHECK-LABEL: func.func @shared_across_work
// CHECK: loom.mul %arg0, %{{.*}} : tensor<4x4xf32>
// CHECK-NOT: loom.fused
func.func @shared_across_work(%x: tensor<4x4xf32>, %r: tensor<4x1xf32>,
                              %y: tensor<4x4xf32>)
    -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %rb = loom.broadcast %r, dims = [0, 1] : tensor<4x1xf32> -> tensor<4x4xf32>
  %p = loom.mul %x, %rb : tensor<4x4xf32>
  %a = loom.add %p, %y : tensor<4x4xf32>
  %d = loom.dot_general %y, %y, contracting_dims = [1] x [0] : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = loom.sub %d, %p : tensor<4x4xf32>
  return %a, %b, %d : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// A bf16 gradient widened for the optimizer, read by both moments'
// updates after other work: the widening is repeated in both loops, which
// keeps the bf16 gradient live across the matmul instead of its f32
// buffer (half the bytes). Widening an i32 keeps as many bytes live:
// it stays materialized.
// CHECK-LABEL: func.func @widened_gradient_apart
// CHECK-NEXT: loom.convert %arg0 {loom.fused} : tensor<4x4xbf16> -> tensor<4x4xf32>
// CHECK-NEXT: loom.convert %arg1 : tensor<4x4xi32> -> tensor<4x4xf32>
// CHECK-NEXT: loom.dot_general
func.func @widened_gradient_apart(%g: tensor<4x4xbf16>, %h: tensor<4x4xi32>,
                                  %m: tensor<4x4xf32>, %v: tensor<4x4xf32>,
                                  %x: tensor<4x4xf32>)
    -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %w = loom.convert %g : tensor<4x4xbf16> -> tensor<4x4xf32>
  %w2 = loom.convert %h : tensor<4x4xi32> -> tensor<4x4xf32>
  %d = loom.dot_general %x, %x, contracting_dims = [1] x [0] : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %m1 = loom.add %m, %w : tensor<4x4xf32>
  %sq = loom.mul %w, %w : tensor<4x4xf32>
  %v1 = loom.add %v, %sq : tensor<4x4xf32>
  %a = loom.add %d, %w2 : tensor<4x4xf32>
  %b = loom.sub %d, %w2 : tensor<4x4xf32>
  return %m1, %v1, %d, %a, %b : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

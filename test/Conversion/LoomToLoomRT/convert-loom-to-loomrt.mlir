// RUN: loom-opt %s -split-input-file -loom-fuse-elementwise -convert-loom-to-loomrt | FileCheck %s
// Without the fusion marks every elementwise op is a kernel of its own.
// RUN: loom-opt %s -split-input-file -convert-loom-to-loomrt | FileCheck %s --check-prefix=UNFUSED

// Results become buffer arguments (`loomrt.result = i`, with the result's
// attributes) after the inputs; the function returns nothing.
// CHECK-LABEL: func.func @signature(
// CHECK-SAME: %[[W:.*]]: memref<4x8xf32> {loom.name = "w", loom.param},
// CHECK-SAME: %[[X:.*]]: memref<2x4xf32> {loom.name = "x"},
// CHECK-SAME: %[[Y:.*]]: memref<2x8xf32> {loom.name = "y", loomrt.result = 0 : i64})
// CHECK-SAME: attributes {loomrt.num_inputs = 2 : i64}
// CHECK: return{{$}}
func.func @signature(%w: tensor<4x8xf32> {loom.name = "w", loom.param},
                     %x: tensor<2x4xf32> {loom.name = "x"}) -> (tensor<2x8xf32> {loom.name = "y"}) {
  %y = loom.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// A matmul is a gemm into a new activation buffer; an op whose value is
// returned writes it straight into its result buffer.
// CHECK-LABEL: func.func @gemm_and_result
// CHECK: %[[H:.*]] = loomrt.alloc {category = "activation"} : memref<2x8xf32>
// CHECK-NEXT: loomrt.gemm ins(%arg1, %arg0 : {{.*}}) outs(%[[H]] : {{.*}}) {{{.*}}k = 4 : i64, m = 2 : i64, n = 8 : i64, origin = "dot_general", trans_a = false, trans_b = false}
// CHECK-NEXT: loomrt.cross_entropy "mean" ins(%[[H]], %arg2 : {{.*}}) outs(%arg3 : memref<f32>)
// CHECK-NEXT: return
func.func @gemm_and_result(%w: tensor<4x8xf32>, %x: tensor<2x4xf32>, %y: tensor<2xi64>) -> tensor<f32> {
  %h = loom.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
  %l = loom.cross_entropy %h, %y : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// broadcast + add + gelu: one kernel, named after its members, that reads
// the bias with stride 0 on the broadcast dimension.
// CHECK-LABEL: func.func @fused_broadcast
// CHECK-NOT: loomrt.copy
// CHECK: loomrt.kernel ins(%arg0, %arg1 : memref<2x8xf32>, memref<8xf32>) outs(%arg2 : memref<2x8xf32>) attributes {in_strides = [array<i64: 8, 1>, array<i64: 0, 1>], origin = "add+gelu"}
// CHECK: arith.addf
// CHECK: math.erf
// CHECK: loomrt.yield
// CHECK-NEXT: }
// CHECK-NEXT: return
// UNFUSED-LABEL: func.func @fused_broadcast
// UNFUSED: origin = "add"}
// UNFUSED: origin = "gelu"}
func.func @fused_broadcast(%h: tensor<2x8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  %bb = loom.broadcast %b, dims = [1] : tensor<8xf32> -> tensor<2x8xf32>
  %a = loom.add %h, %bb : tensor<2x8xf32>
  %g = loom.gelu %a : tensor<2x8xf32>
  return %g : tensor<2x8xf32>
}

// -----

// A value read twice in one loop is computed once there: no buffer for it,
// one exp in the body.
// CHECK-LABEL: func.func @used_twice
// CHECK-NOT: loomrt.alloc
// CHECK: loomrt.kernel ins(%arg0 : memref<3x2xf32>) outs(%arg1 : memref<3x2xf32>) attributes {origin = "exp+mul+neg"}
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32):
// CHECK-NEXT: %[[E:.*]] = math.exp %[[X]] : f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[E]], %[[E]] : f32
// CHECK-NEXT: arith.negf %[[M]] : f32
func.func @used_twice(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %e = loom.exp %x : tensor<3x2xf32>
  %m = loom.mul %e, %e : tensor<3x2xf32>
  %n = loom.neg %m : tensor<3x2xf32>
  return %n : tensor<3x2xf32>
}

// -----

// Cheap arithmetic read by two loops is computed in each: the product of
// %x and the broadcast %s is never written.
// CHECK-LABEL: func.func @shared_cheap
// CHECK-NOT: loomrt.alloc
// CHECK: loomrt.kernel ins(%arg0, %arg1, %arg2 : {{.*}}) outs(%arg3 : memref<3x2xf32>) attributes {in_strides = {{.*}}, origin = "mul+add"}
// CHECK: loomrt.kernel ins(%arg0, %arg1 : {{.*}}) outs(%arg4 : memref<3x2xf32>) attributes {in_strides = {{.*}}, origin = "mul+mul"}
func.func @shared_cheap(%x: tensor<3x2xf32>, %s: tensor<3x1xf32>,
                        %y: tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>) {
  %sb = loom.broadcast %s, dims = [0, 1] : tensor<3x1xf32> -> tensor<3x2xf32>
  %p = loom.mul %x, %sb : tensor<3x2xf32>
  %a = loom.add %p, %y : tensor<3x2xf32>
  %q = loom.mul %p, %p : tensor<3x2xf32>
  return %a, %q : tensor<3x2xf32>, tensor<3x2xf32>
}

// -----

// A splat constant read by a kernel is a scalar in its body, not a buffer.
// CHECK-LABEL: func.func @splat_scalar
// CHECK-NOT: loomrt.constant
// CHECK: loomrt.kernel ins(%arg0 : memref<3x2xf32>) outs(%arg1 : memref<3x2xf32>) attributes {origin = "add"}
// CHECK: arith.constant 2.0
func.func @splat_scalar(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %two = loom.constant dense<2.0> : tensor<3x2xf32>
  %a = loom.add %x, %two : tensor<3x2xf32>
  return %a : tensor<3x2xf32>
}

// -----

// A splat constant something else reads is filled by a loop.
// CHECK-LABEL: func.func @splat_fill
// CHECK: %[[Z:.*]] = loomrt.alloc {category = "activation"} : memref<3x2xf32>
// CHECK-NEXT: loomrt.kernel outs(%[[Z]] : memref<3x2xf32>) attributes {origin = "fill"}
// CHECK: loomrt.reduce sum [0] ins(%[[Z]]
func.func @splat_fill(%x: tensor<3x2xf32>) -> tensor<2xf32> {
  %z = loom.constant dense<1.0> : tensor<3x2xf32>
  %s = loom.reduce_sum %z, dims = [0] : tensor<3x2xf32> -> tensor<2xf32>
  return %s : tensor<2xf32>
}

// -----

// A contraction over lhs dimension 0 uses BLAS's transpose, not a copy.
// CHECK-LABEL: func.func @contract_lhs_dim0
// CHECK-NOT: loomrt.copy
// CHECK: loomrt.gemm ins(%arg0, %arg1 : memref<3x2xf32>, memref<3x4xf32>) {{.*}}k = 3 : i64, m = 2 : i64, n = 4 : i64, {{.*}}trans_a = true, trans_b = false
func.func @contract_lhs_dim0(%a: tensor<3x2xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %d = loom.dot_general %a, %b, contracting_dims = [0] x [0] : (tensor<3x2xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %d : tensor<2x4xf32>
}

// -----

// A weight transposed for a matmul (PyTorch's Linear) is read by BLAS with
// trans_b: no copy of the transpose.
// CHECK-LABEL: func.func @linear
// CHECK-NOT: loomrt.copy
// CHECK: loomrt.gemm ins(%arg0, %arg1 : memref<2x4xf32>, memref<8x4xf32>) outs(%arg2 : memref<2x8xf32>) {{.*}}trans_a = false, trans_b = true
// CHECK-NEXT: return
func.func @linear(%x: tensor<2x4xf32>, %w: tensor<8x4xf32>) -> tensor<2x8xf32> {
  %t = loom.transpose %w, permutation = [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
  %y = loom.dot_general %x, %t, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// A layout BLAS cannot read (the contracting dimension in the middle) is
// copied into batch, free, contracting order first.
// CHECK-LABEL: func.func @layout_copy
// CHECK: %[[C:.*]] = loomrt.alloc {category = "workspace"} : memref<2x4x3xf32>
// CHECK-NEXT: loomrt.copy ins(%arg0 : memref<2x3x4xf32>) outs(%[[C]] : memref<2x4x3xf32>) {origin = "dot_general.layout", shape = array<i64: 2, 4, 3>, source_offset = 0 : i64, source_strides = array<i64: 12, 1, 4>
// CHECK: loomrt.gemm ins(%[[C]], %arg1 : {{.*}}) {{.*}}k = 3 : i64, m = 8 : i64, n = 5 : i64
func.func @layout_copy(%a: tensor<2x3x4xf32>, %b: tensor<3x5xf32>) -> tensor<2x4x5xf32> {
  %d = loom.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3x4xf32>, tensor<3x5xf32>) -> tensor<2x4x5xf32>
  return %d : tensor<2x4x5xf32>
}

// -----

// Attention's heads are read in place: q and k [b, s, h, d] transposed to
// [b, h, s, d] feed q k^T as one strided gemm (b x h matrices, rows h*d
// apart), with no copy of either transpose.
// CHECK-LABEL: func.func @heads_strided
// CHECK-NOT: loomrt.copy
// CHECK: loomrt.gemm ins(%arg0, %arg1 : memref<2x5x3x4xf32>, memref<2x5x3x4xf32>) outs(%arg2 : memref<2x3x5x5xf32>) {a_batched = true, a_strides = array<i64: 60, 4, 12>, b_batched = true, b_strides = array<i64: 60, 4, 12>, batch = 6 : i64, batch_outer = 2 : i64, k = 4 : i64, m = 5 : i64, n = 5 : i64, origin = "dot_general", trans_a = false, trans_b = true}
// CHECK-NEXT: return
func.func @heads_strided(%q: tensor<2x5x3x4xf32>, %k: tensor<2x5x3x4xf32>) -> tensor<2x3x5x5xf32> {
  %qt = loom.transpose %q, permutation = [0, 2, 1, 3] : tensor<2x5x3x4xf32> -> tensor<2x3x5x4xf32>
  %kt = loom.transpose %k, permutation = [0, 2, 1, 3] : tensor<2x5x3x4xf32> -> tensor<2x3x5x4xf32>
  %s = loom.dot_general %qt, %kt, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : (tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>) -> tensor<2x3x5x5xf32>
  return %s : tensor<2x3x5x5xf32>
}

// -----

// probs [b, h, s, s] times v read in place, the dense operand described by
// the same strided form (its batch levels b and h merge in neither: v's do
// not nest).
// CHECK-LABEL: func.func @probs_times_heads
// CHECK-NOT: loomrt.copy
// CHECK: loomrt.gemm ins(%arg0, %arg1 : memref<2x3x5x5xf32>, memref<2x5x3x4xf32>) {{.*}}a_strides = array<i64: 75, 25, 5>, {{.*}}b_strides = array<i64: 60, 4, 12>, batch = 6 : i64, batch_outer = 2 : i64, k = 5 : i64, m = 5 : i64, n = 4 : i64, {{.*}}trans_a = false, trans_b = false}
func.func @probs_times_heads(%p: tensor<2x3x5x5xf32>, %v: tensor<2x5x3x4xf32>) -> tensor<2x3x5x4xf32> {
  %vt = loom.transpose %v, permutation = [0, 2, 1, 3] : tensor<2x5x3x4xf32> -> tensor<2x3x5x4xf32>
  %c = loom.dot_general %p, %vt, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] : (tensor<2x3x5x5xf32>, tensor<2x3x5x4xf32>) -> tensor<2x3x5x4xf32>
  return %c : tensor<2x3x5x4xf32>
}

// -----

// A reshape is a view; returned, it is copied through the view into its
// result buffer.
// CHECK-LABEL: func.func @reshape_view
// CHECK: %[[V:.*]] = loomrt.view %arg0 : memref<2x2xf32> to memref<4xf32>
// CHECK-NEXT: loomrt.copy ins(%[[V]] : memref<4xf32>) outs(%arg1 : memref<4xf32>) {origin = "reshape"
func.func @reshape_view(%x: tensor<2x2xf32>) -> tensor<4xf32> {
  %r = loom.reshape %x : tensor<2x2xf32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A returned argument, and a value returned twice, are copied into their
// result buffers at the end.
// CHECK-LABEL: func.func @returned_copies
// CHECK: loomrt.kernel ins(%arg0 : memref<3xf32>) outs(%arg1 : memref<3xf32>) attributes {origin = "exp"}
// CHECK: loomrt.copy ins(%arg1 : memref<3xf32>) outs(%arg2 : memref<3xf32>) {origin = "result"
// CHECK-NEXT: loomrt.copy ins(%arg0 : memref<3xf32>) outs(%arg3 : memref<3xf32>) {origin = "result"
// CHECK-NEXT: return
func.func @returned_copies(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %e = loom.exp %x : tensor<3xf32>
  return %e, %e, %x : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// A transpose something else than a kernel or a gemm reads is a strided copy.
// CHECK-LABEL: func.func @transpose_copy
// CHECK: loomrt.copy {{.*}}origin = "transpose", shape = array<i64: 3, 2>, source_offset = 0 : i64, source_strides = array<i64: 1, 3>
func.func @transpose_copy(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %t = loom.transpose %x, permutation = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  return %t : tensor<3x2xf32>
}

// -----

// A transpose read by one kernel is read through strides.
// CHECK-LABEL: func.func @transpose_strided
// CHECK-NOT: loomrt.copy
// CHECK: loomrt.kernel ins(%arg0 : memref<2x3xf32>) outs(%arg1 : memref<3x2xf32>) attributes {in_strides = [array<i64: 1, 3>], origin = "exp"}
func.func @transpose_strided(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %t = loom.transpose %x, permutation = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %e = loom.exp %t : tensor<3x2xf32>
  return %e : tensor<3x2xf32>
}

// -----

// A slice is a strided copy from its start.
// CHECK-LABEL: func.func @slice
// CHECK: loomrt.copy {{.*}}origin = "slice", shape = array<i64: 1, 3>, source_offset = 3 : i64, source_strides = array<i64: 3, 1>
func.func @slice(%x: tensor<2x3xf32>) -> tensor<1x3xf32> {
  %s = loom.slice %x, start = [1, 0], limit = [2, 3], strides = [1, 1] : tensor<2x3xf32> -> tensor<1x3xf32>
  return %s : tensor<1x3xf32>
}

// -----

// A concat copies each input at its offset.
// CHECK-LABEL: func.func @concat
// CHECK: loomrt.copy ins(%arg0 {{.*}}origin = "concat"{{.*}}target_offset = 0
// CHECK: loomrt.copy ins(%arg1 {{.*}}origin = "concat"{{.*}}target_offset = 6
func.func @concat(%x: tensor<2x3xf32>, %y: tensor<1x3xf32>) -> tensor<3x3xf32> {
  %c = loom.concat %x, %y dim = 0 : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<3x3xf32>
  return %c : tensor<3x3xf32>
}

// -----

// Reductions are generated loops; softmax is a library call.
// CHECK-LABEL: func.func @reduce_and_softmax
// CHECK: loomrt.reduce sum [1]
// CHECK: loomrt.softmax 1
func.func @reduce_and_softmax(%x: tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2x3xf32>) {
  %r = loom.reduce_sum %x, dims = [1] : tensor<2x3xf32> -> tensor<2xf32>
  %sm = loom.softmax %x, axis = 1 : tensor<2x3xf32>
  return %r, %sm : tensor<2xf32>, tensor<2x3xf32>
}

// -----

// An all-reduce starts on a copy of its operand and is waited for right
// before the first op that reads its result: the independent neg overlaps
// the transfer. The device mesh stays (collectives name its axes).
// CHECK: shard.grid @mesh(shape = 2x1x1)
// CHECK-LABEL: func.func @overlap
// CHECK: %[[A:.*]] = loomrt.alloc
// CHECK: loomrt.kernel ins(%arg0 {{.*}}origin = "exp"
// CHECK: %[[R:.*]] = loomrt.alloc
// CHECK: loomrt.copy ins(%[[A]] : memref<4xf32>) outs(%[[R]] : memref<4xf32>) {origin = "all_reduce"
// CHECK-NEXT: %[[H:.*]] = loomrt.all_reduce_start %[[R]] on @mesh grid_axes = [0] {reduction = "sum"} : memref<4xf32>
// CHECK: loomrt.kernel ins(%[[A]] {{.*}}origin = "neg"
// CHECK: loomrt.wait %[[H]]
// CHECK-NEXT: loomrt.kernel ins(%[[R]], %{{.*}}origin = "add"
// CHECK-NOT: loomrt.wait
shard.grid @mesh(shape = 2x1x1)
func.func @overlap(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = loom.exp %x : tensor<4xf32>
  %r = shard.all_reduce %a on @mesh grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  %b = loom.neg %a : tensor<4xf32>
  %c = loom.add %r, %b : tensor<4xf32>
  return %c, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// An all-reduce nobody reads (the last collective of a layer that
// loom-recompute's full policy replays) is waited for at the end, in start
// order.
shard.grid @mesh(shape = 2x1x1)
// CHECK-LABEL: func.func @unread
// CHECK: %[[H1:.*]] = loomrt.all_reduce_start
// CHECK: %[[H2:.*]] = loomrt.all_reduce_start
// CHECK: loomrt.kernel {{.*}}origin = "neg"
// CHECK-NOT: loomrt.wait
// CHECK: loomrt.yield
// CHECK-NEXT: }
// CHECK-NEXT: loomrt.wait %[[H1]]
// CHECK-NEXT: loomrt.wait %[[H2]]
// CHECK-NEXT: return
func.func @unread(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = loom.exp %x : tensor<4xf32>
  %r = shard.all_reduce %a on @mesh grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  %s = shard.all_reduce %x on @mesh grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  %b = loom.neg %a : tensor<4xf32>
  return %b : tensor<4xf32>
}

// -----

// The first reader may be a member of a fusion group: the wait is where it
// reads (right after the start here), not at the group's kernel.
// CHECK-LABEL: func.func @wait_at_member
// CHECK: %[[H:.*]] = loomrt.all_reduce_start
// CHECK-NEXT: loomrt.wait %[[H]]
// CHECK-NEXT: loomrt.kernel ins(%arg1 {{.*}}origin = "neg"
// CHECK: loomrt.kernel {{.*}}origin = "exp+add"
shard.grid @mesh(shape = 2x1x1)
func.func @wait_at_member(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r = shard.all_reduce %x on @mesh grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  %e = loom.exp %r : tensor<4xf32>
  %n = loom.neg %y : tensor<4xf32>
  %a = loom.add %e, %n : tensor<4xf32>
  return %n, %a : tensor<4xf32>, tensor<4xf32>
}

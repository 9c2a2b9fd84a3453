// RUN: loom-opt %s --split-input-file | loom-opt --split-input-file | FileCheck %s --check-prefix=PRINT
// RUN: loom-opt --convert-stablehlo-to-loom --split-input-file %s | FileCheck %s

// While loops with a trip count known at import are unrolled before the
// conversion: the loop counters become constants in each copy of the body,
// so the dynamic_slice and dynamic_update_slice they index become static.
// Values: jax's fori_loop and scan, forward and gradient, and a Flax
// nn.scan model, against JAX in test/python/test_frontend.py and
// test_flax_models.py.

// jax.lax.fori_loop(0, 3, lambda i, x: tanh(x @ w), x): the counter's
// compare and add are evaluated, the body copied three times.
// PRINT-LABEL: func.func @fori_loop
// PRINT: %{{.*}}:3 = stablehlo.while(%[[W:.*]] = %arg1, %[[I:.*]] = %{{.*}}, %[[X:.*]] = %arg0) : tensor<4x4xf32>, tensor<i32>, tensor<2x4xf32>
// PRINT-NEXT: cond {
// PRINT: stablehlo.compare  LT, %[[I]], %{{.*}}
// PRINT: } do {
// PRINT: stablehlo.dot_general %[[X]], %[[W]]
// CHECK-LABEL: func.func @fori_loop
// CHECK-SAME: (%[[X:.*]]: tensor<2x4xf32>, %[[W:.*]]: tensor<4x4xf32>)
// CHECK-NOT: stablehlo
// CHECK: %[[A:.*]] = loom.dot_general %[[X]], %[[W]]
// CHECK: %[[TA:.*]] = loom.tanh %[[A]]
// CHECK: %[[B:.*]] = loom.dot_general %[[TA]], %[[W]]
// CHECK: %[[TB:.*]] = loom.tanh %[[B]]
// CHECK: %[[C:.*]] = loom.dot_general %[[TB]], %[[W]]
// CHECK: %[[TC:.*]] = loom.tanh %[[C]]
// CHECK-NOT: loom.tanh
// CHECK: return %[[TC]]
func.func @fori_loop(%arg0: tensor<2x4xf32>, %arg1: tensor<4x4xf32>) -> tensor<2x4xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:3 = stablehlo.while(%iterArg = %arg1, %iterArg_0 = %c, %iterArg_1 = %arg0) : tensor<4x4xf32>, tensor<i32>, tensor<2x4xf32>
  cond {
    %c_2 = stablehlo.constant dense<3> : tensor<i32>
    %2 = stablehlo.compare  LT, %iterArg_0, %c_2,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %2 : tensor<i1>
  } do {
    %1 = stablehlo.dot_general %iterArg_1, %iterArg, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %2 = stablehlo.tanh %1 : tensor<2x4xf32>
    %c_2 = stablehlo.constant dense<1> : tensor<i32>
    %3 = stablehlo.add %iterArg_0, %c_2 : tensor<i32>
    stablehlo.return %iterArg, %3, %2 : tensor<4x4xf32>, tensor<i32>, tensor<2x4xf32>
  }
  return %0#2 : tensor<2x4xf32>
}

// -----

// jax.lax.scan over stacked weights, writing each step's sum: the layer's
// weights are a static slice per copy (JAX's negative-index wrap-around
// evaluated away), the outputs an update at a static row, selected in.
// CHECK-LABEL: func.func @scan
// CHECK-SAME: (%[[X:.*]]: tensor<2x4xf32>, %[[WS:.*]]: tensor<2x4x4xf32>)
// CHECK-NOT: stablehlo
// CHECK: loom.slice %[[WS]], start = [0, 0, 0], limit = [1, 4, 4]
// CHECK: %[[IN0:.*]] = loom.concat %{{.*}}, %{{.*}} dim = 0 : (tensor<1xi1>, tensor<1xi1>) -> tensor<2xi1>
// CHECK: loom.select %[[IN0]]
// CHECK: loom.slice %[[WS]], start = [1, 0, 0], limit = [2, 4, 4]
// CHECK: %[[IN1:.*]] = loom.concat %{{.*}}, %{{.*}} dim = 0 : (tensor<1xi1>, tensor<1xi1>) -> tensor<2xi1>
// CHECK: loom.select %[[IN1]]
// CHECK-NOT: loom.slice %[[WS]]
func.func @scan(%x: tensor<2x4xf32>, %ws: tensor<2x4x4xf32>) -> (tensor<2x4xf32>, tensor<2xf32>) {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %ys = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> tensor<2xf32>
  %c = stablehlo.constant dense<0> : tensor<i32>
  %r:4 = stablehlo.while(%w = %ws, %i = %c, %h = %x, %acc = %ys) : tensor<2x4x4xf32>, tensor<i32>, tensor<2x4xf32>, tensor<2xf32>
  cond {
    %n = stablehlo.constant dense<2> : tensor<i32>
    %p = stablehlo.compare  LT, %i, %n,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %c0 = stablehlo.constant dense<0> : tensor<i32>
    %neg = stablehlo.compare  LT, %i, %c0,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %two = stablehlo.constant dense<2> : tensor<i32>
    %wrapped = stablehlo.add %i, %two : tensor<i32>
    %k = stablehlo.select %neg, %wrapped, %i : tensor<i1>, tensor<i32>
    %s = stablehlo.dynamic_slice %w, %k, %c0, %c0, sizes = [1, 4, 4] : (tensor<2x4x4xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x4x4xf32>
    %wk = stablehlo.reshape %s : (tensor<1x4x4xf32>) -> tensor<4x4xf32>
    %y = stablehlo.dot_general %h, %wk, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %t = stablehlo.tanh %y : tensor<2x4xf32>
    %sum = stablehlo.reduce(%t init: %zero) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x4xf32>, tensor<f32>) -> tensor<f32>
    %row = stablehlo.broadcast_in_dim %sum, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %acc2 = stablehlo.dynamic_update_slice %acc, %row, %i : (tensor<2xf32>, tensor<1xf32>, tensor<i32>) -> tensor<2xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %w, %next, %t, %acc2 : tensor<2x4x4xf32>, tensor<i32>, tensor<2x4xf32>, tensor<2xf32>
  }
  return %r#2, %r#3 : tensor<2x4xf32>, tensor<2xf32>
}

// -----

// Integer arrays the loop writes by the counter are known too (JAX's
// gradient of a fori_loop keeps the forward's indices in one and reads
// them back in the backward loop): here the second loop reads, in reverse,
// the indices the first wrote, so its slices are static as well.
// CHECK-LABEL: func.func @saved_indices
// CHECK-NOT: stablehlo
// CHECK: loom.slice %arg0, start = [2], limit = [3]
// CHECK: loom.slice %arg0, start = [0], limit = [1]
// CHECK-NOT: loom.slice %arg0
func.func @saved_indices(%x: tensor<4xf32>) -> tensor<1xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %none = stablehlo.constant dense<0> : tensor<2xi32>
  %f:2 = stablehlo.while(%i = %c0, %saved = %none) : tensor<i32>, tensor<2xi32>
  cond {
    %n = stablehlo.constant dense<2> : tensor<i32>
    %p = stablehlo.compare  LT, %i, %n,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %two = stablehlo.constant dense<2> : tensor<i32>
    %k = stablehlo.multiply %i, %two : tensor<i32>
    %row = stablehlo.broadcast_in_dim %k, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %s = stablehlo.dynamic_update_slice %saved, %row, %i : (tensor<2xi32>, tensor<1xi32>, tensor<i32>) -> tensor<2xi32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %next, %s : tensor<i32>, tensor<2xi32>
  }
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<1xf32>
  %b:3 = stablehlo.while(%j = %c0, %ks = %f#1, %acc = %zero) : tensor<i32>, tensor<2xi32>, tensor<1xf32>
  cond {
    %n = stablehlo.constant dense<2> : tensor<i32>
    %p = stablehlo.compare  LT, %j, %n,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %last = stablehlo.subtract %one, %j : tensor<i32>
    %kk = stablehlo.dynamic_slice %ks, %last, sizes = [1] : (tensor<2xi32>, tensor<i32>) -> tensor<1xi32>
    %k = stablehlo.reshape %kk : (tensor<1xi32>) -> tensor<i32>
    %v = stablehlo.dynamic_slice %x, %k, sizes = [1] : (tensor<4xf32>, tensor<i32>) -> tensor<1xf32>
    %sum = stablehlo.add %acc, %v : tensor<1xf32>
    %next = stablehlo.add %j, %one : tensor<i32>
    stablehlo.return %next, %ks, %sum : tensor<i32>, tensor<2xi32>, tensor<1xf32>
  }
  return %b#2 : tensor<1xf32>
}

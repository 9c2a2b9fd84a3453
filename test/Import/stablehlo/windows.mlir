// RUN: loom-opt --convert-stablehlo-to-loom %s | FileCheck %s

// reduce_window, pad and the argmax reduce, as JAX emits them. Their values
// are checked against JAX in test/python/test_frontend.py and against the
// StableHLO test data (cumsum_*, reduce_window_*, argmax_*) in
// test/python/test_stablehlo_conformance.py; these pin the forms.

// jnp.cumsum: pad in front with the init, then (a float sum over a small
// window) one slice per window element added in order.
// CHECK-LABEL: func.func @cumsum
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK: %[[ZERO:.*]] = loom.broadcast %{{.*}}, dims = [] : tensor<f32> -> tensor<2x2xf32>
// CHECK: %[[P:.*]] = loom.concat %[[ZERO]], %[[X]] dim = 1 : (tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x5xf32>
// CHECK: %[[A:.*]] = loom.slice %[[P]], start = [0, 0], limit = [2, 3]
// CHECK: %[[B:.*]] = loom.slice %[[P]], start = [0, 1], limit = [2, 4]
// CHECK: %[[AB:.*]] = loom.add %[[A]], %[[B]]
// CHECK: %[[C:.*]] = loom.slice %[[P]], start = [0, 2], limit = [2, 5]
// CHECK: %[[S:.*]] = loom.add %[[AB]], %[[C]]
// CHECK: return %[[S]]
func.func @cumsum(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %c) <{padding = dense<[[0, 0], [2, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 1, 3>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// cummax of integers: by doubling (maxima of 2, then 4 elements; the
// window of 5 combines the level of 1 with the level of 4).
// CHECK-LABEL: func.func @cummax
// CHECK: %[[P:.*]] = loom.concat %{{.*}}, %{{.*}} dim = 0 : (tensor<4xi32>, tensor<5xi32>) -> tensor<9xi32>
// CHECK: %[[ONE:.*]] = loom.slice %[[P]], start = [0], limit = [5]
// CHECK: %[[TWO:.*]] = loom.max %{{.*}}, %{{.*}} : tensor<8xi32>
// CHECK: %[[FOUR:.*]] = loom.max %{{.*}}, %{{.*}} : tensor<6xi32>
// CHECK: %[[TAIL:.*]] = loom.slice %[[FOUR]], start = [1], limit = [6]
// CHECK: %[[R:.*]] = loom.max %[[ONE]], %[[TAIL]] : tensor<5xi32>
// CHECK: return %[[R]]
func.func @cummax(%x: tensor<5xi32>) -> tensor<5xi32> {
  %c = stablehlo.constant dense<-2147483648> : tensor<i32>
  %0 = "stablehlo.reduce_window"(%x, %c) <{padding = dense<[[4, 0]]> : tensor<1x2xi64>, window_dimensions = array<i64: 5>}> ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %s = stablehlo.maximum %a, %b : tensor<i32>
    stablehlo.return %s : tensor<i32>
  }) : (tensor<5xi32>, tensor<i32>) -> tensor<5xi32>
  return %0 : tensor<5xi32>
}

// jnp.argmax: the maximum, where it is hit (or the NaNs, where there are
// any), the smallest index there (as -1 - max(-1 - i)).
// CHECK-LABEL: func.func @argmax
// CHECK-SAME: (%[[X:.*]]: tensor<4x6xf32>)
// CHECK: %[[IOTA:.*]] = loom.iota dim = 1 : tensor<4x6xi32>
// CHECK: %[[M:.*]] = loom.reduce_max %[[X]], dims = [1]
// CHECK: %[[MB:.*]] = loom.broadcast %[[M]], dims = [0]
// CHECK: %[[HIT:.*]] = loom.compare eq, %[[X]], %[[MB]]
// CHECK: %[[NAN:.*]] = loom.compare ne, %[[X]], %[[X]]
// CHECK: %[[WHERE:.*]] = loom.select %{{.*}}, %[[NAN]], %[[HIT]]
// CHECK: %[[BIG:.*]] = loom.constant dense<2147483647> : tensor<4x6xi32>
// CHECK: loom.select %[[WHERE]], %[[IOTA]], %[[BIG]]
// CHECK: loom.reduce_max %{{.*}}, dims = [1] : tensor<4x6xi32> -> tensor<4xi32>
// CHECK: %[[IDX:.*]] = loom.sub
// CHECK: %[[R:.*]] = loom.select %{{.*}}, %{{.*}}, %[[IDX]] : tensor<4xi1>, tensor<4xi32>
// CHECK: return %[[R]]
func.func @argmax(%x: tensor<4x6xf32>) -> tensor<4xi32> {
  %i = stablehlo.iota dim = 1 : tensor<4x6xi32>
  %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %c = stablehlo.constant dense<0> : tensor<i32>
  %1:2 = stablehlo.reduce(%x init: %cst), (%i init: %c) across dimensions = [1] : (tensor<4x6xf32>, tensor<4x6xi32>, tensor<f32>, tensor<i32>) -> (tensor<4xf32>, tensor<4xi32>)
   reducer(%a: tensor<f32>, %b: tensor<f32>) (%p: tensor<i32>, %q: tensor<i32>)  {
    %2 = stablehlo.compare  GT, %a, %b,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %3 = stablehlo.compare  NE, %a, %a,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %4 = stablehlo.or %2, %3 : tensor<i1>
    %5 = stablehlo.compare  EQ, %a, %b,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %6 = stablehlo.compare  LT, %p, %q,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %7 = stablehlo.and %5, %6 : tensor<i1>
    %8 = stablehlo.or %4, %7 : tensor<i1>
    %9 = stablehlo.select %4, %a, %b : tensor<i1>, tensor<f32>
    %10 = stablehlo.select %8, %p, %q : tensor<i1>, tensor<i32>
    stablehlo.return %9, %10 : tensor<f32>, tensor<i32>
  }
  return %1#1 : tensor<4xi32>
}

// Interior padding and negative edges.
// CHECK-LABEL: func.func @pad
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[V:.*]]: tensor<f32>)
// CHECK: %[[ROWS:.*]] = loom.reshape %[[X]] : tensor<2x3xf32> -> tensor<2x1x3xf32>
// CHECK: %[[FILL:.*]] = loom.broadcast %[[V]], dims = [] : tensor<f32> -> tensor<2x1x3xf32>
// CHECK: loom.concat %[[ROWS]], %[[FILL]] dim = 1 : (tensor<2x1x3xf32>, tensor<2x1x3xf32>) -> tensor<2x2x3xf32>
// CHECK: loom.slice %{{.*}}, start = [0, 0], limit = [3, 3]
// CHECK: loom.concat %{{.*}}, %{{.*}} dim = 0 : (tensor<1x3xf32>, tensor<3x3xf32>) -> tensor<4x3xf32>
// CHECK: %[[R:.*]] = loom.slice %{{.*}}, start = [0, 1], limit = [4, 7]
// CHECK: return %[[R]] : tensor<4x6xf32>
func.func @pad(%x: tensor<2x3xf32>, %c: tensor<f32>) -> tensor<4x6xf32> {
  %r = stablehlo.pad %x, %c, low = [1, -1], high = [0, 2], interior = [1, 1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<4x6xf32>
  return %r : tensor<4x6xf32>
}

// An empty operand: the result is all padding.
// CHECK-LABEL: func.func @pad_empty
// CHECK: %[[R:.*]] = loom.broadcast %{{.*}}, dims = [] : tensor<f32> -> tensor<6x2xf32>
// CHECK: return %[[R]]
func.func @pad_empty(%x: tensor<6x0xf32>, %c: tensor<f32>) -> tensor<6x2xf32> {
  %r = stablehlo.pad %x, %c, low = [0, 2], high = [0, 0], interior = [0, 1] : (tensor<6x0xf32>, tensor<f32>) -> tensor<6x2xf32>
  return %r : tensor<6x2xf32>
}

// The gradient of jax's max_pool (window 2, stride 2): the windows' first
// maxima by folding the window's elements in order with the select body
// (GE keeps the element so far), then each window position's sources
// placed back on the operand's grid (stride - 1 holes between them) and
// added where that position was selected. Values: the select_and_scatter_*
// cases of the StableHLO test data.
// CHECK-LABEL: func.func @max_pool_grad
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[G:.*]]: tensor<2xf32>)
// CHECK: %[[A:.*]] = loom.slice %[[X]], start = [0], limit = [3], strides = [2] : tensor<4xf32> -> tensor<2xf32>
// CHECK: %[[ZERO:.*]] = loom.constant dense<0> : tensor<2xi32>
// CHECK: %[[B:.*]] = loom.slice %[[X]], start = [1], limit = [4], strides = [2] : tensor<4xf32> -> tensor<2xf32>
// CHECK: %[[ONE:.*]] = loom.constant dense<1> : tensor<2xi32>
// CHECK: %[[KEEP:.*]] = loom.compare ge, %[[A]], %[[B]]
// CHECK: %[[WHERE:.*]] = loom.select %[[KEEP]], %[[ZERO]], %[[ONE]]
// CHECK: %[[R0:.*]] = loom.broadcast
// CHECK: %[[HIT0:.*]] = loom.compare eq, %[[WHERE]], %{{.*}} : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
// CHECK: %[[SUM0:.*]] = loom.add %[[R0]], %{{.*}} : tensor<4xf32>
// CHECK: %[[R1:.*]] = loom.select %{{.*}}, %[[SUM0]], %[[R0]] : tensor<4xi1>, tensor<4xf32>
// CHECK: %[[HIT1:.*]] = loom.compare eq, %[[WHERE]], %{{.*}} : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
// CHECK: %[[SUM1:.*]] = loom.add %[[R1]], %{{.*}} : tensor<4xf32>
// CHECK: %[[R2:.*]] = loom.select %{{.*}}, %[[SUM1]], %[[R1]] : tensor<4xi1>, tensor<4xf32>
// CHECK: return %[[R2]]
func.func @max_pool_grad(%x: tensor<4xf32>, %g: tensor<2xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = "stablehlo.select_and_scatter"(%x, %g, %c) <{window_dimensions = array<i64: 2>, window_strides = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %p = stablehlo.compare  GE, %a, %b,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<4xf32>, tensor<2xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

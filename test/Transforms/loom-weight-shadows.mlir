// loom-weight-shadows (--precision bf16, on by default): a parameter the
// step reads rounded to bf16 gets a bf16 state argument, its shadow, that
// the products read; the update's rounding is returned as the shadow's
// next value. A parameter the step does not update, and one read only in
// f32, keep what they had.
//
// RUN: loom-opt %s -loom-weight-shadows | FileCheck %s
// RUN: loom-opt %s -loom-weight-shadows=function=other | FileCheck %s --check-prefix=NONE

// CHECK-LABEL: func.func @main_step(
// CHECK-SAME:    %arg0: tensor<4x3xf32> {loom.name = "w", loom.param},
// CHECK-SAME:    %arg1: tensor<3x2xf32> {loom.name = "frozen", loom.param},
// CHECK-SAME:    %arg2: tensor<5x4xf32> {loom.name = "emb", loom.param},
// CHECK-SAME:    %arg3: tensor<4x3xf32> {loom.name = "m", loom.state},
// CHECK-SAME:    %[[SHADOW:.*]]: tensor<4x3xbf16> {loom.name = "w.bf16", loom.shadow_of = 0 : i64, loom.state},
// CHECK-SAME:    %[[X:.*]]: tensor<2x4xf32> {loom.name = "x"},
// CHECK-SAME:    %[[IDS:.*]]: tensor<2xi64> {loom.name = "ids"})
// CHECK-SAME:    tensor<4x3xf32> {loom.name = "w", loom.updates = 0 : i64},
// CHECK-SAME:    tensor<5x4xf32> {loom.updates = 2 : i64},
// CHECK-SAME:    tensor<4x3xf32> {loom.updates = 3 : i64},
// CHECK-SAME:    tensor<2xi64> {loom.updates = 6 : i64},
// CHECK-SAME:    tensor<4x3xbf16> {loom.name = "w.bf16", loom.updates = 4 : i64})
// The products read the shadow, once per conversion there was.
// CHECK-NOT:   loom.convert %arg0
// CHECK:       loom.dot_general {{.*}}, %[[SHADOW]],
// CHECK:       loom.dot_general {{.*}}, %[[SHADOW]],
// The frozen parameter keeps its conversion.
// CHECK:       loom.convert %arg1 : tensor<3x2xf32> -> tensor<3x2xbf16>
// CHECK:       %[[NEW:.*]] = loom.sub %arg0,
// CHECK:       %[[NEXT:.*]] = loom.convert %[[NEW]] {loom.phase = "optimizer"} : tensor<4x3xf32> -> tensor<4x3xbf16>
// CHECK:       return {{.*}}, %[[NEXT]] :

// NONE-LABEL: func.func @main_step(
// NONE-NOT:    loom.shadow_of
// NONE:        loom.convert %arg0

module {
  func.func @main_step(
      %w: tensor<4x3xf32> {loom.param, loom.name = "w"},
      %frozen: tensor<3x2xf32> {loom.param, loom.name = "frozen"},
      %emb: tensor<5x4xf32> {loom.param, loom.name = "emb"},
      %m: tensor<4x3xf32> {loom.state, loom.name = "m"},
      %x: tensor<2x4xf32> {loom.name = "x"},
      %ids: tensor<2xi64> {loom.name = "ids"})
      -> (tensor<f32> {loom.name = "loss"},
          tensor<4x3xf32> {loom.name = "w", loom.updates = 0 : i64},
          tensor<5x4xf32> {loom.updates = 2 : i64},
          tensor<4x3xf32> {loom.updates = 3 : i64},
          tensor<2xi64> {loom.updates = 5 : i64}) {
    %xb = loom.convert %x : tensor<2x4xf32> -> tensor<2x4xbf16>
    %w1 = loom.convert %w : tensor<4x3xf32> -> tensor<4x3xbf16>
    %y = loom.dot_general %xb, %w1, contracting_dims = [1] x [0] : (tensor<2x4xbf16>, tensor<4x3xbf16>) -> tensor<2x3xbf16>
    %w2 = loom.convert %w : tensor<4x3xf32> -> tensor<4x3xbf16>
    %y2 = loom.dot_general %xb, %w2, contracting_dims = [1] x [0] : (tensor<2x4xbf16>, tensor<4x3xbf16>) -> tensor<2x3xbf16>
    %f = loom.convert %frozen : tensor<3x2xf32> -> tensor<3x2xbf16>
    %z = loom.dot_general %y2, %f, contracting_dims = [1] x [0] : (tensor<2x3xbf16>, tensor<3x2xbf16>) -> tensor<2x2xbf16>
    %e = loom.gather %emb[%ids], axis = 0 : (tensor<5x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
    %zf = loom.convert %z : tensor<2x2xbf16> -> tensor<2x2xf32>
    %loss = loom.reduce_sum %zf, dims = [0, 1] : tensor<2x2xf32> -> tensor<f32>
    %yf = loom.convert %y : tensor<2x3xbf16> -> tensor<2x3xf32>
    %g = loom.dot_general %x, %yf, contracting_dims = [0] x [0] : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
    %new = loom.sub %w, %g : tensor<4x3xf32>
    %m2 = loom.add %m, %g : tensor<4x3xf32>
    %e2 = loom.reduce_sum %e, dims = [0] : tensor<2x4xf32> -> tensor<4xf32>
    %eb = loom.broadcast %e2, dims = [1] : tensor<4xf32> -> tensor<5x4xf32>
    %emb2 = loom.sub %emb, %eb : tensor<5x4xf32>
    return %loss, %new, %emb2, %m2, %ids : tensor<f32>, tensor<4x3xf32>, tensor<5x4xf32>, tensor<4x3xf32>, tensor<2xi64>
  }
}

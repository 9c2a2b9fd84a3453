// RUN: loom-opt %s -split-input-file -loom-autodiff="loss=loss" | FileCheck %s
// The output is deterministic.
// RUN: loom-opt %s -split-input-file -loom-autodiff="loss=loss" > %t.1
// RUN: loom-opt %s -split-input-file -loom-autodiff="loss=loss" > %t.2
// RUN: diff %t.1 %t.2

// The functions loom-autodiff makes: @main is kept as it is; @main_grad has
// its arguments and returns the loss and one gradient per parameter (w, b;
// not the data x, labels), in argument order. The exp feeding only the
// second result is not part of @main_grad.

// CHECK-LABEL: func.func @main(
// CHECK:         loom.exp
// CHECK:         return

// CHECK-LABEL: func.func @main_grad(
// CHECK-SAME:      %[[X:[^:]+]]: tensor<4x3xf32> {loom.name = "x"}
// CHECK-SAME:      %[[W:[^:]+]]: tensor<3x2xf32> {loom.name = "w", loom.param}
// CHECK-SAME:      %[[B:[^:]+]]: tensor<2xf32> {loom.name = "b", loom.param}
// CHECK-SAME:      %[[L:[^:]+]]: tensor<4xi64> {loom.name = "labels"}
// CHECK-SAME:      -> (tensor<f32> {loom.name = "loss"},
// CHECK-SAME:          tensor<3x2xf32> {loom.grad_of = 1 : i64, loom.name = "grad.w"},
// CHECK-SAME:          tensor<2xf32> {loom.grad_of = 2 : i64, loom.name = "grad.b"})
// CHECK-NOT:     loom.exp
// The forward ops, then the backward ones.
// CHECK:         %[[LOGITS:.+]] = loom.dot_general %[[X]], %[[W]]
// CHECK-NEXT:    %[[BIAS:.+]] = loom.broadcast %[[B]]
// CHECK-NEXT:    %[[PRE:.+]] = loom.add %[[LOGITS]], %[[BIAS]]
// CHECK-NEXT:    %[[LOSS:.+]] = loom.cross_entropy %[[PRE]], %[[L]]
// CHECK-NEXT:    loom.constant {loom.phase = "backward"} dense<1.000000e+00> : tensor<f32>
// CHECK-NOT:     loom.exp
// CHECK:         %[[DB:.+]] = loom.reduce_sum {{.*}} -> tensor<2xf32>
// CHECK-NEXT:    %[[DW:.+]] = loom.dot_general {{.*}} -> tensor<3x2xf32>
// CHECK-NEXT:    return %[[LOSS]], %[[DW]], %[[DB]]
func.func @main(%x: tensor<4x3xf32> {loom.name = "x"},
                %w: tensor<3x2xf32> {loom.param, loom.name = "w"},
                %b: tensor<2xf32> {loom.param, loom.name = "b"},
                %labels: tensor<4xi64> {loom.name = "labels"})
    -> (tensor<f32> {loom.name = "loss"}, tensor<4x2xf32> {loom.name = "logits"}) {
  %0 = loom.dot_general %x, %w, contracting_dims = [1] x [0]
      : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %1 = loom.broadcast %b, dims = [1] : tensor<2xf32> -> tensor<4x2xf32>
  %2 = loom.add %0, %1 : tensor<4x2xf32>
  %unused = loom.exp %2 : tensor<4x2xf32>
  %3 = loom.cross_entropy %2, %labels : (tensor<4x2xf32>, tensor<4xi64>) -> tensor<f32>
  return %3, %unused : tensor<f32>, tensor<4x2xf32>
}

// -----

// The seed is 1, right after the loss. cross_entropy (mean):
// (softmax - onehot(labels)) * seed / 4.

// CHECK-LABEL: func.func @main_grad(
// CHECK-SAME:      %[[X:[^:]+]]: tensor<4x2xf32> {loom.name = "x", loom.param}
// CHECK-SAME:      %[[L:[^:]+]]: tensor<4xi64> {loom.name = "labels"}
// CHECK:         %[[LOSS:.+]] = loom.cross_entropy %[[X]], %[[L]]
// CHECK-NEXT:    %[[SEED:.+]] = loom.constant {{.*}}dense<1.000000e+00>{{.*}} : tensor<f32>
// CHECK-NEXT:    %[[ROW:.+]] = loom.iota dim = 0{{.*}} : tensor<2xi64>
// CHECK-NEXT:    %[[CLASSES:.+]] = loom.broadcast %[[ROW]], dims = [1]{{.*}} : tensor<2xi64> -> tensor<4x2xi64>
// CHECK-NEXT:    %[[LB:.+]] = loom.broadcast %[[L]], dims = [0]
// CHECK-NEXT:    %[[HIT:.+]] = loom.compare eq, %[[CLASSES]], %[[LB]]
// CHECK-NEXT:    %[[ONEHOT:.+]] = loom.convert %[[HIT]]{{.*}} -> tensor<4x2xf32>
// CHECK-NEXT:    %[[N:.+]] = loom.constant {{.*}}dense<4.000000e+00>{{.*}} : tensor<f32>
// CHECK-NEXT:    %[[SCALE:.+]] = loom.div %[[SEED]], %[[N]]
// CHECK-NEXT:    %[[SCALE1:.+]] = loom.broadcast %[[SCALE]]
// CHECK-NEXT:    %[[PROBS:.+]] = loom.softmax %[[X]], axis = 1
// CHECK-NEXT:    %[[SCALE2:.+]] = loom.broadcast %[[SCALE1]]
// CHECK-NEXT:    %[[DIFF:.+]] = loom.sub %[[PROBS]], %[[ONEHOT]]
// CHECK-NEXT:    %[[DX:.+]] = loom.mul %[[DIFF]], %[[SCALE2]]
// CHECK-NEXT:    return %[[LOSS]], %[[DX]]
func.func @main(%x: tensor<4x2xf32> {loom.param, loom.name = "x"},
                %labels: tensor<4xi64> {loom.name = "labels"})
    -> (tensor<f32> {loom.name = "loss"}) {
  %0 = loom.cross_entropy %x, %labels : (tensor<4x2xf32>, tensor<4xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// mul of a value by itself: one cotangent per use, then their sum.

// CHECK-LABEL: func.func @main_grad(
// CHECK-SAME:      %[[X:[^:]+]]: tensor<4x2xf32>
// CHECK:         %[[G:.+]] = loom.broadcast {{.*}} {loom.phase = "backward"} : tensor<1x1xf32> -> tensor<4x2xf32>
// CHECK-NEXT:    %[[D1:.+]] = loom.mul %[[G]], %[[X]]
// CHECK-NEXT:    %[[D2:.+]] = loom.mul %[[G]], %[[X]]
// CHECK-NEXT:    %[[DX:.+]] = loom.add %[[D1]], %[[D2]]
// CHECK-NEXT:    return {{.*}}, %[[DX]]
func.func @main(%x: tensor<4x2xf32> {loom.param, loom.name = "x"})
    -> (tensor<f32> {loom.name = "loss"}) {
  %0 = loom.mul %x, %x : tensor<4x2xf32>
  %1 = loom.reduce_sum %0, dims = [0, 1] : tensor<4x2xf32> -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// relu: the cotangent where the input is positive.

// CHECK-LABEL: func.func @main_grad(
// CHECK-SAME:      %[[X:[^:]+]]: tensor<4x2xf32>
// CHECK:         %[[G:.+]] = loom.broadcast {{.*}} {loom.phase = "backward"} : tensor<1x1xf32> -> tensor<4x2xf32>
// CHECK-NEXT:    %[[ZERO:.+]] = loom.constant {{.*}}dense<0.000000e+00>{{.*}} : tensor<4x2xf32>
// CHECK-NEXT:    %[[POS:.+]] = loom.compare gt, %[[X]], %[[ZERO]]
// CHECK-NEXT:    %[[DX:.+]] = loom.select %[[POS]], %[[G]], %[[ZERO]]
// CHECK-NEXT:    return {{.*}}, %[[DX]]
func.func @main(%x: tensor<4x2xf32> {loom.param, loom.name = "x"})
    -> (tensor<f32> {loom.name = "loss"}) {
  %0 = loom.relu %x : tensor<4x2xf32>
  %1 = loom.reduce_sum %0, dims = [0, 1] : tensor<4x2xf32> -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// broadcast: a sum over the broadcast dimension.

// CHECK-LABEL: func.func @main_grad(
// CHECK:         %[[G:.+]] = loom.broadcast {{.*}} {loom.phase = "backward"} : tensor<1x1xf32> -> tensor<4x2xf32>
// CHECK-NEXT:    %[[DB:.+]] = loom.reduce_sum %[[G]], dims = [0]{{.*}} : tensor<4x2xf32> -> tensor<2xf32>
// CHECK-NEXT:    return {{.*}}, %[[DB]]
func.func @main(%b: tensor<2xf32> {loom.param, loom.name = "b"})
    -> (tensor<f32> {loom.name = "loss"}) {
  %0 = loom.broadcast %b, dims = [1] : tensor<2xf32> -> tensor<4x2xf32>
  %1 = loom.reduce_sum %0, dims = [0, 1] : tensor<4x2xf32> -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// dot_general: x^T . d, contracting the batch of rows; no transpose.

// CHECK-LABEL: func.func @main_grad(
// CHECK-SAME:      %[[X:[^:]+]]: tensor<4x3xf32> {loom.name = "x"}
// CHECK:         %[[G:.+]] = loom.broadcast {{.*}} {loom.phase = "backward"} : tensor<1x1xf32> -> tensor<4x2xf32>
// CHECK-NEXT:    %[[DW:.+]] = loom.dot_general %[[X]], %[[G]], contracting_dims = [0] x [0]{{.*}} : (tensor<4x3xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    return {{.*}}, %[[DW]]
func.func @main(%x: tensor<4x3xf32> {loom.name = "x"},
                %w: tensor<3x2xf32> {loom.param, loom.name = "w"})
    -> (tensor<f32> {loom.name = "loss"}) {
  %0 = loom.dot_general %x, %w, contracting_dims = [1] x [0]
      : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %1 = loom.reduce_sum %0, dims = [0, 1] : tensor<4x2xf32> -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// An f32 layer norm's gradient is one loom.norm_grad (the runtime's kernel
// recomputes the statistics); its bias gradient result is unused without a
// bias. softmax's is spelled out from its result.

// CHECK-LABEL: func.func @main_grad(
// CHECK-SAME:      -> (tensor<f32> {loom.name = "loss"}, tensor<2x4xf32> {loom.grad_of = 0 : i64, loom.name = "grad.x"}, tensor<4xf32> {loom.grad_of = 1 : i64, loom.name = "grad.g"})
// CHECK:         %[[SM:.+]] = loom.softmax
// CHECK:         loom.layer_norm
// CHECK:         %[[DX:.+]], %[[DG:.+]], %{{.+}} = loom.norm_grad %[[SM]], %{{.+}} scale %arg1 axis = 1 epsilon = 1.000000e-05 {loom.phase = "backward"}
// CHECK-NOT:     loom.reduce_mean
// softmax: y * (g - sum(g * y)).
// CHECK:         %[[GY:.+]] = loom.mul %[[DX]], %[[SM]]
// CHECK-NEXT:    %[[S:.+]] = loom.reduce_sum %[[GY]], dims = [1] keepdims
// CHECK-NEXT:    %[[SB:.+]] = loom.broadcast %[[S]]
// CHECK-NEXT:    %[[D:.+]] = loom.sub %[[DX]], %[[SB]]
// CHECK-NEXT:    %[[DS:.+]] = loom.mul %[[SM]], %[[D]]
// CHECK-NEXT:    return {{.*}}, %[[DS]], %[[DG]]
func.func @main(%x: tensor<2x4xf32> {loom.param, loom.name = "x"},
                %g: tensor<4xf32> {loom.param, loom.name = "g"})
    -> (tensor<f32> {loom.name = "loss"}) {
  %0 = loom.softmax %x, axis = 1 : tensor<2x4xf32>
  %1 = loom.layer_norm %0 scale %g axis = 1 epsilon = 1.0e-05
      : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %2 = loom.reduce_sum %1, dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %2 : tensor<f32>
}

// -----

// A norm of another type (no runtime kernel) has its derivative spelled
// out: the statistics recomputed (mean, rsqrt of the variance + epsilon),
// the scale's gradient a sum over the leading dimension. An f32 RMS norm
// gets norm_grad with `rms`.

// CHECK-LABEL: func.func @main_grad(
// CHECK:         loom.layer_norm
// CHECK:         %[[NG:.+]], %[[NGS:.+]], %{{.+}} = loom.norm_grad {{.*}} rms {loom.phase = "backward"} : (tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK:         %[[MEAN:.+]] = loom.reduce_mean {{.*}}, dims = [1] keepdims
// CHECK:         %[[VAR:.+]] = loom.reduce_mean {{.*}} dims = [1] keepdims
// CHECK:         %[[EPS:.+]] = loom.constant {{.*}}dense<1.001360e-05>{{.*}} : tensor<2x1xbf16>
// CHECK:         %[[VE:.+]] = loom.add %[[VAR]], %[[EPS]]
// CHECK:         loom.rsqrt %[[VE]]
// CHECK:         %[[DG:.+]] = loom.reduce_sum {{.*}} dims = [0]{{.*}} : tensor<2x4xbf16> -> tensor<4xbf16>
// CHECK-NOT:     loom.norm_grad
// CHECK:         return
func.func @main(%x: tensor<2x4xbf16> {loom.param, loom.name = "x"},
                %g: tensor<4xbf16> {loom.param, loom.name = "g"},
                %y: tensor<2x4xf32> {loom.param, loom.name = "y"})
    -> (tensor<f32> {loom.name = "loss"}) {
  %0 = loom.layer_norm %x scale %g axis = 1 epsilon = 1.0e-05
      : (tensor<2x4xbf16>, tensor<4xbf16>) -> tensor<2x4xbf16>
  %1 = loom.convert %0 : tensor<2x4xbf16> -> tensor<2x4xf32>
  %2 = loom.rms_norm %y axis = 1 epsilon = 1.0e-06
      : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %3 = loom.mul %1, %2 : tensor<2x4xf32>
  %4 = loom.reduce_sum %3, dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %4 : tensor<f32>
}

// -----

// An embedding lookup's gradient is a scatter_add into zeros; a unit-stride
// slice pads with zeros (concat), a strided one scatters at the taken
// indices. The integer ids get no gradient.

// CHECK-LABEL: func.func @main_grad(
// CHECK-SAME:      %[[T:[^:]+]]: tensor<5x3xf32> {loom.name = "table", loom.param}, %[[IDS:[^:]+]]: tensor<2xi64> {loom.name = "ids"})
// CHECK-SAME:      -> (tensor<f32> {loom.name = "loss"}, tensor<5x3xf32> {loom.grad_of = 0 : i64, loom.name = "grad.table"})
// CHECK:         %[[IDX:.+]] = loom.constant {{.*}}dense<[1, 3]>{{.*}} : tensor<2xi64>
// CHECK-NEXT:    %[[Z5:.+]] = loom.constant {{.*}}dense<0.000000e+00>{{.*}} : tensor<2x5xf32>
// CHECK-NEXT:    %[[DSTRIDED:.+]] = loom.scatter_add %[[Z5]][%[[IDX]]], %{{.+}}, axis = 1{{.*}} : (tensor<2x5xf32>, tensor<2xi64>, tensor<2x2xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:    %[[Z:.+]] = loom.constant {{.*}}dense<0.000000e+00>{{.*}} : tensor<2x1xf32>
// CHECK-NEXT:    %[[DPADDED:.+]] = loom.concat %[[Z]], %[[DSTRIDED]] dim = 1{{.*}} : (tensor<2x1xf32>, tensor<2x5xf32>) -> tensor<2x6xf32>
// concat: split the cotangent; both halves are the same value, so they add.
// CHECK-NEXT:    %[[HALVES:.+]]:2 = loom.split %[[DPADDED]], dim = 1, sizes = [3, 3]
// CHECK-NEXT:    %[[DG:.+]] = loom.add %[[HALVES]]#0, %[[HALVES]]#1{{.*}} : tensor<2x3xf32>
// CHECK-NEXT:    %[[ZT:.+]] = loom.constant {{.*}}dense<0.000000e+00>{{.*}} : tensor<5x3xf32>
// CHECK-NEXT:    %[[DT:.+]] = loom.scatter_add %[[ZT]][%[[IDS]]], %[[DG]], axis = 0{{.*}} : (tensor<5x3xf32>, tensor<2xi64>, tensor<2x3xf32>) -> tensor<5x3xf32>
// CHECK-NEXT:    return %{{.+}}, %[[DT]]
func.func @main(%t: tensor<5x3xf32> {loom.param, loom.name = "table"},
                %ids: tensor<2xi64> {loom.name = "ids"})
    -> (tensor<f32> {loom.name = "loss"}) {
  %0 = loom.gather %t[%ids], axis = 0 : (tensor<5x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %1 = loom.reshape %0 : tensor<2x3xf32> -> tensor<2x3xf32>
  %2 = loom.broadcast %1, dims = [0, 1] : tensor<2x3xf32> -> tensor<2x3xf32>
  %3 = loom.concat %2, %2 dim = 1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  %4 = loom.slice %3, start = [0, 1], limit = [2, 6], strides = [1, 1] : tensor<2x6xf32> -> tensor<2x5xf32>
  %5 = loom.slice %4, start = [0, 1], limit = [2, 4], strides = [1, 2] : tensor<2x5xf32> -> tensor<2x2xf32>
  %6 = loom.reduce_sum %5, dims = [0, 1] : tensor<2x2xf32> -> tensor<f32>
  return %6 : tensor<f32>
}

// -----

// Batched attention scores: the gradients contract over the other operand's
// free dimension; the key's needs a transpose back to [b, s, d]. The split
// piece that does not reach the loss has a zero cotangent.

// CHECK-LABEL: func.func @main_grad(
// CHECK-SAME:      %[[Q:[^:]+]]: tensor<2x3x4xf32> {loom.name = "q", loom.param}, %[[K:[^:]+]]: tensor<2x5x4xf32> {loom.name = "k", loom.param})
// CHECK:         %[[ZERO:.+]] = loom.constant {{.*}}dense<0.000000e+00>{{.*}} : tensor<2x3x2xf32>
// CHECK-NEXT:    %[[DS:.+]] = loom.concat %[[ZERO]], %{{.+}} dim = 2{{.*}} : (tensor<2x3x2xf32>, tensor<2x3x3xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT:    %[[DQ:.+]] = loom.dot_general %[[DS]], %[[K]], batching_dims = [0] x [0], contracting_dims = [2] x [1]{{.*}} : (tensor<2x3x5xf32>, tensor<2x5x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    %[[DKT:.+]] = loom.dot_general %[[DS]], %[[Q]], batching_dims = [0] x [0], contracting_dims = [1] x [1]{{.*}} : (tensor<2x3x5xf32>, tensor<2x3x4xf32>) -> tensor<2x5x4xf32>
// CHECK-NEXT:    return %{{.+}}, %[[DQ]], %[[DKT]]
func.func @main(%q: tensor<2x3x4xf32> {loom.param, loom.name = "q"},
                %k: tensor<2x5x4xf32> {loom.param, loom.name = "k"})
    -> (tensor<f32> {loom.name = "loss"}) {
  %s = loom.dot_general %q, %k, batching_dims = [0] x [0], contracting_dims = [2] x [2]
      : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32>
  %p:2 = loom.split %s, dim = 2, sizes = [2, 3]
      : tensor<2x3x5xf32> -> tensor<2x3x2xf32>, tensor<2x3x3xf32>
  %r = loom.reduce_max %p#1, dims = [0, 1, 2] : tensor<2x3x3xf32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// A comparison that only steers a select does not block the gradient: it
// flows through the selected operands (derivative 0 through the predicate).

// CHECK-LABEL: func.func @main_grad(
// CHECK-SAME:      %[[A:[^:]+]]: tensor<3xf32> {loom.name = "a", loom.param}
// CHECK:         %[[C:.+]] = loom.compare gt, %[[A]]
// CHECK:         loom.constant {{.*}}dense<1.000000e+00>
// CHECK:         %[[SEL:.+]] = loom.select %[[C]], %{{.+}}, %{{.+}} :
// CHECK-NEXT:    %[[DA:.+]] = loom.mul %[[SEL]], %[[A]]
// CHECK-NEXT:    %[[DA2:.+]] = loom.mul %[[SEL]], %[[A]]
// CHECK-NEXT:    %[[SUM:.+]] = loom.add %[[DA]], %[[DA2]]
// CHECK-NEXT:    return %{{.+}}, %[[SUM]]
func.func @main(%a: tensor<3xf32> {loom.param, loom.name = "a"})
    -> (tensor<f32> {loom.name = "loss"}) {
  %zero = loom.constant dense<0.0> : tensor<3xf32>
  %c = loom.compare gt, %a, %zero : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  %sq = loom.mul %a, %a : tensor<3xf32>
  %y = loom.select %c, %sq, %zero : tensor<3xi1>, tensor<3xf32>
  %l = loom.reduce_sum %y, dims = [0] : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The loss may be a parameter itself.

// CHECK-LABEL: func.func @main_grad(
// CHECK-SAME:      %[[P:[^:]+]]: tensor<f32> {loom.name = "loss", loom.param})
// CHECK-SAME:      -> (tensor<f32> {loom.name = "loss"}, tensor<f32> {loom.grad_of = 0 : i64, loom.name = "grad.loss"})
// CHECK-NEXT:    %[[ONE:.+]] = loom.constant {{.*}}dense<1.000000e+00>{{.*}} : tensor<f32>
// CHECK-NEXT:    return %[[P]], %[[ONE]]
func.func @main(%p: tensor<f32> {loom.param, loom.name = "loss"})
    -> (tensor<f32> {loom.name = "loss"}) {
  return %p : tensor<f32>
}

// -----

// Rotary embeddings' rotate-half: both halves of x are read through
// slices, so x gets two cotangents, each zero but on its half. Their sum
// is the concatenation of the two halves' cotangents: no zeros stored,
// nothing added.

// CHECK-LABEL: func.func @main_grad(
// CHECK-SAME:      %[[X:[^:]+]]: tensor<2x4xf32> {loom.name = "x", loom.param})
// CHECK-NOT:     loom.add
// CHECK:         %[[HALVES:.+]]:2 = loom.split %{{.+}}, dim = 1, sizes = [2, 2]
// CHECK-NEXT:    %[[NEG:.+]] = loom.neg %[[HALVES]]#0
// CHECK-NOT:     loom.add
// CHECK-NOT:     loom.constant
// CHECK:         %[[DX:.+]] = loom.concat %[[HALVES]]#1, %[[NEG]] dim = 1{{.*}} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    return %{{.+}}, %[[DX]]
func.func @main(%x: tensor<2x4xf32> {loom.param, loom.name = "x"})
    -> (tensor<f32> {loom.name = "loss"}) {
  %lo = loom.slice %x, start = [0, 0], limit = [2, 2], strides = [1, 1] : tensor<2x4xf32> -> tensor<2x2xf32>
  %hi = loom.slice %x, start = [0, 2], limit = [2, 4], strides = [1, 1] : tensor<2x4xf32> -> tensor<2x2xf32>
  %n = loom.neg %hi : tensor<2x2xf32>
  %r = loom.concat %n, %lo dim = 1 : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x4xf32>
  %s = loom.reduce_sum %r, dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %s : tensor<f32>
}

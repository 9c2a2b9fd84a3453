// Elementwise ops: unary, binary with numpy broadcasting made explicit,
// comparisons, Not/Where, Cast, Gelu, variadic Max/Min, Identity/Dropout.
// REQUIRES: onnx

// RUN: %loompy %S/Inputs/make_onnx.py unary %t.unary.onnx
// RUN: loom-translate --import-onnx %t.unary.onnx -o - | FileCheck %s --check-prefix=UNARY
// UNARY-LABEL: func.func @main(%arg0: tensor<2x3xf32> {loom.name = "x"})
// UNARY-SAME: -> (tensor<2x3xf32> {loom.name = "neg"}, tensor<2x3xf32> {loom.name = "abs"},
// UNARY-SAME: tensor<2x3xf32> {loom.name = "reciprocal"})
// UNARY-NEXT: %[[NEG:.*]] = loom.neg %arg0 : tensor<2x3xf32>
// UNARY-NEXT: %[[ABS:.*]] = loom.abs %arg0 : tensor<2x3xf32>
// UNARY-NEXT: %[[EXP:.*]] = loom.exp %arg0 : tensor<2x3xf32>
// UNARY-NEXT: %[[LOG:.*]] = loom.log %arg0 : tensor<2x3xf32>
// UNARY-NEXT: %[[SQRT:.*]] = loom.sqrt %arg0 : tensor<2x3xf32>
// UNARY-NEXT: %[[TANH:.*]] = loom.tanh %arg0 : tensor<2x3xf32>
// UNARY-NEXT: %[[SIG:.*]] = loom.sigmoid %arg0 : tensor<2x3xf32>
// UNARY-NEXT: %[[ERF:.*]] = loom.erf %arg0 : tensor<2x3xf32>
// UNARY-NEXT: %[[RELU:.*]] = loom.relu %arg0 : tensor<2x3xf32>
// Reciprocal is 1 / x.
// UNARY-NEXT: %[[ONE:.*]] = loom.constant dense<1.000000e+00> : tensor<2x3xf32>
// UNARY-NEXT: %[[REC:.*]] = loom.div %[[ONE]], %arg0 : tensor<2x3xf32>
// UNARY-NEXT: return %[[NEG]], %[[ABS]], %[[EXP]], %[[LOG]], %[[SQRT]], %[[TANH]], %[[SIG]], %[[ERF]], %[[RELU]], %[[REC]] :

// RUN: %loompy %S/Inputs/make_onnx.py binary_broadcast %t.bin.onnx
// RUN: loom-translate --import-onnx %t.bin.onnx -o - | FileCheck %s --check-prefix=BIN
// BIN-LABEL: func.func @main(
// BIN-SAME: %arg0: tensor<2x3x4xf32> {loom.name = "a"}, %arg1: tensor<4xf32> {loom.name = "b"}, %arg2: tensor<3x1xf32> {loom.name = "c"}, %arg3: tensor<f32> {loom.name = "s"}, %arg4: tensor<2x1x4xf32> {loom.name = "e"}, %arg5: tensor<3x1xf32> {loom.name = "p"}, %arg6: tensor<1x4xf32> {loom.name = "q"}, %arg7: tensor<3xi64> {loom.name = "ia"}, %arg8: tensor<i64> {loom.name = "ib"})
// [2,3,4] + [4]: b's only dimension is the last one.
// BIN: %[[B:.*]] = loom.broadcast %arg1, dims = [2] : tensor<4xf32> -> tensor<2x3x4xf32>
// BIN-NEXT: %[[ADD:.*]] = loom.add %arg0, %[[B]] : tensor<2x3x4xf32>
// [2,3,4] * [3,1]: trailing alignment, the 1 stretches to 4.
// BIN-NEXT: %[[C:.*]] = loom.broadcast %arg2, dims = [1, 2] : tensor<3x1xf32> -> tensor<2x3x4xf32>
// BIN-NEXT: %[[MUL:.*]] = loom.mul %arg0, %[[C]] : tensor<2x3x4xf32>
// A scalar on the left keeps its place.
// BIN-NEXT: %[[S:.*]] = loom.broadcast %arg3, dims = [] : tensor<f32> -> tensor<2x3x4xf32>
// BIN-NEXT: %[[SUB:.*]] = loom.sub %[[S]], %arg0 : tensor<2x3x4xf32>
// BIN-NEXT: %[[E:.*]] = loom.broadcast %arg4, dims = [0, 1, 2] : tensor<2x1x4xf32> -> tensor<2x3x4xf32>
// BIN-NEXT: %[[DIV:.*]] = loom.div %arg0, %[[E]] : tensor<2x3x4xf32>
// [3,1] + [1,4]: both operands broadcast to [3,4].
// BIN-DAG: %[[Q:.*]] = loom.broadcast %arg6, dims = [0, 1] : tensor<1x4xf32> -> tensor<3x4xf32>
// BIN-DAG: %[[P:.*]] = loom.broadcast %arg5, dims = [0, 1] : tensor<3x1xf32> -> tensor<3x4xf32>
// BIN: %[[BOTH:.*]] = loom.add %[[P]], %[[Q]] : tensor<3x4xf32>
// Equal shapes need no broadcast.
// BIN-NEXT: %[[SAME:.*]] = loom.mul %arg0, %arg0 : tensor<2x3x4xf32>
// BIN-NEXT: %[[IB:.*]] = loom.broadcast %arg8, dims = [] : tensor<i64> -> tensor<3xi64>
// BIN-NEXT: %[[ISUB:.*]] = loom.sub %arg7, %[[IB]] : tensor<3xi64>
// BIN-NEXT: %[[IDIV:.*]] = loom.div %arg7, %arg7 : tensor<3xi64>
// BIN-NEXT: return %[[ADD]], %[[MUL]], %[[SUB]], %[[DIV]], %[[BOTH]], %[[SAME]], %[[ISUB]], %[[IDIV]] :

// Pow: the exponent may have its own type (an int64 2 for x ** 2); it is
// converted to the base's.
// RUN: %loompy %S/Inputs/make_onnx.py pow %t.pow.onnx
// RUN: loom-translate --import-onnx %t.pow.onnx -o - | FileCheck %s --check-prefix=POW
// POW: %[[Y:.*]] = loom.broadcast %arg1, dims = [1] : tensor<3xf32> -> tensor<2x3xf32>
// POW-NEXT: %[[P0:.*]] = loom.pow %arg0, %[[Y]] : tensor<2x3xf32>
// POW-NEXT: %[[TWO:.*]] = loom.constant dense<2> : tensor<i64>
// POW-NEXT: %[[TWOF:.*]] = loom.convert %[[TWO]] : tensor<i64> -> tensor<f32>
// POW-NEXT: %[[TWOB:.*]] = loom.broadcast %[[TWOF]], dims = [] : tensor<f32> -> tensor<2x3xf32>
// POW-NEXT: %[[P1:.*]] = loom.pow %arg0, %[[TWOB]] : tensor<2x3xf32>
// POW-NEXT: %[[HALF:.*]] = loom.constant dense<5.000000e-01> : tensor<1xf32>
// POW-NEXT: %[[HALFB:.*]] = loom.broadcast %[[HALF]], dims = [1] : tensor<1xf32> -> tensor<2x3xf32>
// POW-NEXT: %[[P2:.*]] = loom.pow %arg0, %[[HALFB]] : tensor<2x3xf32>
// POW-NEXT: return %[[P0]], %[[P1]], %[[P2]] :

// RUN: %loompy %S/Inputs/make_onnx.py compare_where %t.cmp.onnx
// RUN: loom-translate --import-onnx %t.cmp.onnx -o - | FileCheck %s --check-prefix=CMP
// CMP-LABEL: func.func @main(%arg0: tensor<2x3xf32> {loom.name = "a"}, %arg1: tensor<3xf32> {loom.name = "b"}, %arg2: tensor<2x3xi1> {loom.name = "m"})
// CMP: %[[B0:.*]] = loom.broadcast %arg1, dims = [1] : tensor<3xf32> -> tensor<2x3xf32>
// CMP-NEXT: %[[EQ:.*]] = loom.compare eq, %arg0, %[[B0]] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
// CMP: %[[LT:.*]] = loom.compare lt, %arg0, %{{.*}} :
// CMP: %[[LE:.*]] = loom.compare le, %arg0, %{{.*}} :
// Greater(b, a): the operand order is kept.
// CMP: %[[B3:.*]] = loom.broadcast %arg1, dims = [1]
// CMP-NEXT: %[[GT:.*]] = loom.compare gt, %[[B3]], %arg0 :
// CMP: %[[GE:.*]] = loom.compare ge, %arg0, %{{.*}} :
// Not(m) is m == false.
// CMP: %[[FALSE:.*]] = loom.constant dense<false> : tensor<2x3xi1>
// CMP-NEXT: %[[NOT:.*]] = loom.compare eq, %arg2, %[[FALSE]] : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
// Where(m, a, b) with b broadcast.
// CMP-NEXT: %[[B6:.*]] = loom.broadcast %arg1, dims = [1] : tensor<3xf32> -> tensor<2x3xf32>
// CMP-NEXT: %[[W:.*]] = loom.select %arg2, %arg0, %[[B6]] : tensor<2x3xi1>, tensor<2x3xf32>
// Where(a < b, a, 0.0): the predicate is the Less result, the scalar broadcasts.
// CMP-NEXT: %[[ZERO:.*]] = loom.constant dense<0.000000e+00> : tensor<f32>
// CMP-NEXT: %[[ZB:.*]] = loom.broadcast %[[ZERO]], dims = [] : tensor<f32> -> tensor<2x3xf32>
// CMP-NEXT: %[[W2:.*]] = loom.select %[[LT]], %arg0, %[[ZB]] : tensor<2x3xi1>, tensor<2x3xf32>
// CMP-NEXT: return %[[EQ]], %[[LT]], %[[LE]], %[[GT]], %[[GE]], %[[NOT]], %[[W]], %[[W2]] :

// RUN: %loompy %S/Inputs/make_onnx.py cast %t.cast.onnx
// RUN: loom-translate --import-onnx %t.cast.onnx -o - | FileCheck %s --check-prefix=CAST
// CAST: %[[I64:.*]] = loom.convert %arg0 : tensor<2x3xf32> -> tensor<2x3xi64>
// CAST-NEXT: %[[F32:.*]] = loom.convert %arg1 : tensor<2x3xi64> -> tensor<2x3xf32>
// CAST-NEXT: %[[F16:.*]] = loom.convert %arg0 : tensor<2x3xf32> -> tensor<2x3xf16>
// CAST-NEXT: %[[BF16:.*]] = loom.convert %arg0 : tensor<2x3xf32> -> tensor<2x3xbf16>
// CAST-NEXT: %[[BOOL:.*]] = loom.convert %arg0 : tensor<2x3xf32> -> tensor<2x3xi1>
// A cast to the same type is no op at all.
// CAST-NEXT: %[[I32:.*]] = loom.convert %arg1 : tensor<2x3xi64> -> tensor<2x3xi32>
// CAST-NEXT: return %[[I64]], %[[F32]], %[[F16]], %[[BF16]], %[[BOOL]], %arg0, %[[I32]] : tensor<2x3xi64>, tensor<2x3xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xi32>

// Gelu is an op from opset 20 on; approximate defaults to none.
// RUN: %loompy %S/Inputs/make_onnx.py gelu %t.gelu.onnx
// RUN: loom-translate --import-onnx %t.gelu.onnx -o - | FileCheck %s --check-prefix=GELU
// GELU: %[[D:.*]] = loom.gelu %arg0 : tensor<2x3xf32>
// GELU-NEXT: %[[N:.*]] = loom.gelu %arg0 : tensor<2x3xf32>
// GELU-NEXT: %[[T:.*]] = loom.gelu %arg0 approximate = tanh : tensor<2x3xf32>
// GELU-NEXT: return %[[D]], %[[N]], %[[T]] :

// Variadic Max/Min fold left; a single input is the identity.
// RUN: %loompy %S/Inputs/make_onnx.py max_min %t.maxmin.onnx
// RUN: loom-translate --import-onnx %t.maxmin.onnx -o - | FileCheck %s --check-prefix=MAXMIN
// MAXMIN: %[[B:.*]] = loom.broadcast %arg1, dims = [1] : tensor<3xf32> -> tensor<2x3xf32>
// MAXMIN-NEXT: %[[M1:.*]] = loom.max %arg0, %[[B]] : tensor<2x3xf32>
// MAXMIN-NEXT: %[[C:.*]] = loom.broadcast %arg2, dims = [0, 1] : tensor<1x3xf32> -> tensor<2x3xf32>
// MAXMIN-NEXT: %[[M2:.*]] = loom.max %[[M1]], %[[C]] : tensor<2x3xf32>
// MAXMIN-NEXT: %[[B2:.*]] = loom.broadcast %arg1, dims = [1] : tensor<3xf32> -> tensor<2x3xf32>
// MAXMIN-NEXT: %[[MIN:.*]] = loom.min %arg0, %[[B2]] : tensor<2x3xf32>
// MAXMIN-NEXT: return %[[M2]], %[[MIN]], %arg0 :

// Identity and Dropout (opset 13, mask output unused) vanish.
// RUN: %loompy %S/Inputs/make_onnx.py identity_dropout %t.id.onnx
// RUN: loom-translate --import-onnx %t.id.onnx -o - 2>&1 | FileCheck %s --check-prefix=ID
// ID-NOT: warning
// ID: %[[R:.*]] = loom.relu %arg0 : tensor<2x3xf32>
// ID-NEXT: return %[[R]] : tensor<2x3xf32>

// Dropout in training mode with a non-zero ratio: still the identity, but
// the import says so.
// RUN: %loompy %S/Inputs/make_onnx.py dropout_training %t.dropt.onnx
// RUN: loom-translate --import-onnx %t.dropt.onnx -o %t.dropt.mlir 2>&1 | FileCheck %s --check-prefix=DROPT
// RUN: FileCheck %s --check-prefix=DROPT-IR < %t.dropt.mlir
// DROPT: warning: node 'drop' (Dropout): imported as the identity: Loom has no dropout yet, so training-mode dropout with ratio 0.1 is not applied (export with dropout p=0 to silence this)
// DROPT-IR: return %arg0 : tensor<2x3xf32>

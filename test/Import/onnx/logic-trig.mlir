// Cos/Sin (new loom ops), the logical ops, IsNaN/IsInf, variadic Sum/Mean
// and integer Mod, which existing loom ops express exactly; and all of them
// (with GatherElements, Pad, Trilu, CumSum) evaluated at import time when
// their inputs are known.
// REQUIRES: onnx

// RUN: %loompy %S/Inputs/make_onnx.py trig_logic %t.trig.onnx
// RUN: loom-translate --import-onnx %t.trig.onnx -o - | FileCheck %s --check-prefix=TRIG
// TRIG-LABEL: func.func @main(%arg0: tensor<2x3xf32> {loom.name = "x"}, %arg1: tensor<2x3xi1> {loom.name = "a"}, %arg2: tensor<3xi1> {loom.name = "b"})
// TRIG-NEXT: %[[COS:.*]] = loom.cos %arg0 : tensor<2x3xf32>
// TRIG-NEXT: %[[SIN:.*]] = loom.sin %arg0 : tensor<2x3xf32>
// And(a, b) = a ? b : false, after b broadcasts.
// TRIG-NEXT: %[[B:.*]] = loom.broadcast %arg2, dims = [1] : tensor<3xi1> -> tensor<2x3xi1>
// TRIG-NEXT: %[[F:.*]] = loom.constant dense<false> : tensor<2x3xi1>
// TRIG-NEXT: %[[AND:.*]] = loom.select %arg1, %[[B]], %[[F]] : tensor<2x3xi1>, tensor<2x3xi1>
// Or(a, b) = a ? true : b.
// TRIG-NEXT: %[[B2:.*]] = loom.broadcast %arg2, dims = [1] : tensor<3xi1> -> tensor<2x3xi1>
// TRIG-NEXT: %[[T:.*]] = loom.constant dense<true> : tensor<2x3xi1>
// TRIG-NEXT: %[[OR:.*]] = loom.select %arg1, %[[T]], %[[B2]] : tensor<2x3xi1>, tensor<2x3xi1>
// TRIG-NEXT: %[[XOR:.*]] = loom.compare ne, %arg1, %arg1 : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
// IsNaN(x) = x != x.
// TRIG-NEXT: %[[NAN:.*]] = loom.compare ne, %arg0, %arg0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
// IsInf: |x| == inf; only +inf: x == inf; only -inf: x == -inf; neither: false.
// TRIG-NEXT: %[[ABS:.*]] = loom.abs %arg0 : tensor<2x3xf32>
// TRIG-NEXT: %[[INF:.*]] = loom.constant dense<0x7F800000> : tensor<2x3xf32>
// TRIG-NEXT: %[[ISINF:.*]] = loom.compare eq, %[[ABS]], %[[INF]] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
// TRIG-NEXT: %[[INF2:.*]] = loom.constant dense<0x7F800000> : tensor<2x3xf32>
// TRIG-NEXT: %[[POS:.*]] = loom.compare eq, %arg0, %[[INF2]]
// TRIG-NEXT: %[[NINF:.*]] = loom.constant dense<0xFF800000> : tensor<2x3xf32>
// TRIG-NEXT: %[[NEG:.*]] = loom.compare eq, %arg0, %[[NINF]]
// TRIG-NEXT: %[[NONE:.*]] = loom.constant dense<false> : tensor<2x3xi1>
// TRIG-NEXT: return %[[COS]], %[[SIN]], %[[AND]], %[[OR]], %[[XOR]], %[[NAN]], %[[ISINF]], %[[POS]], %[[NEG]], %[[NONE]] :

// RUN: %loompy %S/Inputs/make_onnx.py sum_mean_mod %t.sum.onnx
// RUN: loom-translate --import-onnx %t.sum.onnx -o - | FileCheck %s --check-prefix=SUM
// SUM-LABEL: func.func @main(
// Sum(x, y, z): a chain of adds, broadcasting as it goes.
// SUM: %[[Y:.*]] = loom.broadcast %arg1, dims = [1] : tensor<3xf32> -> tensor<2x3xf32>
// SUM-NEXT: %[[XY:.*]] = loom.add %arg0, %[[Y]] : tensor<2x3xf32>
// SUM-NEXT: %[[Z:.*]] = loom.broadcast %arg2, dims = [0, 1] : tensor<1x3xf32> -> tensor<2x3xf32>
// SUM-NEXT: %[[SUM:.*]] = loom.add %[[XY]], %[[Z]] : tensor<2x3xf32>
// Mean(x, y) = (x + y) / 2.
// SUM-NEXT: %[[Y2:.*]] = loom.broadcast %arg1, dims = [1] : tensor<3xf32> -> tensor<2x3xf32>
// SUM-NEXT: %[[XY2:.*]] = loom.add %arg0, %[[Y2]] : tensor<2x3xf32>
// SUM-NEXT: %[[TWO:.*]] = loom.constant dense<2.000000e+00> : tensor<2x3xf32>
// SUM-NEXT: %[[MEAN:.*]] = loom.div %[[XY2]], %[[TWO]] : tensor<2x3xf32>
// Mod (fmod = 0): r = i - (i / j) * j, plus j where r != 0 and its sign
// differs from j's.
// SUM-NEXT: %[[J:.*]] = loom.broadcast %arg4, dims = [1] : tensor<3xi64> -> tensor<2x3xi64>
// SUM-NEXT: %[[Q:.*]] = loom.div %arg3, %[[J]] : tensor<2x3xi64>
// SUM-NEXT: %[[QJ:.*]] = loom.mul %[[Q]], %[[J]] : tensor<2x3xi64>
// SUM-NEXT: %[[R:.*]] = loom.sub %arg3, %[[QJ]] : tensor<2x3xi64>
// SUM-NEXT: %[[ZERO:.*]] = loom.constant dense<0> : tensor<2x3xi64>
// SUM-NEXT: %[[RNEG:.*]] = loom.compare lt, %[[R]], %[[ZERO]]
// SUM-NEXT: %[[JNEG:.*]] = loom.compare lt, %[[J]], %[[ZERO]]
// SUM-NEXT: %[[DIFF:.*]] = loom.compare ne, %[[RNEG]], %[[JNEG]]
// SUM-NEXT: %[[NZ:.*]] = loom.compare ne, %[[R]], %[[ZERO]]
// SUM-NEXT: %[[FALSE:.*]] = loom.constant dense<false> : tensor<2x3xi1>
// SUM-NEXT: %[[FIX:.*]] = loom.select %[[NZ]], %[[DIFF]], %[[FALSE]]
// SUM-NEXT: %[[RJ:.*]] = loom.add %[[R]], %[[J]] : tensor<2x3xi64>
// SUM-NEXT: %[[MOD:.*]] = loom.select %[[FIX]], %[[RJ]], %[[R]] : tensor<2x3xi1>, tensor<2x3xi64>
// Mod (fmod = 1): the truncated remainder alone.
// SUM: %[[FQ:.*]] = loom.div %arg3, %[[J2:.*]] : tensor<2x3xi64>
// SUM-NEXT: %[[FQJ:.*]] = loom.mul %[[FQ]], %[[J2]] : tensor<2x3xi64>
// SUM-NEXT: %[[FMOD:.*]] = loom.sub %arg3, %[[FQJ]] : tensor<2x3xi64>
// Sum of one input is that input.
// SUM-NEXT: return %[[SUM]], %[[MEAN]], %arg0, %[[MOD]], %[[FMOD]] :

// Known inputs: one constant per output, values as ONNX defines them.
// RUN: %loompy %S/Inputs/make_onnx.py fold_hf_ops %t.fold.onnx
// RUN: loom-translate --import-onnx %t.fold.onnx -o - | FileCheck %s --check-prefix=FOLD
// FOLD-LABEL: func.func @main()
// cos 1 = 0.540302277, sin 1 = 0.841470957 in f32.
// FOLD-NEXT: loom.constant dense<[1.000000e+00, 0.540302277]> : tensor<2xf32>
// FOLD-NEXT: loom.constant dense<[0.000000e+00, 0.841470957]> : tensor<2xf32>
// FOLD-NEXT: loom.constant dense<[true, false, false]> : tensor<3xi1>
// FOLD-NEXT: loom.constant dense<true> : tensor<3xi1>
// FOLD-NEXT: loom.constant dense<[false, true, true]> : tensor<3xi1>
// IsNaN and IsInf (detect_negative = 0) of [1, nan, inf, -inf].
// FOLD-NEXT: loom.constant dense<[false, true, false, false]> : tensor<4xi1>
// FOLD-NEXT: loom.constant dense<[false, false, true, false]> : tensor<4xi1>
// [7, -7, 7, -7] mod [3, 3, -3, -3]: the divisor's sign, then fmod's the
// dividend's.
// FOLD-NEXT: loom.constant dense<[1, 2, -2, -1]> : tensor<4xi64>
// FOLD-NEXT: loom.constant dense<[1, -1, 1, -1]> : tensor<4xi64>
// GatherElements([[1, 2], [3, 4]], [[0, 0], [1, 0]], axis = 1).
// FOLD-NEXT: loom.constant dense<{{\[}}[1, 1], [4, 3]]> : tensor<2x2xi64>
// Pad reflect, one row before and two columns after.
// FOLD-NEXT: loom.constant dense<{{\[}}[3, 4, 3, 4], [1, 2, 1, 2], [3, 4, 3, 4]]> : tensor<3x4xi64>
// FOLD-NEXT: loom.constant dense<{{\[}}[1, 0], [3, 4]]> : tensor<2x2xi64>
// CumSum along axis 1, reversed.
// FOLD-NEXT: loom.constant dense<{{\[}}[3, 2], [7, 4]]> : tensor<2x2xi64>
// FOLD-NEXT: return

// Pad, GatherElements, Trilu and CumSum of run-time values become existing
// loom ops (which lower and differentiate as they are); their values are
// checked against the ONNX test data in test_onnx_node_conformance.py and
// against onnx.reference in test_onnx_hf_ops.py.
// REQUIRES: onnx

// RUN: %loompy %S/Inputs/make_onnx.py pad %t.pad.onnx
// RUN: loom-translate --import-onnx %t.pad.onnx -o - | FileCheck %s --check-prefix=PAD
// PAD-LABEL: func.func @main(%arg0: tensor<2x3xf32> {loom.name = "x"}, %arg1: tensor<f32> {loom.name = "s"})
// Constant mode, pads [1, 0, 0, 2]: a block of zeros before dimension 0,
// then one after dimension 1.
// PAD-NEXT: %[[Z0:.*]] = loom.constant dense<0.000000e+00> : tensor<1x3xf32>
// PAD-NEXT: %[[C0:.*]] = loom.concat %[[Z0]], %arg0 dim = 0 : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<3x3xf32>
// PAD-NEXT: %[[Z1:.*]] = loom.constant dense<0.000000e+00> : tensor<3x2xf32>
// PAD-NEXT: %[[CONST:.*]] = loom.concat %[[C0]], %[[Z1]] dim = 1 : (tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<3x5xf32>
// PAD: loom.constant dense<1.500000e+00> : tensor<1x3xf32>
// PAD: %[[VALUED:.*]] = loom.concat %{{.*}}, %{{.*}} dim = 1 : (tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<3x5xf32>
// Edge, reflect and wrap: a gather at constant source indices per padded
// dimension.
// PAD-NEXT: %[[EI0:.*]] = loom.constant dense<[0, 0, 1]> : tensor<3xi64>
// PAD-NEXT: %[[E0:.*]] = loom.gather %arg0[%[[EI0]]], axis = 0 : (tensor<2x3xf32>, tensor<3xi64>) -> tensor<3x3xf32>
// PAD-NEXT: %[[EI1:.*]] = loom.constant dense<[0, 1, 2, 2, 2]> : tensor<5xi64>
// PAD-NEXT: %[[EDGE:.*]] = loom.gather %[[E0]][%[[EI1]]], axis = 1 : (tensor<3x3xf32>, tensor<5xi64>) -> tensor<3x5xf32>
// PAD-NEXT: loom.constant dense<[1, 0, 1]> : tensor<3xi64>
// PAD-NEXT: loom.gather
// PAD-NEXT: loom.constant dense<[0, 1, 2, 1, 0]> : tensor<5xi64>
// PAD-NEXT: %[[REFLECT:.*]] = loom.gather
// PAD-NEXT: loom.constant dense<[1, 0, 1]> : tensor<3xi64>
// PAD-NEXT: loom.gather
// PAD-NEXT: loom.constant dense<[0, 1, 2, 0, 1]> : tensor<5xi64>
// PAD-NEXT: %[[WRAP:.*]] = loom.gather
// axes = [-1]: the last dimension only, in one concat.
// PAD-NEXT: %[[L:.*]] = loom.constant dense<0.000000e+00> : tensor<2x2xf32>
// PAD-NEXT: %[[R:.*]] = loom.constant dense<0.000000e+00> : tensor<2x1xf32>
// PAD-NEXT: %[[AXES:.*]] = loom.concat %[[L]], %arg0, %[[R]] dim = 1 : (tensor<2x2xf32>, tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x6xf32>
// Negative pads crop first.
// PAD-NEXT: %[[CROP:.*]] = loom.slice %arg0, start = [0, 1], limit = [2, 3], strides = [1, 1] : tensor<2x3xf32> -> tensor<2x2xf32>
// PAD-NEXT: %[[Z2:.*]] = loom.constant dense<0.000000e+00> : tensor<1x2xf32>
// PAD-NEXT: %[[CROPPED:.*]] = loom.concat %[[CROP]], %[[Z2]] dim = 0
// A run-time constant value is broadcast into the blocks.
// PAD-NEXT: %[[S0:.*]] = loom.broadcast %arg1, dims = [] : tensor<f32> -> tensor<1x3xf32>
// PAD-NEXT: %[[RV0:.*]] = loom.concat %[[S0]], %arg0 dim = 0
// PAD-NEXT: %[[S1:.*]] = loom.broadcast %arg1, dims = [] : tensor<f32> -> tensor<3x2xf32>
// PAD-NEXT: %[[RV:.*]] = loom.concat %[[RV0]], %[[S1]] dim = 1
// PAD-NEXT: return %[[CONST]], %[[VALUED]], %[[EDGE]], %[[REFLECT]], %[[WRAP]], %[[AXES]], %[[CROPPED]], %[[RV]] :

// RUN: %loompy %S/Inputs/make_onnx.py gather_elements %t.ge.onnx
// RUN: loom-translate --import-onnx %t.ge.onnx -o - | FileCheck %s --check-prefix=GE
// GE-LABEL: func.func @main(%arg0: tensor<2x3xf32> {loom.name = "x"}, %arg1: tensor<1x3xi32> {loom.name = "j"})
// Known indices [[0, -1], [2, 0]] along axis 1: flat positions into the
// flattened data, one gather.
// GE-NEXT: %[[POS:.*]] = loom.constant dense<{{\[}}[0, 2], [5, 3]]> : tensor<2x2xi64>
// GE-NEXT: %[[FLAT:.*]] = loom.reshape %arg0 : tensor<2x3xf32> -> tensor<6xf32>
// GE-NEXT: %[[KNOWN:.*]] = loom.gather %[[FLAT]][%[[POS]]], axis = 0 : (tensor<6xf32>, tensor<2x2xi64>) -> tensor<2x2xf32>
// Run-time indices along axis 0: widened, wrapped, times the stride 3,
// plus the column from an iota.
// GE-NEXT: %[[J:.*]] = loom.convert %arg1 : tensor<1x3xi32> -> tensor<1x3xi64>
// GE-NEXT: %[[ZERO:.*]] = loom.constant dense<0> : tensor<1x3xi64>
// GE-NEXT: %[[NEG:.*]] = loom.compare lt, %[[J]], %[[ZERO]]
// GE-NEXT: %[[SIZE:.*]] = loom.constant dense<2> : tensor<1x3xi64>
// GE-NEXT: %[[UP:.*]] = loom.add %[[J]], %[[SIZE]]
// GE-NEXT: %[[WRAPPED:.*]] = loom.select %[[NEG]], %[[UP]], %[[J]]
// GE-NEXT: %[[STRIDE:.*]] = loom.constant dense<3> : tensor<1x3xi64>
// GE-NEXT: %[[ROW:.*]] = loom.mul %[[WRAPPED]], %[[STRIDE]]
// GE-NEXT: %[[COL:.*]] = loom.iota dim = 1 : tensor<1x3xi64>
// GE-NEXT: %[[P:.*]] = loom.add %[[ROW]], %[[COL]] : tensor<1x3xi64>
// GE-NEXT: %[[FLAT2:.*]] = loom.reshape %arg0 : tensor<2x3xf32> -> tensor<6xf32>
// GE-NEXT: %[[RUNTIME:.*]] = loom.gather %[[FLAT2]][%[[P]]], axis = 0 : (tensor<6xf32>, tensor<1x3xi64>) -> tensor<1x3xf32>
// GE-NEXT: return %[[KNOWN]], %[[RUNTIME]] :

// RUN: %loompy %S/Inputs/make_onnx.py scatter_nd %t.snd.onnx
// RUN: loom-translate --import-onnx %t.snd.onnx -o - | FileCheck %s --check-prefix=SND
// SND-LABEL: func.func @main(%arg0: tensor<3x2xf32> {loom.name = "x"}, %arg1: tensor<2x2xf32> {loom.name = "u"})
// Known index vectors [[2], [-3]]: rows 2 and 0 of the data (indexed over
// its first dimension, so no flattening). `none`: the updates and a count
// of writes scatter_added into zeros, the written rows selected.
// SND-NEXT: %[[ROWS:.*]] = loom.constant dense<[2, 0]> : tensor<2xi64>
// SND-NEXT: %[[Z:.*]] = loom.constant dense<0.000000e+00> : tensor<3x2xf32>
// SND-NEXT: %[[VALUES:.*]] = loom.scatter_add %[[Z]][%[[ROWS]]], %arg1, axis = 0
// SND-NEXT: %[[ONES:.*]] = loom.constant dense<1> : tensor<2x2xi32>
// SND-NEXT: %[[ZI:.*]] = loom.constant dense<0> : tensor<3x2xi32>
// SND-NEXT: %[[WRITES:.*]] = loom.scatter_add %[[ZI]][%[[ROWS]]], %[[ONES]], axis = 0
// SND-NEXT: %[[ZI2:.*]] = loom.constant dense<0> : tensor<3x2xi32>
// SND-NEXT: %[[WRITTEN:.*]] = loom.compare gt, %[[WRITES]], %[[ZI2]]
// SND-NEXT: %[[NONE:.*]] = loom.select %[[WRITTEN]], %[[VALUES]], %arg0
// `add`: one scatter_add into the data.
// SND-NEXT: %[[ROWS2:.*]] = loom.constant dense<[2, 0]> : tensor<2xi64>
// SND-NEXT: %[[ADD:.*]] = loom.scatter_add %arg0[%[[ROWS2]]], %arg1, axis = 0
// SND-NEXT: return %[[NONE]], %[[ADD]] :

// RUN: %loompy %S/Inputs/make_onnx.py trilu %t.trilu.onnx
// RUN: loom-translate --import-onnx %t.trilu.onnx -o - | FileCheck %s --check-prefix=TRILU
// TRILU-LABEL: func.func @main(%arg0: tensor<2x3x4xf32> {loom.name = "x"})
// Upper (k = 0): keep col - row >= 0, a mask over the last two dimensions.
// TRILU-NEXT: %[[Z:.*]] = loom.constant dense<0.000000e+00> : tensor<2x3x4xf32>
// TRILU-NEXT: %[[ROW:.*]] = loom.iota dim = 0 : tensor<3x4xi64>
// TRILU-NEXT: %[[COL:.*]] = loom.iota dim = 1 : tensor<3x4xi64>
// TRILU-NEXT: %[[D:.*]] = loom.sub %[[COL]], %[[ROW]] : tensor<3x4xi64>
// TRILU-NEXT: %[[K:.*]] = loom.constant dense<0> : tensor<3x4xi64>
// TRILU-NEXT: %[[M:.*]] = loom.compare ge, %[[D]], %[[K]]
// TRILU-NEXT: %[[MB:.*]] = loom.broadcast %[[M]], dims = [1, 2] : tensor<3x4xi1> -> tensor<2x3x4xi1>
// TRILU-NEXT: %[[UPPER:.*]] = loom.select %[[MB]], %arg0, %[[Z]]
// Lower with k = -1: col - row <= -1.
// TRILU: %[[K1:.*]] = loom.constant dense<-1> : tensor<3x4xi64>
// TRILU-NEXT: %[[M1:.*]] = loom.compare le, %{{.*}}, %[[K1]]
// TRILU: %[[LOWER:.*]] = loom.select
// k = 10 keeps everything: no op.
// TRILU-NEXT: return %[[UPPER]], %[[LOWER]], %arg0 :

// RUN: %loompy %S/Inputs/make_onnx.py cumsum %t.cumsum.onnx
// RUN: loom-translate --import-onnx %t.cumsum.onnx -o - | FileCheck %s --check-prefix=CUMSUM
// CUMSUM-LABEL: func.func @main(
// Inclusive along the last axis of 5: shifts by 1, 2, 4, each slice +
// zeros, added.
// CUMSUM-NEXT: %[[S1:.*]] = loom.slice %arg0, start = [0, 0], limit = [2, 4], strides = [1, 1]
// CUMSUM-NEXT: %[[Z1:.*]] = loom.constant dense<0.000000e+00> : tensor<2x1xf32>
// CUMSUM-NEXT: %[[SH1:.*]] = loom.concat %[[Z1]], %[[S1]] dim = 1
// CUMSUM-NEXT: %[[A1:.*]] = loom.add %arg0, %[[SH1]] : tensor<2x5xf32>
// CUMSUM-NEXT: loom.slice %[[A1]], start = [0, 0], limit = [2, 3], strides = [1, 1]
// CUMSUM: loom.slice %{{.*}}, start = [0, 0], limit = [2, 1], strides = [1, 1]
// CUMSUM-NEXT: loom.constant dense<0.000000e+00> : tensor<2x4xf32>
// CUMSUM-NEXT: loom.concat
// CUMSUM-NEXT: %[[INCL:.*]] = loom.add
// Exclusive: one more shift by 1 first.
// CUMSUM-NEXT: loom.slice %arg0, start = [0, 0], limit = [2, 4], strides = [1, 1]
// CUMSUM: loom.slice %{{.*}}, start = [0, 0], limit = [2, 1], strides = [1, 1]
// CUMSUM-NEXT: loom.constant dense<0.000000e+00> : tensor<2x4xf32>
// CUMSUM-NEXT: loom.concat
// CUMSUM-NEXT: %[[EXCL:.*]] = loom.add
// Reverse along axis 0 of an int64 tensor: shifts towards the start.
// CUMSUM-NEXT: %[[R1:.*]] = loom.slice %arg1, start = [1, 0], limit = [3, 2], strides = [1, 1]
// CUMSUM-NEXT: %[[RZ:.*]] = loom.constant dense<0> : tensor<1x2xi64>
// CUMSUM-NEXT: loom.concat %[[R1]], %[[RZ]] dim = 0
// CUMSUM-NEXT: %[[R2:.*]] = loom.add %arg1, %{{.*}} : tensor<3x2xi64>
// CUMSUM-NEXT: loom.slice %[[R2]], start = [2, 0], limit = [3, 2], strides = [1, 1]
// CUMSUM-NEXT: loom.constant dense<0> : tensor<2x2xi64>
// CUMSUM-NEXT: loom.concat
// CUMSUM-NEXT: %[[REV:.*]] = loom.add
// CUMSUM-NEXT: return %[[INCL]], %[[EXCL]], %[[REV]] :

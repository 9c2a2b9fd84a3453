// The ops torch.onnx.export(dynamo=True) writes that TorchScript exports do
// not: CastLike (a known value stays known; a run-time one is a
// loom.convert), SplitToSequence read by SequenceAt (one loom.split; the
// sequence is never a value), and buffers as initializers, which
// --constants makes program constants instead of weights.
// REQUIRES: onnx

// RUN: %loompy %S/Inputs/make_onnx.py dynamo_ops %t.ops.onnx
// RUN: loom-translate --import-onnx %t.ops.onnx -o - | FileCheck %s
// CHECK-LABEL: func.func @main(%arg0: tensor<2x6xf32> {loom.name = "x"}, %arg1: tensor<2x6xi64> {loom.name = "i"})
// CHECK-NEXT: %[[H:.*]] = loom.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT: %[[HB:.*]] = loom.broadcast %[[H]], dims = [] : tensor<f32> -> tensor<2x6xf32>
// CHECK-NEXT: %[[S:.*]] = loom.mul %arg0, %[[HB]] : tensor<2x6xf32>
// CHECK-NEXT: %[[I:.*]] = loom.convert %arg1 : tensor<2x6xi64> -> tensor<2x6xf32>
// CHECK-NEXT: %[[A:.*]]:3 = loom.split %[[S]], dim = 1, sizes = [1, 2, 3]
// CHECK-NEXT: %[[B:.*]]:3 = loom.split %[[S]], dim = 1, sizes = [2, 2, 2]
// CHECK-NEXT: %[[C:.*]]:2 = loom.split %[[S]], dim = 0, sizes = [1, 1]
// CHECK-NEXT: %[[E:.*]] = loom.reshape %[[C]]#1 : tensor<1x6xf32> -> tensor<6xf32>
// CHECK-NEXT: return %[[A]]#1, %[[A]]#2, %[[B]]#1, %[[E]], %[[I]]

// RUN: %loompy %S/Inputs/make_onnx.py bad_sequence_use %t.seq.onnx
// RUN: not loom-translate --import-onnx %t.seq.onnx -o /dev/null 2>&1 | FileCheck %s --check-prefix=SEQ
// SEQ: error: node 'use_seq' (Identity): input 'seq' is a sequence; Loom reads sequences only with SequenceAt at a known position

// RUN: %loompy %S/Inputs/make_onnx.py buffer_initializer %t.buf.onnx
// RUN: loom-translate --import-onnx %t.buf.onnx --constants=inv_freq -o - | FileCheck %s --check-prefix=CONST
// RUN: loom-translate --import-onnx %t.buf.onnx -o - | FileCheck %s --check-prefix=WEIGHT
// RUN: loom-translate --import-onnx %t.buf.onnx --constants=nope -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOPE
// CONST-LABEL: func.func @main(%arg0: tensor<2x4xf32> {loom.name = "x"}) -> (tensor<2x4xf32> {loom.name = "y"})
// CONST-NEXT: loom.constant dense<[1.000000e+00, 5.000000e-01, 2.500000e-01, 1.250000e-01]> : tensor<4xf32>
// WEIGHT: %arg1: tensor<4xf32> {loom.name = "inv_freq", loom.param}
// NOPE: warning: --constants 'nope' matches no initializer

// Initializers: floating-point ones of rank >= 1 become loom.param
// arguments named after them, with their values in the weights file (f32,
// f16, bf16; raw_data, typed fields, external data); integer, boolean and
// rank-0 float initializers are program constants. An initializer that is
// also listed as a graph input (older exporters) is an initializer.
// REQUIRES: onnx

// RUN: %loompy %S/Inputs/make_onnx.py initializers %t.init.onnx
// RUN: loom-translate --import-onnx %t.init.onnx -o %t.init.mlir --weights-out %t.init.safetensors
// RUN: FileCheck %s --check-prefix=IR < %t.init.mlir
// RUN: %loompy %S/Inputs/dump_safetensors.py %t.init.safetensors | FileCheck %s --check-prefix=WEIGHTS

// IR-LABEL: func.func @main(
// IR-SAME: %arg0: tensor<2x3xf32> {loom.name = "x"},
// IR-SAME: %arg1: tensor<3x4xf32> {loom.name = "w", loom.param},
// IR-SAME: %arg2: tensor<4xf32> {loom.name = "b", loom.param},
// IR-SAME: %arg3: tensor<4xf16> {loom.name = "h16", loom.param},
// IR-SAME: %arg4: tensor<4xf16> {loom.name = "hraw", loom.param},
// IR-SAME: %arg5: tensor<4xbf16> {loom.name = "e16", loom.param},
// IR-SAME: %arg6: tensor<1xf32> {loom.name = "old", loom.param})
// IR-SAME: -> (tensor<8xf32> {loom.name = "flat"}, tensor<4xf32> {loom.name = "he2"}, tensor<2x4xf32> {loom.name = "out"})
// IR-NOT: %arg7
// IR-NEXT: %[[XW:.*]] = loom.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
// The rank-0 float initializer s = 0.5 is a constant, used twice.
// IR-NEXT: %[[S:.*]] = loom.constant dense<5.000000e-01> : tensor<f32>
// IR-NEXT: %[[SB:.*]] = loom.broadcast %[[S]], dims = [] : tensor<f32> -> tensor<2x4xf32>
// IR-NEXT: %[[SCALED:.*]] = loom.mul %[[XW]], %[[SB]] : tensor<2x4xf32>
// IR-NEXT: %[[BB:.*]] = loom.broadcast %arg2, dims = [1] : tensor<4xf32> -> tensor<2x4xf32>
// IR-NEXT: %[[Y:.*]] = loom.add %[[SCALED]], %[[BB]] : tensor<2x4xf32>
// The int64 initializer shape = [-1] is a constant shape.
// IR-NEXT: %[[FLAT:.*]] = loom.reshape %[[Y]] : tensor<2x4xf32> -> tensor<8xf32>
// IR-NEXT: %[[H:.*]] = loom.convert %arg3 : tensor<4xf16> -> tensor<4xf32>
// IR-NEXT: %[[E:.*]] = loom.convert %arg5 : tensor<4xbf16> -> tensor<4xf32>
// IR-NEXT: %[[HE:.*]] = loom.add %[[H]], %[[E]] : tensor<4xf32>
// IR-NEXT: %[[HR:.*]] = loom.convert %arg4 : tensor<4xf16> -> tensor<4xf32>
// IR-NEXT: %[[HE2:.*]] = loom.add %[[HE]], %[[HR]] : tensor<4xf32>
// The bool initializer is a constant mask.
// IR-NEXT: %[[MASK:.*]] = loom.constant dense<{{\[}}[true, false, true, false], [true, false, true, false]]> : tensor<2x4xi1>
// IR-NEXT: %[[SB2:.*]] = loom.broadcast %[[S]], dims = [] : tensor<f32> -> tensor<2x4xf32>
// IR-NEXT: %[[M:.*]] = loom.select %[[MASK]], %[[Y]], %[[SB2]] : tensor<2x4xi1>, tensor<2x4xf32>
// IR-NEXT: %[[OLD:.*]] = loom.broadcast %arg6, dims = [1] : tensor<1xf32> -> tensor<2x4xf32>
// IR-NEXT: %[[OUT:.*]] = loom.add %[[M]], %[[OLD]] : tensor<2x4xf32>
// IR-NEXT: return %[[FLAT]], %[[HE2]], %[[OUT]] :

// The weights file holds exactly the loom.param arguments, in argument
// order, with the values of the model (w = arange(12) / 4; b in float_data;
// h16 in int32_data bit patterns; hraw and e16 in raw_data).
// WEIGHTS: metadata format=pt
// WEIGHTS-NEXT: metadata source=loom-translate --import-onnx
// WEIGHTS-NEXT: tensor w F32 [3, 4] = 0 0.25 0.5 0.75 1 1.25 1.5 1.75 2 2.25 2.5 2.75
// WEIGHTS-NEXT: tensor b F32 [4] = 1 -1 0.5 2
// WEIGHTS-NEXT: tensor h16 F16 [4] = 1.5 -2 0.25 8
// WEIGHTS-NEXT: tensor hraw F16 [4] = 0.5 1 2 -4
// WEIGHTS-NEXT: tensor e16 BF16 [4] = 1 -2.5 0.15625 3
// WEIGHTS-NEXT: tensor old F32 [1] = 0.25
// WEIGHTS-NOT: tensor

// The same model with every initializer in an external data file (written
// next to the model by onnx.save_model) imports to the same IR and weights.
// RUN: %loompy %S/Inputs/make_onnx.py external %t.ext.onnx
// RUN: loom-translate --import-onnx %t.ext.onnx -o %t.ext.mlir --weights-out %t.ext.safetensors
// RUN: FileCheck %s --check-prefix=IR < %t.ext.mlir
// RUN: cmp %t.ext.safetensors %t.init.safetensors
// RUN: diff %t.ext.mlir %t.init.mlir

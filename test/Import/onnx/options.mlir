// loom-translate options: --input-shape binds dynamic input dimensions;
// --trainable/--frozen pick the loom.param initializers by name or regex;
// the weights go to --weights-out, by default next to -o, never with
// --no-weights.
// REQUIRES: onnx

// RUN: %loompy %S/Inputs/make_onnx.py mlp_dynamic %t.onnx

// --input-shape, several bindings in one list or repeated.
// RUN: loom-translate --import-onnx %t.onnx --input-shape x=8x4,labels=8 -o - | FileCheck %s --check-prefix=SHAPE
// RUN: loom-translate --import-onnx %t.onnx --input-shape x=8x4 --input-shape labels=8 -o - | FileCheck %s --check-prefix=SHAPE
// SHAPE-LABEL: func.func @main(%arg0: tensor<8x4xf32> {loom.name = "x"}, %arg1: tensor<8xi64> {loom.name = "labels"}, %arg2: tensor<3x4xf32> {loom.name = "fc1.weight", loom.param}, %arg3: tensor<3xf32> {loom.name = "fc1.bias", loom.param}, %arg4: tensor<2x3xf32> {loom.name = "fc2.weight", loom.param}, %arg5: tensor<2xf32> {loom.name = "fc2.bias", loom.param}) -> (tensor<f32> {loom.name = "loss"})
// SHAPE-NEXT: %[[H:.*]] = loom.dot_general %arg0, %arg2, contracting_dims = [1] x [1] : (tensor<8x4xf32>, tensor<3x4xf32>) -> tensor<8x3xf32>
// SHAPE: loom.cross_entropy %{{.*}}, %arg1 : (tensor<8x2xf32>, tensor<8xi64>) -> tensor<f32>

// The default weights path is the output's with extension .safetensors.
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: loom-translate --import-onnx %t.onnx --input-shape x=2x4,labels=2 -o %t.dir/mlp.mlir
// RUN: %loompy %S/Inputs/dump_safetensors.py %t.dir/mlp.safetensors | FileCheck %s --check-prefix=WEIGHTS
// WEIGHTS: tensor fc1.weight F32 [3, 4] = 0 0.125 0.25 0.375 0.5 0.625 0.75 0.875 1 1.125 1.25 1.375
// WEIGHTS-NEXT: tensor fc1.bias F32 [3] = 0.5 -0.5 1
// WEIGHTS-NEXT: tensor fc2.weight F32 [2, 3] = -3 -2 -1 0 1 2
// WEIGHTS-NEXT: tensor fc2.bias F32 [2] = 0 1
// WEIGHTS-NOT: tensor

// --weights-out names the file; the same weights as above.
// RUN: loom-translate --import-onnx %t.onnx --input-shape x=2x4,labels=2 -o %t.dir/other.mlir --weights-out %t.dir/w.bin
// RUN: cmp %t.dir/w.bin %t.dir/mlp.safetensors
// RUN: not ls %t.dir/other.safetensors

// --no-weights: the same IR, no weights file.
// RUN: loom-translate --import-onnx %t.onnx --input-shape x=2x4,labels=2 --no-weights -o %t.dir/nw.mlir
// RUN: not ls %t.dir/nw.safetensors
// RUN: diff %t.dir/nw.mlir %t.dir/mlp.mlir

// --trainable by exact name: only that initializer is a loom.param; the
// others stay arguments (with their values in the weights file).
// RUN: loom-translate --import-onnx %t.onnx --input-shape x=2x4,labels=2 --trainable fc1.weight -o %t.dir/t1.mlir
// RUN: FileCheck %s --check-prefix=T1 < %t.dir/t1.mlir
// RUN: cmp %t.dir/t1.safetensors %t.dir/mlp.safetensors
// T1: %arg2: tensor<3x4xf32> {loom.name = "fc1.weight", loom.param}, %arg3: tensor<3xf32> {loom.name = "fc1.bias"}, %arg4: tensor<2x3xf32> {loom.name = "fc2.weight"}, %arg5: tensor<2xf32> {loom.name = "fc2.bias"})

// --trainable by regex (anchored: "fc1\..*" is not "xfc1.y").
// RUN: loom-translate --import-onnx %t.onnx --input-shape x=2x4,labels=2 --trainable 'fc1\..*' -o - | FileCheck %s --check-prefix=T2
// T2: %arg2: tensor<3x4xf32> {loom.name = "fc1.weight", loom.param}, %arg3: tensor<3xf32> {loom.name = "fc1.bias", loom.param}, %arg4: tensor<2x3xf32> {loom.name = "fc2.weight"}, %arg5: tensor<2xf32> {loom.name = "fc2.bias"})
// RUN: loom-translate --import-onnx %t.onnx --input-shape x=2x4,labels=2 --trainable 'weight' -o - 2>&1 | FileCheck %s --check-prefix=ANCHORED
// ANCHORED: warning: --trainable 'weight' matches no initializer
// ANCHORED: %arg2: tensor<3x4xf32> {loom.name = "fc1.weight"}, %arg3: tensor<3xf32> {loom.name = "fc1.bias"}, %arg4: tensor<2x3xf32> {loom.name = "fc2.weight"}, %arg5: tensor<2xf32> {loom.name = "fc2.bias"})

// --frozen by regex and by a comma list of names.
// RUN: loom-translate --import-onnx %t.onnx --input-shape x=2x4,labels=2 --frozen 'fc2\..*' -o - | FileCheck %s --check-prefix=F1
// RUN: loom-translate --import-onnx %t.onnx --input-shape x=2x4,labels=2 --frozen fc2.weight,fc2.bias -o - | FileCheck %s --check-prefix=F1
// F1: %arg2: tensor<3x4xf32> {loom.name = "fc1.weight", loom.param}, %arg3: tensor<3xf32> {loom.name = "fc1.bias", loom.param}, %arg4: tensor<2x3xf32> {loom.name = "fc2.weight"}, %arg5: tensor<2xf32> {loom.name = "fc2.bias"})

// --frozen wins over --trainable.
// RUN: loom-translate --import-onnx %t.onnx --input-shape x=2x4,labels=2 --trainable 'fc.\.weight' --frozen fc2.weight -o - | FileCheck %s --check-prefix=BOTH
// BOTH: %arg2: tensor<3x4xf32> {loom.name = "fc1.weight", loom.param}, %arg3: tensor<3xf32> {loom.name = "fc1.bias"}, %arg4: tensor<2x3xf32> {loom.name = "fc2.weight"}, %arg5: tensor<2xf32> {loom.name = "fc2.bias"})

// A rank-0 float initializer named in --trainable becomes a parameter too.
// RUN: %loompy %S/Inputs/make_onnx.py int_initializer_shape %t.scalar.onnx
// RUN: loom-translate --import-onnx %t.scalar.onnx --trainable scale -o - | FileCheck %s --check-prefix=SCALAR
// SCALAR: func.func @main(%arg0: tensor<2x3x4xf32> {loom.name = "x"}, %arg1: tensor<f32> {loom.name = "scale", loom.param})

// Initializers of 4 KiB and more are cut out of the bytes the protobuf
// parser sees and written to the weights file straight from the model file:
// the weights must still be bit-identical to what onnx reads (checked with
// onnx.numpy_helper, not Loom's reader), beside small raw, typed-field and
// integer (constant) initializers; a short or truncated payload is still an
// error naming the initializer or the file.
// REQUIRES: onnx

// RUN: rm -rf %t.dir && mkdir %t.dir
// RUN: %loompy %S/Inputs/make_onnx.py streamed %t.dir/model.onnx
// RUN: loom-translate --import-onnx %t.dir/model.onnx -o %t.dir/model.mlir
// RUN: FileCheck %s --check-prefix=IR < %t.dir/model.mlir
// RUN: %loompy %S/Inputs/check_weights.py %t.dir/model.onnx %t.dir/model.safetensors big half typed small | FileCheck %s --check-prefix=WEIGHTS

// IR-LABEL: func.func @main(
// IR-SAME: %arg0: tensor<2x64xf32> {loom.name = "x"},
// IR-SAME: %arg1: tensor<64x32xf32> {loom.name = "big", loom.param},
// IR-SAME: %arg2: tensor<64x64xf16> {loom.name = "half", loom.param},
// IR-SAME: %arg3: tensor<32x40xf32> {loom.name = "typed", loom.param},
// IR-SAME: %arg4: tensor<40xf32> {loom.name = "small", loom.param})
// The 8 KiB int64 initializer is a constant read from the file's bytes.
// (printed in hex: 0, 1, 2, ..., 63, 0, 1, ... as little-endian int64).
// IR: loom.constant dense<"0x000000000000000001000000000000000200000000000000
// IR-SAME: 3E000000000000003F0000000000000000000000000000000100000000000000
// IR-SAME: : tensor<1024xi64>

// WEIGHTS: big F32 [64, 32] ok
// WEIGHTS-NEXT: half F16 [64, 64] ok
// WEIGHTS-NEXT: typed F32 [32, 40] ok
// WEIGHTS-NEXT: small F32 [40] ok

// RUN: %loompy %S/Inputs/make_onnx.py streamed_short %t.dir/short.onnx
// RUN: not loom-translate --import-onnx %t.dir/short.onnx -o %t.dir/short.mlir 2>&1 | FileCheck %s --check-prefix=SHORT
// SHORT: error: initializer 'big' has 8188 bytes of raw data but its shape [64, 32] of float32 needs 8192 bytes (truncated or corrupt model?)
// RUN: not ls %t.dir/short.safetensors

// RUN: %loompy %S/Inputs/make_onnx.py streamed_truncated %t.dir/cut.onnx
// RUN: not loom-translate --import-onnx %t.dir/cut.onnx -o %t.dir/cut.mlir 2>&1 | FileCheck %s --check-prefix=CUT
// CUT: error: '{{.*}}cut.onnx' is not a valid ONNX protobuf (truncated or another format?)
// RUN: not ls %t.dir/cut.safetensors

// Files that are not (supported) ONNX models: a diagnostic and a non-zero
// exit, never a crash (`not` fails on a crash), and no output file.
// REQUIRES: onnx

// RUN: %loompy %S/Inputs/make_onnx.py empty %t.empty.onnx
// RUN: not loom-translate --import-onnx %t.empty.onnx -o %t.empty.mlir 2>&1 | FileCheck %s --check-prefix=EMPTY --implicit-check-not=error:
// RUN: not ls %t.empty.mlir %t.empty.safetensors
// EMPTY: empty.onnx:0:0: error: '{{.*}}empty.onnx' is not an ONNX model: no graph or IR version (empty, truncated or another format?)

// The first half of a valid model.
// RUN: %loompy %S/Inputs/make_onnx.py truncated %t.trunc.onnx
// RUN: not loom-translate --import-onnx %t.trunc.onnx -o %t.trunc.mlir 2>&1 | FileCheck %s --check-prefix=TRUNC --implicit-check-not=error:
// RUN: not ls %t.trunc.mlir %t.trunc.safetensors
// TRUNC: trunc.onnx:0:0: error: '{{.*}}trunc.onnx' is not a valid ONNX protobuf (truncated or another format?)

// RUN: %loompy %S/Inputs/make_onnx.py random_bytes %t.random.onnx
// RUN: not loom-translate --import-onnx %t.random.onnx -o - 2>&1 | FileCheck %s --check-prefix=RANDOM --implicit-check-not=error:
// RANDOM: random.onnx:0:0: error: '{{.*}}random.onnx' is not a valid ONNX protobuf (truncated or another format?)

// RUN: not loom-translate --import-onnx %t.does-not-exist.onnx -o - 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: loom-translate: cannot open input file '{{.*}}does-not-exist.onnx': No such file or directory

// RUN: not loom-translate %t.empty.onnx -o - 2>&1 | FileCheck %s --check-prefix=NOIMPORTER
// NOIMPORTER: loom-translate: choose one of --import-onnx, --import-stablehlo and --emit-cpp

// Opsets outside 13..21.
// RUN: %loompy %S/Inputs/make_onnx.py bad_opset12 %t.op12.onnx
// RUN: not loom-translate --import-onnx %t.op12.onnx -o - 2>&1 | FileCheck %s --check-prefix=OP12 --implicit-check-not=error:
// OP12: error: ONNX opset 12 is not supported (supported: 13 to 21); convert the model with onnx.version_converter.convert_version
// RUN: %loompy %S/Inputs/make_onnx.py bad_opset22 %t.op22.onnx
// RUN: not loom-translate --import-onnx %t.op22.onnx -o - 2>&1 | FileCheck %s --check-prefix=OP22 --implicit-check-not=error:
// OP22: error: ONNX opset 22 is not supported (supported: 13 to 21); convert the model with onnx.version_converter.convert_version
// RUN: %loompy %S/Inputs/make_onnx.py bad_no_opset %t.noopset.onnx
// RUN: not loom-translate --import-onnx %t.noopset.onnx -o - 2>&1 | FileCheck %s --check-prefix=NOOPSET --implicit-check-not=error:
// NOOPSET: error: the model imports no default-domain ONNX opset

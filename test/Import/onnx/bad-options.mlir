// Wrong command lines: a diagnostic that says what to write instead, a
// non-zero exit, no output.
// REQUIRES: onnx

// RUN: %loompy %S/Inputs/make_onnx.py mlp_dynamic %t.onnx

// --input-shape naming no graph input is reported before anything else.
// RUN: not loom-translate --import-onnx %t.onnx --input-shape y=2x4 -o - 2>&1 | FileCheck %s --check-prefix=UNKNOWN --implicit-check-not=error:
// UNKNOWN: error: --input-shape names 'y', which is not a graph input (the graph inputs are: 'x', 'labels')
// RUN: not loom-translate --import-onnx %t.onnx --input-shape x=2x4,labels=2,fc1.weight=3x4,z=1 -o - 2>&1 | FileCheck %s --check-prefix=UNKNOWN2 --implicit-check-not=error:
// UNKNOWN2: error: --input-shape names 'fc1.weight', 'z', which are not graph inputs (the graph inputs are: 'x', 'labels')

// Malformed bindings.
// RUN: not loom-translate --import-onnx %t.onnx --input-shape x=2xa -o - 2>&1 | FileCheck %s --check-prefix=MALFORMED1
// MALFORMED1: loom-translate: invalid --input-shape 'x=2xa': expected NAME=DxDx... with sizes, e.g. x=1x128
// RUN: not loom-translate --import-onnx %t.onnx --input-shape x -o - 2>&1 | FileCheck %s --check-prefix=MALFORMED2
// MALFORMED2: loom-translate: invalid --input-shape 'x': expected NAME=DxDx... with sizes, e.g. x=1x128
// RUN: not loom-translate --import-onnx %t.onnx --input-shape =2x4 -o - 2>&1 | FileCheck %s --check-prefix=MALFORMED3
// MALFORMED3: loom-translate: invalid --input-shape '=2x4': expected NAME=DxDx... with sizes, e.g. x=1x128
// RUN: not loom-translate --import-onnx %t.onnx --input-shape x=?x4 -o - 2>&1 | FileCheck %s --check-prefix=MALFORMED4
// MALFORMED4: loom-translate: invalid --input-shape 'x=?x4': expected NAME=DxDx... with sizes, e.g. x=1x128
// RUN: not loom-translate --import-onnx %t.onnx --input-shape x=2x4,x=3x4 -o - 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: loom-translate: --input-shape binds 'x' twice

// A binding must keep the rank and the static sizes.
// RUN: not loom-translate --import-onnx %t.onnx --input-shape x=2x4x1,labels=2 -o - 2>&1 | FileCheck %s --check-prefix=RANK --implicit-check-not=error:
// RANK: error: --input-shape x=2x4x1 does not match its declared shape [?, 4] (same rank; only dynamic dimensions may be bound)
// RUN: not loom-translate --import-onnx %t.onnx --input-shape x=2x5,labels=2 -o - 2>&1 | FileCheck %s --check-prefix=STATIC --implicit-check-not=error:
// STATIC: error: --input-shape x=2x5 does not match its declared shape [?, 4] (same rank; only dynamic dimensions may be bound)

// RUN: not loom-translate --import-onnx %t.onnx --input-shape x=2x4,labels=2 --trainable 'fc1[' -o - 2>&1 | FileCheck %s --check-prefix=REGEX --implicit-check-not=error:
// REGEX: error: invalid --trainable pattern 'fc1[': brackets ([ ]) not balanced
// RUN: not loom-translate --import-onnx %t.onnx --input-shape x=2x4,labels=2 --frozen '(' -o - 2>&1 | FileCheck %s --check-prefix=REGEX2 --implicit-check-not=error:
// REGEX2: error: invalid --frozen pattern '(': parentheses not balanced

// An integer initializer cannot be trained.
// RUN: %loompy %S/Inputs/make_onnx.py bad_int_trainable %t.int.onnx
// RUN: not loom-translate --import-onnx %t.int.onnx --trainable target -o - 2>&1 | FileCheck %s --check-prefix=INTTRAIN --implicit-check-not=error:
// INTTRAIN: error: initializer 'target' has element type int64 and cannot be trained (--trainable names only floating-point initializers)

// RUN: not loom-translate --import-onnx %t.onnx --input-shape x=2x4,labels=2 --no-weights --weights-out %t.w -o - 2>&1 | FileCheck %s --check-prefix=NOWEIGHTS
// NOWEIGHTS: loom-translate: --no-weights and --weights-out exclude each other (--no-weights reads and writes no weights)

// Outputs that cannot be written are reported before the import writes
// anything.
// RUN: rm -rf %t.dir && mkdir %t.dir
// RUN: not loom-translate --import-onnx %t.onnx --input-shape x=2x4,labels=2 -o %t.dir/missing/out.mlir 2>&1 | FileCheck %s --check-prefix=NODIR
// NODIR: loom-translate: cannot write '{{.*}}missing/out.mlir': directory '{{.*}}missing' does not exist
// RUN: not loom-translate --import-onnx %t.onnx --input-shape x=2x4,labels=2 -o %t.dir/out.mlir --weights-out %t.dir/missing/w.safetensors 2>&1 | FileCheck %s --check-prefix=NODIRW
// NODIRW: loom-translate: cannot write '{{.*}}missing/w.safetensors': directory '{{.*}}missing' does not exist
// RUN: not loom-translate --import-onnx %t.onnx --input-shape x=2x4,labels=2 -o %t.dir/model.safetensors 2>&1 | FileCheck %s --check-prefix=SAME
// SAME: loom-translate: the weights file '{{.*}}model.safetensors' would overwrite the output; give another path with --weights-out (or another -o extension)
// RUN: not loom-translate --import-onnx %t.onnx --input-shape x=2x4,labels=2 -o %t.dir/out.mlir --weights-out %t.onnx 2>&1 | FileCheck %s --check-prefix=INPUT
// INPUT: loom-translate: the weights file '{{.*}}.onnx' would overwrite the input model
// The weights file is replaced by a rename: it must not be a device or a
// directory.
// RUN: mkdir %t.dir/sub
// RUN: not loom-translate --import-onnx %t.onnx --input-shape x=2x4,labels=2 -o - --weights-out %t.dir/sub 2>&1 | FileCheck %s --check-prefix=NOTFILE
// NOTFILE: loom-translate: --weights-out '{{.*}}sub' is not a regular file (to write no weights, use --no-weights)
// RUN: rmdir %t.dir/sub
// RUN: ls %t.dir | count 0

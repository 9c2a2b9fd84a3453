// The weights file: byte-identical across runs (deterministic), written only
// when the import succeeds, and then atomically (no temporary left over).
// REQUIRES: onnx

// RUN: rm -rf %t.dir && mkdir %t.dir
// RUN: %loompy %S/Inputs/make_onnx.py initializers %t.dir/model.onnx
// RUN: loom-translate --import-onnx %t.dir/model.onnx -o %t.dir/a.mlir --weights-out %t.dir/a.safetensors
// RUN: loom-translate --import-onnx %t.dir/model.onnx -o %t.dir/b.mlir --weights-out %t.dir/b.safetensors
// RUN: cmp %t.dir/a.safetensors %t.dir/b.safetensors
// RUN: diff %t.dir/a.mlir %t.dir/b.mlir
// Overwriting an existing file gives the same bytes again.
// RUN: loom-translate --import-onnx %t.dir/model.onnx -o %t.dir/b.mlir --weights-out %t.dir/b.safetensors
// RUN: cmp %t.dir/a.safetensors %t.dir/b.safetensors
// RUN: ls %t.dir | FileCheck %s --check-prefix=FILES --implicit-check-not=tmp
// FILES: a.mlir
// FILES: a.safetensors
// FILES: b.mlir
// FILES: b.safetensors
// FILES: model.onnx

// A failing import writes no weights file ...
// RUN: %loompy %S/Inputs/make_onnx.py bad_declared_shape %t.dir/bad.onnx
// RUN: not loom-translate --import-onnx %t.dir/bad.onnx -o %t.dir/bad.mlir --weights-out %t.dir/new.safetensors
// RUN: not ls %t.dir/new.safetensors %t.dir/bad.mlir
// ... leaves an existing one (and an existing output) untouched ...
// RUN: cp %t.dir/a.safetensors %t.dir/keep.safetensors
// RUN: echo "previous output" > %t.dir/keep.mlir
// RUN: not loom-translate --import-onnx %t.dir/bad.onnx -o %t.dir/keep.mlir --weights-out %t.dir/keep.safetensors
// RUN: cmp %t.dir/a.safetensors %t.dir/keep.safetensors
// RUN: FileCheck %s --check-prefix=KEEP < %t.dir/keep.mlir
// KEEP: previous output
// ... also when the failure is late (the last node; weights already read),
// or in the data of the last initializer.
// RUN: %loompy %S/Inputs/make_onnx.py bad_late %t.dir/late.onnx
// RUN: not loom-translate --import-onnx %t.dir/late.onnx -o %t.dir/keep.mlir --weights-out %t.dir/keep.safetensors 2>&1 | FileCheck %s --check-prefix=LATE
// LATE: error: node 'last' (Softmax): axis 5 is out of range for rank 2
// RUN: cmp %t.dir/a.safetensors %t.dir/keep.safetensors
// RUN: %loompy %S/Inputs/make_onnx.py external_short %t.dir/short.onnx
// RUN: not loom-translate --import-onnx %t.dir/short.onnx -o %t.dir/keep.mlir --weights-out %t.dir/keep.safetensors
// RUN: cmp %t.dir/a.safetensors %t.dir/keep.safetensors
// RUN: ls %t.dir | FileCheck %s --check-prefix=NOTMP --implicit-check-not=tmp
// NOTMP: keep.safetensors

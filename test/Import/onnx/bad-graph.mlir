// Graphs the importer rejects as a whole: unsupported ops, graph order,
// inputs it cannot type. One diagnostic, a non-zero exit, no crash.
// REQUIRES: onnx

// Two unsupported op types (Conv twice, LSTM) and a custom-domain op: all
// are listed, each with the first node that uses it, then what Loom has.
// RUN: %loompy %S/Inputs/make_onnx.py bad_unsupported %t.unsup.onnx
// RUN: not loom-translate --import-onnx %t.unsup.onnx -o - 2>&1 | FileCheck %s --check-prefix=UNSUP --implicit-check-not=error:
// UNSUP: error: the model uses 3 unsupported ONNX op types: Conv (first at node 'conv_first'), LSTM (first at node 'lstm_first'), com.example.Foo (first at node 'custom'); Loom imports Abs, Add, And, Cast,
// UNSUP-NOT: conv_second
// UNSUP-SAME: Sub, Sum, Tanh, Transpose, Trilu, Unsqueeze, Where, Xor

// An input used before the node that produces it.
// RUN: %loompy %S/Inputs/make_onnx.py bad_unsorted %t.unsorted.onnx
// RUN: not loom-translate --import-onnx %t.unsorted.onnx -o - 2>&1 | FileCheck %s --check-prefix=UNSORTED --implicit-check-not=error:
// UNSORTED: error: node 'add_first' (Add): input 't' is not produced by any earlier node, initializer or graph input (is the graph topologically sorted?)

// RUN: %loompy %S/Inputs/make_onnx.py bad_missing_output %t.noout.onnx
// RUN: not loom-translate --import-onnx %t.noout.onnx -o - 2>&1 | FileCheck %s --check-prefix=NOOUT --implicit-check-not=error:
// NOOUT: error: graph output 'nowhere' is not produced by any node, initializer or graph input

// RUN: %loompy %S/Inputs/make_onnx.py bad_subgraph_input %t.noin.onnx
// RUN: not loom-translate --import-onnx %t.noin.onnx -o - 2>&1 | FileCheck %s --check-prefix=NOIN --implicit-check-not=error:
// NOIN: error: node 'add' (Add): input 1 is missing

// A dynamic dimension without --input-shape: the error names the input and
// the flag, with the shape to complete.
// RUN: %loompy %S/Inputs/make_onnx.py bad_dynamic %t.dyn.onnx
// RUN: not loom-translate --import-onnx %t.dyn.onnx -o - 2>&1 | FileCheck %s --check-prefix=DYN --implicit-check-not=error:
// DYN: error: graph input 'x' has dynamic dimension 0 ('batch'); bind it with --input-shape x=Nx4 (the full shape, N replaced by a size)
// RUN: loom-translate --import-onnx %t.dyn.onnx --input-shape x=3x4 -o - | FileCheck %s --check-prefix=DYN-BOUND
// DYN-BOUND: func.func @main(%arg0: tensor<3x4xf32> {loom.name = "x"}) -> (tensor<3x4xf32> {loom.name = "y"})

// An input without even a rank.
// RUN: %loompy %S/Inputs/make_onnx.py bad_no_shape %t.noshape.onnx
// RUN: not loom-translate --import-onnx %t.noshape.onnx -o - 2>&1 | FileCheck %s --check-prefix=NOSHAPE --implicit-check-not=error:
// NOSHAPE: error: graph input 'x' has no shape (not even a rank); give it one with --input-shape x=DxDx...
// RUN: loom-translate --import-onnx %t.noshape.onnx --input-shape x=5 -o - | FileCheck %s --check-prefix=NOSHAPE-BOUND
// NOSHAPE-BOUND: func.func @main(%arg0: tensor<5xf32> {loom.name = "x"})

// RUN: %loompy %S/Inputs/make_onnx.py bad_float64_input %t.f64in.onnx
// RUN: not loom-translate --import-onnx %t.f64in.onnx -o - 2>&1 | FileCheck %s --check-prefix=F64IN --implicit-check-not=error:
// F64IN: error: graph input 'x' has element type float64, which Loom does not support (supported: float32, float16, bfloat16, int64, int32, bool); cast it in the model before export

// RUN: %loompy %S/Inputs/make_onnx.py bad_float64_initializer %t.f64init.onnx
// RUN: not loom-translate --import-onnx %t.f64init.onnx -o - 2>&1 | FileCheck %s --check-prefix=F64INIT --implicit-check-not=error:
// F64INIT: error: initializer 'w' has element type float64, which Loom does not support (supported: float32, float16, bfloat16, int64, int32, bool); convert it before export

// RUN: %loompy %S/Inputs/make_onnx.py bad_duplicate_initializer %t.dupinit.onnx
// RUN: not loom-translate --import-onnx %t.dupinit.onnx -o - 2>&1 | FileCheck %s --check-prefix=DUPINIT --implicit-check-not=error:
// DUPINIT: error: initializer 'w' is defined twice

// A declared output shape that disagrees with the op's semantics.
// RUN: %loompy %S/Inputs/make_onnx.py bad_declared_shape %t.declared.onnx
// RUN: not loom-translate --import-onnx %t.declared.onnx -o - 2>&1 | FileCheck %s --check-prefix=DECLARED --implicit-check-not=error:
// DECLARED: error: node 'tr' (Transpose): output 'y' is imported as [3, 2] float32 but the model declares [2, 3] float32; the model is inconsistent (find where with onnx.shape_inference.infer_shapes(model, strict_mode=True)) or this is an importer bug

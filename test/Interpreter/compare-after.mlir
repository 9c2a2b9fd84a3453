// --compare-after runs the entry function before and after a pass pipeline
// (--compare-with: against the same-named function of another file) on the
// same seeded random inputs and reports the largest differences per result.
//
// RUN: split-file %s %t
// RUN: loom-run %t/mlp.mlir --compare-after='builtin.module(canonicalize)' --seed 3 | FileCheck %s --check-prefix=CANON
// RUN: loom-run %t/mlp.mlir --compare-after='builtin.module(loom-shape-inference,canonicalize,cse)' --tolerance 0 | FileCheck %s --check-prefix=CANON0
// RUN: loom-run %t/dyn.mlir --compare-after='builtin.module(loom-shape-inference{arg-shapes=x=3x8},canonicalize)' | FileCheck %s --check-prefix=DYN
// RUN: not loom-run %t/mlp.mlir --compare-with=%t/mlp-changed.mlir --seed 3 | FileCheck %s --check-prefix=DIFF
// RUN: not loom-run %t/mlp.mlir --compare-after='builtin.module(no-such-pass)' 2>&1 | FileCheck %s --check-prefix=BADPASS
// RUN: not loom-run %t/mlp.mlir --compare-after='canonicalize' 2>&1 | FileCheck %s --check-prefix=ANCHOR
// RUN: not loom-run %t/mlp.mlir --compare-with=%t/mlp-i32.mlir 2>&1 | FileCheck %s --check-prefix=TYPES
// RUN: not loom-run %t/mlp.mlir --compare-with=%t/mlp-fewer.mlir 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: not loom-run %t/dyn.mlir --compare-after='builtin.module(canonicalize)' 2>&1 | FileCheck %s --check-prefix=STILLDYN

// CANON:      result loss: max abs diff 0, max rel diff 0
// CANON-NEXT: result logits: max abs diff 0, max rel diff 0
// CANON-NEXT: equivalent: yes (tolerance 1e-06)

// CANON0:      result loss: max abs diff 0, max rel diff 0
// CANON0-NEXT: result logits: max abs diff 0, max rel diff 0
// CANON0-NEXT: equivalent: yes (tolerance 0)

// The pipeline refines `?x8` to `3x8`: the inputs are made for the refined
// types and fed to both functions.
// DYN:      result result0: max abs diff 0, max rel diff 0
// DYN-NEXT: equivalent: yes (tolerance 1e-06)

// DIFF:      result loss: max abs diff {{[0-9.e+-]+}}, max rel diff {{[0-9.e+-]+}}
// DIFF-NEXT: result logits: max abs diff {{[0-9.e+-]+}}, max rel diff 0.5
// DIFF-NEXT: equivalent: no (tolerance 1e-06)

// BADPASS: loom-run: error: invalid --compare-after pipeline 'builtin.module(no-such-pass)': {{.*}}'no-such-pass' does not refer to a registered pass or pass pipeline
// ANCHOR: loom-run: error: invalid --compare-after pipeline 'canonicalize': expected pass pipeline to be wrapped with the anchor operation type
// TYPES: loom-run: error: result 'logits' of @main is tensor<3x4xf32>, but tensor<3x4xi32> in {{.*}}mlp-i32.mlir
// COUNT: loom-run: error: @main has 2 result(s), but 1 in {{.*}}mlp-fewer.mlir
// STILLDYN: loom-run: error: input 'x' (argument 0, tensor<?x8xf32>) has a dynamic shape

//--- mlp.mlir
func.func @main(%x: tensor<3x8xf32> {loom.name = "x"},
                %labels: tensor<3xi64> {loom.name = "labels"},
                %w1: tensor<8x16xf32> {loom.param, loom.name = "fc1.weight"},
                %b1: tensor<16xf32> {loom.param, loom.name = "fc1.bias"},
                %w2: tensor<16x4xf32> {loom.param, loom.name = "fc2.weight"})
    -> (tensor<f32> {loom.name = "loss"}, tensor<3x4xf32> {loom.name = "logits"}) {
  %h = loom.dot_general %x, %w1, contracting_dims = [1] x [0]
      : (tensor<3x8xf32>, tensor<8x16xf32>) -> tensor<3x16xf32>
  %bb1 = loom.broadcast %b1, dims = [1] : tensor<16xf32> -> tensor<3x16xf32>
  %h1 = loom.add %h, %bb1 : tensor<3x16xf32>
  %a1 = loom.relu %h1 : tensor<3x16xf32>
  // Dropout(p=0) as a multiplication by 1.0, which canonicalize removes.
  %one = loom.constant dense<1.0> : tensor<16xf32>
  %ones = loom.broadcast %one, dims = [1] : tensor<16xf32> -> tensor<3x16xf32>
  %d1 = loom.mul %a1, %ones : tensor<3x16xf32>
  %logits = loom.dot_general %d1, %w2, contracting_dims = [1] x [0]
      : (tensor<3x16xf32>, tensor<16x4xf32>) -> tensor<3x4xf32>
  %loss = loom.cross_entropy %logits, %labels reduction = mean
      : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<f32>
  return %loss, %logits : tensor<f32>, tensor<3x4xf32>
}

//--- mlp-changed.mlir
// As mlp.mlir, but the "dropout" scales by 1.5: the logits differ by half.
func.func @main(%x: tensor<3x8xf32> {loom.name = "x"},
                %labels: tensor<3xi64> {loom.name = "labels"},
                %w1: tensor<8x16xf32> {loom.param, loom.name = "fc1.weight"},
                %b1: tensor<16xf32> {loom.param, loom.name = "fc1.bias"},
                %w2: tensor<16x4xf32> {loom.param, loom.name = "fc2.weight"})
    -> (tensor<f32> {loom.name = "loss"}, tensor<3x4xf32> {loom.name = "logits"}) {
  %h = loom.dot_general %x, %w1, contracting_dims = [1] x [0]
      : (tensor<3x8xf32>, tensor<8x16xf32>) -> tensor<3x16xf32>
  %bb1 = loom.broadcast %b1, dims = [1] : tensor<16xf32> -> tensor<3x16xf32>
  %h1 = loom.add %h, %bb1 : tensor<3x16xf32>
  %a1 = loom.relu %h1 : tensor<3x16xf32>
  %one = loom.constant dense<1.5> : tensor<16xf32>
  %ones = loom.broadcast %one, dims = [1] : tensor<16xf32> -> tensor<3x16xf32>
  %d1 = loom.mul %a1, %ones : tensor<3x16xf32>
  %logits = loom.dot_general %d1, %w2, contracting_dims = [1] x [0]
      : (tensor<3x16xf32>, tensor<16x4xf32>) -> tensor<3x4xf32>
  %loss = loom.cross_entropy %logits, %labels reduction = mean
      : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<f32>
  return %loss, %logits : tensor<f32>, tensor<3x4xf32>
}

//--- mlp-i32.mlir
func.func @main(%x: tensor<3x8xf32>, %labels: tensor<3xi64>,
                %w1: tensor<8x16xf32>, %b1: tensor<16xf32>,
                %w2: tensor<16x4xf32>) -> (tensor<f32>, tensor<3x4xi32>) {
  %l = loom.constant dense<0.0> : tensor<f32>
  %c = loom.constant dense<0> : tensor<3x4xi32>
  return %l, %c : tensor<f32>, tensor<3x4xi32>
}

//--- mlp-fewer.mlir
func.func @main(%x: tensor<3x8xf32>, %labels: tensor<3xi64>,
                %w1: tensor<8x16xf32>, %b1: tensor<16xf32>,
                %w2: tensor<16x4xf32>) -> tensor<f32> {
  %l = loom.constant dense<0.0> : tensor<f32>
  return %l : tensor<f32>
}

//--- dyn.mlir
func.func @main(%x: tensor<?x8xf32> {loom.name = "x"},
                %w: tensor<8x4xf32> {loom.param, loom.name = "w"}) -> tensor<?x4xf32> {
  %h = loom.dot_general %x, %w, contracting_dims = [1] x [0]
      : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<?x4xf32>
  %r = loom.relu %h : tensor<?x4xf32>
  %s = loom.add %r, %r : tensor<?x4xf32>
  return %s : tensor<?x4xf32>
}

// Errors found while running name the op and its location, and never crash.
//
// RUN: not loom-run %s --entry unsupported 2>&1 | FileCheck %s --check-prefix=NOTSUP
// RUN: not loom-run %s --entry gather_out_of_range 2>&1 | FileCheck %s --check-prefix=GATHER
// RUN: not loom-run %s --entry div_by_zero 2>&1 | FileCheck %s --check-prefix=DIV
// RUN: not loom-run %s --entry bad_label 2>&1 | FileCheck %s --check-prefix=LABEL
// RUN: not loom-run %s --entry check_finite --check-finite 2>&1 | FileCheck %s --check-prefix=FINITE
// Without --check-finite the same function runs and prints the infinity.
// RUN: loom-run %s --entry check_finite --print | FileCheck %s --check-prefix=NOCHECK
// RUN: not loom-run %s --entry finite_in_callee --check-finite 2>&1 | FileCheck %s --check-prefix=CALLEE
// RUN: not loom-run %s --entry no_body 2>&1 | FileCheck %s --check-prefix=NOBODY
// RUN: not loom-run %s --entry recursive --random-inputs 2>&1 | FileCheck %s --check-prefix=RECURSION

func.func @unsupported() -> tensor<2xf32> {
  %a = loom.constant dense<1.0> : tensor<2xf32>
  // NOTSUP: runtime-errors.mlir:[[@LINE+1]]:8: error: 'arith.addf' op is not supported by the interpreter (loom-run runs loom ops, func.call, func.return and arith.constant)
  %b = arith.addf %a, %a : tensor<2xf32>
  return %b : tensor<2xf32>
}

func.func @gather_out_of_range() -> tensor<3x2xf32> {
  %table = loom.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %ids = loom.constant dense<[0, 2, 1]> : tensor<3xi64>
  // GATHER: runtime-errors.mlir:[[@LINE+1]]:8: error: 'loom.gather' op index 2 at position [1] of the indices is out of range [0, 2) for axis 0 of the data tensor<2x2xf32>
  %e = loom.gather %table[%ids], axis = 0 : (tensor<2x2xf32>, tensor<3xi64>) -> tensor<3x2xf32>
  return %e : tensor<3x2xf32>
}

func.func @div_by_zero() -> tensor<2xi32> {
  %a = loom.constant dense<[4, 5]> : tensor<2xi32>
  %b = loom.constant dense<[2, 0]> : tensor<2xi32>
  // DIV: runtime-errors.mlir:[[@LINE+1]]:8: error: 'loom.div' op integer division by zero at element [1] (5, 0)
  %q = loom.div %a, %b : tensor<2xi32>
  return %q : tensor<2xi32>
}

func.func @bad_label() -> tensor<f32> {
  %logits = loom.constant dense<0.0> : tensor<2x3xf32>
  %labels = loom.constant dense<[1, 3]> : tensor<2xi64>
  // LABEL: runtime-errors.mlir:[[@LINE+1]]:11: error: 'loom.cross_entropy' op label 3 of sample 1 is out of range [0, 3) and is not the ignore_index -100
  %loss = loom.cross_entropy %logits, %labels ignore_index = -100 : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

func.func @check_finite() -> tensor<3xf32> {
  %x = loom.constant dense<[1.0, 0.0, -1.0]> : tensor<3xf32>
  %e = loom.exp %x : tensor<3xf32>
  // log(0) = -inf comes first; log(-1) = NaN is in the same op, later.
  // FINITE: runtime-errors.mlir:[[@LINE+1]]:8: error: 'loom.log' op produced -Inf at index [1] of result 0 (tensor<3xf32>), the first non-finite value (--check-finite)
  %l = loom.log %x : tensor<3xf32>
  %s = loom.add %l, %e : tensor<3xf32>
  return %s : tensor<3xf32>
}
// log x + exp x = [0 + e, -inf + 1, NaN + 1/e]:
// NOCHECK: [2.7182817, -inf, nan]

func.func private @helper(%x: tensor<2xf32>) -> tensor<2xf32> {
  %zero = loom.constant dense<0.0> : tensor<2xf32>
  // CALLEE: runtime-errors.mlir:[[@LINE+1]]:8: error: 'loom.div' op produced +Inf at index [0] of result 0
  %d = loom.div %x, %zero : tensor<2xf32>
  return %d : tensor<2xf32>
}
func.func @finite_in_callee() -> tensor<2xf32> {
  %x = loom.constant dense<[1.0, 0.0]> : tensor<2xf32>
  // CALLEE: runtime-errors.mlir:[[@LINE+1]]:8: note: called from here
  %y = func.call @helper(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// Dynamic sizes are checked when the values arrive.
// RUN: loom-run %s --entry make_pair --output-dir %t.pair
// RUN: not loom-run %s --entry runtime_shapes --input a=%t.pair/a.npy --input b=%t.pair/b.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SHAPES
func.func @make_pair() -> (tensor<2xf32> {loom.name = "a"}, tensor<3xf32> {loom.name = "b"}) {
  %a = loom.constant dense<1.0> : tensor<2xf32>
  %b = loom.constant dense<1.0> : tensor<3xf32>
  return %a, %b : tensor<2xf32>, tensor<3xf32>
}
func.func @runtime_shapes(%a: tensor<?xf32> {loom.name = "a"}, %b: tensor<?xf32> {loom.name = "b"}) -> tensor<?xf32> {
  // SHAPES: runtime-errors.mlir:[[@LINE+1]]:8: error: 'loom.add' op the operands have different shapes at run time: [2] and [3] (elementwise ops need one shape; insert loom.broadcast)
  %s = loom.add %a, %b : tensor<?xf32>
  return %s : tensor<?xf32>
}

// NOBODY: loom-run: error: @no_body has no body to run
func.func private @no_body(%x: tensor<2xf32>) -> tensor<2xf32>

func.func @recursive(%x: tensor<2xf32>) -> tensor<2xf32> {
  // RECURSION: runtime-errors.mlir:[[@LINE+5]]:8: error: 'func.call' op nests calls deeper than 64 (recursion?); the interpreter stops here
  // RECURSION-NEXT: %y = func.call
  // RECURSION-NEXT: ^
  // RECURSION-NEXT: runtime-errors.mlir:[[@LINE+2]]:8: note: called from here
  // RECURSION: note: and 60 more enclosing calls
  %y = func.call @recursive(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// Values larger than memory are errors, not crashes (a result too large to
// allocate: runtime-errors-oom.mlir).
// RUN: not loom-run %s --entry huge_arguments --random-inputs 2>&1 | FileCheck %s --check-prefix=HUGEARGS
// HUGEARGS: loom-run: error: the arguments of @huge_arguments need 3725.3 GiB in the interpreter, more than this machine's {{.*}} GiB of memory; run a smaller configuration
func.func @huge_arguments(%w: tensor<1000000000000xf32> {loom.name = "w", loom.param}) -> tensor<1000000000000xf32> {
  return %w : tensor<1000000000000xf32>
}

// The `check` ops of StableHLO's test data (kept by the StableHLO importer)
// run in loom-run: passing checks are counted, a failed one is an error at
// the op naming the first mismatching index and both values, execution
// goes on, and the exit status is 1. --entry-all runs every public
// function (the argument-less tests of the StableHLO interpreter).
//
// RUN: split-file %s %t
// RUN: loom-run %t/pass.mlir --entry-all --check | FileCheck %s --check-prefix=PASS
// RUN: not loom-run %t/fail.mlir --entry-all --check 2>&1 | FileCheck %s --check-prefix=FAIL
// RUN: not loom-run %t/bad.mlir --check 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not loom-run %t/pass.mlir --entry-all --entry eq 2>&1 | FileCheck %s --check-prefix=BOTH

//--- pass.mlir
func.func @eq() {
  %0 = loom.constant dense<[1, -2, 3]> : tensor<3xi32>
  check.expect_eq_const %0, dense<[1, -2, 3]> : tensor<3xi32>
  %1 = loom.constant dense<[0x7FC00000, 1.5]> : tensor<2xf32>
  check.expect_eq_const %1, dense<[0x7FC00001, 1.5]> : tensor<2xf32>
  %b = loom.constant dense<[true, false]> : tensor<2xi1>
  check.expect_eq %b, %b : tensor<2xi1>, tensor<2xi1>
  return
}
func.func @almost() {
  // |1.00005 - 1| <= 1e-4 (the default tolerance of the _const op).
  %0 = loom.constant dense<[1.0, 2.0]> : tensor<2xf32>
  check.expect_almost_eq_const %0, dense<[1.00005, 2.0]> : tensor<2xf32>
  check.expect_almost_eq_const %0, dense<[1.4, 2.0]> : tensor<2xf32> {tolerance = 0.5 : f64}
  // The custom-call form allows 1e-3.
  %1 = loom.constant dense<[1.0009, 2.0]> : tensor<2xf32>
  check.expect_almost_eq %0, %1 : tensor<2xf32>, tensor<2xf32>
  return
}
func.func @close() -> tensor<2xbf16> {
  // 1.0 and its third f32 successor: 3 ULPs apart (the default maximum).
  %0 = loom.constant dense<[1.0, -0.0]> : tensor<2xf32>
  %1 = loom.constant dense<[0x3F800003, 0.0]> : tensor<2xf32>
  check.expect_close %0, %1 : tensor<2xf32>, tensor<2xf32>
  // bf16 ULPs: 1.0 and 1.0078125 are 1 apart.
  %2 = loom.constant dense<[1.0, 2.0]> : tensor<2xbf16>
  %3 = loom.constant dense<[1.0078125, 2.0]> : tensor<2xbf16>
  check.expect_close %2, %3 {max_ulp_difference = 1 : i64} : tensor<2xbf16>, tensor<2xbf16>
  return %2 : tensor<2xbf16>
}
// PASS: checks: 8 passed, 0 failed

//--- fail.mlir
func.func @eq() {
  %0 = loom.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  // FAIL: fail.mlir:{{[0-9]+}}:3: error: 'check.expect_eq_const' failed: at index [1, 0] the value 3 is not equal to the expected 5; 2 of 4 elements of tensor<2x2xi64> differ
  check.expect_eq_const %0, dense<[[1, 2], [5, 6]]> : tensor<2x2xi64>
  return
}
func.func @almost() {
  %0 = loom.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // FAIL: fail.mlir:{{[0-9]+}}:3: error: 'check.expect_almost_eq_const' failed: at index [0] the value 1 is not within 0.0001 of the expected 1.00100005; 1 of 2 elements of tensor<2xf32> differ
  check.expect_almost_eq_const %0, dense<[1.001, 2.0]> : tensor<2xf32>
  return
}
func.func @close() {
  %0 = loom.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = loom.constant dense<[0x3F800004, 0x7F800000]> : tensor<2xf32>
  // FAIL: fail.mlir:{{[0-9]+}}:3: error: 'check.expect_close' failed: at index [0] the value 1 is not within [0, 3] ULPs of the expected 1.00000048 (4 ULPs apart; worst inf); 2 of 2 elements of tensor<2xf32> differ
  check.expect_close %0, %1 : tensor<2xf32>, tensor<2xf32>
  check.expect_close %0, %0 : tensor<2xf32>, tensor<2xf32>
  return
}
// FAIL: checks: 1 passed, 3 failed

//--- bad.mlir
func.func @main() {
  %0 = loom.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = loom.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  // BAD: bad.mlir:{{[0-9]+}}:3: error: 'check.expect_eq' compares tensor<2xf32> with tensor<3xf32>; the check needs equal types
  check.expect_eq %0, %1 : tensor<2xf32>, tensor<3xf32>
  return
}
// BAD: checks: 0 passed, 1 failed

// BOTH: loom-run: error: --entry and --entry-all exclude each other

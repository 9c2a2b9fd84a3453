// RUN: loom-run %s --entry-all --print | FileCheck %s

// compare, select and convert, one function each. The float operands are
// a = [1, NaN, -2, 3] and b = [2, NaN, -2, 0].

// NaN is unordered: only `ne` holds for it.
// CHECK-LABEL: @compare_float:
// CHECK-NEXT:  lt : tensor<4xi1>
// CHECK-NEXT:  [True, False, False, False]
// CHECK-NEXT:  eq : tensor<4xi1>
// CHECK-NEXT:  [False, False, True, False]
// CHECK-NEXT:  ne : tensor<4xi1>
// CHECK-NEXT:  [True, True, False, True]
func.func @compare_float() -> (tensor<4xi1> {loom.name = "lt"}, tensor<4xi1> {loom.name = "eq"},
                               tensor<4xi1> {loom.name = "ne"}) {
  %zero = loom.constant dense<0.0> : tensor<4xf32>
  %nan = loom.div %zero, %zero : tensor<4xf32>
  %m = loom.constant dense<[false, true, false, false]> : tensor<4xi1>
  %a0 = loom.constant dense<[1.0, 0.0, -2.0, 3.0]> : tensor<4xf32>
  %b0 = loom.constant dense<[2.0, 0.0, -2.0, 0.0]> : tensor<4xf32>
  %a = loom.select %m, %nan, %a0 : tensor<4xi1>, tensor<4xf32>
  %b = loom.select %m, %nan, %b0 : tensor<4xi1>, tensor<4xf32>
  %lt = loom.compare lt, %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %eq = loom.compare eq, %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %ne = loom.compare ne, %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %lt, %eq, %ne : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// CHECK-LABEL: @compare_int:
// CHECK-NEXT:  ge_int : tensor<4xi1>
// CHECK-NEXT:  [True, True, False, True]
func.func @compare_int() -> (tensor<4xi1> {loom.name = "ge_int"}) {
  %i = loom.constant dense<[-5, 0, 5, 7]> : tensor<4xi64>
  %j = loom.constant dense<[-6, 0, 6, 7]> : tensor<4xi64>
  %ge_int = loom.compare ge, %i, %j : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  return %ge_int : tensor<4xi1>
}

// lt = [T, F, F, F]: pick a where a < b, else b (NaN included).
// CHECK-LABEL: @select:
// CHECK-NEXT:  select : tensor<4xf32>
// CHECK-NEXT:  [1., nan, -2., 0.]
func.func @select() -> (tensor<4xf32> {loom.name = "select"}) {
  %zero = loom.constant dense<0.0> : tensor<4xf32>
  %nan = loom.div %zero, %zero : tensor<4xf32>
  %m = loom.constant dense<[false, true, false, false]> : tensor<4xi1>
  %a0 = loom.constant dense<[1.0, 0.0, -2.0, 3.0]> : tensor<4xf32>
  %b0 = loom.constant dense<[2.0, 0.0, -2.0, 0.0]> : tensor<4xf32>
  %a = loom.select %m, %nan, %a0 : tensor<4xi1>, tensor<4xf32>
  %b = loom.select %m, %nan, %b0 : tensor<4xi1>, tensor<4xf32>
  %lt = loom.compare lt, %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %select = loom.select %lt, %a, %b : tensor<4xi1>, tensor<4xf32>
  return %select : tensor<4xf32>
}

// Float to integer rounds toward zero; 1e10 is out of the i32 range: it
// saturates to 2147483647.
// CHECK-LABEL: @convert_to_int:
// CHECK-NEXT:  to_i32 : tensor<6xi32>
// CHECK-NEXT:  [2, -2, 0, 0, 3, 2147483647]
func.func @convert_to_int() -> (tensor<6xi32> {loom.name = "to_i32"}) {
  %f = loom.constant dense<[2.7, -2.7, 0.5, -0.5, 3.0, 1.0e10]> : tensor<6xf32>
  %to_i32 = loom.convert %f : tensor<6xf32> -> tensor<6xi32>
  return %to_i32 : tensor<6xi32>
}

// To i1: non-zero is true; from i1: 1 and 0.
// CHECK-LABEL: @convert_i1:
// CHECK-NEXT:  to_i1 : tensor<4xi1>
// CHECK-NEXT:  [True, False, True, True]
// CHECK-NEXT:  from_i1 : tensor<4xf32>
// CHECK-NEXT:  [1., 0., 0., 0.]
func.func @convert_i1() -> (tensor<4xi1> {loom.name = "to_i1"}, tensor<4xf32> {loom.name = "from_i1"}) {
  %a0 = loom.constant dense<[1.0, 0.0, -2.0, 3.0]> : tensor<4xf32>
  %to_i1 = loom.convert %a0 : tensor<4xf32> -> tensor<4xi1>
  %lt = loom.constant dense<[true, false, false, false]> : tensor<4xi1>
  %from_i1 = loom.convert %lt : tensor<4xi1> -> tensor<4xf32>
  return %to_i1, %from_i1 : tensor<4xi1>, tensor<4xf32>
}

// i64 -> i32 keeps the low 32 bits: 2^32 + 5 -> 5, 2^31 -> -2^31.
// CHECK-LABEL: @convert_i64_to_i32:
// CHECK-NEXT:  i64_to_i32 : tensor<3xi32>
// CHECK-NEXT:  [5, -2147483648, -1]
func.func @convert_i64_to_i32() -> (tensor<3xi32> {loom.name = "i64_to_i32"}) {
  %big = loom.constant dense<[4294967301, 2147483648, -1]> : tensor<3xi64>
  %i64_to_i32 = loom.convert %big : tensor<3xi64> -> tensor<3xi32>
  return %i64_to_i32 : tensor<3xi32>
}

// Rounding to nearest even: 1 + 2^-8 is a tie in bf16 (8 significand bits)
// -> 1; 1 + 3 * 2^-8 is a tie -> 1 + 2^-6 = 1.015625; 0.1 -> 0.10009766.
// Values print with the fewest digits that read back as the same bf16
// (1.016, 0.1).
// CHECK-LABEL: @convert_bf16:
// CHECK-NEXT:  to_bf16 : tensor<3xbf16>
// CHECK-NEXT:  [1., 1.016, 0.1]
func.func @convert_bf16() -> (tensor<3xbf16> {loom.name = "to_bf16"}) {
  %g = loom.constant dense<[1.00390625, 1.01171875, 0.1]> : tensor<3xf32>
  %to_bf16 = loom.convert %g : tensor<3xf32> -> tensor<3xbf16>
  return %to_bf16 : tensor<3xbf16>
}

// f16 overflows above 65504 (65520 rounds up to inf; 65504 prints as
// 65500.); 1e-7 is subnormal: 1e-7 / 2^-24 = 1.68 rounds to 2, i.e.
// 1.19e-07, which prints as 1e-07.
// CHECK-LABEL: @convert_f16:
// CHECK-NEXT:  to_f16 : tensor<3xf16>
// CHECK-NEXT:  [65500., inf, 1e-07]
func.func @convert_f16() -> (tensor<3xf16> {loom.name = "to_f16"}) {
  %h = loom.constant dense<[65519.0, 65520.0, 1.0e-7]> : tensor<3xf32>
  %to_f16 = loom.convert %h : tensor<3xf32> -> tensor<3xf16>
  return %to_f16 : tensor<3xf16>
}

// RUN: loom-run %s --print | FileCheck %s

func.func @main() -> (tensor<4xi1> {loom.name = "lt"}, tensor<4xi1> {loom.name = "eq"},
                      tensor<4xi1> {loom.name = "ne"}, tensor<4xi1> {loom.name = "ge_int"},
                      tensor<4xf32> {loom.name = "select"}, tensor<6xi32> {loom.name = "to_i32"},
                      tensor<4xi1> {loom.name = "to_i1"}, tensor<4xf32> {loom.name = "from_i1"},
                      tensor<3xi32> {loom.name = "i64_to_i32"}, tensor<3xbf16> {loom.name = "to_bf16"},
                      tensor<3xf16> {loom.name = "to_f16"}) {
  // a = [1, NaN, -2, 3], b = [2, NaN, -2, 0]
  %zero = loom.constant dense<0.0> : tensor<4xf32>
  %nan = loom.div %zero, %zero : tensor<4xf32>
  %m = loom.constant dense<[false, true, false, false]> : tensor<4xi1>
  %a0 = loom.constant dense<[1.0, 0.0, -2.0, 3.0]> : tensor<4xf32>
  %b0 = loom.constant dense<[2.0, 0.0, -2.0, 0.0]> : tensor<4xf32>
  %a = loom.select %m, %nan, %a0 : tensor<4xi1>, tensor<4xf32>
  %b = loom.select %m, %nan, %b0 : tensor<4xi1>, tensor<4xf32>
  // NaN is unordered: only `ne` holds for it.
  %lt = loom.compare lt, %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %eq = loom.compare eq, %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %ne = loom.compare ne, %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %i = loom.constant dense<[-5, 0, 5, 7]> : tensor<4xi64>
  %j = loom.constant dense<[-6, 0, 6, 7]> : tensor<4xi64>
  %ge_int = loom.compare ge, %i, %j : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  // lt = [T, F, F, F]: pick a where a < b, else b.
  %select = loom.select %lt, %a, %b : tensor<4xi1>, tensor<4xf32>
  // Float to integer rounds toward zero.
  %f = loom.constant dense<[2.7, -2.7, 0.5, -0.5, 3.0, 1.0e10]> : tensor<6xf32>
  %to_i32 = loom.convert %f : tensor<6xf32> -> tensor<6xi32>
  %to_i1 = loom.convert %a0 : tensor<4xf32> -> tensor<4xi1>
  %from_i1 = loom.convert %lt : tensor<4xi1> -> tensor<4xf32>
  // i64 -> i32 keeps the low 32 bits: 2^32 + 5 -> 5, 2^31 -> -2^31.
  %big = loom.constant dense<[4294967301, 2147483648, -1]> : tensor<3xi64>
  %i64_to_i32 = loom.convert %big : tensor<3xi64> -> tensor<3xi32>
  // Rounding to nearest even: 1 + 2^-8 is a tie in bf16 (8 significand bits) -> 1;
  // 1 + 3 * 2^-8 is a tie -> 1 + 2^-6 = 1.015625; 0.1 -> 0.10009766. Values print with
// the fewest digits that read back as the same bf16 (1.016, 0.1).
  %g = loom.constant dense<[1.00390625, 1.01171875, 0.1]> : tensor<3xf32>
  %to_bf16 = loom.convert %g : tensor<3xf32> -> tensor<3xbf16>
  // f16 overflows above 65504 (65520 rounds up to inf; 65504 prints as 65500.); 1e-7 is
  // subnormal: 1e-7 / 2^-24 = 1.68 rounds to 2, i.e. 1.19e-07, which prints as 1e-07.
  %h = loom.constant dense<[65519.0, 65520.0, 1.0e-7]> : tensor<3xf32>
  %to_f16 = loom.convert %h : tensor<3xf32> -> tensor<3xf16>
  return %lt, %eq, %ne, %ge_int, %select, %to_i32, %to_i1, %from_i1, %i64_to_i32, %to_bf16, %to_f16
      : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xf32>, tensor<6xi32>,
        tensor<4xi1>, tensor<4xf32>, tensor<3xi32>, tensor<3xbf16>, tensor<3xf16>
}
// CHECK:      lt : tensor<4xi1>
// CHECK-NEXT: [True, False, False, False]
// CHECK:      eq : tensor<4xi1>
// CHECK-NEXT: [False, False, True, False]
// CHECK:      ne : tensor<4xi1>
// CHECK-NEXT: [True, True, False, True]
// CHECK:      ge_int : tensor<4xi1>
// CHECK-NEXT: [True, True, False, True]
// CHECK:      select : tensor<4xf32>
// CHECK-NEXT: [1., nan, -2., 0.]
// 1e10 is out of the i32 range: it saturates to 2147483647.
// CHECK:      to_i32 : tensor<6xi32>
// CHECK-NEXT: [2, -2, 0, 0, 3, 2147483647]
// CHECK:      to_i1 : tensor<4xi1>
// CHECK-NEXT: [True, False, True, True]
// CHECK:      from_i1 : tensor<4xf32>
// CHECK-NEXT: [1., 0., 0., 0.]
// CHECK:      i64_to_i32 : tensor<3xi32>
// CHECK-NEXT: [5, -2147483648, -1]
// CHECK:      to_bf16 : tensor<3xbf16>
// CHECK-NEXT: [1., 1.016, 0.1]
// CHECK:      to_f16 : tensor<3xf16>
// CHECK-NEXT: [65500., inf, 1e-07]

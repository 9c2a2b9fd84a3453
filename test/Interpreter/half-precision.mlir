// f16 and bf16 are computed in higher precision and rounded to their type
// after every op (so a chain of ops rounds at each step).
//
// RUN: loom-run %s --print | FileCheck %s

func.func @main() -> (tensor<2xbf16> {loom.name = "bf16_add"}, tensor<2xbf16> {loom.name = "bf16_chain"},
                      tensor<2xf16> {loom.name = "f16_mul"}, tensor<2xf16> {loom.name = "f16_exp"},
                      tensor<2xf16> {loom.name = "f16_softmax"}, tensor<bf16> {loom.name = "bf16_sum"}) {
  // bf16 has 8 significand bits: 256 + 1 = 257 is a tie between 256 and 258 -> 256 (even);
  // 1 + 0.01 = 1.01 -> 1.0078125 (nearest multiple of 2^-7), printed as 1.01 (the shortest
  // decimal that reads back as that bf16).
  %a = loom.constant dense<[256.0, 1.0]> : tensor<2xbf16>
  %b = loom.constant dense<[1.0, 0.01]> : tensor<2xbf16>
  %bf16_add = loom.add %a, %b : tensor<2xbf16>
  // Adding 1 to 256 twice: each add rounds back to 256 (in f32 it would be 258).
  %one = loom.constant dense<1.0> : tensor<2xbf16>
  %big = loom.constant dense<256.0> : tensor<2xbf16>
  %s1 = loom.add %big, %one : tensor<2xbf16>
  %bf16_chain = loom.add %s1, %one : tensor<2xbf16>
  // f16 has 11 significand bits: 1.001 * 1.001 ... 1.0009766^2 = 1.0019541 -> 1.002 (f16 1.0019531).
  // 300 * 300 = 90000 overflows f16 (max 65504) -> inf.
  %c = loom.constant dense<[1.001, 300.0]> : tensor<2xf16>
  %f16_mul = loom.mul %c, %c : tensor<2xf16>
  // e^1 = 2.7182817 -> f16 2.719 (2.71875); e^12 = 162754.8 -> inf.
  %d = loom.constant dense<[1.0, 12.0]> : tensor<2xf16>
  %f16_exp = loom.exp %d : tensor<2xf16>
  // The stable softmax of [1, 12] in f16: e^-11 / (1 + e^-11) = 1.67e-05 (an f16 subnormal).
  %f16_softmax = loom.softmax %d, axis = 0 : tensor<2xf16>
  // The sum of 256 and 1 + 1 accumulates in higher precision: 258, exact in bf16.
  %v = loom.constant dense<[256.0, 1.0, 1.0]> : tensor<3xbf16>
  %bf16_sum = loom.reduce_sum %v, dims = [0] : tensor<3xbf16> -> tensor<bf16>
  return %bf16_add, %bf16_chain, %f16_mul, %f16_exp, %f16_softmax, %bf16_sum
      : tensor<2xbf16>, tensor<2xbf16>, tensor<2xf16>, tensor<2xf16>, tensor<2xf16>, tensor<bf16>
}
// CHECK:      bf16_add : tensor<2xbf16>
// CHECK-NEXT: [256., 1.01]
// CHECK:      bf16_chain : tensor<2xbf16>
// CHECK-NEXT: [256., 256.]
// CHECK:      f16_mul : tensor<2xf16>
// CHECK-NEXT: [1.002, inf]
// CHECK:      f16_exp : tensor<2xf16>
// CHECK-NEXT: [2.719, inf]
// CHECK:      f16_softmax : tensor<2xf16>
// CHECK-NEXT: [1.67e-05, 1.]
// CHECK:      bf16_sum : tensor<bf16>
// CHECK-NEXT: 258.

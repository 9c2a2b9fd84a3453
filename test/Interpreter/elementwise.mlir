// RUN: loom-run %s --entry binary_f32 --print | FileCheck %s --check-prefix=BIN
// RUN: loom-run %s --entry binary_int --print | FileCheck %s --check-prefix=INT
// RUN: loom-run %s --entry nan_propagation --print | FileCheck %s --check-prefix=NAN
// RUN: loom-run %s --entry unary --print | FileCheck %s --check-prefix=UN
// RUN: loom-run %s --entry trig --print | FileCheck %s --check-prefix=TRIG

// Binary arithmetic on f32. a = [1.5, -2, 7, 0], b = [0.5, 4, -2, 0].
func.func @binary_f32() -> (tensor<4xf32> {loom.name = "add"}, tensor<4xf32> {loom.name = "sub"},
                            tensor<4xf32> {loom.name = "mul"}, tensor<4xf32> {loom.name = "div"},
                            tensor<4xf32> {loom.name = "pow"}, tensor<4xf32> {loom.name = "max"},
                            tensor<4xf32> {loom.name = "min"}) {
  %a = loom.constant dense<[1.5, -2.0, 7.0, 0.0]> : tensor<4xf32>
  %b = loom.constant dense<[0.5, 4.0, -2.0, 0.0]> : tensor<4xf32>
  %add = loom.add %a, %b : tensor<4xf32>
  %sub = loom.sub %a, %b : tensor<4xf32>
  %mul = loom.mul %a, %b : tensor<4xf32>
  %div = loom.div %a, %b : tensor<4xf32>
  %pow = loom.pow %a, %b : tensor<4xf32>
  %max = loom.max %a, %b : tensor<4xf32>
  %min = loom.min %a, %b : tensor<4xf32>
  return %add, %sub, %mul, %div, %pow, %max, %min
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
// BIN:      add : tensor<4xf32>
// BIN-NEXT: [2., 2., 5., 0.]
// BIN:      sub : tensor<4xf32>
// BIN-NEXT: [1., -6., 9., 0.]
// BIN:      mul : tensor<4xf32>
// BIN-NEXT: [0.75, -8., -14., 0.]
// 0 / 0 is NaN.
// BIN:      div : tensor<4xf32>
// BIN-NEXT: [3., -0.5, -3.5, nan]
// sqrt(1.5) = 1.2247449, (-2)^4 = 16, 7^-2 = 1/49 = 0.020408163, 0^0 = 1.
// BIN:      pow : tensor<4xf32>
// BIN-NEXT: [1.2247449, 16., 0.020408163, 1.]
// BIN:      max : tensor<4xf32>
// BIN-NEXT: [1.5, 4., 7., 0.]
// BIN:      min : tensor<4xf32>
// BIN-NEXT: [0.5, -2., -2., 0.]

// Integers: division rounds toward zero; i32 arithmetic wraps.
func.func @binary_int() -> (tensor<4xi64> {loom.name = "div"}, tensor<4xi64> {loom.name = "mul"},
                            tensor<4xi64> {loom.name = "pow"}, tensor<4xi64> {loom.name = "max"},
                            tensor<2xi32> {loom.name = "wrap"}, tensor<4xi64> {loom.name = "neg_abs"}) {
  %a = loom.constant dense<[7, -7, 7, -7]> : tensor<4xi64>
  %b = loom.constant dense<[2, 2, -2, -2]> : tensor<4xi64>
  %div = loom.div %a, %b : tensor<4xi64>
  %mul = loom.mul %a, %b : tensor<4xi64>
  %e = loom.constant dense<[0, 1, 3, -1]> : tensor<4xi64>
  %pow = loom.pow %b, %e : tensor<4xi64>
  %max = loom.max %a, %b : tensor<4xi64>
  // 2147483647 + 1 wraps to -2147483648; -2147483648 - 1 wraps to 2147483647.
  %big = loom.constant dense<[2147483647, -2147483648]> : tensor<2xi32>
  %one = loom.constant dense<[1, -1]> : tensor<2xi32>
  %wrap = loom.add %big, %one : tensor<2xi32>
  %neg = loom.neg %a : tensor<4xi64>
  %abs = loom.abs %neg : tensor<4xi64>
  return %div, %mul, %pow, %max, %wrap, %abs
      : tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<2xi32>, tensor<4xi64>
}
// 7/2 = 3, -7/2 = -3, 7/-2 = -3, -7/-2 = 3.
// INT:      div : tensor<4xi64>
// INT-NEXT: [3, -3, -3, 3]
// INT:      mul : tensor<4xi64>
// INT-NEXT: [14, -14, -14, 14]
// 2^0 = 1, 2^1 = 2, (-2)^3 = -8, (-2)^-1 = 1 / -2 rounded toward zero = 0.
// INT:      pow : tensor<4xi64>
// INT-NEXT: [1, 2, -8, 0]
// INT:      max : tensor<4xi64>
// INT-NEXT: [7, 2, 7, -2]
// INT:      wrap : tensor<2xi32>
// INT-NEXT: [-2147483648, 2147483647]
// INT:      neg_abs : tensor<4xi64>
// INT-NEXT: [7, 7, 7, 7]

// max/min propagate NaN from either side (unlike C's fmax).
func.func @nan_propagation() -> (tensor<3xf32> {loom.name = "max"}, tensor<3xf32> {loom.name = "min"}) {
  %zero = loom.constant dense<0.0> : tensor<3xf32>
  %nan = loom.div %zero, %zero : tensor<3xf32>
  %a = loom.constant dense<[1.0, -1.0, 0.0]> : tensor<3xf32>
  %s = loom.constant dense<[true, false, false]> : tensor<3xi1>
  // x = [NaN, -1, 0]
  %x = loom.select %s, %nan, %a : tensor<3xi1>, tensor<3xf32>
  %max = loom.max %a, %x : tensor<3xf32>
  %min = loom.min %x, %a : tensor<3xf32>
  return %max, %min : tensor<3xf32>, tensor<3xf32>
}
// NAN:      max : tensor<3xf32>
// NAN-NEXT: [nan, -1., 0.]
// NAN:      min : tensor<3xf32>
// NAN-NEXT: [nan, -1., 0.]

// Unary math on x = [0, 1, -1, 4].
func.func @unary() -> (tensor<4xf32> {loom.name = "neg"}, tensor<4xf32> {loom.name = "abs"},
                       tensor<4xf32> {loom.name = "exp"}, tensor<4xf32> {loom.name = "log"},
                       tensor<4xf32> {loom.name = "sqrt"}, tensor<4xf32> {loom.name = "rsqrt"},
                       tensor<4xf32> {loom.name = "tanh"}, tensor<4xf32> {loom.name = "sigmoid"},
                       tensor<4xf32> {loom.name = "erf"}) {
  %x = loom.constant dense<[0.0, 1.0, -1.0, 4.0]> : tensor<4xf32>
  %neg = loom.neg %x : tensor<4xf32>
  %abs = loom.abs %x : tensor<4xf32>
  %exp = loom.exp %x : tensor<4xf32>
  %log = loom.log %x : tensor<4xf32>
  %sqrt = loom.sqrt %x : tensor<4xf32>
  %rsqrt = loom.rsqrt %x : tensor<4xf32>
  %tanh = loom.tanh %x : tensor<4xf32>
  %sigmoid = loom.sigmoid %x : tensor<4xf32>
  %erf = loom.erf %x : tensor<4xf32>
  return %neg, %abs, %exp, %log, %sqrt, %rsqrt, %tanh, %sigmoid, %erf
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
// UN:      neg : tensor<4xf32>
// UN-NEXT: [-0., -1., 1., -4.]
// UN:      abs : tensor<4xf32>
// UN-NEXT: [0., 1., 1., 4.]
// e = 2.7182817 in f32, 1/e = 0.36787945, e^4 = 54.59815.
// UN:      exp : tensor<4xf32>
// UN-NEXT: [1., 2.7182817, 0.36787945, 54.59815]
// log 0 = -inf, log -1 = NaN, log 4 = 2 ln 2 = 1.3862944.
// UN:      log : tensor<4xf32>
// UN-NEXT: [-inf, 0., nan, 1.3862944]
// UN:      sqrt : tensor<4xf32>
// UN-NEXT: [0., 1., nan, 2.]
// UN:      rsqrt : tensor<4xf32>
// UN-NEXT: [inf, 1., nan, 0.5]
// tanh 1 = (e^2 - 1) / (e^2 + 1) = 0.7615942, tanh 4 = 0.9993293.
// UN:      tanh : tensor<4xf32>
// UN-NEXT: [0., 0.7615942, -0.7615942, 0.9993293]
// 1 / (1 + e^-1) = 0.7310586, 1 / (1 + e) = 0.26894143, 1 / (1 + e^-4) = 0.98201376.
// UN:      sigmoid : tensor<4xf32>
// UN-NEXT: [0.5, 0.7310586, 0.26894143, 0.98201376]
// erf 1 = 0.8427008; erf 4 = 1 - 1.5e-8 rounds to 1 in f32.
// UN:      erf : tensor<4xf32>
// UN-NEXT: [0., 0.8427008, -0.8427008, 1.]

// cos and sin (radians) on x = [0, 1, -1, pi/2 in f32], computed in double
// and rounded once: cos 1 = 0.5403023, sin 1 = 0.84147096; f32(pi/2) =
// 1.5707964 lies 4.4e-8 past pi/2, so its cosine is -4.371139e-08.
func.func @trig() -> (tensor<4xf32> {loom.name = "cos"}, tensor<4xf32> {loom.name = "sin"},
                      tensor<2xf16> {loom.name = "cos_f16"}) {
  %x = loom.constant dense<[0.0, 1.0, -1.0, 1.57079632679]> : tensor<4xf32>
  %cos = loom.cos %x : tensor<4xf32>
  %sin = loom.sin %x : tensor<4xf32>
  %h = loom.constant dense<[0.0, 3.0]> : tensor<2xf16>
  %cos_f16 = loom.cos %h : tensor<2xf16>
  return %cos, %sin, %cos_f16 : tensor<4xf32>, tensor<4xf32>, tensor<2xf16>
}
// TRIG:      cos : tensor<4xf32>
// TRIG-NEXT: [1., 0.5403023, 0.5403023, -4.371139e-08]
// TRIG:      sin : tensor<4xf32>
// TRIG-NEXT: [0., 0.84147096, -0.84147096, 1.]
// cos 3 = -0.9899925 rounds to -0.99 in f16.
// TRIG:      cos_f16 : tensor<2xf16>
// TRIG-NEXT: [1., -0.99]

// func.call runs the callee; arith.constant is a constant; the default entry
// is @main, else the only public function with a body.
//
// RUN: loom-run %s --print | FileCheck %s
// RUN: loom-run %s --entry twice --random-inputs --print | FileCheck %s --check-prefix=TWICE

// A private helper: x * 2 + c.
func.func private @scale(%x: tensor<3xf32>, %c: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %two = arith.constant dense<2.0> : tensor<3xf32>
  %y = loom.mul %x, %two : tensor<3xf32>
  %z = loom.add %y, %c : tensor<3xf32>
  return %z, %y : tensor<3xf32>, tensor<3xf32>
}

func.func @twice(%x: tensor<3xf32>) -> tensor<3xf32> {
  %zero = arith.constant dense<0.0> : tensor<3xf32>
  %a, %b = func.call @scale(%x, %zero) : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  %c, %d = func.call @scale(%a, %zero) : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  %r = loom.div %c, %x : tensor<3xf32>
  return %r : tensor<3xf32>
}
// (x * 2 * 2) / x = 4 for any (random, non-zero) x.
// TWICE:      result0 : tensor<3xf32>
// TWICE-NEXT: [4., 4., 4.]

func.func @main() -> (tensor<3xf32> {loom.name = "z"}, tensor<3xf32> {loom.name = "y"}) {
  %x = arith.constant dense<[1.0, -2.0, 0.5]> : tensor<3xf32>
  %c = loom.constant dense<[10.0, 20.0, 30.0]> : tensor<3xf32>
  %z, %y = func.call @scale(%x, %c) : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %z, %y : tensor<3xf32>, tensor<3xf32>
}
// CHECK:      z : tensor<3xf32>
// CHECK-NEXT: [12., 16., 31.]
// CHECK-NEXT: y : tensor<3xf32>
// CHECK-NEXT: [2., -4., 1.]

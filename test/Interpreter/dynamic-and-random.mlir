// Arguments with dynamic sizes take any size; --random-inputs is seeded and
// keeps integer inputs in the range they index.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: loom-run %s --entry make --output-dir %t
// RUN: loom-run %s --entry rows --input x=%t/x.npy --print | FileCheck %s --check-prefix=DYN
// RUN: loom-run %s --entry embed --random-inputs --seed 7 --print > %t/a.txt
// RUN: loom-run %s --entry embed --random-inputs --seed 7 --print > %t/b.txt
// RUN: diff %t/a.txt %t/b.txt
// RUN: loom-run %s --entry embed --random-inputs --seed 7 --print | FileCheck %s --check-prefix=EMBED
// RUN: not loom-run %s --entry rows --random-inputs 2>&1 | FileCheck %s --check-prefix=RANDDYN
// RUN: loom-run %s --entry big --print | FileCheck %s --check-prefix=BIG

func.func @make() -> (tensor<3x2xf32> {loom.name = "x"}) {
  %x = loom.iota dim = 0 : tensor<3x2xf32>
  return %x : tensor<3x2xf32>
}

// A `?` in a reshape's result is computed from the element count.
func.func @rows(%x: tensor<?x2xf32> {loom.name = "x"}) -> tensor<?xf32> {
  %flat = loom.reshape %x : tensor<?x2xf32> -> tensor<?xf32>
  %n = loom.neg %flat : tensor<?xf32>
  return %n : tensor<?xf32>
}
// DYN:      result0 : tensor<6xf32>
// DYN-NEXT: [-0., -0., -1., -1., -2., -2.]
// RANDDYN: loom-run: error: input 'x' (argument 0, tensor<?x2xf32>) has a dynamic shape, so --random-inputs cannot make it; give --input x=FILE.npy or bind its shape with loom-opt --loom-shape-inference="arg-shapes=..." first

// Random ids index a 5-row table: all lookups succeed; random labels are in [0, 5).
func.func @embed(%table: tensor<5x3xf32> {loom.name = "wte", loom.param},
                 %ids: tensor<4x8xi64> {loom.name = "ids"},
                 %labels: tensor<4x8xi32> {loom.name = "labels"}) -> (tensor<f32> {loom.name = "loss"}, tensor<4x8xi32> {loom.name = "labels"}) {
  %e = loom.gather %table[%ids], axis = 0 : (tensor<5x3xf32>, tensor<4x8xi64>) -> tensor<4x8x3xf32>
  %logits = loom.dot_general %e, %table, contracting_dims = [2] x [1]
      : (tensor<4x8x3xf32>, tensor<5x3xf32>) -> tensor<4x8x5xf32>
  %loss = loom.cross_entropy %logits, %labels : (tensor<4x8x5xf32>, tensor<4x8xi32>) -> tensor<f32>
  return %loss, %labels : tensor<f32>, tensor<4x8xi32>
}
// EMBED:      loss : tensor<f32>
// EMBED-NEXT: {{[0-9]+\.[0-9]+}}
// EMBED:      labels : tensor<4x8xi32>
// EMBED-NOT:  {{[5-9]|-}}

// Large results print NumPy's summary: 3 entries at each end of long dimensions.
func.func @big() -> tensor<40x30xi64> {
  %x = loom.iota dim = 1 : tensor<40x30xi64>
  return %x : tensor<40x30xi64>
}
// BIG:      result0 : tensor<40x30xi64>
// BIG-NEXT: {{\[\[}}0, 1, 2, ..., 27, 28, 29],
// BIG-NEXT:  [0, 1, 2, ..., 27, 28, 29],
// BIG-NEXT:  [0, 1, 2, ..., 27, 28, 29],
// BIG-NEXT:  ...,
// BIG-NEXT:  [0, 1, 2, ..., 27, 28, 29],
// BIG-NEXT:  [0, 1, 2, ..., 27, 28, 29],
// BIG-NEXT:  [0, 1, 2, ..., 27, 28, 29]]

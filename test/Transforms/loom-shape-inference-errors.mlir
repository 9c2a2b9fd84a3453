// RUN: loom-opt %s -split-input-file -loom-shape-inference="arg-shapes=x=3x4" -verify-diagnostics
// RUN: not loom-opt %s -split-input-file -loom-shape-inference="arg-shapes=nosuch=2" 2>&1 | FileCheck %s --check-prefix=UNUSED
// RUN: not loom-opt %s -split-input-file -loom-shape-inference="arg-shapes=x:2" 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not loom-opt %s -split-input-file -loom-shape-inference="arg-shapes=x=8x4 function=nope" 2>&1 | FileCheck %s --check-prefix=NOFUNC

// UNUSED: arg-shapes names 'nosuch', but no function argument has that loom.name or index
// SYNTAX: invalid arg-shapes entry 'x:2': expected NAME=DxDx...
// NOFUNC: function 'nope' (option function=) is not in the module

// A binding must refine the declared type, not contradict it.
// expected-error @+1 {{arg-shapes binds argument 'x' of @bad_binding to [3, 4], which does not refine its declared type 'tensor<?x5xf32>'}}
func.func @bad_binding(%x: tensor<?x5xf32> {loom.name = "x"}) -> tensor<?x5xf32> {
  return %x : tensor<?x5xf32>
}

// -----

// Binding makes two operands of an add disagree.
func.func @now_inconsistent(%x: tensor<?x4xf32> {loom.name = "x"}, %y: tensor<5x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{operand shapes 'tensor<3x4xf32>' and 'tensor<5x4xf32>' differ}}
  %0 = "loom.add"(%x, %y) : (tensor<?x4xf32>, tensor<5x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

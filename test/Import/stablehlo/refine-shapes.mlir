// RUN: loom-opt --refine-stablehlo-shapes=batch=4 --split-input-file --verify-diagnostics %s | FileCheck %s

// A shape-polymorphic export (jax.export with a symbolic batch) at batch
// 4: the arguments' dynamic dimension 0 is bound, the computed shapes are
// evaluated, the dynamic shape ops become static ones, the assertions are
// checked and dropped, and every other result shape follows its operands.
// Values: test_frontend.py (JAX's loss at two batch sizes).
// CHECK-LABEL: func.func public @main
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK-NOT: get_dimension_size
// CHECK-NOT: shape_assertion
// CHECK: %[[D:.*]] = stablehlo.dot_general %[[X]], %[[W]], contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK: %[[B:.*]] = stablehlo.broadcast_in_dim %{{.*}}, dims = [] : (tensor<f32>) -> tensor<4x16xf32>
// CHECK: %[[S:.*]] = stablehlo.add %[[D]], %[[B]] : tensor<4x16xf32>
// CHECK: %[[R:.*]] = stablehlo.reshape %[[S]] : (tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK: return %[[R]] : tensor<4x16xf32>
func.func public @main(%x: tensor<?x8xf32>, %w: tensor<8x16xf32>) -> tensor<?x16xf32> {
  %one = stablehlo.constant dense<1> : tensor<i32>
  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x8xf32>) -> tensor<i32>
  %ok = stablehlo.compare  GE, %n, %one,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  stablehlo.custom_call @shape_assertion(%ok, %n) {api_version = 2 : i32, error_message = "Expected value >= 1 for dimension variable 'b'", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> ()
  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<?x8xf32>, tensor<8x16xf32>) -> tensor<?x16xf32>
  %c16 = stablehlo.constant dense<16> : tensor<1xi32>
  %nb = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
  %shape = stablehlo.concatenate %nb, %c16, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %half = stablehlo.constant dense<5.000000e-01> : tensor<f32>
  %b = stablehlo.dynamic_broadcast_in_dim %half, %shape, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x16xf32>
  %s = stablehlo.add %d, %b : tensor<?x16xf32>
  %r = stablehlo.dynamic_reshape %s, %shape : (tensor<?x16xf32>, tensor<2xi32>) -> tensor<?x16xf32>
  return %r : tensor<?x16xf32>
}

// -----

// An assertion the bound batch breaks: the export's own message.
func.func public @even(%x: tensor<?xf32>) -> tensor<?xf32> {
  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?xf32>) -> tensor<i32>
  %three = stablehlo.constant dense<3> : tensor<i32>
  %ok = stablehlo.compare  EQ, %n, %three,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  // expected-error@+1 {{refine-stablehlo-shapes: at batch 4, the export's shape assertion fails: Expected b == 3}}
  stablehlo.custom_call @shape_assertion(%ok, %n) {api_version = 2 : i32, error_message = "Expected b == 3", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> ()
  return %x : tensor<?xf32>
}

// -----

// expected-error@+1 {{refine-stablehlo-shapes: dimension 1 of argument 0 ('tensor<4x?xf32>') of 'sequence' is dynamic; only the batch (dimension 0, --micro-batch) and dimensions JAX names (--dim NAME=N) are bound: export the others static}}
func.func public @sequence(%x: tensor<4x?xf32>) -> tensor<4x?xf32> {
  return %x : tensor<4x?xf32>
}

// RUN: loom-opt --name-stablehlo-dimensions %s | FileCheck %s
// RUN: loom-opt --name-stablehlo-dimensions --inline --symbol-dce --refine-stablehlo-shapes="batch=2 dims=s=5" %s | FileCheck %s --check-prefix=BOUND
// RUN: not loom-opt --name-stablehlo-dimensions --inline --symbol-dce --refine-stablehlo-shapes="batch=2" %s 2>&1 | FileCheck %s --check-prefix=UNBOUND

// JAX's polymorphic export reads each dimension variable with
// get_dimension_size in @main and passes it to the private function that
// names it (jax.global_constant); the names land on @main's arguments,
// one per dimension, before inlining drops that function.
// CHECK: func.func public @main(%{{.*}}: tensor<10x8xf32>, %{{.*}}: tensor<?x?xi32> {loom.dim_names = ["b", "s"]})

// Bound, every shape is static and the names are gone.
// BOUND: func.func public @main(%{{.*}}: tensor<10x8xf32>, %{{.*}}: tensor<2x5xi32>) -> tensor<2x5x8xf32>
// BOUND-NOT: dim_names

// UNBOUND: error: refine-stablehlo-shapes: dimension 1 of argument 1 ('tensor<?x?xi32>') of 'main' is dynamic (JAX's dimension variable 's'): bind it with --dim s=N
module @jit_f {
  func.func public @main(%arg0: tensor<10x8xf32>, %arg1: tensor<?x?xi32>) -> tensor<?x?x8xf32> {
    %0 = stablehlo.get_dimension_size %arg1, dim = 0 : (tensor<?x?xi32>) -> tensor<i32>
    %1 = stablehlo.get_dimension_size %arg1, dim = 1 : (tensor<?x?xi32>) -> tensor<i32>
    %2 = call @_wrapped_jax_export_main(%0, %1, %arg0, %arg1) : (tensor<i32>, tensor<i32>, tensor<10x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
    return %2 : tensor<?x?x8xf32>
  }
  func.func private @_wrapped_jax_export_main(%b: tensor<i32> {jax.global_constant = "b"}, %s: tensor<i32> {jax.global_constant = "s"}, %table: tensor<10x8xf32>, %ids: tensor<?x?xi32>) -> tensor<?x?x8xf32> {
    %0 = "stablehlo.gather"(%table, %ids) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 8>}> : (tensor<10x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
    return %0 : tensor<?x?x8xf32>
  }
}

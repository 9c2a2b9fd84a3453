// RUN: loom-opt %s | FileCheck %s
// RUN: loom-opt %s | loom-opt | FileCheck %s
// RUN: loom-opt --mlir-print-op-generic %s | loom-opt | FileCheck %s

// The import dialects print the pretty forms they parse, and the generic
// form round-trips.

// CHECK-LABEL: func.func @forms
func.func @forms(%x: tensor<4x8xf32>, %i: tensor<4xi64>, %l: tensor<2x3x4xf32>, %r: tensor<2x4x5xf32>) {
  // CHECK: stablehlo.reduce(%{{.*}} init: %{{.*}}) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %c = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  // CHECK: %{{.*}}:2 = stablehlo.reduce(%{{.*}} init: %{{.*}}), (%{{.*}} init: %{{.*}}) across dimensions = [0] : (tensor<4x8xf32>, tensor<4xi64>, tensor<f32>, tensor<i64>) -> (tensor<8xf32>, tensor<8xi64>) reducer(%[[A:.*]]: tensor<f32>, %[[B:.*]]: tensor<f32>) (%[[C:.*]]: tensor<i64>, %[[D:.*]]: tensor<i64>) {
  // CHECK: stablehlo.return
  %ci = stablehlo.constant dense<0> : tensor<i64>
  %b = stablehlo.broadcast_in_dim %i, dims = [0] : (tensor<4xi64>) -> tensor<4x8xi64>
  %1:2 = stablehlo.reduce(%x init: %c), (%i init: %ci) across dimensions = [0] : (tensor<4x8xf32>, tensor<4xi64>, tensor<f32>, tensor<i64>) -> (tensor<8xf32>, tensor<8xi64>)
   reducer(%a0: tensor<f32>, %b0: tensor<f32>) (%a1: tensor<i64>, %b1: tensor<i64>)  {
    %m = stablehlo.maximum %a0, %b0 : tensor<f32>
    %n = stablehlo.minimum %a1, %b1 : tensor<i64>
    stablehlo.return %m, %n : tensor<f32>, tensor<i64>
  }
  // CHECK: stablehlo.slice %{{.*}} [0:4:2, 1:8] : (tensor<4x8xf32>) -> tensor<2x7xf32>
  %2 = stablehlo.slice %x [0:4:2, 1:8] : (tensor<4x8xf32>) -> tensor<2x7xf32>
  // CHECK: stablehlo.compare  GT, %{{.*}}, %{{.*}},  FLOAT : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  %3 = stablehlo.compare GT, %x, %x, FLOAT : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  // CHECK: stablehlo.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xi1>, tensor<4x8xf32>
  %4 = stablehlo.select %3, %x, %x : tensor<4x8xi1>, tensor<4x8xf32>
  // CHECK: stablehlo.dot_general %{{.*}}, %{{.*}}, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, HIGHEST], algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %5 = stablehlo.dot_general %l, %r, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, HIGHEST],
    algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32, lhs_component_count = 1,
                 rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false>
    : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  // CHECK: "stablehlo.gather"(%{{.*}}, %{{.*}}) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 8>}> : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
  %6 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 8>}> : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
  // CHECK: "stablehlo.scatter"(%{{.*}}, %{{.*}}, %{{.*}}) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  // CHECK: stablehlo.add
  // CHECK: }) : (tensor<4x8xf32>, tensor<4xi64>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = "stablehlo.scatter"(%x, %i, %x) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%sa: tensor<f32>, %sb: tensor<f32>):
    %st = stablehlo.add %sa, %sb : tensor<f32>
    stablehlo.return %st : tensor<f32>
  }) : (tensor<4x8xf32>, tensor<4xi64>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: stablehlo.custom_call @Sharding(%{{.*}}) {mhlo.sharding = "{replicated}"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %7 = stablehlo.custom_call @Sharding(%x) {mhlo.sharding = "{replicated}"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: stablehlo.iota dim = 1 : tensor<4x8xi32>
  %8 = stablehlo.iota dim = 1 : tensor<4x8xi32>
  // CHECK: stablehlo.concatenate %{{.*}}, %{{.*}}, dim = 0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %9 = stablehlo.concatenate %x, %x, dim = 0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  // CHECK: stablehlo.convert %{{.*}} : (tensor<4x8xf32>) -> tensor<4x8xbf16>
  %10 = stablehlo.convert %x : (tensor<4x8xf32>) -> tensor<4x8xbf16>
  // CHECK: chlo.erf %{{.*}} : tensor<4x8xf32> -> tensor<4x8xf32>
  %11 = chlo.erf %x : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: stablehlo.sine %{{.*}} : tensor<4x8xf32>
  %12 = stablehlo.sine %x : tensor<4x8xf32>
  // CHECK: stablehlo.pad %{{.*}}, %{{.*}}, low = [0, 0], high = [1, 0], interior = [0, 0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<5x8xf32>
  %13 = stablehlo.pad %x, %c, low = [0, 0], high = [1, 0], interior = [0, 0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<5x8xf32>
  // CHECK: stablehlo.reduce_precision %{{.*}}, format = e8m7 : tensor<4x8xf32>
  %17 = stablehlo.reduce_precision %x, format = e8m7 : tensor<4x8xf32>
  // Ops Loom does not define parse in the simple pretty forms (and print in
  // the generic form).
  // CHECK: "stablehlo.cbrt"(%{{.*}}) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %16 = stablehlo.cbrt %x : tensor<4x8xf32>
  // CHECK: "stablehlo.rng_bit_generator"(%{{.*}}) {algorithm = "DEFAULT"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %14 = stablehlo.rng_bit_generator %x, algorithm = DEFAULT : tensor<4x8xf32>
  // CHECK: "chlo.lgamma"(%{{.*}}) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %15 = chlo.lgamma %x : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: chlo.erf_inv %{{.*}} : tensor<4x8xf32> -> tensor<4x8xf32>
  %18 = chlo.erf_inv %x : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// Modules of the StableHLO test data (../shared/conformance, see its
// README), imported as a whole: test/python/test_stablehlo_conformance.py
// runs all of them; these pin the output of a few.

// REQUIRES: conformance
// RUN: loom-opt --inline --symbol-dce --convert-stablehlo-to-loom %conformance/stablehlo/erf_float32_20_20_chlo.mlir | FileCheck %s --check-prefix=ERF
// ERF: module @jit_main attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32}
// ERF: func.func public @main() -> (tensor<20x20xf32> {jax.result_info = "", mhlo.layout_mode = "default"})
// ERF: %[[IN:.*]] = loom.constant dense<"0x
// ERF: %[[EXPECTED:.*]] = loom.constant dense<"0x
// ERF: %[[ERF:.*]] = loom.erf %[[IN]] : tensor<20x20xf32>
// ERF: check.expect_almost_eq %[[ERF]], %[[EXPECTED]] : tensor<20x20xf32>, tensor<20x20xf32>
// ERF: return %[[ERF]]
// ERF-NOT: func.func

// RUN: loom-opt --inline --symbol-dce --convert-stablehlo-to-loom %conformance/stablehlo/reduce_max_float32_2_3.mlir | FileCheck %s --check-prefix=MAX
// MAX: %[[X:.*]] = loom.constant dense<{{\[\[}}1.6860441
// MAX: loom.reduce_max %[[X]], dims = [0] : tensor<2x3xf32> -> tensor<3xf32>
// MAX-NOT: loom.max

// RUN: loom-opt --split-input-file --inline --symbol-dce --convert-stablehlo-to-loom %conformance/stablehlo-interpret/reduce.mlir | FileCheck %s --check-prefix=INTERP
// INTERP: func.func @reduce()
// INTERP: loom.reduce_sum %{{.*}}, dims = [1] : tensor<1x6xi64> -> tensor<1xi64>
// INTERP: check.expect_eq_const %{{.*}}, dense<15> : tensor<1xi64>

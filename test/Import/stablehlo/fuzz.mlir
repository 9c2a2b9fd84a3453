// A short libFuzzer run of the StableHLO importer (`make fuzz` runs longer).
// Seeds: small modules of the StableHLO test data (several op families) and
// JAX's lowering of a transformer's loss and SGD step (gathers, scatters,
// dot_general, reductions), the while loops of loops.mlir, the polymorphic
// shapes of refine-shapes.mlir and a select_and_scatter; every mutant must end in
// diagnostics or a module, never a crash, hang or sanitizer report.
// REQUIRES: fuzzer, conformance, jax
// RUN: rm -rf %t && mkdir -p %t/corpus
// RUN: cp %conformance/stablehlo/iota_.mlir %conformance/stablehlo/broadcast_in_dim_float32_2.mlir %conformance/stablehlo/reduce_sum_float32_2_3.mlir %conformance/stablehlo/gather_float32_1_2_int64_1_2.mlir %conformance/stablehlo/concatenate_float32_2_3_float32_2_3.mlir %conformance/stablehlo/select_n_bool_2_3_bool_2_3_bool_2_3.mlir %conformance/stablehlo/transpose_int32_2_3.mlir %conformance/stablehlo/erf_float32_20_20_chlo.mlir %conformance/stablehlo/select_and_scatter_add_float32_1_3_5_float32_2_4_6.mlir %S/loops.mlir %S/refine-shapes.mlir %t/corpus/
// RUN: %loompy %S/Inputs/make_jax.py loss > %t/corpus/loss.mlir
// RUN: %loompy %S/Inputs/make_jax.py train_step > %t/corpus/train_step.mlir
// RUN: loom-fuzz-stablehlo -runs=3000 -seed=1 -rss_limit_mb=2048 -timeout=60 %t/corpus 2>&1 | FileCheck %s
// CHECK: Done 3000 runs

// What JAX lowers real functions to, imported (JAX writes the inputs at
// test time).
// REQUIRES: jax

// jax.nn.gelu(approximate=False) uses chlo.erfc.
// RUN: %loompy %S/Inputs/make_jax.py gelu > %t.gelu.mlir
// RUN: loom-opt --inline --symbol-dce --convert-stablehlo-to-loom %t.gelu.mlir | FileCheck %s --check-prefix=GELU
// GELU: func.func public @main(%[[X:.*]]: tensor<4x8xf32>)
// GELU: %[[ERF:.*]] = loom.erf
// GELU: loom.sub %{{.*}}, %[[ERF]]
// GELU-NOT: stablehlo.
// GELU-NOT: chlo.

// RUN: %loompy %S/Inputs/make_jax.py gelu_tanh > %t.gelu_tanh.mlir
// RUN: loom-opt --inline --symbol-dce --convert-stablehlo-to-loom %t.gelu_tanh.mlir | FileCheck %s --check-prefix=TANH
// TANH: loom.tanh
// TANH-NOT: stablehlo.

// The forward pass and loss of a small transformer import entirely, and the
// loom passes take the result.
// RUN: %loompy %S/Inputs/make_jax.py loss > %t.loss.mlir
// RUN: loom-opt --inline --symbol-dce --convert-stablehlo-to-loom --loom-shape-inference --canonicalize %t.loss.mlir | FileCheck %s --check-prefix=LOSS
// LOSS: func.func public @main
// LOSS-DAG: loom.gather
// LOSS-DAG: loom.dot_general
// LOSS-DAG: loom.rsqrt
// LOSS-DAG: loom.erf
// LOSS-DAG: loom.reduce_max
// LOSS-DAG: loom.exp
// LOSS-NOT: stablehlo.
// LOSS-NOT: chlo.

// Its gradient (with an SGD update) imports too: the embedding gradients
// are scatters, which become loom.scatter_add.
// RUN: %loompy %S/Inputs/make_jax.py train_step > %t.step.mlir
// RUN: loom-opt --inline --symbol-dce --convert-stablehlo-to-loom --loom-shape-inference --canonicalize %t.step.mlir | FileCheck %s --check-prefix=STEP
// STEP: func.func public @main
// STEP: loom.scatter_add
// STEP-NOT: stablehlo.
// STEP-NOT: chlo.

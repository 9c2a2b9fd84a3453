// loomc end to end on a tiny model: the pipeline, -v, the IR printing flags
// and the driver's errors. Training numerics are checked against PyTorch in
// test/python/test_training.py.

// RUN: rm -rf %t && loomc %s -o %t --optimizer sgd --lr 0.5 --emit-only -v 2> %t.log
// RUN: FileCheck %s --check-prefix=VERBOSE < %t.log
// VERBOSE: loomc: import
// VERBOSE: loomc: pipeline: builtin.module(inline{{.*}},symbol-dce,loom-shape-inference{ function=},func.func(loom-raise-composites),loom-autodiff{function=main loss= },loom-optimizer{{.*}} function=main_grad lr=5.000000e-01 {{.*}} optimizer=sgd schedule=constant {{.*}}},func.func(loom-fold-dot-transpose,loom-fuse-elementwise),convert-loom-to-loomrt{function={main_step}},loom-fuse-gemm-bias,loom-fuse-gemm-accumulate,loom-fold-layout-copies,loom-fuse-norm-grad,loom-fuse-loss-softmax,loom-merge-kernels,loom-in-place-updates,loom-memory-plan{alignment=64 device-memory=0 report={{.*}}memory.json},loom-verify-mesh{dp=1 pp=1 tp=1})
// VERBOSE: loomc: passes
// VERBOSE: loomc: emit-cpp
// VERBOSE: Execution time report
// VERBOSE: LoomAutodiff
// VERBOSE: LoomMemoryPlan

// --emit-only writes the sources and reports, not the program.
// RUN: ls %t/step.cpp %t/memory.json %t/plan.json %t/build.sh
// RUN: not ls %t/train
// RUN: FileCheck %s --check-prefix=PLAN < %t/plan.json
// PLAN: "functions": [
// PLAN-NEXT: "main_step"
// PLAN: "mesh": {
// PLAN-NEXT: "dp": 1,
// PLAN: "target": "cpu"

// The step: loss, then the new weight and step counter.
// RUN: FileCheck %s --check-prefix=STEP < %t/step.cpp
// STEP: {"w", Role::Param, DType::F32, 1, {4}, -1, false},
// STEP: {"step", Role::State, DType::F32, 0, {}, -1, false},
// STEP: {"x", Role::Data, DType::F32, 2, {3, 4}, -1, false},
// STEP: const TensorSpec kResults[] = {
// STEP-NEXT: {"loss", Role::Loss, DType::F32, 0, {}, -1, false},
// STEP-NEXT: {"w", Role::Param, DType::F32, 1, {4}, 0, true},
// STEP-NEXT: {"step", Role::State, DType::F32, 0, {}, 1, true},

// --mlir-print-ir-after-all works as in mlir-opt.
// RUN: loomc %s -o %t.ir --emit-only --mlir-print-ir-after-all 2>&1 | FileCheck %s --check-prefix=IR
// IR: IR Dump After LoomAutodiff
// IR: func.func @main_grad
// IR: IR Dump After LoomOptimizer
// IR: func.func @main_step
// IR: IR Dump After ConvertLoomToLoomRT
// IR: IR Dump After LoomMemoryPlan

// --help lists loomc's options, not LLVM's.
// RUN: loomc --help | FileCheck %s --check-prefix=HELP
// HELP: loomc options:
// HELP: --emit-only
// HELP: --mesh=<string>
// HELP-NOT: amdgpu

// Errors name the problem and the fix, and exit non-zero.
// RUN: not loomc %s -o %t.err --mesh pp=2 --schedule cosine 2>&1 | FileCheck %s --check-prefix=SCHED
// SCHED: loomc: error: --schedule must be 1f1b or gpipe, got 'cosine' (the learning-rate schedule is --lr-schedule)
// RUN: not loomc %s -o %t.err --microbatches 2 --batch 5 2>&1 | FileCheck %s --check-prefix=DIVIDE
// DIVIDE: loomc: error: --microbatches 2 does not divide --batch 5: every micro-batch has the same number of rows
// The model's batch is 3: 2 micro-batches make a step of 6 rows.
// RUN: not loomc %s -o %t.err --microbatches 2 --batch 8 --emit-only 2>&1 | FileCheck %s --check-prefix=MODELBATCH
// MODELBATCH: loomc: error: --batch 8 in 2 micro-batch(es) needs a model of batch size 4, but the model's batch size is 3 (its batch dimension is static: export it with batch 4)
// --micro-batch: this model's batch (3) is fixed by its static shapes.
// RUN: loomc %s -o %t.mb3 --micro-batch 3 --emit-only
// RUN: FileCheck %s --check-prefix=MBPLAN < %t.mb3/plan.json
// MBPLAN: "micro_batch": 3
// RUN: not loomc %s -o %t.err --micro-batch 4 --emit-only 2>&1 | FileCheck %s --check-prefix=MBFIXED
// MBFIXED: loomc: error: --micro-batch 4: the model's batch is fixed at 3 by its argument 'x' (its shapes are static); compile it at --micro-batch 3, or import an ONNX export with a dynamic batch axis or a shape-polymorphic JAX export (loom-translate --import-stablehlo --micro-batch N)
// RUN: not loomc %s -o %t.err --micro-batch -2 --emit-only 2>&1 | FileCheck %s --check-prefix=MBNEG
// MBNEG: loomc: error: --micro-batch must be >= 0 (0: the model's batch), got -2
// RUN: loomc %s -o %t.mb --microbatches 2 --batch 6 --emit-only
// RUN: not loomc %s -o %t.err --microbatches 0 2>&1 | FileCheck %s --check-prefix=MICRO
// MICRO: loomc: error: --microbatches must be >= 1, got 0
// RUN: not loomc %s -o %t.err --mesh pp=9 2>&1 | FileCheck %s --check-prefix=PPBIG
// PPBIG: error: loom-pipeline-partition: option 'stages' is 9, more than the 3 ops of @main that can be separated
// RUN: echo '{"mesh": {"pp": 0}}' > %t.badplan.json
// RUN: not loomc %s -o %t.err --plan %t.badplan.json 2>&1 | FileCheck %s --check-prefix=BADPLAN
// BADPLAN: loomc: error: --plan '{{.*}}badplan.json': must be an integer >= 1 at plan.mesh.pp
// RUN: echo 'nope' > %t.notjson
// RUN: not loomc %s -o %t.err --plan %t.notjson 2>&1 | FileCheck %s --check-prefix=NOTJSON
// NOTJSON: loomc: error: --plan '{{.*}}notjson': not JSON
// dp and tp together run both passes; this model has no block for tp.
// RUN: not loomc %s -o %t.err --mesh dp=2,tp=2 2>&1 | FileCheck %s --check-prefix=MESH
// MESH: error: loom-verify-mesh: tp=2 was asked for, but neither loom-tensor-parallel nor loom-vocab-parallel found an attention or MLP block, an embedding or an LM head to partition (see the warning above); compile without tp
// RUN: not loomc %s -o %t.err --mesh tp=2 2>&1 | FileCheck %s --check-prefix=TPNONE
// TPNONE: warning: loom-tensor-parallel: @main has no attention or MLP block, embedding or LM head to partition
// TPNONE: error: loom-verify-mesh: tp=2 was asked for, but neither loom-tensor-parallel nor loom-vocab-parallel found an attention or MLP block, an embedding or an LM head to partition (see the warning above); compile without tp
// TPNONE: loomc: error: compilation failed (see the errors above)
// RUN: not loomc %s -o %t.err --optimizer lamb 2>&1 | FileCheck %s --check-prefix=OPT
// OPT: loomc: error: --optimizer must be sgd, adam or adamw, got 'lamb'
// RUN: not loomc %s -o %t.err --mesh dp=x 2>&1 | FileCheck %s --check-prefix=BADMESH
// BADMESH: loomc: error: --mesh: 'dp=x' is not AXIS=N with N >= 1
// RUN: not loomc %s.missing -o %t.err 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not loomc -o %t.err 2>&1 | FileCheck %s --check-prefix=NOMODEL
// NOMODEL: loomc: error: no model to compile: give model.onnx or model.mlir, or --plan PLAN.json (which names one)
// A plan names its model: --plan alone compiles it again, the same step.
// RUN: rm -rf %t.replan && loomc --plan %t/plan.json -o %t.replan --emit-only
// RUN: diff %t/step.cpp %t.replan/step.cpp
// MISSING: loomc: error: cannot open input file '{{.*}}loomc.mlir.missing': No such file or directory
// RUN: not loomc %s -o %t.err --loss nope 2>&1 | FileCheck %s --check-prefix=LOSS
// LOSS: error: @main: no result named 'nope' (option loss=); its results are: 'loss'
// LOSS: loomc: error: compilation failed (see the errors above)

func.func @main(%w: tensor<4xf32> {loom.name = "w", loom.param},
                %x: tensor<3x4xf32> {loom.name = "x"}) -> (tensor<f32> {loom.name = "loss"}) {
  %b = loom.broadcast %w, dims = [1] : tensor<4xf32> -> tensor<3x4xf32>
  %p = loom.mul %x, %b : tensor<3x4xf32>
  %s = loom.reduce_sum %p, dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %s : tensor<f32>
}

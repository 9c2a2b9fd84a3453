// --loom-training-pipeline builds the pipeline loomc runs, from the same
// TrainingOptions (lib/Pipelines): on a dp=2,tp=2,pp=2 mesh with 4
// micro-batches and AdamW, loom-opt's pipeline text is loomc -v's, and the
// lowered program declares exactly one grid, the 2x2x2 device mesh.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %loompy -m loom.models.gpt --layers 2 --hidden 16 --heads 4 --seq 4 \
// RUN:   --vocab 12 --batch 2 -o %t/gpt.mlir
// RUN: %loompy %S/../Transforms/Inputs/tensor_parallel.py make %t %t/gpt.mlir
//
// What loomc runs.
// RUN: loomc %t/gpt.mlir -o %t/out --mesh dp=2,tp=2,pp=2 --microbatches 4 \
// RUN:   --optimizer adamw --lr 0.001 --weights %t/weights.safetensors \
// RUN:   --device-memory 1GiB --emit-only -v 2> %t/loomc.log
// RUN: sed -n 's/^loomc: pipeline: //p' %t/loomc.log > %t/loomc.pipeline
// RUN: FileCheck %s --check-prefix=PIPE < %t/loomc.pipeline
//
// What loom-opt runs with the same options (and the same report paths).
// RUN: loom-opt %t/gpt.mlir --loom-training-pipeline="dp=2 tp=2 pp=2 \
// RUN:   microbatches=4 optimizer=adamw lr=0.001 device-memory=1073741824 \
// RUN:   partition-report=%t/out/partition.json memory-report=%t/out/memory.json \
// RUN:   sharding-report=%t/out/sharding.json" \
// RUN:   --dump-pass-pipeline -o %t/lowered.mlir 2> %t/opt.log
// (--dump-pass-pipeline prints one pass a line: join them.)
// RUN: %loompy -c "import re, sys; t = sys.stdin.read(); \
// RUN:   print(re.sub(r'\n\s*', '', t[t.index('builtin.module('):]))" \
// RUN:   < %t/opt.log > %t/opt.pipeline
// RUN: diff %t/loomc.pipeline %t/opt.pipeline
//
// RUN: FileCheck %s --check-prefix=GRID < %t/lowered.mlir
// RUN: grep -c 'shard.grid' %t/lowered.mlir | FileCheck %s --check-prefix=ONE
//
// The pipeline, pass by pass, with the typed options spelled out.
// PIPE: builtin.module(inline{
// PIPE-SAME: symbol-dce,loom-shape-inference{ function=},func.func(loom-raise-composites),
// PIPE-SAME: loom-tensor-parallel{function=main tp=2},loom-vocab-parallel{function=main tp=2},
// PIPE-SAME: loom-report-sharding{function=main min-fraction=1.000000e-02 report={{[^ ]*}}sharding.json require-sharded=false},
// PIPE-SAME: loom-pipeline-partition{function=main memory-budget=0 report={{[^ ]*}}partition.json stages=2},
// PIPE-SAME: loom-pipeline-split{function=main},
// PIPE-SAME: loom-pipeline-schedule{function=main loss= microbatches=4 schedule=1f1b},
// PIPE-SAME: loom-data-parallel{bucket-bytes=26214400 dp=2 function=main_stage0_grad sparse-embedding-grad=off},
// PIPE-SAME: loom-optimizer{beta1=9.000000e-01 beta2=9.990000e-01 clip-grad-norm=0.000000e+00 dampening=0.000000e+00 eps=1.000000e-08 function=main_stage0_grad lr=1.000000e-03 min-lr=0.000000e+00 momentum=0.000000e+00 nesterov=false optimizer=adamw schedule=constant total-steps=0 warmup-steps=0 weight-decay=-1.000000e+00},
// PIPE-SAME: loom-data-parallel{bucket-bytes=26214400 dp=2 function=main_stage1_grad sparse-embedding-grad=off},
// PIPE-SAME: loom-optimizer{beta1=9.000000e-01 beta2=9.990000e-01 clip-grad-norm=0.000000e+00 dampening=0.000000e+00 eps=1.000000e-08 function=main_stage1_grad lr=1.000000e-03 min-lr=0.000000e+00 momentum=0.000000e+00 nesterov=false optimizer=adamw schedule=constant total-steps=0 warmup-steps=0 weight-decay=-1.000000e+00},
// PIPE-SAME: func.func(loom-fold-dot-transpose,loom-fuse-elementwise),
// PIPE-SAME: convert-loom-to-loomrt{function={main_stage0_step,main_stage1_step}},
// PIPE-SAME: loom-fuse-gemm-bias,
// PIPE-SAME: loom-fuse-gemm-accumulate,
// PIPE-SAME: loom-merge-kernels,
// PIPE-SAME: loom-comm-schedule,
// PIPE-SAME: loom-in-place-updates,
// PIPE-SAME: loom-memory-plan{alignment=64 device-memory=1073741824 report={{[^ ]*}}memory.json},
// PIPE-SAME: loom-verify-mesh{dp=2 pp=2 tp=2},
// PIPE-SAME: loom-verify-messages)
//
// ONE: {{^1$}}
// GRID: shard.grid @mesh(shape = 2x2x2)
// GRID-DAG: loomrt.all_reduce_start {{.*}} on @mesh grid_axes = [0]
// GRID-DAG: loomrt.all_reduce_start {{.*}} on @mesh grid_axes = [2]
// GRID-DAG: loomrt.send_start {{.*}} on @mesh grid_axes = [1]
// GRID-DAG: loomrt.recv_start {{.*}} on @mesh grid_axes = [1]

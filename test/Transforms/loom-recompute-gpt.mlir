// loom-recompute on a 2-layer GPT, tensor-parallel over 2 ranks (python -m
// loom.models.gpt): every policy keeps the gradients equal to the
// single-device ones (loom-run --ranks 2 against loom-run of the unsplit
// model); comm-free and selective replay no collective, full replays the 2
// all-reduces of each of the 2 layers.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %loompy -m loom.models.gpt --layers 2 --hidden 16 --heads 4 --seq 4 \
// RUN:   --vocab 12 --batch 2 -o %t/gpt.mlir
// RUN: %loompy %S/Inputs/tensor_parallel.py make %t %t/gpt.mlir
// RUN: loom-opt %t/gpt.mlir --loom-autodiff -o %t/ref.mlir
// RUN: loom-run %t/ref.mlir --entry main_grad --weights %t/weights.safetensors \
// RUN:   --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/ref
// RUN: loom-opt %t/gpt.mlir --loom-tensor-parallel=tp=2 --loom-vocab-parallel=tp=2 \
// RUN:   --loom-mark-layers -o %t/fwd.mlir
// RUN: %loompy %S/Inputs/tensor_parallel.py slice %t %t/fwd.mlir
//
// The layers: both blocks, each an attention and an MLP block; the embedding,
// final norm, head and loss are outside (the causal mask, built before the
// first block, joins layer 0).
// RUN: FileCheck %s --check-prefix=LAYERS < %t/fwd.mlir
// LAYERS: loom.gather {{[^{]*$}}
// LAYERS: loom.layer_norm {{.*}}{loom.layer = 0 : i64}
// LAYERS: loom.softmax {{.*}}{loom.layer = 0 : i64}
// LAYERS: loom.layer_norm {{.*}}{loom.layer = 0 : i64}
// LAYERS: loom.gelu {{.*}}{loom.layer = 0 : i64}
// LAYERS: loom.layer_norm {{.*}}{loom.layer = 1 : i64}
// LAYERS: loom.softmax {{.*}}{loom.layer = 1 : i64}
// LAYERS: loom.layer_norm {{.*}}{loom.layer = 1 : i64}
// LAYERS: loom.gelu {{.*}}{loom.layer = 1 : i64}
// LAYERS: shard.all_reduce {{.*}}{loom.layer = 1 : i64}
// LAYERS-NEXT: loom.broadcast
// LAYERS-NEXT: loom.add {{.*}}{loom.layer = 1 : i64}
// LAYERS-NEXT: loom.add {{.*}}{loom.layer = 1 : i64}
// LAYERS-NEXT: loom.layer_norm {{[^{]*$}}
// LAYERS-NOT: loom.layer =
// LAYERS: return
//
// RUN: loom-opt %t/fwd.mlir --loom-autodiff -o %t/none.mlir
// RUN: loom-opt %t/none.mlir --loom-recompute=policy=comm-free -o %t/comm-free.mlir
// RUN: loom-opt %t/none.mlir --loom-recompute=policy=full -o %t/full.mlir
// RUN: loom-opt %t/none.mlir --loom-recompute=policy=selective -o %t/selective.mlir
// RUN: grep -c shard.all_reduce %t/none.mlir | FileCheck %s --check-prefix=N21
// RUN: grep -c shard.all_reduce %t/comm-free.mlir | FileCheck %s --check-prefix=N21
// RUN: grep -c shard.all_reduce %t/selective.mlir | FileCheck %s --check-prefix=N21
// RUN: grep -c shard.all_reduce %t/full.mlir | FileCheck %s --check-prefix=N25
// N21: {{^21$}}
// N25: {{^25$}}
// RUN: FileCheck %s --check-prefix=COUNTS < %t/full.mlir
// COUNTS: loom.recompute = {collectives = 4 : i64,
//
// selective: the scores, their scale and causal mask and the softmax of each
// layer (4 ops, 2 layers), read back by the softmax's and the scores' VJPs.
// RUN: FileCheck %s --check-prefix=SEL < %t/selective.mlir
// SEL: loom.recompute = {collectives = 0 : i64, flops = {{[0-9]+}} : i64, ops = 8 : i64, policy = "selective"}
// SEL-COUNT-2: loom.softmax {{.*}}loom.phase = "recompute"
//
// RUN: loom-run %t/comm-free.mlir --entry main_grad --ranks 2 --weights %t/weights.safetensors \
// RUN:   @%t/2.rsp --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/cf
// RUN: %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/fwd.mlir %t/cf/rank0 %t/cf/rank1 \
// RUN:   | FileCheck %s --check-prefix=EQ
// RUN: loom-run %t/full.mlir --entry main_grad --ranks 2 --weights %t/weights.safetensors \
// RUN:   @%t/2.rsp --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/full
// RUN: %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/fwd.mlir %t/full/rank0 %t/full/rank1 \
// RUN:   | FileCheck %s --check-prefix=EQ
// RUN: loom-run %t/selective.mlir --entry main_grad --ranks 2 --weights %t/weights.safetensors \
// RUN:   @%t/2.rsp --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/sel
// RUN: %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/fwd.mlir %t/sel/rank0 %t/sel/rank1 \
// RUN:   | FileCheck %s --check-prefix=EQ
// EQ: equivalent: yes
//
// Errors.
// RUN: not loom-opt %t/none.mlir --loom-recompute=policy=auto 2>&1 | FileCheck %s --check-prefix=AUTO
// AUTO: error: loom-recompute: policy=auto needs one policy per function in `policies` (loomc --recompute auto chooses them by --device-memory); got 0 for 0 function(s)
// RUN: not loom-opt %t/none.mlir --loom-recompute="policy=auto functions=main_grad policies=most" 2>&1 | FileCheck %s --check-prefix=AUTO-BAD
// AUTO-BAD: error: loom-recompute: unknown policy 'most' in `policies` (none, full, selective, comm-free, or auto with `free-bytes`)
// RUN: not loom-opt %t/none.mlir --loom-recompute="policy=auto functions=main_grad policies=auto" 2>&1 | FileCheck %s --check-prefix=AUTO-BYTES
// AUTO-BYTES: error: loom-recompute: policy auto for @main_grad recomputes single tensors and needs the bytes to free (free-bytes: one entry per function, > 0)
//
// Per tensor (a function's policy auto, with the bytes to free): single ops
// on kept values, the fewest flops per byte first, until the bytes are
// reached. Here the candidates are the two GELUs (1024 bytes each: the layer
// norms' results are read through tp_copy, kept); 600 bytes take one, more
// take both and stop there; no collective, the gradients stay equal.
// RUN: loom-opt %t/none.mlir --loom-recompute="policy=auto functions=main_grad policies=auto free-bytes=600" -o %t/t600.mlir
// RUN: FileCheck %s --check-prefix=T600 < %t/t600.mlir
// T600: loom.recompute = {bytes = 1024 : i64, collectives = 0 : i64, flops = {{[0-9]+}} : i64, ops = 1 : i64, policy = "auto"}
// T600-COUNT-1: loom.gelu {{.*}}loom.phase = "recompute"
// T600-NOT: loom.phase = "recompute"
// RUN: loom-opt %t/none.mlir --loom-recompute="policy=auto functions=main_grad policies=auto free-bytes=100000" -o %t/tall.mlir
// RUN: FileCheck %s --check-prefix=TALL < %t/tall.mlir
// TALL: loom.recompute = {bytes = 2048 : i64, collectives = 0 : i64, flops = {{[0-9]+}} : i64, ops = 2 : i64, policy = "auto"}
// RUN: loom-run %t/tall.mlir --entry main_grad --ranks 2 --weights %t/weights.safetensors \
// RUN:   @%t/2.rsp --input ids=%t/ids.npy --input labels=%t/labels.npy --output-dir %t/tall
// RUN: %loompy %S/Inputs/tensor_parallel.py compare %t/ref %t/fwd.mlir %t/tall/rank0 %t/tall/rank1 \
// RUN:   | FileCheck %s --check-prefix=EQ
//
// policy=auto with the policy given per function is that policy.
// RUN: loom-opt %t/none.mlir --loom-recompute="policy=auto functions=main_grad policies=full" -o %t/auto-full.mlir
// RUN: FileCheck %s --check-prefix=COUNTS < %t/auto-full.mlir
// RUN: not loom-opt %t/none.mlir --loom-recompute="policy=full functions=nope" 2>&1 | FileCheck %s --check-prefix=NOFN
// NOFN: error: loom-recompute: no function @nope with a body (functions=nope)
// RUN: not loom-opt %t/none.mlir --loom-recompute="policy=full functions=main" 2>&1 | FileCheck %s --check-prefix=NOTGRAD
// NOTGRAD: error: loom-recompute: @main is not a gradient function (no op has loom.phase = "backward"); run loom-autodiff or loom-pipeline-schedule first

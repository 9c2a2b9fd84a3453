// Row-sparse embedding gradients (loom-data-parallel sparse-embedding-grad,
// TriRace): a gradient built only from scatter_adds into zeros (the VJP of
// an embedding lookup) leaves the dense bucket and gets its own all-reduce
// marked loom.row_sparse; the lowering and both emitters carry it to the
// runtime's row exchange.
//
// RUN: loom-opt %s -split-input-file -loom-autodiff \
// RUN:   -loom-data-parallel="dp=2 sparse-embedding-grad=auto" | FileCheck %s --check-prefix=AUTO
// RUN: loom-opt %s -split-input-file -loom-autodiff \
// RUN:   -loom-data-parallel="dp=2 sparse-embedding-grad=on" 2>/dev/null | FileCheck %s --check-prefix=ON
// RUN: loom-opt %s -split-input-file -loom-autodiff \
// RUN:   -loom-data-parallel="dp=2 sparse-embedding-grad=on" 2>&1 >/dev/null | FileCheck %s --check-prefix=WARN
// RUN: loom-opt %s -split-input-file -loom-autodiff \
// RUN:   -loom-data-parallel="dp=2" | FileCheck %s --check-prefix=OFF
// auto weighs bytes by the ranks: the 8 ids of wte cost dp*8*(8+1) against
// 2*100*8 = 1600 for the table; on 32 ranks (2304) the dense all-reduce.
// RUN: loom-opt %s -split-input-file -loom-autodiff \
// RUN:   -loom-data-parallel="dp=32 sparse-embedding-grad=auto" | FileCheck %s --check-prefix=AUTO32
//
// Lowered and emitted (the first module, with on).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %loompy -c "import sys; print(open(sys.argv[1]).read().split('//' + ' -----')[0])" %s > %t/embed.mlir
// RUN: loom-opt %t/embed.mlir --loom-training-pipeline="dp=2 sparse-embedding-grad=on" -o %t/low.mlir
// RUN: FileCheck %s --check-prefix=LOW < %t/low.mlir
// RUN: loom-translate --emit-cpp %t/low.mlir | FileCheck %s --check-prefix=CPP
// RUN: loom-translate --emit-cuda %t/low.mlir | FileCheck %s --check-prefix=CUDA

// An untied token table (100 rows, 8 looked up), a position table (4 rows,
// all 4 looked up) and a dense LM head.
// AUTO-LABEL: func.func @main_grad
// The loss, then one dense bucket: the position table (its 4 indices touch
// all 4 rows: rows would cost more) with the head.
// AUTO:       shard.all_reduce {{.*}} : tensor<f32> -> tensor<f32>
// AUTO:       shard.all_reduce {{.*}} {loom.phase = "backward"} : tensor<832xf32> -> tensor<832xf32>
// The token table by rows, in its own shape, right after its gradient.
// AUTO:       %[[G:.*]] = loom.scatter_add {{.*}} -> tensor<100x8xf32>
// AUTO-NEXT:  shard.all_reduce %[[G]] on @mesh grid_axes = [0] {loom.phase = "backward", loom.row_sparse} : tensor<100x8xf32> -> tensor<100x8xf32>
// AUTO-NOT:   shard.all_reduce
// AUTO:       return

// on: both tables by rows; the head alone in the dense bucket (in its own
// shape), reduced as soon as its gradient exists.
// ON-LABEL:   func.func @main_grad
// ON:         shard.all_reduce {{.*}} : tensor<f32> -> tensor<f32>
// ON:         shard.all_reduce {{.*}} {loom.phase = "backward"} : tensor<8x100xf32> -> tensor<8x100xf32>
// ON:         shard.all_reduce {{.*}} {loom.phase = "backward", loom.row_sparse} : tensor<4x8xf32> -> tensor<4x8xf32>
// ON:         shard.all_reduce {{.*}} {loom.phase = "backward", loom.row_sparse} : tensor<100x8xf32> -> tensor<100x8xf32>

// OFF-LABEL:  func.func @main_grad
// OFF-NOT:    loom.row_sparse
// OFF:        shard.all_reduce {{.*}} : tensor<1632xf32> -> tensor<1632xf32>
// OFF-NOT:    loom.row_sparse

// AUTO32-LABEL: func.func @main_grad
// AUTO32-NOT:   loom.row_sparse
// AUTO32:       shard.all_reduce {{.*}} : tensor<1632xf32> -> tensor<1632xf32>

// LOW: loomrt.all_reduce_start {{.*}} {reduction = "sum", row_sparse} : memref<4x8xf32>
// LOW: loomrt.all_reduce_start {{.*}} {reduction = "sum", row_sparse} : memref<100x8xf32>
// CPP:  rowSparseAllReduceStart(ctx, {{.*}}, 4, 8, Group::Dp);
// CPP:  rowSparseAllReduceStart(ctx, {{.*}}, 100, 8, Group::Dp);
// CUDA: cuda::rowSparseAllReduceStart(ctx, {{.*}}, 100, 8, Group::Dp);

module {
  func.func @main(
      %ids: tensor<2x4xi64> {loom.name = "ids"},
      %labels: tensor<2x4xi64> {loom.name = "labels"},
      %wte: tensor<100x8xf32> {loom.param, loom.name = "wte.weight"},
      %wpe: tensor<4x8xf32> {loom.param, loom.name = "wpe.weight"},
      %head: tensor<8x100xf32> {loom.param, loom.name = "lm_head.weight"})
      -> (tensor<f32> {loom.name = "loss"}) {
    %tok = loom.gather %wte[%ids], axis = 0 : (tensor<100x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
    %positions = loom.iota dim = 0 : tensor<4xi64>
    %pos = loom.gather %wpe[%positions], axis = 0 : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
    %posb = loom.broadcast %pos, dims = [1, 2] : tensor<4x8xf32> -> tensor<2x4x8xf32>
    %x = loom.add %tok, %posb : tensor<2x4x8xf32>
    %h = loom.tanh %x : tensor<2x4x8xf32>
    %logits = loom.dot_general %h, %head, contracting_dims = [2] x [0] : (tensor<2x4x8xf32>, tensor<8x100xf32>) -> tensor<2x4x100xf32>
    %loss = loom.cross_entropy %logits, %labels reduction = sum : (tensor<2x4x100xf32>, tensor<2x4xi64>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// -----

// A table tied to the LM head: its gradient has a dense part (the head's)
// besides the lookup's scatter_add, so it is never exchanged by rows.
// AUTO-LABEL: func.func @main_grad
// AUTO-NOT:   loom.row_sparse
// AUTO:       return
// ON-LABEL:   func.func @main_grad
// ON-NOT:     loom.row_sparse
// ON:         return

module {
  func.func @main(
      %ids: tensor<2x4xi64> {loom.name = "ids"},
      %labels: tensor<2x4xi64> {loom.name = "labels"},
      %wte: tensor<100x8xf32> {loom.param, loom.name = "wte.weight"})
      -> (tensor<f32> {loom.name = "loss"}) {
    %tok = loom.gather %wte[%ids], axis = 0 : (tensor<100x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
    %h = loom.tanh %tok : tensor<2x4x8xf32>
    %logits = loom.dot_general %h, %wte, contracting_dims = [2] x [1] : (tensor<2x4x8xf32>, tensor<100x8xf32>) -> tensor<2x4x100xf32>
    %loss = loom.cross_entropy %logits, %labels reduction = sum : (tensor<2x4x100xf32>, tensor<2x4xi64>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// -----

// No embedding at all: on is a warning naming the option.
// WARN-COUNT-1: warning: loom-data-parallel: sparse-embedding-grad=on (loomc --sparse-embedding-grad on): the model has no embedding gradient
// AUTO-LABEL: func.func @main_grad
// AUTO-NOT:   loom.row_sparse

module {
  func.func @main(%x: tensor<4x8xf32> {loom.name = "x"},
                  %labels: tensor<4xi64> {loom.name = "labels"},
                  %w: tensor<8x3xf32> {loom.param, loom.name = "fc.weight"})
      -> (tensor<f32> {loom.name = "loss"}) {
    %logits = loom.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
    %loss = loom.cross_entropy %logits, %labels reduction = sum : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
    return %loss : tensor<f32>
  }
}

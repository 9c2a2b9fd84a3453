// RUN: loom-opt %s -split-input-file -verify-diagnostics \
// RUN:   -loom-memory-plan="device-memory=200" -o /dev/null
// RUN: not loom-opt %s -split-input-file -loom-memory-plan="device-memory=-1" \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: error: loom-memory-plan: device-memory must be >= 0 (0: no budget), got -1

// Over the budget, fixable: persistent 128 (input 64, result 64) fits in
// 200, the arena (128: two live activations) does not. The error gives the
// breakdown, what the budget leaves for the arena and the options.
shard.grid @mesh(shape = 1x2x1)
// expected-error @+1 {{loom-memory-plan: stage 0 (@stage0) needs 256 bytes of device memory at its peak, over the --device-memory budget of 200 bytes by 56: persistent 128 (parameters 0, optimizer state 0, updated parameters, state and loss 64, input batch 64) and the arena 128 (live at its peak: activations 128, gradients 0, optimizer 0, workspace 0; communication buffers among them 64). The budget leaves 72 bytes for the arena; to fit, shed at least 56 bytes of it: offload activations to host memory (--swap host), recompute them in the backward pass (--recompute), use more pipeline stages (--mesh pp=N: fewer layers per stage), or smaller micro-batches (activations scale with the rows of a micro-batch: --microbatches 8 with half the rows each holds about 64 bytes of activations at the peak)}}
func.func @stage0(%x: memref<16xf32>, %out: memref<16xf32> {loomrt.result = 0 : i64})
    attributes {loomrt.num_inputs = 1 : i64, loom.stage = 0 : i64, loom.microbatches = 4 : i64} {
  %0 = loomrt.alloc {category = "activation"} : memref<16xf32>
  loomrt.copy ins(%x : memref<16xf32>) outs(%0 : memref<16xf32>) {origin = "send", shape = array<i64: 16>, source_offset = 0 : i64, source_strides = array<i64: 1>, target_offset = 0 : i64, target_strides = array<i64: 1>}
  %h = loomrt.send_start %0 on @mesh grid_axes = [1] {peer = 1 : i64, tag = 0 : i64} : memref<16xf32>
  %1 = loomrt.alloc {category = "activation"} : memref<16xf32>
  loomrt.kernel ins(%x : memref<16xf32>) outs(%1 : memref<16xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    loomrt.yield %n : f32
  }
  loomrt.kernel ins(%1 : memref<16xf32>) outs(%out : memref<16xf32>) attributes {origin = "neg"} {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    loomrt.yield %n : f32
  }
  loomrt.wait %h
  return
}
// Stage 1 fits (128 bytes): no error.
func.func @stage1(%out: memref<16xf32> {loomrt.result = 0 : i64})
    attributes {loomrt.num_inputs = 0 : i64, loom.stage = 1 : i64} {
  %0 = loomrt.alloc {category = "activation"} : memref<16xf32>
  %h = loomrt.recv_start %0 on @mesh grid_axes = [1] {peer = 0 : i64, tag = 0 : i64} : memref<16xf32>
  loomrt.wait %h
  loomrt.copy ins(%0 : memref<16xf32>) outs(%out : memref<16xf32>) {origin = "result", shape = array<i64: 16>, source_offset = 0 : i64, source_strides = array<i64: 1>, target_offset = 0 : i64, target_strides = array<i64: 1>}
  return
}

// -----

// Parameters (256 bytes: 64 f32) alone exceed the budget: swapping or
// recomputing activations cannot help.
// expected-error @+1 {{loom-memory-plan: @params: its parameters and optimizer state alone need 320 bytes (parameters 256, optimizer state 64), over the --device-memory budget of 200 bytes; nothing swappable can fix it (swap and recompute only shed activations): split the parameters over more devices}}
func.func @params(%w: memref<64xf32> {loom.param}, %m: memref<16xf32> {loom.state},
                  %out: memref<f32> {loomrt.result = 0 : i64})
    attributes {loomrt.num_inputs = 2 : i64} {
  return
}

// -----

// Parameters and state fit (128), but with their updated copies and the
// input batch the persistent buffers (264) do not.
// expected-error @+1 {{loom-memory-plan: @persistent: its persistent buffers alone need 264 bytes (parameters 64, optimizer state 64, updated parameters, state and loss 132, input batch 4), over the --device-memory budget of 200 bytes; nothing swappable can fix it}}
func.func @persistent(%w: memref<16xf32> {loom.param}, %m: memref<16xf32> {loom.state},
                      %x: memref<f32>,
                      %loss: memref<f32> {loomrt.result = 0 : i64},
                      %nw: memref<16xf32> {loomrt.result = 1 : i64},
                      %nm: memref<16xf32> {loomrt.result = 2 : i64})
    attributes {loomrt.num_inputs = 3 : i64} {
  return
}

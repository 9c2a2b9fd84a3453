// RUN: loom-opt %s -loom-max-inflight-collectives | FileCheck %s --check-prefix=ONE
// RUN: loom-opt %s -loom-max-inflight-collectives=max=2 | FileCheck %s --check-prefix=TWO
// RUN: not loom-opt %s -loom-max-inflight-collectives=max=0 2>&1 | FileCheck %s --check-prefix=ERR

// Three tp all-reduces started before any is waited for, and one on dp.
// max=1: before each tp start, the wait of the tp one in flight moves up
// (the dp one is another group and stays where it was); the last tp wait
// stays before its reader. max=2: only the third tp start waits, for the
// first.
// ONE-LABEL: func.func @step
// ONE:      %[[A:.*]] = loomrt.all_reduce_start %{{.*}} grid_axes = [2]
// ONE-NEXT: %[[D:.*]] = loomrt.all_reduce_start %{{.*}} grid_axes = [0]
// ONE-NEXT: loomrt.wait %[[A]]
// ONE-NEXT: %[[B:.*]] = loomrt.all_reduce_start %{{.*}} grid_axes = [2]
// ONE-NEXT: loomrt.wait %[[B]]
// ONE-NEXT: %[[C:.*]] = loomrt.all_reduce_start %{{.*}} grid_axes = [2]
// ONE-NEXT: loomrt.wait %[[D]]
// ONE-NEXT: loomrt.wait %[[C]]
// ONE-NEXT: return

// TWO-LABEL: func.func @step
// TWO:      %[[A:.*]] = loomrt.all_reduce_start %{{.*}} grid_axes = [2]
// TWO-NEXT: %[[D:.*]] = loomrt.all_reduce_start %{{.*}} grid_axes = [0]
// TWO-NEXT: %[[B:.*]] = loomrt.all_reduce_start %{{.*}} grid_axes = [2]
// TWO-NEXT: loomrt.wait %[[A]]
// TWO-NEXT: %[[C:.*]] = loomrt.all_reduce_start %{{.*}} grid_axes = [2]
// TWO-NEXT: loomrt.wait %[[B]]
// TWO-NEXT: loomrt.wait %[[D]]
// TWO-NEXT: loomrt.wait %[[C]]
// TWO-NEXT: return

// ERR: error: loom-max-inflight-collectives: max must be >= 1, got 0

shard.grid @mesh(shape = 2x1x2)
func.func @step(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<4xf32>,
                %d: memref<4xf32>) attributes {loomrt.num_inputs = 4 : i64} {
  %ha = loomrt.all_reduce_start %a on @mesh grid_axes = [2] {reduction = "sum"} : memref<4xf32>
  %hd = loomrt.all_reduce_start %d on @mesh grid_axes = [0] {reduction = "sum"} : memref<4xf32>
  %hb = loomrt.all_reduce_start %b on @mesh grid_axes = [2] {reduction = "sum"} : memref<4xf32>
  %hc = loomrt.all_reduce_start %c on @mesh grid_axes = [2] {reduction = "sum"} : memref<4xf32>
  loomrt.wait %ha
  loomrt.wait %hb
  loomrt.wait %hd
  loomrt.wait %hc
  return
}

// loomc --device-memory: the budget's spelling, memory.json's device peak,
// the over-budget error and the plan field. Measured against the runtime's
// counters on pp=2 in test/python/test_device_memory.py.
//
// The step needs 200 bytes of device memory (worked out by hand): persistent
// w 16 + x 48 + the optimizer's step counter 4 + results 4 (the loss; the
// new w and counter are written over the old: loom-in-place-updates) = 72,
// and an arena of 128 (two 12-float gradients of 48 bytes, each rounded up
// to 64).
// RUN: rm -rf %t && loomc %s -o %t --emit-only --device-memory 200B
// RUN: FileCheck %s --check-prefix=FITS < %t/memory.json
// FITS: "device_memory": 200,
// FITS: "arena_bytes": 128,
// FITS: "device_peak_bytes": 200,
// FITS-NEXT: "function": "main_step",
// FITS-NEXT: "host_peak_bytes": 0,
// RUN: FileCheck %s --check-prefix=PLAN < %t/plan.json
// PLAN: "device_memory": 200,
// The emitted program carries the plan's device peak and the budget: the
// runtime budgets its device pool with them.
// RUN: FileCheck %s --check-prefix=SPEC < %t/step.cpp
// SPEC: /*plannedDevicePeakBytes=*/200, /*deviceMemoryBytes=*/200, /*hostArenaBytes=*/0};
//
// --plan reads the budget back.
// RUN: not loomc %s -o %t.again --emit-only --plan %t/plan.json --device-memory 199 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OVER
// RUN: loomc %s -o %t.again --emit-only --plan %t/plan.json
//
// One byte less: an error naming the function, its peak, the budget and
// what would fit it; memory.json is still written.
// RUN: not loomc %s -o %t.over --emit-only --device-memory 199 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OVER
// OVER: error: loom-memory-plan: @main_step needs 200 bytes of device memory at its peak, over the --device-memory budget of 199 bytes by 1: persistent 72 (parameters 16, optimizer state 4, updated parameters, state and loss 4, input batch 48) and the arena 128
// OVER-SAME: The budget leaves 127 bytes for the arena; to fit, shed at least 1 bytes of it: offload activations to host memory (--swap host), recompute them in the backward pass (--recompute), use more pipeline stages
// OVER: loomc: error: compilation failed (see the errors above)
//
// Parameters and optimizer state (20 bytes) alone over the budget.
// RUN: not loomc %s -o %t.err --emit-only --device-memory 16 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PARAMS
// PARAMS: error: loom-memory-plan: @main_step: its parameters and optimizer state alone need 20 bytes (parameters 16, optimizer state 4), over the --device-memory budget of 16 bytes; nothing swappable can fix it
//
// Suffixes are binary; 0 means unbounded.
// RUN: loomc %s -o %t.kib --emit-only --device-memory 1.5KiB
// RUN: FileCheck %s --check-prefix=KIB < %t.kib/memory.json
// KIB: "device_memory": 1536,
// RUN: loomc %s -o %t.zero --emit-only --device-memory 0
// RUN: not loomc %s -o %t.err --device-memory 12XB 2>&1 | FileCheck %s --check-prefix=SUFFIX
// SUFFIX: loomc: error: --device-memory: unknown suffix 'XB' in '12XB'; the accepted suffixes are B, KiB, MiB, GiB, TiB (binary: 1KiB = 1024 bytes) or none (bytes)
// RUN: not loomc %s -o %t.err --device-memory GiB 2>&1 | FileCheck %s --check-prefix=NUMBER
// NUMBER: loomc: error: --device-memory: expects a number of bytes with an optional suffix (B, KiB, MiB, GiB, TiB), e.g. 24GiB, got 'GiB'
// RUN: not loomc %s -o %t.err --device-memory -5 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: loomc: error: --device-memory: expects a number of bytes
//
// --swap host needs a budget; peer needs pipeline stages, auto a cluster.
// Here the arena holds only gradients: nothing to offload.
// RUN: not loomc %s -o %t.err --swap host --device-memory 199 2>&1 | FileCheck %s --check-prefix=SWAP
// SWAP: error: loom-swap: @main_step still needs 200 bytes of device memory at its peak (200 before swapping), over the --device-memory budget of 199 bytes, after offloading 0 activation buffer(s) of 0 bytes: no activation live at the peak is left to offload (live there: activations 0, gradients 128
// RUN: loomc %s -o %t.swapfits --emit-only --swap host --device-memory 200
// RUN: not loomc %s -o %t.err --swap host 2>&1 | FileCheck %s --check-prefix=SWAPBUDGET
// SWAPBUDGET: loomc: error: --swap host sheds activations to fit a device budget: give --device-memory BYTES
// RUN: not loomc %s -o %t.err --swap peer --device-memory 1GiB 2>&1 | FileCheck %s --check-prefix=SWAPPEER
// SWAPPEER: loomc: error: --swap peer sends activations to a neighbouring pipeline stage: it needs --mesh pp=N with N >= 2 (without stages, use --swap host)
// RUN: not loomc %s -o %t.err --swap balance --device-memory 1GiB 2>&1 | FileCheck %s --check-prefix=SWAPBALANCE
// SWAPBALANCE: loomc: error: --swap balance sends activations to a neighbouring pipeline stage: it needs --mesh pp=N with N >= 2 (without stages, use --swap host)
// RUN: not loomc %s -o %t.err --swap balance --mesh pp=2 2>&1 | FileCheck %s --check-prefix=BALANCEBUDGET
// BALANCEBUDGET: loomc: error: --swap balance sheds activations to fit a device budget: give --device-memory BYTES
// --play times the compiled step on a cluster: it needs one, and a name
// that is no bundled spec is an error listing them. With one, play.json
// says which and gives the step time and each stage's busy time and the
// arena's peak of live bytes.
// RUN: not loomc %s -o %t.err --play 2>&1 | FileCheck %s --check-prefix=PLAYNOSPEC
// PLAYNOSPEC: loomc: error: --play times the compiled step on a cluster: give --cluster SPEC
// RUN: not loomc %s -o %t.err --play --cluster nosuch 2>&1 | FileCheck %s --check-prefix=PLAYBADSPEC
// PLAYBADSPEC: loomc: error: no cluster spec 'nosuch': give a JSON file (docs/cluster-spec.md) or one of the bundled specs: a100-pcie, dgx-a100
// RUN: loomc %s -o %t.play --emit-only --play --cluster rtx4090 2>&1 | FileCheck %s --check-prefix=PLAY
// RUN: FileCheck %s --check-prefix=PLAYJSON < %t.play/play.json
// The play replays the arena's allocations: its peak is the memory plan's.
// RUN: FileCheck %s --check-prefix=PLAYPLAN < %t.play/memory.json
// PLAYPLAN: "peak_live_bytes": 128,
// PLAY: loomc: --play on rtx4090: step {{[0-9.]+}} ms
// PLAYJSON: "cluster": "rtx4090",
// PLAYJSON: "stages": [
// PLAYJSON: "busy_s":
// PLAYJSON: "peak_live_bytes": 128,
// PLAYJSON: "step_time_s":
// --swap auto prices swap against recompute on a cluster, within a budget.
// RUN: not loomc %s -o %t.err --swap auto --device-memory 1GiB 2>&1 | FileCheck %s --check-prefix=SWAPAUTO
// SWAPAUTO: loomc: error: --swap auto prices swapping against recomputing on a cluster: give --cluster SPEC
// RUN: not loomc %s -o %t.err --swap auto --cluster rtx4090 2>&1 | FileCheck %s --check-prefix=SWAPAUTOBUDGET
// SWAPAUTOBUDGET: loomc: error: --swap auto sheds activations to fit a device budget: give --device-memory BYTES
// A budget the model fits: nothing to shed.
// RUN: loomc %s -o %t.auto --emit-only --swap auto --cluster rtx4090 --device-memory 1GiB 2>&1 | FileCheck %s --check-prefix=SWAPAUTOFITS
// SWAPAUTOFITS: loomc: --swap auto: every stage fits the budget; nothing is swapped or recomputed
// RUN: not loomc %s -o %t.err --swap disk 2>&1 | FileCheck %s --check-prefix=SWAPKIND
// SWAPKIND: loomc: error: --swap must be none, host, peer or auto, got 'disk'
//
// RUN: loomc --help | FileCheck %s --check-prefix=HELP
// HELP: --device-memory=<bytes>
// HELP: --swap=<string>

func.func @main(%w: tensor<4xf32> {loom.name = "w", loom.param},
                %x: tensor<3x4xf32> {loom.name = "x"}) -> (tensor<f32> {loom.name = "loss"}) {
  %b = loom.broadcast %w, dims = [1] : tensor<4xf32> -> tensor<3x4xf32>
  %p = loom.mul %x, %b : tensor<3x4xf32>
  %s = loom.reduce_sum %p, dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %s : tensor<f32>
}

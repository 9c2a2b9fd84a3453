// A pipeline schedule is unrolled in the IR, one run of ops per
// micro-batch. The emitters print each run of repeats of the same ops on
// other buffers as one loop over a table of what differs (arena offsets,
// tags, handle slots, slice offsets), so that the step does not grow with
// the micro-batches; --roll-repeats=false prints every op.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %loompy -m loom.models.gpt --layers 2 --hidden 16 --heads 4 --seq 4 \
// RUN:   --vocab 12 --batch 2 -o %t/gpt.mlir
// RUN: loom-opt %t/gpt.mlir --loom-training-pipeline="pp=2 microbatches=6 \
// RUN:   optimizer=sgd lr=0.1" -o %t/lowered.mlir
// RUN: loom-translate --emit-cpp %t/lowered.mlir -o %t/rolled.cpp
// RUN: FileCheck %s < %t/rolled.cpp
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -I %loom_src/include %t/rolled.cpp
// RUN: loom-translate --emit-cpp --roll-repeats=false %t/lowered.mlir -o %t/unrolled.cpp
// RUN: FileCheck %s --check-prefix=UNROLLED < %t/unrolled.cpp
// The rolled source is the smaller one (line counts compared).
// RUN: %loompy -c "import sys; r, u = (len(open(f).readlines()) for f in sys.argv[1:]); \
// RUN:   print('smaller' if r < 0.7 * u else f'rolled {r} lines, unrolled {u}')" \
// RUN:   %t/rolled.cpp %t/unrolled.cpp | FileCheck %s --check-prefix=SIZE
// The CUDA emitter rolls the same runs; the source builds as emulated host
// code.
// RUN: loom-translate --emit-cuda %t/lowered.mlir -o %t/rolled.cu
// RUN: FileCheck %s --check-prefix=CUDA < %t/rolled.cu
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -DLOOM_CUDA_EMULATION -x c++ -I %loom_src/include %t/rolled.cu

// Stage 0: the steady state's forward and backward passes, one loop; the
// micro-batch's rows of the input are a moved pointer into it, and each
// transfer's tag and handle slot come from the table.
// CHECK: namespace stage0 {
// CHECK: CommHandle comm[{{[0-9]+}}]; // in-flight transfers
// CHECK: // [[N:[0-9]+]] repeats of the same {{[0-9]+}} ops on other buffers (micro-batches): one loop
// CHECK-NEXT: static const int64_t kRepeat0[[[N]]][{{[0-9]+}}] = {
// CHECK: for (int64_t rep = 0; rep < [[N]]; ++rep) {
// CHECK-NEXT: int64_t *[[IDS:t[0-9]+_activation]] = reinterpret_cast<int64_t *>(arena + kRepeat0[rep][{{[0-9]+}}]);
// CHECK-NEXT: arenaAcquire(ctx, kRepeat0[rep][{{[0-9]+}}], {{[0-9]+}});
// CHECK: k{{[0-9]+}}_copy(ctx, (a{{[0-9]+}}_ids + kRepeat0[rep][{{[0-9]+}}]), [[IDS]]);
// CHECK: comm[kRepeat0[rep][{{[0-9]+}}]] = sendStart(ctx, {{.*}}, 1, kRepeat0[rep][{{[0-9]+}}], Group::Pp);
// CHECK: } // namespace stage0
// CHECK: namespace stage1 {
// CHECK: repeats of the same {{[0-9]+}} ops on other buffers (micro-batches): one loop
// CHECK: for (int64_t rep = 0;
// CHECK: wait(ctx, comm[kRepeat0[rep][{{[0-9]+}}]]);
// CHECK: } // namespace stage1

// UNROLLED-NOT: repeats of the same
// UNROLLED-NOT: kRepeat
// SIZE: smaller

// CUDA: namespace stage0 {
// CUDA: repeats of the same {{[0-9]+}} ops on other buffers (micro-batches): one loop
// CUDA: for (int64_t rep = 0;
// CUDA: LOOM_LAUNCH(k{{[0-9]+}}_copy, {{[0-9]+}}, {{[0-9]+}}, stream, (a{{[0-9]+}}_ids + kRepeat0[rep][{{[0-9]+}}])

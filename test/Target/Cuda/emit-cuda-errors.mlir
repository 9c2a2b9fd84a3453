// RUN: not loom-translate --emit-cuda %s -o /dev/null 2>&1 | FileCheck %s
// RUN: not loom-translate --emit-cuda --cuda-block-size 100 %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=BLOCK

// A function that was not lowered and planned is refused with the fix.
// CHECK: error: emit-cuda: expects a function lowered by convert-loom-to-loomrt and planned by loom-memory-plan
// BLOCK: error: emit-cuda: the block size must be a multiple of 32 in [32, 1024] and the block limit at least 1, got 100 and 4096
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}

// RUN: not loom-translate --emit-cpp %s -o /dev/null 2>&1 | FileCheck %s

// A function that was not lowered and planned is refused with the fix.
// CHECK: error: emit-cpp: expects a function lowered by convert-loom-to-loomrt and planned by loom-memory-plan
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}

// A result too large to allocate is an error naming the op, not a crash.
// AddressSanitizer's operator new reports and aborts instead of throwing
// std::bad_alloc, so this case cannot run under make test-asan.
// UNSUPPORTED: asan
// RUN: not loom-run %s --entry huge_result 2>&1 | FileCheck %s --check-prefix=HUGE
func.func @huge_result() -> tensor<100000000000x100000xf32> {
  // HUGE: runtime-errors-oom.mlir:[[@LINE+1]]:8: error: 'loom.iota' op ran out of memory computing its results (the interpreter keeps every value in memory; use smaller shapes)
  %x = loom.iota dim = 0 : tensor<100000000000x100000xf32>
  return %x : tensor<100000000000x100000xf32>
}

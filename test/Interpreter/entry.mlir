// Without --entry and without @main, the only public function runs; with
// several public functions, --entry is required.
//
// RUN: split-file %s %t
// RUN: loom-run %t/one-public.mlir --print | FileCheck %s --check-prefix=ONE
// RUN: not loom-run %t/two-public.mlir 2>&1 | FileCheck %s --check-prefix=TWO
// RUN: not loom-run %t/none.mlir 2>&1 | FileCheck %s --check-prefix=NONE

//--- one-public.mlir
func.func private @helper() -> tensor<i64> {
  %c = loom.constant dense<1> : tensor<i64>
  return %c : tensor<i64>
}
func.func @forward() -> tensor<i64> {
  %c = loom.constant dense<42> : tensor<i64>
  return %c : tensor<i64>
}
// ONE:      result0 : tensor<i64>
// ONE-NEXT: 42

//--- two-public.mlir
func.func @a() -> tensor<i64> {
  %c = loom.constant dense<1> : tensor<i64>
  return %c : tensor<i64>
}
func.func @b() -> tensor<i64> {
  %c = loom.constant dense<2> : tensor<i64>
  return %c : tensor<i64>
}
// TWO: loom-run: error: the module has no @main and several public functions (@a, @b); choose one with --entry NAME

//--- none.mlir
func.func private @a() -> tensor<i64>
// NONE: loom-run: error: the module has no @main and no public function with a body to run

// RUN: not loom-run %t/does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=NOFILE
// NOFILE: loom-run: error: cannot open '{{.*}}does-not-exist.mlir': No such file or directory
// RUN: not loom-run %t/broken.mlir 2>&1 | FileCheck %s --check-prefix=BROKEN
// BROKEN: broken.mlir:2:8: error: custom op 'loom.nonsense' is unknown

//--- broken.mlir
func.func @main() -> tensor<i64> {
  %c = loom.nonsense : tensor<i64>
  return %c : tensor<i64>
}

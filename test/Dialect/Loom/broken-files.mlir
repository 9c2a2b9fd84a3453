// Malformed input files: loom-opt reports an error at the right place
// (file:line:col) and exits with a failure, without crashing (`not` without
// --crash fails on a crash). The inputs are in Inputs/; the line and column
// numbers below refer to them.

// RUN: not loom-opt %S/Inputs/broken-truncated.mlir 2>&1 | FileCheck %s --check-prefix=TRUNC
// TRUNC: broken-truncated.mlir:4:35: error: expected non-function type

// RUN: not loom-opt %S/Inputs/broken-garbage.mlir 2>&1 | FileCheck %s --check-prefix=GARBAGE
// GARBAGE: broken-garbage.mlir:3:3: error: unexpected character

// RUN: not loom-opt %S/Inputs/broken-unknown-op.mlir 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: broken-unknown-op.mlir:3:8: error: custom op 'loom.frobnicate' is unknown

// The loom dialect does not allow unknown ops, even with
// --allow-unregistered-dialect.
// RUN: not loom-opt %S/Inputs/broken-unknown-generic-op.mlir 2>&1 | FileCheck %s --check-prefix=UNKNOWN-GENERIC
// RUN: not loom-opt --allow-unregistered-dialect %S/Inputs/broken-unknown-generic-op.mlir 2>&1 | FileCheck %s --check-prefix=UNKNOWN-GENERIC
// UNKNOWN-GENERIC: broken-unknown-generic-op.mlir:3:8: error: unregistered operation 'loom.frobnicate' found in dialect ('loom') that does not allow unknown operations

// RUN: not loom-opt %S/Inputs/broken-operand-count.mlir 2>&1 | FileCheck %s --check-prefix=OPERANDS
// OPERANDS: broken-operand-count.mlir:4:8: error: 'loom.add' op expected 2 operands, but found 1

// RUN: not loom-opt %S/Inputs/broken-operand-count-custom.mlir 2>&1 | FileCheck %s --check-prefix=OPERANDS-CUSTOM
// OPERANDS-CUSTOM: broken-operand-count-custom.mlir:3:19: error: expected ','

// RUN: not loom-opt %S/Inputs/broken-type-mismatch.mlir 2>&1 | FileCheck %s --check-prefix=TYPE
// TYPE: broken-type-mismatch.mlir:3:17: error: use of value '%x' expects different type than prior uses: 'tensor<4xf32>' vs 'tensor<3xf32>'
// TYPE: broken-type-mismatch.mlir:2:26: note: prior use here

// RUN: not loom-opt %S/Inputs/broken-missing-terminator.mlir 2>&1 | FileCheck %s --check-prefix=TERMINATOR
// TERMINATOR: broken-missing-terminator.mlir:3:8: error: block with no terminator

// The file ends inside the function's region; the parser reports it after
// the last token.
// RUN: not loom-opt %S/Inputs/broken-unbalanced.mlir 2>&1 | FileCheck %s --check-prefix=UNCLOSED
// UNCLOSED: broken-unbalanced.mlir:4:28: error: expected operation name in quotes

// The stray brace is on line 5; like every "expected ..." error of the MLIR
// parser whose token starts a line, it is reported at the end of the
// previous token (line 4, after the function's closing brace).
// RUN: not loom-opt %S/Inputs/broken-extra-brace.mlir 2>&1 | FileCheck %s --check-prefix=EXTRA-BRACE
// EXTRA-BRACE: broken-extra-brace.mlir:4:2: error: expected operation name in quotes

// An empty file is a valid, empty module.
// RUN: loom-opt %S/Inputs/empty.mlir | FileCheck %s --check-prefix=EMPTY
// EMPTY: module {
// EMPTY-NEXT: }

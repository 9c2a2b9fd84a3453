//===- Print.h - Printing tensors like NumPy --------------------*- C++ -*-===//

#ifndef LOOM_INTERPRETER_PRINT_H
#define LOOM_INTERPRETER_PRINT_H

#include "loom/Interpreter/Tensor.h"

#include "llvm/Support/raw_ostream.h"

namespace mlir {
namespace loom {
namespace interp {

/// Prints the elements the way NumPy's repr does (without `array(...)`):
/// nested brackets, ", " between elements, one row per line. Floats use
/// the shortest text that reads back as the same value of their element
/// type ("1.", "0.1", "nan", "-inf"), i1 prints True/False. Tensors with
/// more than `threshold` elements show only the first and last 3 entries
/// of each long dimension, with "...".
void printTensor(llvm::raw_ostream &os, const Tensor &tensor,
                 int64_t threshold = 1000);

/// The shortest decimal text of `value` that rounds back to it in `kind`.
std::string formatFloat(float value, ElementKind kind);

} // namespace interp
} // namespace loom
} // namespace mlir

#endif // LOOM_INTERPRETER_PRINT_H

//===- Arguments.h - Binding a function's arguments to tensors --*- C++ -*-===//
//
// Arguments are named by their `loom.name` attribute, else `arg<i>` (which
// also works for named arguments). Each argument's value comes from, in
// order: an `--input NAME=FILE.npy`; the weights file (a safetensors entry
// named like the argument; `loom.param` arguments must come from there);
// seeded random values when asked for. The tensor must have the argument's
// element type and, where the argument's type has static sizes, its shape.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INTERPRETER_ARGUMENTS_H
#define LOOM_INTERPRETER_ARGUMENTS_H

#include "loom/Interpreter/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir {
namespace loom {
namespace interp {

struct ArgumentSources {
  /// (argument name, .npy path) pairs, as given.
  std::vector<std::pair<std::string, std::string>> inputs;
  /// A safetensors file; empty for none.
  std::string weightsPath;
  /// Fill arguments without a value with random values from this seed:
  /// floats uniform in [-1, 1); integers in [0, n) with n the size they
  /// index (gather indices, cross-entropy labels), else [0, 10); i1 0 or 1.
  std::optional<uint64_t> randomSeed;
};

/// `loom.name` of argument `i`, else "arg<i>".
std::string getArgumentName(func::FuncOp func, unsigned i);
/// `loom.name` of result `i`, else "result<i>".
std::string getResultName(func::FuncOp func, unsigned i);

/// One tensor per argument of `func`. Returns "" on success, else an error
/// that names the argument and its expected type.
std::string bindArguments(func::FuncOp func, const ArgumentSources &sources,
                          SmallVectorImpl<Tensor> &args);

} // namespace interp
} // namespace loom
} // namespace mlir

#endif // LOOM_INTERPRETER_ARGUMENTS_H

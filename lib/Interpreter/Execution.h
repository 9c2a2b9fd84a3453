//===- Execution.h - Shared parts of the interpreter's driver ---*- C++ -*-===//
//
// Internal to lib/Interpreter. Interpreter.cpp steps the ranks and executes
// ops, Dispatch.cpp maps each loom op to its kernel (Kernels.h), and
// Communication.cpp completes the communication ops of the `shard`
// dialect across the ranks.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_INTERPRETER_EXECUTION_H
#define LOOM_LIB_INTERPRETER_EXECUTION_H

#include "loom/Interpreter/Interpreter.h"

#include "llvm/ADT/SmallVector.h"

#include <deque>
#include <map>
#include <string>

namespace mlir {
namespace loom {
namespace interp {

/// One rank of a run: its function, values and program counter.
struct Interpreter::RankState {
  func::FuncOp func;
  Block *block = nullptr;
  DenseMap<Value, TensorRef> values;
  Block::iterator pc;
  bool done = false;
  SmallVector<TensorRef> results;
  /// Buffered sends to this rank, by sender.
  std::map<unsigned, std::deque<TensorRef>> inbox;
};

//===- The op dispatch (Dispatch.cpp) -------------------------------------===//

/// What runKernel returns for an op that has no kernel.
inline constexpr char kUnsupported[] = "\x01unsupported";

/// Runs the kernel of one op. Returns "" on success (with `results`
/// filled), an error message, or `kUnsupported`.
std::string runKernel(Operation *op, ArrayRef<const Tensor *> in,
                      SmallVectorImpl<Tensor> &results);

//===- Ranks on grids (Communication.cpp) ---------------------------------===//

/// Row-major coordinates of `rank` in a grid of `shape`.
SmallVector<int64_t> gridCoords(ArrayRef<int64_t> shape, int64_t rank);

/// The communication ops that stop a rank until they can complete.
bool isCommunication(Operation &op);

} // namespace interp
} // namespace loom
} // namespace mlir

#endif // LOOM_LIB_INTERPRETER_EXECUTION_H

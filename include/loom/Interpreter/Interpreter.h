//===- Interpreter.h - The reference interpreter of loom IR -----*- C++ -*-===//
//
// Executes a func.func of loom ops op by op on Tensors: one plain kernel per
// op (BLAS for f32 dot_general), plus func.call (the callee is interpreted),
// func.return and arith.constant. Simple and slow on purpose: it is the
// oracle that transformations and compiled code are checked against.
//
// Virtual ranks: runRanks() runs N instances of a function in one process,
// cooperatively and deterministically (no threads): each rank has its own
// values and a program counter over the entry block; ranks are stepped
// round-robin, and a rank stops at a communication op of the `shard`
// dialect until it can complete: a collective (all_reduce, all_gather) when
// every rank of its group has reached it, a recv when the matching send has
// been made (sends are buffered, FIFO per sender/receiver pair). When every
// unfinished rank is blocked, the run fails with a deadlock error listing
// each rank's blocked op. A rank's coordinate in a grid is its rank id in
// row-major order (`shard.process_linear_index` is the rank id); a grid used
// by a communication op must have exactly N devices, except that a mesh
// {dp = D, pp = P, tp = T} in the options lays the N = D*P*T ranks out as
// the runtime does (rank (d*P + p)*T + t) and makes the 1-D grids named
// dp, pp and tp span that axis of the mesh. Each rank may run its own
// function (pipeline stages). Communication ops inside called functions are
// rejected for now.
//
// Errors (an op the interpreter does not support, operands that break an
// op's rule at run time, an out-of-range gather index or label, NaN/Inf
// with `checkFinite`) are emitted as MLIR diagnostics at the op, which
// name the op and its location. Running out of memory in a kernel is such
// an error too when operator new throws std::bad_alloc (a tool that uses
// llvm::InitLLVM must reset LLVM's aborting new-handler for that, as
// loom-run does).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INTERPRETER_INTERPRETER_H
#define LOOM_INTERPRETER_INTERPRETER_H

#include "loom/Interpreter/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

#include <memory>

namespace mlir {
namespace loom {
namespace interp {

struct InterpreterOptions {
  /// Stop at the first op that produces a NaN or an infinity and report it.
  bool checkFinite = false;
  /// Deepest func.call nesting (guards against unbounded recursion).
  unsigned maxCallDepth = 64;
  /// The device mesh {dp, pp, tp} the ranks form (loom-run --mesh), or
  /// empty: rank (d*P + p)*T + t, as the runtime lays them out; 1-D grids
  /// named dp, pp and tp then span that axis of the mesh.
  SmallVector<int64_t, 3> mesh;
};

class Interpreter {
public:
  explicit Interpreter(InterpreterOptions options = {}) : options(options) {}

  /// Runs `func` (which must have a body) on `args`, one per argument, each
  /// matching the argument's type. Returns the values of its func.return.
  FailureOr<SmallVector<Tensor>> run(func::FuncOp func,
                                     SmallVector<Tensor> args);

  /// Runs `func` as `argsPerRank.size()` ranks (see the file comment), rank
  /// r on `argsPerRank[r]`. Returns each rank's results. run() is the
  /// one-rank case.
  FailureOr<SmallVector<SmallVector<Tensor>>>
  runRanks(func::FuncOp func, SmallVector<SmallVector<Tensor>> argsPerRank);
  /// As above with rank r running `funcs[r]` (one function per rank, e.g.
  /// the stage functions of a pipeline).
  FailureOr<SmallVector<SmallVector<Tensor>>>
  runRanks(ArrayRef<func::FuncOp> funcs,
           SmallVector<SmallVector<Tensor>> argsPerRank);

  /// `check.*` ops (StableHLO test data, see CheckKernels.cpp) run so far:
  /// a failed check is reported at the op and counted, and the function
  /// goes on; run() still succeeds, so callers must look at checksFailed.
  unsigned getChecksPassed() const { return checksPassed; }
  unsigned getChecksFailed() const { return checksFailed; }

private:
  /// Values are immutable once computed and shared (a func.call passes its
  /// operands to the callee without copying them).
  using TensorRef = std::shared_ptr<const Tensor>;

  FailureOr<SmallVector<TensorRef>> call(func::FuncOp func,
                                         ArrayRef<TensorRef> args,
                                         unsigned depth);
  /// Executes one op (not func.return) and binds its results in `values`.
  LogicalResult execute(Operation *op, DenseMap<Value, TensorRef> &values,
                        unsigned depth);
  /// Checks the results against the op's result types and, with
  /// checkFinite, for NaN/Inf.
  LogicalResult checkResults(Operation *op, ArrayRef<Tensor> results);
  /// Executes an op of the `check` dialect (CheckKernels.cpp). Fails only
  /// on a malformed check; a mismatch is reported and counted.
  LogicalResult executeCheck(Operation *op, ArrayRef<const Tensor *> in);

  struct RankState;
  enum class CommStatus { Done, Blocked, Failed };
  /// Tries to complete the communication op at rank `r`'s program counter.
  CommStatus communicate(unsigned r, MutableArrayRef<RankState> ranks);
  /// Checks a communication op's grid against the number of ranks and
  /// returns the shape the ranks are laid out in, or failure (reported).
  /// That is the grid's own shape, or, for a 1-D grid named `dp`, `pp` or
  /// `tp` when options.mesh is set, the mesh [D, P, T] (the runtime's
  /// layout); `axisMap` then gets the mesh axis of the grid's axis 0 (else
  /// it is left empty).
  FailureOr<SmallVector<int64_t>> gridShape(Operation *op,
                                            FlatSymbolRefAttr grid,
                                            SmallVectorImpl<int16_t> *axisMap =
                                                nullptr);

  /// Adds notes naming the calls that led to `diagnostic`, reports it and
  /// returns failure.
  LogicalResult withCallStack(InFlightDiagnostic &&diagnostic);

  InterpreterOptions options;
  /// The func.call ops being executed, outermost first.
  SmallVector<Operation *> callStack;
  /// The rank being stepped and the number of ranks of the run.
  unsigned currentRank = 0;
  unsigned numRanks = 1;
  unsigned checksPassed = 0;
  unsigned checksFailed = 0;
};

} // namespace interp
} // namespace loom
} // namespace mlir

#endif // LOOM_INTERPRETER_INTERPRETER_H

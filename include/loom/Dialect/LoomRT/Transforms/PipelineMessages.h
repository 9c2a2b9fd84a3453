//===- PipelineMessages.h - Can the stages wait forever? --------*- C++ -*-===//
//
// The pipeline stages' programs talk through point-to-point messages on
// the pp axis: a `send_start` or `recv_start` and, later, the `wait` on its
// handle. A wait on a receive completes once the peer stage started the
// matching send; a wait on a send, at worst (a message past MPI's eager
// limit), once the peer posted the matching receive. A program that waits
// for a peer that itself waits, directly or through other stages, for
// something this program does only after its wait never finishes.
//
// findPipelineDeadlock plays all stages' messages together under these
// rules and reports the waits no stage gets past. Passes that place
// messages (loom-swap's peer moves) call it before committing a placement,
// and loom-verify-messages runs it on the finished programs, so a cycle of
// waits is a compile-time error, not a hang.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOMRT_TRANSFORMS_PIPELINEMESSAGES_H
#define LOOM_DIALECT_LOOMRT_TRANSFORMS_PIPELINEMESSAGES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <string>

namespace mlir {
namespace loomrt {

/// One message action of a stage program on the pipeline axis.
struct MessageEvent {
  enum class Kind : uint8_t { Send, Recv, WaitSend, WaitRecv };
  Kind kind = Kind::Send;
  /// The other stage and the message's tag.
  int64_t peer = 0, tag = 0;
  /// Names the start a wait waits on (the same on both; unique per stage).
  int64_t handle = 0;
  /// Where it is in the program: its op's index in the function's block,
  /// or, for an action a pass is about to add, a fraction between two.
  double at = 0;
  /// The op (null for an action not in the IR yet).
  Operation *op = nullptr;

  bool isWait() const {
    return kind == Kind::WaitSend || kind == Kind::WaitRecv;
  }
};

/// The pipeline-axis messages of `func` (its top-level send_start,
/// recv_start and the waits on them), in program order.
SmallVector<MessageEvent> collectPipelineMessages(func::FuncOp func);

/// A wait that stage `stage` never gets past.
struct StuckWait {
  int64_t stage;
  MessageEvent wait;
};

/// Plays the stage programs' messages together (`stages[s]`: stage s's
/// events, ordered by `at`; peers are stage indices): every stage runs
/// until a wait whose peer has not acted yet. The waits the stages are
/// stuck at when none can move and some have not finished (a cycle of
/// waits, or a message nobody matches); empty when all finish.
SmallVector<StuckWait>
findPipelineDeadlock(ArrayRef<SmallVector<MessageEvent>> stages);

/// "stage 0 waits for the receive of tag 9 from stage 1" for each.
std::string describeStuckWaits(ArrayRef<StuckWait> stuck);

} // namespace loomrt
} // namespace mlir

#endif // LOOM_DIALECT_LOOMRT_TRANSFORMS_PIPELINEMESSAGES_H

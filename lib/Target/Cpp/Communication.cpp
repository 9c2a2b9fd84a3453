//===- Communication.cpp - Transfers, waits and grid indices --------------===//
//
// loomrt's asynchronous communication becomes calls into the runtime's
// communicators (loom/Runtime/Comm.h): all_reduce_start, send_start and
// recv_start start a transfer on the group of their mesh axis and name its
// CommHandle, loomrt.wait waits on one, and loomrt.grid_index stores the
// rank's index in a group.
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

#include <type_traits>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::emit_cpp;

LogicalResult Emitter::emitAllReduceStart(loomrt::AllReduceStartOp start) {
  std::string n = newName("handle");
  names[start.getHandle()] = n;
  StringRef reduction = start.getReduction();
  const char *op = reduction == "max"   ? "ReduceOp::Max"
                   : reduction == "min" ? "ReduceOp::Min"
                   : reduction == "avg" ? "ReduceOp::Avg"
                                        : "ReduceOp::Sum";
  const char *group = groupEnum(start.getMeshAxis());
  line() << "const CommHandle " << n << " = allReduceStart(ctx, "
         << name(start.getBuffer()) << ", "
         << numElements(shape(start.getBuffer())) << ", " << op << ", "
         << group << ");\n";
  return success();
}

template <typename StartOp>
LogicalResult Emitter::emitTransferStart(StartOp start) {
  constexpr bool isSend = std::is_same_v<StartOp, loomrt::SendStartOp>;
  const char *group = groupEnum(start.getMeshAxis());
  std::string n = newName(isSend ? "send" : "recv");
  names[start.getHandle()] = n;
  Value buffer = start.getBuffer();
  line() << "const CommHandle " << n << " = "
         << (isSend ? "sendStart" : "recvStart") << "(ctx, " << name(buffer)
         << ", "
         << numElements(shape(buffer)) * elementBytes(elementType(buffer))
         << ", " << start.getPeer() << ", " << start.getTag() << ", "
         << group << ");\n";
  return success();
}

template LogicalResult
Emitter::emitTransferStart<loomrt::SendStartOp>(loomrt::SendStartOp);
template LogicalResult
Emitter::emitTransferStart<loomrt::RecvStartOp>(loomrt::RecvStartOp);

LogicalResult Emitter::emitGridIndex(loomrt::GridIndexOp index) {
  const char *group = groupEnum(index.getMeshAxis());
  line() << name(index.getOutput())
         << "[0] = static_cast<int64_t>(groupRank(ctx, " << group << "));\n";
  return success();
}

LogicalResult Emitter::emitWait(loomrt::WaitOp wait) {
  line() << "wait(ctx, " << name(wait.getHandle()) << ");\n";
  return success();
}

//===- Communication.cpp - Collectives as started transfers and waits -----===//
//
// shard.all_reduce, shard.send and shard.recv become asynchronous loomrt
// transfers: a *_start where the op was and a loomrt.wait right before the
// first op that reads the result (sends: at the end of the function), so
// that the compute in between overlaps the transfer. loom.grid_index asks
// the runtime for the rank's index on a mesh axis.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "loom/Dialect/Loom/IR/MeshGrid.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::loom_to_loomrt;

//===----------------------------------------------------------------------===//
// LoweringState: transfers in flight
//===----------------------------------------------------------------------===//

void LoweringState::waitFor(Value value, OpBuilder &b) {
  auto it = pendingValues.find(value);
  if (it == pendingValues.end())
    return;
  loomrt::WaitOp::create(b, value.getLoc(), it->second);
  pendingValues.erase(it);
}

void LoweringState::waitForOperands(Operation *op, OpBuilder &b) {
  for (Value operand : op->getOperands())
    waitFor(operand, b);
}

void LoweringState::addPendingValue(Value value, Value handle) {
  pendingValues[value] = handle;
}

void LoweringState::waitForUnread(OpBuilder &b) {
  for (auto [value, handle] : pendingValues)
    loomrt::WaitOp::create(b, value.getLoc(), handle);
  pendingValues.clear();
}

namespace {

//===----------------------------------------------------------------------===//
// Checks
//===----------------------------------------------------------------------===//

/// Checks that a collective runs on one axis of the device mesh @mesh (the
/// runtime has a communicator per mesh axis).
LogicalResult checkMeshAxis(Operation *op, FlatSymbolRefAttr grid,
                            ArrayRef<int16_t> gridAxes) {
  if (getMeshAxis(grid, gridAxes))
    return success();
  return op->emitError("convert-loom-to-loomrt: the runtime communicates "
                       "along one axis of the device mesh @")
         << kMeshGridName << " (grid_axes = [0], [1] or [2]: dp, pp, tp); this "
         << "op runs on @" << grid.getValue() << " grid_axes = ["
         << llvm::join(llvm::map_range(
                           gridAxes,
                           [](int16_t a) { return std::to_string(a); }),
                       ", ")
         << "]";
}

/// The peer (index on the one grid axis) and tag of a shard.send/recv.
FailureOr<std::pair<int64_t, int64_t>>
pointToPoint(Operation *op, ArrayRef<int16_t> gridAxes,
             ArrayRef<int64_t> index, size_t numDynamic) {
  if (gridAxes.size() != 1 || index.size() != 1 || numDynamic != 0 ||
      ShapedType::isDynamic(index.front()))
    return op->emitError("convert-loom-to-loomrt: point-to-point transfers "
                         "need one grid axis and a static peer coordinate");
  auto tag =
      op->getAttrOfType<IntegerAttr>(LoomDialect::TagAttrHelper::getNameStr());
  if (!tag || tag.getInt() < 0 || tag.getInt() > 32767)
    return op->emitError("convert-loom-to-loomrt: point-to-point transfers "
                         "need a tag `loom.tag = N : i64` in [0, 32767] "
                         "(unique per direction within a step)");
  return std::make_pair(index.front(), tag.getInt());
}

FailureOr<StringRef> reductionName(shard::AllReduceOp allReduce) {
  switch (allReduce.getReduction()) {
  case shard::ReductionKind::Sum:
    return StringRef("sum");
  case shard::ReductionKind::Max:
    return StringRef("max");
  case shard::ReductionKind::Min:
    return StringRef("min");
  default:
    return failure();
  }
}

LogicalResult checkAllReduce(shard::AllReduceOp allReduce) {
  auto type = dyn_cast<RankedTensorType>(allReduce.getType());
  if (!type || !type.getElementType().isF32() ||
      allReduce.getInput().getType() != allReduce.getType())
    return allReduce.emitError("convert-loom-to-loomrt: the runtime "
                               "all-reduces f32 tensors of an unchanged type");
  if (failed(checkMeshAxis(allReduce, allReduce.getGridAttr(),
                           allReduce.getGridAxes())))
    return failure();
  if (failed(reductionName(allReduce)))
    return allReduce.emitError("convert-loom-to-loomrt: the runtime "
                               "all-reduces with sum, max or min");
  return success();
}

LogicalResult checkSend(shard::SendOp send) {
  if (failed(pointToPoint(send, send.getGridAxes(), send.getDestination(),
                          send.getDestinationDynamic().size())) ||
      failed(checkMeshAxis(send, send.getGridAttr(), send.getGridAxes())))
    return failure();
  if (!send.getResult().use_empty())
    return send.emitError("convert-loom-to-loomrt: the result of shard.send "
                          "is used; the runtime's send has no result");
  return success();
}

LogicalResult checkRecv(shard::RecvOp recv) {
  std::optional<ArrayRef<int64_t>> sourceIndex = recv.getSource();
  if (!sourceIndex)
    return recv.emitError("convert-loom-to-loomrt: shard.recv needs a static "
                          "source");
  if (failed(pointToPoint(recv, recv.getGridAxes(), *sourceIndex,
                          recv.getSourceDynamic().size())))
    return failure();
  return checkMeshAxis(recv, recv.getGridAttr(), recv.getGridAxes());
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

/// Start on a copy (the operand may be read again), wait before the first
/// use: compute between the two overlaps the transfer.
class AllReducePattern : public LoweringPattern<shard::AllReduceOp> {
public:
  using LoweringPattern::LoweringPattern;

  LogicalResult lower(shard::AllReduceOp allReduce, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = allReduce.getLoc();
    Value out = define(allReduce.getResult(), rewriter);
    createDenseCopy(rewriter, loc, adaptor.getInput(), out,
                    rewriter.getStringAttr("all_reduce"));
    Value handle = loomrt::AllReduceStartOp::create(
        rewriter, loc, loomrt::HandleType::get(rewriter.getContext()), out,
        rewriter.getStringAttr(*reductionName(allReduce)),
        allReduce.getGridAttr(), allReduce.getGridAxesAttr(),
        allReduce->hasAttr(LoomDialect::getRowSparseAttrName())
            ? rewriter.getUnitAttr()
            : UnitAttr());
    state.addPendingValue(allReduce.getResult(), handle);
    rewriter.replaceOp(allReduce, out);
    return success();
  }
};

/// Send a copy (the operand's buffer may be overwritten before the transfer
/// completes), wait at the end of the step.
class SendPattern : public LoweringPattern<shard::SendOp> {
public:
  using LoweringPattern::LoweringPattern;

  LogicalResult lower(shard::SendOp send, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = send.getLoc();
    auto [peer, tag] = *pointToPoint(send, send.getGridAxes(),
                                     send.getDestination(),
                                     send.getDestinationDynamic().size());
    Value copy = loomrt::AllocOp::create(
        rewriter, loc, bufferType(send.getInput().getType()),
        rewriter.getStringAttr(categoryOf(send)), IntegerAttr());
    createDenseCopy(rewriter, loc, adaptor.getInput(), copy,
                    rewriter.getStringAttr("send"));
    state.addPendingSend(loomrt::SendStartOp::create(
        rewriter, loc, loomrt::HandleType::get(rewriter.getContext()), copy,
        send.getGridAttr(), send.getGridAxesAttr(),
        rewriter.getI64IntegerAttr(peer), rewriter.getI64IntegerAttr(tag)));
    // Its result is unused (checked): it gets no buffer.
    rewriter.eraseOp(send);
    return success();
  }
};

/// Receive into the result's buffer, wait before the first use. The operand
/// only gives the type.
class RecvPattern : public LoweringPattern<shard::RecvOp> {
public:
  using LoweringPattern::LoweringPattern;

  LogicalResult lower(shard::RecvOp recv, OpAdaptor,
                      ConversionPatternRewriter &rewriter) const override {
    auto [peer, tag] = *pointToPoint(recv, recv.getGridAxes(),
                                     *recv.getSource(),
                                     recv.getSourceDynamic().size());
    Value out = define(recv.getResult(), rewriter);
    Value handle = loomrt::RecvStartOp::create(
        rewriter, recv.getLoc(), loomrt::HandleType::get(rewriter.getContext()),
        out, recv.getGridAttr(), recv.getGridAxesAttr(),
        rewriter.getI64IntegerAttr(peer), rewriter.getI64IntegerAttr(tag));
    state.addPendingValue(recv.getResult(), handle);
    rewriter.replaceOp(recv, out);
    return success();
  }
};

class GridIndexPattern : public LoweringPattern<GridIndexOp> {
public:
  using LoweringPattern::LoweringPattern;

  LogicalResult lower(GridIndexOp index, OpAdaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Value out = define(index.getResult(), rewriter);
    loomrt::GridIndexOp::create(rewriter, index.getLoc(), out,
                                index.getGridAttr(), index.getGridAxesAttr());
    rewriter.replaceOp(index, out);
    return success();
  }
};

} // namespace

LogicalResult loom_to_loomrt::checkCommunicationOp(Operation *op) {
  if (auto allReduce = dyn_cast<shard::AllReduceOp>(op))
    return checkAllReduce(allReduce);
  if (auto send = dyn_cast<shard::SendOp>(op))
    return checkSend(send);
  if (auto recv = dyn_cast<shard::RecvOp>(op))
    return checkRecv(recv);
  if (auto index = dyn_cast<GridIndexOp>(op))
    return checkMeshAxis(op, index.getGridAttr(), index.getGridAxes());
  return success();
}

void loom_to_loomrt::populateCommunicationPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns,
    LoweringState &state) {
  patterns.add<AllReducePattern, SendPattern, RecvPattern, GridIndexPattern>(
      converter, patterns.getContext(), state);
}

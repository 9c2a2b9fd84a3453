//===- FuseElementwise.cpp - Mark the elementwise fusion groups -----------===//
//
// Implements -loom-fuse-elementwise (see Passes.td for the contract): the
// fusion groups convert-loom-to-loomrt turns into one loomrt.kernel each,
// written into the IR as `loom.fused` on every member but the last.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomInterfaces.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <functional>
#include <limits>

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_LOOMFUSEELEMENTWISE
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;

namespace {

bool isElementwise(Operation *op) {
  return op->hasTrait<::mlir::loom::OpTrait::ElementwiseMapping>();
}

bool isMarked(Operation *op) {
  return op->hasAttr(LoomDialect::FusedAttrHelper::getNameStr());
}

/// What the loop computing `producer` reads for it: its group (it and the
/// marked ops feeding it, each once) and the values the group reads from
/// outside, less broadcasts (a smaller tensor, read through strides) and
/// splat constants (scalars).
struct GroupReads {
  llvm::SetVector<Operation *> members;
  llvm::SetVector<Value> inputs;
};
GroupReads groupReads(Operation *producer) {
  GroupReads reads;
  reads.members.insert(producer);
  for (size_t i = 0; i < reads.members.size(); ++i)
    for (Value operand : reads.members[i]->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && isMarked(def)) {
        reads.members.insert(def);
        continue;
      }
      if (isa_and_nonnull<BroadcastOp>(def))
        continue;
      if (auto constant = dyn_cast_or_null<ConstantOp>(def)) {
        auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
        if (dense && dense.isSplat())
          continue;
      }
      reads.inputs.insert(operand);
    }
  return reads;
}

struct LoomFuseElementwisePass
    : public mlir::loom::impl::LoomFuseElementwiseBase<LoomFuseElementwisePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Block &body = func.getBody().front();
    // A returned value is written into its result buffer, not computed in
    // its user's loop.
    DenseSet<Value> returned;
    if (auto ret = dyn_cast<func::ReturnOp>(body.getTerminator()))
      returned.insert(ret.operand_begin(), ret.operand_end());
    // A producer joins its user's group (and brings its own group along)
    // when the user is its only reader; nothing moves, so where the program
    // reads each value stays where it was.
    MLIRContext *ctx = func.getContext();
    LoomDialect::FusedAttrHelper fused(ctx);
    // Positions, and how many ops that compute (not elementwise, not a
    // constant, broadcast or other op without flops) come before each:
    // whether other work runs between a producer and its user.
    DenseMap<Operation *, int64_t> position;
    SmallVector<int64_t> others{0};
    for (Operation &op : body) {
      position[&op] = others.size() - 1;
      auto cost = dyn_cast<CostInterface>(&op);
      bool work = !isElementwise(&op) &&
                  (!cost || cost.getFlopCount().value_or(0) > 0) &&
                  !op.hasTrait<::mlir::OpTrait::ConstantLike>() &&
                  !op.hasTrait<::mlir::OpTrait::IsTerminator>() &&
                  !isa<BroadcastOp, ReshapeOp>(op);
      others.push_back(others.back() + (work ? 1 : 0));
    }
    auto lastReader = [&](Value v) {
      int64_t last = -1;
      for (Operation *user : v.getUsers())
        if (Operation *top = body.findAncestorOpInBlock(*user))
          last = std::max(last, position.lookup(top));
      return last;
    };
    // Computing `producer` in `user`'s loop keeps the producer's inputs
    // live until the user instead of its result. Where other work runs
    // in between and the inputs that die at the producer outweigh its
    // result (a gradient accumulated over micro-batches: acc + g_m, apart
    // by micro-batch m+1's backward), fusing would keep every term live
    // until the last sum; the result is materialized instead.
    auto extendsLiveRanges = [&](Operation *producer, Operation *user) {
      int64_t p = position.lookup(producer), u = position.lookup(user);
      if (others[u] == others[p + 1])
        return false;
      std::optional<int64_t> resultBytes =
          mlir::loom::detail::getNumBytes(producer->getResult(0).getType());
      int64_t dying = 0;
      for (Value input : llvm::SetVector<Value>(producer->operand_begin(),
                                                producer->operand_end()))
        if (lastReader(input) == p)
          dying += mlir::loom::detail::getNumBytes(input.getType()).value_or(0);
      return resultBytes && dying > *resultBytes;
    };
    // A group fused into a reduction reads its inputs at the reduced
    // tensor's index: no broadcast (but of a splat: a scalar) and no
    // transpose may feed it.
    std::function<bool(Operation *)> readsDense = [&](Operation *member) {
      for (Value operand : member->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (def && isMarked(def)) {
          if (!readsDense(def))
            return false;
          continue;
        }
        Value source = operand;
        if (auto bcast = dyn_cast_or_null<BroadcastOp>(def))
          source = bcast.getOperand();
        if (auto constant = source.getDefiningOp<ConstantOp>()) {
          auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
          if (dense && dense.isSplat())
            continue;
        }
        if (isa_and_nonnull<BroadcastOp, TransposeOp>(def))
          return false;
      }
      return true;
    };
    for (Operation &op : body) {
      if (isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>(op)) {
        Value operand = op.getOperand(0);
        Operation *producer = operand.getDefiningOp();
        if (producer && producer->getBlock() == &body &&
            isElementwise(producer) && operand.hasOneUse() &&
            !returned.contains(operand) && readsDense(producer) &&
            !extendsLiveRanges(producer, &op))
          fused.setAttr(producer, UnitAttr::get(ctx));
        continue;
      }
      if (!isElementwise(&op))
        continue;
      for (Value operand : op.getOperands()) {
        Operation *producer = operand.getDefiningOp();
        if (!producer || producer->getBlock() != &body ||
            !isElementwise(producer) || !operand.hasOneUse() ||
            returned.contains(operand) ||
            cast<ShapedType>(operand.getType()).getShape() !=
                cast<ShapedType>(op.getResult(0).getType()).getShape() ||
            extendsLiveRanges(producer, &op))
          continue;
        fused.setAttr(producer, UnitAttr::get(ctx));
      }
    }
    // Computing a shared value in its readers' loops moves the reads of
    // its group's inputs to the last of those loops: not past other work
    // when that outlives inputs' last readers and they are at least as
    // large as the buffer saved (they would stay live across it). A bf16
    // gradient widened for the optimizer (read twice, by the two moments'
    // updates, after the rest of the backward pass) is half its f32 buffer:
    // it is widened in the update's loops.
    auto keepsInputsLive = [&](Operation *producer, int64_t until) {
      int64_t kept = 0;
      for (Value input : groupReads(producer).inputs) {
        // A constant lives throughout.
        if (input.getDefiningOp<ConstantOp>())
          continue;
        int64_t last = lastReader(input);
        if (last < until && others[until] != others[last + 1])
          kept += mlir::loom::detail::getNumBytes(input.getType())
                      .value_or(std::numeric_limits<int64_t>::max() / 4);
      }
      std::optional<int64_t> saved =
          mlir::loom::detail::getNumBytes(producer->getResult(0).getType());
      return kept > 0 && (!saved || kept >= *saved);
    };
    fuseSharedProducers(body, returned, position, readsDense,
                        keepsInputsLive);
  }

  /// The second rule: an elementwise value with several readers, all of
  /// which compute it in their loops. In reverse program order, so that
  /// every reader's group is final when its producer is decided.
  template <typename ReadsDense, typename KeepsInputsLive>
  void fuseSharedProducers(Block &body, const DenseSet<Value> &returned,
                           const DenseMap<Operation *, int64_t> &position,
                           ReadsDense &readsDense,
                           KeepsInputsLive &keepsInputsLive) {
    MLIRContext *ctx = body.getParentOp()->getContext();
    LoomDialect::FusedAttrHelper fused(ctx);
    // The roots whose loops compute `op`: itself when unmarked, else the
    // roots of its readers.
    using Roots = SmallVector<Operation *, 2>;
    DenseMap<Operation *, Roots> rootCache;
    std::function<Roots(Operation *)> rootsOf = [&](Operation *op) {
      if (auto it = rootCache.find(op); it != rootCache.end())
        return it->second;
      llvm::SetVector<Operation *, Roots> roots;
      if (!isMarked(op))
        roots.insert(op);
      else
        for (Operation *user : op->getResult(0).getUsers())
          for (Operation *root : rootsOf(user))
            roots.insert(root);
      Roots result = roots.takeVector();
      rootCache[op] = result;
      return result;
    };
    for (Operation &op : llvm::reverse(body)) {
      if (!isElementwise(&op) || op.getNumResults() != 1 || isMarked(&op))
        continue;
      Value result = op.getResult(0);
      if (result.hasOneUse() || result.use_empty() || returned.contains(result))
        continue;
      auto shape = cast<ShapedType>(result.getType()).getShape();
      bool readersFuse = llvm::all_of(result.getUsers(), [&](Operation *user) {
        if (user->getBlock() != &body)
          return false;
        if (isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>(user))
          return true;
        return isElementwise(user) && user->getNumResults() == 1 &&
               cast<ShapedType>(user->getResult(0).getType()).getShape() ==
                   shape;
      });
      if (!readersFuse)
        continue;
      llvm::SetVector<Operation *> roots;
      for (Operation *user : result.getUsers())
        for (Operation *root : rootsOf(user))
          roots.insert(root);
      // A reduction reads the group it computes densely (no strides).
      if (llvm::any_of(roots,
                       [](Operation *root) {
                         return isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>(
                             root);
                       }) &&
          !readsDense(&op))
        continue;
      int64_t latest = 0;
      for (Operation *root : roots)
        latest = std::max(latest, position.lookup(root));
      if (keepsInputsLive(&op, latest))
        continue;
      // One loop computes every reader (a diamond): the value is computed
      // once there. Several loops each compute it again: only cheap
      // arithmetic on few inputs, where a materialized buffer costs more
      // than recomputing.
      if (roots.size() > 1 && !cheapToRepeat(&op, roots.size()))
        continue;
      // (No cached roots change: only ops after this one were asked.)
      fused.setAttr(&op, UnitAttr::get(ctx));
    }
  }

  /// Whether `op`'s group (it and the marked ops feeding it) is cheap enough
  /// for `copies` loops to compute it each: at most four arithmetic ops
  /// without a transcendental or a division, whose dense inputs, read by
  /// every copy, cost no more than the buffer they save (written once, read
  /// `copies` times): inputs * (copies - 1) <= copies + 1.
  static bool cheapToRepeat(Operation *op, size_t copies) {
    GroupReads reads = groupReads(op);
    return reads.members.size() <= 4 &&
           llvm::all_of(reads.members,
                        [](Operation *member) {
                          return isa<AddOp, SubOp, MulOp, NegOp, AbsOp, MaxOp,
                                     MinOp, SelectOp, CompareOp, ConvertOp>(
                              member);
                        }) &&
           reads.inputs.size() * (copies - 1) <= copies + 1;
  }
};

} // namespace

//===- FoldDotTranspose.cpp - Transposed products computed directly -------===//
//
// Implements -loom-fold-dot-transpose (see Passes.td for the contract):
// transpose(dot_general(a, b)) with the free-dimension groups swapped is
// dot_general(b, a).
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_LOOMFOLDDOTTRANSPOSE
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;

namespace {

/// Whether `perm` maps dot_general's result order (batch, lhs free, rhs
/// free) to (batch, rhs free, lhs free).
bool swapsFreeGroups(ArrayRef<int64_t> perm, int64_t batch, int64_t lhsFree,
                     int64_t rhsFree) {
  if (static_cast<int64_t>(perm.size()) != batch + lhsFree + rhsFree ||
      lhsFree == 0 || rhsFree == 0)
    return false;
  SmallVector<int64_t> expected;
  for (int64_t d = 0; d < batch; ++d)
    expected.push_back(d);
  for (int64_t d = 0; d < rhsFree; ++d)
    expected.push_back(batch + lhsFree + d);
  for (int64_t d = 0; d < lhsFree; ++d)
    expected.push_back(batch + d);
  return perm == ArrayRef<int64_t>(expected);
}

struct LoomFoldDotTransposePass
    : public mlir::loom::impl::LoomFoldDotTransposeBase<
          LoomFoldDotTransposePass> {
  void runOnOperation() override {
    SmallVector<TransposeOp> candidates;
    getOperation().walk([&](TransposeOp transpose) {
      auto dot = transpose.getOperand().getDefiningOp<DotGeneralOp>();
      if (!dot || !dot.getResult().hasOneUse())
        return;
      int64_t batch = dot.getLhsBatchingDims().size();
      int64_t contracting = dot.getLhsContractingDims().size();
      int64_t lhsFree =
          cast<ShapedType>(dot.getLhs().getType()).getRank() - batch -
          contracting;
      int64_t rhsFree =
          cast<ShapedType>(dot.getRhs().getType()).getRank() - batch -
          contracting;
      if (swapsFreeGroups(transpose.getPermutation(), batch, lhsFree, rhsFree))
        candidates.push_back(transpose);
    });
    for (TransposeOp transpose : candidates) {
      auto dot = transpose.getOperand().getDefiningOp<DotGeneralOp>();
      OpBuilder builder(dot);
      auto swapped = DotGeneralOp::create(
          builder, dot.getLoc(), transpose.getType(), dot.getRhs(),
          dot.getLhs(), dot.getRhsBatchingDimsAttr(),
          dot.getLhsBatchingDimsAttr(), dot.getRhsContractingDimsAttr(),
          dot.getLhsContractingDimsAttr());
      // Discardable attributes (layer marks, pipeline stages) stay.
      for (NamedAttribute attr : dot->getDiscardableAttrs())
        swapped->setAttr(attr.getName(), attr.getValue());
      transpose.getResult().replaceAllUsesWith(swapped.getResult());
      transpose.erase();
      dot.erase();
    }
  }
};

} // namespace

//===- NormGradFusion.cpp - A norm's gradient fused with its neighbours ---===//
//
// Implements -loom-fuse-norm-grad (see Passes.td for the contract): a
// loomrt.norm_grad reads the bf16 buffer its f32 cotangent was widened from,
// and adds its input gradient onto the residual gradient that a kernel
// after it added it to.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/LoomRT/IR/LoomRTDialect.h"
#include "loom/Dialect/LoomRT/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace loomrt {
#define GEN_PASS_DEF_LOOMFUSENORMGRAD
#include "loom/Dialect/LoomRT/Transforms/Passes.h.inc"
} // namespace loomrt
} // namespace mlir

using namespace mlir;

namespace {

/// Whether `kernel` widens its one bf16 input to f32 at the element it
/// writes, into a buffer of the input's shape.
bool isWidening(loomrt::KernelOp kernel) {
  Builder b(kernel.getContext());
  auto shape = [](Value v) { return cast<MemRefType>(v.getType()).getShape(); };
  return loomrt::isConversionKernel(kernel, b.getBF16Type(),
                                    b.getF32Type()) &&
         shape(kernel.getIns()[0]) == shape(kernel.getOuts()[0]);
}

/// Whether `kernel` adds its two f32 inputs at the element it writes, into
/// a buffer of their type.
bool isAdd(loomrt::KernelOp kernel) {
  if (kernel.getIns().size() != 2 || kernel.getOuts().size() != 1 ||
      !loomrt::readsDensely(kernel) || !loomrt::isPlainAdd(kernel))
    return false;
  Type type = kernel.getOuts()[0].getType();
  return cast<MemRefType>(type).getElementType().isF32() &&
         kernel.getIns()[0].getType() == type &&
         kernel.getIns()[1].getType() == type;
}

/// The users of `buffer` other than its deallocs, when it is an alloc in
/// `block` that no view reads; else none.
SmallVector<Operation *> usersOfAlloc(Value buffer, Block *block) {
  auto alloc = buffer.getDefiningOp<loomrt::AllocOp>();
  if (!alloc || alloc->getBlock() != block)
    return {};
  SmallVector<Operation *> users;
  for (Operation *user : buffer.getUsers()) {
    if (isa<loomrt::ViewOp>(user))
      return {};
    if (!isa<loomrt::DeallocOp>(user))
      users.push_back(user);
  }
  return users;
}

void eraseDeallocs(Value buffer) {
  for (Operation *user : llvm::make_early_inc_range(buffer.getUsers()))
    if (isa<loomrt::DeallocOp>(user))
      user->erase();
}

/// Folds the widening of `grad`'s cotangent into it (Passes.td).
void foldWidening(loomrt::NormGradOp grad) {
  Value wide = grad.getCotangent();
  SmallVector<Operation *> users = usersOfAlloc(wide, grad->getBlock());
  if (users.size() != 2)
    return;
  auto widening = dyn_cast<loomrt::KernelOp>(
      users[0] == grad.getOperation() ? users[1] : users[0]);
  if (!widening || widening.getOuts()[0] != wide ||
      !widening->isBeforeInBlock(grad) || !isWidening(widening))
    return;
  Value narrow = widening.getIns()[0];
  Value root = loomrt::rootBuffer(narrow);
  if (loomrt::touchedBetween(widening, grad, {root}))
    return;
  // The bf16 buffer now lives until the norm_grad has read it.
  for (Operation *user : root.getUsers())
    if (isa<loomrt::DeallocOp>(user) && user->getBlock() == grad->getBlock() &&
        user->isBeforeInBlock(grad))
      user->moveAfter(grad);
  grad.getCotangentMutable().assign(narrow);
  widening.erase();
  eraseDeallocs(wide);
  wide.getDefiningOp()->erase();
}

/// Folds the add of `grad`'s input gradient to a residual gradient into it
/// (Passes.td).
void foldResidualAdd(loomrt::NormGradOp grad) {
  if (grad.getResidual())
    return;
  Value dx = grad.getInputGrad();
  SmallVector<Operation *> users = usersOfAlloc(dx, grad->getBlock());
  if (users.size() != 2)
    return;
  auto add = dyn_cast<loomrt::KernelOp>(
      users[0] == grad.getOperation() ? users[1] : users[0]);
  if (!add || !grad->isBeforeInBlock(add) || !isAdd(add) ||
      add.getIns()[0] == add.getIns()[1])
    return;
  Value residual = add.getIns()[add.getIns()[0] == dx ? 1 : 0];
  Value sum = add.getOuts()[0];
  if (!usersOfAlloc(sum, add->getBlock()).size() ||
      sum.getType() != dx.getType())
    return;
  // The residual is read where the norm_grad runs: defined before it, and
  // written by nothing between; the sum's buffer is the input gradient's
  // from the norm_grad on, so nothing between may touch it.
  Operation *def = residual.getDefiningOp();
  if (def && (def->getBlock() != grad->getBlock() ||
              !def->isBeforeInBlock(grad)))
    return;
  if (loomrt::touchedBetween(grad, add, {loomrt::rootBuffer(residual)}) ||
      loomrt::touchedBetween(grad, add, {sum}, /*orRead=*/true))
    return;
  grad.getResidualMutable().assign(residual);
  add.erase();
  eraseDeallocs(dx);
  Operation *alloc = sum.getDefiningOp();
  sum.replaceAllUsesWith(dx);
  alloc->erase();
}

struct LoomFuseNormGrad
    : public loomrt::impl::LoomFuseNormGradBase<LoomFuseNormGrad> {
  void runOnOperation() override {
    SmallVector<loomrt::NormGradOp> grads;
    getOperation().walk(
        [&](loomrt::NormGradOp grad) { grads.push_back(grad); });
    for (loomrt::NormGradOp grad : grads) {
      foldWidening(grad);
      foldResidualAdd(grad);
    }
  }
};

} // namespace

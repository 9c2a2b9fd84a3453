//===- InPlaceUpdates.cpp - Updated state written over the old ------------===//
//
// Implements -loom-in-place-updates (see Passes.td for the contract): a
// result that replaces an argument after the step shares its buffer when
// the update kernel is the argument's last reader and the result's first
// writer.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/LoomRT/IR/LoomRTDialect.h"
#include "loom/Dialect/LoomRT/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace loomrt {
#define GEN_PASS_DEF_LOOMINPLACEUPDATES
#include "loom/Dialect/LoomRT/Transforms/Passes.h.inc"
} // namespace loomrt
} // namespace mlir

using namespace mlir;

namespace {

/// The ops of `block` (not views) that use one of `aliases`; with, for an
/// op that starts a transfer (returns a handle), the waits on it, which
/// end its use.
SmallVector<Operation *> usersOf(ArrayRef<Value> aliases) {
  SmallVector<Operation *> users;
  for (Value alias : aliases)
    for (Operation *user : alias.getUsers()) {
      if (isa<loomrt::ViewOp>(user))
        continue;
      users.push_back(user);
      for (Value result : user->getResults())
        if (isa<loomrt::HandleType>(result.getType()))
          llvm::append_range(users, result.getUsers());
    }
  return users;
}

/// Whether `kernel` reads every input in `aliases` at the element it
/// writes: no strides of its own and as many elements as the loop.
bool readsInPlace(loomrt::KernelOp kernel, ArrayRef<Value> aliases) {
  auto loopType = cast<MemRefType>(kernel.getOuts().front().getType());
  for (auto [k, in] : llvm::enumerate(kernel.getIns())) {
    if (!llvm::is_contained(aliases, in))
      continue;
    if (cast<MemRefType>(in.getType()).getNumElements() !=
            loopType.getNumElements() ||
        !loomrt::readsAtWrittenElement(kernel, k))
      return false;
  }
  return true;
}

/// Whether result argument `result`, which replaces argument `arg`, can be
/// written into `arg`'s buffer.
bool canShare(BlockArgument arg, BlockArgument result) {
  if (arg.getType() != result.getType())
    return false;
  SmallVector<Value> resultAliases = loomrt::aliasesOf(result);
  SmallVector<Value> argAliases = loomrt::aliasesOf(arg);
  // The update: the first op that writes the result, a kernel.
  loomrt::KernelOp update;
  SmallVector<Operation *> resultUsers = usersOf(resultAliases);
  for (Operation *user : resultUsers) {
    auto kernel = dyn_cast<loomrt::KernelOp>(user);
    if (!kernel || !llvm::any_of(kernel.getOuts(), [&](Value out) {
          return llvm::is_contained(resultAliases, out);
        }))
      continue;
    if (!update || kernel->isBeforeInBlock(update))
      update = kernel;
  }
  if (!update || update->getBlock() != arg.getOwner())
    return false;
  // Nothing touches the result before the update...
  for (Operation *user : resultUsers)
    if (user != update && (user->getBlock() != update->getBlock() ||
                           user->isBeforeInBlock(update)))
      return false;
  // ... nor reads the argument after it (or in it, elsewhere than in place).
  for (Operation *user : usersOf(argAliases)) {
    if (user == update)
      continue;
    if (user->getBlock() != update->getBlock() ||
        !user->isBeforeInBlock(update))
      return false;
  }
  return readsInPlace(update, argAliases);
}

struct LoomInPlaceUpdatesPass
    : public mlir::loomrt::impl::LoomInPlaceUpdatesBase<
          LoomInPlaceUpdatesPass> {
  void runOnOperation() override {
    StringRef updates = mlir::loom::LoomDialect::getUpdatesAttrName();
    getOperation().walk([&](func::FuncOp func) {
      if (func.isExternal())
        return;
      for (unsigned i = 0; i < func.getNumArguments(); ++i) {
        if (!func.getArgAttr(i, "loomrt.result"))
          continue;
        auto target = func.getArgAttrOfType<IntegerAttr>(i, updates);
        if (!target || target.getInt() < 0 ||
            target.getInt() >= static_cast<int64_t>(func.getNumArguments()))
          continue;
        if (canShare(func.getArgument(target.getInt()), func.getArgument(i)))
          func.setArgAttr(i, "loomrt.in_place",
                          UnitAttr::get(func.getContext()));
      }
    });
  }
};

} // namespace

//===- NormNarrowing.cpp - Norms that write their bf16 rounding -----------===//
//
// Implements -loom-fuse-norm-narrowing (see Passes.td for the contract): a
// layer or RMS norm whose f32 output only conversions to bf16 read writes
// one bf16 buffer itself, which those conversions' readers share.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/LoomRT/IR/LoomRTDialect.h"
#include "loom/Dialect/LoomRT/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace loomrt {
#define GEN_PASS_DEF_LOOMFUSENORMNARROWING
#include "loom/Dialect/LoomRT/Transforms/Passes.h.inc"
} // namespace loomrt
} // namespace mlir

using namespace mlir;

namespace {

/// Whether `kernel` is a conversion of its one input from f32 to bf16 at
/// the element it writes, into one buffer of as many elements.
bool isNarrowing(loomrt::KernelOp kernel) {
  Builder b(kernel.getContext());
  return loomrt::isConversionKernel(kernel, b.getF32Type(), b.getBF16Type());
}

/// Whether an op other than `writer` may write `root` (through views).
bool writtenBesides(Value root, Operation *writer) {
  for (Value alias : loomrt::aliasesOf(root))
    for (Operation *user : alias.getUsers()) {
      if (user == writer || isa<loomrt::ViewOp>(user))
        continue;
      auto effects = dyn_cast<MemoryEffectOpInterface>(user);
      if (!effects)
        return true;
      SmallVector<MemoryEffects::EffectInstance> list;
      effects.getEffectsOnValue(alias, list);
      if (llvm::any_of(list, [](const MemoryEffects::EffectInstance &e) {
            return isa<MemoryEffects::Write>(e.getEffect());
          }))
        return true;
    }
  return false;
}

/// The conversions that are the only users of `norm`'s output, in order,
/// when they fuse (Passes.td); else none.
SmallVector<loomrt::KernelOp> narrowingsOf(loomrt::LayerNormOp norm) {
  Value output = norm.getOutput();
  if (!output.getDefiningOp<loomrt::AllocOp>())
    return {};
  SmallVector<loomrt::KernelOp> narrowings;
  for (Operation *user : output.getUsers()) {
    if (user == norm.getOperation())
      continue;
    auto narrowing = dyn_cast<loomrt::KernelOp>(user);
    if (!narrowing || narrowing->getBlock() != norm->getBlock() ||
        !norm->isBeforeInBlock(narrowing) || !isNarrowing(narrowing) ||
        narrowing.getIns()[0] != output)
      return {};
    narrowings.push_back(narrowing);
  }
  llvm::sort(narrowings, [](loomrt::KernelOp a, loomrt::KernelOp b) {
    return a->isBeforeInBlock(b);
  });
  for (auto [k, narrowing] : llvm::enumerate(narrowings)) {
    Value narrow = loomrt::rootBuffer(narrowing.getOuts()[0]);
    // The norm writes the first one's buffer earlier than it did; the
    // others are that buffer, which nothing else may write.
    if (loomrt::touchedBetween(norm, narrowing, {narrow}, /*orRead=*/true) ||
        writtenBesides(narrow, narrowing))
      return {};
    auto alloc = narrow.getDefiningOp<loomrt::AllocOp>();
    if (k == 0 ? alloc && alloc->getBlock() != norm->getBlock()
               : !alloc || narrow != narrowing.getOuts()[0] ||
                     narrow.getType() !=
                         narrowings[0].getOuts()[0].getType())
      return {};
  }
  return narrowings;
}

struct LoomFuseNormNarrowing
    : public loomrt::impl::LoomFuseNormNarrowingBase<LoomFuseNormNarrowing> {
  void runOnOperation() override {
    SmallVector<loomrt::LayerNormOp> norms;
    getOperation().walk([&](loomrt::LayerNormOp norm) { norms.push_back(norm); });
    for (loomrt::LayerNormOp norm : norms) {
      SmallVector<loomrt::KernelOp> narrowings = narrowingsOf(norm);
      if (narrowings.empty())
        continue;
      Value narrow = narrowings.front().getOuts()[0];
      // Its alloc and views, when after the norm, move before it.
      SmallVector<Operation *> defs;
      for (Value v = narrow; Operation *def = v.getDefiningOp();) {
        defs.push_back(def);
        auto view = dyn_cast<loomrt::ViewOp>(def);
        if (!view)
          break;
        v = view.getSource();
      }
      for (Operation *def : llvm::reverse(defs))
        if (norm->isBeforeInBlock(def))
          def->moveBefore(norm);
      Operation *wide = norm.getOutput().getDefiningOp();
      norm.getOutputMutable().assign(narrow);
      // The other conversions' buffers are the first one's.
      for (loomrt::KernelOp other : llvm::drop_begin(narrowings)) {
        Value copy = other.getOuts()[0];
        Operation *alloc = copy.getDefiningOp();
        other.erase();
        copy.replaceAllUsesWith(narrow);
        alloc->erase();
      }
      narrowings.front().erase();
      wide->erase();
    }
  }
};

} // namespace

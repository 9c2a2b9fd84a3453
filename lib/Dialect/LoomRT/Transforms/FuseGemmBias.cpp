//===- FuseGemmBias.cpp - A linear layer's bias as a gemm epilogue --------===//
//
// Implements -loom-fuse-gemm-bias (see Passes.td for the contract): a
// gemm whose product only a broadcast bias add reads writes the sum
// itself, in the add's output.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/LoomRT/IR/LoomRTDialect.h"
#include "loom/Dialect/LoomRT/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace loomrt {
#define GEN_PASS_DEF_LOOMFUSEGEMMBIAS
#include "loom/Dialect/LoomRT/Transforms/Passes.h.inc"
} // namespace loomrt
} // namespace mlir

using namespace mlir;

namespace {

/// Whether the body of `kernel` is one addf of its two arguments.
bool isPlainAdd(loomrt::KernelOp kernel) {
  Block &body = kernel.getBody().front();
  if (body.getNumArguments() != 2 || !llvm::hasNItems(body, 2))
    return false;
  auto add = dyn_cast<arith::AddFOp>(body.front());
  auto yield = dyn_cast<loomrt::YieldOp>(body.back());
  if (!add || !yield || yield.getValues().size() != 1 ||
      yield.getValues()[0] != add.getResult())
    return false;
  Value x = add.getLhs(), y = add.getRhs();
  return x != y && llvm::is_contained(body.getArguments(), x) &&
         llvm::is_contained(body.getArguments(), y);
}

/// Whether an op strictly between `from` and `to` (one block) may write
/// one of `buffers` (roots), or has effects it does not declare.
bool writtenBetween(Operation *from, Operation *to, ArrayRef<Value> buffers) {
  for (Operation *op = from->getNextNode(); op && op != to;
       op = op->getNextNode()) {
    if (isMemoryEffectFree(op))
      continue;
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects || op->getNumRegions() != 0)
      return true;
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (const MemoryEffects::EffectInstance &e : list) {
      if (!isa<MemoryEffects::Write>(e.getEffect()))
        continue;
      if (!e.getValue() ||
          llvm::is_contained(buffers, loomrt::rootBuffer(e.getValue())))
        return true;
    }
  }
  return false;
}

/// The bias add that is the only reader of `gemm`'s product, and which of
/// its inputs is the bias; null when the pair does not fuse.
std::pair<loomrt::KernelOp, unsigned> biasAddOf(loomrt::GemmOp gemm) {
  auto none = std::make_pair(loomrt::KernelOp(), 0u);
  if (gemm.getBias() || gemm.getBatch() != 1 || gemm.getBatchOuterAttr())
    return none;
  Value product = gemm.getC();
  auto productType = cast<MemRefType>(product.getType());
  if (!productType.getElementType().isF32() ||
      !product.getDefiningOp<loomrt::AllocOp>() ||
      !llvm::hasNItems(product.getUsers(), 2))
    return none;
  loomrt::KernelOp add;
  for (Operation *user : product.getUsers())
    if (user != gemm.getOperation())
      add = dyn_cast<loomrt::KernelOp>(user);
  if (!add || add->getBlock() != gemm->getBlock() ||
      !gemm->isBeforeInBlock(add) || add.getIns().size() != 2 ||
      add.getOuts().size() != 1 || !isPlainAdd(add))
    return none;

  unsigned productIndex = add.getIns()[0] == product ? 0 : 1;
  unsigned biasIndex = 1 - productIndex;
  Value bias = add.getIns()[biasIndex], out = add.getOuts()[0];
  auto biasType = cast<MemRefType>(bias.getType());
  auto outType = cast<MemRefType>(out.getType());
  ArrayRef<int64_t> loop = outType.getShape();
  auto n = static_cast<int64_t>(gemm.getN());
  if (add.getIns()[biasIndex] == product || outType != productType ||
      !out.getDefiningOp<loomrt::AllocOp>() || biasType.getRank() != 1 ||
      !biasType.getElementType().isF32() ||
      biasType.getDimSize(0) != n || loop.empty() || loop.back() != n)
    return none;

  // The product read at the element written, the bias along the last
  // dimension of the loop.
  ArrayAttr strides = add.getInStridesAttr();
  if (!strides)
    return none;
  SmallVector<int64_t> biasStrides(loop.size(), 0);
  biasStrides.back() = 1;
  auto stridesOf = [&](unsigned i) {
    return cast<DenseI64ArrayAttr>(strides[i]).asArrayRef();
  };
  if (stridesOf(productIndex) != ArrayRef(computeStrides(loop)) ||
      stridesOf(biasIndex) != ArrayRef(biasStrides))
    return none;

  SmallVector<Value> read{
      loomrt::rootBuffer(gemm.getA()), loomrt::rootBuffer(gemm.getB()),
      loomrt::rootBuffer(bias), loomrt::rootBuffer(out)};
  if (writtenBetween(gemm, add, read))
    return none;
  return {add, biasIndex};
}

struct FuseGemmBias
    : public mlir::loomrt::impl::LoomFuseGemmBiasBase<FuseGemmBias> {
  void runOnOperation() override {
    SmallVector<loomrt::GemmOp> gemms;
    getOperation().walk([&](loomrt::GemmOp gemm) { gemms.push_back(gemm); });
    for (loomrt::GemmOp gemm : gemms) {
      auto [add, biasIndex] = biasAddOf(gemm);
      if (!add)
        continue;
      OpBuilder builder(add);
      SmallVector<Value> operands{gemm.getA(), gemm.getB(), add.getOuts()[0],
                                  add.getIns()[biasIndex]};
      Operation *fused =
          builder.create(add.getLoc(), gemm->getName().getIdentifier(),
                         operands, TypeRange(), gemm->getAttrs());
      fused->setAttr(gemm.getOriginAttrName(),
                     builder.getStringAttr(gemm.getOrigin() + "+" +
                                           add.getOrigin()));
      Operation *product = gemm.getC().getDefiningOp();
      add.erase();
      gemm.erase();
      product->erase();
    }
  }
};

} // namespace

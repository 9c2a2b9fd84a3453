//===- GemmEpilogues.cpp - Work a gemm does as it writes its product ------===//
//
// Implements two passes (see Passes.td for their contracts):
// -loom-fuse-gemm-bias: a gemm whose product only a broadcast bias add
// reads writes the sum itself, in the add's output; a tanh GELU of that
// sum then becomes the gemm's output, the sum its gelu_input; a tanh GELU
// gradient that is the only reader of a product is applied by the gemm
// (dgelu_input).
// -loom-fuse-gemm-accumulate: a gemm whose product only a sum with a
// buffer nothing reads afterwards reads adds the product onto that buffer
// (accumulate, beta = 1), which then holds the sum.
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
#define GEN_PASS_DEF_LOOMFUSEGEMMACCUMULATE
#include "loom/Dialect/LoomRT/Transforms/Passes.h.inc"
} // namespace loomrt
} // namespace mlir

using namespace mlir;

namespace {

/// The kernel after `gemm` in its block that is the only other user of its
/// product, when `gemm` is the plain form of one f32 matrix (or bf16, with
/// `orBf16`) without an epilogue writing a loomrt.alloc; null otherwise.
loomrt::KernelOp soleReaderOfProduct(loomrt::GemmOp gemm,
                                     bool orBf16 = false) {
  if (gemm.getBias() || gemm.getGeluInput() || gemm.getDgeluInput() ||
      gemm.getAccumulate() || gemm.getBatch() != 1 ||
      gemm.getBatchOuterAttr())
    return nullptr;
  Value product = gemm.getC();
  Type element = cast<MemRefType>(product.getType()).getElementType();
  if (!(element.isF32() || (orBf16 && element.isBF16())) ||
      !product.getDefiningOp<loomrt::AllocOp>() ||
      !llvm::hasNItems(product.getUsers(), 2))
    return nullptr;
  loomrt::KernelOp reader;
  for (Operation *user : product.getUsers())
    if (user != gemm.getOperation())
      reader = dyn_cast<loomrt::KernelOp>(user);
  if (!reader || reader->getBlock() != gemm->getBlock() ||
      !gemm->isBeforeInBlock(reader))
    return nullptr;
  return reader;
}

/// The bias add that is the only reader of `gemm`'s product, and which of
/// its inputs is the bias; null when the pair does not fuse. f32, or bf16
/// (product, bias and sum): the runtimes' bf16 gemmBias sums in f32 and
/// rounds once, as the add's loop rounds its f32 sum.
std::pair<loomrt::KernelOp, unsigned> biasAddOf(loomrt::GemmOp gemm) {
  auto none = std::make_pair(loomrt::KernelOp(), 0u);
  loomrt::KernelOp add = soleReaderOfProduct(gemm, /*orBf16=*/true);
  if (!add || add.getIns().size() != 2 || add.getOuts().size() != 1 ||
      !loomrt::isPlainAdd(add))
    return none;
  Value product = gemm.getC();
  auto productType = cast<MemRefType>(product.getType());
  unsigned productIndex = add.getIns()[0] == product ? 0 : 1;
  unsigned biasIndex = 1 - productIndex;
  Value bias = add.getIns()[biasIndex], out = add.getOuts()[0];
  auto biasType = cast<MemRefType>(bias.getType());
  auto outType = cast<MemRefType>(out.getType());
  ArrayRef<int64_t> loop = outType.getShape();
  auto n = static_cast<int64_t>(gemm.getN());
  if (add.getIns()[biasIndex] == product || outType != productType ||
      !out.getDefiningOp<loomrt::AllocOp>() || biasType.getRank() != 1 ||
      biasType.getElementType() != productType.getElementType() ||
      biasType.getDimSize(0) != n || loop.empty() || loop.back() != n)
    return none;

  // The product read at the element written, the bias along the last
  // dimension of the loop.
  ArrayAttr strides = add.getInStridesAttr();
  if (!strides || add.getInOffsets())
    return none;
  SmallVector<int64_t> biasStrides(loop.size(), 0);
  biasStrides.back() = 1;
  auto stridesOf = [&](unsigned i) {
    return cast<DenseI64ArrayAttr>(strides[i]).asArrayRef();
  };
  if (stridesOf(productIndex) != ArrayRef(computeStrides(loop)) ||
      stridesOf(biasIndex) != ArrayRef(biasStrides))
    return none;

  // The fused gemm runs where the add did: nothing in between may write
  // its operands. The bias it reads there, as the add did (a bf16 program
  // narrows the f32 bias between the two).
  SmallVector<Value> read{loomrt::rootBuffer(gemm.getA()),
                          loomrt::rootBuffer(gemm.getB()),
                          loomrt::rootBuffer(out)};
  if (loomrt::touchedBetween(gemm, add, read))
    return none;
  return {add, biasIndex};
}

/// Whether a GELU or GELU-gradient kernel body is the tanh approximation:
/// it has no math.erf, which the exact form has and cuBLASLt does not
/// offer (convert-loom-to-loomrt writes the tanh form with an exp, as x
/// sigmoid(z)).
bool isTanhForm(Block &body) {
  return llvm::none_of(body, [](Operation &op) {
    return op.getName().getStringRef() == "math.erf";
  });
}

/// Whether the body of `kernel` is convert-loom-to-loomrt's loom.gelu
/// with approximate = tanh, alone: origin "gelu", the tanh form.
bool isTanhGelu(loomrt::KernelOp kernel) {
  if (kernel.getOrigin() != "gelu" || kernel.getIns().size() != 1 ||
      kernel.getOuts().size() != 1)
    return false;
  return isTanhForm(kernel.getBody().front());
}

/// The tanh GELU kernel that is the first reader of the product of `gemm`
/// (which has its bias epilogue), reading it densely; later readers (the
/// GELU's gradient) read the product as the fused gemm's gelu_input. Null
/// when the pair does not fuse.
loomrt::KernelOp geluOf(loomrt::GemmOp gemm) {
  if (!gemm.getBias() || gemm.getGeluInput())
    return nullptr;
  Value product = gemm.getC();
  if (!product.getDefiningOp<loomrt::AllocOp>())
    return nullptr;
  loomrt::KernelOp gelu;
  for (Operation *user : product.getUsers()) {
    if (user == gemm.getOperation())
      continue;
    auto kernel = dyn_cast<loomrt::KernelOp>(user);
    // Other readers (the backward pass) come after the activation.
    if (kernel && isTanhGelu(kernel) && kernel.getIns()[0] == product &&
        kernel->getBlock() == gemm->getBlock() &&
        gemm->isBeforeInBlock(kernel) &&
        (!gelu || kernel->isBeforeInBlock(gelu)))
      gelu = kernel;
  }
  if (!gelu)
    return nullptr;
  Value out = gelu.getOuts()[0];
  auto type = cast<MemRefType>(product.getType());
  // f32 only: no runtime has a bf16 gemmBiasGelu.
  if (!type.getElementType().isF32() || out.getType() != type ||
      !out.getDefiningOp<loomrt::AllocOp>())
    return nullptr;
  if (!loomrt::readsAtWrittenElement(gelu, 0))
    return nullptr;
  // The fused gemm runs where the activation did: nothing in between may
  // write its operands, nor touch the product or the activation.
  SmallVector<Value> written{loomrt::rootBuffer(gemm.getA()),
                             loomrt::rootBuffer(gemm.getB()),
                             loomrt::rootBuffer(gemm.getBias())};
  SmallVector<Value> touched{loomrt::rootBuffer(product),
                             loomrt::rootBuffer(out)};
  if (loomrt::touchedBetween(gemm, gelu, written) ||
      loomrt::touchedBetween(gemm, gelu, touched, /*orRead=*/true))
    return nullptr;
  return gelu;
}

/// The cotangent input of `kernel` when its body is convert-loom-to-
/// loomrt's loom.gelu_grad with approximate = tanh, alone: origin
/// "gelu_grad", two inputs, the tanh form, and the cotangent argument
/// times the derivative yielded. Null otherwise.
Value tanhGeluGradCotangent(loomrt::KernelOp kernel) {
  if (kernel.getOrigin() != "gelu_grad" || kernel.getIns().size() != 2 ||
      kernel.getOuts().size() != 1)
    return nullptr;
  Block &body = kernel.getBody().front();
  if (!isTanhForm(body))
    return nullptr;
  auto yield = dyn_cast<loomrt::YieldOp>(body.getTerminator());
  if (!yield || yield.getValues().size() != 1)
    return nullptr;
  auto mul = yield.getValues()[0].getDefiningOp<arith::MulFOp>();
  auto arg = mul ? dyn_cast<BlockArgument>(mul.getLhs()) : nullptr;
  if (!arg || arg.getOwner() != &body)
    return nullptr;
  return kernel.getIns()[arg.getArgNumber()];
}

/// The tanh GELU gradient kernel that is the only reader of the product
/// of `gemm` (the plain form of one f32 matrix, no epilogue), reading it
/// and GELU's input densely, and that input; null when the pair does not
/// fuse.
std::pair<loomrt::KernelOp, Value> geluGradOf(loomrt::GemmOp gemm) {
  auto none = std::make_pair(loomrt::KernelOp(), Value());
  loomrt::KernelOp grad = soleReaderOfProduct(gemm);
  Value product = gemm.getC();
  if (!grad || tanhGeluGradCotangent(grad) != product)
    return none;
  auto type = cast<MemRefType>(product.getType());
  Value pre = grad.getIns()[0] == product ? grad.getIns()[1]
                                          : grad.getIns()[0];
  Value out = grad.getOuts()[0];
  if (pre == product || pre.getType() != type || out.getType() != type ||
      !out.getDefiningOp<loomrt::AllocOp>() || !loomrt::readsDensely(grad))
    return none;
  // The fused gemm runs where the gradient did: nothing in between may
  // write its operands or GELU's input, nor touch the product or the
  // gradient.
  SmallVector<Value> written{loomrt::rootBuffer(gemm.getA()),
                             loomrt::rootBuffer(gemm.getB()),
                             loomrt::rootBuffer(pre)};
  SmallVector<Value> touched{loomrt::rootBuffer(product),
                             loomrt::rootBuffer(out)};
  if (loomrt::touchedBetween(gemm, grad, written) ||
      loomrt::touchedBetween(gemm, grad, touched, /*orRead=*/true))
    return none;
  return {grad, pre};
}

/// The sum that is the only reader of `gemm`'s product and the sum's
/// other term, which the fused gemm accumulates onto; null when the pair
/// does not fuse (Passes.td, -loom-fuse-gemm-accumulate).
std::pair<loomrt::KernelOp, Value> accumulatingSumOf(loomrt::GemmOp gemm) {
  auto none = std::make_pair(loomrt::KernelOp(), Value());
  loomrt::KernelOp add = soleReaderOfProduct(gemm);
  if (!add || add.getIns().size() != 2 || add.getOuts().size() != 1 ||
      !loomrt::isPlainAdd(add) || !loomrt::readsDensely(add))
    return none;
  Value product = gemm.getC();
  Value term = add.getIns()[0] == product ? add.getIns()[1] : add.getIns()[0];
  Value out = add.getOuts()[0];
  auto termAlloc = term.getDefiningOp<loomrt::AllocOp>();
  auto outAlloc = out.getDefiningOp<loomrt::AllocOp>();
  if (term == product || term.getType() != product.getType() ||
      out.getType() != product.getType() || !termAlloc || !outAlloc ||
      termAlloc.getCategory() != outAlloc.getCategory() ||
      termAlloc->getBlock() != add->getBlock())
    return none;
  // The term's buffer becomes the sum's: every other op that uses it (its
  // writers, its readers; no views, no transfer, which could still be
  // reading or writing it when the fused gemm writes it) comes before the
  // sum, and the gemm does not read it.
  for (Operation *user : term.getUsers()) {
    if (user == add.getOperation())
      continue;
    if (isa<loomrt::ViewOp>(user) || user->getBlock() != add->getBlock() ||
        !user->isBeforeInBlock(add) ||
        llvm::any_of(user->getResultTypes(), llvm::IsaPred<loomrt::HandleType>))
      return none;
  }
  Value a = loomrt::rootBuffer(gemm.getA());
  Value b = loomrt::rootBuffer(gemm.getB());
  if (a == term || b == term)
    return none;
  // The fused gemm runs where the sum did.
  SmallVector<Value> read{a, b};
  if (loomrt::touchedBetween(gemm, add, read))
    return none;
  return {add, term};
}

/// `gemm`'s attributes on a new gemm at `builder`'s point with `c`,
/// `bias`, `geluInput` and `dgeluInput`, and the origins of the ops it
/// replaces.
loomrt::GemmOp rebuild(OpBuilder &builder, loomrt::GemmOp gemm, Location loc,
                       Value c, Value bias, Value geluInput, Value dgeluInput,
                       StringRef origin) {
  auto fused = loomrt::GemmOp::create(
      builder, loc, gemm.getA(), gemm.getB(), c, gemm.getBatch(), gemm.getM(),
      gemm.getN(), gemm.getK(), gemm.getTransA(), gemm.getTransB(),
      gemm.getABatched(), gemm.getBBatched(),
      (gemm.getOrigin() + "+" + origin).str(), gemm.getBatchOuterAttr(),
      gemm.getAStridesAttr(), gemm.getBStridesAttr(), bias, geluInput,
      dgeluInput);
  // Discardable attributes (pipeline stages, marks) stay.
  for (NamedAttribute attr : gemm->getDiscardableAttrs())
    fused->setAttr(attr.getName(), attr.getValue());
  return fused;
}

struct FuseGemmBias
    : public mlir::loomrt::impl::LoomFuseGemmBiasBase<FuseGemmBias> {
  void runOnOperation() override {
    // A product's only reader, a bias add or the backward pass's tanh GELU
    // gradient, applied by the gemm as it writes the reader's output; the
    // reader and the product's buffer go.
    SmallVector<loomrt::GemmOp> gemms;
    getOperation().walk([&](loomrt::GemmOp gemm) { gemms.push_back(gemm); });
    for (loomrt::GemmOp gemm : gemms) {
      loomrt::KernelOp reader;
      Value bias, dgeluInput;
      if (auto [add, biasIndex] = biasAddOf(gemm); add) {
        reader = add;
        bias = add.getIns()[biasIndex];
      } else if (auto [grad, pre] = geluGradOf(gemm); grad) {
        reader = grad;
        dgeluInput = pre;
      } else {
        continue;
      }
      OpBuilder builder(reader);
      rebuild(builder, gemm, reader.getLoc(), reader.getOuts()[0], bias,
              Value(), dgeluInput, reader.getOrigin());
      Operation *product = gemm.getC().getDefiningOp();
      reader.erase();
      gemm.erase();
      product->erase();
    }
    // A tanh GELU of the biased product: the activation is the output, the
    // product (which the backward pass reads) the epilogue's gelu_input.
    SmallVector<loomrt::GemmOp> biased;
    getOperation().walk([&](loomrt::GemmOp gemm) {
      if (gemm.getBias())
        biased.push_back(gemm);
    });
    for (loomrt::GemmOp gemm : biased) {
      loomrt::KernelOp gelu = geluOf(gemm);
      if (!gelu)
        continue;
      OpBuilder builder(gelu);
      rebuild(builder, gemm, gelu.getLoc(), gelu.getOuts()[0], gemm.getBias(),
              gemm.getC(), Value(), gelu.getOrigin());
      gelu.erase();
      gemm.erase();
    }
  }
};

struct FuseGemmAccumulate
    : public mlir::loomrt::impl::LoomFuseGemmAccumulateBase<
          FuseGemmAccumulate> {
  void runOnOperation() override {
    // Last gemm first: of a sum of two products, the later gemm adds its
    // product onto the earlier one's buffer where the sum was (the
    // earlier gemm stays where it is), and a chain of sums collects its
    // products in its first term's buffer.
    SmallVector<loomrt::GemmOp> gemms;
    getOperation().walk([&](loomrt::GemmOp gemm) { gemms.push_back(gemm); });
    for (loomrt::GemmOp gemm : llvm::reverse(gemms)) {
      auto [add, term] = accumulatingSumOf(gemm);
      if (!add)
        continue;
      OpBuilder builder(add);
      loomrt::GemmOp fused =
          rebuild(builder, gemm, add.getLoc(), term, Value(), Value(),
                  Value(), add.getOrigin());
      fused.setAccumulate(true);
      Value out = add.getOuts()[0];
      out.replaceAllUsesWith(term);
      Operation *product = gemm.getC().getDefiningOp();
      add.erase();
      gemm.erase();
      product->erase();
      out.getDefiningOp()->erase();
    }
  }
};

} // namespace

//===- MixedPrecision.cpp - bf16 matrix products --------------------------===//
//
// Implements -loom-mixed-precision (see Passes.td for the contract): the
// forward function's f32 dot_generals compute in bf16 between two
// conversions; differentiation carries the precision to the backward pass.
//
//===----------------------------------------------------------------------===//

#include "Activations.h"
#include "TargetFunction.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_LOOMMIXEDPRECISION
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;

namespace {

constexpr StringLiteral kPass = "loom-mixed-precision";

bool isF32Tensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isF32();
}

bool isFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType());
}

/// The bf16 value that `value` widens, if it is a bf16 -> f32 convert.
Value bf16Source(Value value) {
  auto convert = value.getDefiningOp<ConvertOp>();
  if (!convert || !isF32Tensor(convert.getType()))
    return {};
  auto from = cast<RankedTensorType>(convert.getOperand().getType());
  return from.getElementType().isBF16() ? convert.getOperand() : Value();
}

/// `value` (an f32 tensor, about to be read once more in bf16) as bf16:
/// the value it widens; else, for a transpose, reshape or broadcast only
/// this read uses, that op on its operand as bf16 (a weight's transpose
/// stays foldable into the product, a bias is converted before it is
/// broadcast); else a new convert.
Value toBf16(Value value, OpBuilder &b) {
  if (Value source = bf16Source(value))
    return source;
  auto type = cast<RankedTensorType>(value.getType());
  Operation *def = value.getDefiningOp();
  if (def && isa<TransposeOp, ReshapeOp, BroadcastOp>(def) &&
      value.hasOneUse() && isF32Tensor(def->getOperand(0).getType())) {
    OpBuilder before(def);
    def->setOperand(0, toBf16(def->getOperand(0), before));
    value.setType(type.clone(b.getBF16Type()));
    return value;
  }
  return ConvertOp::create(b, value.getLoc(), type.clone(b.getBF16Type()),
                           value);
}

/// `op`, computing in bf16 on its float operands, its f32 results replaced
/// by conversions back; returns those conversions.
SmallVector<ConvertOp> lowerPrecision(Operation *op) {
  OpBuilder b(op);
  for (OpOperand &operand : op->getOpOperands())
    if (isF32Tensor(operand.get().getType()))
      operand.set(toBf16(operand.get(), b));
  b.setInsertionPointAfter(op);
  SmallVector<ConvertOp> widened;
  for (Value result : op->getResults()) {
    if (!isF32Tensor(result.getType()))
      continue;
    auto type = cast<RankedTensorType>(result.getType());
    result.setType(type.clone(b.getBF16Type()));
    auto back = ConvertOp::create(b, op->getLoc(), type, result);
    result.replaceAllUsesExcept(back, back);
    widened.push_back(back);
  }
  return widened;
}

/// Elementwise ops that may follow a bf16 product in bf16, as PyTorch's
/// autocast runs them on the product's bf16 output (bias, activation,
/// scale, mask).
bool isElementwiseFollower(Operation *op) {
  return isa<AddOp, SubOp, MulOp, DivOp, PowOp, NegOp, MaxOp, MinOp, ReluOp,
             GeluOp, SiluOp, SigmoidOp, TanhOp, SelectOp>(op);
}

/// Ops of bf16 inputs only: data movement, and softmax (f32 statistics
/// inside the runtime's kernel, one rounding of each probability), as
/// autocast runs softmax on the bf16 attention scores.
bool isMovementFollower(Operation *op) {
  return isa<ReshapeOp, TransposeOp, BroadcastOp, SliceOp, ConcatOp, SplitOp,
             SoftmaxOp>(op);
}

/// Whether `value` is a constant (or a broadcast or reshape of one) with a
/// value bf16 does not hold exactly (a scale 1/sqrt(96), GELU's 0.044715).
bool isInexactConstant(Value value) {
  Operation *def = value.getDefiningOp();
  while (def && isa<BroadcastOp, ReshapeOp>(def))
    def = def->getOperand(0).getDefiningOp();
  auto constant = dyn_cast_or_null<ConstantOp>(def);
  auto dense =
      constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : nullptr;
  if (!dense || !isa<FloatType>(dense.getElementType()))
    return false;
  for (APFloat v : dense.getValues<APFloat>()) {
    bool lost = false;
    v.convert(APFloat::BFloat(), APFloat::rmNearestTiesToEven, &lost);
    if (lost)
      return true;
    if (dense.isSplat())
      break;
  }
  return false;
}

/// How `op`, a user of a product's widened result, follows it.
enum class Follow {
  /// Stays f32: it mixes in an f32 activation (the residual add, as
  /// autocast's type promotion keeps it), or is no follower.
  No,
  /// Computes in bf16: an elementwise op whose other float operands are no
  /// activations (a bias, a mask: converted too), or data movement and
  /// softmax of bf16 values only.
  InBf16,
  /// Computes in f32 and rounds its result to bf16 once: an elementwise op
  /// with a constant bf16 would change (autocast keeps Python scalars
  /// exact too).
  RoundResult,
};

Follow followerKind(Operation *op, const llvm::DenseSet<Value> &activations) {
  bool elementwise = isElementwiseFollower(op);
  if (!elementwise && !isMovementFollower(op))
    return Follow::No;
  if (op->getNumResults() == 0 ||
      !llvm::all_of(op->getResultTypes(), isF32Tensor))
    return Follow::No;
  bool inexact = false;
  for (Value operand : op->getOperands()) {
    if (!isFloatTensor(operand.getType()) || bf16Source(operand))
      continue;
    if (!elementwise || !isF32Tensor(operand.getType()) ||
        activations.contains(operand))
      return Follow::No;
    inexact |= isInexactConstant(operand);
  }
  return inexact ? Follow::RoundResult : Follow::InBf16;
}

/// `op` (one f32 result) left f32, its result rounded to bf16 for every
/// user: returns the widening of the rounded value.
ConvertOp roundResult(Operation *op) {
  OpBuilder b(op->getContext());
  b.setInsertionPointAfter(op);
  Value result = op->getResult(0);
  auto type = cast<RankedTensorType>(result.getType());
  auto narrow =
      ConvertOp::create(b, op->getLoc(), type.clone(b.getBF16Type()), result);
  auto back = ConvertOp::create(b, op->getLoc(), type, narrow);
  result.replaceAllUsesExcept(back, narrow);
  return back;
}

struct LoomMixedPrecisionPass
    : public mlir::loom::impl::LoomMixedPrecisionBase<LoomMixedPrecisionPass> {
  using LoomMixedPrecisionBase::LoomMixedPrecisionBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<func::FuncOp> found =
        findFunctionWithBody(module, function, kPass);
    if (failed(found))
      return signalPassFailure();
    func::FuncOp func = *found;
    llvm::DenseSet<Value> activations = findActivations(func);
    SmallVector<DotGeneralOp> dots;
    func.walk([&](DotGeneralOp dot) {
      if (isF32Tensor(dot.getLhs().getType()) &&
          isF32Tensor(dot.getRhs().getType()) && isF32Tensor(dot.getType()))
        dots.push_back(dot);
    });
    // The products, then what follows them in bf16, transitively.
    SmallVector<ConvertOp> worklist;
    for (DotGeneralOp dot : dots)
      llvm::append_range(worklist, lowerPrecision(dot));
    while (!worklist.empty()) {
      ConvertOp widened = worklist.pop_back_val();
      SmallVector<Operation *> users(widened->getUsers());
      for (Operation *user : users) {
        Follow follow = followerKind(user, activations);
        if (follow == Follow::No)
          continue;
        // Its results stay activations (or not) for the next users.
        bool isActivation = llvm::any_of(user->getResults(), [&](Value r) {
          return activations.contains(r);
        });
        SmallVector<ConvertOp> next =
            follow == Follow::InBf16 ? lowerPrecision(user)
                                     : SmallVector<ConvertOp>{
                                           roundResult(user)};
        for (ConvertOp back : next) {
          if (isActivation)
            activations.insert(back);
          worklist.push_back(back);
        }
      }
    }
    // Conversions left without users (a product's widened result that all
    // its users now read in bf16), and conversions of widened values.
    SmallVector<ConvertOp> converts;
    func.walk([&](ConvertOp convert) { converts.push_back(convert); });
    for (ConvertOp convert : llvm::reverse(converts)) {
      if (convert.getType() == convert.getOperand().getType())
        continue;
      if (Value source = bf16Source(convert.getOperand());
          source && source.getType() == convert.getType())
        convert.getResult().replaceAllUsesWith(source);
      if (convert->use_empty())
        convert->erase();
    }
  }
};

} // namespace

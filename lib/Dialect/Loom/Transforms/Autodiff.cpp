//===- Autodiff.cpp - Reverse-mode differentiation of a loss function -----===//
//
// Implements -loom-autodiff (see Passes.td and docs/training.md for the
// contract). The pass knows no op: every derivative comes from
// VJPInterface. It clones @F into @F_grad, keeps the forward ops the loss
// needs, finds the values that both depend on a differentiated argument and
// influence the loss through differentiable operands ("active" values), and
// appends the VJP of every op with an active operand in reverse order.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/LoomInterfaces.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/Transforms/Autodiff.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"
#include "loom/Dialect/Loom/Transforms/TrainingFunctions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_LOOMAUTODIFF
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;

namespace {

/// `a + b` for two cotangents of one value. Slices of one tensor along a
/// dimension (a rotary embedding's halves) give cotangents that are each
/// zero but on their slice: concatenations of the same pieces where one of
/// each pair is zeros. Their sum is the concatenation of the other pieces,
/// with nothing added and no zeros stored.
Value addCotangents(OpBuilder &builder, Location loc, Value a, Value b) {
  auto left = a.getDefiningOp<ConcatOp>(), right = b.getDefiningOp<ConcatOp>();
  auto isZero = [](Value v) { return matchPattern(v, m_AnyZeroFloat()); };
  if (left && right && left.getDim() == right.getDim() &&
      left.getInputs().size() == right.getInputs().size() &&
      llvm::all_of(llvm::zip(left.getInputs(), right.getInputs()),
                   [&](auto pair) {
                     auto [x, y] = pair;
                     return x.getType() == y.getType() &&
                            (isZero(x) || isZero(y));
                   })) {
    SmallVector<Value> pieces;
    for (auto [x, y] : llvm::zip(left.getInputs(), right.getInputs()))
      pieces.push_back(isZero(x) ? y : x);
    return ConcatOp::create(builder, loc, pieces, left.getDim());
  }
  return AddOp::create(builder, loc, a, b);
}

/// Whether a gradient can flow into operand `index` of `op`: the op's own
/// answer when it implements VJPInterface, else the interface's default
/// rule (so that an op without a VJP is reported when a gradient reaches
/// it, not silently skipped).
bool isDifferentiableOperand(Operation *op, unsigned index) {
  if (auto vjp = dyn_cast<VJPInterface>(op))
    return vjp.isOperandDifferentiable(index);
  return loom::detail::isFloatToFloatOperand(op, index);
}

bool isFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType());
}

bool isStatic(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  return !shaped || shaped.hasStaticShape();
}

/// The user-visible name of argument `index`: its `loom.name`, else `argN`.
std::string argumentName(func::FuncOp func, unsigned index) {
  if (auto name = func.getArgAttrOfType<StringAttr>(
          index, LoomDialect::getNameAttrName()))
    return name.getValue().str();
  return ("arg" + Twine(index)).str();
}

/// Values that depend on `seeds` through differentiable operands, in the
/// ops `ops` (in program order).
llvm::DenseSet<Value> forwardVaried(ArrayRef<Value> seeds,
                                    ArrayRef<Operation *> ops) {
  llvm::DenseSet<Value> varied(seeds.begin(), seeds.end());
  for (Operation *op : ops) {
    bool reached = false;
    for (OpOperand &operand : op->getOpOperands())
      reached |= varied.contains(operand.get()) &&
                 isDifferentiableOperand(op, operand.getOperandNumber());
    if (reached)
      for (Value result : op->getResults())
        if (isFloatTensor(result.getType()))
          varied.insert(result);
  }
  return varied;
}

/// Builds @F_grad for one function.
class GradientBuilder {
public:
  GradientBuilder(func::FuncOp forward, StringRef lossName,
                  ArrayRef<std::string> wrtNames)
      : forward(forward), lossName(lossName), wrtNames(wrtNames) {}

  /// Adds the gradient function after the forward one and returns it; on
  /// failure the module is left as it was and errors have been emitted.
  FailureOr<func::FuncOp> run();

private:
  LogicalResult findLoss(unsigned &lossIndex);
  LogicalResult findDifferentiatedArguments();
  LogicalResult checkBody();
  LogicalResult buildBackward(func::FuncOp grad, Value loss,
                              SmallVectorImpl<Value> &gradients);
  /// Reports why argument `argIndex` gets no gradient although the loss
  /// depends on it: the first op that blocks its gradient.
  LogicalResult reportBlocked(func::FuncOp grad, unsigned argIndex);
  /// An error at @F's location that names it. Diagnostics about the whole
  /// function are reported by location, not on the op, so that they do not
  /// print the (possibly very large) function.
  InFlightDiagnostic error() {
    return mlir::emitError(forward.getLoc())
           << "@" << forward.getSymName() << ": ";
  }
  std::string describeArgument(unsigned index) {
    return ("parameter '" + argumentName(forward, index) + "' (argument #" +
            Twine(index) + " of @" + forward.getSymName() + ")")
        .str();
  }

  func::FuncOp forward;
  StringRef lossName;
  ArrayRef<std::string> wrtNames;
  /// Indices of the differentiated arguments, in order.
  SmallVector<unsigned> wrt;
  /// The ops of @F_grad's forward part, in program order.
  SmallVector<Operation *> forwardOps;
};

} // namespace

LogicalResult GradientBuilder::findLoss(unsigned &lossIndex) {
  unsigned numResults = forward.getNumResults();
  auto resultName = [&](unsigned i) -> std::string {
    if (auto name = forward.getResultAttrOfType<StringAttr>(
            i, LoomDialect::getNameAttrName()))
      return name.getValue().str();
    return ("result #" + Twine(i)).str();
  };
  if (lossName.empty()) {
    if (numResults != 1)
      return error()
             << numResults
             << " results and no loss= option; name the loss result with "
                "loss=NAME";
    lossIndex = 0;
  } else {
    std::optional<unsigned> found;
    for (unsigned i = 0; i < numResults; ++i)
      if (auto name = forward.getResultAttrOfType<StringAttr>(
              i, LoomDialect::getNameAttrName());
          name && name.getValue() == lossName)
        found = i;
    if (!found) {
      InFlightDiagnostic diag = error()
                                << "no result named '" << lossName
                                << "' (option loss=); its results are:";
      for (unsigned i = 0; i < numResults; ++i)
        diag << (i ? ", '" : " '") << resultName(i) << "'";
      if (numResults == 0)
        diag << " none";
      return diag;
    }
    lossIndex = *found;
  }
  Type type = forward.getResultTypes()[lossIndex];
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getRank() != 0 || !isFloatTensor(tensor))
    return error()
           << "the loss '" << resultName(lossIndex) << "' (result #"
           << lossIndex
           << ") has type " << type << "; loom-autodiff needs a rank-0 float "
           << "tensor such as tensor<f32>";
  return success();
}

LogicalResult GradientBuilder::findDifferentiatedArguments() {
  unsigned numArgs = forward.getNumArguments();
  SmallVector<bool> selected(numArgs, false);
  for (unsigned i = 0; i < numArgs; ++i)
    selected[i] = forward.getArgAttr(i, LoomDialect::getParamAttrName()) &&
                  isFloatTensor(forward.getArgumentTypes()[i]);
  for (const std::string &name : wrtNames) {
    std::optional<unsigned> found;
    for (unsigned i = 0; i < numArgs && !found; ++i)
      if (argumentName(forward, i) == name || ("arg" + Twine(i)).str() == name)
        found = i;
    if (!found)
      return error()
             << "no argument named '" << name
             << "' (option wrt=; name an argument by its loom.name or argN)";
    Type type = forward.getArgumentTypes()[*found];
    if (!isFloatTensor(type))
      return error()
             << "cannot differentiate with respect to argument '" << name
             << "' (option wrt=) of type " << type
             << ": only float tensors have gradients";
    selected[*found] = true;
  }
  for (unsigned i = 0; i < numArgs; ++i) {
    if (!selected[i])
      continue;
    if (!isStatic(forward.getArgumentTypes()[i]))
      return error()
             << "argument '" << argumentName(forward, i) << "' has type "
             << forward.getArgumentTypes()[i]
             << " with a dynamic shape; run loom-shape-inference (with "
                "arg-shapes=) before loom-autodiff";
    wrt.push_back(i);
  }
  return success();
}

/// Checks @F's body before it is cloned: one block, no nested regions (the
/// forward slice below is computed from operands).
LogicalResult GradientBuilder::checkBody() {
  Region &body = forward.getBody();
  if (!body.hasOneBlock())
    return error()
           << "the body has " << body.getBlocks().size()
           << " blocks; loom-autodiff differentiates single-block functions";
  if (!isa<func::ReturnOp>(body.front().getTerminator()))
    return error() << "the body does not end in func.return";
  for (Operation &op : body.front().without_terminator())
    if (op.getNumRegions() != 0)
      return op.emitOpError()
             << "has regions; loom-autodiff differentiates straight-line "
                "functions of loom ops";
  return success();
}

FailureOr<func::FuncOp> GradientBuilder::run() {
  unsigned lossIndex = 0;
  if (failed(checkBody()) || failed(findLoss(lossIndex)) ||
      failed(findDifferentiatedArguments()))
    return failure();

  auto module = forward->getParentOfType<ModuleOp>();
  std::string gradName = names::gradFunction(forward.getSymName());
  if (Operation *existing = SymbolTable::lookupSymbolIn(module, gradName))
    return mlir::emitError(existing->getLoc())
           << "@" << gradName
           << " already exists; it is the name of the gradient function "
              "loom-autodiff would add for @"
           << forward.getSymName();

  func::FuncOp grad = forward.clone();
  grad.setSymName(gradName);
  module.getBody()->getOperations().insert(std::next(forward->getIterator()),
                                           grad);
  Block &block = grad.getBody().front();
  auto ret = cast<func::ReturnOp>(block.getTerminator());
  Value loss = ret.getOperand(lossIndex);
  ret.erase();

  // Keep only the ops the loss needs.
  llvm::DenseSet<Operation *> needed;
  SmallVector<Operation *> worklist;
  if (Operation *def = loss.getDefiningOp())
    worklist.push_back(def);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!needed.insert(op).second)
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        worklist.push_back(def);
  }
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
    if (!needed.contains(&op))
      op.erase();
  for (Operation &op : block)
    forwardOps.push_back(&op);

  SmallVector<Value> gradients;
  if (failed(buildBackward(grad, loss, gradients))) {
    grad.erase();
    return failure();
  }

  // Mark the backward ops, for reports (the memory plan's categories).
  DenseSet<Operation *> forwardSet(forwardOps.begin(), forwardOps.end());
  Builder attrBuilder(grad.getContext());
  for (Operation &op : block)
    if (!forwardSet.contains(&op))
      op.setAttr(LoomDialect::PhaseAttrHelper::getNameStr(),
                 attrBuilder.getStringAttr("backward"));

  // The results: the loss, then one gradient per differentiated argument.
  OpBuilder builder = OpBuilder::atBlockEnd(&block);
  SmallVector<Value> results{loss};
  results.append(gradients);
  func::ReturnOp::create(builder, forward.getLoc(), results);
  grad.setType(FunctionType::get(grad.getContext(), grad.getArgumentTypes(),
                                 ValueRange(results).getTypes()));
  MLIRContext *ctx = grad.getContext();
  SmallVector<DictionaryAttr> resultAttrs;
  resultAttrs.push_back(builder.getDictionaryAttr(builder.getNamedAttr(
      LoomDialect::getNameAttrName(), builder.getStringAttr("loss"))));
  for (unsigned index : wrt)
    resultAttrs.push_back(DictionaryAttr::get(
        ctx, {builder.getNamedAttr(
                  LoomDialect::getNameAttrName(),
                  builder.getStringAttr("grad." +
                                        argumentName(forward, index))),
              builder.getNamedAttr(LoomDialect::getGradOfAttrName(),
                                   builder.getI64IntegerAttr(index))}));
  grad.setAllResultAttrs(resultAttrs);
  return grad;
}

LogicalResult
GradientBuilder::buildBackward(func::FuncOp grad, Value loss,
                               SmallVectorImpl<Value> &gradients) {
  // Checks: no calls, static shapes on the forward path.
  for (Operation *op : forwardOps) {
    if (isa<CallOpInterface>(op))
      return op->emitOpError()
             << "calls another function; loom-autodiff differentiates one "
                "function body: inline the callee first (--inline)";
    for (Type type : llvm::concat<const Type>(op->getOperandTypes(),
                                              op->getResultTypes()))
      if (!isStatic(type))
        return op->emitOpError()
               << "has a value of dynamic shape " << type
               << "; run loom-shape-inference before loom-autodiff";
  }

  // Active values: varied by a differentiated argument and useful to the
  // loss, both through differentiable operands only.
  SmallVector<Value> seeds;
  for (unsigned index : wrt)
    seeds.push_back(grad.getArgument(index));
  llvm::DenseSet<Value> varied = forwardVaried(seeds, forwardOps);
  llvm::DenseSet<Value> useful{loss};
  for (Operation *op : llvm::reverse(forwardOps)) {
    if (llvm::none_of(op->getResults(),
                      [&](Value r) { return useful.contains(r); }))
      continue;
    for (OpOperand &operand : op->getOpOperands())
      if (isDifferentiableOperand(op, operand.getOperandNumber()))
        useful.insert(operand.get());
  }
  auto isActive = [&](Value v) {
    return varied.contains(v) && useful.contains(v);
  };
  llvm::DenseSet<Operation *> forwardSet(forwardOps.begin(), forwardOps.end());
  auto reachesLoss = [&](BlockArgument arg) {
    return arg == loss || llvm::any_of(arg.getUsers(), [&](Operation *user) {
             return forwardSet.contains(user);
           });
  };

  OpBuilder builder = OpBuilder::atBlockEnd(&grad.getBody().front());
  llvm::DenseMap<Value, Value> cotangents;
  auto lossType = cast<RankedTensorType>(loss.getType());
  cotangents[loss] = ConstantOp::create(
      builder, loss.getLoc(),
      cast<ElementsAttr>(DenseElementsAttr::get(
          lossType, builder.getFloatAttr(lossType.getElementType(), 1.0))));

  for (Operation *op : llvm::reverse(forwardOps)) {
    SmallVector<Value> resultCotangents;
    bool anyCotangent = false;
    for (Value result : op->getResults()) {
      resultCotangents.push_back(cotangents.lookup(result));
      anyCotangent |= static_cast<bool>(resultCotangents.back());
    }
    if (!anyCotangent || llvm::none_of(op->getOperands(), isActive))
      continue;
    auto vjp = dyn_cast<VJPInterface>(op);
    if (!vjp) {
      InFlightDiagnostic diag =
          op->emitOpError()
          << "has no vector-Jacobian product (VJPInterface), but the "
             "gradient of the loss must flow through it";
      for (unsigned index : wrt) {
        llvm::DenseSet<Value> byArg =
            forwardVaried({grad.getArgument(index)}, forwardOps);
        if (llvm::any_of(op->getOperands(),
                         [&](Value v) { return byArg.contains(v); })) {
          diag << " to " << describeArgument(index);
          break;
        }
      }
      return diag;
    }
    SmallVector<Value> operandCotangents;
    if (failed(vjp.buildVJP(builder, resultCotangents, operandCotangents)))
      return failure();
    if (operandCotangents.size() != op->getNumOperands())
      return op->emitOpError()
             << "built " << operandCotangents.size()
             << " operand cotangents for " << op->getNumOperands()
             << " operands (VJPInterface contract)";
    for (auto [operand, cotangent] :
         llvm::zip(op->getOperands(), operandCotangents)) {
      if (!cotangent || !isActive(operand))
        continue;
      if (cotangent.getType() != operand.getType())
        return op->emitOpError()
               << "built a cotangent of type " << cotangent.getType()
               << " for an operand of type " << operand.getType()
               << " (VJPInterface contract)";
      Value &sum = cotangents[operand];
      sum = sum ? addCotangents(builder, op->getLoc(), sum, cotangent)
                : cotangent;
    }
  }

  for (unsigned index : wrt) {
    BlockArgument arg = grad.getArgument(index);
    if (Value cotangent = cotangents.lookup(arg)) {
      gradients.push_back(cotangent);
      continue;
    }
    if (reachesLoss(arg) && !isActive(arg))
      return reportBlocked(grad, index);
    if (!reachesLoss(arg))
      mlir::emitWarning(forward.getLoc())
          << describeArgument(index)
                            << " does not reach the loss; its gradient is zero";
    auto type = cast<RankedTensorType>(arg.getType());
    gradients.push_back(ConstantOp::create(
        builder, forward.getLoc(),
        cast<ElementsAttr>(DenseElementsAttr::get(
            type, builder.getFloatAttr(type.getElementType(), 0.0)))));
  }

  // Drop backward ops whose values no gradient uses (cotangents of operands
  // that are not active, shared subexpressions of unused branches).
  llvm::DenseSet<Value> kept(gradients.begin(), gradients.end());
  Block &block = grad.getBody().front();
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block))) {
    if (forwardSet.contains(&op))
      break;
    bool used = llvm::any_of(op.getResults(), [&](Value r) {
      return kept.contains(r) || !r.use_empty();
    });
    if (!used)
      op.erase();
  }
  return success();
}

LogicalResult GradientBuilder::reportBlocked(func::FuncOp grad,
                                             unsigned argIndex) {
  // The argument's forward slice through differentiable operands; the first
  // op that takes a value of it at a non-differentiable operand stops the
  // gradient (every remaining op is needed by the loss).
  llvm::DenseSet<Value> byArg =
      forwardVaried({grad.getArgument(argIndex)}, forwardOps);
  for (Operation *op : forwardOps)
    for (OpOperand &operand : op->getOpOperands())
      if (byArg.contains(operand.get()) &&
          !isDifferentiableOperand(op, operand.getOperandNumber()))
        return op->emitOpError()
               << "is not differentiable with respect to operand #"
               << operand.getOperandNumber() << " (of type "
               << operand.get().getType() << "), but the gradient of "
               << describeArgument(argIndex)
               << " would have to flow through it to reach the loss";
  return error()
         << "cannot differentiate the loss with respect to "
         << describeArgument(argIndex);
}

FailureOr<func::FuncOp>
mlir::loom::buildGradientFunction(func::FuncOp forward,
                                  const GradientOptions &options) {
  return GradientBuilder(forward, options.loss, options.wrt).run();
}

namespace {
struct Autodiff : public loom::impl::LoomAutodiffBase<Autodiff> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward = module.lookupSymbol<func::FuncOp>(function);
    if (!forward || forward.isExternal()) {
      mlir::emitError(module.getLoc())
          << "function '" << function
          << "' (option function=) is not defined in the module";
      return signalPassFailure();
    }
    GradientOptions options;
    options.loss = loss;
    options.wrt.assign(wrt.begin(), wrt.end());
    if (failed(buildGradientFunction(forward, options)))
      signalPassFailure();
  }
};
} // namespace

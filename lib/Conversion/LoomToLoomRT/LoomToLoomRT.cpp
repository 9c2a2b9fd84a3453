//===- LoomToLoomRT.cpp - convert-loom-to-loomrt --------------------------===//
//
// The pass driver (see Passes.td for the contract): picks the functions,
// checks that each can be lowered entirely, then converts it with the
// pattern families (Kernels.cpp, Contraction.cpp, Communication.cpp,
// DataMovement.cpp) and the function patterns below, under a type
// converter from tensors to buffers. The conversion visits the ops in
// program order and each pattern inserts at its op, so the lowered program
// keeps the source order (the memory plan depends on it).
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/LoomToLoomRT/Passes.h"

#include "Patterns.h"

#include "loom/Dialect/Loom/Transforms/TrainingFunctions.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_CONVERTLOOMTOLOOMRT
#include "loom/Conversion/LoomToLoomRT/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::loom_to_loomrt;

//===----------------------------------------------------------------------===//
// Helpers shared by the patterns
//===----------------------------------------------------------------------===//

BufferTypeConverter::BufferTypeConverter() {
  addConversion([](Type type) { return type; });
  addConversion(
      [](RankedTensorType type) -> Type { return bufferType(type); });
}

MemRefType loom_to_loomrt::bufferType(Type tensorType) {
  auto type = cast<RankedTensorType>(tensorType);
  return MemRefType::get(type.getShape(), type.getElementType());
}

bool loom_to_loomrt::isElementwise(Operation *op) {
  return op->hasTrait<::mlir::loom::OpTrait::ElementwiseMapping>();
}

bool loom_to_loomrt::isFusedIntoUser(Operation *op) {
  return isElementwise(op) &&
         op->hasAttr(LoomDialect::FusedAttrHelper::getNameStr());
}

StringAttr loom_to_loomrt::originOf(Operation *op) {
  // A forward op that loom-recompute replays, or that computes one
  // sub-batch of loom-overlap-split, says so in --trace spans.
  std::string prefix;
  auto phase = op->getAttrOfType<StringAttr>(
      LoomDialect::PhaseAttrHelper::getNameStr());
  if (phase && phase.getValue() == "recompute")
    prefix = "recompute.";
  if (auto sub = op->getAttrOfType<IntegerAttr>(
          LoomDialect::SubBatchAttrHelper::getNameStr()))
    prefix += "sub" + std::to_string(sub.getInt()) + ".";
  return StringAttr::get(op->getContext(),
                         prefix + op->getName().stripDialect().str());
}

StringRef loom_to_loomrt::categoryOf(Operation *op) {
  if (auto phase = op->getAttrOfType<StringAttr>(
          LoomDialect::PhaseAttrHelper::getNameStr())) {
    if (phase.getValue() == "backward")
      return "gradient";
    if (phase.getValue() == "optimizer")
      return "optimizer";
    if (phase.getValue() == "recompute")
      return "recompute";
  }
  return "activation";
}

void loom_to_loomrt::createDenseCopy(OpBuilder &b, Location loc, Value from,
                                     Value to, StringAttr origin) {
  auto shape = cast<MemRefType>(to.getType()).getShape();
  SmallVector<int64_t> strides = computeStrides(shape);
  loomrt::CopyOp::create(b, loc, from, to, shape, strides, 0, strides, 0,
                         origin);
}

bool loom_to_loomrt::hasOnlyKernelUsers(Value value,
                                        const LoweringState &state) {
  return !value.use_empty() && !state.isReturned(value) &&
         llvm::all_of(value.getUsers(), isElementwise);
}

//===----------------------------------------------------------------------===//
// LoweringState: results
//===----------------------------------------------------------------------===//

LoweringState::LoweringState(func::FuncOp source) {
  Block &body = source.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (auto [i, value] : llvm::enumerate(ret.getOperands()))
    resultIndices[value].push_back(i);
  for (Operation &op : body) {
    bool noBuffer =
        TypeSwitch<Operation *, bool>(&op)
            .Case([&](ConstantOp constant) {
              return isBufferlessConstant(constant, *this);
            })
            .Case([&](BroadcastOp bcast) {
              return hasOnlyKernelUsers(bcast.getResult(), *this);
            })
            .Case([&](TransposeOp transpose) {
              return !isReturned(transpose.getResult()) &&
                     isTransposeAbsorbed(transpose);
            })
            .Default(false);
    if (noBuffer)
      bufferless.insert(&op);
  }
}

void LoweringState::setResultBuffers(ValueRange buffers) {
  resultBuffers.assign(buffers.begin(), buffers.end());
}

Value LoweringState::destination(Value value, Operation *producer,
                                 OpBuilder &b) {
  auto it = resultIndices.find(value);
  if (it != resultIndices.end() && !it->second.empty()) {
    unsigned index = it->second.front();
    it->second.erase(it->second.begin());
    return resultBuffers[index];
  }
  StringRef category = producer ? categoryOf(producer) : "activation";
  return loomrt::AllocOp::create(b, value.getLoc(), bufferType(value.getType()),
                                 b.getStringAttr(category), IntegerAttr());
}

SmallVector<std::pair<unsigned, Value>>
LoweringState::getUnwrittenResults() const {
  SmallVector<std::pair<unsigned, Value>> unwritten;
  for (const auto &[value, indices] : resultIndices)
    for (unsigned index : indices)
      unwritten.push_back({index, value});
  llvm::sort(unwritten, [](const auto &a, const auto &b) {
    return a.first < b.first;
  });
  return unwritten;
}

//===----------------------------------------------------------------------===//
// The function and its return
//===----------------------------------------------------------------------===//

namespace {

/// Signature: the inputs, then one buffer per result (`loomrt.result = i`,
/// with the result's attributes); no results. The body moves over.
class FuncPattern : public OpConversionPattern<func::FuncOp> {
public:
  FuncPattern(const TypeConverter &converter, MLIRContext *context,
              LoweringState &state)
      : OpConversionPattern<func::FuncOp>(converter, context), state(state) {}

  LogicalResult
  matchAndRewrite(func::FuncOp source, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MLIRContext *ctx = source.getContext();
    SmallVector<Type> argTypes;
    for (Type type : source.getArgumentTypes())
      argTypes.push_back(bufferType(type));
    for (Type type : source.getResultTypes())
      argTypes.push_back(bufferType(type));
    unsigned numInputs = source.getNumArguments();

    rewriter.setInsertionPoint(source);
    auto target = func::FuncOp::create(rewriter, source.getLoc(),
                                       source.getName(),
                                       FunctionType::get(ctx, argTypes, {}));
    for (unsigned i = 0; i < numInputs; ++i)
      target.setArgAttrs(i, source.getArgAttrDict(i));
    for (unsigned i = 0; i < source.getNumResults(); ++i) {
      SmallVector<NamedAttribute> attrs(source.getResultAttrs(i));
      attrs.push_back(rewriter.getNamedAttr("loomrt.result",
                                            rewriter.getI64IntegerAttr(i)));
      target.setArgAttrs(numInputs + i, DictionaryAttr::get(ctx, attrs));
    }
    target->setAttr("loomrt.num_inputs", rewriter.getI64IntegerAttr(numInputs));
    for (NamedAttribute attr : source->getDiscardableAttrs())
      target->setAttr(attr.getName(), attr.getValue());

    // The arguments become the input buffers; the result buffers are new.
    rewriter.inlineRegionBefore(source.getBody(), target.getBody(),
                                target.end());
    TypeConverter::SignatureConversion signature(numInputs);
    for (unsigned i = 0; i < numInputs; ++i)
      signature.addInputs(i, argTypes[i]);
    signature.addInputs(ArrayRef<Type>(argTypes).drop_front(numInputs));
    Block *entry = rewriter.applySignatureConversion(
        &target.getBody().front(), signature, getTypeConverter());
    // Located at the function, as a new function's entry block would be.
    for (BlockArgument arg : entry->getArguments())
      arg.setLoc(source.getLoc());
    state.setResultBuffers(entry->getArguments().drop_front(numInputs));
    rewriter.eraseOp(source);
    return success();
  }

private:
  LoweringState &state;
};

/// Results not written by their producer are copied into their buffer;
/// sends complete before the step returns (their buffers live until here).
/// The waits for returned values still in flight come first (the base).
class ReturnPattern : public LoweringPattern<func::ReturnOp> {
public:
  using LoweringPattern::LoweringPattern;

  LogicalResult lower(func::ReturnOp ret, OpAdaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = ret.getLoc();
    for (auto [index, value] : state.getUnwrittenResults()) {
      Value from = rewriter.getRemappedValue(value);
      if (!from)
        return rewriter.notifyMatchFailure(ret, "a returned value has no "
                                                "buffer");
      createDenseCopy(rewriter, loc, from, state.getResultBuffer(index),
                      rewriter.getStringAttr("result"));
    }
    state.waitForUnread(rewriter);
    for (Value handle : state.getPendingSends())
      loomrt::WaitOp::create(rewriter, loc, handle);
    rewriter.replaceOpWithNewOp<func::ReturnOp>(ret);
    return success();
  }
};

} // namespace

void loom_to_loomrt::populateFunctionPatterns(const TypeConverter &converter,
                                              RewritePatternSet &patterns,
                                              LoweringState &state) {
  patterns.add<FuncPattern, ReturnPattern>(converter, patterns.getContext(),
                                           state);
}

//===----------------------------------------------------------------------===//
// Checks before the conversion
//===----------------------------------------------------------------------===//

namespace {

/// Static shapes and the runtime's element types everywhere; loom ops and
/// the shard ops the runtime has.
LogicalResult checkTypes(func::FuncOp source) {
  auto check = [&](Type type, Operation *at, StringRef what) -> LogicalResult {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape())
      return at->emitError() << what << " has type " << type
                             << "; convert-loom-to-loomrt needs static shapes "
                                "(run loom-shape-inference first)";
    Type element = tensor.getElementType();
    if (!element.isF32() && !element.isBF16() && !element.isInteger(64) &&
        !element.isInteger(32) && !element.isInteger(1))
      return at->emitError() << what << " has element type " << element
                             << "; the runtime supports f32, bf16, i64, i32 "
                                "and i1";
    return success();
  };
  for (auto [i, type] : llvm::enumerate(source.getArgumentTypes()))
    if (failed(check(type, source, "argument #" + std::to_string(i))))
      return failure();
  for (auto [i, type] : llvm::enumerate(source.getResultTypes()))
    if (failed(check(type, source, "result #" + std::to_string(i))))
      return failure();
  WalkResult walk = source.walk([&](Operation *op) {
    if (isa<func::ReturnOp>(op) || op == source)
      return WalkResult::advance();
    if (op->getDialect() != op->getContext()->getLoadedDialect<LoomDialect>() &&
        !isa<shard::AllReduceOp, shard::SendOp, shard::RecvOp>(op))
      return op->emitError("convert-loom-to-loomrt: unsupported op (only loom "
                           "ops, shard.all_reduce, shard.send and shard.recv "
                           "can be lowered; inline calls first)"),
             WalkResult::interrupt();
    for (Value result : op->getResults())
      if (failed(check(result.getType(), op, "result")))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// Whether some pattern of `patterns` converts `op`.
bool hasPattern(Operation *op, RewritePatternSet &patterns) {
  return llvm::any_of(patterns.getNativePatterns(), [&](const auto &pattern) {
    if (std::optional<OperationName> root = pattern->getRootKind())
      return *root == op->getName();
    if (std::optional<TypeID> trait = pattern->getRootTraitID())
      return op->getName().hasTrait(*trait);
    return false;
  });
}

/// Everything a pattern would fail on, in program order: the first problem
/// is reported at its op.
LogicalResult checkLowerable(func::FuncOp source,
                             RewritePatternSet &patterns) {
  Block &body = source.getBody().front();
  for (Operation &op : body.without_terminator()) {
    if (!hasPattern(&op, patterns))
      return op.emitError("convert-loom-to-loomrt: no lowering for this op "
                          "yet");
    if (failed(checkKernelOp(&op)) || failed(checkContractionOp(&op)) ||
        failed(checkCommunicationOp(&op)) || failed(checkDataMovementOp(&op)))
      return failure();
  }
  // A transfer's wait comes before its first reader; an all-reduce without
  // one (replayed by a full recompute) is waited for at the end. A receive
  // nobody reads is a schedule error (its sender's tag would be wasted).
  for (Operation &op : body)
    if (isa<shard::RecvOp>(op) && op.getResult(0).use_empty())
      return op.emitError(
          "convert-loom-to-loomrt: a receive result is never used");
  return success();
}

/// Lowers `source` into a loomrt function in its place.
LogicalResult lowerFunction(func::FuncOp source) {
  if (failed(checkTypes(source)))
    return failure();
  MLIRContext *ctx = source.getContext();
  BufferTypeConverter converter;
  LoweringState state(source);
  RewritePatternSet patterns(ctx);
  populateFunctionPatterns(converter, patterns, state);
  populateKernelPatterns(converter, patterns, state);
  populateContractionPatterns(converter, patterns, state);
  populateCommunicationPatterns(converter, patterns, state);
  populateDataMovementPatterns(converter, patterns, state);
  if (failed(checkLowerable(source, patterns)))
    return failure();

  // Everything of `source` is converted; what the patterns create is legal.
  Operation *sourceFunc = source;
  Operation *sourceReturn = source.getBody().front().getTerminator();
  ConversionTarget target(*ctx);
  target.addLegalDialect<loomrt::LoomRTDialect, arith::ArithDialect,
                         math::MathDialect>();
  target.addIllegalDialect<LoomDialect>();
  target.addIllegalOp<shard::AllReduceOp, shard::SendOp, shard::RecvOp>();
  target.addDynamicallyLegalOp<func::FuncOp>(
      [=](Operation *op) { return op != sourceFunc; });
  target.addDynamicallyLegalOp<func::ReturnOp>(
      [=](Operation *op) { return op != sourceReturn; });
  ConversionConfig config;
  // Loom's folders would change what is lowered.
  config.foldingMode = DialectConversionFoldingMode::Never;
  return applyFullConversion(sourceFunc, target, std::move(patterns), config);
}

struct ConvertLoomToLoomRTPass
    : public mlir::loom::impl::ConvertLoomToLoomRTBase<ConvertLoomToLoomRTPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    SmallVector<func::FuncOp> chosen;
    if (!function.empty()) {
      for (const std::string &name : function) {
        auto f = module.lookupSymbol<func::FuncOp>(name);
        if (!f) {
          module.emitError("convert-loom-to-loomrt: no function named '")
              << name << "'";
          return signalPassFailure();
        }
        if (llvm::is_contained(chosen, f)) {
          module.emitError("convert-loom-to-loomrt: function '")
              << name << "' is named twice";
          return signalPassFailure();
        }
        chosen.push_back(f);
      }
    } else {
      func::FuncOp only;
      for (func::FuncOp f : funcs)
        if (names::isStepFunction(f.getName()))
          only = only ? func::FuncOp() : f;
      if (!only && funcs.size() == 1)
        only = funcs.front();
      if (!only) {
        module.emitError("convert-loom-to-loomrt: say which function to lower "
                         "with function=NAME (found ")
            << funcs.size() << " functions)";
        return signalPassFailure();
      }
      chosen.push_back(only);
    }
    for (func::FuncOp f : chosen) {
      if (f.isExternal()) {
        f.emitError("convert-loom-to-loomrt: function has no body");
        return signalPassFailure();
      }
    }
    // Each lowered function replaces its source; the others go. The device
    // mesh stays: loomrt's collectives name its axes, and the emitter reads
    // the mesh from it.
    for (func::FuncOp f : funcs)
      if (!llvm::is_contained(chosen, f))
        f.erase();
    for (func::FuncOp f : chosen)
      if (failed(lowerFunction(f)))
        return signalPassFailure();
  }
};

} // namespace

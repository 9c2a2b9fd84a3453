//===- Optimizer.cpp - One optimizer step around a gradient function ------===//
//
// Implements -loom-optimizer (see Passes.td and docs/training.md for the
// contract): @F_grad (loss, gradients) becomes @F_step (loss, new parameters,
// new optimizer state).
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/MeshGrid.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"
#include "loom/Dialect/Loom/Transforms/TrainingFunctions.h"

#include "TargetFunction.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <optional>

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_LOOMOPTIMIZER
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;

namespace {



/// The pass options after validation, with defaults resolved.
struct Config {
  OptimizerKind kind;
  double lr, momentum, weightDecay, beta1, beta2, eps, clipGradNorm;
  bool nesterov;
  LrSchedule schedule;
  int64_t warmupSteps, totalSteps;
  double minLr;

  bool isAdam() const { return kind != OptimizerKind::sgd; }
  /// The names of the state tensors of parameter `p` are these prefixes
  /// followed by `p` (docs/training.md); the step counter is shared.
  ArrayRef<StringLiteral> statePrefixes() const {
    static constexpr StringLiteral adam[] = {"exp_avg.", "exp_avg_sq."};
    static constexpr StringLiteral sgdMomentum[] = {"momentum."};
    if (isAdam())
      return adam;
    if (momentum != 0.0)
      return sgdMomentum;
    return {};
  }
  unsigned statePerParam() const { return statePrefixes().size(); }
};

/// The learning rate of optimizer step `e + 1`: the value PyTorch's scheduler
/// holds after `e` calls of `scheduler.step()` (see Passes.td).
double scheduledLr(const Config &config, int64_t e) {
  const double w = static_cast<double>(config.warmupSteps);
  if (config.schedule != LrSchedule::constant && e < config.warmupSteps)
    return config.lr * (static_cast<double>(e + 1) / w);
  if (config.schedule != LrSchedule::cosine)
    return config.lr;
  double progress = static_cast<double>(e - config.warmupSteps) /
                    static_cast<double>(config.totalSteps - config.warmupSteps);
  return config.minLr + (config.lr - config.minLr) *
                            (1.0 + std::cos(llvm::numbers::pi * progress)) /
                            2.0;
}

/// A parameter of the gradient function: an argument with a gradient result.
struct Param {
  unsigned argIndex;
  unsigned gradResult;
  std::string name;
  RankedTensorType type;
  /// A tensor-parallel slice (loom.shard): its gradient norm is summed
  /// over the tp ranks.
  bool sharded = false;
  /// Another pipeline stage's copy of a shared parameter
  /// (loom.pipeline_copy): left out of the global norm, counted once there.
  bool duplicate = false;
};

/// The name `loom.name`, else `argN`, of argument `index` of `func`.
std::string argumentName(func::FuncOp func, unsigned index) {
  if (auto name = func.getArgAttrOfType<StringAttr>(
          index, LoomDialect::getNameAttrName()))
    return name.getValue().str();
  return ("arg" + Twine(index)).str();
}

/// Emits the f32 tensor arithmetic of the update. Scalars are `tensor<f32>`;
/// elementwise operands are brought to one shape explicitly.
class UpdateBuilder {
public:
  explicit UpdateBuilder(ImplicitLocOpBuilder &b)
      : b(b), f32(b.getF32Type()), scalarType(RankedTensorType::get({}, f32)) {
  }

  /// A constant of `type` with every element `value` rounded to f32.
  Value splat(double value, RankedTensorType type) {
    auto attr = DenseElementsAttr::get(type, static_cast<float>(value));
    return ConstantOp::create(b, type, attr);
  }
  Value scalar(double value) { return splat(value, scalarType); }
  /// A rank-0 i64 constant.
  Value index(int64_t value) {
    auto type = RankedTensorType::get({}, b.getI64Type());
    return ConstantOp::create(b, type, DenseElementsAttr::get(type, value));
  }

  /// The f32 table `values` (rounded once) as a rank-1 constant.
  Value table(ArrayRef<double> values) {
    SmallVector<float> rounded = llvm::map_to_vector(
        values, [](double v) { return static_cast<float>(v); });
    auto type =
        RankedTensorType::get({static_cast<int64_t>(rounded.size())}, f32);
    return ConstantOp::create(b, type,
                              DenseElementsAttr::get(type, ArrayRef(rounded)));
  }

  /// Broadcasts a rank-0 `value` to `type`.
  Value broadcast(Value value, RankedTensorType type) {
    if (value.getType() == type)
      return value;
    return BroadcastOp::create(b, type, value, ArrayRef<int64_t>{});
  }

  /// The sum of all elements of `value`, as a rank-0 tensor.
  Value sumAll(Value value) {
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getRank() == 0)
      return value;
    auto dims = llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
    return ReduceSumOp::create(b, value, dims);
  }

  Value add(Value x, Value y) { return AddOp::create(b, x, y); }
  Value sub(Value x, Value y) { return SubOp::create(b, x, y); }
  Value mul(Value x, Value y) { return MulOp::create(b, x, y); }
  Value div(Value x, Value y) { return DivOp::create(b, x, y); }
  Value min(Value x, Value y) { return MinOp::create(b, x, y); }
  Value max(Value x, Value y) { return MaxOp::create(b, x, y); }
  Value neg(Value x) { return NegOp::create(b, x); }
  Value sqrt(Value x) { return SqrtOp::create(b, x); }
  Value exp(Value x) { return ExpOp::create(b, x); }
  Value tanh(Value x) { return TanhOp::create(b, x); }

  ImplicitLocOpBuilder &b;
  Type f32;
  RankedTensorType scalarType;
};

struct Optimizer : public mlir::loom::impl::LoomOptimizerBase<Optimizer> {
  using Base::Base;

  /// Validates the options once, before any module is seen.
  LogicalResult initialize(MLIRContext *context) override;
  void runOnOperation() override;

private:
  FailureOr<Config> validateOptions(MLIRContext *context);
  FailureOr<SmallVector<Param>> collectParams(func::FuncOp grad);
  /// `mesh`: the module's device mesh (clipping sums the norm over its tp
  /// and pp axes).
  void buildStep(func::FuncOp grad, StringRef stepName, ArrayRef<Param> params,
                 const ::loom::Mesh &mesh);

  /// The validated options (set by initialize, read-only afterwards).
  Config config;
};

} // namespace

FailureOr<Config> Optimizer::validateOptions(MLIRContext *context) {
  auto fail = [&]() {
    return emitError(UnknownLoc::get(context)) << "loom-optimizer: ";
  };
  auto isNonNegative = [](double v) { return std::isfinite(v) && v >= 0.0; };

  Config result{};
  result.kind = optimizer;
  result.schedule = schedule;

  if (!isNonNegative(lr))
    return fail() << "lr must be a finite value >= 0, got " << lr.getValue();
  result.lr = lr;

  // SGD options.
  if (!isNonNegative(momentum))
    return fail() << "momentum must be >= 0, got " << momentum.getValue();
  if (result.isAdam() && (momentum != 0.0 || nesterov || dampening != 0.0))
    return fail() << "momentum, dampening and nesterov apply to "
                     "optimizer=sgd, not "
                  << stringifyOptimizerKind(optimizer);
  if (dampening != 0.0)
    return fail() << "dampening must be 0, got " << dampening.getValue()
                  << " (PyTorch's first step copies the gradient into the "
                     "momentum buffer undamped, which a zero-initialised "
                     "buffer reproduces only without dampening)";
  if (nesterov && momentum == 0.0)
    return fail() << "nesterov requires momentum > 0 (as torch.optim.SGD)";
  result.momentum = momentum;
  result.nesterov = nesterov;

  // Adam options, checked as torch.optim.Adam does.
  if (!result.isAdam() && (beta1 != 0.9 || beta2 != 0.999 || eps != 1e-8))
    return fail() << "beta1, beta2 and eps apply to optimizer=adam and "
                     "adamw, not sgd";
  if (!(beta1 >= 0.0 && beta1 < 1.0))
    return fail() << "beta1 must be in [0, 1), got " << beta1.getValue();
  if (!(beta2 >= 0.0 && beta2 < 1.0))
    return fail() << "beta2 must be in [0, 1), got " << beta2.getValue();
  if (!isNonNegative(eps))
    return fail() << "eps must be >= 0, got " << eps.getValue();
  result.beta1 = beta1;
  result.beta2 = beta2;
  result.eps = eps;

  if (weightDecay == -1.0)
    result.weightDecay = result.kind == OptimizerKind::adamw ? 0.01 : 0.0;
  else if (isNonNegative(weightDecay))
    result.weightDecay = weightDecay;
  else
    return fail() << "weight-decay must be >= 0 (or -1 for the optimizer's "
                     "default), got "
                  << weightDecay.getValue();

  if (!isNonNegative(clipGradNorm))
    return fail() << "clip-grad-norm must be >= 0 (0: no clipping), got "
                  << clipGradNorm.getValue();
  result.clipGradNorm = clipGradNorm;

  // Schedule options.
  if (warmupSteps < 0)
    return fail() << "warmup-steps must be >= 0, got "
                  << warmupSteps.getValue();
  if (totalSteps < 0)
    return fail() << "total-steps must be >= 0, got " << totalSteps.getValue();
  if (!isNonNegative(minLr))
    return fail() << "min-lr must be >= 0, got " << minLr.getValue();
  switch (result.schedule) {
  case LrSchedule::constant:
    if (warmupSteps != 0)
      return fail() << "warmup-steps needs schedule=warmup or cosine";
    if (minLr != 0.0)
      return fail() << "min-lr needs schedule=cosine";
    break;
  case LrSchedule::warmup:
    if (warmupSteps == 0)
      return fail() << "schedule=warmup needs warmup-steps > 0";
    if (minLr != 0.0)
      return fail() << "min-lr needs schedule=cosine";
    break;
  case LrSchedule::cosine:
    if (totalSteps == 0)
      return fail() << "schedule=cosine needs total-steps > 0";
    if (totalSteps <= warmupSteps)
      return fail() << "schedule=cosine needs total-steps ("
                    << totalSteps.getValue() << ") > warmup-steps ("
                    << warmupSteps.getValue() << ")";
    if (minLr > lr)
      return fail() << "min-lr (" << minLr.getValue() << ") exceeds lr ("
                    << lr.getValue() << ")";
    break;
  }
  result.warmupSteps = warmupSteps;
  result.totalSteps = totalSteps;
  result.minLr = minLr;
  return result;
}

FailureOr<SmallVector<Param>> Optimizer::collectParams(func::FuncOp grad) {
  if (grad.isExternal() || !grad.getBody().hasOneBlock())
    return grad.emitError() << "loom-optimizer: @" << grad.getSymName()
                            << " must have a body of one block";
  ArrayRef<Type> results = grad.getResultTypes();
  auto loss = results.empty() ? RankedTensorType()
                              : dyn_cast<RankedTensorType>(results[0]);
  if (!loss || loss.getRank() != 0 || !isa<FloatType>(loss.getElementType()) ||
      grad.getResultAttr(0, LoomDialect::getGradOfAttrName()))
    return grad.emitError()
               << "loom-optimizer: result 0 of @" << grad.getSymName()
               << " must be the loss, a rank-0 float tensor without "
                  "'loom.grad_of' (results are (loss, gradients...) as "
                  "loom-autodiff produces them)";

  // Gradient of each argument, if any.
  SmallVector<std::optional<unsigned>> gradOf(grad.getNumArguments());
  for (unsigned r = 1, e = results.size(); r < e; ++r) {
    auto index = grad.getResultAttrOfType<IntegerAttr>(
        r, LoomDialect::getGradOfAttrName());
    if (!index)
      return grad.emitError() << "loom-optimizer: result " << r << " of @"
                              << grad.getSymName()
                              << " has no 'loom.grad_of' (every result after "
                                 "the loss must be a gradient)";
    // The dialect verifier checked that the index names an argument.
    unsigned arg = index.getInt();
    if (gradOf[arg])
      return grad.emitError()
                 << "loom-optimizer: results " << *gradOf[arg] << " and " << r
                 << " of @" << grad.getSymName()
                 << " are both gradients of argument " << arg << " ('"
                 << argumentName(grad, arg) << "')";
    gradOf[arg] = r;
  }

  SmallVector<Param> params;
  for (auto [arg, result] : llvm::enumerate(gradOf)) {
    if (!result)
      continue;
    std::string name = argumentName(grad, arg);
    auto type = dyn_cast<RankedTensorType>(grad.getArgumentTypes()[arg]);
    if (!type || !type.hasStaticShape() || !type.getElementType().isF32())
      return grad.emitError()
                 << "loom-optimizer: parameter '" << name << "' (argument "
                 << arg << ") has type " << grad.getArgumentTypes()[arg]
                 << "; only f32 tensors of static shape are supported";
    if (results[*result] != type)
      return grad.emitError()
                 << "loom-optimizer: gradient result " << *result
                 << " has type " << results[*result] << ", but its parameter '"
                 << name << "' has type " << type;
    params.push_back({static_cast<unsigned>(arg), *result, name, type,
                      static_cast<bool>(grad.getArgAttrOfType<ShardAttr>(
                          arg, LoomDialect::getShardAttrName())),
                      static_cast<bool>(
                          grad.getArgAttr(arg, LoomDialect::getPipelineCopyAttrName()))});
  }
  if (params.empty())
    return grad.emitError() << "loom-optimizer: @" << grad.getSymName()
                            << " has no gradient results (loom.grad_of): "
                               "nothing to optimize";

  // Arguments and results are bound by name (loom-run, the runtime): the
  // state must not take a name an argument already has.
  llvm::StringSet<> names;
  for (unsigned i = 0, e = grad.getNumArguments(); i < e; ++i)
    names.insert(argumentName(grad, i));
  SmallVector<std::string> stateNames = {"step"};
  for (const Param &p : params)
    for (StringRef prefix : config.statePrefixes())
      stateNames.push_back((prefix + p.name).str());
  for (const std::string &name : stateNames)
    if (names.contains(name))
      return grad.emitError()
             << "loom-optimizer: an argument of @" << grad.getSymName()
             << " is named '" << name
             << "', the name of an optimizer state argument";
  return params;
}

void Optimizer::buildStep(func::FuncOp grad, StringRef stepName,
                          ArrayRef<Param> params, const ::loom::Mesh &mesh) {
  MLIRContext *ctx = &getContext();
  Builder attrs(ctx);
  auto stateAttrs = [&](StringRef name) {
    return attrs.getDictionaryAttr(
        {attrs.getNamedAttr(LoomDialect::getStateAttrName(),
                            attrs.getUnitAttr()),
         attrs.getNamedAttr(LoomDialect::getNameAttrName(),
                            attrs.getStringAttr(name))});
  };

  // @F_grad's argument attributes, with a `loom.name` (`argN`) where there
  // was none: arguments move, so positional names would change meaning.
  auto namedArgAttrs = [&](unsigned index) {
    NamedAttrList list(grad.getArgAttrDict(index));
    if (!list.get(LoomDialect::getNameAttrName()))
      list.set(LoomDialect::getNameAttrName(),
               attrs.getStringAttr(argumentName(grad, index)));
    return list.getDictionary(ctx);
  };

  // Arguments: params, step, per-param state, data.
  SmallVector<Type> argTypes;
  SmallVector<DictionaryAttr> argAttrs;
  SmallVector<std::string> argNames;
  for (const Param &p : params) {
    argTypes.push_back(p.type);
    argAttrs.push_back(namedArgAttrs(p.argIndex));
    argNames.push_back(p.name);
  }
  auto scalarType = RankedTensorType::get({}, Float32Type::get(ctx));
  const unsigned stepArg = argTypes.size();
  argTypes.push_back(scalarType);
  argAttrs.push_back(stateAttrs("step"));
  argNames.push_back("step");
  const unsigned firstStateArg = argTypes.size();
  for (const Param &p : params) {
    for (StringRef prefix : config.statePrefixes()) {
      argTypes.push_back(p.type);
      argNames.push_back((prefix + p.name).str());
      argAttrs.push_back(stateAttrs(argNames.back()));
    }
  }
  const unsigned numUpdated = argTypes.size();
  llvm::DenseSet<unsigned> isParam;
  for (const Param &p : params)
    isParam.insert(p.argIndex);
  SmallVector<unsigned> dataArgs;
  for (unsigned i = 0, e = grad.getNumArguments(); i < e; ++i) {
    if (isParam.contains(i))
      continue;
    dataArgs.push_back(i);
    argTypes.push_back(grad.getArgumentTypes()[i]);
    argAttrs.push_back(namedArgAttrs(i));
  }

  // Results: loss, then the new value of every argument before the data.
  SmallVector<Type> resultTypes = {grad.getResultTypes()[0]};
  NamedAttrList lossAttrs(grad.getResultAttrDict(0));
  lossAttrs.set(LoomDialect::getNameAttrName(), attrs.getStringAttr("loss"));
  SmallVector<DictionaryAttr> resultAttrs = {
      lossAttrs.getDictionary(ctx)};
  for (unsigned i = 0; i < numUpdated; ++i) {
    resultTypes.push_back(argTypes[i]);
    resultAttrs.push_back(attrs.getDictionaryAttr(
        {attrs.getNamedAttr(LoomDialect::getNameAttrName(),
                            attrs.getStringAttr(argNames[i])),
         attrs.getNamedAttr(LoomDialect::getUpdatesAttrName(),
                            attrs.getI64IntegerAttr(i))}));
  }

  OpBuilder moduleBuilder(grad);
  moduleBuilder.setInsertionPointAfter(grad);
  auto step = func::FuncOp::create(
      moduleBuilder, grad.getLoc(), stepName,
      FunctionType::get(ctx, argTypes, resultTypes));
  step.setVisibility(grad.getVisibility());
  // Discardable attributes of @F_grad (e.g. loom.dp from
  // loom-data-parallel) describe the step too.
  for (NamedAttribute attr : grad->getDiscardableAttrs())
    step->setAttr(attr.getName(), attr.getValue());
  step.setAllArgAttrs(argAttrs);
  step.setAllResultAttrs(resultAttrs);
  Block *entry = step.addEntryBlock();

  // The forward and backward computation: @F_grad's body, cloned.
  IRMapping mapping;
  for (auto [i, p] : llvm::enumerate(params))
    mapping.map(grad.getArgument(p.argIndex), entry->getArgument(i));
  for (auto [i, arg] : llvm::enumerate(dataArgs))
    mapping.map(grad.getArgument(arg), entry->getArgument(numUpdated + i));
  ImplicitLocOpBuilder b(grad.getLoc(), ctx);
  b.setInsertionPointToStart(entry);
  Block &body = grad.getBody().front();
  DenseSet<Operation *> clonedOps;
  for (Operation &op : body.without_terminator())
    clonedOps.insert(b.clone(op, mapping));
  auto gradReturn = cast<func::ReturnOp>(body.getTerminator());
  Value loss = mapping.lookupOrDefault(gradReturn.getOperand(0));
  SmallVector<Value> grads = llvm::map_to_vector(params, [&](const Param &p) {
    return mapping.lookupOrDefault(gradReturn.getOperand(p.gradResult));
  });

  // Ops are created one per statement (never two in the arguments of one
  // call, whose evaluation order C++ leaves open), so the IR is the same
  // with every compiler.
  UpdateBuilder u(b);
  SmallVector<Value> newValues(numUpdated);

  // The step counter, counted first (as PyTorch's `state_steps += 1`).
  Value oldStep = entry->getArgument(stepArg);
  Value one = u.scalar(1.0);
  Value newStep = u.add(oldStep, one);
  newValues[stepArg] = newStep;

  // This step's learning rate: a constant, or entry min(old step, n - 1) of
  // the schedule's table.
  std::optional<double> constantLr;
  Value lr;
  if (config.schedule == LrSchedule::constant) {
    constantLr = config.lr;
    // Parameter updates use splat constants; Adam's step size a scalar.
    if (config.isAdam())
      lr = u.scalar(config.lr);
  } else {
    // Rates for e = 0 .. n-1; the last one holds from there on: warmup
    // reaches lr at e = W - 1, cosine min-lr at e = T.
    int64_t n = config.schedule == LrSchedule::warmup
                    ? config.warmupSteps
                    : config.totalSteps + 1;
    SmallVector<double> rates =
        llvm::map_to_vector(llvm::seq<int64_t>(0, n), [&](int64_t e) {
          return scheduledLr(config, e);
        });
    Value table = u.table(rates);
    auto indexType = RankedTensorType::get({}, b.getI64Type());
    Value index = ConvertOp::create(b, indexType, oldStep);
    Value first = u.index(0);
    Value last = u.index(n - 1);
    index = u.min(u.max(index, first), last);
    lr = GatherOp::create(b, table, index, /*axis=*/0);
  }

  // Gradient clipping: torch.nn.utils.clip_grad_norm_ with norm type 2, the
  // norm of the per-tensor norms.
  // On a mesh the norm is global: tensor-parallel slices' squares are
  // summed over the tp group (replicated gradients counted once), and each
  // stage's over the pp group (a parameter several stages share, once).
  if (config.clipGradNorm > 0.0) {
    Value sharded, replicated;
    for (auto [i, g] : llvm::enumerate(grads)) {
      if (params[i].duplicate)
        continue;
      Value norm = u.sqrt(u.sumAll(u.mul(g, g)));
      Value square = u.mul(norm, norm);
      Value &sum = params[i].sharded ? sharded : replicated;
      sum = sum ? u.add(sum, square) : square;
    }
    auto sumOver = [&](::loom::MeshAxis axis, Value value) -> Value {
      return shard::AllReduceOp::create(b, value.getType(), kMeshGridName,
                                        meshGridAxes(axis), value);
    };
    if (sharded && mesh.tp > 1)
      sharded = sumOver(::loom::MeshAxis::Tp, sharded);
    Value sumOfSquares =
        sharded && replicated ? u.add(sharded, replicated)
        : sharded             ? sharded
        : replicated          ? replicated
                              : u.scalar(0.0);
    if (mesh.pp > 1)
      sumOfSquares = sumOver(::loom::MeshAxis::Pp, sumOfSquares);
    Value total = u.sqrt(sumOfSquares);
    Value maxNorm = u.scalar(config.clipGradNorm);
    Value tiny = u.scalar(1e-6);
    Value coef = u.div(maxNorm, u.add(total, tiny));
    coef = u.min(coef, one);
    for (auto [i, p] : llvm::enumerate(params))
      grads[i] = u.mul(grads[i], u.broadcast(coef, p.type));
  }

  // Adam's step size lr / (1 - beta1^t) and sqrt(1 - beta2^t), with
  // 1 - beta^t = -tanh(t ln(beta) / 2) (exp(t ln(beta)) + 1) (Passes.td).
  Value stepSize, bc2Sqrt;
  if (config.isAdam()) {
    auto biasCorrection = [&](double beta) {
      if (beta == 0.0)
        return one;
      Value halfLog = u.scalar(std::log(beta) / 2.0);
      Value half = u.mul(newStep, halfLog);
      Value power = u.exp(u.add(half, half));
      Value minusTanh = u.neg(u.tanh(half));
      return u.mul(minusTanh, u.add(power, one));
    };
    stepSize = u.div(lr, biasCorrection(config.beta1));
    bc2Sqrt = u.sqrt(biasCorrection(config.beta2));
  }

  // AdamW's decay factor 1 - lr * wd (PyTorch: in double from a float lr).
  Value decay;
  if (config.kind == OptimizerKind::adamw && config.weightDecay != 0.0 &&
      !constantLr) {
    Value wd = u.scalar(config.weightDecay);
    decay = u.sub(one, u.mul(lr, wd));
  }

  for (auto [i, p] : llvm::enumerate(params)) {
    RankedTensorType type = p.type;
    Value param = entry->getArgument(i);
    Value g = grads[i];
    unsigned stateArg = firstStateArg + i * config.statePerParam();

    if (config.kind == OptimizerKind::adamw) {
      if (config.weightDecay != 0.0) {
        Value factor =
            constantLr ? u.splat(1.0 - *constantLr * config.weightDecay, type)
                       : u.broadcast(decay, type);
        param = u.mul(param, factor);
      }
    } else if (config.weightDecay != 0.0) {
      // grad.add(param, alpha=weight_decay)
      Value wd = u.splat(config.weightDecay, type);
      g = u.add(g, u.mul(wd, param));
    }

    if (!config.isAdam()) {
      if (config.momentum != 0.0) {
        // buf.mul_(momentum).add_(grad);
        // nesterov: grad = grad.add(buf, alpha=momentum), else grad = buf.
        Value m = u.splat(config.momentum, type);
        Value buf = u.add(u.mul(entry->getArgument(stateArg), m), g);
        newValues[stateArg] = buf;
        g = config.nesterov ? u.add(g, u.mul(m, buf)) : buf;
      }
      // param.add_(grad, alpha=-lr)
      Value rate =
          constantLr ? u.splat(*constantLr, type) : u.broadcast(lr, type);
      newValues[i] = u.sub(param, u.mul(rate, g));
      continue;
    }

    // exp_avg.lerp_(grad, 1 - beta1), in PyTorch's two forms.
    Value expAvg = entry->getArgument(stateArg);
    float weight = static_cast<float>(1.0 - config.beta1);
    if (weight < 0.5f) {
      Value w = u.splat(weight, type);
      expAvg = u.add(expAvg, u.mul(w, u.sub(g, expAvg)));
    } else {
      Value w = u.splat(1.0f - weight, type);
      expAvg = u.sub(g, u.mul(u.sub(g, expAvg), w));
    }
    // exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    Value beta2 = u.splat(config.beta2, type);
    Value expAvgSq = u.mul(entry->getArgument(stateArg + 1), beta2);
    Value rest = u.splat(1.0 - config.beta2, type);
    expAvgSq = u.add(expAvgSq, u.mul(u.mul(rest, g), g));
    // denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
    Value denom = u.sqrt(expAvgSq);
    denom = u.div(denom, u.broadcast(bc2Sqrt, type));
    denom = u.add(denom, u.splat(config.eps, type));
    // param.addcdiv_(exp_avg, denom, value=-step_size)
    Value update = u.mul(u.broadcast(stepSize, type), expAvg);
    newValues[i] = u.sub(param, u.div(update, denom));
    newValues[stateArg] = expAvg;
    newValues[stateArg + 1] = expAvgSq;
  }

  // Mark the update's ops, for reports (the memory plan's categories).
  for (Operation &op : *entry)
    if (!op.hasAttr(LoomDialect::PhaseAttrHelper::getNameStr()) &&
        !clonedOps.contains(&op))
      op.setAttr(LoomDialect::PhaseAttrHelper::getNameStr(),
                 b.getStringAttr("optimizer"));

  SmallVector<Value> returned = {loss};
  llvm::append_range(returned, newValues);
  func::ReturnOp::create(b, returned);
}

LogicalResult Optimizer::initialize(MLIRContext *context) {
  FailureOr<Config> validated = validateOptions(context);
  if (failed(validated))
    return failure();
  config = *validated;
  return success();
}

void Optimizer::runOnOperation() {
  ModuleOp module = getOperation();
  FailureOr<func::FuncOp> grad =
      findGradFunction(getOperation(), function, "loom-optimizer");
  if (failed(grad))
    return signalPassFailure();
  StringRef gradName = grad->getSymName();
  std::optional<std::string> step = names::stepFunction(gradName);
  if (!step) {
    grad->emitError() << "loom-optimizer: the name of @" << gradName
                      << " does not end in '_grad', so the step function "
                         "cannot be named";
    return signalPassFailure();
  }
  std::string stepName = *step;
  if (module.lookupSymbol(stepName)) {
    grad->emitError() << "loom-optimizer: @" << stepName
                      << " already exists";
    return signalPassFailure();
  }
  FailureOr<SmallVector<Param>> params = collectParams(*grad);
  if (failed(params))
    return signalPassFailure();
  // A global norm on a mesh reduces over the tp and pp axes of @mesh.
  FailureOr<::loom::Mesh> mesh = getMesh(module);
  if (failed(mesh))
    return signalPassFailure();
  buildStep(*grad, stepName, *params, *mesh);
}

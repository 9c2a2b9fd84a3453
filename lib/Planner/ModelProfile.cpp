//===- ModelProfile.cpp - Profile a forward graph for the planner ---------===//

#include "loom/Planner/ModelProfile.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/LoomInterfaces.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"
#include "loom/Pipelines/TrainingPipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::planner;

namespace {

double bytesOf(Type type) {
  std::optional<int64_t> b = mlir::loom::detail::getNumBytes(type);
  return b ? static_cast<double>(*b) : 0.0;
}

/// Whether the backward pass of `user` reads its operand `value`: not for
/// ops whose vector-Jacobian product is linear in the cotangent alone
/// (sums, copies, views, collectives), nor for the values of a select.
bool backwardReads(Operation *user, Value value) {
  static constexpr llvm::StringLiteral linear[] = {
      "loom.add",       "loom.sub",          "loom.neg",
      "loom.broadcast", "loom.reshape",      "loom.transpose",
      "loom.split",     "loom.concat",       "loom.reduce_sum",
      "loom.tp_copy",   "loom.convert",      "loom.slice",
      "loom.pad",       "loom.stop_gradient", "shard.all_reduce",
      "shard.all_gather", "shard.reduce_scatter", "func.return"};
  llvm::StringRef name = user->getName().getStringRef();
  if (llvm::is_contained(linear, name))
    return false;
  if (name == "loom.select")
    return user->getOperand(0) == value;
  return true;
}

/// Ops whose backward pass reads their own result.
bool backwardReadsResult(Operation *op) {
  return isa<SoftmaxOp, ExpOp>(op);
}

} // namespace

FailureOr<ModelProfile>
mlir::loom::planner::profileModel(ModuleOp module, llvm::StringRef function,
                                  int64_t tp, std::string &error) {
  OwningOpRef<ModuleOp> clone(cast<ModuleOp>(module->clone()));
  MLIRContext *context = module->getContext();

  // The diagnostics of a refused tp degree become the error, not output.
  std::string diagnostics;
  ScopedDiagnosticHandler handler(context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error && diagnostics.empty())
      diagnostics = diag.str();
    return success();
  });
  PassManager pm(context, ModuleOp::getOperationName());
  pm.addPass(createLoomShapeInference());
  if (tp > 1) {
    LoomTensorParallelOptions tpOptions;
    tpOptions.function = function.str();
    tpOptions.tp = tp;
    pm.addPass(createLoomTensorParallel(tpOptions));
    LoomVocabParallelOptions vocab;
    vocab.function = function.str();
    vocab.tp = tp;
    pm.addPass(createLoomVocabParallel(vocab));
  }
  LoomMarkLayersOptions layers;
  layers.function = function.str();
  pm.addPass(createLoomMarkLayers(layers));
  if (failed(pm.run(*clone))) {
    error = "tp=" + std::to_string(tp) + ": " +
            (diagnostics.empty() ? std::string("the passes failed")
                                 : diagnostics);
    return failure();
  }

  auto func = clone->lookupSymbol<func::FuncOp>(function);
  if (!func || func.isExternal()) {
    error = "the model has no function @" + function.str();
    return failure();
  }

  ModelProfile profile;
  profile.tp = tp;

  // Data arguments: the batch, tokens per sample and the element type.
  llvm::DenseSet<Value> perRow;
  bool seenData = false;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    Value arg = func.getArgument(i);
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (func.getArgAttr(i, LoomDialect::getParamAttrName())) {
      if (type && isa<FloatType>(type.getElementType())) {
        Type element = type.getElementType();
        profile.elementBytes = (element.getIntOrFloatBitWidth() + 7) / 8;
        profile.format = element.isBF16()   ? NumberFormat::bf16
                         : element.isF16() ? NumberFormat::fp16
                                           : NumberFormat::fp32;
      }
      continue;
    }
    perRow.insert(arg);
    if (!seenData && type && type.getRank() >= 1) {
      seenData = true;
      profile.batch = std::max<int64_t>(1, type.getDimSize(0));
      int64_t tokens = 1;
      for (int64_t d = 1; d < type.getRank(); ++d)
        tokens *= std::max<int64_t>(1, type.getDimSize(d));
      profile.tokensPerSample = tokens;
    }
  }
  // Sequence length for the attention core: the last dimension of the
  // first data argument of rank >= 2.
  int64_t seq = profile.tokensPerSample;

  llvm::DenseMap<Operation *, size_t> position;
  llvm::DenseSet<Value> seenParams;
  llvm::DenseMap<Value, unsigned> paramIndex;
  int64_t maxLayer = -1;
  Block &body = func.getBody().front();
  for (Operation &op : body.without_terminator()) {
    position[&op] = profile.ops.size();
    ProfiledOp p;
    p.name = op.getName().getStringRef().str();
    for (Value operand : op.getOperands()) {
      if (perRow.contains(operand))
        p.perRow = true;
      auto arg = dyn_cast<BlockArgument>(operand);
      bool isParam =
          arg && arg.getOwner() == &body &&
          func.getArgAttr(arg.getArgNumber(), LoomDialect::getParamAttrName());
      if (isParam) {
        auto [it, fresh] =
            paramIndex.try_emplace(arg, static_cast<unsigned>(
                                            profile.params.size()));
        if (fresh) {
          ModelProfile::Param param;
          param.bytes = bytesOf(arg.getType());
          if (std::optional<int64_t> n =
                  mlir::loom::detail::getNumElements(arg.getType()))
            param.elements = static_cast<double>(*n);
          profile.params.push_back(param);
        }
        if (!llvm::is_contained(p.params, it->second))
          p.params.push_back(it->second);
      }
      if (isParam && seenParams.insert(arg).second) {
        if (p.firstParam.empty())
          if (auto name = func.getArgAttrOfType<StringAttr>(
                  arg.getArgNumber(), LoomDialect::getNameAttrName()))
            p.firstParam = name.getValue().str();
        p.paramBytes += bytesOf(arg.getType());
        if (std::optional<int64_t> n =
                mlir::loom::detail::getNumElements(arg.getType()))
          p.paramElements += static_cast<double>(*n);
      }
    }
    if (p.perRow)
      for (Value result : op.getResults())
        perRow.insert(result);
    if (auto cost = dyn_cast<CostInterface>(&op)) {
      p.flops = static_cast<double>(cost.getFlopCount().value_or(0));
      p.bytes = static_cast<double>(cost.getBytesAccessed().value_or(0));
    }
    p.gemm = isa<DotGeneralOp>(op);
    if (auto layer = op.getAttrOfType<IntegerAttr>("loom.layer")) {
      p.layer = layer.getInt();
      maxLayer = std::max(maxLayer, p.layer);
    }
    for (Value result : op.getResults()) {
      auto type = dyn_cast<RankedTensorType>(result.getType());
      if (type && type.getRank() >= 2 && seq > 1 &&
          type.getDimSize(type.getRank() - 1) == seq &&
          type.getDimSize(type.getRank() - 2) == seq && p.perRow)
        p.attentionCore = true;
    }
    if (isa<shard::AllReduceOp, shard::AllGatherOp, shard::ReduceScatterOp,
            shard::AllToAllOp>(op))
      for (Value result : op.getResults())
        p.forwardCommBytes += bytesOf(result.getType());
    if (isa<TpCopyOp>(op))
      p.backwardCommBytes += bytesOf(op.getResult(0).getType());
    // What the backward pass keeps of this op: each result some op's
    // vector-Jacobian product reads.
    if (p.perRow)
      for (Value result : op.getResults())
        if (backwardReadsResult(&op) ||
            llvm::any_of(result.getUsers(), [&](Operation *user) {
              return backwardReads(user, result);
            }))
          p.savedBytes += bytesOf(result.getType());
    profile.ops.push_back(std::move(p));
  }
  profile.layers = maxLayer + 1;

  // Elementwise fusion as loom-fuse-elementwise does it: a producer whose
  // only reader is an elementwise op of its shape runs in that op's loop,
  // so neither writes nor reads the value it passes.
  for (Operation &op : body.without_terminator()) {
    if (!op.hasTrait<::mlir::loom::OpTrait::ElementwiseMapping>() || op.getNumResults() != 1)
      continue;
    Value result = op.getResult(0);
    if (!result.hasOneUse())
      continue;
    Operation *user = *result.getUsers().begin();
    if (user->getBlock() != &body ||
        !user->hasTrait<::mlir::loom::OpTrait::ElementwiseMapping>() ||
        user->getNumResults() != 1 ||
        cast<ShapedType>(result.getType()).getShape() !=
            cast<ShapedType>(user->getResult(0).getType()).getShape())
      continue;
    double b = bytesOf(result.getType());
    ProfiledOp &producer = profile.ops[position[&op]];
    ProfiledOp &consumer = profile.ops[position[user]];
    producer.fused = true;
    producer.bytes = std::max(0.0, producer.bytes - b);
    consumer.bytes = std::max(0.0, consumer.bytes - b);
  }

  // The weight products each tensor-parallel copy feeds.
  for (Operation &op : body.without_terminator()) {
    if (!isa<TpCopyOp>(op))
      continue;
    for (Operation *user : op.getResult(0).getUsers()) {
      auto dot = dyn_cast<DotGeneralOp>(user);
      if (!dot || dot->getBlock() != &body)
        continue;
      Value other = dot.getLhs() == op.getResult(0) ? dot.getRhs()
                                                    : dot.getLhs();
      if (!perRow.contains(other))
        profile.ops[position[&op]].weightProducts.push_back(position[dot]);
    }
  }

  // Activation bytes live across each point: +size after the definition,
  // -size after the last use.
  std::vector<double> delta(profile.ops.size() + 1, 0.0);
  for (Operation &op : body.without_terminator()) {
    size_t def = position[&op];
    if (!profile.ops[def].perRow)
      continue;
    for (Value result : op.getResults()) {
      size_t last = def;
      for (Operation *user : result.getUsers()) {
        Operation *top = body.findAncestorOpInBlock(*user);
        auto it = top ? position.find(top) : position.end();
        last = std::max(last, it == position.end() ? profile.ops.size()
                                                   : it->second);
      }
      if (last > def) {
        double b = bytesOf(result.getType());
        delta[def + 1] += b;
        delta[std::min(last, profile.ops.size() - 1) + 1] -= b;
      }
    }
  }
  double live = 0;
  for (size_t i = 0; i < profile.ops.size(); ++i) {
    live += delta[i];
    profile.ops[i].crossBytes = std::max(0.0, live);
  }
  return profile;
}

FailureOr<std::vector<int64_t>>
mlir::loom::planner::compiledFigures(ModuleOp module,
                                     const TrainingOptions &options,
                                     llvm::StringRef attr, std::string &error,
                                     OwningOpRef<ModuleOp> *compiled) {
  std::string diagnostics;
  ScopedDiagnosticHandler handler(module->getContext(), [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error && diagnostics.empty())
      diagnostics = d.str();
    return success();
  });
  FailureOr<OwningOpRef<ModuleOp>> clone = compileTrial(module, options);
  if (failed(clone)) {
    error = "compiling @" + options.function + " failed" +
            (diagnostics.empty() ? std::string() : ": " + diagnostics);
    return failure();
  }
  std::vector<int64_t> figures;
  for (const std::string &name : stepFunctions(options)) {
    auto step = (**clone).lookupSymbol<func::FuncOp>(name);
    auto value = step ? step->getAttrOfType<IntegerAttr>(attr) : IntegerAttr();
    if (!value) {
      error = "the memory plan gave no " + attr.str() + " for @" + name;
      return failure();
    }
    figures.push_back(value.getInt());
  }
  if (compiled)
    *compiled = std::move(*clone);
  return figures;
}

FailureOr<double>
mlir::loom::planner::calibrateActivations(
    ModuleOp module, llvm::StringRef function, Precision precision,
    OptimizerKind optimizer, const ModelProfile &oneDevice, std::string &error,
    OwningOpRef<ModuleOp> *compiled) {
  double saved = 0;
  for (const ProfiledOp &op : oneDevice.ops)
    if (op.perRow)
      saved += op.savedBytes;
  TrainingOptions options;
  options.function = function.str();
  options.precision = precision;
  options.optimizer.kind = optimizer;
  FailureOr<std::vector<int64_t>> peak = compiledFigures(
      module, options, "loomrt.activation_peak_bytes", error, compiled);
  if (failed(peak))
    return failure();
  if (saved <= 0)
    return 1.0;
  return static_cast<double>(peak->front()) / saved;
}

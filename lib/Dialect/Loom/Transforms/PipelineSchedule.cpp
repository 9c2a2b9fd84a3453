//===- PipelineSchedule.cpp - Per-stage training functions ----------------===//
//
// Implements -loom-pipeline-schedule (see Passes.td for the contract): the
// unrolled GPipe / 1F1B schedule of one pipeline stage, as a gradient
// function that loom-data-parallel and loom-optimizer take as they are.
//
//===----------------------------------------------------------------------===//

#include "PipelineUtils.h"
#include "TargetFunction.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/MeshGrid.h"
#include "loom/Dialect/Loom/Transforms/Autodiff.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"
#include "loom/Dialect/Loom/Transforms/TrainingFunctions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Inliner.h"
#include "mlir/Transforms/InliningUtils.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/DenseMap.h"

#include <map>
#include <tuple>

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_LOOMPIPELINESCHEDULE
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;

namespace {

constexpr llvm::StringLiteral kPass = "loom-pipeline-schedule";
/// MPI guarantees tags up to this value.
constexpr int64_t kMaxTag = 32767;

/// A value that one stage sends to a later one.
struct Edge {
  int64_t from;      ///< producing stage
  unsigned output;   ///< result of the producer's stage function
  int64_t to;        ///< reading stage
  unsigned received; ///< index among the reader's received values
};

/// One stage of the split function.
struct Stage {
  func::CallOp call;
  func::FuncOp func;
  /// Operands [0, numArgs) are arguments of @F; the rest are received.
  unsigned numArgs = 0;
  /// Edge of each received value.
  SmallVector<unsigned> receivedEdges;
  /// Edges of each output, in edge order.
  SmallVector<SmallVector<unsigned>> outputEdges;
  /// The function computing the stage's gradients (autodiff output).
  func::FuncOp grad;
};

/// Inlines the calls in `f` of functions with a body, one level deep (the
/// stage and gradient helpers call nothing), with upstream's inliner: the
/// dialects' inliner interfaces decide what may move (loom's, shard's, and
/// func's extension for the call and `func.return`).
LogicalResult inlineCalls(func::FuncOp f) {
  SmallVector<func::CallOp> calls;
  f.walk([&](func::CallOp call) { calls.push_back(call); });
  MLIRContext *ctx = f.getContext();
  InlinerInterface interface(ctx);
  InlinerConfig config;
  for (func::CallOp call : calls) {
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    if (!callee || callee.isExternal())
      continue;
    // The calls are the pass's own, not the user's: the inlined ops keep
    // their locations (inlineCall wraps them in a CallSiteLoc of the call's
    // location unless that is unknown).
    Location loc = call.getLoc();
    call->setLoc(UnknownLoc::get(ctx));
    if (succeeded(inlineCall(interface, config.getCloneCallback(), call,
                             callee, &callee.getBody()))) {
      call.erase();
      continue;
    }
    call->setLoc(loc);
    // Name the op no dialect inliner interface accepts.
    Operation *refused = call;
    IRMapping mapping;
    callee.walk([&](Operation *op) {
      if (refused == call && op != callee &&
          !interface.isLegalToInline(op, call->getParentRegion(), true,
                                     mapping))
        refused = op;
    });
    return call.emitError()
           << kPass << ": cannot inline @" << callee.getSymName() << ": '"
           << refused->getName()
           << "' has no inliner interface that allows it; register its "
              "dialect's (and func's, func::registerInlinerExtension)";
  }
  return success();
}

bool isFloat(Value v) {
  return isa<FloatType>(getElementTypeOrSelf(v.getType()));
}

std::string receivedName(unsigned q) { return "recv" + std::to_string(q); }

struct PipelineSchedule
    : public mlir::loom::impl::LoomPipelineScheduleBase<PipelineSchedule> {
  using Base::Base;
  void runOnOperation() override;

private:
  FailureOr<func::FuncOp> findFunction();
  LogicalResult analyse(func::FuncOp func);
  LogicalResult checkGrid(int64_t numStages);
  func::FuncOp buildVjpWrapper(Stage &stage);
  LogicalResult differentiate();
  LogicalResult buildSchedule(int64_t k, func::FuncOp func);

  std::vector<Stage> stages;
  std::vector<Edge> edges;
  /// Parameters several stages read (a tied embedding): @F argument ->
  /// the stages, in order. Their gradients are summed over those stages.
  std::map<unsigned, SmallVector<int64_t>> sharedParams;
  /// Tag of the transfer of shared parameter `arg`'s gradient from stage
  /// `from` to stage `to`, after the micro-batch tags.
  std::map<std::tuple<unsigned, int64_t, int64_t>, int64_t> sharedTags;
  /// The stage result that is the loss (last stage).
  unsigned lossOutput = 0;
};

} // namespace

FailureOr<func::FuncOp> PipelineSchedule::findFunction() {
  auto callsStages = [](func::FuncOp func) {
    bool calls = false;
    func.walk([&](func::CallOp call) {
      calls |= static_cast<bool>(call->getAttr(pipeline::kStageAttrName));
    });
    return calls;
  };
  TargetFunctionQuery query;
  query.pass = kPass;
  query.name = function;
  query.isCandidate = callsStages;
  query.candidates = "calling pipeline stages";
  query.hint = "run loom-pipeline-partition and loom-pipeline-split first";
  FailureOr<func::FuncOp> found = findTargetFunction(getOperation(), query);
  if (succeeded(found) && found->isExternal())
    return found->emitError() << kPass << ": @" << found->getSymName()
                              << " has no body";
  return found;
}

LogicalResult PipelineSchedule::analyse(func::FuncOp func) {
  Block &body = func.getBody().front();
  DenseMap<Operation *, int64_t> stageOfCall;
  for (Operation &op : body.without_terminator()) {
    auto call = dyn_cast<func::CallOp>(op);
    if (!call) {
      // Replicated values @F returns (constants) may stay in its body.
      if (op.getNumOperands() == 0 || isa<ConstantOp>(op))
        continue;
      return op.emitError() << kPass << ": @" << func.getSymName()
                            << " must be a sequence of stage calls (from "
                               "loom-pipeline-split)";
    }
    auto attr = call->getAttrOfType<IntegerAttr>(pipeline::kStageAttrName);
    auto callee = getOperation().lookupSymbol<func::FuncOp>(call.getCallee());
    if (!attr || attr.getInt() != static_cast<int64_t>(stages.size()) ||
        !callee || callee.isExternal())
      return call.emitError()
             << kPass << ": expected the call of stage " << stages.size()
             << " (loom.stage = " << stages.size()
             << " : i64, calling a stage function with a body)";
    Stage stage;
    stage.call = call;
    stage.func = callee;
    for (Value operand : call.getOperands()) {
      if (isa<BlockArgument>(operand)) {
        if (!stage.receivedEdges.empty())
          return call.emitError() << kPass << ": arguments of @"
                                  << func.getSymName()
                                  << " must precede received values";
        ++stage.numArgs;
        continue;
      }
      auto producer = operand.getDefiningOp<func::CallOp>();
      if (!producer || !stageOfCall.count(producer))
        return call.emitError() << kPass << ": stage " << stages.size()
                                << " reads a value that is neither an "
                                   "argument nor an earlier stage's output";
      int64_t from = stageOfCall[producer];
      unsigned output = cast<OpResult>(operand).getResultNumber();
      edges.push_back({from, output, static_cast<int64_t>(stages.size()),
                       static_cast<unsigned>(stage.receivedEdges.size())});
      stage.receivedEdges.push_back(static_cast<unsigned>(edges.size() - 1));
    }
    stage.outputEdges.resize(call.getNumResults());
    stageOfCall[call] = static_cast<int64_t>(stages.size());
    stages.push_back(std::move(stage));
  }
  if (stages.empty())
    return func.emitError() << kPass << ": @" << func.getSymName()
                            << " calls no stage";
  // Edge order: producer, output, reader. Renumber the references.
  SmallVector<unsigned> order(edges.size());
  for (unsigned i = 0; i < order.size(); ++i)
    order[i] = i;
  llvm::stable_sort(order, [&](unsigned a, unsigned b) {
    return std::tie(edges[a].from, edges[a].output, edges[a].to) <
           std::tie(edges[b].from, edges[b].output, edges[b].to);
  });
  std::vector<Edge> sorted;
  SmallVector<unsigned> newIndex(edges.size());
  for (unsigned i : order) {
    newIndex[i] = static_cast<unsigned>(sorted.size());
    sorted.push_back(edges[i]);
  }
  edges = std::move(sorted);
  for (Stage &stage : stages)
    for (unsigned &e : stage.receivedEdges)
      e = newIndex[e];
  for (auto [e, edge] : llvm::enumerate(edges))
    stages[edge.from].outputEdges[edge.output].push_back(e);

  // The loss: @F's result named `loss`, or its only result; the last stage
  // must compute it.
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  int64_t lossResult = -1;
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    auto name =
        func.getResultAttrOfType<StringAttr>(i, LoomDialect::getNameAttrName());
    // Without `loss`: the only result, else the one named "loss".
    if (loss.empty() ? (func.getNumResults() == 1 ||
                        (name && name.getValue() == "loss"))
                     : (name && name.getValue() == loss))
      lossResult = i;
  }
  if (lossResult < 0)
    return func.emitError() << kPass << ": @" << func.getSymName()
                            << (loss.empty() ? " has several results and none "
                                               "named 'loss'; name the loss "
                                               "with loss=NAME"
                                             : " has no result named '" + loss +
                                                   "'");
  Value lossValue = ret.getOperand(lossResult);
  auto lossCall = lossValue.getDefiningOp<func::CallOp>();
  if (lossCall != stages.back().call) {
    InFlightDiagnostic diag = func.emitError()
                              << kPass << ": the loss must be computed by the "
                                          "last stage ("
                              << stages.size() - 1 << ")";
    if (lossCall && stageOfCall.count(lossCall))
      diag << ", but stage " << stageOfCall[lossCall] << " computes it";
    return diag;
  }
  lossOutput = cast<OpResult>(lossValue).getResultNumber();
  auto lossType = dyn_cast<RankedTensorType>(lossValue.getType());
  if (!lossType || lossType.getRank() != 0 || !lossType.getElementType().isF32())
    return func.emitError() << kPass << ": the loss must be a tensor<f32>, got "
                            << lossValue.getType();

  // Data arguments carry the micro-batches along dimension 0.
  for (BlockArgument arg : func.getArguments()) {
    if (func.getArgAttr(arg.getArgNumber(), LoomDialect::getParamAttrName()))
      continue;
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || type.getRank() == 0 || !type.hasStaticShape())
      return func.emitError()
             << kPass << ": data argument #" << arg.getArgNumber()
             << " needs a static batch dimension (dimension 0) to hold "
                "the micro-batches, got "
             << arg.getType();
  }
  // Parameters read by several stages.
  std::map<unsigned, SmallVector<int64_t>> users;
  for (auto [k, stage] : llvm::enumerate(stages))
    for (unsigned i = 0; i < stage.numArgs; ++i) {
      auto arg = cast<BlockArgument>(stage.call.getOperand(i));
      if (func.getArgAttr(arg.getArgNumber(), LoomDialect::getParamAttrName()) &&
          isFloat(arg))
        users[arg.getArgNumber()].push_back(static_cast<int64_t>(k));
    }
  int64_t nextTag = microbatches * static_cast<int64_t>(edges.size()) * 2;
  for (auto &[arg, list] : users) {
    if (list.size() < 2)
      continue;
    sharedParams[arg] = list;
    for (int64_t from : list)
      for (int64_t to : list)
        if (from != to)
          sharedTags[{arg, from, to}] = nextTag++;
  }
  int64_t maxTag = nextTag - 1;
  if (maxTag > kMaxTag)
    return func.emitError() << kPass << ": " << static_cast<int64_t>(microbatches)
                            << " micro-batches of " << edges.size()
                            << " transfers need MPI tags up to " << maxTag
                            << ", beyond the guaranteed " << kMaxTag;
  return success();
}

LogicalResult PipelineSchedule::checkGrid(int64_t numStages) {
  return getOrCreateMeshGrid(getOperation(), ::loom::MeshAxis::Pp, numStages,
                             kPass);
}

/// @F_stage<k>_vjp(stage args..., received..., cotangents...) -> loss =
/// sum_i <output_i, cotangent_i> over the float outputs that later stages
/// read: its gradient is the stage's vector-Jacobian product.
func::FuncOp PipelineSchedule::buildVjpWrapper(Stage &stage) {
  func::FuncOp f = stage.func;
  SmallVector<Type> inputs(f.getArgumentTypes());
  SmallVector<unsigned> cotOutputs;
  for (auto [r, list] : llvm::enumerate(stage.outputEdges))
    if (!list.empty() && isFloat(f.getBody().front().getTerminator()->getOperand(r))) {
      cotOutputs.push_back(r);
      inputs.push_back(f.getResultTypes()[r]);
    }
  OpBuilder builder(&getContext());
  builder.setInsertionPointAfter(f);
  auto scalar = RankedTensorType::get({}, builder.getF32Type());
  auto wrapper = func::FuncOp::create(
      builder, f.getLoc(), names::vjpFunction(f.getSymName()),
      builder.getFunctionType(inputs, {scalar}));
  wrapper.setPrivate();
  for (unsigned i = 0; i < f.getNumArguments(); ++i)
    wrapper.setArgAttrs(i, f.getArgAttrDict(i));
  for (auto [i, r] : llvm::enumerate(cotOutputs))
    wrapper.setArgAttr(f.getNumArguments() + i, LoomDialect::getNameAttrName(),
                       builder.getStringAttr("cot" + std::to_string(r)));
  wrapper.setResultAttr(0, LoomDialect::getNameAttrName(),
                        builder.getStringAttr("loss"));
  Block *entry = wrapper.addEntryBlock();
  IRMapping mapping;
  for (unsigned i = 0; i < f.getNumArguments(); ++i)
    mapping.map(f.getArgument(i), entry->getArgument(i));
  ImplicitLocOpBuilder b(f.getLoc(), OpBuilder::atBlockEnd(entry));
  for (Operation &op : f.getBody().front().without_terminator())
    b.clone(op, mapping);
  Operation *ret = f.getBody().front().getTerminator();
  Value total;
  for (auto [i, r] : llvm::enumerate(cotOutputs)) {
    Value out = mapping.lookup(ret->getOperand(r));
    Value cot = entry->getArgument(f.getNumArguments() + i);
    Value product = MulOp::create(b, out, cot);
    auto type = cast<RankedTensorType>(product.getType());
    Value sum = product;
    if (type.getRank() > 0)
      sum = ReduceSumOp::create(
          b, product, llvm::to_vector(llvm::seq<int64_t>(0, type.getRank())));
    if (!type.getElementType().isF32())
      sum = ConvertOp::create(b, scalar, sum);
    total = total ? Value(AddOp::create(b, total, sum)) : sum;
  }
  if (!total)
    total = ConstantOp::create(b, scalar, DenseElementsAttr::get(scalar, 0.0f));
  func::ReturnOp::create(b, total);
  return wrapper;
}

LogicalResult PipelineSchedule::differentiate() {
  ModuleOp module = getOperation();
  int64_t last = static_cast<int64_t>(stages.size()) - 1;
  for (auto [k, stage] : llvm::enumerate(stages)) {
    func::FuncOp f = stage.func;
    // Name the received values so that autodiff can be asked for them.
    GradientOptions options;
    for (unsigned q = 0; q < stage.receivedEdges.size(); ++q) {
      unsigned i = stage.numArgs + q;
      f.setArgAttr(i, LoomDialect::getNameAttrName(),
                   StringAttr::get(&getContext(), receivedName(q)));
      if (isFloat(f.getArgument(i)))
        options.wrt.push_back(receivedName(q));
    }
    func::FuncOp target = f;
    if (static_cast<int64_t>(k) == last) {
      Attribute name = f.getResultAttr(lossOutput, LoomDialect::getNameAttrName());
      if (f.getNumResults() > 1) {
        if (!name)
          return f.emitError() << kPass << ": the last stage returns several "
                                          "values and its loss has no loom.name";
        options.loss = cast<StringAttr>(name).getValue().str();
      }
    } else {
      target = buildVjpWrapper(stage);
    }
    FailureOr<func::FuncOp> grad = buildGradientFunction(target, options);
    if (failed(grad))
      return failure();
    stage.grad = *grad;
    stage.grad.setPrivate();
    // @F_stage<k>_grad is the name of the schedule function.
    if (static_cast<int64_t>(k) == last &&
        failed(SymbolTable(module).rename(
            stage.grad, (f.getSymName() + "_loss_grad").str())))
      return failure();
  }
  return success();
}

LogicalResult PipelineSchedule::buildSchedule(int64_t k, func::FuncOp func) {
  Stage &stage = stages[k];
  func::FuncOp f = stage.func;
  int64_t numStages = static_cast<int64_t>(stages.size());
  bool isLast = k == numStages - 1;
  MLIRContext *ctx = &getContext();
  auto scalar = RankedTensorType::get({}, Float32Type::get(ctx));

  // Signature: the stage's arguments of @F, data ones M times as long.
  SmallVector<Type> inputs;
  SmallVector<bool> isParam;
  for (unsigned i = 0; i < stage.numArgs; ++i) {
    auto arg = cast<BlockArgument>(stage.call.getOperand(i));
    bool param = static_cast<bool>(
        func.getArgAttr(arg.getArgNumber(), LoomDialect::getParamAttrName()));
    isParam.push_back(param);
    auto type = cast<RankedTensorType>(arg.getType());
    if (!param) {
      SmallVector<int64_t> shape(type.getShape());
      shape[0] *= microbatches;
      type = RankedTensorType::get(shape, type.getElementType());
    }
    inputs.push_back(type);
  }
  SmallVector<Type> outputs = {scalar};
  SmallVector<unsigned> params;
  for (unsigned i = 0; i < stage.numArgs; ++i)
    if (isParam[i] && isFloat(f.getArgument(i))) {
      params.push_back(i);
      outputs.push_back(f.getArgument(i).getType());
    }

  OpBuilder builder(ctx);
  builder.setInsertionPointAfter(func);
  std::string name = names::gradFunction(f.getSymName());
  if (Operation *clash = getOperation().lookupSymbol(name))
    return clash->emitError() << kPass << ": cannot create @" << name
                              << ": the name is taken";
  auto sched = func::FuncOp::create(builder, func.getLoc(), name,
                                    builder.getFunctionType(inputs, outputs));
  for (unsigned i = 0; i < stage.numArgs; ++i) {
    sched.setArgAttrs(i, f.getArgAttrDict(i));
    // A shared parameter's copies after its first stage.
    auto shared = sharedParams.find(
        cast<BlockArgument>(stage.call.getOperand(i)).getArgNumber());
    if (shared != sharedParams.end() && shared->second.front() != k)
      sched.setArgAttr(i, LoomDialect::getPipelineCopyAttrName(), builder.getUnitAttr());
  }
  sched.setResultAttr(0, LoomDialect::getNameAttrName(),
                      builder.getStringAttr("loss"));
  for (auto [j, i] : llvm::enumerate(params)) {
    auto argName = f.getArgAttrOfType<StringAttr>(i, LoomDialect::getNameAttrName());
    std::string n = argName ? argName.getValue().str() : "arg" + std::to_string(i);
    sched.setResultAttr(j + 1, LoomDialect::getNameAttrName(),
                        builder.getStringAttr("grad." + n));
    sched.setResultAttr(j + 1, LoomDialect::getGradOfAttrName(),
                        builder.getI64IntegerAttr(i));
  }
  sched->setAttr(pipeline::kStageAttrName, builder.getI64IntegerAttr(k));
  sched->setAttr(LoomDialect::MicrobatchesAttrHelper::getNameStr(),
                 builder.getI64IntegerAttr(microbatches));
  sched->setAttr(LoomDialect::ScheduleAttrHelper::getNameStr(),
                 builder.getStringAttr(stringifyPipelineScheduleKind(schedule)));

  Block *entry = sched.addEntryBlock();
  ImplicitLocOpBuilder b(func.getLoc(), OpBuilder::atBlockEnd(entry));
  auto backward = [&](Value v) {
    if (Operation *op = v.getDefiningOp())
      op->setAttr(LoomDialect::PhaseAttrHelper::getNameStr(),
                  b.getStringAttr("backward"));
    return v;
  };
  auto tag = [&](int64_t m, unsigned e, int64_t direction) {
    return (m * static_cast<int64_t>(edges.size()) + e) * 2 + direction;
  };
  auto tagged = [&](Operation *op, int64_t value) {
    op->setAttr(LoomDialect::TagAttrHelper::getNameStr(),
                b.getI64IntegerAttr(value));
  };
  // Point-to-point transfers on the pp axis of @mesh; rank-0 values as [1].
  SmallVector<int16_t, 1> ppAxes = meshGridAxes(::loom::MeshAxis::Pp);
  auto send = [&](Value v, int64_t to, int64_t t) {
    auto type = cast<RankedTensorType>(v.getType());
    if (type.getRank() == 0)
      v = ReshapeOp::create(
          b, RankedTensorType::get({1}, type.getElementType()), v);
    auto op = shard::SendOp::create(b, v.getType(), kMeshGridName, ppAxes, v,
                                    b.getDenseI64ArrayAttr({to}), ValueRange());
    tagged(op, t);
  };
  auto recv = [&](Type type, int64_t from, int64_t t) -> Value {
    auto ranked = cast<RankedTensorType>(type);
    auto wire = ranked.getRank() == 0
                    ? RankedTensorType::get({1}, ranked.getElementType())
                    : ranked;
    Value zeros = ConstantOp::create(
        b, wire, DenseElementsAttr::get(wire, b.getZeroAttr(wire.getElementType())));
    auto op = shard::RecvOp::create(b, wire, kMeshGridName, ppAxes, zeros,
                                    b.getDenseI64ArrayAttr({from}), ValueRange());
    tagged(op, t);
    Value v = op.getResult();
    if (ranked.getRank() == 0)
      v = ReshapeOp::create(b, ranked, v);
    return v;
  };

  // Per micro-batch: the stage function's operands (args then received).
  std::vector<SmallVector<Value>> operandsOf(microbatches);
  Value lossSum;
  SmallVector<Value> gradSum(params.size());
  auto accumulate = [&](SmallVector<Value> &sums, ArrayRef<Value> values) {
    for (auto [s, v] : llvm::zip(sums, values))
      s = s ? backward(AddOp::create(b, s, v)) : v;
  };
  // grads of the autodiff function: map loom.grad_of -> result.
  auto gradResults = [&](func::CallOp call) {
    DenseMap<int64_t, Value> byArg;
    for (unsigned r = 1; r < call.getNumResults(); ++r)
      if (auto of = stage.grad.getResultAttrOfType<IntegerAttr>(
              r, LoomDialect::getGradOfAttrName()))
        byArg[of.getInt()] = call.getResult(r);
    return byArg;
  };
  auto addParamGrads = [&](const DenseMap<int64_t, Value> &byArg) {
    SmallVector<Value> values;
    for (unsigned i : params) {
      Value g = byArg.lookup(i);
      if (!g) {
        auto type = cast<RankedTensorType>(f.getArgument(i).getType());
        g = ConstantOp::create(
            b, type, DenseElementsAttr::get(type, b.getZeroAttr(type.getElementType())));
      }
      values.push_back(g);
    }
    accumulate(gradSum, values);
  };
  auto sendReceivedGrads = [&](int64_t m, const DenseMap<int64_t, Value> &byArg) {
    for (auto [q, e] : llvm::enumerate(stage.receivedEdges)) {
      Value g = byArg.lookup(stage.numArgs + q);
      if (!g)
        continue; // an integer value: no cotangent
      send(g, edges[e].from, tag(m, e, 1));
    }
  };

  auto forward = [&](int64_t m) {
    SmallVector<Value> &operands = operandsOf[m];
    for (unsigned i = 0; i < stage.numArgs; ++i) {
      Value arg = entry->getArgument(i);
      if (isParam[i]) {
        operands.push_back(arg);
        continue;
      }
      auto type = cast<RankedTensorType>(f.getArgument(i).getType());
      SmallVector<int64_t> start(type.getRank(), 0), limit(type.getShape()),
          strides(type.getRank(), 1);
      start[0] = m * type.getDimSize(0);
      limit[0] = start[0] + type.getDimSize(0);
      operands.push_back(SliceOp::create(b, type, arg, start, limit, strides));
    }
    for (auto [q, e] : llvm::enumerate(stage.receivedEdges))
      operands.push_back(recv(f.getArgument(stage.numArgs + q).getType(),
                              edges[e].from, tag(m, e, 0)));
    if (isLast) {
      auto call = func::CallOp::create(b, stage.grad, operands);
      Value l = call.getResult(0);
      lossSum = lossSum ? backward(AddOp::create(b, lossSum, l)) : l;
      DenseMap<int64_t, Value> byArg = gradResults(call);
      addParamGrads(byArg);
      sendReceivedGrads(m, byArg);
      return;
    }
    auto call = func::CallOp::create(b, f, operands);
    for (auto [r, list] : llvm::enumerate(stage.outputEdges))
      for (unsigned e : list)
        send(call.getResult(r), edges[e].to, tag(m, e, 0));
  };
  auto backwardSlot = [&](int64_t m) {
    if (isLast)
      return;
    SmallVector<Value> operands(operandsOf[m]);
    Operation *ret = f.getBody().front().getTerminator();
    for (auto [r, list] : llvm::enumerate(stage.outputEdges)) {
      if (list.empty() || !isFloat(ret->getOperand(r)))
        continue;
      Value cot;
      for (unsigned e : list) {
        Value got = recv(f.getResultTypes()[r], edges[e].to, tag(m, e, 1));
        cot = cot ? backward(AddOp::create(b, cot, got)) : got;
      }
      operands.push_back(cot);
    }
    auto call = func::CallOp::create(b, stage.grad, operands);
    DenseMap<int64_t, Value> byArg = gradResults(call);
    addParamGrads(byArg);
    sendReceivedGrads(m, byArg);
  };

  if (schedule == PipelineScheduleKind::GPipe) {
    for (int64_t m = 0; m < microbatches; ++m)
      forward(m);
    for (int64_t m = 0; m < microbatches; ++m)
      backwardSlot(m);
  } else {
    int64_t warmup = std::min<int64_t>(numStages - 1 - k, microbatches);
    for (int64_t m = 0; m < warmup; ++m)
      forward(m);
    for (int64_t m = warmup; m < microbatches; ++m) {
      forward(m);
      backwardSlot(m - warmup);
    }
    for (int64_t m = microbatches - warmup; m < microbatches; ++m)
      backwardSlot(m);
  }

  // Means over the micro-batches.
  SmallVector<Value> results;
  auto mean = [&](Value sum) {
    if (microbatches == 1)
      return sum;
    auto type = cast<RankedTensorType>(sum.getType());
    Value count = ConstantOp::create(
        b, type,
        DenseElementsAttr::get(
            type, b.getFloatAttr(type.getElementType(),
                                 static_cast<double>(microbatches))));
    return backward(DivOp::create(b, sum, count));
  };
  results.push_back(lossSum ? mean(lossSum)
                            : Value(ConstantOp::create(
                                  b, scalar, DenseElementsAttr::get(scalar, 0.0f))));
  SmallVector<Value> grads;
  for (Value g : gradSum)
    grads.push_back(mean(g));
  // A parameter several stages read (a tied embedding) gets the sum of
  // their gradients, added in stage order so that every copy is updated
  // identically.
  for (auto [j, i] : llvm::enumerate(params)) {
    auto arg = cast<BlockArgument>(stage.call.getOperand(i)).getArgNumber();
    auto shared = sharedParams.find(arg);
    if (shared == sharedParams.end())
      continue;
    for (int64_t other : shared->second)
      if (other != k)
        send(grads[j], other, sharedTags.at({arg, k, other}));
    Value total;
    for (int64_t other : shared->second) {
      Value part = other == k ? grads[j]
                              : recv(grads[j].getType(), other,
                                     sharedTags.at({arg, other, k}));
      total = total ? backward(AddOp::create(b, total, part)) : part;
    }
    grads[j] = total;
  }
  results.append(grads.begin(), grads.end());
  func::ReturnOp::create(b, results);
  return success();
}

void PipelineSchedule::runOnOperation() {
  if (microbatches < 1) {
    getOperation().emitError() << kPass << ": microbatches must be >= 1, got "
                               << static_cast<int64_t>(microbatches);
    return signalPassFailure();
  }
  FailureOr<func::FuncOp> found = findFunction();
  if (failed(found) || failed(analyse(*found)) ||
      failed(checkGrid(static_cast<int64_t>(stages.size()))) ||
      failed(differentiate()))
    return signalPassFailure();
  func::FuncOp func = *found;
  for (int64_t k = static_cast<int64_t>(stages.size()) - 1; k >= 0; --k)
    if (failed(buildSchedule(k, func)))
      return signalPassFailure();

  // Inline the stage calls (also back into @F), drop the helpers, and merge
  // each backward's recomputed forward with the forward.
  ModuleOp module = getOperation();
  SmallVector<func::FuncOp> helpers;
  for (Stage &stage : stages) {
    helpers.push_back(stage.func);
    helpers.push_back(stage.grad);
  }
  for (auto f : module.getOps<func::FuncOp>())
    if (!llvm::is_contained(helpers, f) && failed(inlineCalls(f)))
      return signalPassFailure();
  for (func::FuncOp helper : helpers) {
    StringRef name = helper.getSymName();
    helper.erase();
    // The VJP wrapper that autodiff differentiated.
    if (std::optional<StringRef> wrapperName = names::forwardOf(name);
        wrapperName && wrapperName->ends_with(names::kVjpSuffix))
      if (Operation *wrapper = module.lookupSymbol(*wrapperName))
        wrapper->erase();
  }
  OpPassManager pm(ModuleOp::getOperationName());
  pm.addNestedPass<func::FuncOp>(createCSEPass());
  if (failed(runPipeline(pm, module)))
    return signalPassFailure();
  // The VJP wrappers' own loss (sum of output x cotangent) is dead.
  for (auto f : module.getOps<func::FuncOp>()) {
    if (f.isExternal())
      continue;
    Block &body = f.getBody().front();
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
      if (isOpTriviallyDead(&op))
        op.erase();
  }
}

//===- PipelineSplit.cpp - Outline pipeline stages into functions ---------===//
//
// Implements -loom-pipeline-split (see Passes.td for the contract).
//
//===----------------------------------------------------------------------===//

#include "PipelineUtils.h"
#include "TargetFunction.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"
#include "loom/Dialect/Loom/Transforms/TrainingFunctions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_LOOMPIPELINESPLIT
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;

namespace {

constexpr llvm::StringLiteral kPass = "loom-pipeline-split";

/// What one stage function takes and gives.
struct Stage {
  SmallVector<Operation *> ops;       ///< Its non-replicated ops, in order.
  SmallVector<BlockArgument> args;    ///< Arguments of @F it reads.
  SmallVector<Value> received;        ///< Values of earlier stages it reads.
  SmallVector<Value> outputs;         ///< Values it defines used elsewhere.
  SmallVector<Operation *> replicated; ///< Replicated ops it recomputes.
};

struct PipelineSplit : public loom::impl::LoomPipelineSplitBase<PipelineSplit> {
  using Base::Base;
  void runOnOperation() override;

private:
  FailureOr<func::FuncOp> findFunction();
};

} // namespace

FailureOr<func::FuncOp> PipelineSplit::findFunction() {
  auto isPartitioned = [](func::FuncOp func) {
    return static_cast<bool>(func->getAttr(pipeline::kStagesAttrName));
  };
  TargetFunctionQuery query;
  query.pass = kPass;
  query.name = function;
  query.isCandidate = isPartitioned;
  query.candidates = "with 'loom.stages'";
  query.hint = "run loom-pipeline-partition first";
  return findTargetFunction(getOperation(), query);
}

void PipelineSplit::runOnOperation() {
  FailureOr<func::FuncOp> found = findFunction();
  if (failed(found) || failed(pipeline::checkStraightLine(*found, kPass)))
    return signalPassFailure();
  func::FuncOp func = *found;
  auto stagesAttr =
      func->getAttrOfType<IntegerAttr>(pipeline::kStagesAttrName);
  if (!stagesAttr || !stagesAttr.getType().isSignlessInteger(64) ||
      stagesAttr.getInt() < 1) {
    func.emitError() << kPass << ": @" << func.getSymName() << " needs '"
                     << pipeline::kStagesAttrName
                     << "' = P : i64 with P >= 1 (from "
                        "loom-pipeline-partition)";
    return signalPassFailure();
  }
  int64_t numStages = stagesAttr.getInt();

  ModuleOp module = getOperation();
  SymbolTable symbols(module);
  SmallVector<std::string> names;
  for (int64_t s = 0; s < numStages; ++s) {
    names.push_back(names::stageFunction(func.getSymName(), s));
    if (Operation *clash = symbols.lookup(names.back())) {
      clash->emitError() << kPass << ": cannot create @" << names.back()
                         << " for stage " << s << " of @" << func.getSymName()
                         << ": the name is taken";
      return signalPassFailure();
    }
  }

  // Stage of every non-replicated op; data must flow to the same or later
  // stages.
  Block &body = func.getBody().front();
  llvm::DenseSet<Operation *> replicated = pipeline::findReplicatedOps(body);
  llvm::DenseMap<Operation *, int64_t> stageOf;
  llvm::DenseMap<Operation *, int64_t> position;
  std::vector<Stage> stages(numStages);
  int64_t numOps = 0;
  for (Operation &op : body.without_terminator()) {
    position[&op] = numOps++;
    if (replicated.contains(&op))
      continue;
    auto attr = op.getAttrOfType<IntegerAttr>(pipeline::kStageAttrName);
    if (!attr || !attr.getType().isSignlessInteger(64) || attr.getInt() < 0 ||
        attr.getInt() >= numStages) {
      op.emitError() << kPass << ": needs '" << pipeline::kStageAttrName
                     << "' = k : i64 with 0 <= k < " << numStages
                     << " (the loom.stages of @" << func.getSymName() << ")";
      return signalPassFailure();
    }
    int64_t s = attr.getInt();
    for (Value operand : op.getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || replicated.contains(def) || stageOf[def] <= s)
        continue;
      InFlightDiagnostic diag =
          op.emitError()
          << kPass << ": this op of stage " << s << " uses a value of stage "
          << stageOf[def] << "; a stage may only use values of itself and "
          << "earlier stages";
      diag.attachNote(def->getLoc()) << "the value is defined here";
      return signalPassFailure();
    }
    stageOf[&op] = s;
    stages[s].ops.push_back(&op);
  }

  // Inputs and outputs of every stage. SetVectors keep first-use order; the
  // lists are then sorted into the documented order.
  auto byPosition = [&](Value a, Value b) {
    auto key = [&](Value v) {
      return std::make_pair(position[v.getDefiningOp()],
                            cast<OpResult>(v).getResultNumber());
    };
    return key(a) < key(b);
  };
  llvm::DenseSet<Value> usedOutside;
  for (Value v : body.getTerminator()->getOperands())
    usedOutside.insert(v);
  for (int64_t s = 0; s < numStages; ++s) {
    Stage &stage = stages[s];
    llvm::SetVector<BlockArgument> args;
    llvm::SetVector<Value> received;
    llvm::SetVector<Operation *> needed;
    SmallVector<Operation *> worklist;
    for (Operation *op : stage.ops) {
      for (Value operand : op->getOperands()) {
        if (auto arg = dyn_cast<BlockArgument>(operand)) {
          args.insert(arg);
          continue;
        }
        Operation *def = operand.getDefiningOp();
        if (replicated.contains(def)) {
          worklist.push_back(def);
        } else if (stageOf[def] < s) {
          received.insert(operand);
          usedOutside.insert(operand);
        }
      }
    }
    while (!worklist.empty()) {
      Operation *op = worklist.pop_back_val();
      if (!needed.insert(op))
        continue;
      for (Value operand : op->getOperands())
        worklist.push_back(operand.getDefiningOp());
    }
    stage.args = args.takeVector();
    llvm::sort(stage.args, [](BlockArgument a, BlockArgument b) {
      return a.getArgNumber() < b.getArgNumber();
    });
    stage.received = received.takeVector();
    llvm::sort(stage.received, byPosition);
    stage.replicated = needed.takeVector();
    llvm::sort(stage.replicated, [&](Operation *a, Operation *b) {
      return position[a] < position[b];
    });
  }
  for (Stage &stage : stages)
    for (Operation *op : stage.ops)
      for (Value result : op->getResults())
        if (usedOutside.contains(result))
          stage.outputs.push_back(result);

  // Result names: a value that @F returns keeps the result's loom.name.
  llvm::DenseMap<Value, Attribute> resultNames;
  for (auto [i, v] : llvm::enumerate(body.getTerminator()->getOperands()))
    if (Attribute name =
            func.getResultAttr(i, LoomDialect::getNameAttrName()))
      resultNames.try_emplace(v, name);

  // Build @F_stage<k> after @F, then the calls in @F.
  OpBuilder builder(&getContext());
  builder.setInsertionPointAfter(func);
  SmallVector<func::FuncOp> stageFuncs;
  for (int64_t s = 0; s < numStages; ++s) {
    Stage &stage = stages[s];
    SmallVector<Type> inputs, outputs;
    for (BlockArgument arg : stage.args)
      inputs.push_back(arg.getType());
    for (Value v : stage.received)
      inputs.push_back(v.getType());
    for (Value v : stage.outputs)
      outputs.push_back(v.getType());
    auto stageFunc = func::FuncOp::create(builder, func.getLoc(), names[s],
                                          builder.getFunctionType(inputs,
                                                                  outputs));
    stageFunc.setPrivate();
    stageFunc->setAttr(pipeline::kStageAttrName,
                       builder.getI64IntegerAttr(s));
    for (auto [i, arg] : llvm::enumerate(stage.args))
      stageFunc.setArgAttrs(i, func.getArgAttrDict(arg.getArgNumber()));
    for (auto [i, v] : llvm::enumerate(stage.outputs))
      if (Attribute name = resultNames.lookup(v))
        stageFunc.setResultAttr(i, LoomDialect::getNameAttrName(), name);

    Block *entry = stageFunc.addEntryBlock();
    IRMapping mapping;
    unsigned next = 0;
    for (BlockArgument arg : stage.args)
      mapping.map(arg, entry->getArgument(next++));
    for (Value v : stage.received)
      mapping.map(v, entry->getArgument(next++));
    OpBuilder inner = OpBuilder::atBlockEnd(entry);
    for (Operation *op : stage.replicated)
      inner.clone(*op, mapping)->removeAttr(pipeline::kStageAttrName);
    for (Operation *op : stage.ops)
      inner.clone(*op, mapping)->removeAttr(pipeline::kStageAttrName);
    SmallVector<Value> results;
    for (Value v : stage.outputs)
      results.push_back(mapping.lookup(v));
    func::ReturnOp::create(inner, func.getLoc(), results);
    stageFuncs.push_back(stageFunc);
    builder.setInsertionPointAfter(stageFunc);
  }

  // @F: the calls, in stage order, before the old body (still in place).
  Operation *terminator = body.getTerminator();
  builder.setInsertionPoint(&body.front());
  IRMapping mapping;
  for (int64_t s = 0; s < numStages; ++s) {
    Stage &stage = stages[s];
    SmallVector<Value> operands(stage.args.begin(), stage.args.end());
    for (Value v : stage.received)
      operands.push_back(mapping.lookup(v));
    auto call = func::CallOp::create(builder, func.getLoc(), stageFuncs[s],
                                     operands);
    call->setAttr(pipeline::kStageAttrName, builder.getI64IntegerAttr(s));
    for (auto [v, r] : llvm::zip(stage.outputs, call.getResults()))
      mapping.map(v, r);
  }
  for (OpOperand &operand : terminator->getOpOperands())
    if (Value mapped = mapping.lookupOrNull(operand.get()))
      operand.set(mapped);
  // Erase the old ops; replicated ops that @F still returns stay.
  SmallVector<Operation *> old;
  for (Operation &op : body.without_terminator())
    if (position.contains(&op))
      old.push_back(&op);
  for (Operation *op : llvm::reverse(old)) {
    if (op->use_empty())
      op->erase();
    else
      op->removeAttr(pipeline::kStageAttrName);
  }
}

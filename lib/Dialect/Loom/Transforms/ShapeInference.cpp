//===- ShapeInference.cpp - Refine tensor shapes through functions --------===//
//
// Implements -loom-shape-inference (see Passes.td for the contract).
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/LoomInterfaces.h"
#include "loom/Dialect/Loom/IR/ShapeUtils.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/StringMap.h"

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_LOOMSHAPEINFERENCE
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;

namespace {

/// Outcome of trying to refine one type towards another.
enum class Refine { Unchanged, Refined, Conflict };

/// Refines `current` towards `inferred`: takes every size that `current`
/// leaves `?`. A static size that disagrees, another rank or another element
/// type is a conflict.
Refine refineType(Type current, Type inferred, Type &result) {
  result = current;
  if (current == inferred)
    return Refine::Unchanged;
  auto cur = dyn_cast<RankedTensorType>(current);
  auto inf = dyn_cast<RankedTensorType>(inferred);
  if (!cur || !inf || cur.getElementType() != inf.getElementType())
    return Refine::Conflict;
  FailureOr<SmallVector<int64_t>> met =
      meetShapes(cur.getShape(), inf.getShape());
  if (failed(met))
    return Refine::Conflict;
  if (ArrayRef<int64_t>(*met) == cur.getShape())
    return Refine::Unchanged;
  result = RankedTensorType::get(*met, cur.getElementType(), cur.getEncoding());
  return Refine::Refined;
}

struct ShapeInference
    : public loom::impl::LoomShapeInferenceBase<ShapeInference> {
  using Base::Base;

  void runOnOperation() override;

private:
  LogicalResult bindArgumentShapes(ModuleOp module);
  /// One sweep over `func`: refines op results, call results and the
  /// function's result types. Sets `changed` when anything was refined.
  LogicalResult refineFunction(func::FuncOp func, SymbolTable &symbols,
                               bool &changed);
};

} // namespace

LogicalResult ShapeInference::bindArgumentShapes(ModuleOp module) {
  llvm::StringMap<SmallVector<int64_t>> bindings;
  llvm::StringMap<bool> used;
  for (const std::string &entry : argShapes) {
    auto [name, dims] = StringRef(entry).split('=');
    FailureOr<SmallVector<int64_t>> shape = parseDims(dims);
    if (name.trim().empty() || !StringRef(entry).contains('=') ||
        failed(shape))
      return module.emitError()
             << "invalid arg-shapes entry '" << entry
             << "': expected NAME=DxDx... such as x=8x784 (NAME is an "
                "argument's loom.name or argN)";
    bindings[name.trim()] = *shape;
    used[name.trim()] = false;
  }
  if (bindings.empty())
    return success();

  bool foundFunction = function.empty();
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!function.empty() && func.getSymName() != function)
      continue;
    foundFunction = true;
    if (func.isExternal())
      continue;
    SmallVector<Type> inputs(func.getArgumentTypes());
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      std::string name = ("arg" + Twine(i)).str();
      if (auto attr = func.getArgAttrOfType<StringAttr>(
              i, LoomDialect::getNameAttrName()))
        name = attr.getValue().str();
      auto it = bindings.find(name);
      if (it == bindings.end()) {
        it = bindings.find(("arg" + Twine(i)).str());
        if (it == bindings.end())
          continue;
      }
      used[it->first()] = true;
      auto type = dyn_cast<RankedTensorType>(inputs[i]);
      FailureOr<SmallVector<int64_t>> met =
          type ? meetShapes(type.getShape(), it->second)
               : FailureOr<SmallVector<int64_t>>(failure());
      if (failed(met) || ArrayRef<int64_t>(*met) != ArrayRef(it->second))
        return func.emitError()
               << "arg-shapes binds argument '" << name << "' of @"
               << func.getSymName() << " to " << formatDims(it->second)
               << ", which does not refine its declared type " << inputs[i];
      inputs[i] = RankedTensorType::get(it->second, type.getElementType(),
                                        type.getEncoding());
      func.getArgument(i).setType(inputs[i]);
    }
    func.setFunctionType(
        FunctionType::get(func.getContext(), inputs, func.getResultTypes()));
  }
  if (!foundFunction)
    return module.emitError() << "function '" << function
                              << "' (option function=) is not in the module";
  for (auto &entry : used)
    if (!entry.second)
      return module.emitError()
             << "arg-shapes names '" << entry.first()
             << "', but no function argument has that loom.name or index";
  return success();
}

LogicalResult ShapeInference::refineFunction(func::FuncOp func,
                                             SymbolTable &symbols,
                                             bool &changed) {
  auto setResults = [&](Operation *op, ArrayRef<Type> types) -> LogicalResult {
    for (auto [result, type] : llvm::zip(op->getResults(), types)) {
      Type refined;
      switch (refineType(result.getType(), type, refined)) {
      case Refine::Unchanged:
        break;
      case Refine::Refined:
        result.setType(refined);
        changed = true;
        break;
      case Refine::Conflict:
        return op->emitOpError()
               << "result type " << result.getType()
               << " contradicts the type inferred from its operands, "
               << type;
      }
    }
    return success();
  };

  // Ops with one shape for all operands and results: every value involved
  // takes the meet of their shapes. This refines the op's own results when
  // it states them (convert), and operands produced by ops that state their
  // result type (broadcast, reshape) -- information flowing backwards.
  auto refineSameShape = [&](Operation *op) -> LogicalResult {
    SmallVector<int64_t> shape;
    bool first = true;
    auto values = llvm::concat<Value>(op->getOperands(), op->getResults());
    for (Value v : values) {
      auto t = dyn_cast<RankedTensorType>(v.getType());
      if (!t)
        return success();
      if (first) {
        shape.assign(t.getShape().begin(), t.getShape().end());
        first = false;
        continue;
      }
      FailureOr<SmallVector<int64_t>> met = meetShapes(shape, t.getShape());
      if (failed(met))
        return op->emitOpError() << "operand and result shapes disagree: "
                                 << formatDims(shape) << " vs " << t;
      shape = *met;
    }
    for (Value v : values) {
      auto t = cast<RankedTensorType>(v.getType());
      if (!isRefinementOf(shape, t.getShape(), /*strictly=*/true))
        continue;
      Operation *producer = v.getDefiningOp();
      bool ownResult = producer == op;
      if (!producer || (!ownResult && (isa<InferTypeOpInterface>(producer) ||
                                       producer->getNumResults() != 1)))
        continue;
      v.setType(RankedTensorType::get(shape, t.getElementType(),
                                      t.getEncoding()));
      changed = true;
      if (!ownResult && failed(mlir::verify(producer)))
        return failure();
    }
    return success();
  };

  WalkResult walk = func.walk([&](Operation *op) -> WalkResult {
    if (op->hasTrait<loom::OpTrait::SameShape>() &&
        !isa<InferTypeOpInterface>(op) && failed(refineSameShape(op)))
      return WalkResult::interrupt();
    if (auto iface = dyn_cast<InferTypeOpInterface>(op)) {
      SmallVector<Type> inferred;
      if (failed(iface.inferReturnTypes(
              op->getContext(), op->getLoc(), op->getOperands(),
              op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
              op->getRegions(), inferred)))
        return WalkResult::interrupt();
      if (inferred.size() != op->getNumResults())
        return WalkResult::advance();
      if (failed(setResults(op, inferred)))
        return WalkResult::interrupt();
      if (op->hasTrait<loom::OpTrait::SameShape>() &&
          failed(refineSameShape(op)))
        return WalkResult::interrupt();
      return WalkResult::advance();
    }
    if (auto call = dyn_cast<func::CallOp>(op)) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (!callee || callee.getNumResults() != call.getNumResults())
        return WalkResult::advance();
      return failed(setResults(op, callee.getResultTypes()))
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  // Function results: the meet of what every return passes.
  if (func.isExternal())
    return success();
  SmallVector<Type> results(func.getResultTypes());
  bool resultsChanged = false;
  WalkResult rets = func.walk([&](func::ReturnOp ret) -> WalkResult {
    if (ret.getNumOperands() != results.size())
      return WalkResult::advance();
    for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
      Type refined;
      switch (refineType(results[i], v.getType(), refined)) {
      case Refine::Unchanged:
        break;
      case Refine::Refined:
        results[i] = refined;
        resultsChanged = true;
        break;
      case Refine::Conflict:
        ret.emitOpError() << "returns " << v.getType() << " as result " << i
                          << ", which contradicts the function's declared "
                          << results[i];
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  if (rets.wasInterrupted())
    return failure();
  if (resultsChanged) {
    func.setFunctionType(FunctionType::get(
        func.getContext(), func.getArgumentTypes(), results));
    changed = true;
  }
  return success();
}

void ShapeInference::runOnOperation() {
  ModuleOp module = getOperation();
  if (failed(bindArgumentShapes(module)))
    return signalPassFailure();

  SymbolTable symbols(module);
  SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
  // Every sweep that changes something replaces at least one `?` by a size,
  // so this terminates.
  bool changed = true;
  while (changed) {
    changed = false;
    for (func::FuncOp func : funcs)
      if (failed(refineFunction(func, symbols, changed)))
        return signalPassFailure();
  }
}

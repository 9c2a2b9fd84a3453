//===- TargetFunction.cpp - Finding the function a pass works on ----------===//

#include "TargetFunction.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/Transforms/TrainingFunctions.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;

FailureOr<func::FuncOp>
mlir::loom::findTargetFunction(ModuleOp module,
                               const TargetFunctionQuery &query) {
  auto error = [&]() {
    return mlir::emitError(module.getLoc()) << query.pass << ": ";
  };
  if (!query.name.empty()) {
    if (auto func = module.lookupSymbol<func::FuncOp>(query.name))
      return func;
    return error() << "function '" << query.name
                   << "' (option function=) is not in the module";
  }
  SmallVector<func::FuncOp> candidates;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!query.isCandidate(func))
      continue;
    if (!query.preferred.empty() && func.getSymName() == query.preferred)
      return func;
    candidates.push_back(func);
  }
  if (candidates.size() == 1)
    return candidates.front();
  InFlightDiagnostic diag = error();
  if (candidates.empty()) {
    diag << "no function " << query.candidates << " (";
    if (!query.hint.empty())
      diag << query.hint << ", or ";
    return diag << "name the function with function=)";
  }
  diag << "several functions " << query.candidates << " (";
  llvm::interleaveComma(candidates, diag, [&](func::FuncOp func) {
    diag << "@" << func.getSymName();
  });
  return diag << "); choose one with function=";
}

FailureOr<func::FuncOp> mlir::loom::findFunctionWithBody(ModuleOp module,
                                                         StringRef name,
                                                         StringRef pass,
                                                         StringRef option) {
  auto func = module.lookupSymbol<func::FuncOp>(name);
  if (func && !func.isExternal())
    return func;
  return mlir::emitError(module.getLoc())
         << pass << ": no function @" << name << " with a body (" << option
         << "=" << name << ")";
}

FailureOr<func::FuncOp> mlir::loom::findGradFunction(ModuleOp module,
                                                     StringRef name,
                                                     StringRef pass) {
  auto isGrad = [](func::FuncOp func) {
    return names::isGradFunction(func.getSymName());
  };
  TargetFunctionQuery query;
  query.pass = pass;
  query.name = name;
  query.isCandidate = isGrad;
  query.candidates = "named '*_grad'";
  query.hint = "run loom-autodiff first";
  return findTargetFunction(module, query);
}

SmallVector<func::FuncOp>
mlir::loom::findStepFunctions(ModuleOp module, ArrayRef<std::string> names) {
  auto isStep = [](func::FuncOp func) {
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
      if (func.getResultAttr(i, LoomDialect::getUpdatesAttrName()))
        return true;
    return false;
  };
  SmallVector<func::FuncOp> found;
  for (auto func : module.getOps<func::FuncOp>())
    if (names.empty() ? isStep(func)
                      : llvm::is_contained(names, func.getSymName()))
      found.push_back(func);
  return found;
}

unsigned mlir::loom::stateArgumentsEnd(func::FuncOp func) {
  unsigned at = 0;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (func.getArgAttr(i, LoomDialect::getParamAttrName()) ||
        func.getArgAttr(i, LoomDialect::getStateAttrName()))
      at = i + 1;
  return at;
}

void mlir::loom::shiftUpdatesFrom(func::FuncOp func, unsigned at,
                                  unsigned by) {
  for (unsigned r = 0, e = func.getNumResults(); r < e; ++r)
    if (auto u = func.getResultAttrOfType<IntegerAttr>(
            r, LoomDialect::getUpdatesAttrName());
        u && u.getInt() >= static_cast<int64_t>(at))
      func.setResultAttr(r, LoomDialect::getUpdatesAttrName(),
                         IntegerAttr::get(u.getType(), u.getInt() + by));
}

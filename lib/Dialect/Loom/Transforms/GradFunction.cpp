//===- GradFunction.cpp - Finding the @F_grad a pass works on -------------===//

#include "GradFunction.h"

#include "loom/Dialect/Loom/Transforms/TrainingFunctions.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;

FailureOr<func::FuncOp> mlir::loom::findGradFunction(ModuleOp module,
                                                     StringRef name,
                                                     StringRef pass) {
  auto error = [&]() {
    return mlir::emitError(module.getLoc()) << pass << ": ";
  };
  if (!name.empty()) {
    if (auto func = module.lookupSymbol<func::FuncOp>(name))
      return func;
    error() << "function '" << name
            << "' (option function=) is not in the module";
    return failure();
  }
  SmallVector<func::FuncOp> candidates;
  for (auto func : module.getOps<func::FuncOp>())
    if (names::isGradFunction(func.getSymName()))
      candidates.push_back(func);
  if (candidates.size() == 1)
    return candidates.front();
  InFlightDiagnostic diag = error();
  if (candidates.empty()) {
    diag << "no function name ends in '_grad' (run loom-autodiff first, or "
            "name the function with function=)";
    return failure();
  }
  diag << "several functions end in '_grad' (";
  llvm::interleaveComma(candidates, diag, [&](func::FuncOp func) {
    diag << "@" << func.getSymName();
  });
  diag << "); choose one with function=";
  return failure();
}

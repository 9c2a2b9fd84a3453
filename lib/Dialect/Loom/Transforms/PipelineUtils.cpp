//===- PipelineUtils.cpp - Shared by the pipeline passes ------------------===//

#include "PipelineUtils.h"

using namespace mlir;
using namespace mlir::loom;

llvm::DenseSet<Operation *> pipeline::findReplicatedOps(Block &body) {
  llvm::DenseSet<Operation *> replicated;
  for (Operation &op : body.without_terminator()) {
    bool fromNothing = llvm::all_of(op.getOperands(), [&](Value v) {
      Operation *def = v.getDefiningOp();
      return def && replicated.contains(def);
    });
    if (fromNothing)
      replicated.insert(&op);
  }
  return replicated;
}

LogicalResult pipeline::checkStraightLine(func::FuncOp func,
                                          llvm::StringRef pass) {
  if (func.isExternal())
    return func.emitError() << pass << ": @" << func.getSymName()
                            << " has no body";
  if (!func.getBody().hasOneBlock())
    return func.emitError() << pass << ": @" << func.getSymName()
                            << " has several blocks; only straight-line "
                               "functions can be split into stages";
  for (Operation &op : func.getBody().front())
    if (op.getNumRegions() != 0)
      return op.emitError() << pass
                            << ": ops with regions cannot be assigned to a "
                               "pipeline stage";
  return success();
}

//===- Activations.cpp - Which values of a training step are activations -===//

#include "Activations.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"

using namespace mlir;
using namespace mlir::loom;

bool mlir::loom::isForwardOp(Operation *op) {
  return !op->hasAttr(LoomDialect::PhaseAttrHelper::getNameStr());
}

llvm::DenseSet<Value> mlir::loom::findActivations(func::FuncOp func) {
  llvm::DenseSet<Value> activations, fromParams, fromData;
  for (BlockArgument arg : func.getArguments()) {
    if (func.getArgAttr(arg.getArgNumber(), LoomDialect::getParamAttrName()))
      fromParams.insert(arg);
    else
      fromData.insert(arg);
  }
  for (Operation &op : func.getBody().front()) {
    if (!isForwardOp(&op))
      continue;
    bool params = isa<shard::RecvOp>(op), data = params;
    for (Value operand : op.getOperands()) {
      params = params || fromParams.contains(operand);
      data = data || fromData.contains(operand);
    }
    for (Value result : op.getResults()) {
      if (params)
        fromParams.insert(result);
      if (data)
        fromData.insert(result);
      if (params && data)
        activations.insert(result);
    }
  }
  return activations;
}

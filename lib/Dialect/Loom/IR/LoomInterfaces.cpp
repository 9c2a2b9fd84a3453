//===- LoomInterfaces.cpp - Interfaces of the loom dialect ----------------===//

#include "loom/Dialect/Loom/IR/LoomInterfaces.h"

#include "loom/Dialect/Loom/IR/ShapeUtils.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

using namespace mlir;

#include "loom/Dialect/Loom/IR/LoomInterfaces.cpp.inc"

std::optional<int64_t> loom::detail::getNumElements(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return std::nullopt;
  return tensor.getNumElements();
}

std::optional<int64_t> loom::detail::getNumBytes(Type type) {
  std::optional<int64_t> n = getNumElements(type);
  if (!n)
    return std::nullopt;
  unsigned bits = cast<RankedTensorType>(type).getElementTypeBitWidth();
  return *n * ((bits + 7) / 8);
}

std::optional<int64_t> loom::detail::getElementwiseFlopCount(
    Operation *op, int64_t flopsPerElement) {
  if (op->getNumResults() == 0)
    return 0;
  std::optional<int64_t> n = getNumElements(op->getResult(0).getType());
  if (!n)
    return std::nullopt;
  return *n * flopsPerElement;
}

std::optional<int64_t> loom::detail::getDefaultFlopCount(Operation *op) {
  if (op->hasTrait<OpTrait::DataMovement>())
    return 0;
  return getElementwiseFlopCount(op, 1);
}

std::optional<int64_t> loom::detail::getOperandAndResultBytes(Operation *op) {
  int64_t total = 0;
  auto add = [&](Type t) {
    if (!isa<RankedTensorType>(t))
      return true;
    std::optional<int64_t> bytes = getNumBytes(t);
    if (!bytes)
      return false;
    total += *bytes;
    return true;
  };
  for (Type t : op->getOperandTypes())
    if (!add(t))
      return std::nullopt;
  for (Type t : op->getResultTypes())
    if (!add(t))
      return std::nullopt;
  return total;
}

LogicalResult loom::detail::verifySameShape(Operation *op) {
  RankedTensorType first;
  SmallVector<int64_t> shape;
  auto check = [&](Type type) -> LogicalResult {
    auto t = dyn_cast<RankedTensorType>(type);
    if (!t)
      return success();
    if (!first) {
      first = t;
      shape.assign(t.getShape().begin(), t.getShape().end());
      return success();
    }
    FailureOr<SmallVector<int64_t>> met = meetShapes(shape, t.getShape());
    if (failed(met))
      return op->emitOpError()
             << "needs one shape for all operands and results, but " << first
             << " and " << t
             << " differ (loom ops do not broadcast implicitly: insert "
                "loom.broadcast)";
    shape = *met;
    return success();
  };
  for (Type t : op->getOperandTypes())
    if (failed(check(t)))
      return failure();
  for (Type t : op->getResultTypes())
    if (failed(check(t)))
      return failure();
  return success();
}

static bool hasFloatElements(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType());
}

bool loom::detail::isFloatToFloatOperand(Operation *op, unsigned index) {
  return index < op->getNumOperands() &&
         hasFloatElements(op->getOperand(index).getType()) &&
         llvm::any_of(op->getResultTypes(), hasFloatElements);
}

FailureOr<loom::PartitionRule> loom::detail::getAlignedPartitionRule(
    Operation *op, int64_t except, ArrayRef<std::optional<ShardedDim>> operands) {
  std::optional<ShardedDim> shared;
  for (const std::optional<ShardedDim> &operand : operands) {
    if (!operand)
      continue;
    if (shared && *shared != *operand)
      return failure();
    shared = operand;
  }
  if (!shared || shared->dim == except)
    return failure();
  PartitionRule rule;
  rule.operands.assign(operands.size(), shared);
  rule.results.assign(op->getNumResults(), shared);
  return rule;
}

FailureOr<loom::PartitionRule> loom::detail::getElementwisePartitionRule(
    Operation *op, ArrayRef<std::optional<ShardedDim>> operands) {
  if (!op->hasTrait<OpTrait::ElementwiseMapping>())
    return failure();
  return getAlignedPartitionRule(op, /*except=*/-1, operands);
}

//===- LoomInterfaces.cpp - Interfaces of the loom dialect ----------------===//

#include "loom/Dialect/Loom/IR/LoomInterfaces.h"

#include "mlir/IR/BuiltinTypes.h"

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

//===- NameDimensions.cpp - JAX's dimension-variable names on @main -------===//
//
// Implements -name-stablehlo-dimensions (see Passes.td for the contract).
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "loom/Conversion/StableHLOToLoom/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_NAMESTABLEHLODIMENSIONS
#include "loom/Conversion/StableHLOToLoom/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::shlo_to_loom;

namespace {

/// The argument dimension `value` reads: get_dimension_size of an argument
/// of `entry`, possibly converted or reshaped (a scalar either way).
std::optional<std::pair<unsigned, int64_t>>
readDimension(Value value, func::FuncOp entry) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto size = dyn_cast<shlo::GetDimensionSizeOp>(def)) {
      auto arg = dyn_cast<BlockArgument>(size.getOperand());
      if (!arg || arg.getOwner() != &entry.getBody().front())
        return std::nullopt;
      return std::make_pair(arg.getArgNumber(),
                            static_cast<int64_t>(size.getDimension()));
    }
    if (!isa<shlo::ConvertOp, shlo::ReshapeOp>(def))
      return std::nullopt;
    value = def->getOperand(0);
  }
  return std::nullopt;
}

struct NameStableHLODimensionsPass
    : loom::impl::NameStableHLODimensionsBase<NameStableHLODimensionsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (auto entry : module.getOps<func::FuncOp>()) {
      if (!entry.isPublic() || entry.isExternal())
        continue;
      // Per argument, the name of each dimension (empty: none).
      SmallVector<SmallVector<std::string>> names(entry.getNumArguments());
      bool any = false;
      entry.walk([&](func::CallOp call) {
        auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
        if (!callee)
          return;
        for (auto [k, operand] : llvm::enumerate(call.getOperands())) {
          if (k >= callee.getNumArguments())
            break;
          auto name = callee.getArgAttrOfType<StringAttr>(
              k, "jax.global_constant");
          if (!name)
            continue;
          std::optional<std::pair<unsigned, int64_t>> read =
              readDimension(operand, entry);
          if (!read)
            continue;
          auto type = dyn_cast<RankedTensorType>(
              entry.getArgument(read->first).getType());
          if (!type || read->second < 0 || read->second >= type.getRank())
            continue;
          SmallVector<std::string> &dims = names[read->first];
          dims.resize(type.getRank());
          dims[read->second] = name.getValue().str();
          any = true;
        }
      });
      if (!any)
        continue;
      Builder b(&getContext());
      for (auto [k, dims] : llvm::enumerate(names)) {
        if (dims.empty())
          continue;
        SmallVector<Attribute> attrs;
        for (const std::string &name : dims)
          attrs.push_back(b.getStringAttr(name));
        entry.setArgAttr(k, LoomDialect::getDimNamesAttrName(),
                         b.getArrayAttr(attrs));
      }
    }
  }
};

} // namespace

//===- MeshGrid.cpp - The module's one shard.grid @mesh -------------------===//

#include "loom/Dialect/Loom/IR/MeshGrid.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::loom;
using ::loom::Mesh;
using ::loom::MeshAxis;

SmallVector<int16_t, 1> mlir::loom::meshGridAxes(MeshAxis axis) {
  return {static_cast<int16_t>(axis)};
}

shard::GridOp mlir::loom::lookupMeshGrid(ModuleOp module) {
  return dyn_cast_or_null<shard::GridOp>(
      SymbolTable::lookupSymbolIn(module, kMeshGridName));
}

static InFlightDiagnostic malformed(Operation *op) {
  return op->emitError()
         << "the symbol @" << kMeshGridName
         << " must be Loom's device mesh, a shard.grid of static shape "
            "DxPxT (data, pipeline and tensor parallelism)";
}

FailureOr<Mesh> mlir::loom::getMesh(ModuleOp module) {
  Operation *symbol = SymbolTable::lookupSymbolIn(module, kMeshGridName);
  if (!symbol)
    return Mesh();
  auto grid = dyn_cast<shard::GridOp>(symbol);
  if (!grid || grid.getShape().size() != ::loom::kNumMeshAxes ||
      llvm::any_of(grid.getShape(),
                   [](int64_t d) { return ShapedType::isDynamic(d) || d < 1; }))
    return malformed(symbol);
  Mesh mesh;
  for (MeshAxis axis : ::loom::kMeshAxes)
    mesh[axis] = grid.getShape()[static_cast<int>(axis)];
  return mesh;
}

FailureOr<shard::GridOp> mlir::loom::getOrCreateMeshGrid(ModuleOp module,
                                                        MeshAxis axis,
                                                        int64_t size,
                                                        StringRef pass) {
  FailureOr<Mesh> mesh = getMesh(module);
  if (failed(mesh))
    return failure();
  shard::GridOp grid = lookupMeshGrid(module);
  if (!grid) {
    OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
    grid = shard::GridOp::create(builder, module.getLoc(), kMeshGridName,
                                 ArrayRef<int64_t>{1, 1, 1});
  }
  int64_t current = (*mesh)[axis];
  if (current == size)
    return grid;
  if (current != 1)
    return grid.emitError()
           << pass << ": the " << ::loom::meshAxisName(axis) << " axis (axis "
           << static_cast<int>(axis) << ") of @" << kMeshGridName
           << " already has " << current << " ranks, not " << size;
  SmallVector<int64_t> shape(grid.getShape());
  shape[static_cast<int>(axis)] = size;
  grid.setShape(shape);
  return grid;
}

std::optional<MeshAxis> mlir::loom::getMeshAxis(FlatSymbolRefAttr grid,
                                                ArrayRef<int16_t> gridAxes) {
  if (!grid || grid.getValue() != kMeshGridName || gridAxes.size() != 1 ||
      gridAxes[0] < 0 || gridAxes[0] >= ::loom::kNumMeshAxes)
    return std::nullopt;
  return ::loom::kMeshAxes[gridAxes[0]];
}

FailureOr<SmallVector<func::FuncOp>>
mlir::loom::getStagePrograms(ModuleOp module, std::string &error,
                             Operation *&at) {
  at = module;
  SmallVector<func::FuncOp> funcs;
  for (func::FuncOp f : module.getOps<func::FuncOp>())
    if (!f.isExternal())
      funcs.push_back(f);
  if (funcs.empty()) {
    error = "expects the lowered step function, found none";
    return failure();
  }
  StringRef stageAttr = LoomDialect::StageAttrHelper::getNameStr();
  if (funcs.size() == 1 && !funcs.front()->hasAttr(stageAttr))
    return funcs;
  auto pp = static_cast<int64_t>(funcs.size());
  SmallVector<func::FuncOp> stages(funcs.size());
  for (func::FuncOp f : funcs) {
    at = f;
    auto attr = f->getAttrOfType<IntegerAttr>(stageAttr);
    if (!attr) {
      error = "the module holds " + std::to_string(pp) +
              " functions, so each must be a pipeline stage program with "
              "`loom.stage = k : i64` (this one has none)";
      return failure();
    }
    int64_t stage = attr.getInt();
    if (stage < 0 || stage >= pp || stages[stage]) {
      bool outside = stage < 0 || stage >= pp;
      error = "stage " + std::to_string(stage) +
              (outside ? " is out of range" : " appears twice") +
              " (the stages of pp = " + std::to_string(pp) + " are 0 to " +
              std::to_string(pp - 1) + ")";
      return failure();
    }
    stages[stage] = f;
  }
  at = stages.front();
  FailureOr<::loom::Mesh> mesh = getMesh(module);
  if (failed(mesh)) {
    error.clear();
    return failure();
  }
  if (mesh->pp != pp) {
    error = "the module holds " + std::to_string(pp) +
            " stage programs, but its device mesh @" + kMeshGridName.str() +
            " has " + std::to_string(mesh->pp) + " pipeline stages (pp axis)";
    return failure();
  }
  return stages;
}

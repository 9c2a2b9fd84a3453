//===- MeshGrid.h - The module's one shard.grid @mesh -----------*- C++ -*-===//
//
// Every collective Loom's passes create runs on one N-D grid,
// `shard.grid @mesh(shape = DxPxT)`, and names its mesh axis with
// `grid_axes` (dp = 0, pp = 1, tp = 2; see loom/Support/Mesh.h for the rank
// layout). A pass that parallelises along an axis sets that axis's size with
// getOrCreateMeshGrid; every later reader (optimizer, lowering, emitter,
// interpreter) takes the mesh from the grid.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_MESHGRID_H
#define LOOM_DIALECT_LOOM_IR_MESHGRID_H

#include "loom/Support/Mesh.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>

namespace mlir {
namespace loom {

/// The symbol name of the mesh grid.
constexpr llvm::StringLiteral kMeshGridName = "mesh";

/// The `grid_axes` of a collective along `axis`: {axis}.
SmallVector<int16_t, 1> meshGridAxes(::loom::MeshAxis axis);

/// The module's @mesh grid, or null when it has none.
shard::GridOp lookupMeshGrid(ModuleOp module);

/// The mesh the module's @mesh declares (1x1x1 when it has none); an error
/// at the symbol when @mesh is not a static 3-D shard.grid.
FailureOr<::loom::Mesh> getMesh(ModuleOp module);

/// Gives axis `axis` of the module's @mesh the size `size`, creating
/// `@mesh(shape = 1x1x1)` first when absent. An axis of size 1 (unused so
/// far) may grow; an axis of another size than `size` is an error naming
/// `pass` (the pass that asked) at the grid.
FailureOr<shard::GridOp> getOrCreateMeshGrid(ModuleOp module,
                                            ::loom::MeshAxis axis,
                                            int64_t size, StringRef pass);

/// The mesh axis a collective on (`grid`, `gridAxes`) reduces or exchanges
/// over: `grid` is @mesh and `gridAxes` is one axis. std::nullopt otherwise.
std::optional<::loom::MeshAxis> getMeshAxis(FlatSymbolRefAttr grid,
                                            ArrayRef<int16_t> gridAxes);

/// The programs of a lowered step, in stage order: the module's one
/// function with a body when it is not a pipeline stage, else its functions
/// with a body, each marked `loom.stage = k` for k in 0..P-1 once, P being
/// the pp axis of @mesh. Failure otherwise, with the reason in `error` and
/// in `at` the op it is about (a function, or the module); an @mesh that
/// cannot be read has reported its own error (`error` empty).
FailureOr<SmallVector<func::FuncOp>>
getStagePrograms(ModuleOp module, std::string &error, Operation *&at);

} // namespace loom
} // namespace mlir

#endif // LOOM_DIALECT_LOOM_IR_MESHGRID_H

//===- VerifyMesh.cpp - The lowered program runs on the requested mesh ----===//
//
// Implements -loom-verify-mesh (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/MeshGrid.h"
#include "loom/Dialect/LoomRT/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace loomrt {
#define GEN_PASS_DEF_LOOMVERIFYMESH
#include "loom/Dialect/LoomRT/Transforms/Passes.h.inc"
} // namespace loomrt
} // namespace mlir

using namespace mlir;
using ::loom::Mesh;
using ::loom::MeshAxis;

namespace {

struct VerifyMesh : public mlir::loomrt::impl::LoomVerifyMeshBase<VerifyMesh> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    Mesh want{dp, pp, tp};
    FailureOr<Mesh> have = mlir::loom::getMesh(module);
    if (failed(have))
      return signalPassFailure();
    auto error = [&]() {
      return mlir::emitError(module.getLoc()) << "loom-verify-mesh: ";
    };
    if (want.tp > 1 && have->tp == 1) {
      error() << "tp=" << want.tp
              << " was asked for, but neither loom-tensor-parallel nor "
                 "loom-vocab-parallel found an attention or MLP block, an "
                 "embedding or an LM head to partition (see the warning "
                 "above); compile without tp";
      return signalPassFailure();
    }
    if (*have != want) {
      error() << "the program's device mesh @" << mlir::loom::kMeshGridName
              << " is " << have->str() << ", not the requested " << want.str()
              << " (a bug in the parallelisation passes)";
      return signalPassFailure();
    }
    // Every axis of more than one rank communicates.
    bool found[::loom::kNumMeshAxes] = {false, false, false};
    module.walk([&](Operation *op) {
      if (auto start = dyn_cast<mlir::loomrt::AllReduceStartOp>(op))
        found[static_cast<int>(start.getMeshAxis())] = true;
      else if (auto send = dyn_cast<mlir::loomrt::SendStartOp>(op))
        found[static_cast<int>(send.getMeshAxis())] = true;
    });
    for (MeshAxis axis : ::loom::kMeshAxes) {
      if (want[axis] <= 1 || found[static_cast<int>(axis)])
        continue;
      error() << "the compiled program has no " << ::loom::meshAxisName(axis)
              << " communication over " << want[axis]
              << " ranks (a bug in the parallelisation passes)";
      return signalPassFailure();
    }
  }
};

} // namespace

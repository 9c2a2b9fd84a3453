//===- VerifyMessages.cpp - The pipeline stages cannot deadlock -----------===//
//
// Implements -loom-verify-messages (see Passes.td): plays the stage
// programs' pipeline messages together (PipelineMessages.h) and fails on
// the waits none of them gets past.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/MeshGrid.h"
#include "loom/Dialect/LoomRT/Transforms/Passes.h"
#include "loom/Dialect/LoomRT/Transforms/PipelineMessages.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"

namespace mlir {
namespace loomrt {
#define GEN_PASS_DEF_LOOMVERIFYMESSAGES
#include "loom/Dialect/LoomRT/Transforms/Passes.h.inc"
} // namespace loomrt
} // namespace mlir

using namespace mlir;
using namespace mlir::loomrt;

namespace {

struct VerifyMessages
    : public loomrt::impl::LoomVerifyMessagesBase<VerifyMessages> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string error;
    Operation *at = nullptr;
    FailureOr<SmallVector<func::FuncOp>> stages =
        mlir::loom::getStagePrograms(module, error, at);
    if (failed(stages)) {
      if (!error.empty())
        at->emitError("loom-verify-messages: ") << error;
      return signalPassFailure();
    }
    if (stages->size() < 2)
      return; // no pipeline: nothing to play
    SmallVector<SmallVector<MessageEvent>> events;
    for (func::FuncOp stage : *stages)
      events.push_back(collectPipelineMessages(stage));
    SmallVector<StuckWait> stuck = findPipelineDeadlock(events);
    if (stuck.empty())
      return;
    InFlightDiagnostic diag = module.emitError(
        "loom-verify-messages: the pipeline stage programs would wait for "
        "each other forever: ");
    diag << describeStuckWaits(stuck)
         << " (a bug in the pass that placed these messages)";
    for (const StuckWait &w : stuck)
      diag.attachNote(w.wait.op->getLoc())
          << "stage " << w.stage << " (@" << (*stages)[w.stage].getSymName()
          << ") is stuck here";
    signalPassFailure();
  }
};

} // namespace

//===- StableHLOToLoom.cpp - convert-stablehlo-to-loom --------------------===//
//
// Runs the patterns (see Passes.td for the contract) and reports every op
// they could not convert: one error per op name at its first use, then a
// summary.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/StableHLOToLoom/Passes.h"

#include "Patterns.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_CONVERTSTABLEHLOTOLOOM
#include "loom/Conversion/StableHLOToLoom/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::shlo_to_loom;

namespace {

/// The unconverted ops of one name.
struct Unconverted {
  Location first;
  std::string reason;
  unsigned uses = 0;
  /// Other reasons than `reason`, each at its first use.
  SmallVector<std::pair<Location, std::string>> otherReasons;
};

std::string reasonFor(Operation *op, const UnsupportedReasons &reasons) {
  auto it = reasons.find(op);
  if (it != reasons.end())
    return it->second;
  if (!op->isRegistered())
    return "unknown op: not part of the StableHLO subset Loom imports (see "
           "convert-stablehlo-to-loom for that subset)";
  return "no conversion to loom";
}

/// Reports the stablehlo, chlo and sdy ops (but the meshes) left in `module`
/// (not those nested in them: their regions go with them). Fails when there
/// are any.
LogicalResult reportUnconverted(ModuleOp module,
                                const UnsupportedReasons &reasons) {
  llvm::MapVector<StringRef, Unconverted> byName;
  module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    StringRef dialect = op->getName().getDialectNamespace();
    if ((dialect != "stablehlo" && dialect != "chlo" && dialect != "sdy") ||
        isa<shlo::sdy::MeshOp>(op))
      return WalkResult::advance();
    std::string reason = reasonFor(op, reasons);
    auto [it, inserted] = byName.try_emplace(op->getName().getStringRef(),
                                             Unconverted{op->getLoc(), reason});
    Unconverted &entry = it->second;
    ++entry.uses;
    if (!inserted && reason != entry.reason &&
        llvm::none_of(entry.otherReasons,
                      [&](auto &other) { return other.second == reason; }))
      entry.otherReasons.emplace_back(op->getLoc(), reason);
    return WalkResult::skip();
  });
  if (byName.empty())
    return success();
  SmallVector<std::string> names;
  for (auto &[name, entry] : byName) {
    names.push_back("'" + name.str() + "'");
    InFlightDiagnostic diag = emitError(entry.first)
                              << "cannot convert '" << name
                              << "' to loom: " << entry.reason;
    if (entry.uses > 1)
      diag << " (first of " << entry.uses << " uses)";
    for (auto &[loc, reason] : entry.otherReasons)
      diag.attachNote(loc) << "another use: " << reason;
  }
  // At the first unsupported op (an implicit module has no location in the
  // file).
  emitError(byName.front().second.first)
      << "StableHLO to loom: " << byName.size()
                     << " unsupported op kind(s): " << llvm::join(names, ", ");
  return failure();
}

struct ConvertStableHLOToLoomPass
    : loom::impl::ConvertStableHLOToLoomBase<ConvertStableHLOToLoomPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    ModuleOp module = getOperation();
    UnsupportedReasons reasons;
    RewritePatternSet patterns(context);
    unrollWhileLoops(module, reasons);
    populateElementwisePatterns(patterns, reasons);
    populateDataMovementPatterns(patterns, reasons);
    populateContractionPatterns(patterns, reasons);
    populateReductionPatterns(patterns, reasons);
    populateCallPatterns(patterns, reasons);

    // stablehlo, chlo and sdy ops have no declared legality: partial
    // conversion converts what it can and leaves the rest, which is reported
    // below (all of it, not just the first op). Meshes stay for the hints.
    ConversionTarget target(*context);
    target.addLegalDialect<LoomDialect, shlo::check::CheckDialect,
                           func::FuncDialect>();
    target.addLegalOp<shlo::sdy::MeshOp>();
    if (failed(applyPartialConversion(module, target, std::move(patterns))) ||
        failed(reportUnconverted(module, reasons)))
      signalPassFailure();
  }
};

} // namespace

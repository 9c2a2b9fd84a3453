//===- ReportSharding.cpp - What tensor parallelism cut -------------------===//
//
// Implements -loom-report-sharding (see Passes.td for the contract): the
// share of the parameters that the tensor-parallel passes cut, a warning
// (or, with require-sharded, an error) for each large parameter they left
// replicated with the reason, and a JSON report.
//
//===----------------------------------------------------------------------===//

#include "TensorParallelUtils.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/MeshGrid.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_LOOMREPORTSHARDING
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::tensor_parallel;

namespace {

/// One parameter of the forward function, as the report lists it.
struct ParamEntry {
  unsigned argNumber;
  std::string name;
  /// The full shape (a sharded dimension times its parts, padding
  /// included).
  SmallVector<int64_t> shape;
  int64_t elements = 0, localElements = 0;
  ShardAttr shard;
  /// Empty for a sharded parameter.
  std::string replicatedBecause;
};

/// The first op in program order that reads `arg`, or null.
Operation *firstUser(BlockArgument arg) {
  Operation *first = nullptr;
  for (Operation *user : arg.getUsers())
    if (!first || user->isBeforeInBlock(first))
      first = user;
  return first;
}

/// Why `arg`, which no candidate block took, stays replicated: the op that
/// reads it.
std::string untakenReason(BlockArgument arg) {
  Operation *user = firstUser(arg);
  if (!user)
    return "the function does not read it";
  return "read by " + describeOp(user) +
         ", which no linear layer or vocabulary table rule covers";
}

struct ReportSharding
    : public mlir::loom::impl::LoomReportShardingBase<ReportSharding> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto found = lookupForwardFunctionAndMesh(module, function, "loom-report-sharding");
    if (failed(found))
      return signalPassFailure();
    func::FuncOp func = found->first;
    ::loom::Mesh mesh = found->second;
    int64_t tp = mesh.tp;

    auto reasons = func->getAttrOfType<DictionaryAttr>(kTpReplicatedAttrName);
    SmallVector<ParamEntry> params;
    int64_t total = 0, sharded = 0, perRank = 0;
    for (BlockArgument arg : func.getArguments()) {
      unsigned i = arg.getArgNumber();
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!func.getArgAttr(i, LoomDialect::getParamAttrName()) || !type ||
          !type.hasStaticShape())
        continue;
      ParamEntry entry;
      entry.argNumber = i;
      entry.name = getParamKey(func, i);
      entry.shape.assign(type.getShape().begin(), type.getShape().end());
      entry.localElements = type.getNumElements();
      entry.shard =
          func.getArgAttrOfType<ShardAttr>(i, LoomDialect::getShardAttrName());
      if (entry.shard) {
        entry.shape[entry.shard.getDim()] *= entry.shard.getParts();
      } else if (auto why = reasons ? reasons.getAs<StringAttr>(entry.name)
                                    : StringAttr()) {
        entry.replicatedBecause = why.getValue().str();
      } else {
        entry.replicatedBecause = untakenReason(arg);
      }
      entry.elements = entry.localElements *
                       (entry.shard ? entry.shard.getParts() : int64_t(1));
      total += entry.elements;
      perRank += entry.localElements;
      if (entry.shard)
        sharded += entry.elements;
      params.push_back(std::move(entry));
    }

    auto share = [&](int64_t elements) {
      return total ? static_cast<double>(elements) / total : 0.0;
    };
    bool failedAny = false;
    if (tp > 1) {
      for (const ParamEntry &entry : params) {
        if (entry.shard || share(entry.elements) < minFraction)
          continue;
        Operation *user = firstUser(func.getArgument(entry.argNumber));
        Location loc = user ? user->getLoc() : func.getLoc();
        InFlightDiagnostic diag =
            requireSharded ? emitError(loc) : emitWarning(loc);
        std::string percent;
        llvm::raw_string_ostream(percent)
            << llvm::format("%.1f", 100.0 * share(entry.elements));
        diag << "loom-report-sharding: parameter '" << entry.name << "' ("
             << percent << " % of the parameters) stays replicated on all " << tp
             << " tensor-parallel ranks: " << entry.replicatedBecause;
        if (requireSharded) {
          diag << " (--require-sharded)";
          failedAny = true;
        }
      }
    }

    if (!report.empty()) {
      std::string error;
      std::unique_ptr<llvm::ToolOutputFile> file =
          openOutputFile(report, &error);
      if (!file) {
        module.emitError() << "loom-report-sharding: cannot write the "
                              "sharding report to '"
                           << report << "': " << error;
        return signalPassFailure();
      }
      {
        llvm::json::OStream json(file->os(), /*IndentSize=*/2);
        json.object([&] {
          json.attribute("function", func.getSymName());
          json.attribute("tp", tp);
          json.attribute("parameters", static_cast<int64_t>(params.size()));
          json.attribute("elements", total);
          json.attribute("sharded_elements", sharded);
          json.attribute("sharded_fraction", share(sharded));
          json.attribute("per_rank_elements", perRank);
          json.attributeArray("params", [&] {
            for (const ParamEntry &entry : params)
              json.object([&] {
                json.attribute("name", entry.name);
                json.attributeArray("shape", [&] {
                  for (int64_t d : entry.shape)
                    json.value(d);
                });
                json.attribute("elements", entry.elements);
                json.attribute("fraction", share(entry.elements));
                if (!entry.shard) {
                  json.attribute("sharded", nullptr);
                  json.attribute("replicated_because",
                                 entry.replicatedBecause);
                  return;
                }
                json.attributeObject("sharded", [&] {
                  json.attribute("dim", entry.shard.getDim());
                  json.attribute("parts", entry.shard.getParts());
                  if (entry.shard.getGroups() > 1)
                    json.attribute("groups", entry.shard.getGroups());
                  if (entry.shard.getPadded() > 0)
                    json.attribute("padded", entry.shard.getPadded());
                });
              });
          });
        });
      }
      file->os() << "\n";
      file->keep();
    }
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace

//===- ReportCost.cpp - Per-function cost report as JSON ------------------===//
//
// Implements -loom-report-cost (see Passes.td for the contract).
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/LoomInterfaces.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_LOOMREPORTCOST
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;

namespace {

struct FunctionCost {
  std::string name;
  int64_t ops = 0, flops = 0, bytes = 0, params = 0, paramBytes = 0,
          unknownCostOps = 0;
};

FunctionCost measure(func::FuncOp func) {
  FunctionCost cost;
  cost.name = func.getSymName().str();
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    if (!func.getArgAttr(i, LoomDialect::getParamAttrName()))
      continue;
    Type type = func.getArgumentTypes()[i];
    std::optional<int64_t> n = loom::detail::getNumElements(type);
    std::optional<int64_t> b = loom::detail::getNumBytes(type);
    if (n && b) {
      cost.params += *n;
      cost.paramBytes += *b;
    }
  }
  func.walk([&](CostInterface op) {
    ++cost.ops;
    std::optional<int64_t> flops = op.getFlopCount();
    std::optional<int64_t> bytes = op.getBytesAccessed();
    if (!flops || !bytes) {
      ++cost.unknownCostOps;
      return;
    }
    cost.flops += *flops;
    cost.bytes += *bytes;
  });
  return cost;
}

struct ReportCost : public loom::impl::LoomReportCostBase<ReportCost> {
  using Base::Base;

  void runOnOperation() override {
    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> file =
        openOutputFile(output, &error);
    if (!file) {
      getOperation().emitError() << "cannot write the cost report to '"
                                 << output << "': " << error;
      return signalPassFailure();
    }
    {
      llvm::json::OStream json(file->os(), /*IndentSize=*/2);
      json.object([&] {
        json.attributeArray("functions", [&] {
          for (auto func : getOperation().getOps<func::FuncOp>()) {
            if (func.isExternal())
              continue;
            FunctionCost c = measure(func);
            json.object([&] {
              json.attribute("name", c.name);
              json.attribute("ops", c.ops);
              json.attribute("flops", c.flops);
              json.attribute("bytes", c.bytes);
              json.attribute("params", c.params);
              json.attribute("param_bytes", c.paramBytes);
              json.attribute("unknown_cost_ops", c.unknownCostOps);
            });
          }
        });
      });
    }
    file->os() << "\n";
    file->keep();
    markAllAnalysesPreserved();
  }
};

} // namespace

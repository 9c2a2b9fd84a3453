//===- CollectPlan.cpp - The plan of a compiled module --------------------===//

#include "loom/Pipelines/Plan.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Pipelines/WeightSlicing.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace mlir::loom;

/// The JSON report a pass wrote to `path`; `what` names it in errors.
static FailureOr<llvm::json::Value>
readReport(const std::string &path, llvm::StringRef what, std::string &error) {
  auto report = llvm::MemoryBuffer::getFile(path);
  if (!report) {
    error = ("cannot read the " + what + " report '" + path +
             "': " + report.getError().message())
                .str();
    return failure();
  }
  llvm::Expected<llvm::json::Value> value =
      llvm::json::parse((*report)->getBuffer());
  if (!value) {
    error = ("the " + what + " report '" + path +
             "': " + llvm::toString(value.takeError()))
                .str();
    return failure();
  }
  return std::move(*value);
}

FailureOr<Plan> mlir::loom::collectPlan(ModuleOp module,
                                        const TrainingOptions &options,
                                        llvm::StringRef model,
                                        llvm::StringRef pipeline,
                                        std::string &error) {
  Plan plan;
  plan.model = model.str();
  plan.options = options;
  plan.options.partitionReport.clear();
  plan.options.memoryReport.clear();
  plan.options.shardingReport.clear();
  plan.functions = stepFunctions(options);
  plan.pipeline = pipeline.str();

  // Tensor parallelism: the cut of each parameter, by name.
  if (options.mesh.tp > 1) {
    std::map<std::string, ParameterShard> shards;
    for (const std::string &name : plan.functions) {
      auto step = module.lookupSymbol<func::FuncOp>(name);
      FailureOr<std::map<std::string, ParameterShard>> found =
          step ? collectParameterShards(step)
               : FailureOr<std::map<std::string, ParameterShard>>(failure());
      if (failed(found)) {
        error = "no lowered @" + name + " with valid loom.shard";
        return failure();
      }
      shards.insert(found->begin(), found->end());
    }
    for (auto &entry : shards)
      plan.tensorParallelParameters.push_back(std::move(entry.second));
  }

  // The sharding report: the cut of every parameter, and why the others
  // stay replicated.
  if (options.mesh.tp > 1 && !options.shardingReport.empty()) {
    FailureOr<llvm::json::Value> report =
        readReport(options.shardingReport, "sharding", error);
    if (failed(report))
      return failure();
    plan.sharding = std::move(*report);
  }

  // The partition report: per-stage flops, parameters, activation and cut
  // bytes, and each op's stage.
  if (options.isPipelined()) {
    FailureOr<llvm::json::Value> partition =
        readReport(options.partitionReport, "partition", error);
    if (failed(partition))
      return failure();
    if (const llvm::json::Object *object = partition->getAsObject())
      if (const llvm::json::Array *cuts = object->getArray("cuts")) {
        plan.options.stageBoundaries.clear();
        for (const llvm::json::Value &cut : *cuts) {
          if (std::optional<int64_t> n = cut.getAsInteger())
            plan.options.stageBoundaries.push_back(std::to_string(*n));
          else if (std::optional<llvm::StringRef> name = cut.getAsString())
            plan.options.stageBoundaries.push_back(name->str());
        }
      }
    plan.partition = std::move(*partition);
  }
  return plan;
}

std::string mlir::loom::checkStepRows(ModuleOp module,
                                      const TrainingOptions &options,
                                      int64_t rows) {
  auto step = module.lookupSymbol<func::FuncOp>(stepFunctions(options).front());
  if (!step)
    return "";
  int64_t found = -1;
  for (unsigned i = 0; i < step.getNumArguments() && found < 0; ++i) {
    auto type = dyn_cast<ShapedType>(step.getArgumentTypes()[i]);
    if (type && type.getRank() > 0 &&
        !step.getArgAttr(i, LoomDialect::getParamAttrName()) &&
        !step.getArgAttr(i, LoomDialect::getStateAttrName()))
      found = type.getDimSize(0);
  }
  if (found < 0 || found == rows)
    return "";
  int64_t m = options.microbatches;
  return "--batch " + std::to_string(rows) + " in " + std::to_string(m) +
         " micro-batch(es) needs a model of batch size " +
         std::to_string(rows / m) + ", but the model's batch size is " +
         std::to_string(found / m) +
         " (its batch dimension is static: export it with batch " +
         std::to_string(rows / m) + ")";
}

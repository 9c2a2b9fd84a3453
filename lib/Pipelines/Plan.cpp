//===- Plan.cpp - A training plan, as JSON --------------------------------===//
//
// The schema is docs/plan.md. Writing is deterministic (keys in a fixed
// order), so a plan read back and written again is the same text.
//
//===----------------------------------------------------------------------===//

#include "loom/Pipelines/Plan.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::loom;
namespace json = llvm::json;

namespace {

/// An enum field, by its spelling (the generated symbolizeEnum).
template <typename E>
bool readEnum(const json::Object &object, llvm::StringRef key, E &out,
              json::Path path) {
  const json::Value *value = object.get(key);
  if (!value)
    return true;
  std::optional<llvm::StringRef> text = value->getAsString();
  std::optional<E> parsed = text ? symbolizeEnum<E>(*text) : std::nullopt;
  if (!parsed) {
    path.field(key).report("is not one of the values docs/plan.md lists");
    return false;
  }
  out = *parsed;
  return true;
}

/// An integer field of at least `min`.
bool readInt(const json::Object &object, llvm::StringRef key, int64_t &out,
             json::Path path, int64_t min) {
  const json::Value *value = object.get(key);
  if (!value)
    return true;
  std::optional<int64_t> n = value->getAsInteger();
  if (!n || *n < min) {
    if (min > 0)
      path.field(key).report("must be an integer >= 1");
    else
      path.field(key).report("must be an integer >= 0");
    return false;
  }
  out = *n;
  return true;
}

bool readNumber(const json::Object &object, llvm::StringRef key, double &out,
                json::Path path) {
  const json::Value *value = object.get(key);
  if (!value)
    return true;
  std::optional<double> n = value->getAsNumber();
  if (!n) {
    path.field(key).report("must be a number");
    return false;
  }
  out = *n;
  return true;
}

bool readBool(const json::Object &object, llvm::StringRef key, bool &out,
              json::Path path) {
  const json::Value *value = object.get(key);
  if (!value)
    return true;
  std::optional<bool> b = value->getAsBoolean();
  if (!b) {
    path.field(key).report("must be true or false");
    return false;
  }
  out = *b;
  return true;
}

/// Stage boundaries as the partition report writes them: positions as
/// integers, op names as strings.
json::Array boundariesToJSON(const std::vector<std::string> &boundaries) {
  json::Array array;
  for (const std::string &b : boundaries) {
    int64_t position;
    if (!llvm::StringRef(b).getAsInteger(10, position))
      array.push_back(position);
    else
      array.push_back(b);
  }
  return array;
}

} // namespace

json::Value mlir::loom::toJSON(const OptimizerOptions &o) {
  return json::Object{
      {"kind", stringifyOptimizerKind(o.kind)},
      {"lr", o.lr},
      {"momentum", o.momentum},
      {"nesterov", o.nesterov},
      {"weight_decay", o.weightDecay},
      {"beta1", o.beta1},
      {"beta2", o.beta2},
      {"eps", o.eps},
      {"clip_grad_norm", o.clipGradNorm},
      {"lr_schedule", stringifyLrSchedule(o.schedule)},
      {"warmup_steps", o.warmupSteps},
      {"total_steps", o.totalSteps},
      {"min_lr", o.minLr},
  };
}

json::Value mlir::loom::toJSON(const TrainingOptions &o) {
  json::Array stageRecompute, stageBytes;
  for (RecomputePolicy policy : o.stageRecompute)
    stageRecompute.push_back(stringifyRecomputePolicy(policy));
  for (int64_t bytes : o.stageRecomputeBytes)
    stageBytes.push_back(bytes);
  return json::Object{
      {"recompute_per_stage", std::move(stageRecompute)},
      {"recompute_bytes_per_stage", std::move(stageBytes)},
      {"function", o.function},
      {"loss", o.loss},
      {"mesh", json::Object{{"dp", o.mesh.dp},
                            {"tp", o.mesh.tp},
                            {"pp", o.mesh.pp}}},
      {"rank_layout", ::loom::Mesh::layout()},
      {"microbatches", o.microbatches},
      {"micro_batch", o.microBatch},
      {"schedule", stringifyPipelineScheduleKind(o.schedule)},
      {"stage_boundaries", boundariesToJSON(o.stageBoundaries)},
      {"memory_budget", o.memoryBudget},
      {"bucket_bytes", o.bucketBytes},
      {"optimizer", toJSON(o.optimizer)},
      {"precision", stringifyPrecision(o.precision)},
      {"excess_precision", stringifySwitch(o.excessPrecision)},
      {"weight_shadows", stringifySwitch(o.weightShadows)},
      {"target", stringifyTarget(o.target)},
      {"overlap_split", o.overlapSplit},
      {"max_inflight_collectives", o.maxInflightCollectives},
      {"recompute", stringifyRecomputePolicy(o.recompute)},
      {"swap", stringifySwapPolicy(o.swap)},
      {"device_memory", o.deviceMemory},
      {"require_sharded", o.requireSharded},
      {"comm_schedule", stringifySwitch(o.commSchedule)},
      {"sparse_embedding_grad", stringifySwitch(o.sparseEmbeddingGrad)},
      {"pipeline_weights", o.pipelineWeights},
  };
}

json::Value mlir::loom::toJSON(const Plan &plan) {
  json::Value value = toJSON(plan.options);
  json::Object &object = *value.getAsObject();
  object["version"] = Plan::kVersion;
  object["model"] = plan.model;
  object["functions"] = json::Array(plan.functions);
  json::Array shards;
  for (const ParameterShard &s : plan.tensorParallelParameters)
    shards.push_back(json::Object{
        {"name", s.name},
        {"shard", json::Object{{"dim", s.dim},
                               {"parts", s.parts},
                               {"groups", s.groups},
                               {"padded", s.padded}}},
        {"local_shape", json::Array(s.local)}});
  object["tensor_parallel_parameters"] = std::move(shards);
  object["pipeline"] = plan.pipeline;
  if (plan.partition)
    object["partition"] = *plan.partition;
  if (plan.sharding)
    object["sharding"] = *plan.sharding;
  return value;
}

bool mlir::loom::fromJSON(const json::Value &value, OptimizerOptions &o,
                          json::Path path) {
  const json::Object *object = value.getAsObject();
  if (!object) {
    path.report("must be an object");
    return false;
  }
  return readEnum(*object, "kind", o.kind, path) &&
         readNumber(*object, "lr", o.lr, path) &&
         readNumber(*object, "momentum", o.momentum, path) &&
         readBool(*object, "nesterov", o.nesterov, path) &&
         readNumber(*object, "weight_decay", o.weightDecay, path) &&
         readNumber(*object, "beta1", o.beta1, path) &&
         readNumber(*object, "beta2", o.beta2, path) &&
         readNumber(*object, "eps", o.eps, path) &&
         readNumber(*object, "clip_grad_norm", o.clipGradNorm, path) &&
         readEnum(*object, "lr_schedule", o.schedule, path) &&
         readInt(*object, "warmup_steps", o.warmupSteps, path, 0) &&
         readInt(*object, "total_steps", o.totalSteps, path, 0) &&
         readNumber(*object, "min_lr", o.minLr, path);
}

bool mlir::loom::fromJSON(const json::Value &value, TrainingOptions &o,
                          json::Path path) {
  const json::Object *object = value.getAsObject();
  if (!object) {
    path.report("must be an object");
    return false;
  }
  if (const json::Value *function = object->get("function")) {
    std::optional<llvm::StringRef> text = function->getAsString();
    if (!text || text->empty()) {
      path.field("function").report("must be a function name");
      return false;
    }
    o.function = text->str();
  }
  if (const json::Value *loss = object->get("loss")) {
    std::optional<llvm::StringRef> text = loss->getAsString();
    if (!text) {
      path.field("loss").report("must be a result name");
      return false;
    }
    o.loss = text->str();
  }
  if (const json::Value *mesh = object->get("mesh")) {
    const json::Object *axes = mesh->getAsObject();
    if (!axes) {
      path.field("mesh").report(
          "must be an object {\"dp\": D, \"tp\": T, \"pp\": P}");
      return false;
    }
    for (::loom::MeshAxis axis : ::loom::kMeshAxes)
      if (!readInt(*axes, ::loom::meshAxisName(axis), o.mesh[axis],
                   path.field("mesh"), 1))
        return false;
  }
  if (!readInt(*object, "microbatches", o.microbatches, path, 1) ||
      !readInt(*object, "micro_batch", o.microBatch, path, 0) ||
      !readEnum(*object, "schedule", o.schedule, path) ||
      !readInt(*object, "memory_budget", o.memoryBudget, path, 0) ||
      !readInt(*object, "bucket_bytes", o.bucketBytes, path, 0))
    return false;
  // The stage boundaries: given, or the cuts of a written partition.
  const json::Array *cuts = object->getArray("stage_boundaries");
  json::Path cutsPath = path.field("stage_boundaries");
  if (!cuts || cuts->empty())
    if (const json::Object *partition = object->getObject("partition"))
      if (const json::Array *found = partition->getArray("cuts")) {
        cuts = found;
        cutsPath = path.field("partition").field("cuts");
      }
  if (cuts) {
    o.stageBoundaries.clear();
    for (auto [i, cut] : llvm::enumerate(*cuts)) {
      if (std::optional<int64_t> n = cut.getAsInteger())
        o.stageBoundaries.push_back(std::to_string(*n));
      else if (std::optional<llvm::StringRef> name = cut.getAsString())
        o.stageBoundaries.push_back(name->str());
      else {
        cutsPath.index(i).report("must be an op position or an op name");
        return false;
      }
    }
  }
  if (const json::Value *optimizer = object->get("optimizer"))
    if (!fromJSON(*optimizer, o.optimizer, path.field("optimizer")))
      return false;
  // An optional list `key` (a list, else `listWhat`), each item read by
  // `item` (an error naming `itemWhat` when it returns nullopt).
  auto readList = [&](llvm::StringRef key, llvm::StringLiteral listWhat,
                      llvm::StringLiteral itemWhat, auto &out, auto item) {
    const json::Value *value = object->get(key);
    if (!value)
      return true;
    const json::Array *list = value->getAsArray();
    json::Path listPath = path.field(key);
    if (!list) {
      listPath.report(listWhat);
      return false;
    }
    out.clear();
    for (auto [i, element] : llvm::enumerate(*list)) {
      auto read = item(element);
      if (!read) {
        listPath.index(i).report(itemWhat);
        return false;
      }
      out.push_back(*read);
    }
    return true;
  };
  if (!readList("recompute_per_stage", "must be a list of recompute policies",
                "must be none, full, selective, comm-free or auto (per "
                "tensor)",
                o.stageRecompute, [](const json::Value &v) {
                  std::optional<llvm::StringRef> text = v.getAsString();
                  return text ? symbolizeRecomputePolicy(*text)
                              : std::nullopt;
                }) ||
      !readList("recompute_bytes_per_stage", "must be a list of byte counts",
                "must be an integer >= 0", o.stageRecomputeBytes,
                [](const json::Value &v) {
                  std::optional<int64_t> bytes = v.getAsInteger();
                  return bytes && *bytes >= 0 ? bytes : std::nullopt;
                }))
    return false;
  return readEnum(*object, "precision", o.precision, path) &&
         readEnum(*object, "excess_precision", o.excessPrecision, path) &&
         readEnum(*object, "weight_shadows", o.weightShadows, path) &&
         readEnum(*object, "target", o.target, path) &&
         readInt(*object, "overlap_split", o.overlapSplit, path, 1) &&
         readInt(*object, "max_inflight_collectives",
                 o.maxInflightCollectives, path, 1) &&
         readEnum(*object, "recompute", o.recompute, path) &&
         readEnum(*object, "swap", o.swap, path) &&
         readInt(*object, "device_memory", o.deviceMemory, path, 0) &&
         readBool(*object, "require_sharded", o.requireSharded, path) &&
         readEnum(*object, "comm_schedule", o.commSchedule, path) &&
         readEnum(*object, "sparse_embedding_grad", o.sparseEmbeddingGrad,
                  path) &&
         readInt(*object, "pipeline_weights", o.pipelineWeights, path, 1);
}

bool mlir::loom::fromJSON(const json::Value &value, Plan &plan,
                          json::Path path) {
  const json::Object *object = value.getAsObject();
  if (!object) {
    path.report("a plan must be a JSON object");
    return false;
  }
  int64_t version = Plan::kVersion;
  if (!readInt(*object, "version", version, path, 1))
    return false;
  if (version > Plan::kVersion) {
    path.field("version").report(
        "is newer than the plans this build of Loom reads (version 1)");
    return false;
  }
  if (const json::Value *model = object->get("model"))
    if (std::optional<llvm::StringRef> text = model->getAsString())
      plan.model = text->str();
  if (const json::Value *partition = object->get("partition"))
    plan.partition = *partition;
  if (const json::Value *sharding = object->get("sharding"))
    plan.sharding = *sharding;
  return fromJSON(value, plan.options, path);
}

std::string mlir::loom::parsePlan(llvm::StringRef text, Plan &plan) {
  llvm::Expected<json::Value> parsed = json::parse(text);
  if (!parsed)
    return "not JSON: " + llvm::toString(parsed.takeError());
  json::Path::Root root("plan");
  if (!fromJSON(*parsed, plan, root)) {
    std::string message = llvm::toString(root.getError());
    return message;
  }
  return "";
}

std::string mlir::loom::printPlan(const Plan &plan) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::formatv("{0:2}", toJSON(plan))
                                 << "\n";
  return text;
}

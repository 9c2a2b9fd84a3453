//===- RegisterAllPasses.cpp - Every pass Loom uses -----------------------===//

#include "loom/InitAllPasses.h"

#include "loom/Conversion/LoomToLoomRT/Passes.h"
#include "loom/Conversion/StableHLOToLoom/Passes.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"
#include "loom/Dialect/LoomRT/Transforms/Passes.h"
#include "loom/Pipelines/TrainingPipeline.h"

#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

void mlir::loom::registerAllPasses() {
  registerTransformsPasses();
  shard::registerShardPasses();
  registerLoomPasses();
  registerStableHLOToLoomPasses();
  registerLoomToLoomRTPasses();
  loomrt::registerLoomRTPasses();
  registerTrainingPipeline();
}

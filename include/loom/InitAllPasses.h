//===- InitAllPasses.h - Register every pass Loom uses ----------*- C++ -*-===//
//
// The passes the Loom tools can name in a textual pipeline (loom-opt's
// flags, loomc's pipeline, loom-run --compare-after), in one place.
// Modelled on upstream's mlir/InitAllPasses.h; defined in
// lib/Registration/RegisterAllPasses.cpp (library LoomRegisterAllPasses).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INITALLPASSES_H
#define LOOM_INITALLPASSES_H

namespace mlir {
namespace loom {

/// Registers with the global pass registry:
///  - the upstream passes Loom pipelines use: the transforms passes
///    (canonicalize, cse, inline, symbol-dce, ...) and the shard dialect's
///    (sharding-propagation, shard-partition, ...);
///  - Loom's passes (include/loom/Dialect/Loom/Transforms/Passes.td);
///  - the conversions convert-stablehlo-to-loom and convert-loom-to-loomrt;
///  - the loomrt passes (loom-memory-plan, ...);
///  - --loom-training-pipeline, the pipeline loomc runs (lib/Pipelines).
void registerAllPasses();

} // namespace loom
} // namespace mlir

#endif // LOOM_INITALLPASSES_H

//===- InitAllDialects.h - Register every dialect Loom uses -----*- C++ -*-===//
//
// The dialects and dialect extensions of the Loom tools (loom-opt, loom-run,
// loomc), in one place. Modelled on upstream's mlir/InitAllDialects.h;
// defined in lib/Registration/RegisterAllDialects.cpp (library
// LoomRegisterAllDialects).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INITALLDIALECTS_H
#define LOOM_INITALLDIALECTS_H

namespace mlir {
class DialectRegistry;

namespace loom {

/// Adds to `registry`:
///  - Loom's dialects: loom, loomrt, and the StableHLO importer's input
///    dialects stablehlo, chlo, check and sdy;
///  - the upstream dialects Loom IR uses: func, arith, math, memref, tensor
///    and shard;
///  - the func and tensor extensions (inlining of func.call, the sharding
///    rules of func/tensor ops, so that sharding-propagation crosses
///    function boundaries);
///  - the VJP models of shard ops (loom-autodiff on tensor-parallel graphs).
void registerAllDialects(DialectRegistry &registry);

} // namespace loom
} // namespace mlir

#endif // LOOM_INITALLDIALECTS_H

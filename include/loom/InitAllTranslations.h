//===- InitAllTranslations.h - Register Loom's translations -----*- C++ -*-===//
//
// The translations of loom-translate, registered with upstream's translation
// registry (mlir/Tools/mlir-translate/Translation.h), so that any
// mlir-translate-style driver offers them. Modelled on upstream's
// mlir/InitAllTranslations.h; defined in
// lib/Registration/RegisterAllTranslations.cpp (library
// LoomRegisterAllTranslations).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INITALLTRANSLATIONS_H
#define LOOM_INITALLTRANSLATIONS_H

namespace mlir {
namespace loom {

/// Registers, with their command-line options:
///  - import-onnx: an ONNX model to loom IR (lib/Import/Onnx);
///  - import-stablehlo: StableHLO text to loom IR (lib/Import);
///  - emit-cpp: a planned loomrt module to C++ for lib/Runtime
///    (lib/Target/Cpp).
/// Call before parsing the command line; calling again does nothing.
void registerAllTranslations();

} // namespace loom
} // namespace mlir

#endif // LOOM_INITALLTRANSLATIONS_H

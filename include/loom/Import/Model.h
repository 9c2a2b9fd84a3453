//===- Model.h - Import a model file of any supported kind ------*- C++ -*-===//
//
// One entry point for the drivers: an ONNX file (weights to safetensors), a
// StableHLO text module (JAX's export) or loom IR, chosen by the file.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_IMPORT_MODEL_H
#define LOOM_IMPORT_MODEL_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

#include <string>
#include <vector>

namespace mlir {
namespace loom {

struct ModelImportOptions {
  /// ONNX: where the initializers go (safetensors); empty: nowhere.
  std::string weightsOut;
  /// ONNX: the initializers to train / not to train (names or regexes).
  std::vector<std::string> trainable, frozen;
  /// .mlir: a weights file was given for it (ONNX models carry theirs).
  bool hasWeightsFile = false;
  /// Rows per micro-batch (0: the model's): ONNX inputs with a dynamic
  /// batch are bound to it (OnnxImportOptions::batch), as are loom IR
  /// data arguments whose first dimension is `?` (bindLoomBatch).
  int64_t batch = 0;
  /// StableHLO: sizes of named dimension variables (NAME=N; --dim).
  std::vector<std::string> dims;
};

/// Imports `path`: `.onnx` through the ONNX importer, a file holding
/// `stablehlo.` ops through the StableHLO importer, anything else parsed as
/// loom IR. The file is added to `sourceMgr` (diagnostics point into it).
/// Returns null after reporting the error on llvm::errs() with `tool`'s
/// prefix.
OwningOpRef<ModuleOp> importModel(llvm::StringRef path,
                                  const ModelImportOptions &options,
                                  MLIRContext *context,
                                  llvm::SourceMgr &sourceMgr,
                                  llvm::StringRef tool);

/// Binds the first dimension of each data argument (not loom.param) of
/// the entry function that is dynamic to `batch`; the training pipeline's
/// loom-shape-inference carries it through the body.
void bindLoomBatch(ModuleOp module, int64_t batch);

/// The model's entry function: its public function @main, else its first
/// public function; null when it has none.
func::FuncOp findEntryFunction(ModuleOp module);

} // namespace loom
} // namespace mlir

#endif // LOOM_IMPORT_MODEL_H

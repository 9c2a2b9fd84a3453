//===- Onnx.h - Import ONNX models into the loom dialect --------*- C++ -*-===//

#ifndef LOOM_IMPORT_ONNX_H
#define LOOM_IMPORT_ONNX_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"

#include <string>
#include <vector>

namespace mlir {
namespace loom {

struct OnnxImportOptions {
  /// Where to write the initializers (safetensors). Empty: write nothing.
  std::string weightsOut;
  /// Import shapes only: initializer values are neither read nor written.
  bool noWeights = false;
  /// Initializers to train / to freeze, by exact name or regex (anchored).
  /// By default every floating-point initializer is trainable.
  std::vector<std::string> trainable, frozen;
  /// Floating-point initializers that are program constants, not weights
  /// (a module's buffers: rotary frequency tables, masks), by exact name or
  /// regex: evaluated at import like Constant nodes (at most
  /// onnx_import::kMaxFoldElements elements each).
  std::vector<std::string> constants;
  /// Bindings for dynamic input dimensions: input name -> full shape.
  llvm::StringMap<std::vector<int64_t>> inputShapes;
  /// Re-batching (0: off): dimension 0 of every graph input whose batch is
  /// dynamic is bound to this size (inputs bound by inputShapes aside).
  /// When no input has a dynamic dimension 0, the model's batch is fixed:
  /// an input whose dimension 0 differs is an error.
  int64_t batch = 0;
  /// Directory that external-data paths are relative to.
  std::string modelDir;
  /// The file whose whole content the imported bytes are, when there is
  /// one: large weights are copied from it into the weights file by the
  /// kernel instead of through this process's memory.
  std::string modelFile;
};

/// Supported opset range of the default ONNX domain.
constexpr int64_t kMinOnnxOpset = 13;
constexpr int64_t kMaxOnnxOpset = 21;

/// Imports the serialized ONNX ModelProto in `bytes` (read from `fileName`)
/// as a module with one public function `@main`. Errors are reported as
/// diagnostics on `context`, located at the offending node; returns null then.
OwningOpRef<ModuleOp> importOnnx(llvm::StringRef bytes,
                                 llvm::StringRef fileName,
                                 const OnnxImportOptions &options,
                                 MLIRContext *context);

/// Registers the `import-onnx` translation
/// (lib/Import/Onnx/OnnxTranslation.cpp) and its options --weights-out,
/// --no-weights, --trainable, --frozen, --constants and --input-shape. The weights go
/// next to the driver's `-o` output by default. Calling again does nothing.
void registerOnnxTranslation();

} // namespace loom
} // namespace mlir

#endif // LOOM_IMPORT_ONNX_H

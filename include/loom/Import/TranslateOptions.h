//===- TranslateOptions.h - The importers' command line --------*- C++ -*-===//
//
// What the import-onnx and import-stablehlo translations share on the
// command line: the --trainable list (one option can be registered only
// once), comma-list splitting, and the tool's way of reporting a bad command
// line (`loom-translate: <what to write instead>` on stderr, before anything
// is read or written).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_IMPORT_TRANSLATEOPTIONS_H
#define LOOM_IMPORT_TRANSLATEOPTIONS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace mlir {
namespace loom {

/// The category of the options both importers read.
inline llvm::cl::OptionCategory &getImportOptionsCategory() {
  static llvm::cl::OptionCategory category(
      "import-onnx and import-stablehlo options");
  return category;
}

/// --trainable: ONNX initializers or StableHLO arguments to train.
inline llvm::cl::list<std::string> &getTrainableOption() {
  static llvm::cl::list<std::string> trainable(
      "trainable",
      llvm::cl::desc("Initializers (ONNX) or arguments (StableHLO) to train, "
                     "by name or regex (comma list); default: every "
                     "floating-point ONNX initializer, no StableHLO argument"),
      llvm::cl::value_desc("names"),
      llvm::cl::cat(getImportOptionsCategory()));
  return trainable;
}

/// --micro-batch: rows bound to the dynamic batch of an ONNX model's
/// inputs or a shape-polymorphic StableHLO module's arguments.
inline llvm::cl::opt<int64_t> &getMicroBatchOption() {
  static llvm::cl::opt<int64_t> microBatch(
      "micro-batch",
      llvm::cl::desc("Bind dimension 0 of the inputs (ONNX) or arguments "
                     "(StableHLO) with a dynamic batch to this size (a "
                     "model with a fixed batch must have it)"),
      llvm::cl::value_desc("rows"), llvm::cl::init(0),
      llvm::cl::cat(getImportOptionsCategory()));
  return microBatch;
}

/// --dim: sizes of a shape-polymorphic StableHLO module's named dimension
/// variables (JAX's jax.export.symbolic_shape names).
inline llvm::cl::list<std::string> &getDimOption() {
  static llvm::cl::list<std::string> dims(
      "dim",
      llvm::cl::desc("Bind a shape-polymorphic StableHLO module's dimension "
                     "variable (JAX's name, as in symbolic_shape('b, s')) "
                     "to a size: NAME=N (repeat or comma list)"),
      llvm::cl::value_desc("NAME=N"),
      llvm::cl::cat(getImportOptionsCategory()));
  return dims;
}

/// Splits "a,b,c" (in each of `values`) into its non-empty, trimmed items.
inline std::vector<std::string>
splitCommaList(const std::vector<std::string> &values) {
  std::vector<std::string> items;
  for (const std::string &value : values) {
    SmallVector<StringRef> parts;
    StringRef(value).split(parts, ',', -1, /*KeepEmpty=*/false);
    for (StringRef p : parts)
      items.push_back(p.trim().str());
  }
  return items;
}

/// Whether the option --`name` (of any translation) is on the command line:
/// a translation rejects the options that belong to another one.
inline bool isOptionGiven(StringRef name) {
  llvm::cl::Option *option = llvm::cl::getRegisteredOptions().lookup(name);
  return option && option->getNumOccurrences() > 0;
}

/// Reports a bad command line: `loom-translate: <message>`.
inline void reportCommandLineError(const llvm::Twine &message) {
  llvm::errs() << "loom-translate: " << message << "\n";
}

} // namespace loom
} // namespace mlir

#endif // LOOM_IMPORT_TRANSLATEOPTIONS_H

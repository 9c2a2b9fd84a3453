//===- OnnxTranslation.cpp - The import-onnx translation ------------------===//
//
//   loom-translate --import-onnx model.onnx -o model.mlir
//       [--weights-out FILE] [--no-weights] [--trainable LIST] [--frozen LIST]
//       [--input-shape name=1x128,...] [--micro-batch N]
//
// The weights go to a safetensors file next to the output (model.safetensors
// for -o model.mlir), written by the import itself and only when it
// succeeds. A bad command line (clashing or unwritable output paths,
// malformed --input-shape) is reported before anything is imported.
//
//===----------------------------------------------------------------------===//

#include "loom/Import/Onnx.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/ShapeUtils.h"
#include "loom/Import/TranslateOptions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace mlir::loom;
namespace cl = llvm::cl;

namespace {

/// The options of import-onnx (--trainable is shared with import-stablehlo).
struct OnnxTranslateOptions {
  cl::OptionCategory category{"import-onnx options"};
  cl::opt<std::string> weightsOut{
      "weights-out",
      cl::desc("Where to write the initializers (safetensors); default: the "
               "output with extension .safetensors"),
      cl::value_desc("file"), cl::cat(category)};
  cl::opt<bool> noWeights{
      "no-weights",
      cl::desc("Import shapes only: read and write no initializer values "
               "(for planning models too large to load)"),
      cl::cat(category)};
  cl::list<std::string> frozen{
      "frozen",
      cl::desc("Initializers not to train, by name or regex (comma list)"),
      cl::value_desc("names"), cl::cat(category)};
  cl::list<std::string> constants{
      "constants",
      cl::desc("Floating-point initializers that are constants, not weights "
               "(a module's buffers), by name or regex (comma list)"),
      cl::value_desc("names"), cl::cat(category)};
  cl::list<std::string> inputShapes{
      "input-shape",
      cl::desc("Bind dynamic input dimensions: NAME=DxDx... (comma list), "
               "e.g. input_ids=1x128"),
      cl::value_desc("name=shape"), cl::cat(category)};
};

/// The driver's output file: `-o` of loom-translate and mlirTranslateMain
/// (a cl::opt<std::string> in both); "-" when there is none.
std::string getOutputFilename() {
  cl::Option *option = cl::getRegisteredOptions().lookup("o");
  if (!option)
    return "-";
  return static_cast<cl::opt<std::string> *>(option)->getValue();
}

/// Whether two paths name the same file (existing or not).
bool sameFile(StringRef a, StringRef b) {
  if (a.empty() || b.empty() || a == "-" || b == "-")
    return false;
  if (llvm::sys::fs::equivalent(a, b))
    return true;
  SmallString<256> x(a), y(b);
  llvm::sys::fs::make_absolute(x);
  llvm::sys::fs::make_absolute(y);
  llvm::sys::path::remove_dots(x, /*remove_dot_dot=*/true);
  llvm::sys::path::remove_dots(y, /*remove_dot_dot=*/true);
  return x == y;
}

/// The default weights path: the output with its extension replaced by
/// .safetensors (none for "-", no output, or an output that is not a
/// regular file such as /dev/null).
std::string defaultWeightsPath(StringRef output) {
  if (output.empty() || output == "-")
    return "";
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(output, status) &&
      llvm::sys::fs::exists(status) && !llvm::sys::fs::is_regular_file(status))
    return "";
  SmallString<256> path(output);
  llvm::sys::path::replace_extension(path, "safetensors");
  return std::string(path);
}

/// The import options of the command line, or failure (reported) for a bad
/// command line.
FailureOr<OnnxImportOptions>
getImportOptions(OnnxTranslateOptions &flags, StringRef inputFile,
                 StringRef outputFile) {
  if (isOptionGiven("arg-names")) {
    reportCommandLineError("--arg-names is for --import-stablehlo; ONNX "
                           "inputs have their own names");
    return failure();
  }
  if (flags.noWeights && !flags.weightsOut.empty()) {
    reportCommandLineError("--no-weights and --weights-out exclude each "
                           "other (--no-weights reads and writes no weights)");
    return failure();
  }
  int64_t microBatch = getMicroBatchOption();
  if (microBatch < 0) {
    reportCommandLineError("--micro-batch must be >= 1 (or 0: the model's "
                           "batch), got " +
                           std::to_string(microBatch));
    return failure();
  }
  OnnxImportOptions options;
  options.batch = microBatch;
  options.noWeights = flags.noWeights;
  options.weightsOut = flags.weightsOut.empty()
                           ? defaultWeightsPath(outputFile)
                           : flags.weightsOut.getValue();
  if (!options.noWeights && !options.weightsOut.empty()) {
    if (sameFile(options.weightsOut, outputFile)) {
      reportCommandLineError("the weights file '" + options.weightsOut +
                             "' would overwrite the output; give another "
                             "path with --weights-out (or another -o "
                             "extension)");
      return failure();
    }
    if (sameFile(options.weightsOut, inputFile)) {
      reportCommandLineError("the weights file '" + options.weightsOut +
                             "' would overwrite the input model");
      return failure();
    }
    // The weights file is replaced atomically (written beside it, then
    // renamed over it): that must not replace a device such as /dev/null.
    llvm::sys::fs::file_status status;
    if (!llvm::sys::fs::status(options.weightsOut, status) &&
        llvm::sys::fs::exists(status) &&
        !llvm::sys::fs::is_regular_file(status)) {
      reportCommandLineError("--weights-out '" + options.weightsOut +
                             "' is not a regular file (to write no weights, "
                             "use --no-weights)");
      return failure();
    }
  }
  // The weights are written by the import itself: check that the outputs
  // can be created first, so that a bad -o does not leave a weights file
  // without its IR.
  SmallVector<StringRef, 2> written = {outputFile};
  if (!options.noWeights)
    written.push_back(options.weightsOut);
  for (StringRef path : written) {
    if (path.empty() || path == "-")
      continue;
    SmallString<256> parent(path);
    llvm::sys::path::remove_filename(parent);
    if (parent.empty())
      parent = ".";
    if (!llvm::sys::fs::is_directory(parent)) {
      reportCommandLineError("cannot write '" + path + "': directory '" +
                             parent + "' does not exist");
      return failure();
    }
  }
  options.trainable = splitCommaList(getTrainableOption());
  options.frozen = splitCommaList(flags.frozen);
  options.constants = splitCommaList(flags.constants);
  SmallString<256> dir(inputFile);
  llvm::sys::path::remove_filename(dir);
  options.modelDir = dir.empty() ? std::string(".") : std::string(dir);
  if (inputFile != "-" && inputFile != "<stdin>")
    options.modelFile = inputFile.str();
  for (const std::string &binding : splitCommaList(flags.inputShapes)) {
    auto [name, dims] = StringRef(binding).split('=');
    name = name.trim();
    FailureOr<SmallVector<int64_t>> shape = parseDims(dims.trim());
    if (name.empty() || !StringRef(binding).contains('=') || failed(shape) ||
        llvm::any_of(*shape, [](int64_t d) { return d < 0; })) {
      reportCommandLineError("invalid --input-shape '" + binding +
                             "': expected NAME=DxDx... with sizes, e.g. "
                             "x=1x128");
      return failure();
    }
    if (options.inputShapes.count(name)) {
      reportCommandLineError("--input-shape binds '" + name + "' twice");
      return failure();
    }
    options.inputShapes[name] =
        std::vector<int64_t>(shape->begin(), shape->end());
  }
  return options;
}

} // namespace

void mlir::loom::registerOnnxTranslation() {
  static OnnxTranslateOptions options;
  (void)getTrainableOption();
  (void)getMicroBatchOption();
  static TranslateToMLIRRegistration registration(
      "import-onnx", "Import an ONNX model (.onnx)",
      [](llvm::SourceMgr &sourceMgr,
         MLIRContext *context) -> OwningOpRef<Operation *> {
        const llvm::MemoryBuffer *input =
            sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
        StringRef inputFile = input->getBufferIdentifier();
        FailureOr<OnnxImportOptions> importOptions =
            getImportOptions(options, inputFile, getOutputFilename());
        if (failed(importOptions))
          return nullptr;
        return OwningOpRef<Operation *>(
            importOnnx(input->getBuffer(), inputFile, *importOptions, context)
                .release());
      },
      [](DialectRegistry &registry) {
        registry.insert<LoomDialect, func::FuncDialect>();
      });
}

//===- loom-translate.cpp - Import models into the loom dialect -----------===//
//
//   loom-translate --import-onnx model.onnx -o model.mlir
//       [--weights-out FILE] [--no-weights] [--trainable LIST] [--frozen LIST]
//       [--input-shape name=1x128,...]
//   loom-translate --import-stablehlo model.stablehlo.mlir -o model.mlir
//       [--arg-names LIST] [--trainable LIST]
//
// Reads a model in an exchange format and writes loom IR. Weights go to a
// safetensors file next to the output (model.safetensors for -o model.mlir),
// written only when the import succeeds. Bad command lines (unwritable or
// clashing output paths, malformed --input-shape) fail before any import.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/ShapeUtils.h"
#include "loom/Import/NamePatterns.h"
#include "loom/Import/Onnx.h"
#include "loom/Import/StableHLO.h"

#include "loom/Dialect/LoomRT/IR/LoomRTDialect.h"
#include "loom/Target/Cpp/EmitCpp.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Parser/Parser.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {
/// Splits "a,b,c" into its non-empty items.
std::vector<std::string> splitList(const std::vector<std::string> &values) {
  std::vector<std::string> items;
  for (const std::string &value : values) {
    SmallVector<StringRef> parts;
    StringRef(value).split(parts, ',', -1, /*KeepEmpty=*/false);
    for (StringRef p : parts)
      items.push_back(p.trim().str());
  }
  return items;
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
/// Prints `module` to `outputFile`; returns the exit status.
int writeModule(ModuleOp module, StringRef outputFile) {
  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFile, &errorMessage);
  if (!output) {
    llvm::errs() << "loom-translate: " << errorMessage << "\n";
    return 1;
  }
  module.print(output->os());
  output->os() << "\n";
  output->keep();
  return 0;
}

/// StableHLO functions carry no names or notion of parameters: name the
/// entry function's arguments (`loom.name`) and mark the trainable ones
/// (`loom.param`).
LogicalResult annotateArguments(ModuleOp module,
                                ArrayRef<std::string> argNames,
                                ArrayRef<std::string> trainable) {
  func::FuncOp entry;
  for (auto func : module.getOps<func::FuncOp>())
    if (func.isPublic() && (!entry || func.getSymName() == "main"))
      entry = func;
  if (!entry)
    return module.emitError() << "the module has no public function";
  Builder b(module.getContext());
  unsigned n = entry.getNumArguments();
  if (!argNames.empty() && argNames.size() != n)
    return entry.emitError() << "--arg-names gives " << argNames.size()
                             << " names but @" << entry.getSymName()
                             << " has " << n << " arguments";
  SmallVector<bool> used(trainable.size(), false);
  for (unsigned i = 0; i < n; ++i) {
    std::string name = argNames.empty() ? ("arg" + Twine(i)).str()
                                        : argNames[i];
    if (!argNames.empty())
      entry.setArgAttr(i, mlir::loom::LoomDialect::getNameAttrName(),
                       b.getStringAttr(name));
    if (!mlir::loom::matchesNameOrPattern(name, trainable))
      continue;
    for (auto [k, p] : llvm::enumerate(trainable))
      used[k] = used[k] || mlir::loom::matchesNameOrPattern(name, p);
    auto type = dyn_cast<RankedTensorType>(entry.getArgumentTypes()[i]);
    if (!type || !isa<FloatType>(type.getElementType()))
      return entry.emitError() << "--trainable names argument '" << name
                               << "' of type " << entry.getArgumentTypes()[i]
                               << "; only floating-point tensors train";
    entry.setArgAttr(i, mlir::loom::LoomDialect::getParamAttrName(),
                     b.getUnitAttr());
  }
  for (auto [k, p] : llvm::enumerate(trainable))
    if (!used[k])
      return entry.emitError() << "--trainable '" << p
                               << "' matches no argument of @"
                               << entry.getSymName()
                               << " (names come from --arg-names, else argN)";
  return success();
}

int importStableHLOFile(std::unique_ptr<llvm::MemoryBuffer> input,
                        StringRef outputFile,
                        ArrayRef<std::string> argNames,
                        ArrayRef<std::string> trainable) {
  DialectRegistry registry;
  mlir::loom::registerStableHLOImportDialects(registry);
  MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = mlir::loom::importStableHLO(sourceMgr, &context);
  if (!module || failed(annotateArguments(*module, argNames, trainable)) ||
      failed(verify(*module)))
    return 1;
  return writeModule(*module, outputFile);
}
int emitCppFile(StringRef inputFile, StringRef outputFile, int64_t batchSize) {
  DialectRegistry registry;
  registry.insert<mlir::loom::LoomDialect, loomrt::LoomRTDialect, func::FuncDialect,
                  arith::ArithDialect, math::MathDialect,
                  memref::MemRefDialect, shard::ShardDialect>();
  MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFile, &errorMessage);
  if (!input) {
    llvm::errs() << "loom-translate: " << errorMessage << "\n";
    return 1;
  }
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;
  std::string code;
  llvm::raw_string_ostream os(code);
  mlir::loom::EmitCppOptions options;
  options.batchSize = batchSize;
  if (failed(mlir::loom::emitCpp(*module, os, options)))
    return 1;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFile, &errorMessage);
  if (!output) {
    llvm::errs() << "loom-translate: " << errorMessage << "\n";
    return 1;
  }
  output->os() << code;
  output->keep();
  return 0;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::OptionCategory category("loom-translate options");
  cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model file>"),
                                 cl::Required, cl::cat(category));
  cl::opt<std::string> outputFile("o", cl::desc("Output .mlir file (- for "
                                                "stdout)"),
                                  cl::value_desc("file"), cl::init("-"),
                                  cl::cat(category));
  cl::opt<bool> importOnnxFlag("import-onnx",
                               cl::desc("Import an ONNX model (.onnx)"),
                               cl::cat(category));
  cl::opt<bool> importStableHLOFlag(
      "import-stablehlo",
      cl::desc("Import StableHLO text (as jax.jit(f).lower(...).as_text() "
               "prints it)"),
      cl::cat(category));
  cl::opt<bool> emitCppFlag(
      "emit-cpp",
      cl::desc("Print a planned loomrt module (after convert-loom-to-loomrt "
               "and loom-memory-plan) as C++ for the CPU runtime"),
      cl::cat(category));
  cl::opt<int64_t> batchSize(
      "batch-size",
      cl::desc("--emit-cpp: rows of each data input per step (default: the "
               "data inputs' leading dimension)"),
      cl::init(0), cl::cat(category));
  cl::list<std::string> argNames(
      "arg-names",
      cl::desc("StableHLO only: names of the entry function's arguments, in "
               "order (comma list); they become loom.name"),
      cl::value_desc("names"), cl::cat(category));
  cl::opt<std::string> weightsOut(
      "weights-out",
      cl::desc("Where to write the initializers (safetensors); default: the "
               "output with extension .safetensors"),
      cl::value_desc("file"), cl::cat(category));
  cl::opt<bool> noWeights(
      "no-weights",
      cl::desc("Import shapes only: read and write no initializer values "
               "(for planning models too large to load)"),
      cl::cat(category));
  cl::list<std::string> trainable(
      "trainable",
      cl::desc("Initializers (ONNX) or arguments (StableHLO) to train, by "
               "name or regex (comma list); default: every floating-point "
               "ONNX initializer, no StableHLO argument"),
      cl::value_desc("names"), cl::cat(category));
  cl::list<std::string> frozen(
      "frozen",
      cl::desc("Initializers not to train, by name or regex (comma list)"),
      cl::value_desc("names"), cl::cat(category));
  cl::list<std::string> inputShapes(
      "input-shape",
      cl::desc("Bind dynamic input dimensions: NAME=DxDx... (comma list), "
               "e.g. input_ids=1x128"),
      cl::value_desc("name=shape"), cl::cat(category));
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "loom-translate: import models into the loom dialect\n\n"
      "  loom-translate --import-onnx model.onnx -o model.mlir\n"
      "      writes model.mlir and model.safetensors (the weights)\n"
      "  loom-translate --import-stablehlo jax.mlir --arg-names=w,b,x \\\n"
      "      --trainable=w,b -o model.mlir\n"
      "  loom-translate --emit-cpp step.mlir -o step.cpp\n"
      "      prints a lowered, planned step as C++ for lib/Runtime\n");

  if (int(importOnnxFlag) + int(importStableHLOFlag) + int(emitCppFlag) != 1) {
    llvm::errs() << "loom-translate: choose one of --import-onnx, "
                    "--import-stablehlo and --emit-cpp\n";
    return 1;
  }
  if (emitCppFlag)
    return emitCppFile(inputFile, outputFile, batchSize);
  if (importOnnxFlag && !argNames.empty()) {
    llvm::errs() << "loom-translate: --arg-names is for --import-stablehlo; "
                    "ONNX inputs have their own names\n";
    return 1;
  }
  if (importStableHLOFlag &&
      (!weightsOut.empty() || noWeights || !frozen.empty() ||
       !inputShapes.empty())) {
    llvm::errs() << "loom-translate: --weights-out, --no-weights, --frozen "
                    "and --input-shape are for --import-onnx (StableHLO "
                    "text carries no weights and has static shapes)\n";
    return 1;
  }

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFile, &errorMessage);
  if (!input) {
    llvm::errs() << "loom-translate: " << errorMessage << "\n";
    return 1;
  }

  if (importStableHLOFlag)
    return importStableHLOFile(std::move(input), outputFile,
                               splitList(argNames), splitList(trainable));

  MLIRContext context;
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);

  if (noWeights && !weightsOut.empty()) {
    llvm::errs() << "loom-translate: --no-weights and --weights-out exclude "
                    "each other (--no-weights reads and writes no weights)\n";
    return 1;
  }
  mlir::loom::OnnxImportOptions options;
  options.noWeights = noWeights;
  options.weightsOut =
      weightsOut.empty() ? defaultWeightsPath(outputFile) : weightsOut;
  if (!options.noWeights && !options.weightsOut.empty() &&
      sameFile(options.weightsOut, outputFile)) {
    llvm::errs() << "loom-translate: the weights file '" << options.weightsOut
                 << "' would overwrite the output; give another path with "
                    "--weights-out (or another -o extension)\n";
    return 1;
  }
  if (!options.noWeights && !options.weightsOut.empty() &&
      sameFile(options.weightsOut, inputFile)) {
    llvm::errs() << "loom-translate: the weights file '" << options.weightsOut
                 << "' would overwrite the input model\n";
    return 1;
  }
  // The weights file is replaced atomically (written beside it, then
  // renamed over it): that must not replace a device such as /dev/null.
  if (!options.noWeights && !options.weightsOut.empty()) {
    llvm::sys::fs::file_status status;
    if (!llvm::sys::fs::status(options.weightsOut, status) &&
        llvm::sys::fs::exists(status) &&
        !llvm::sys::fs::is_regular_file(status)) {
      llvm::errs() << "loom-translate: --weights-out '" << options.weightsOut
                   << "' is not a regular file (to write no weights, use "
                      "--no-weights)\n";
      return 1;
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
      llvm::errs() << "loom-translate: cannot write '" << path
                   << "': directory '" << parent << "' does not exist\n";
      return 1;
    }
  }
  options.trainable = splitList(trainable);
  options.frozen = splitList(frozen);
  SmallString<256> dir(inputFile);
  llvm::sys::path::remove_filename(dir);
  options.modelDir = dir.empty() ? std::string(".") : std::string(dir);
  for (const std::string &binding : splitList(inputShapes)) {
    auto [name, dims] = StringRef(binding).split('=');
    name = name.trim();
    FailureOr<SmallVector<int64_t>> shape = mlir::loom::parseDims(dims.trim());
    if (name.empty() || !StringRef(binding).contains('=') || failed(shape) ||
        llvm::any_of(*shape, [](int64_t d) { return d < 0; })) {
      llvm::errs() << "loom-translate: invalid --input-shape '" << binding
                   << "': expected NAME=DxDx... with sizes, e.g. x=1x128\n";
      return 1;
    }
    if (options.inputShapes.count(name)) {
      llvm::errs() << "loom-translate: --input-shape binds '" << name
                   << "' twice\n";
      return 1;
    }
    options.inputShapes[name] = std::vector<int64_t>(shape->begin(),
                                                     shape->end());
  }

  OwningOpRef<ModuleOp> module = mlir::loom::importOnnx(
      input->getBuffer(), inputFile, options, &context);
  if (!module)
    return 1;
  return writeModule(*module, outputFile);
}

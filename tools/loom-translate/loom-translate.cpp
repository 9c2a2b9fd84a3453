//===- loom-translate.cpp - Translate models to and from loom IR ----------===//
//
//   loom-translate --import-onnx model.onnx -o model.mlir [options]
//   loom-translate --import-stablehlo model.stablehlo.mlir -o model.mlir
//   loom-translate --emit-cpp step.mlir -o step.cpp
//
// The translations and their options are registered by the libraries they
// belong to (include/loom/InitAllTranslations.h) with upstream's translation
// registry, the one mlirTranslateMain reads. This driver runs the chosen one
// as mlirTranslateMain does, except that it writes the output only when the
// translation succeeds: a failed import leaves an existing output file as it
// was, and the ONNX import can check its -o and --weights-out paths before
// anything is written (mlirTranslateMain opens, and truncates, -o first).
//
//===----------------------------------------------------------------------===//

#include "loom/InitAllTranslations.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
namespace cl = llvm::cl;

static int fail(const llvm::Twine &message) {
  llvm::errs() << "loom-translate: " << message << "\n";
  return 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // --help lists the translations and the options they register; the
  // options registered before (libLLVM's) and MLIR's general ones are left
  // to --help-hidden.
  llvm::StringSet<> builtinOptions;
  for (auto &entry : cl::getRegisteredOptions())
    builtinOptions.insert(entry.first);
  mlir::loom::registerAllTranslations();
  cl::OptionCategory category("loom-translate options");
  SmallVector<const cl::OptionCategory *> shown = {&category};
  // --help and --version.
  if (cl::Option *help = cl::getRegisteredOptions().lookup("help"))
    shown.append(help->Categories.begin(), help->Categories.end());
  for (auto &entry : cl::getRegisteredOptions())
    if (!builtinOptions.contains(entry.first))
      for (const cl::OptionCategory *c : entry.second->Categories)
        if (c != &cl::getGeneralCategory() && !llvm::is_contained(shown, c))
          shown.push_back(c);

  cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input file>"),
                                 cl::Required, cl::cat(category));
  cl::opt<std::string> outputFile(
      "o", cl::desc("Output file (- for stdout)"), cl::value_desc("file"),
      cl::init("-"), cl::cat(category));
  cl::list<const Translation *, bool, TranslationParser> translations(
      "", cl::desc("Translation to perform"), cl::cat(category));
  // The options mlirTranslateMain offers (--mlir-*, --no-implicit-module).
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerTranslationCLOptions();
  for (auto &entry : cl::getRegisteredOptions())
    if (llvm::none_of(entry.second->Categories,
                      [&](const cl::OptionCategory *c) {
                        return llvm::is_contained(shown, c);
                      }))
      entry.second->setHiddenFlag(cl::Hidden);
  cl::ParseCommandLineOptions(
      argc, argv,
      "loom-translate: translate models to and from the loom dialect\n\n"
      "  loom-translate --import-onnx model.onnx -o model.mlir\n"
      "      writes model.mlir and model.safetensors (the weights)\n"
      "  loom-translate --import-stablehlo jax.mlir --arg-names=w,b,x \\\n"
      "      --trainable=w,b -o model.mlir\n"
      "  loom-translate --emit-cpp step.mlir -o step.cpp\n"
      "      prints a lowered, planned step as C++ for lib/Runtime\n");

  if (translations.size() != 1)
    return fail("choose one of --import-onnx, --import-stablehlo and "
                "--emit-cpp");
  const Translation &translation = *translations.front();

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      translation.getInputAlignment()
          ? openInputFile(inputFile, *translation.getInputAlignment(),
                          &errorMessage)
          : openInputFile(inputFile, &errorMessage);
  if (!input)
    return fail(errorMessage);

  std::string text;
  {
    MLIRContext context;
    auto sourceMgr = std::make_shared<llvm::SourceMgr>();
    sourceMgr->AddNewSourceBuffer(std::move(input), llvm::SMLoc());
    SourceMgrDiagnosticHandler diagHandler(*sourceMgr, &context);
    llvm::raw_string_ostream os(text);
    if (failed(translation(sourceMgr, os, &context)))
      return 1; // The translation reported why.
  }

  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFile, &errorMessage);
  if (!output)
    return fail(errorMessage);
  output->os() << text;
  output->keep();
  return 0;
}

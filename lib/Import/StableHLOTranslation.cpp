//===- StableHLOTranslation.cpp - The import-stablehlo translation --------===//
//
//   loom-translate --import-stablehlo model.stablehlo.mlir -o model.mlir
//       [--arg-names LIST] [--trainable LIST]
//
// StableHLO functions carry no names or notion of parameters: --arg-names
// names the entry function's arguments (`loom.name`) and --trainable marks
// the ones to train (`loom.param`).
//
//===----------------------------------------------------------------------===//

#include "loom/Import/StableHLO.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Import/NamePatterns.h"
#include "loom/Import/TranslateOptions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Tools/mlir-translate/Translation.h"

using namespace mlir;
using namespace mlir::loom;
namespace cl = llvm::cl;

namespace {

/// The options of import-stablehlo (--trainable is shared with import-onnx).
struct StableHLOTranslateOptions {
  cl::OptionCategory category{"import-stablehlo options"};
  cl::list<std::string> argNames{
      "arg-names",
      cl::desc("StableHLO only: names of the entry function's arguments, in "
               "order (comma list); they become loom.name"),
      cl::value_desc("names"), cl::cat(category)};
};

/// Names the entry function's arguments and marks the trainable ones.
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
      entry.setArgAttr(i, LoomDialect::getNameAttrName(),
                       b.getStringAttr(name));
    if (!matchesNameOrPattern(name, trainable))
      continue;
    for (auto [k, p] : llvm::enumerate(trainable))
      used[k] = used[k] || matchesNameOrPattern(name, p);
    auto type = dyn_cast<RankedTensorType>(entry.getArgumentTypes()[i]);
    if (!type || !isa<FloatType>(type.getElementType()))
      return entry.emitError() << "--trainable names argument '" << name
                               << "' of type " << entry.getArgumentTypes()[i]
                               << "; only floating-point tensors train";
    entry.setArgAttr(i, LoomDialect::getParamAttrName(), b.getUnitAttr());
  }
  for (auto [k, p] : llvm::enumerate(trainable))
    if (!used[k])
      return entry.emitError() << "--trainable '" << p
                               << "' matches no argument of @"
                               << entry.getSymName()
                               << " (names come from --arg-names, else argN)";
  return success();
}

} // namespace

void mlir::loom::registerStableHLOTranslation() {
  static StableHLOTranslateOptions options;
  (void)getTrainableOption();
  (void)getMicroBatchOption();
  (void)getDimOption();
  static TranslateToMLIRRegistration registration(
      "import-stablehlo",
      "Import StableHLO text (as jax.jit(f).lower(...).as_text() prints it)",
      [](llvm::SourceMgr &sourceMgr,
         MLIRContext *context) -> OwningOpRef<Operation *> {
        if (isOptionGiven("weights-out") || isOptionGiven("no-weights") ||
            isOptionGiven("frozen") || isOptionGiven("input-shape")) {
          reportCommandLineError(
              "--weights-out, --no-weights, --frozen and --input-shape are "
              "for --import-onnx (StableHLO text carries no weights; its "
              "dynamic batch is bound with --micro-batch)");
          return nullptr;
        }
        int64_t microBatch = getMicroBatchOption();
        if (microBatch < 0) {
          reportCommandLineError("--micro-batch must be >= 1 (or 0: the "
                                 "module's batch), got " +
                                 std::to_string(microBatch));
          return nullptr;
        }
        OwningOpRef<ModuleOp> module =
            importStableHLO(sourceMgr, context, microBatch,
                            splitCommaList(getDimOption()));
        if (!module ||
            failed(annotateArguments(*module,
                                     splitCommaList(options.argNames),
                                     splitCommaList(getTrainableOption()))))
          return nullptr;
        return OwningOpRef<Operation *>(module.release());
      },
      registerStableHLOImportDialects);
}

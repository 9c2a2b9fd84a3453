//===- StableHLO.cpp - Import StableHLO text into the loom dialect --------===//
//
// parse (Loom's stablehlo/chlo/check/sdy import dialects; parsing verifies)
//   -> name-stablehlo-dimensions (JAX's dimension variables, by name)
//   -> inline (JAX's private helpers reached through func.call)
//   -> symbol-dce (drop the helpers)
//   -> refine-stablehlo-shapes (a polymorphic export's batch and named
//      dimensions bound)
//   -> raise-stablehlo-cross-entropy (optax's spelled-out loss)
//   -> convert-stablehlo-to-loom
//   -> verify.
//
//===----------------------------------------------------------------------===//

#include "loom/Import/StableHLO.h"

#include "loom/Conversion/StableHLOToLoom/Passes.h"
#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/StableHLO/IR/ImportDialects.h"

#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::loom::registerStableHLOImportDialects(DialectRegistry &registry) {
  registry.insert<LoomDialect, func::FuncDialect, shlo::StableHLODialect,
                  shlo::chlo::CHLODialect, shlo::check::CheckDialect,
                  shlo::sdy::SdyDialect>();
  func::registerInlinerExtension(registry);
}

OwningOpRef<ModuleOp> mlir::loom::importStableHLO(llvm::SourceMgr &sourceMgr,
                                                  MLIRContext *context,
                                                  int64_t batch,
                                                  ArrayRef<std::string> dims) {
  DialectRegistry registry;
  registerStableHLOImportDialects(registry);
  context->appendDialectRegistry(registry);

  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, context);
  if (!module)
    return {};

  PassManager pm(context, ModuleOp::getOperationName());
  pm.addPass(createNameStableHLODimensions());
  pm.addPass(createInlinerPass());
  pm.addPass(createSymbolDCEPass());
  RefineStableHLOShapesOptions refine;
  refine.batch = batch;
  refine.dims = llvm::to_vector(dims);
  pm.addPass(createRefineStableHLOShapes(refine));
  pm.addPass(createRaiseStableHLOCrossEntropy());
  pm.addPass(createConvertStableHLOToLoom());
  if (failed(pm.run(*module)) || failed(verify(*module)))
    return {};
  return module;
}

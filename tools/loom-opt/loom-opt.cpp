//===- loom-opt.cpp - The mlir-opt of Loom --------------------------------===//
//
// Parses, verifies, transforms and prints IR of the loom dialect and of the
// upstream dialects Loom uses, with every Loom pass and the upstream passes
// it builds on registered (include/loom/InitAllDialects.h, InitAllPasses.h).
// The StableHLO import dialects are among them, so that
// `loom-opt --inline --symbol-dce --convert-stablehlo-to-loom` imports, and
// so is --loom-training-pipeline, exactly what loomc runs (lib/Pipelines).
//
//===----------------------------------------------------------------------===//

#include "loom/InitAllDialects.h"
#include "loom/InitAllPasses.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::loom::registerAllDialects(registry);
  mlir::loom::registerAllPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "Loom optimizer driver: runs loom and upstream passes\n",
      registry));
}

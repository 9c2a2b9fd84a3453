//===- StableHLO.h - Import StableHLO text into the loom dialect -*- C++ -*-===//

#ifndef LOOM_IMPORT_STABLEHLO_H
#define LOOM_IMPORT_STABLEHLO_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

#include <string>

namespace mlir {
namespace loom {

/// Registers the dialects the StableHLO importer parses (Loom's internal
/// `stablehlo`, `chlo` and `check` import dialects) and produces.
void registerStableHLOImportDialects(DialectRegistry &registry);

/// Parses the StableHLO module in `sourceMgr` (pretty or generic form, as
/// JAX prints it), inlines private helper functions reached through calls,
/// binds a shape-polymorphic module's dynamic dimensions (JAX's dimension
/// variables named in `dims` as NAME=N, the remaining dimensions 0 to
/// `batch`; a dynamic dimension left unbound is an error) and converts
/// every op to the loom dialect. Reports diagnostics through `context` and
/// returns null on failure.
OwningOpRef<ModuleOp> importStableHLO(llvm::SourceMgr &sourceMgr,
                                      MLIRContext *context,
                                      int64_t batch = 0,
                                      ArrayRef<std::string> dims = {});

/// Registers the `import-stablehlo` translation
/// (lib/Import/StableHLOTranslation.cpp) and its options --arg-names and
/// --trainable, which name the entry function's arguments (`loom.name`) and
/// mark the trainable ones (`loom.param`). Calling again does nothing.
void registerStableHLOTranslation();

} // namespace loom
} // namespace mlir

#endif // LOOM_IMPORT_STABLEHLO_H

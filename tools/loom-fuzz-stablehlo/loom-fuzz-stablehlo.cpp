//===- loom-fuzz-stablehlo.cpp - libFuzzer target for the StableHLO importer ===//
//
// Feeds arbitrary bytes to importStableHLO as StableHLO text (what
// `jax.jit(f).lower(..).as_text()` writes): parse with Loom's import
// dialects, inline, bind a dynamic batch (to 3, so that shape refinement
// runs on every mutant with dynamic shapes), convert to the loom dialect,
// verify. Any input must end
// in a module or in diagnostics; a crash, sanitizer report or hang is a bug.
// Built with clang's -fsanitize=fuzzer,address when clang++-22 is available
// (target loom-fuzz-stablehlo); `make fuzz` runs it longer than the test
// suite does.
//
//===----------------------------------------------------------------------===//

#include "loom/Import/StableHLO.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  // Diagnostics are the expected outcome for most inputs: swallow them.
  mlir::ScopedDiagnosticHandler quiet(&context, [](mlir::Diagnostic &) {
    return mlir::success();
  });
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size),
          "fuzz.mlir"),
      llvm::SMLoc());
  (void)mlir::loom::importStableHLO(sourceMgr, &context, /*batch=*/3);
  return 0;
}

//===- loom-fuzz-onnx.cpp - libFuzzer target for the ONNX importer --------===//
//
// Feeds arbitrary bytes to importOnnx (shapes only: nothing is read from or
// written to disk). Any input must end in a module or in diagnostics; a
// crash, sanitizer report or hang is a bug. Built with clang's
// -fsanitize=fuzzer,address when clang++-22 is available (target
// loom-fuzz-onnx); `make fuzz` runs it longer than the test suite does.
//
//===----------------------------------------------------------------------===//

#include "loom/Import/Onnx.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  // Diagnostics are the expected outcome for most inputs: swallow them.
  mlir::ScopedDiagnosticHandler quiet(&context, [](mlir::Diagnostic &) {
    return mlir::success();
  });
  mlir::loom::OnnxImportOptions options;
  options.noWeights = true;
  options.modelDir = "/nonexistent";
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  (void)mlir::loom::importOnnx(bytes, "fuzz.onnx", options, &context);
  return 0;
}

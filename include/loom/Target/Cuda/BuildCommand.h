//===- BuildCommand.h - Building an emitted CUDA step -----------*- C++ -*-===//
//
// The emitted `.cu` (EmitCuda.h) becomes OUTDIR/train in one of two ways:
//
//  - emulated (loomc --target cuda --cuda-emulate): the C++ compiler builds
//    it as host C++ (-x c++ -DLOOM_CUDA_EMULATION) against
//    LoomRuntimeCudaEmulation and the CPU runtime; runs anywhere;
//  - for a GPU: nvcc (the one CMake found) builds it with the C++ compiler
//    as host compiler (-ccbin, mpicxx by default) against LoomRuntimeCUDA,
//    cuBLAS and NCCL; available when this build found them.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TARGET_CUDA_BUILDCOMMAND_H
#define LOOM_TARGET_CUDA_BUILDCOMMAND_H

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace mlir {
namespace loom {

/// The command (program first) that builds the emitted CUDA `source` into
/// the program `output` with the C++ compiler `cxx` (emulated) or nvcc
/// with `cxx` as host compiler. Empty, with `error` saying why, when this
/// build cannot build for a GPU (no nvcc, cuBLAS or NCCL found).
std::vector<std::string> cudaBuildCommand(llvm::StringRef cxx,
                                          llvm::StringRef source,
                                          llvm::StringRef output, bool emulate,
                                          std::string &error);

/// nvcc's flags that compile (`-c`) an emitted `.cu` for a GPU: C++17, the
/// runtime's, cuBLAS's and NCCL's headers. Empty when this build found no
/// CUDA runtime (nvcc, cuBLAS, NCCL); the path of nvcc is cudaCompiler().
std::vector<std::string> cudaCompileFlags();
/// The nvcc this build found, or "".
std::string cudaCompiler();

} // namespace loom
} // namespace mlir

#endif // LOOM_TARGET_CUDA_BUILDCOMMAND_H

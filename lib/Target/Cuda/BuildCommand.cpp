//===- BuildCommand.cpp - Building an emitted CUDA step -------------------===//
//
// The paths come from CMake (lib/Target/Cuda/CMakeLists.txt):
// LOOM_CUDA_EMULATION_LIBRARY and LOOM_GEMM_LIBRARY always; when the CUDA
// backend was built, LOOM_NVCC, LOOM_CUDA_ARCHITECTURES,
// LOOM_CUDA_RUNTIME_LIBRARY and the cuBLAS and NCCL headers and libraries
// (LOOM_CUDA_INCLUDE_DIRS and LOOM_CUDA_LINK_LIBRARIES, '|'-separated).
//
//===----------------------------------------------------------------------===//

#include "loom/Target/Cuda/BuildCommand.h"
#include "loom/Target/Cpp/BuildCommand.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::loom;

std::string mlir::loom::cudaCompiler() {
#ifdef LOOM_NVCC
  return LOOM_NVCC;
#else
  return "";
#endif
}

std::vector<std::string> mlir::loom::cudaCompileFlags() {
#ifdef LOOM_NVCC
  std::vector<std::string> flags = {"-std=c++17", "-O3", "-I",
                                    LOOM_RUNTIME_INCLUDE_DIR};
  llvm::SmallVector<llvm::StringRef> dirs;
  llvm::StringRef(LOOM_CUDA_INCLUDE_DIRS).split(dirs, '|', -1, false);
  for (llvm::StringRef dir : dirs) {
    flags.push_back("-I");
    flags.push_back(dir.str());
  }
  llvm::SmallVector<llvm::StringRef> archs;
  llvm::StringRef(LOOM_CUDA_ARCHITECTURES).split(archs, '|', -1, false);
  for (llvm::StringRef arch : archs)
    flags.push_back(("-gencode=arch=compute_" + arch + ",code=sm_" + arch).str());
  return flags;
#else
  return {};
#endif
}

std::vector<std::string> mlir::loom::cudaBuildCommand(llvm::StringRef cxx,
                                                      llvm::StringRef source,
                                                      llvm::StringRef output,
                                                      bool emulate,
                                                      std::string &error) {
  if (emulate)
    return buildCommand(cxx, source, output,
                        {"-DLOOM_CUDA_EMULATION", "-x", "c++"},
                        {"-x", "none", LOOM_CUDA_EMULATION_LIBRARY});
#ifdef LOOM_NVCC
  std::vector<std::string> command = {LOOM_NVCC};
  for (std::string &flag : cudaCompileFlags())
    command.push_back(std::move(flag));
  command.push_back("-ccbin");
  command.push_back(cxx.str());
  command.push_back("-Xcompiler");
  command.push_back("-fopenmp");
  command.push_back(source.str());
  command.push_back(LOOM_CUDA_RUNTIME_LIBRARY);
  command.push_back(LOOM_RUNTIME_LIBRARY);
  command.push_back(LOOM_SUPPORT_LIBRARY);
  // Versioned sonames (the pip wheels' libcublas.so.13) are not file names
  // nvcc knows: they go to the host linker as they are, with an rpath.
  llvm::SmallVector<llvm::StringRef> libs;
  llvm::StringRef(LOOM_CUDA_LINK_LIBRARIES).split(libs, '|', -1, false);
  for (llvm::StringRef lib : libs) {
    command.push_back("-Xlinker");
    command.push_back(lib.str());
    command.push_back("-Xlinker");
    command.push_back(("-rpath," + llvm::sys::path::parent_path(lib)).str());
  }
  // The CPU runtime's GEMM library (cmake/LoomCpu.cmake).
  command.push_back("-Xlinker");
  command.push_back(LOOM_GEMM_LIBRARY);
  command.push_back("-Xlinker");
  command.push_back(
      ("-rpath," + llvm::sys::path::parent_path(LOOM_GEMM_LIBRARY)).str());
  command.push_back("-o");
  command.push_back(output.str());
  return command;
#else
  error = "this Loom was built without the CUDA backend (CMake found no "
          "nvcc, cuBLAS or NCCL; see its LoomRuntimeCUDA line), so it "
          "cannot build a GPU program; --cuda-emulate builds the same "
          "source for the CPU";
  return {};
#endif
}

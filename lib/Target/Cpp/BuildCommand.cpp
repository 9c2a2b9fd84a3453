//===- BuildCommand.cpp - Compiling an emitted step into a program --------===//
//
// The paths of this build tree's runtime come from CMake
// (lib/Target/Cpp/CMakeLists.txt): LOOM_RUNTIME_INCLUDE_DIR,
// LOOM_RUNTIME_LIBRARY, LOOM_SUPPORT_LIBRARY, LOOM_GEMM_LIBRARY and
// LOOM_CPU_FLAGS (the GEMM library and instruction set cmake/LoomCpu.cmake
// chose) and, when the build sets them (make test-asan),
// LOOM_PROGRAM_FLAGS separated by spaces.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/Cpp/BuildCommand.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

std::vector<std::string>
mlir::loom::buildCommand(llvm::StringRef cxx, llvm::StringRef source,
                         llvm::StringRef output,
                         llvm::ArrayRef<std::string> sourceFlags,
                         llvm::ArrayRef<std::string> libraries) {
  std::vector<std::string> command = {
      // -fno-trapping-math (no value changes: the program never reads the
      // floating-point exception flags) lets the selects of the kernels'
      // vm:: functions become blends, so those loops vectorise.
      cxx.str(), "-std=c++17", "-O3", "-fno-math-errno", "-fno-trapping-math",
      "-fopenmp", "-I", LOOM_RUNTIME_INCLUDE_DIR};
  // The instruction set (cmake/LoomCpu.cmake, '|'-separated): the runtime's
  // kernels were built for it too.
  llvm::SmallVector<llvm::StringRef> cpuFlags;
  llvm::StringRef(LOOM_CPU_FLAGS).split(cpuFlags, '|', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef flag : cpuFlags)
    command.push_back(flag.str());
  command.insert(command.end(), sourceFlags.begin(), sourceFlags.end());
#ifdef LOOM_PROGRAM_FLAGS
  llvm::SmallVector<llvm::StringRef> programFlags;
  llvm::StringRef(LOOM_PROGRAM_FLAGS).split(programFlags, ' ', -1,
                                           /*KeepEmpty=*/false);
  for (llvm::StringRef flag : programFlags)
    command.push_back(flag.str());
#endif
  command.push_back(source.str());
  command.insert(command.end(), libraries.begin(), libraries.end());
  command.push_back(LOOM_RUNTIME_LIBRARY);
  command.push_back(LOOM_SUPPORT_LIBRARY);
  command.push_back(LOOM_GEMM_LIBRARY);
  command.push_back(
      ("-Wl,-rpath," + llvm::sys::path::parent_path(LOOM_GEMM_LIBRARY)).str());
  command.push_back("-o");
  command.push_back(output.str());
  return command;
}

std::string mlir::loom::buildScript(llvm::ArrayRef<std::string> command,
                                    llvm::StringRef source) {
  std::string script =
      "#!/bin/sh\n# Rebuilds train from " + source.str() + ".\nexec";
  for (const std::string &arg : command)
    script += " '" + arg + "'";
  script += "\n";
  return script;
}

std::string mlir::loom::runBuildCommand(llvm::StringRef program,
                                        llvm::ArrayRef<std::string> command) {
  llvm::SmallVector<llvm::StringRef> args;
  for (const std::string &arg : command)
    args.push_back(arg);
  std::string errorMessage;
  int rc = llvm::sys::ExecuteAndWait(program, args, std::nullopt, {}, 0, 0,
                                     &errorMessage);
  if (rc == 0)
    return "";
  return errorMessage.empty() ? "exit " + std::to_string(rc) : errorMessage;
}

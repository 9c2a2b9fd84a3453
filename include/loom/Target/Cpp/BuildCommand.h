//===- BuildCommand.h - Compiling an emitted step into a program -*- C++ -*-===//
//
// The emitted translation unit (EmitCpp.h) is a program once it is
// compiled and linked against this build's runtime (lib/Runtime,
// lib/Support) and OpenBLAS, with OpenMP for its generated loops. loomc
// runs this command for OUTDIR/train and saves it as OUTDIR/build.sh.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TARGET_CPP_BUILDCOMMAND_H
#define LOOM_TARGET_CPP_BUILDCOMMAND_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace mlir {
namespace loom {

/// The command (program first) that compiles the emitted `source` with the
/// C++ compiler `cxx` into the program `output`: C++17, -O3, OpenMP, this
/// build tree's runtime headers and libraries, and OpenBLAS (the OpenMP
/// build when CMake found one, which shares OpenMP's thread pool).
/// `sourceFlags` go just before the source and `libraries` just after it
/// (before the runtime's): the emulated CUDA build (lib/Target/Cuda) adds
/// its language, define and library there.
std::vector<std::string> buildCommand(llvm::StringRef cxx,
                                      llvm::StringRef source,
                                      llvm::StringRef output,
                                      llvm::ArrayRef<std::string> sourceFlags = {},
                                      llvm::ArrayRef<std::string> libraries = {});

/// OUTDIR/build.sh: a shell script that runs `command` (each argument
/// single-quoted) to rebuild train from `source` (the file name in its
/// comment).
std::string buildScript(llvm::ArrayRef<std::string> command,
                        llvm::StringRef source = "step.cpp");

/// Runs `command` with `program` (the compiler's path, command[0] found on
/// PATH) and waits for it. Returns why it failed (the system's message, or
/// "exit N"), empty on success.
std::string runBuildCommand(llvm::StringRef program,
                            llvm::ArrayRef<std::string> command);

} // namespace loom
} // namespace mlir

#endif // LOOM_TARGET_CPP_BUILDCOMMAND_H

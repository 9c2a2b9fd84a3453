//===- AtomicFile.h - Replace a file without ever leaving it half-written -===//
//
// Weights, checkpoints and arrays are written to a temporary file beside the
// target and renamed over it, so a crash or a full disk never corrupts the
// file that was there before. Dependency-free (standard C++ only).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPPORT_ATOMICFILE_H
#define LOOM_SUPPORT_ATOMICFILE_H

#include <string>

namespace loom {

/// Writes `bytes` to `path` atomically (temp file + rename). Returns an
/// empty string on success, else the error.
std::string writeFileAtomically(const std::string &path,
                                const std::string &bytes);

} // namespace loom

#endif // LOOM_SUPPORT_ATOMICFILE_H

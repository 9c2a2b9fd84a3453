//===- AtomicFile.h - Replace a file without ever leaving it half-written -===//
//
// Weights, checkpoints and arrays are written to a temporary file beside the
// target and renamed over it, so a crash or a full disk never corrupts the
// file that was there before. Dependency-free (standard C++ only).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPPORT_ATOMICFILE_H
#define LOOM_SUPPORT_ATOMICFILE_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace loom {

/// Writes a file piece by piece (so nothing needs the whole content in
/// memory) to `path` + ".tmp-<pid>"; commit() flushes it to disk and renames
/// it over `path`. Destroyed uncommitted (an error, an early return), it
/// removes the temporary file and `path` keeps what it had.
class AtomicFileWriter {
public:
  explicit AtomicFileWriter(std::string path);
  AtomicFileWriter(const AtomicFileWriter &) = delete;
  AtomicFileWriter &operator=(const AtomicFileWriter &) = delete;
  ~AtomicFileWriter();

  /// Appends `size` bytes. After the first failure every call fails and
  /// error() says why.
  bool write(const void *data, size_t size);
  bool write(const std::string &bytes) {
    return write(bytes.data(), bytes.size());
  }

  /// Appends `size` bytes at `offset` of the file `source`, copied by the
  /// kernel (copy_file_range) where it can, else through a small buffer.
  bool copyFrom(const std::string &source, uint64_t offset, uint64_t size);

  /// Makes the file durable and visible under its path. Returns an empty
  /// string on success, else the error (the temporary file is removed).
  std::string commit();

  /// The first error, or empty.
  const std::string &error() const { return err; }

private:
  std::string path, tmp, err;
  int fd = -1;
};

/// Writes `bytes` to `path` atomically (temp file + rename). Returns an
/// empty string on success, else the error.
std::string writeFileAtomically(const std::string &path,
                                const std::string &bytes);

} // namespace loom

#endif // LOOM_SUPPORT_ATOMICFILE_H

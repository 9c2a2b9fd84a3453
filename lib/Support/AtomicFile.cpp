//===- AtomicFile.cpp - Replace a file without ever leaving it half-written ===//

#include "loom/Support/AtomicFile.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace {

std::string describe(const std::string &what) {
  return what + ": " + std::strerror(errno);
}

/// Writes all of `bytes` to `fd`, retrying short and interrupted writes.
bool writeAll(int fd, const std::string &bytes) {
  const char *data = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd, data, left);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    data += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

} // namespace

std::string loom::writeFileAtomically(const std::string &path,
                                      const std::string &bytes) {
  std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0)
    return describe("cannot open '" + tmp + "' for writing");
  // The data must be on disk before the rename makes it visible under
  // `path`: otherwise a power loss could leave `path` empty or partial.
  if (!writeAll(fd, bytes) || ::fsync(fd) != 0) {
    std::string err = describe("cannot write '" + tmp + "'");
    ::close(fd);
    std::remove(tmp.c_str());
    return err;
  }
  if (::close(fd) != 0) {
    std::string err = describe("cannot write '" + tmp + "'");
    std::remove(tmp.c_str());
    return err;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string err =
        describe("cannot rename '" + tmp + "' to '" + path + "'");
    std::remove(tmp.c_str());
    return err;
  }
  // Make the rename itself durable (best effort: some file systems refuse
  // to fsync a directory, and the file is complete either way).
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  int dirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirFd >= 0) {
    ::fsync(dirFd);
    ::close(dirFd);
  }
  return "";
}

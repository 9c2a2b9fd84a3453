//===- AtomicFile.cpp - Replace a file without ever leaving it half-written ===//

#include "loom/Support/AtomicFile.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <fcntl.h>
#include <sys/stat.h>
#include <vector>
#include <unistd.h>

using namespace loom;

static std::string describe(const std::string &what) {
  return what + ": " + std::strerror(errno);
}

AtomicFileWriter::AtomicFileWriter(std::string target)
    : path(std::move(target)),
      tmp(path + ".tmp-" + std::to_string(::getpid())) {
  fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0)
    err = describe("cannot open '" + tmp + "' for writing");
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd >= 0) {
    ::close(fd);
    std::remove(tmp.c_str());
  }
}

bool AtomicFileWriter::write(const void *data, size_t size) {
  if (!err.empty())
    return false;
  const char *p = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      err = describe("cannot write '" + tmp + "'");
      return false;
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool AtomicFileWriter::copyFrom(const std::string &source, uint64_t offset,
                                uint64_t size) {
  if (!err.empty())
    return false;
  int in = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) {
    err = describe("cannot open '" + source + "'");
    return false;
  }
  struct stat status;
  if (::fstat(in, &status) != 0 ||
      static_cast<uint64_t>(status.st_size) < offset ||
      static_cast<uint64_t>(status.st_size) - offset < size) {
    err = "'" + source + "' ends before the " + std::to_string(size) +
          " bytes at offset " + std::to_string(offset) +
          " (was it changed while being read?)";
    ::close(in);
    return false;
  }
  off_t from = static_cast<off_t>(offset);
  // The kernel copies file to file (no user-space buffer) where both file
  // systems allow it.
  while (size > 0) {
    ssize_t n = ::copy_file_range(in, &from, fd, nullptr, size, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    size -= static_cast<uint64_t>(n);
  }
  std::vector<char> buffer(size ? std::min<uint64_t>(size, 4 << 20) : 0);
  while (size > 0) {
    ssize_t n = ::pread(in, buffer.data(), std::min<uint64_t>(size, buffer.size()),
                        from);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      err = n < 0 ? describe("cannot read '" + source + "'")
                  : "'" + source + "' ended while being read";
      ::close(in);
      return false;
    }
    if (!write(buffer.data(), static_cast<size_t>(n))) {
      ::close(in);
      return false;
    }
    from += n;
    size -= static_cast<uint64_t>(n);
  }
  ::close(in);
  return true;
}

std::string AtomicFileWriter::commit() {
  if (!err.empty())
    return err;
  // The data must be on disk before the rename makes it visible under
  // `path`: otherwise a power loss could leave `path` empty or partial.
  bool synced = ::fsync(fd) == 0;
  bool closed = ::close(fd) == 0;
  fd = -1;
  if (!synced || !closed) {
    err = describe("cannot write '" + tmp + "'");
    std::remove(tmp.c_str());
    return err;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    err = describe("cannot rename '" + tmp + "' to '" + path + "'");
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

std::string loom::writeFileAtomically(const std::string &path,
                                      const std::string &bytes) {
  AtomicFileWriter file(path);
  file.write(bytes);
  return file.commit();
}

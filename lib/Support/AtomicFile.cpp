//===- AtomicFile.cpp - Replace a file without ever leaving it half-written ===//

#include "loom/Support/AtomicFile.h"

#include <cstdio>
#include <fstream>
#include <unistd.h>

std::string loom::writeFileAtomically(const std::string &path,
                                      const std::string &bytes) {
  std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream file(tmp, std::ios::binary | std::ios::trunc);
    if (!file)
      return "cannot open '" + tmp + "' for writing";
    file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    file.flush();
    if (!file) {
      std::remove(tmp.c_str());
      return "cannot write '" + tmp + "' (disk full?)";
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return "cannot rename '" + tmp + "' to '" + path + "'";
  }
  return "";
}

//===- LossLog.cpp - The step,loss CSV log --------------------------------===//

#include "RuntimeImpl.h"
#include "loom/Support/AtomicFile.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace loom {
namespace rt {

namespace {

constexpr const char *kHeader = "step,loss";

/// The step of a complete "step,loss" row, or -1.
int64_t rowStep(const std::string &line) {
  size_t comma = line.find(',');
  if (comma == std::string::npos || comma == 0 || comma + 1 == line.size())
    return -1;
  int64_t step = 0;
  for (size_t i = 0; i < comma; ++i) {
    if (line[i] < '0' || line[i] > '9' || i >= 18)
      return -1;
    step = step * 10 + (line[i] - '0');
  }
  const char *loss = line.c_str() + comma + 1;
  char *end = nullptr;
  std::strtod(loss, &end);
  if (end == loss || *end != '\0')
    return -1;
  return step;
}

} // namespace

std::string openLossLog(const std::string &path, int64_t firstStep,
                        FILE *&file) {
  file = nullptr;
  std::string kept = std::string(kHeader) + "\n";
  if (firstStep > 0) {
    std::ifstream in(path);
    if (in) {
      // Keep the rows before the resumed step, in order; stop at the first
      // row that is not complete (a run killed while writing it).
      std::string line;
      bool first = true;
      while (std::getline(in, line)) {
        if (first) {
          first = false;
          if (line != kHeader)
            return "'" + path + "' is not a loss log (its first line is '" +
                   line.substr(0, 40) + "', not '" + kHeader +
                   "'); not continuing it";
          continue;
        }
        if (in.eof())
          break; // no newline: a torn last row
        int64_t step = rowStep(line);
        if (step < 0)
          break;
        if (step < firstStep)
          kept += line + "\n";
      }
    }
  }
  // Replace the file atomically: the old log stays intact until the new
  // one (header and kept rows) is complete.
  if (std::string err = writeFileAtomically(path, kept); !err.empty())
    return "cannot write the loss log: " + err;
  file = std::fopen(path.c_str(), "a");
  if (!file)
    return "cannot open the loss log '" + path +
           "' for appending: " + std::strerror(errno);
  return "";
}

std::string appendLoss(FILE *file, const std::string &path, int64_t step,
                       float loss) {
  // %.9g round-trips every float, so a resumed run's rows compare exactly.
  if (std::fprintf(file, "%lld,%.9g\n", static_cast<long long>(step),
                   static_cast<double>(loss)) < 0 ||
      std::fflush(file) != 0)
    return "cannot write to the loss log '" + path +
           "': " + std::strerror(errno);
  return "";
}

} // namespace rt
} // namespace loom

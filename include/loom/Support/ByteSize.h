//===- ByteSize.h - Byte counts with binary suffixes ------------*- C++ -*-===//
//
// How a user spells an amount of memory on Loom's command lines
// (`loomc --device-memory 24GiB`): a non-negative number, optionally with a
// fraction, followed by one of the binary suffixes B, KiB, MiB, GiB, TiB
// (case-insensitive; none means bytes). The result is rounded down to whole
// bytes.
//
// Header-only, plain C++: the runtime (no LLVM/MLIR) may include it too.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPPORT_BYTESIZE_H
#define LOOM_SUPPORT_BYTESIZE_H

#include <cctype>
#include <cstdint>
#include <string>

namespace loom {

/// The suffixes parseByteSize accepts, for error messages.
constexpr const char *kByteSizeSuffixes = "B, KiB, MiB, GiB, TiB";

/// Parses `text` into `bytes`. Returns an empty string on success, else
/// what is wrong (without the flag's name, which the caller prepends).
inline std::string parseByteSize(const std::string &text, int64_t &bytes) {
  size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])))
    ++i;
  long double integer = 0, fraction = 0, scale = 1;
  bool digits = false;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    integer = integer * 10 + (text[i++] - '0');
    digits = true;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() &&
           std::isdigit(static_cast<unsigned char>(text[i]))) {
      scale /= 10;
      fraction += (text[i++] - '0') * scale;
      digits = true;
    }
  }
  if (!digits)
    return "expects a number of bytes with an optional suffix (" +
           std::string(kByteSizeSuffixes) + "), e.g. 24GiB, got '" + text +
           "'";
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])))
    ++i;
  std::string suffix;
  for (; i < text.size(); ++i)
    suffix += static_cast<char>(
        std::tolower(static_cast<unsigned char>(text[i])));
  while (!suffix.empty() &&
         std::isspace(static_cast<unsigned char>(suffix.back())))
    suffix.pop_back();
  long double unit;
  if (suffix.empty() || suffix == "b")
    unit = 1;
  else if (suffix == "kib")
    unit = 1024.0L;
  else if (suffix == "mib")
    unit = 1024.0L * 1024;
  else if (suffix == "gib")
    unit = 1024.0L * 1024 * 1024;
  else if (suffix == "tib")
    unit = 1024.0L * 1024 * 1024 * 1024;
  else
    return "unknown suffix '" + text.substr(text.size() - suffix.size()) +
           "' in '" + text + "'; the accepted suffixes are " +
           kByteSizeSuffixes + " (binary: 1KiB = 1024 bytes) or none (bytes)";
  long double value = (integer + fraction) * unit;
  if (value >= 9.2e18L)
    return "'" + text + "' is too large";
  bytes = static_cast<int64_t>(value);
  return "";
}

} // namespace loom

#endif // LOOM_SUPPORT_BYTESIZE_H

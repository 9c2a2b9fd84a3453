//===- NamePatterns.h - Selecting values by name or regex -------*- C++ -*-===//
//
// The importers' --trainable/--frozen lists: each entry is an exact name or a
// regular expression that must match the whole name.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_IMPORT_NAMEPATTERNS_H
#define LOOM_IMPORT_NAMEPATTERNS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Regex.h"

#include <string>

namespace mlir {
namespace loom {

/// True when `name` equals one of `patterns` or fully matches one of them
/// as a regex (invalid regexes match only by equality).
inline bool matchesNameOrPattern(StringRef name,
                                 ArrayRef<std::string> patterns) {
  for (const std::string &p : patterns) {
    if (name == p)
      return true;
    llvm::Regex re("^(" + p + ")$");
    if (re.isValid() && re.match(name))
      return true;
  }
  return false;
}

} // namespace loom
} // namespace mlir

#endif // LOOM_IMPORT_NAMEPATTERNS_H

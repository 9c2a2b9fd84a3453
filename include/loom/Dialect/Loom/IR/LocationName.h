//===- LocationName.h - The model's name of an op ---------------*- C++ -*-===//
//
// Importers give each op the name of the node it comes from (an ONNX node's,
// a StableHLO op's) as a NameLoc. Diagnostics, reports and the kernel names
// of `--trace` timelines show it.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_LOCATIONNAME_H
#define LOOM_DIALECT_LOOM_IR_LOCATIONNAME_H

#include "mlir/IR/Location.h"

namespace mlir {
namespace loom {

/// The first name in `loc` (through fused and call-site locations), or "".
inline StringRef getLocationName(Location loc) {
  if (auto named = dyn_cast<NameLoc>(loc))
    return named.getName().getValue();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (StringRef name = getLocationName(inner); !name.empty())
        return name;
  if (auto site = dyn_cast<CallSiteLoc>(loc))
    return getLocationName(site.getCallee());
  return "";
}

} // namespace loom
} // namespace mlir

#endif // LOOM_DIALECT_LOOM_IR_LOCATIONNAME_H

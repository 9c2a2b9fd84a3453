//===- MarkLayers.cpp - Find the repeated layers of a forward graph -------===//
//
// Implements -loom-mark-layers (see Passes.td for the contract): marks each
// op of the forward function that belongs to a layer (a transformer block)
// with `loom.layer = i`. The marks travel with the ops through autodiff and
// the pipeline passes, so loom-recompute knows the layers of every gradient
// function, pipeline stage and micro-batch.
//
//===----------------------------------------------------------------------===//

#include "Activations.h"
#include "TargetFunction.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <string>
#include <vector>

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_LOOMMARKLAYERS
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;

namespace {

constexpr StringLiteral kPass = "loom-mark-layers";

/// The layer index of every op of `forward` inside a layer (-1 outside).
std::vector<int64_t> findLayers(ArrayRef<Operation *> forward,
                                const llvm::DenseSet<Value> &activations) {
  int64_t n = static_cast<int64_t>(forward.size());
  std::vector<int64_t> layerOf(n, -1);
  DenseMap<Operation *, int64_t> index;
  for (int64_t i = 0; i < n; ++i)
    index[forward[i]] = i;

  // count[g]: the activations crossing gap g (right before op g): defined
  // by an op before it and read by one at or after it.
  std::vector<int64_t> count(n + 1, 0);
  for (int64_t i = 0; i < n; ++i)
    for (Value result : forward[i]->getResults()) {
      if (!activations.contains(result))
        continue;
      int64_t last = -1;
      for (Operation *user : result.getUsers())
        if (auto it = index.find(user); it != index.end())
          last = std::max(last, it->second);
      if (last <= i)
        continue;
      ++count[i + 1];
      --count[last + 1];
    }
  int64_t running = 0, least = 0;
  for (int64_t g = 0; g <= n; ++g) {
    running += count[g];
    count[g] = running;
    if (running > 0 && (least == 0 || running < least))
      least = running;
  }
  if (least == 0)
    return layerOf;

  // Segments start at the gaps the fewest activations cross; each holds at
  // least one op computing an activation, and its signature is the names of
  // those ops (masks and index arithmetic neither start nor sign one).
  auto computesActivation = [&](Operation *op) {
    return op->getNumResults() > 0 && activations.contains(op->getResult(0));
  };
  SmallVector<int64_t> starts{0};
  bool hasActivation = false;
  for (int64_t g = 1; g < n; ++g) {
    hasActivation = hasActivation || computesActivation(forward[g - 1]);
    if (count[g] == least && hasActivation) {
      starts.push_back(g);
      hasActivation = false;
    }
  }
  int64_t segments = static_cast<int64_t>(starts.size());
  auto segmentEnd = [&](int64_t s) {
    return s + 1 < segments ? starts[s + 1] : n;
  };
  SmallVector<std::string> signature;
  for (int64_t s = 0; s < segments; ++s) {
    std::string text;
    for (int64_t g = starts[s]; g < segmentEnd(s); ++g)
      if (computesActivation(forward[g]))
        text += forward[g]->getName().getStringRef().str() + ";";
    signature.push_back(std::move(text));
  }

  // The smallest period p with a run of at least p segments equal to the
  // segment p later: each such run plus its last period is a stack of
  // layers of p segments. Without any, the segments between the first and
  // the last are one layer.
  SmallVector<int64_t> layerOfSegment(segments, -1);
  int64_t next = 0;
  for (int64_t p = 1; p <= segments / 2 && next == 0; ++p)
    for (int64_t s = 0; s + p < segments;) {
      int64_t e = s;
      while (e + p < segments && signature[e] == signature[e + p])
        ++e;
      if (e - s >= p) {
        for (int64_t k = s; k < e + p; ++k)
          layerOfSegment[k] = next + (k - s) / p;
        next += (e + p - s) / p;
        s = e + p;
      } else {
        s = std::max(e, s + 1);
      }
    }
  if (next == 0 && segments >= 3)
    for (int64_t s = 1; s + 1 < segments; ++s)
      layerOfSegment[s] = 0;
  for (int64_t s = 0; s < segments; ++s)
    for (int64_t g = starts[s]; g < segmentEnd(s); ++g)
      layerOf[g] = layerOfSegment[s];
  return layerOf;
}

struct LoomMarkLayersPass
    : public mlir::loom::impl::LoomMarkLayersBase<LoomMarkLayersPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<func::FuncOp> found =
        findFunctionWithBody(module, function, kPass);
    if (failed(found))
      return signalPassFailure();
    func::FuncOp func = *found;
    if (!func.getBody().hasOneBlock()) {
      func.emitError() << kPass << ": expects a single-block function";
      return signalPassFailure();
    }
    llvm::DenseSet<Value> activations = findActivations(func);
    SmallVector<Operation *> forward;
    for (Operation &op : func.getBody().front())
      if (!op.hasTrait<::mlir::OpTrait::IsTerminator>())
        forward.push_back(&op);
    std::vector<int64_t> layerOf = findLayers(forward, activations);
    Builder b(func.getContext());
    LoomDialect::LayerAttrHelper layer(func.getContext());
    for (size_t i = 0; i < forward.size(); ++i) {
      if (layerOf[i] >= 0)
        layer.setAttr(forward[i], b.getI64IntegerAttr(layerOf[i]));
      else
        layer.removeAttr(forward[i]);
    }
  }
};

} // namespace

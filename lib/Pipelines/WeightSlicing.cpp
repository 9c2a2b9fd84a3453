//===- WeightSlicing.cpp - Per-rank weights of a tensor-parallel step -----===//
//
// The cut of each parameter (its loom.shard) and the per-rank safetensors
// files loomc writes for tensor-parallel programs.
//
//===----------------------------------------------------------------------===//

#include "loom/Pipelines/WeightSlicing.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Support/Safetensors.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::loom;

FailureOr<std::map<std::string, ParameterShard>>
mlir::loom::collectParameterShards(func::FuncOp step) {
  std::map<std::string, ParameterShard> shards;
  for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i) {
    auto shard =
        step.getArgAttrOfType<ShardAttr>(i, LoomDialect::getShardAttrName());
    if (!shard)
      continue;
    auto name = step.getArgAttrOfType<StringAttr>(
        i, LoomDialect::getNameAttrName());
    Type type = step.getArgument(i).getType();
    auto error = [&]() {
      return step.emitError() << "argument #" << i << ": ";
    };
    // The dialect verifies the attribute against the argument; a static
    // shape and a name are what the weight file needs.
    if (failed(shard.verifyArgumentType(type, error)))
      return failure();
    auto shaped = cast<ShapedType>(type);
    if (!name || !shaped.hasStaticShape()) {
      InFlightDiagnostic diag = error();
      diag << "a tensor-parallel parameter ("
           << LoomDialect::getShardAttrName() << ") needs a "
           << LoomDialect::getNameAttrName()
           << " and a static shape to be sliced from the weights file, got "
           << type;
      if (!name)
        diag << " without " << LoomDialect::getNameAttrName();
      return failure();
    }
    ParameterShard spec;
    spec.dim = shard.getDim();
    spec.parts = shard.getParts();
    spec.groups = shard.getGroups();
    spec.padded = shard.getPadded();
    spec.name = name.getValue().str();
    spec.local.assign(shaped.getShape().begin(), shaped.getShape().end());
    shards[spec.name] = spec;
  }
  return shards;
}

std::string mlir::loom::writeRankWeights(
    const std::string &full, int64_t tp,
    const std::vector<ParameterShard> &parameters,
    llvm::function_ref<std::string(StringRef)> path) {
  std::map<std::string, ParameterShard> shards;
  for (const ParameterShard &p : parameters)
    shards[p.name] = p;
  namespace st = ::loom::safetensors;
  std::vector<st::Tensor> tensors;
  std::map<std::string, std::string> metadata;
  if (std::string e = st::readFile(full, tensors, metadata); !e.empty())
    return "cannot read '" + full + "': " + e;
  for (const auto &[name, shard] : shards) {
    auto it = llvm::find_if(tensors,
                            [&](const st::Tensor &t) { return t.name == name; });
    if (it == tensors.end())
      return "the weights file '" + full + "' has no tensor '" + name +
             "' (a tensor-parallel parameter)";
    SmallVector<int64_t> expected(shard.local.begin(), shard.local.end());
    expected[shard.dim] *= shard.parts;
    // A padded dimension: the file holds the unpadded tensor (fewer than
    // `parts` rows short of `padded`).
    if (shard.padded && it->shape.size() == expected.size() &&
        static_cast<size_t>(shard.dim) < it->shape.size() &&
        it->shape[shard.dim] < shard.padded &&
        it->shape[shard.dim] > shard.padded - shard.parts)
      expected[shard.dim] = it->shape[shard.dim];
    if (shard.parts != tp ||
        !llvm::equal(it->shape, expected) || st::dtypeSize(it->dtype) == 0)
      return "the weights file's tensor '" + name +
             "' does not match its tensor-parallel slice (shape [" +
             llvm::join(llvm::map_range(it->shape,
                                        [](int64_t d) { return std::to_string(d); }),
                        ", ") +
             "], " + std::to_string(shard.parts) + " parts of dimension " +
             std::to_string(shard.dim) +
             (shard.padded ? " padded to " + std::to_string(shard.padded)
                           : std::string()) +
             ")";
  }
  for (int64_t rank = 0; rank < tp; ++rank) {
    std::vector<st::Tensor> sliced;
    for (const st::Tensor &t : tensors) {
      auto found = shards.find(t.name);
      if (found == shards.end()) {
        sliced.push_back(t);
        continue;
      }
      const ParameterShard &shard = found->second;
      auto dim = static_cast<size_t>(shard.dim);
      size_t outer = 1, inner = st::dtypeSize(t.dtype);
      for (size_t i = 0; i < t.shape.size(); ++i) {
        if (i < dim)
          outer *= static_cast<size_t>(t.shape[i]);
        else if (i > dim)
          inner *= static_cast<size_t>(t.shape[i]);
      }
      // Dimension `dim` is zero-extended to `padded` rows when padded (one
      // group): a rank's part may end past the real rows.
      auto size = static_cast<size_t>(t.shape[dim]);
      auto groups = static_cast<size_t>(shard.groups);
      size_t full = shard.padded ? static_cast<size_t>(shard.padded) : size;
      size_t block = full / groups, part = block / static_cast<size_t>(tp);
      st::Tensor out{t.name, t.dtype, t.shape, {}};
      out.shape[dim] = shard.local[dim];
      out.data.reserve(outer * groups * part * inner);
      for (size_t o = 0; o < outer; ++o)
        for (size_t g = 0; g < groups; ++g) {
          size_t first = g * block + static_cast<size_t>(rank) * part;
          size_t real = first < size ? std::min(part, size - first) : 0;
          if (real > 0) {
            size_t begin = (o * size + first) * inner;
            out.data.insert(out.data.end(), t.data.begin() + begin,
                            t.data.begin() + begin + real * inner);
          }
          out.data.insert(out.data.end(), (part - real) * inner, 0);
        }
      sliced.push_back(std::move(out));
    }
    std::string name = "weights.rank" + std::to_string(rank) + ".safetensors";
    if (std::string e = st::writeFile(path(name), sliced, metadata); !e.empty())
      return "cannot write '" + path(name) + "': " + e;
  }
  return "";
}


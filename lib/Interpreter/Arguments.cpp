//===- Arguments.cpp - Binding a function's arguments to tensors ----------===//

#include "loom/Interpreter/Arguments.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Interpreter/TensorIO.h"

#include "llvm/ADT/StringMap.h"

#include <map>
#include <random>

namespace mlir {
namespace loom {
namespace interp {

std::string getArgumentName(func::FuncOp func, unsigned i) {
  if (auto name = func.getArgAttrOfType<StringAttr>(
          i, LoomDialect::getNameAttrName()))
    return name.str();
  return "arg" + std::to_string(i);
}

std::string getResultName(func::FuncOp func, unsigned i) {
  if (auto name = func.getResultAttrOfType<StringAttr>(
          i, LoomDialect::getNameAttrName()))
    return name.str();
  return "result" + std::to_string(i);
}

namespace {

std::string typeString(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

std::string npyShape(ArrayRef<int64_t> shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

/// "input 'x' (argument 0, tensor<2x3xf32>)"
std::string describe(func::FuncOp func, unsigned i) {
  bool param = func.getArgAttr(i, LoomDialect::getParamAttrName()) != nullptr;
  return std::string(param ? "parameter" : "input") + " '" +
         getArgumentName(func, i) + "' (argument " + std::to_string(i) + ", " +
         typeString(func.getArgumentTypes()[i]) + ")";
}

/// Checks a loaded tensor's shape against the argument type.
std::string checkShape(func::FuncOp func, unsigned i, RankedTensorType type,
                       const Tensor &t, const std::string &source) {
  bool ok = type.getRank() == t.rank();
  for (int64_t d = 0; ok && d < t.rank(); ++d)
    ok = type.isDynamicDim(d) || type.getDimSize(d) == t.shape[d];
  if (ok)
    return "";
  return describe(func, i) + " expects shape " + formatShape(type.getShape()) +
         ", but " + source + " has shape " + npyShape(t.shape);
}

/// The exclusive upper bound for random integers fed to `arg`: the size it
/// indexes when a gather, scatter_add or cross_entropy uses it directly.
int64_t randomIntBound(BlockArgument arg) {
  std::optional<int64_t> bound;
  for (OpOperand &use : arg.getUses()) {
    int64_t size = ShapedType::kDynamic;
    if (auto gather = dyn_cast<GatherOp>(use.getOwner())) {
      if (use.getOperandNumber() == 1)
        size = gather.getData().getType().getDimSize(
            static_cast<int64_t>(gather.getAxis()));
    } else if (auto scatter = dyn_cast<ScatterAddOp>(use.getOwner())) {
      if (use.getOperandNumber() == 1)
        size = scatter.getTarget().getType().getDimSize(
            static_cast<int64_t>(scatter.getAxis()));
    } else if (auto ce = dyn_cast<CrossEntropyOp>(use.getOwner())) {
      if (use.getOperandNumber() == 1 && ce.getLogits().getType().getRank())
        size = ce.getLogits().getType().getShape().back();
    }
    if (size != ShapedType::kDynamic && size > 0)
      bound = std::min(bound.value_or(size), size);
  }
  return bound.value_or(10);
}

std::string randomTensor(func::FuncOp func, unsigned i, RankedTensorType type,
                         ElementKind kind, std::mt19937_64 &rng, Tensor &out) {
  if (!type.hasStaticShape())
    return describe(func, i) +
           " has a dynamic shape, so --random-inputs cannot make it; give "
           "--input " +
           getArgumentName(func, i) +
           "=FILE.npy or bind its shape with loom-opt "
           "--loom-shape-inference=\"arg-shapes=...\" first";
  if (!getElementCount(type.getShape()))
    return describe(func, i) + " is too large";
  out = Tensor::zeros(kind, type.getShape());
  int64_t bound = kind == ElementKind::I1
                      ? 2
                      : randomIntBound(func.getArgument(i));
  for (int64_t e = 0; e < out.size(); ++e) {
    uint64_t r = rng();
    if (out.isFloat())
      // 24 random bits -> [0, 1) -> [-1, 1), exact in every float kind's
      // range before rounding.
      out.floats[e] = roundTo(
          kind, static_cast<double>(r >> 40) / static_cast<double>(1 << 24) *
                        2.0 -
                    1.0);
    else
      out.ints[e] = static_cast<int64_t>(r % static_cast<uint64_t>(bound));
  }
  return "";
}

} // namespace

std::string bindArguments(func::FuncOp func, const ArgumentSources &sources,
                          SmallVectorImpl<Tensor> &args) {
  unsigned numArgs = func.getNumArguments();
  // Every name an argument answers to.
  llvm::StringMap<unsigned> byName;
  for (unsigned i = 0; i < numArgs; ++i)
    byName.try_emplace("arg" + std::to_string(i), i);
  for (unsigned i = 0; i < numArgs; ++i)
    byName[getArgumentName(func, i)] = i;

  std::map<unsigned, std::string> inputFiles;
  for (const auto &[name, path] : sources.inputs) {
    auto it = byName.find(name);
    if (it == byName.end()) {
      std::string known;
      for (unsigned i = 0; i < numArgs; ++i)
        known += (i ? ", " : "") + getArgumentName(func, i);
      return "--input names '" + name + "', which is no argument of @" +
             func.getSymName().str() + " (its arguments: " +
             (known.empty() ? std::string("none") : known) + ")";
    }
    if (!inputFiles.emplace(it->second, path).second)
      return "--input gives " + describe(func, it->second) + " twice";
  }

  std::vector<::loom::safetensors::Tensor> weights;
  std::map<std::string, const ::loom::safetensors::Tensor *> weightsByName;
  if (!sources.weightsPath.empty()) {
    std::map<std::string, std::string> metadata;
    if (std::string err = ::loom::safetensors::readFile(sources.weightsPath,
                                                        weights, metadata);
        !err.empty())
      return "cannot read the weights: " + err;
    for (const auto &w : weights)
      weightsByName[w.name] = &w;
  }

  std::mt19937_64 rng(sources.randomSeed.value_or(0));
  args.clear();
  for (unsigned i = 0; i < numArgs; ++i) {
    auto type = dyn_cast<RankedTensorType>(func.getArgumentTypes()[i]);
    std::optional<ElementKind> kind =
        type ? getElementKind(type.getElementType()) : std::nullopt;
    if (!kind)
      return describe(func, i) +
             " is not a ranked tensor of f32, f16, bf16, i64, i32 or i1";
    std::string name = getArgumentName(func, i);
    bool param = func.getArgAttr(i, LoomDialect::getParamAttrName()) != nullptr;
    Tensor &arg = args.emplace_back();

    if (auto it = inputFiles.find(i); it != inputFiles.end()) {
      const std::string &path = it->second;
      ::loom::npy::Array array;
      if (std::string err = ::loom::npy::readFile(path, array); !err.empty())
        return describe(func, i) + ": " + err;
      std::optional<ElementKind> have = getNpyKind(array.dtype, *kind);
      if (!have || *have != *kind)
        return describe(func, i) + " expects element type " +
               getKindName(*kind) + ", but '" + path + "' holds " +
               ::loom::npy::dtypeName(array.dtype) + " ('" +
               ::loom::npy::descr(array.dtype) + "')";
      arg = fromNpy(array, *kind);
      if (std::string err = checkShape(func, i, type, arg, "'" + path + "'");
          !err.empty())
        return err;
      continue;
    }

    if (auto it = weightsByName.find(name); it != weightsByName.end()) {
      const ::loom::safetensors::Tensor &w = *it->second;
      std::string source =
          "tensor '" + name + "' of '" + sources.weightsPath + "'";
      std::optional<ElementKind> have = getSafetensorsKind(w.dtype);
      if (!have || *have != *kind)
        return describe(func, i) + " expects element type " +
               getKindName(*kind) + ", but " + source + " has dtype " +
               w.dtype;
      arg = fromSafetensors(w, *kind);
      if (std::string err = checkShape(func, i, type, arg, source);
          !err.empty())
        return err;
      continue;
    }

    if (sources.randomSeed) {
      if (std::string err = randomTensor(func, i, type, *kind, rng, arg);
          !err.empty())
        return err;
      continue;
    }

    if (param)
      return describe(func, i) + " has no value: " +
             (sources.weightsPath.empty()
                  ? std::string("give --weights FILE.safetensors")
                  : "'" + sources.weightsPath + "' has no tensor '" + name +
                        "'") +
             " (or --input " + name + "=FILE.npy, or --random-inputs)";
    return describe(func, i) + " has no value: give --input " + name +
           "=FILE.npy (or --random-inputs)";
  }
  return "";
}

} // namespace interp
} // namespace loom
} // namespace mlir

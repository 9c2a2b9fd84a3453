//===- Checkpoint.cpp - Weights and checkpoints (safetensors) -------------===//
//
// A checkpoint is a safetensors file holding every Param and State argument
// under its name, with metadata:
//   format      "loom-checkpoint-1"
//   model       ProgramSpec::modelName
//   fingerprint specFingerprint(): a checkpoint of another program is refused
//   step        the number of steps done (the run resumes at this step)
//   rank, world_size
//   checksum    "fnv1a64:<16 hex digits>" of the tensors' names and bytes
//               (dataChecksum): a corrupted file is refused on resume
// It is written to a temporary file and renamed (writeFileAtomically), so the
// previous checkpoints stay intact whatever happens while writing.
//
//===----------------------------------------------------------------------===//

#include "RuntimeImpl.h"
#include "loom/Runtime/BFloat16.h"
#include "loom/Support/Safetensors.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <unistd.h>

namespace loom {
namespace rt {

namespace {

constexpr const char *kFormat = "loom-checkpoint-1";

/// Writes each Shadow argument as the bf16 rounding of its param (the
/// rounding the compiled conversions use: loom::rt::bf16).
void writeShadows(const ProgramSpec &spec, void *const *args) {
  for (int32_t i = 0; i < spec.numArgs; ++i) {
    const TensorSpec &arg = spec.args[i];
    if (arg.role != Role::Shadow)
      continue;
    const auto *from = static_cast<const float *>(args[arg.shadowOf]);
    auto *to = static_cast<uint16_t *>(args[i]);
    for (int64_t k = 0, n = numElements(arg); k < n; ++k)
      to[k] = bf16::round(from[k]);
  }
}

/// Finds the tensor named like `arg` in `tensors` and checks its dtype and
/// shape; `where` names the file.
std::string findTensor(const std::vector<safetensors::Tensor> &tensors,
                       const TensorSpec &arg, const std::string &where,
                       const safetensors::Tensor *&found) {
  found = nullptr;
  for (const safetensors::Tensor &t : tensors)
    if (t.name == arg.name) {
      found = &t;
      break;
    }
  if (!found)
    return where + " has no tensor '" + arg.name + "'";
  std::string expected = std::string(safetensorsDType(arg.dtype)) + " " +
                         formatShape(arg.shape, arg.rank);
  std::string actual = found->dtype + " " + formatShape(found->shape);
  bool same = found->dtype == safetensorsDType(arg.dtype) &&
              found->shape.size() == static_cast<size_t>(arg.rank) &&
              std::equal(found->shape.begin(), found->shape.end(), arg.shape);
  if (!same)
    return where + ": tensor '" + arg.name + "' is " + actual +
           ", but the program expects " + expected;
  if (static_cast<int64_t>(found->data.size()) != numBytes(arg))
    return where + ": tensor '" + arg.name + "' has " +
           std::to_string(found->data.size()) + " bytes, expected " +
           std::to_string(numBytes(arg));
  return "";
}

/// Checks, then copies, the tensors of the arguments with the given roles.
std::string loadArguments(const std::vector<safetensors::Tensor> &tensors,
                          const ProgramSpec &spec, bool params, bool state,
                          const std::string &where, void *const *args) {
  std::vector<std::pair<int32_t, const safetensors::Tensor *>> plan;
  for (int32_t i = 0; i < spec.numArgs; ++i) {
    const TensorSpec &arg = spec.args[i];
    if (!((params && arg.role == Role::Param) ||
          (state && arg.role == Role::State)))
      continue;
    const safetensors::Tensor *t = nullptr;
    if (std::string err = findTensor(tensors, arg, where, t); !err.empty())
      return err;
    plan.emplace_back(i, t);
  }
  for (const auto &[index, tensor] : plan)
    if (!tensor->data.empty())
      std::memcpy(args[index], tensor->data.data(), tensor->data.size());
  // The weights' bf16 shadows follow every load of the weights.
  if (params)
    writeShadows(spec, args);
  return "";
}

bool parseInt(const std::string &text, int64_t &value) {
  if (text.empty() || text.size() > 18)
    return false;
  value = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return false;
    value = value * 10 + (c - '0');
  }
  return true;
}

std::string metadataValue(const std::map<std::string, std::string> &metadata,
                          const std::string &key) {
  auto it = metadata.find(key);
  return it == metadata.end() ? "" : it->second;
}

/// The step of a checkpoint file name of `rank`, or -1.
int64_t stepOfName(const std::string &name, int rank) {
  const std::string prefix = "ckpt-";
  const std::string suffix = "-rank" + std::to_string(rank) + ".safetensors";
  if (name.size() <= prefix.size() + suffix.size() ||
      name.compare(0, prefix.size(), prefix) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return -1;
  int64_t step;
  if (!parseInt(name.substr(prefix.size(),
                            name.size() - prefix.size() - suffix.size()),
                step))
    return -1;
  return step;
}

} // namespace

std::string dataChecksum(const std::vector<safetensors::Tensor> &tensors) {
  // FNV-1a (64 bit) over the tensors in name order: each name, a zero byte,
  // the dtype, a zero byte, the data.
  std::vector<const safetensors::Tensor *> order;
  for (const safetensors::Tensor &t : tensors)
    order.push_back(&t);
  std::sort(order.begin(), order.end(),
            [](const safetensors::Tensor *a, const safetensors::Tensor *b) {
              return a->name < b->name;
            });
  uint64_t hash = 1469598103934665603ull;
  auto mix = [&](const uint8_t *data, size_t size) {
    for (size_t i = 0; i < size; ++i) {
      hash ^= data[i];
      hash *= 1099511628211ull;
    }
  };
  const uint8_t zero = 0;
  for (const safetensors::Tensor *t : order) {
    mix(reinterpret_cast<const uint8_t *>(t->name.data()), t->name.size());
    mix(&zero, 1);
    mix(reinterpret_cast<const uint8_t *>(t->dtype.data()), t->dtype.size());
    mix(&zero, 1);
    mix(t->data.data(), t->data.size());
  }
  char text[32];
  std::snprintf(text, sizeof text, "fnv1a64:%016llx",
                static_cast<unsigned long long>(hash));
  return text;
}

std::string loadWeights(const std::string &path, const ProgramSpec &spec,
                        void *const *args) {
  std::vector<safetensors::Tensor> tensors;
  std::map<std::string, std::string> metadata;
  if (::access(path.c_str(), F_OK) != 0)
    return "weights file '" + path + "' does not exist (pass --weights FILE)";
  if (std::string err = safetensors::readFile(path, tensors, metadata);
      !err.empty())
    return "weights file '" + path + "': " + err;
  return loadArguments(tensors, spec, /*params=*/true, /*state=*/false,
                       "weights file '" + path + "'", args);
}

std::string checkpointPath(const std::string &dir, int64_t step, int rank) {
  char name[64];
  std::snprintf(name, sizeof(name), "ckpt-%08lld-rank%d.safetensors",
                static_cast<long long>(step), rank);
  return dir + "/" + name;
}

std::string writeCheckpoint(const std::string &path, const ProgramSpec &spec,
                            int64_t step, int rank, int worldSize,
                            const void *const *args) {
  std::vector<safetensors::Tensor> tensors;
  for (int32_t i = 0; i < spec.numArgs; ++i) {
    const TensorSpec &arg = spec.args[i];
    if (arg.role != Role::Param && arg.role != Role::State)
      continue;
    safetensors::Tensor t;
    t.name = arg.name;
    t.dtype = safetensorsDType(arg.dtype);
    t.shape.assign(arg.shape, arg.shape + arg.rank);
    const auto *bytes = static_cast<const uint8_t *>(args[i]);
    t.data.assign(bytes, bytes + numBytes(arg));
    tensors.push_back(std::move(t));
  }
  std::map<std::string, std::string> metadata = {
      {"format", kFormat},
      {"model", spec.modelName ? spec.modelName : ""},
      {"fingerprint", specFingerprint(spec)},
      {"step", std::to_string(step)},
      {"rank", std::to_string(rank)},
      {"world_size", std::to_string(worldSize)},
      {"checksum", dataChecksum(tensors)},
  };
  if (std::string err = safetensors::writeFile(path, tensors, metadata);
      !err.empty())
    return "cannot write checkpoint '" + path + "': " + err;
  return "";
}

std::string readCheckpoint(const std::string &path, const ProgramSpec &spec,
                           int rank, int worldSize, void *const *args,
                           int64_t &step) {
  std::vector<safetensors::Tensor> tensors;
  std::map<std::string, std::string> metadata;
  std::string where = "checkpoint '" + path + "'";
  if (std::string err = safetensors::readFile(path, tensors, metadata);
      !err.empty())
    return where + ": " + err;
  if (metadataValue(metadata, "format") != kFormat)
    return where + " is not a Loom checkpoint (no \"format\": \"" + kFormat +
           "\" in its metadata)";
  std::string model = metadataValue(metadata, "model");
  std::string fingerprint = metadataValue(metadata, "fingerprint");
  std::string ours = specFingerprint(spec);
  std::string ourModel = spec.modelName ? spec.modelName : "";
  if (fingerprint != ours)
    return where + " was written by another program (model '" + model +
           "', fingerprint " + fingerprint + "), not by this one (model '" +
           ourModel + "', fingerprint " + ours +
           "): its arguments, shapes or batch size differ";
  int64_t ckptRank = 0, ckptWorld = 0, ckptStep = 0;
  if (!parseInt(metadataValue(metadata, "rank"), ckptRank) ||
      !parseInt(metadataValue(metadata, "world_size"), ckptWorld) ||
      !parseInt(metadataValue(metadata, "step"), ckptStep))
    return where + " has malformed \"rank\", \"world_size\" or \"step\" "
                   "metadata";
  std::string stored = metadataValue(metadata, "checksum");
  if (stored.empty())
    return where + " has no \"checksum\" in its metadata (written by an "
                   "older Loom?); it cannot be checked, so it is not used";
  std::string actual = dataChecksum(tensors);
  if (stored != actual)
    return where + " is corrupted: its data's checksum is " + actual +
           " but it was written with " + stored +
           " (pass --resume=latest-valid to fall back to an older intact "
           "checkpoint)";
  if (ckptWorld != worldSize || ckptRank != rank)
    return where + " was written by rank " + std::to_string(ckptRank) +
           " of " + std::to_string(ckptWorld) + ", not rank " +
           std::to_string(rank) + " of " + std::to_string(worldSize);
  if (std::string err = loadArguments(tensors, spec, /*params=*/true,
                                      /*state=*/true, where, args);
      !err.empty())
    return err;
  step = ckptStep;
  return "";
}

std::string listCheckpoints(const std::string &dir, int rank,
                            std::vector<int64_t> &steps) {
  steps.clear();
  DIR *handle = ::opendir(dir.c_str());
  if (!handle) {
    if (errno == ENOENT)
      return "";
    return "cannot list checkpoint directory '" + dir +
           "': " + std::strerror(errno);
  }
  while (struct dirent *entry = ::readdir(handle)) {
    int64_t step = stepOfName(entry->d_name, rank);
    if (step >= 0)
      steps.push_back(step);
  }
  ::closedir(handle);
  std::sort(steps.begin(), steps.end());
  return "";
}

std::string pruneCheckpoints(const std::string &dir, int rank, int64_t keep) {
  std::vector<int64_t> steps;
  if (std::string err = listCheckpoints(dir, rank, steps); !err.empty())
    return err;
  for (size_t i = 0; i + static_cast<size_t>(std::max<int64_t>(keep, 0)) <
                     steps.size();
       ++i) {
    std::string path = checkpointPath(dir, steps[i], rank);
    if (std::remove(path.c_str()) != 0)
      return "cannot delete old checkpoint '" + path +
             "': " + std::strerror(errno);
  }
  return "";
}

} // namespace rt
} // namespace loom

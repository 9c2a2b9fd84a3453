//===- Spec.cpp - Checking a ProgramSpec, its fingerprint -----------------===//

#include "RuntimeImpl.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <set>

namespace loom {
namespace rt {

int64_t numElements(const TensorSpec &tensor) {
  int64_t n = 1;
  for (int32_t d = 0; d < tensor.rank; ++d)
    n *= tensor.shape[d];
  return n;
}

int64_t numBytes(const TensorSpec &tensor) {
  return numElements(tensor) * dtypeSize(tensor.dtype);
}

std::string formatShape(const int64_t *shape, int32_t rank) {
  std::string out = "[";
  for (int32_t d = 0; d < rank; ++d)
    out += (d ? ", " : "") + std::to_string(shape[d]);
  return out + "]";
}

std::string formatShape(const std::vector<int64_t> &shape) {
  return formatShape(shape.data(), static_cast<int32_t>(shape.size()));
}

const char *safetensorsDType(DType type) {
  switch (type) {
  case DType::F32:
    return "F32";
  case DType::I64:
    return "I64";
  case DType::I32:
    return "I32";
  case DType::BF16:
    return "BF16";
  }
  return "?";
}

namespace {

const char *roleName(Role role) {
  switch (role) {
  case Role::Param:
    return "param";
  case Role::State:
    return "state";
  case Role::Data:
    return "data";
  case Role::Loss:
    return "loss";
  case Role::Other:
    return "other";
  case Role::Shadow:
    return "shadow";
  }
  return "?";
}

bool validRole(Role role) {
  return static_cast<int32_t>(role) >= 0 && static_cast<int32_t>(role) <= 5;
}

/// Checks what every tensor needs: a name, a known role and dtype, a rank
/// in [0, kMaxRank], non-negative dims whose byte size fits in int64.
std::string checkTensor(const TensorSpec &t, const std::string &what) {
  if (!t.name || !*t.name)
    return what + " has no name";
  std::string named = what + " '" + t.name + "'";
  if (!validRole(t.role))
    return named + " has an unknown role " +
           std::to_string(static_cast<int32_t>(t.role));
  if (dtypeSize(t.dtype) == 0)
    return named + " has an unknown dtype " +
           std::to_string(static_cast<int32_t>(t.dtype));
  if (t.rank < 0 || t.rank > kMaxRank)
    return named + " has rank " + std::to_string(t.rank) +
           " (supported: 0 to " + std::to_string(kMaxRank) + ")";
  int64_t bytes = dtypeSize(t.dtype);
  for (int32_t d = 0; d < t.rank; ++d) {
    if (t.shape[d] < 0)
      return named + " has a negative dimension in " +
             formatShape(t.shape, t.rank);
    if (t.shape[d] && bytes > std::numeric_limits<int64_t>::max() / t.shape[d])
      return named + " of shape " + formatShape(t.shape, t.rank) +
             " is too large";
    bytes *= t.shape[d];
  }
  return "";
}

bool sameType(const TensorSpec &a, const TensorSpec &b) {
  if (a.dtype != b.dtype || a.rank != b.rank)
    return false;
  for (int32_t d = 0; d < a.rank; ++d)
    if (a.shape[d] != b.shape[d])
      return false;
  return true;
}

std::string typeString(const TensorSpec &t) {
  return std::string(dtypeName(t.dtype)) + " " + formatShape(t.shape, t.rank);
}

} // namespace

std::string validateSpec(const ProgramSpec &spec) {
  if (!spec.step)
    return "the program has no step function";
  if (spec.numArgs < 0 || spec.numResults < 0 ||
      (spec.numArgs && !spec.args) || (spec.numResults && !spec.results))
    return "the argument or result table is missing";
  if (spec.arenaBytes < 0)
    return "negative arena size " + std::to_string(spec.arenaBytes);
  if (spec.batchSize < 0)
    return "negative batch size " + std::to_string(spec.batchSize);
  if (spec.dp < 0 || spec.tp < 1 || spec.pp < 1)
    return "mesh sizes must be at least 1, dp 0 for replicated (dp=" +
           std::to_string(spec.dp) +
           ", tp=" + std::to_string(spec.tp) + ", pp=" +
           std::to_string(spec.pp) + ")";
  if (spec.stage < 0 || spec.stage >= spec.pp)
    return "stage " + std::to_string(spec.stage) +
           " is not a stage of the pipeline of pp=" + std::to_string(spec.pp);
  if (spec.dp == 0 && spec.pp != 1)
    return "a replicated program (dp=0) cannot be a pipeline stage (pp=" +
           std::to_string(spec.pp) + ")";

  std::set<std::string> names;
  for (int32_t i = 0; i < spec.numArgs; ++i) {
    const TensorSpec &a = spec.args[i];
    std::string what = "argument " + std::to_string(i);
    if (std::string err = checkTensor(a, what); !err.empty())
      return err;
    std::string named = what + " '" + a.name + "'";
    if (!names.insert(a.name).second)
      return named + ": another argument has the same name";
    if (a.role == Role::Loss || a.role == Role::Other)
      return named + " has the result role '" + roleName(a.role) + "'";
    if ((a.role == Role::Shadow) != (a.dtype == DType::BF16))
      return named + " is " + typeString(a) + " with role '" +
             roleName(a.role) + "': bfloat16 is the type of weight "
             "shadows, and only of them";
    if (a.role == Role::Shadow) {
      int32_t p = a.shadowOf;
      if (p < 0 || p >= spec.numArgs || spec.args[p].role != Role::Param ||
          spec.args[p].dtype != DType::F32 || spec.args[p].rank != a.rank ||
          !std::equal(a.shape, a.shape + a.rank, spec.args[p].shape))
        return "shadow " + named + " names argument " + std::to_string(p) +
               ", which is not a float32 param of shape " +
               formatShape(a.shape, a.rank);
    } else if (a.shadowOf != -1) {
      return named + " names a param to shadow, but is no shadow";
    }
    if (a.role == Role::Data) {
      if (a.rank < 1 || a.shape[0] != spec.batchSize)
        return "data " + named + " of shape " + formatShape(a.shape, a.rank) +
               " must have the batch size " + std::to_string(spec.batchSize) +
               " as its first dimension";
      if (std::string(a.name).find('/') != std::string::npos)
        return "data " + named + " must not contain '/' (it names a file)";
    }
  }

  int32_t lossIndex = -1;
  std::vector<int32_t> updatedBy(static_cast<size_t>(spec.numArgs), -1);
  for (int32_t j = 0; j < spec.numResults; ++j) {
    const TensorSpec &r = spec.results[j];
    std::string what = "result " + std::to_string(j);
    if (std::string err = checkTensor(r, what); !err.empty())
      return err;
    std::string named = what + " '" + r.name + "'";
    if (r.role == Role::Data)
      return named + " has the argument role 'data'";
    if (r.role == Role::Loss) {
      if (lossIndex >= 0)
        return named + " is a second loss (result " +
               std::to_string(lossIndex) + " is one)";
      if (r.dtype != DType::F32 || r.rank != 0)
        return "the loss " + named + " must be a float32 scalar, not " +
               typeString(r);
      lossIndex = j;
    }
    if (r.updates == -1) {
      if (r.inPlace)
        return named + " is written in place but updates no argument";
      continue;
    }
    if (r.updates < 0 || r.updates >= spec.numArgs)
      return named + " updates argument " + std::to_string(r.updates) +
             ", but there are " + std::to_string(spec.numArgs) + " arguments";
    const TensorSpec &a = spec.args[r.updates];
    std::string target = "argument " + std::to_string(r.updates) + " '" +
                         a.name + "'";
    if (a.role != Role::Param && a.role != Role::State &&
        a.role != Role::Shadow)
      return named + " updates " + target +
             ", which is not a param, state or shadow";
    if (!sameType(a, r))
      return named + " (" + typeString(r) + ") updates " + target + " (" +
             typeString(a) + "): they must have the same dtype and shape";
    int32_t &other = updatedBy[static_cast<size_t>(r.updates)];
    if (other >= 0)
      return named + " updates " + target + ", which result " +
             std::to_string(other) + " updates too";
    other = j;
  }
  if (lossIndex < 0)
    return "the program has no result with role loss";
  return "";
}

std::string specFingerprint(const ProgramSpec &spec) {
  // FNV-1a over a canonical text of the spec: stable across compilers and
  // runs, and readable when debugging (it is what gets hashed).
  std::string text = "loom-spec-v1;batch=" + std::to_string(spec.batchSize);
  auto add = [&](const char *kind, const TensorSpec *tensors, int32_t count) {
    for (int32_t i = 0; i < count; ++i) {
      const TensorSpec &t = tensors[i];
      // Shadows are derived from the params: a checkpoint does not hold
      // them, so a program with and one without them read the same files.
      if (t.role == Role::Shadow)
        continue;
      text += std::string(";") + kind + "=" + (t.name ? t.name : "") + ":" +
              roleName(t.role) + ":" + dtypeName(t.dtype) + ":" +
              formatShape(t.shape, t.rank) + ":" + std::to_string(t.updates);
    }
  };
  add("arg", spec.args, spec.numArgs);
  add("result", spec.results, spec.numResults);
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx",
                static_cast<unsigned long long>(hash));
  return buf;
}

} // namespace rt
} // namespace loom

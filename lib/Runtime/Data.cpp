//===- Data.cpp - Datasets from .npy files and their batches --------------===//

#include "RuntimeImpl.h"

#include <algorithm>
#include <cstring>
#include <sys/stat.h>

namespace loom {
namespace rt {

namespace {

bool npyDTypeOf(DType type, npy::DType &out) {
  switch (type) {
  case DType::F32:
    out = npy::DType::F32;
    return true;
  case DType::I64:
    out = npy::DType::I64;
    return true;
  case DType::I32:
    out = npy::DType::I32;
    return true;
  case DType::BF16: // weight shadows only, never data
    return false;
  }
  return false;
}

} // namespace

std::string loadDataset(const std::string &dir, const TensorSpec &tensor,
                        int64_t batchSize, Dataset &dataset) {
  std::string path = dir + "/" + tensor.name + ".npy";
  std::string argument = std::string("data argument '") + tensor.name + "'";
  struct stat info;
  if (::stat(path.c_str(), &info) != 0)
    return "'" + path + "' does not exist (" + argument +
           " is read from DIR/" + tensor.name + ".npy)";
  if (!S_ISREG(info.st_mode))
    return "'" + path + "' is not a regular file";

  npy::Array array;
  if (std::string err = npy::readFile(path, array); !err.empty())
    return err;

  // What the argument expects: its dtype and shape with "N >= batch" rows.
  std::string expected = std::string(dtypeName(tensor.dtype)) + " [N >= " +
                         std::to_string(batchSize);
  for (int32_t d = 1; d < tensor.rank; ++d)
    expected += ", " + std::to_string(tensor.shape[d]);
  expected += "]";
  std::string found =
      std::string(npy::dtypeName(array.dtype)) + " " + formatShape(array.shape);
  std::string mismatch = "'" + path + "' holds " + found + ", but " +
                         argument + " expects " + expected;

  npy::DType want;
  if (!npyDTypeOf(tensor.dtype, want) || array.dtype != want)
    return mismatch + " (the dtype differs)";
  if (static_cast<int32_t>(array.shape.size()) != tensor.rank)
    return mismatch + " (the rank differs)";
  for (int32_t d = 1; d < tensor.rank; ++d)
    if (array.shape[static_cast<size_t>(d)] != tensor.shape[d])
      return mismatch + " (dimension " + std::to_string(d) + " differs)";
  if (array.shape[0] < batchSize || array.shape[0] == 0)
    return mismatch + " (fewer rows than one batch)";

  dataset.path = path;
  dataset.rows = array.shape[0];
  dataset.rowBytes = static_cast<int64_t>(array.data.size()) / dataset.rows;
  dataset.array = std::move(array);
  return "";
}

void copyBatch(const Dataset &dataset, int64_t step, int64_t batchSize,
               void *dst) {
  auto *out = static_cast<uint8_t *>(dst);
  const uint8_t *rows = dataset.array.data.data();
  // Row (step * B + i) mod rows for i in [0, B): at most a few contiguous
  // runs (B may exceed rows only if the file has fewer rows than a batch,
  // which loadDataset rejects, so there are at most two).
  int64_t start = static_cast<int64_t>(
      (static_cast<unsigned __int128>(step) * static_cast<uint64_t>(batchSize)) %
      static_cast<uint64_t>(dataset.rows));
  int64_t done = 0;
  while (done < batchSize) {
    int64_t count = std::min(batchSize - done, dataset.rows - start);
    std::memcpy(out + done * dataset.rowBytes, rows + start * dataset.rowBytes,
                static_cast<size_t>(count * dataset.rowBytes));
    done += count;
    start = 0;
  }
}

} // namespace rt
} // namespace loom

//===- Safetensors.h - Reading and writing safetensors files ----*- C++ -*-===//
//
// The safetensors format (used for weights and checkpoints): an 8-byte
// little-endian header length N, N bytes of JSON mapping each tensor name to
// {"dtype", "shape", "data_offsets": [begin, end]} (plus an optional
// "__metadata__" string map), then the tensor bytes, little-endian,
// row-major. Dependency-free (standard C++ only) so that the runtime can use
// it too.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPPORT_SAFETENSORS_H
#define LOOM_SUPPORT_SAFETENSORS_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace loom {
namespace safetensors {

/// One tensor: its dtype name as safetensors spells it ("F32", "F16",
/// "BF16", "I64", "I32", "BOOL", ...), its shape and its raw bytes: in
/// `data`, or, for writing only, `size` bytes at `offset` of the file
/// `path` of `fileSlice` (weights that stay in a model file: the kernel
/// copies them, they never pass through this process's memory).
struct FileSlice {
  std::string path;
  uint64_t offset = 0, size = 0;
};

struct Tensor {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
  FileSlice fileSlice;

  /// The number of bytes written for this tensor.
  uint64_t byteSize() const {
    return fileSlice.path.empty() ? data.size() : fileSlice.size;
  }
};

/// Bytes per element of a safetensors dtype, or 0 if unknown.
size_t dtypeSize(const std::string &dtype);

/// Serialises `tensors` (in the given order, all in memory: no file
/// slices) with `metadata` into the bytes of a safetensors file.
std::string serialize(const std::vector<Tensor> &tensors,
                      const std::map<std::string, std::string> &metadata = {});

/// Writes a safetensors file atomically: to `path` + ".tmp-<pid>", then
/// renamed over `path`, so a crash never leaves a half-written file where a
/// good one was. The tensors are written one after the other from where
/// they are (never gathered into one buffer). Returns an empty string on
/// success, else the error.
std::string writeFile(const std::string &path,
                      const std::vector<Tensor> &tensors,
                      const std::map<std::string, std::string> &metadata = {});

/// Parses safetensors bytes. Returns an empty string on success, else a
/// description of what is malformed.
std::string parse(const std::string &bytes, std::vector<Tensor> &tensors,
                  std::map<std::string, std::string> &metadata);

/// Reads and parses a file (see parse()).
std::string readFile(const std::string &path, std::vector<Tensor> &tensors,
                     std::map<std::string, std::string> &metadata);

} // namespace safetensors
} // namespace loom

#endif // LOOM_SUPPORT_SAFETENSORS_H

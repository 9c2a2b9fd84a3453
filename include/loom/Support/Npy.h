//===- Npy.h - Reading and writing NumPy .npy files -------------*- C++ -*-===//
//
// The .npy format (numpy.lib.format): the magic "\x93NUMPY", a major and a
// minor version byte, the header length (2 bytes little-endian in version
// 1.0, 4 bytes in 2.0 and 3.0), a header that is a Python dict literal
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and ended by a newline, then the array bytes.
//
// Loom reads and writes little-endian, C-order arrays of float32 ('<f4'),
// float16 ('<f2'), int64 ('<i8'), int32 ('<i4') and bool ('|b1'). NumPy has
// no bfloat16: ml_dtypes' bfloat16 arrays are saved as the opaque 2-byte
// type '<V2' (or '|V2'); they are read as `DType::Opaque2`, which a caller
// that expects bfloat16 takes as bfloat16, and written that way. Anything
// else (big-endian, Fortran order, other dtypes, a truncated or malformed
// file) is an error string. Dependency-free (standard C++ only).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPPORT_NPY_H
#define LOOM_SUPPORT_NPY_H

#include <cstdint>
#include <string>
#include <vector>

namespace loom {
namespace npy {

enum class DType {
  F32,     // '<f4'
  F16,     // '<f2'
  I64,     // '<i8'
  I32,     // '<i4'
  Bool,    // '|b1'
  Opaque2, // '<V2' / '|V2': ml_dtypes bfloat16
};

/// The descr string written for `dtype` ('<f4', ..., '<V2').
const char *descr(DType dtype);
/// Bytes per element.
size_t dtypeSize(DType dtype);
/// A readable name: "float32", "float16", "int64", "int32", "bool",
/// "2-byte opaque (ml_dtypes bfloat16)".
const char *dtypeName(DType dtype);

/// One array: C-order, little-endian bytes.
struct Array {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

/// Serialises `array` as a version 1.0 file (2.0 if the header needs it).
/// Returns an empty string on success, else why `array` cannot be written
/// (its data size does not match its shape).
std::string serialize(const Array &array, std::string &bytes);

/// Writes a .npy file atomically: to `path` + ".tmp-<pid>", then renamed
/// over `path`. Returns an empty string on success, else the error.
std::string writeFile(const std::string &path, const Array &array);

/// Parses the bytes of a .npy file. Returns an empty string on success, else
/// a description of what is malformed or unsupported.
std::string parse(const std::string &bytes, Array &array);

/// Reads and parses a file (see parse()); errors start with the path.
std::string readFile(const std::string &path, Array &array);

} // namespace npy
} // namespace loom

#endif // LOOM_SUPPORT_NPY_H

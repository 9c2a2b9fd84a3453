//===- Npy.cpp - Reading and writing NumPy .npy files ---------------------===//

#include "loom/Support/Npy.h"
#include "loom/Support/AtomicFile.h"

#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

namespace loom {
namespace npy {

const char *descr(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "<f4";
  case DType::F16:
    return "<f2";
  case DType::I64:
    return "<i8";
  case DType::I32:
    return "<i4";
  case DType::Bool:
    return "|b1";
  case DType::Opaque2:
    return "<V2";
  }
  return "?";
}

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::I64:
    return 8;
  case DType::F16:
  case DType::Opaque2:
    return 2;
  case DType::Bool:
    return 1;
  }
  return 0;
}

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "float32";
  case DType::F16:
    return "float16";
  case DType::I64:
    return "int64";
  case DType::I32:
    return "int32";
  case DType::Bool:
    return "bool";
  case DType::Opaque2:
    return "2-byte opaque (ml_dtypes bfloat16)";
  }
  return "?";
}

namespace {

const char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

/// Product of `shape`, or false on a negative size or overflow.
bool elementCount(const std::vector<int64_t> &shape, uint64_t &count) {
  count = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return false;
    if (d != 0 && count > std::numeric_limits<uint64_t>::max() /
                              static_cast<uint64_t>(d))
      return false;
    count *= static_cast<uint64_t>(d);
  }
  return true;
}

/// The dtype of a descr string; false (with `error`) when Loom does not read
/// it.
bool parseDescr(const std::string &text, DType &dtype, std::string &error) {
  static const struct {
    const char *descr;
    DType dtype;
  } known[] = {{"<f4", DType::F32},  {"<f2", DType::F16},
               {"<i8", DType::I64},  {"<i4", DType::I32},
               {"|b1", DType::Bool}, {"<V2", DType::Opaque2},
               {"|V2", DType::Opaque2}};
  for (const auto &k : known) {
    if (text == k.descr) {
      dtype = k.dtype;
      return true;
    }
  }
  if (!text.empty() && text[0] == '>')
    error = "dtype '" + text +
            "' is big-endian; save the array little-endian "
            "(array.astype(array.dtype.newbyteorder('<')))";
  else
    error = "dtype '" + text +
            "' is not supported (supported: '<f4' float32, '<f2' float16, "
            "'<i8' int64, '<i4' int32, '|b1' bool, '<V2' ml_dtypes bfloat16)";
  return false;
}

/// A reader for the header: a Python dict literal with string keys whose
/// values are strings, True/False or tuples of integers.
class HeaderParser {
public:
  explicit HeaderParser(const std::string &text) : text(text) {}

  std::string parse(Array &array) {
    bool haveDescr = false, haveOrder = false, haveShape = false;
    skipSpace();
    if (!consume('{'))
      return fail("the header is not a Python dict");
    skipSpace();
    while (!consume('}')) {
      std::string key;
      if (!parseString(key))
        return fail("expected a quoted key");
      skipSpace();
      if (!consume(':'))
        return fail("expected ':' after '" + key + "'");
      skipSpace();
      if (key == "descr") {
        if (peek() == '[')
          return fail("structured dtypes (a list as 'descr') are not "
                      "supported");
        std::string text, error;
        if (!parseString(text))
          return fail("'descr' must be a string");
        if (!parseDescr(text, array.dtype, error))
          return error;
        haveDescr = true;
      } else if (key == "fortran_order") {
        bool fortran;
        if (!parseBool(fortran))
          return fail("'fortran_order' must be True or False");
        if (fortran)
          return "the array is in Fortran order; save it in C order "
                 "(numpy.ascontiguousarray) first";
        haveOrder = true;
      } else if (key == "shape") {
        if (std::string err = parseShape(array.shape); !err.empty())
          return err;
        haveShape = true;
      } else {
        return fail("unknown key '" + key + "'");
      }
      skipSpace();
      if (consume(','))
        skipSpace();
      else if (peek() != '}')
        return fail("expected ',' or '}'");
    }
    skipSpace();
    if (pos != text.size())
      return fail("trailing characters after the dict");
    if (!haveDescr || !haveOrder || !haveShape)
      return fail("the header needs 'descr', 'fortran_order' and 'shape'");
    return "";
  }

private:
  std::string fail(const std::string &what) {
    return "malformed .npy header at character " + std::to_string(pos) +
           ": " + what;
  }

  char peek() const { return pos < text.size() ? text[pos] : '\0'; }

  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\n' ||
                                 text[pos] == '\t' || text[pos] == '\r'))
      ++pos;
  }

  bool consume(char c) {
    if (peek() != c || pos >= text.size())
      return false;
    ++pos;
    return true;
  }

  bool consumeWord(const char *word) {
    size_t n = std::char_traits<char>::length(word);
    if (text.compare(pos, n, word) != 0)
      return false;
    pos += n;
    return true;
  }

  /// A quoted string without escapes (which no header field uses).
  bool parseString(std::string &out) {
    char quote = peek();
    if (quote != '\'' && quote != '"')
      return false;
    ++pos;
    size_t end = text.find(quote, pos);
    if (end == std::string::npos)
      return false;
    out = text.substr(pos, end - pos);
    if (out.find('\\') != std::string::npos)
      return false;
    pos = end + 1;
    return true;
  }

  bool parseBool(bool &out) {
    if (consumeWord("True")) {
      out = true;
      return true;
    }
    if (consumeWord("False")) {
      out = false;
      return true;
    }
    return false;
  }

  std::string parseShape(std::vector<int64_t> &shape) {
    if (!consume('('))
      return fail("'shape' must be a tuple of integers");
    skipSpace();
    while (!consume(')')) {
      size_t start = pos;
      int64_t value = 0;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
        int64_t digit = text[pos] - '0';
        if (value > (std::numeric_limits<int64_t>::max() - digit) / 10)
          return fail("a dimension of 'shape' is too large");
        value = value * 10 + digit;
        ++pos;
      }
      if (pos == start)
        return fail("'shape' must be a tuple of non-negative integers");
      consume('L'); // Python 2 long literal, as old numpy wrote it.
      shape.push_back(value);
      skipSpace();
      if (consume(','))
        skipSpace();
      else if (peek() != ')')
        return fail("expected ',' or ')' in 'shape'");
    }
    return "";
  }

  const std::string &text;
  size_t pos = 0;
};

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1)
    out += ',';
  return out + ")";
}

} // namespace

std::string serialize(const Array &array, std::string &bytes) {
  uint64_t count;
  if (!elementCount(array.shape, count))
    return "the shape " + formatShape(array.shape) +
           " has a negative or too large size";
  size_t elementSize = dtypeSize(array.dtype);
  if (count > std::numeric_limits<uint64_t>::max() / elementSize ||
      count * elementSize != array.data.size())
    return "the array has " + std::to_string(array.data.size()) +
           " bytes but shape " + formatShape(array.shape) + " of " +
           dtypeName(array.dtype) + " needs " +
           std::to_string(count * elementSize);

  std::string header = std::string("{'descr': '") + descr(array.dtype) +
                       "', 'fortran_order': False, 'shape': " +
                       formatShape(array.shape) + ", }";
  // Version 1.0 has a 2-byte header length; 2.0 a 4-byte one. The data
  // starts at a multiple of 64 bytes; the header ends with a newline.
  bool version2 = header.size() + 1 + kMagicSize + 4 > 65535;
  size_t prefix = kMagicSize + 2 + (version2 ? 4 : 2);
  size_t total = prefix + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';

  bytes.clear();
  bytes.reserve(prefix + header.size() + array.data.size());
  bytes.append(kMagic, kMagicSize);
  bytes += static_cast<char>(version2 ? 2 : 1);
  bytes += '\0';
  uint64_t length = header.size();
  for (int i = 0; i < (version2 ? 4 : 2); ++i)
    bytes += static_cast<char>((length >> (8 * i)) & 0xFF);
  bytes += header;
  bytes.append(reinterpret_cast<const char *>(array.data.data()),
               array.data.size());
  return "";
}

std::string writeFile(const std::string &path, const Array &array) {
  std::string bytes;
  if (std::string err = serialize(array, bytes); !err.empty())
    return "cannot write '" + path + "': " + err;
  return writeFileAtomically(path, bytes);
}

std::string parse(const std::string &bytes, Array &array) {
  array = Array();
  if (bytes.size() < kMagicSize + 2 ||
      bytes.compare(0, kMagicSize, kMagic, kMagicSize) != 0)
    return "not a .npy file: it does not start with \"\\x93NUMPY\"";
  unsigned major = static_cast<unsigned char>(bytes[kMagicSize]);
  unsigned minor = static_cast<unsigned char>(bytes[kMagicSize + 1]);
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    return "unsupported .npy format version " + std::to_string(major) + "." +
           std::to_string(minor) + " (Loom reads 1.0, 2.0 and 3.0)";
  size_t lengthSize = major == 1 ? 2 : 4;
  size_t prefix = kMagicSize + 2 + lengthSize;
  if (bytes.size() < prefix)
    return "truncated .npy file: it ends inside the header length";
  uint64_t length = 0;
  for (size_t i = lengthSize; i-- > 0;)
    length = (length << 8) |
             static_cast<unsigned char>(bytes[kMagicSize + 2 + i]);
  if (length > bytes.size() - prefix)
    return "truncated .npy file: the header is " + std::to_string(length) +
           " bytes but the file has only " +
           std::to_string(bytes.size() - prefix) + " after the prefix";
  std::string header = bytes.substr(prefix, length);
  HeaderParser parser(header);
  if (std::string err = parser.parse(array); !err.empty())
    return err;

  uint64_t count;
  if (!elementCount(array.shape, count))
    return "the shape " + formatShape(array.shape) + " is too large";
  size_t elementSize = dtypeSize(array.dtype);
  uint64_t available = bytes.size() - prefix - length;
  if (count > std::numeric_limits<uint64_t>::max() / elementSize ||
      count * elementSize != available)
    return std::string(available < count * elementSize ? "truncated"
                                                        : "malformed") +
           " .npy file: shape " + formatShape(array.shape) + " of " +
           dtypeName(array.dtype) + " needs " +
           std::to_string(count * elementSize) + " data bytes, the file has " +
           std::to_string(available);
  const char *data = bytes.data() + prefix + length;
  array.data.assign(data, data + available);
  return "";
}

std::string readFile(const std::string &path, Array &array) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return "cannot open '" + path + "'";
  std::stringstream buffer;
  buffer << file.rdbuf();
  if (!file.good() && !file.eof())
    return "cannot read '" + path + "'";
  if (std::string err = parse(buffer.str(), array); !err.empty())
    return "'" + path + "': " + err;
  return "";
}

} // namespace npy
} // namespace loom

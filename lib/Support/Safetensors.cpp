//===- Safetensors.cpp - Reading and writing safetensors files ------------===//

#include "loom/Support/Safetensors.h"
#include "loom/Support/AtomicFile.h"

#include <cassert>
#include <cstdio>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

namespace loom {
namespace safetensors {

size_t dtypeSize(const std::string &dtype) {
  static const std::map<std::string, size_t> sizes = {
      {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8},
      {"I32", 4}, {"I16", 2}, {"I8", 1},  {"U8", 1},   {"BOOL", 1}};
  auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

namespace {

void appendJsonString(std::string &out, const std::string &s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\u%04x", c);
        out += buf;
      } else {
        out += static_cast<char>(c);
      }
    }
  }
  out += '"';
}

/// A small JSON reader for the safetensors header: objects, arrays, strings
/// and non-negative integers, which is all the format uses.
class HeaderParser {
public:
  explicit HeaderParser(const std::string &text) : text(text) {}

  std::string parse(std::vector<Tensor> &tensors,
                    std::map<std::string, std::string> &metadata,
                    std::vector<std::pair<uint64_t, uint64_t>> &offsets) {
    skipSpace();
    if (!consume('{'))
      return fail("the header is not a JSON object");
    skipSpace();
    if (consume('}'))
      return finish();
    while (true) {
      std::string key;
      if (!parseString(key))
        return fail("expected a tensor name");
      skipSpace();
      if (!consume(':'))
        return fail("expected ':' after \"" + key + "\"");
      skipSpace();
      if (key == "__metadata__") {
        if (std::string err = parseMetadata(metadata); !err.empty())
          return err;
      } else {
        Tensor t;
        t.name = key;
        std::pair<uint64_t, uint64_t> range;
        if (std::string err = parseTensor(t, range); !err.empty())
          return err;
        tensors.push_back(std::move(t));
        offsets.push_back(range);
      }
      skipSpace();
      if (consume('}'))
        return finish();
      if (!consume(','))
        return fail("expected ',' or '}' in the header");
      skipSpace();
    }
  }

private:
  std::string finish() {
    skipSpace();
    if (pos != text.size())
      return fail("trailing characters after the header object");
    return "";
  }

  std::string fail(const std::string &what) {
    return "malformed safetensors header at byte " + std::to_string(pos) +
           ": " + what;
  }

  void skipSpace() {
    while (pos < text.size() &&
           (text[pos] == ' ' || text[pos] == '\n' || text[pos] == '\t' ||
            text[pos] == '\r'))
      ++pos;
  }

  bool consume(char c) {
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }

  bool parseString(std::string &out) {
    if (!consume('"'))
      return false;
    while (pos < text.size()) {
      char c = text[pos++];
      if (c == '"')
        return true;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos >= text.size())
        return false;
      char e = text[pos++];
      switch (e) {
      case '"':
      case '\\':
      case '/':
        out += e;
        break;
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'u': {
        if (pos + 4 > text.size())
          return false;
        unsigned code = 0;
        for (int i = 0; i < 4; ++i) {
          char h = text[pos++];
          code <<= 4;
          if (h >= '0' && h <= '9')
            code |= h - '0';
          else if (h >= 'a' && h <= 'f')
            code |= h - 'a' + 10;
          else if (h >= 'A' && h <= 'F')
            code |= h - 'A' + 10;
          else
            return false;
        }
        // Names are ASCII in practice; encode the BMP code point as UTF-8.
        if (code < 0x80) {
          out += static_cast<char>(code);
        } else if (code < 0x800) {
          out += static_cast<char>(0xC0 | (code >> 6));
          out += static_cast<char>(0x80 | (code & 0x3F));
        } else {
          out += static_cast<char>(0xE0 | (code >> 12));
          out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
          out += static_cast<char>(0x80 | (code & 0x3F));
        }
        break;
      }
      default:
        return false;
      }
    }
    return false;
  }

  bool parseUInt(uint64_t &out) {
    size_t start = pos;
    out = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      uint64_t digit = text[pos] - '0';
      if (out > (std::numeric_limits<uint64_t>::max() - digit) / 10)
        return false;
      out = out * 10 + digit;
      ++pos;
    }
    return pos > start;
  }

  std::string parseUIntArray(std::vector<uint64_t> &out) {
    if (!consume('['))
      return fail("expected '['");
    skipSpace();
    if (consume(']'))
      return "";
    while (true) {
      uint64_t v;
      if (!parseUInt(v))
        return fail("expected a non-negative integer");
      out.push_back(v);
      skipSpace();
      if (consume(']'))
        return "";
      if (!consume(','))
        return fail("expected ',' or ']'");
      skipSpace();
    }
  }

  std::string parseMetadata(std::map<std::string, std::string> &metadata) {
    if (!consume('{'))
      return fail("__metadata__ must be an object of strings");
    skipSpace();
    if (consume('}'))
      return "";
    while (true) {
      std::string key, value;
      if (!parseString(key))
        return fail("expected a metadata key");
      skipSpace();
      if (!consume(':'))
        return fail("expected ':'");
      skipSpace();
      if (!parseString(value))
        return fail("metadata values must be strings");
      metadata[key] = value;
      skipSpace();
      if (consume('}'))
        return "";
      if (!consume(','))
        return fail("expected ',' or '}'");
      skipSpace();
    }
  }

  std::string parseTensor(Tensor &t, std::pair<uint64_t, uint64_t> &range) {
    if (!consume('{'))
      return fail("tensor \"" + t.name + "\" must be an object");
    bool haveDtype = false, haveShape = false, haveOffsets = false;
    skipSpace();
    while (!consume('}')) {
      std::string key;
      if (!parseString(key))
        return fail("expected a field name in tensor \"" + t.name + "\"");
      skipSpace();
      if (!consume(':'))
        return fail("expected ':'");
      skipSpace();
      if (key == "dtype") {
        if (!parseString(t.dtype))
          return fail("dtype must be a string");
        haveDtype = true;
      } else if (key == "shape") {
        std::vector<uint64_t> dims;
        if (std::string err = parseUIntArray(dims); !err.empty())
          return err;
        for (uint64_t d : dims) {
          if (d > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
            return fail("dimension too large in tensor \"" + t.name + "\"");
          t.shape.push_back(static_cast<int64_t>(d));
        }
        haveShape = true;
      } else if (key == "data_offsets") {
        std::vector<uint64_t> offs;
        if (std::string err = parseUIntArray(offs); !err.empty())
          return err;
        if (offs.size() != 2 || offs[0] > offs[1])
          return fail("data_offsets of \"" + t.name +
                      "\" must be [begin, end] with begin <= end");
        range = {offs[0], offs[1]};
        haveOffsets = true;
      } else {
        return fail("unknown field \"" + key + "\" in tensor \"" + t.name +
                    "\"");
      }
      skipSpace();
      if (consume(','))
        skipSpace();
    }
    if (!haveDtype || !haveShape || !haveOffsets)
      return fail("tensor \"" + t.name +
                  "\" needs dtype, shape and data_offsets");
    return "";
  }

  const std::string &text;
  size_t pos = 0;
};

} // namespace

/// The 8-byte length and the JSON header of `tensors`; `dataBytes` is set to
/// the size of the data that follows.
static std::string
serializeHeader(const std::vector<Tensor> &tensors,
                const std::map<std::string, std::string> &metadata,
                uint64_t &dataBytes) {
  std::string header = "{";
  bool first = true;
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    bool firstMeta = true;
    for (const auto &[key, value] : metadata) {
      if (!firstMeta)
        header += ',';
      firstMeta = false;
      appendJsonString(header, key);
      header += ':';
      appendJsonString(header, value);
    }
    header += '}';
    first = false;
  }
  uint64_t offset = 0;
  for (const Tensor &t : tensors) {
    if (!first)
      header += ',';
    first = false;
    appendJsonString(header, t.name);
    header += ":{\"dtype\":";
    appendJsonString(header, t.dtype);
    header += ",\"shape\":[";
    for (size_t i = 0; i < t.shape.size(); ++i) {
      if (i)
        header += ',';
      header += std::to_string(t.shape[i]);
    }
    uint64_t size = t.byteSize();
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," +
              std::to_string(offset + size) + "]}";
    offset += size;
  }
  header += '}';
  // Pad with spaces so the data starts 8-byte aligned.
  while (header.size() % 8)
    header += ' ';
  dataBytes = offset;

  std::string out;
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i)
    out += static_cast<char>((n >> (8 * i)) & 0xFF);
  return out + header;
}

std::string serialize(const std::vector<Tensor> &tensors,
                      const std::map<std::string, std::string> &metadata) {
  uint64_t dataBytes = 0;
  std::string out = serializeHeader(tensors, metadata, dataBytes);
  out.reserve(out.size() + dataBytes);
  for (const Tensor &t : tensors) {
    assert(t.fileSlice.path.empty() && "serialize() writes in-memory tensors");
    out.append(reinterpret_cast<const char *>(t.data.data()), t.data.size());
  }
  return out;
}

std::string writeFile(const std::string &path,
                      const std::vector<Tensor> &tensors,
                      const std::map<std::string, std::string> &metadata) {
  uint64_t dataBytes = 0;
  AtomicFileWriter file(path);
  file.write(serializeHeader(tensors, metadata, dataBytes));
  for (const Tensor &t : tensors) {
    if (t.fileSlice.path.empty())
      file.write(t.data.data(), t.data.size());
    else
      file.copyFrom(t.fileSlice.path, t.fileSlice.offset, t.fileSlice.size);
  }
  return file.commit();
}

std::string parse(const std::string &bytes, std::vector<Tensor> &tensors,
                  std::map<std::string, std::string> &metadata) {
  if (bytes.size() < 8)
    return "not a safetensors file: shorter than its 8-byte header length";
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  if (n > bytes.size() - 8)
    return "not a safetensors file: header length " + std::to_string(n) +
           " exceeds the file size " + std::to_string(bytes.size());
  std::string header = bytes.substr(8, n);
  std::vector<std::pair<uint64_t, uint64_t>> offsets;
  HeaderParser parser(header);
  if (std::string err = parser.parse(tensors, metadata, offsets); !err.empty())
    return err;
  uint64_t dataSize = bytes.size() - 8 - n;
  std::set<std::string> names;
  for (size_t i = 0; i < tensors.size(); ++i) {
    Tensor &t = tensors[i];
    if (!names.insert(t.name).second)
      return "tensor \"" + t.name + "\" appears twice";
    size_t elementSize = dtypeSize(t.dtype);
    if (!elementSize)
      return "tensor \"" + t.name + "\" has unknown dtype \"" + t.dtype + "\"";
    uint64_t count = 1;
    for (int64_t d : t.shape) {
      if (d != 0 && count > std::numeric_limits<uint64_t>::max() /
                                static_cast<uint64_t>(d))
        return "tensor \"" + t.name + "\" is too large";
      count *= static_cast<uint64_t>(d);
    }
    auto [begin, end] = offsets[i];
    if (end > dataSize)
      return "tensor \"" + t.name + "\" data_offsets [" +
             std::to_string(begin) + ", " + std::to_string(end) +
             "] run past the end of the file (" + std::to_string(dataSize) +
             " data bytes)";
    if (count > std::numeric_limits<uint64_t>::max() / elementSize ||
        end - begin != count * elementSize)
      return "tensor \"" + t.name + "\" has " + std::to_string(end - begin) +
             " bytes but its shape and dtype need " +
             std::to_string(count * elementSize);
    const char *data = bytes.data() + 8 + n + begin;
    t.data.assign(data, data + (end - begin));
  }
  return "";
}

std::string readFile(const std::string &path, std::vector<Tensor> &tensors,
                     std::map<std::string, std::string> &metadata) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return "cannot open '" + path + "'";
  std::stringstream buffer;
  buffer << file.rdbuf();
  if (std::string err = parse(buffer.str(), tensors, metadata); !err.empty())
    return "'" + path + "': " + err;
  return "";
}

} // namespace safetensors
} // namespace loom

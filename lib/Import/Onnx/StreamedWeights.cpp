//===- StreamedWeights.cpp - Keep large weights out of the parsed model ---===//
//
// Parsing a ModelProto copies every initializer's raw_data into the message,
// so a 500 MB model would sit in memory twice (the file and the message) and
// a third time in the weights written to safetensors. Instead, the model's
// protobuf wire format is walked first (ModelProto.graph = 7,
// GraphProto.initializer = 5, TensorProto.raw_data = 9): the large raw_data
// payloads are cut out of a copy of the bytes, which is what gets parsed,
// and the importer reads them, and writes them to the weights file, straight
// from the model's own bytes (memory-mapped by the drivers).
//
// Anything the walk does not understand (bytes that are not well-formed
// wire format, deprecated groups, a tensor with raw_data twice) leaves the
// model as it is: the protobuf parser then decides, with its own errors.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::onnx_import;

namespace {

enum WireType : uint8_t { Varint = 0, Fixed64 = 1, Bytes = 2, Fixed32 = 5 };

/// One field of a message: its number, wire type, all its bytes (tag
/// included) and, for length-delimited fields, the payload.
struct Field {
  uint64_t number = 0;
  uint8_t wireType = 0;
  StringRef whole, payload;
};

/// Reads the fields of one message in order; fails on malformed bytes.
class FieldReader {
public:
  explicit FieldReader(StringRef bytes) : bytes(bytes) {}

  /// The next field; nullopt at the end. Sets `malformed` instead when the
  /// bytes are not well-formed.
  std::optional<Field> next() {
    if (pos == bytes.size())
      return std::nullopt;
    size_t start = pos;
    uint64_t tag;
    if (!varint(tag))
      return fail();
    Field f;
    f.number = tag >> 3;
    f.wireType = tag & 7;
    if (f.number == 0)
      return fail();
    switch (f.wireType) {
    case Varint: {
      uint64_t ignored;
      if (!varint(ignored))
        return fail();
      break;
    }
    case Fixed64:
    case Fixed32: {
      size_t n = f.wireType == Fixed64 ? 8 : 4;
      if (bytes.size() - pos < n)
        return fail();
      pos += n;
      break;
    }
    case Bytes: {
      uint64_t n;
      if (!varint(n) || n > bytes.size() - pos)
        return fail();
      f.payload = bytes.substr(pos, n);
      pos += n;
      break;
    }
    default: // groups (deprecated) and invalid wire types
      return fail();
    }
    f.whole = bytes.slice(start, pos);
    return f;
  }

  bool malformed = false;

private:
  std::optional<Field> fail() {
    malformed = true;
    return std::nullopt;
  }
  bool varint(uint64_t &v) {
    v = 0;
    for (int shift = 0; shift < 64 && pos < bytes.size(); shift += 7) {
      uint8_t byte = static_cast<uint8_t>(bytes[pos++]);
      v |= uint64_t(byte & 0x7F) << shift;
      if (!(byte & 0x80))
        return true;
    }
    return false;
  }

  StringRef bytes;
  size_t pos = 0;
};

void appendVarint(std::string &out, uint64_t v) {
  do {
    uint8_t byte = v & 0x7F;
    v >>= 7;
    out += static_cast<char>(v ? byte | 0x80 : byte);
  } while (v);
}

void appendMessageField(std::string &out, uint64_t number,
                        const std::string &payload) {
  appendVarint(out, number << 3 | Bytes);
  appendVarint(out, payload.size());
  out += payload;
}

/// Calls `fn` on each field of `message`; false when it is malformed or `fn`
/// returns false.
template <typename Fn>
bool forEachField(StringRef message, Fn fn) {
  FieldReader reader(message);
  while (std::optional<Field> f = reader.next())
    if (!fn(*f))
      return false;
  return !reader.malformed;
}

constexpr uint64_t kModelGraph = 7, kGraphInitializer = 5, kTensorRawData = 9;

class Stripper {
public:
  Stripper(StringRef model, size_t minBytes) : base(model), minBytes(minBytes) {}

  /// TensorProto: its fields without a large raw_data (recorded instead).
  bool tensor(StringRef message, std::string &out) {
    unsigned rawFields = 0;
    StringRef raw;
    if (!forEachField(message, [&](const Field &f) {
          if (f.number == kTensorRawData) {
            ++rawFields;
            raw = f.payload;
          }
          return true;
        }))
      return false;
    bool strip = rawFields == 1 && raw.size() >= minBytes &&
                 raw.data() != nullptr;
    if (strip)
      result.rawData.push_back(
          {initializerIndex, raw, uint64_t(raw.data() - base.data())});
    ++initializerIndex;
    return forEachField(message, [&](const Field &f) {
      if (!(strip && f.number == kTensorRawData))
        out += f.whole;
      return true;
    });
  }

  /// GraphProto: its fields with the initializers stripped.
  bool graph(StringRef message, std::string &out) {
    return forEachField(message, [&](const Field &f) {
      if (f.number != kGraphInitializer || f.wireType != Bytes) {
        out += f.whole;
        return true;
      }
      std::string init;
      if (!tensor(f.payload, init))
        return false;
      appendMessageField(out, kGraphInitializer, init);
      return true;
    });
  }

  /// ModelProto: its fields with the graph stripped.
  bool model(StringRef message) {
    return forEachField(message, [&](const Field &f) {
      if (f.number != kModelGraph || f.wireType != Bytes) {
        result.bytes += f.whole;
        return true;
      }
      std::string graphBytes;
      if (!graph(f.payload, graphBytes))
        return false;
      appendMessageField(result.bytes, kModelGraph, graphBytes);
      return true;
    });
  }

  StrippedModel result;

private:
  StringRef base;
  size_t minBytes;
  int initializerIndex = 0;
};

} // namespace

std::optional<StrippedModel>
onnx_import::stripInitializerData(StringRef model, size_t minBytes) {
  Stripper stripper(model, minBytes);
  if (!stripper.model(model) || stripper.result.rawData.empty())
    return std::nullopt;
  return std::move(stripper.result);
}

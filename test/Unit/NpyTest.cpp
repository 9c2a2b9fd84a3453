//===- NpyTest.cpp - The .npy reader and writer ---------------------------===//

#include "loom/Support/Npy.h"

#include "gtest/gtest.h"

using namespace loom::npy;

namespace {

Array makeArray(DType dtype, std::vector<int64_t> shape) {
  Array a;
  a.dtype = dtype;
  a.shape = shape;
  size_t count = 1;
  for (int64_t d : shape)
    count *= static_cast<size_t>(d);
  a.data.resize(count * dtypeSize(dtype));
  for (size_t i = 0; i < a.data.size(); ++i)
    a.data[i] = static_cast<uint8_t>(i * 7 + 3);
  return a;
}

/// A version `major`.0 file with `header` (padding and newline added).
std::string file(int major, std::string header, const std::string &data = "") {
  size_t lengthSize = major == 1 ? 2 : 4;
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < lengthSize; ++i)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string parseError(const std::string &bytes) {
  Array a;
  return parse(bytes, a);
}

} // namespace

TEST(NpyTest, RoundTripsEveryDTypeAndRank) {
  for (DType dtype : {DType::F32, DType::F16, DType::I64, DType::I32,
                      DType::Bool, DType::Opaque2}) {
    for (std::vector<int64_t> shape :
         {std::vector<int64_t>{}, {5}, {2, 3, 4}, {0, 3}}) {
      Array a = makeArray(dtype, shape);
      std::string bytes;
      ASSERT_EQ(serialize(a, bytes), "");
      size_t headerLength = static_cast<uint8_t>(bytes[8]) |
                            static_cast<size_t>(static_cast<uint8_t>(bytes[9]))
                                << 8;
      EXPECT_EQ((10 + headerLength) % 64, 0u) << "data is 64-byte aligned";
      EXPECT_EQ(bytes[10 + headerLength - 1], '\n');
      Array b;
      ASSERT_EQ(parse(bytes, b), "");
      EXPECT_EQ(b.dtype, a.dtype);
      EXPECT_EQ(b.shape, a.shape);
      EXPECT_EQ(b.data, a.data);
    }
  }
}

TEST(NpyTest, ReadsVersions2And3AndHeaderVariants) {
  std::string data(8, '\x01');
  for (int major : {1, 2, 3}) {
    Array a;
    ASSERT_EQ(parse(file(major, "{\"descr\": \"<i4\", \"shape\": (2,), "
                                "\"fortran_order\": False}",
                         data),
                    a),
              "")
        << major;
    EXPECT_EQ(a.dtype, DType::I32);
    EXPECT_EQ(a.shape, std::vector<int64_t>{2});
  }
  Array a;
  // Python 2 long literals, no trailing comma, '|V2' for bfloat16.
  ASSERT_EQ(parse(file(1, "{'descr': '|V2', 'fortran_order': False, "
                          "'shape': (2L, 1L)}",
                       std::string(4, '\0')),
                  a),
            "");
  EXPECT_EQ(a.dtype, DType::Opaque2);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 1}));
}

TEST(NpyTest, MalformedFilesGiveClearErrors) {
  EXPECT_NE(parseError("").find("not a .npy file"), std::string::npos);
  EXPECT_NE(parseError("PK\x03\x04 a zip").find("not a .npy file"),
            std::string::npos);
  EXPECT_NE(parseError(std::string("\x93NUMPY\x04\x00", 8)).find("version 4.0"),
            std::string::npos);
  EXPECT_NE(parseError(std::string("\x93NUMPY\x01\x00\xff", 9))
                .find("ends inside the header length"),
            std::string::npos);
  EXPECT_NE(parseError(std::string("\x93NUMPY\x01\x00\x50\x00{", 11))
                .find("truncated .npy file"),
            std::string::npos);
  const std::string good = "'fortran_order': False, 'shape': (2,)}";
  EXPECT_NE(parseError(file(1, "{'descr': '<f4', " + good, "1234"))
                .find("needs 8 data bytes, the file has 4"),
            std::string::npos);
  EXPECT_NE(parseError(file(1, "{'descr': '<f4', " + good, "123456789"))
                .find("malformed .npy file"),
            std::string::npos);
  EXPECT_NE(parseError(file(1, "{'descr': '<f8', " + good))
                .find("'<f8' is not supported"),
            std::string::npos);
  EXPECT_NE(parseError(file(1, "{'descr': '>i4', " + good)).find("big-endian"),
            std::string::npos);
  EXPECT_NE(parseError(file(1, "{'descr': [('a', '<f4')], " + good))
                .find("structured dtypes"),
            std::string::npos);
  EXPECT_NE(parseError(file(1, "{'descr': '<f4', 'fortran_order': True, "
                               "'shape': (2,)}"))
                .find("Fortran order"),
            std::string::npos);
  EXPECT_NE(parseError(file(1, "{'descr': '<f4', 'shape': (2,)}"))
                .find("needs 'descr', 'fortran_order' and 'shape'"),
            std::string::npos);
  EXPECT_NE(parseError(file(1, "{'descr': '<f4', 'fortran_order': False, "
                               "'shape': (-2,)}"))
                .find("non-negative integers"),
            std::string::npos);
  EXPECT_NE(parseError(file(1, "{'descr': '<f4', 'fortran_order': False, "
                               "'shape': (99999999999, 99999999999)}"))
                .find("too large"),
            std::string::npos);
  EXPECT_NE(parseError(file(1, "{'descr': '<f4', 'fortran_order': False, "
                               "'shape': (99999999999999999999,)}"))
                .find("too large"),
            std::string::npos);
  EXPECT_NE(parseError(file(1, "['descr']")).find("not a Python dict"),
            std::string::npos);
  EXPECT_NE(parseError(file(1, "{'descr': '<f4', 'extra': 1}"))
                .find("unknown key 'extra'"),
            std::string::npos);
}

TEST(NpyTest, SerializeChecksTheDataSize) {
  Array a = makeArray(DType::F32, {2, 2});
  a.data.pop_back();
  std::string bytes;
  EXPECT_NE(serialize(a, bytes).find("needs 16"), std::string::npos);
}

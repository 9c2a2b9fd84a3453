//===- RuntimeTrainTest.cpp - Data, weights, checkpoints, log, arena ------===//
//
// The pieces of trainMain() one by one, with the exact error messages a
// user sees. The whole loop runs in test/python/test_runtime_train.py.
//
//===----------------------------------------------------------------------===//

#include "RuntimeImpl.h"
#include "loom/Support/Npy.h"
#include "loom/Support/Safetensors.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace loom;
using namespace loom::rt;

namespace {

/// A fresh directory under the test temp dir, removed with its files.
class TempDir {
public:
  TempDir() {
    std::string base = ::testing::TempDir();
    if (base.empty() || base.back() != '/')
      base += '/';
    char pattern[512];
    std::snprintf(pattern, sizeof(pattern), "%sloom-rt-XXXXXX", base.c_str());
    char *made = ::mkdtemp(pattern);
    EXPECT_NE(made, nullptr);
    path = made ? made : "/nonexistent";
  }
  ~TempDir() {
    int status = std::system(("rm -rf '" + path + "'").c_str());
    (void)status;
  }
  std::string file(const std::string &name) const { return path + "/" + name; }
  std::string path;
};

std::string readText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void writeText(const std::string &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

bool exists(const std::string &path) { return ::access(path.c_str(), F_OK) == 0; }

void noStep(Context &, void *const *, void *const *, char *) {}

/// A small training program: w [3, 2] and b [2] params, a step counter and
/// a momentum as state, x [4, 3] f32 and y [4] i64 data, loss and updates.
struct TestProgram {
  TensorSpec args[6] = {
      {"w", Role::Param, DType::F32, 2, {3, 2}, -1},
      {"b", Role::Param, DType::F32, 1, {2}, -1},
      {"step", Role::State, DType::F32, 0, {}, -1},
      {"momentum.w", Role::State, DType::F32, 2, {3, 2}, -1},
      {"x", Role::Data, DType::F32, 2, {4, 3}, -1},
      {"y", Role::Data, DType::I64, 1, {4}, -1},
  };
  TensorSpec results[5] = {
      {"loss", Role::Loss, DType::F32, 0, {}, -1},
      {"w.new", Role::Param, DType::F32, 2, {3, 2}, 0},
      {"b.new", Role::Param, DType::F32, 1, {2}, 1},
      {"step.new", Role::State, DType::F32, 0, {}, 2},
      {"momentum.w.new", Role::State, DType::F32, 2, {3, 2}, 3},
  };
  ProgramSpec spec{"test-model", args, 6, results, 5, 256, 128, 4, noStep};

  // Buffers for the param and state arguments (data unused here).
  std::vector<float> w = std::vector<float>(6), b = std::vector<float>(2),
                     step = std::vector<float>(1), mw = std::vector<float>(6);
  void *ptrs[6] = {w.data(), b.data(), step.data(), mw.data(), nullptr, nullptr};

  void fill(float base) {
    for (size_t i = 0; i < w.size(); ++i)
      w[i] = base + static_cast<float>(i);
    b = {base * 2, base * 3};
    step = {base};
    for (size_t i = 0; i < mw.size(); ++i)
      mw[i] = -base - static_cast<float>(i);
  }
};

//===----------------------------------------------------------------------===//
// Spec validation and fingerprint
//===----------------------------------------------------------------------===//

TEST(SpecTest, TheTestProgramIsValid) {
  TestProgram p;
  EXPECT_EQ(validateSpec(p.spec), "");
}

TEST(SpecTest, ErrorsNameTheOffendingTensor) {
  {
    TestProgram p;
    p.results[2].updates = 0; // b.new [2] updating w [3, 2]
    EXPECT_EQ(validateSpec(p.spec),
              "result 2 'b.new' (float32 [2]) updates argument 0 'w' (float32 "
              "[3, 2]): they must have the same dtype and shape");
  }
  {
    TestProgram p;
    p.results[0].inPlace = true; // the loss replaces no argument
    EXPECT_EQ(validateSpec(p.spec), "result 0 'loss' is written in place but "
                                    "updates no argument");
  }
  {
    TestProgram p;
    p.results[1].updates = 4;
    EXPECT_EQ(validateSpec(p.spec), "result 1 'w.new' updates argument 4 'x', "
                                    "which is not a param, state or shadow");
  }
  {
    TestProgram p;
    p.results[2] = p.results[1];
    EXPECT_EQ(validateSpec(p.spec),
              "result 2 'w.new' updates argument 0 'w', which result 1 updates "
              "too");
  }
  {
    TestProgram p;
    p.args[5].shape[0] = 8;
    EXPECT_EQ(validateSpec(p.spec), "data argument 5 'y' of shape [8] must have "
                                    "the batch size 4 as its first dimension");
  }
  {
    TestProgram p;
    p.args[1].name = "w";
    EXPECT_EQ(validateSpec(p.spec),
              "argument 1 'w': another argument has the same name");
  }
  {
    TestProgram p;
    p.results[0].role = Role::Other;
    EXPECT_EQ(validateSpec(p.spec), "the program has no result with role loss");
  }
  {
    TestProgram p;
    p.results[0].rank = 1;
    p.results[0].shape[0] = 4;
    EXPECT_EQ(validateSpec(p.spec),
              "the loss result 0 'loss' must be a float32 scalar, not float32 "
              "[4]");
  }
  {
    TestProgram p;
    p.args[0].rank = 9;
    EXPECT_EQ(validateSpec(p.spec),
              "argument 0 'w' has rank 9 (supported: 0 to 8)");
  }
}

TEST(SpecTest, StageMustBeOneOfThePipeline) {
  {
    TestProgram p;
    p.spec.pp = 2;
    p.spec.stage = 1;
    EXPECT_EQ(validateSpec(p.spec), "");
  }
  {
    TestProgram p;
    p.spec.pp = 2;
    p.spec.stage = 2;
    EXPECT_EQ(validateSpec(p.spec),
              "stage 2 is not a stage of the pipeline of pp=2");
  }
  {
    TestProgram p;
    p.spec.stage = -1;
    EXPECT_EQ(validateSpec(p.spec),
              "stage -1 is not a stage of the pipeline of pp=1");
  }
  {
    TestProgram p;
    p.spec.dp = 0;
    p.spec.pp = 2;
    EXPECT_EQ(validateSpec(p.spec), "a replicated program (dp=0) cannot be a "
                                    "pipeline stage (pp=2)");
  }
}

TEST(SpecTest, FingerprintChangesWithShapesNotWithTheArena) {
  TestProgram a, b, c;
  EXPECT_EQ(specFingerprint(a.spec), specFingerprint(b.spec));
  EXPECT_EQ(specFingerprint(a.spec).size(), 16u);
  b.spec.arenaBytes = 1 << 20; // a different memory plan: same checkpoint
  EXPECT_EQ(specFingerprint(a.spec), specFingerprint(b.spec));
  c.args[0].shape[1] = 3;
  c.results[1].shape[1] = 3;
  EXPECT_NE(specFingerprint(a.spec), specFingerprint(c.spec));
}

//===----------------------------------------------------------------------===//
// Data
//===----------------------------------------------------------------------===//

void writeNpy(const std::string &path, npy::DType dtype,
              std::vector<int64_t> shape) {
  npy::Array a;
  a.dtype = dtype;
  a.shape = shape;
  size_t count = 1;
  for (int64_t d : shape)
    count *= static_cast<size_t>(d);
  a.data.resize(count * npy::dtypeSize(dtype));
  for (size_t i = 0; i < a.data.size(); ++i)
    a.data[i] = static_cast<uint8_t>(i);
  ASSERT_EQ(npy::writeFile(path, a), "");
}

TEST(DataTest, LoadsAndWrapsRowsModuloTheRowCount) {
  TempDir dir;
  TestProgram p;
  // 5 rows of x (float32 [N, 3]) whose values say which row they are.
  npy::Array a;
  a.dtype = npy::DType::F32;
  a.shape = {5, 3};
  std::vector<float> values(15);
  for (int r = 0; r < 5; ++r)
    for (int c = 0; c < 3; ++c)
      values[r * 3 + c] = static_cast<float>(r * 10 + c);
  a.data.resize(60);
  std::memcpy(a.data.data(), values.data(), 60);
  ASSERT_EQ(npy::writeFile(dir.file("x.npy"), a), "");

  Dataset d;
  ASSERT_EQ(loadDataset(dir.path, p.args[4], 4, d), "");
  EXPECT_EQ(d.rows, 5);
  EXPECT_EQ(d.rowBytes, 12);
  std::vector<float> batch(12);
  auto rowsOf = [&](int64_t step) {
    copyBatch(d, step, 4, batch.data());
    std::vector<int> rows;
    for (int i = 0; i < 4; ++i)
      rows.push_back(static_cast<int>(batch[i * 3]) / 10);
    return rows;
  };
  EXPECT_EQ(rowsOf(0), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(rowsOf(1), (std::vector<int>{4, 0, 1, 2})); // rows 4..7 mod 5
  EXPECT_EQ(rowsOf(2), (std::vector<int>{3, 4, 0, 1}));
  EXPECT_EQ(rowsOf(5), (std::vector<int>{0, 1, 2, 3})); // 20 = 4 * 5
  EXPECT_EQ(rowsOf(1000000000000LL), (std::vector<int>{0, 1, 2, 3}));
}

TEST(DataTest, ErrorsNameTheFileTheExpectationAndWhatWasFound) {
  TempDir dir;
  TestProgram p;
  Dataset d;
  EXPECT_EQ(loadDataset(dir.path, p.args[4], 4, d),
            "'" + dir.file("x.npy") +
                "' does not exist (data argument 'x' is read from "
                "DIR/x.npy)");

  writeNpy(dir.file("x.npy"), npy::DType::I64, {8, 3});
  EXPECT_EQ(loadDataset(dir.path, p.args[4], 4, d),
            "'" + dir.file("x.npy") +
                "' holds int64 [8, 3], but data argument 'x' expects float32 "
                "[N >= 4, 3] (the dtype differs)");

  writeNpy(dir.file("x.npy"), npy::DType::F32, {3, 3});
  EXPECT_EQ(loadDataset(dir.path, p.args[4], 4, d),
            "'" + dir.file("x.npy") +
                "' holds float32 [3, 3], but data argument 'x' expects float32 "
                "[N >= 4, 3] (fewer rows than one batch)");

  writeNpy(dir.file("x.npy"), npy::DType::F32, {8, 2});
  EXPECT_EQ(loadDataset(dir.path, p.args[4], 4, d),
            "'" + dir.file("x.npy") +
                "' holds float32 [8, 2], but data argument 'x' expects float32 "
                "[N >= 4, 3] (dimension 1 differs)");

  writeNpy(dir.file("x.npy"), npy::DType::F32, {8});
  EXPECT_EQ(loadDataset(dir.path, p.args[4], 4, d),
            "'" + dir.file("x.npy") +
                "' holds float32 [8], but data argument 'x' expects float32 "
                "[N >= 4, 3] (the rank differs)");

  writeText(dir.file("x.npy"), "not an npy file");
  std::string err = loadDataset(dir.path, p.args[4], 4, d);
  EXPECT_EQ(err.rfind("'" + dir.file("x.npy") + "': ", 0), 0u) << err;
}

//===----------------------------------------------------------------------===//
// Weights
//===----------------------------------------------------------------------===//

safetensors::Tensor f32Tensor(const std::string &name,
                              std::vector<int64_t> shape, float value) {
  safetensors::Tensor t;
  t.name = name;
  t.dtype = "F32";
  t.shape = shape;
  size_t count = 1;
  for (int64_t d : shape)
    count *= static_cast<size_t>(d);
  std::vector<float> v(count, value);
  t.data.resize(count * 4);
  std::memcpy(t.data.data(), v.data(), t.data.size());
  return t;
}

TEST(WeightsTest, LoadsParamsAndLeavesStateAlone) {
  TempDir dir;
  TestProgram p;
  ASSERT_EQ(safetensors::writeFile(dir.file("w.safetensors"),
                                   {f32Tensor("b", {2}, 2.5f),
                                    f32Tensor("w", {3, 2}, -1.0f),
                                    f32Tensor("unused", {1}, 0.0f)}),
            "");
  p.fill(7);
  ASSERT_EQ(loadWeights(dir.file("w.safetensors"), p.spec, p.ptrs), "");
  EXPECT_EQ(p.w, std::vector<float>(6, -1.0f));
  EXPECT_EQ(p.b, std::vector<float>(2, 2.5f));
  EXPECT_EQ(p.step, std::vector<float>{7}); // state is not in weights
}

TEST(WeightsTest, ErrorsNameTheTensorAndChangeNothing) {
  TempDir dir;
  TestProgram p;
  std::string file = dir.file("w.safetensors");
  p.fill(7);
  std::vector<float> before = p.w;

  EXPECT_EQ(loadWeights(file, p.spec, p.ptrs),
            "weights file '" + file + "' does not exist (pass --weights FILE)");

  ASSERT_EQ(safetensors::writeFile(file, {f32Tensor("w", {3, 2}, 1.0f)}), "");
  EXPECT_EQ(loadWeights(file, p.spec, p.ptrs),
            "weights file '" + file + "' has no tensor 'b'");
  EXPECT_EQ(p.w, before) << "w must not be loaded when b is missing";

  ASSERT_EQ(safetensors::writeFile(file, {f32Tensor("w", {2, 3}, 1.0f),
                                          f32Tensor("b", {2}, 1.0f)}),
            "");
  EXPECT_EQ(loadWeights(file, p.spec, p.ptrs),
            "weights file '" + file +
                "': tensor 'w' is F32 [2, 3], but the program expects F32 "
                "[3, 2]");

  safetensors::Tensor wrongType = f32Tensor("b", {2}, 1.0f);
  wrongType.dtype = "I32";
  ASSERT_EQ(safetensors::writeFile(file, {f32Tensor("w", {3, 2}, 1.0f),
                                          wrongType}),
            "");
  EXPECT_EQ(loadWeights(file, p.spec, p.ptrs),
            "weights file '" + file +
                "': tensor 'b' is I32 [2], but the program expects F32 [2]");
  EXPECT_EQ(p.w, before);

  writeText(file, "garbage");
  std::string err = loadWeights(file, p.spec, p.ptrs);
  EXPECT_EQ(err.rfind("weights file '" + file + "': ", 0), 0u) << err;
}

//===----------------------------------------------------------------------===//
// Checkpoints
//===----------------------------------------------------------------------===//

/// The names of the tensors in the safetensors file `path`, sorted, and
/// its metadata; no names when it cannot be read (the test fails).
std::vector<std::string>
tensorNames(const std::string &path,
            std::map<std::string, std::string> &metadata) {
  std::vector<safetensors::Tensor> tensors;
  std::string error = safetensors::readFile(path, tensors, metadata);
  EXPECT_EQ(error, "");
  std::vector<std::string> names;
  for (const auto &t : tensors)
    names.push_back(t.name);
  std::sort(names.begin(), names.end());
  return names;
}

TEST(CheckpointTest, RoundTripRestoresParamsStateAndStep) {
  TempDir dir;
  TestProgram saved;
  saved.fill(3);
  std::string path = checkpointPath(dir.path, 12, 0);
  EXPECT_EQ(path, dir.path + "/ckpt-00000012-rank0.safetensors");
  ASSERT_EQ(writeCheckpoint(path, saved.spec, 12, 0, 1, saved.ptrs), "");

  // What is in the file: the param and state tensors and the metadata.
  std::map<std::string, std::string> metadata;
  EXPECT_EQ(tensorNames(path, metadata),
            (std::vector<std::string>{"b", "momentum.w", "step", "w"}));
  EXPECT_EQ(metadata["format"], "loom-checkpoint-1");
  EXPECT_EQ(metadata["model"], "test-model");
  EXPECT_EQ(metadata["step"], "12");
  EXPECT_EQ(metadata["fingerprint"], specFingerprint(saved.spec));

  TestProgram loaded;
  int64_t step = -1;
  ASSERT_EQ(readCheckpoint(path, loaded.spec, 0, 1, loaded.ptrs, step), "");
  EXPECT_EQ(step, 12);
  EXPECT_EQ(loaded.w, saved.w);
  EXPECT_EQ(loaded.b, saved.b);
  EXPECT_EQ(loaded.step, saved.step);
  EXPECT_EQ(loaded.mw, saved.mw);
}

/// TestProgram with a bf16 shadow of `w` (loom-weight-shadows): argument
/// 4, updated by the step like the param it rounds.
struct ShadowProgram {
  TestProgram base;
  TensorSpec args[7], results[6];
  ProgramSpec spec = base.spec;

  std::vector<float> &w = base.w;
  std::vector<uint16_t> shadow = std::vector<uint16_t>(6, 0xdead);
  void *ptrs[7] = {base.w.data(),    base.b.data(), base.step.data(),
                   base.mw.data(),   shadow.data(), nullptr,
                   nullptr};

  ShadowProgram() {
    std::copy(base.args, base.args + 4, args);
    args[4] = {"w.bf16", Role::Shadow, DType::BF16, 2, {3, 2}, -1, false, 0};
    std::copy(base.args + 4, base.args + 6, args + 5);
    std::copy(base.results, base.results + 5, results);
    results[5] = {"w.bf16", Role::Shadow, DType::BF16, 2, {3, 2}, 4, false};
    spec.args = args;
    spec.numArgs = 7;
    spec.results = results;
    spec.numResults = 6;
  }
};

TEST(ShadowTest, SpecsCheckWhatAShadowRounds) {
  {
    ShadowProgram p;
    EXPECT_EQ(validateSpec(p.spec), "");
  }
  {
    ShadowProgram p;
    p.args[4].shadowOf = 1; // b is [2]
    EXPECT_EQ(validateSpec(p.spec),
              "shadow argument 4 'w.bf16' names argument 1, which is not a "
              "float32 param of shape [3, 2]");
  }
  {
    ShadowProgram p;
    p.args[4].shadowOf = 3; // state, not a param
    EXPECT_EQ(validateSpec(p.spec),
              "shadow argument 4 'w.bf16' names argument 3, which is not a "
              "float32 param of shape [3, 2]");
  }
  {
    ShadowProgram p;
    p.args[5].dtype = DType::BF16; // bf16 data
    EXPECT_EQ(validateSpec(p.spec),
              "argument 5 'x' is bfloat16 [4, 3] with role 'data': bfloat16 "
              "is the type of weight shadows, and only of them");
  }
  {
    ShadowProgram p;
    p.args[3].shadowOf = 0; // momentum.w
    EXPECT_EQ(validateSpec(p.spec), "argument 3 'momentum.w' names a param "
                                    "to shadow, but is no shadow");
  }
}

TEST(ShadowTest, EveryLoadOfTheWeightsWritesTheShadowsAndCheckpointsSkipThem) {
  // bf16 keeps 7 fraction bits: 1 + 2^-8 lies halfway between 1 (0x3f80)
  // and 1 + 2^-7 (0x3f81) and rounds to the even 0x3f80; 1 + 3 * 2^-8 lies
  // halfway between 0x3f81 and 0x3f82 and rounds to 0x3f82; -2 is 0xc000.
  const std::vector<float> w = {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, -2.0f,
                                0.0f,           1.0f,               0.5f};
  const std::vector<uint16_t> bits = {0x3f80, 0x3f82, 0xc000,
                                      0x0000, 0x3f80, 0x3f00};
  TempDir dir;
  safetensors::Tensor weights = f32Tensor("w", {3, 2}, 0.0f);
  std::memcpy(weights.data.data(), w.data(), weights.data.size());
  ASSERT_EQ(safetensors::writeFile(dir.file("w.safetensors"),
                                   {weights, f32Tensor("b", {2}, 1.0f)}),
            "");
  ShadowProgram p;
  ASSERT_EQ(loadWeights(dir.file("w.safetensors"), p.spec, p.ptrs), "");
  EXPECT_EQ(p.shadow, bits);

  // A checkpoint holds the params and state, not the shadow ...
  std::string path = checkpointPath(dir.path, 3, 0);
  ASSERT_EQ(writeCheckpoint(path, p.spec, 3, 0, 1, p.ptrs), "");
  std::map<std::string, std::string> metadata;
  EXPECT_EQ(tensorNames(path, metadata),
            (std::vector<std::string>{"b", "momentum.w", "step", "w"}));
  // ... so the program without shadows has the same fingerprint and reads
  // it, and so does this one, deriving its shadow from what it read.
  TestProgram plain;
  EXPECT_EQ(specFingerprint(plain.spec), specFingerprint(p.spec));
  int64_t step = -1;
  ASSERT_EQ(readCheckpoint(path, plain.spec, 0, 1, plain.ptrs, step), "");
  EXPECT_EQ(plain.w, w);
  ShadowProgram resumed;
  ASSERT_EQ(readCheckpoint(path, resumed.spec, 0, 1, resumed.ptrs, step), "");
  EXPECT_EQ(resumed.w, w);
  EXPECT_EQ(resumed.shadow, bits);
}

TEST(CheckpointTest, ACheckpointOfAnotherProgramIsRejected) {
  TempDir dir;
  TestProgram saved;
  saved.fill(3);
  std::string path = checkpointPath(dir.path, 5, 0);
  ASSERT_EQ(writeCheckpoint(path, saved.spec, 5, 0, 1, saved.ptrs), "");

  TestProgram other;
  other.spec.modelName = "other-model";
  other.args[5].dtype = DType::I32; // y: int32 labels, a different program
  other.fill(9);
  int64_t step = -1;
  std::string err = readCheckpoint(path, other.spec, 0, 1, other.ptrs, step);
  EXPECT_EQ(err, "checkpoint '" + path +
                     "' was written by another program (model 'test-model', "
                     "fingerprint " +
                     specFingerprint(saved.spec) +
                     "), not by this one (model 'other-model', fingerprint " +
                     specFingerprint(other.spec) +
                     "): its arguments, shapes or batch size differ");
  EXPECT_EQ(step, -1);
  EXPECT_EQ(other.w[0], 9.0f) << "nothing is loaded from a rejected checkpoint";

  // Another rank layout.
  TestProgram same;
  err = readCheckpoint(path, same.spec, 1, 2, same.ptrs, step);
  EXPECT_EQ(err, "checkpoint '" + path +
                     "' was written by rank 0 of 1, not rank 1 of 2");

  // A weights file is not a checkpoint.
  ASSERT_EQ(safetensors::writeFile(dir.file("w.safetensors"),
                                   {f32Tensor("w", {3, 2}, 1.0f)}),
            "");
  err = readCheckpoint(dir.file("w.safetensors"), same.spec, 0, 1, same.ptrs,
                       step);
  EXPECT_EQ(err, "checkpoint '" + dir.file("w.safetensors") +
                     "' is not a Loom checkpoint (no \"format\": "
                     "\"loom-checkpoint-1\" in its metadata)");
}

TEST(CheckpointTest, AFlippedByteIsRefusedNamingTheFile) {
  TempDir dir;
  TestProgram saved;
  saved.fill(3);
  std::string path = checkpointPath(dir.path, 7, 0);
  ASSERT_EQ(writeCheckpoint(path, saved.spec, 7, 0, 1, saved.ptrs), "");
  std::vector<safetensors::Tensor> tensors;
  std::map<std::string, std::string> metadata;
  ASSERT_EQ(safetensors::readFile(path, tensors, metadata), "");
  EXPECT_EQ(metadata["checksum"], dataChecksum(tensors));
  EXPECT_EQ(metadata["checksum"].rfind("fnv1a64:", 0), 0u);

  // One bit of the last tensor byte (data, not the header) flipped.
  std::string bytes = readText(path);
  bytes[bytes.size() - 1] ^= 0x01;
  writeText(path, bytes);
  TestProgram loaded;
  loaded.fill(9);
  int64_t step = -1;
  std::string err = readCheckpoint(path, loaded.spec, 0, 1, loaded.ptrs, step);
  EXPECT_EQ(err.rfind("checkpoint '" + path + "' is corrupted: its data's "
                      "checksum is fnv1a64:", 0),
            0u)
      << err;
  EXPECT_NE(err.find("--resume=latest-valid"), std::string::npos) << err;
  EXPECT_EQ(step, -1);
  EXPECT_EQ(loaded.w[0], 9.0f) << "nothing is loaded from a corrupted file";

  // A checkpoint without a checksum cannot be checked: refused too.
  metadata.erase("checksum");
  ASSERT_EQ(safetensors::writeFile(path, tensors, metadata), "");
  err = readCheckpoint(path, loaded.spec, 0, 1, loaded.ptrs, step);
  EXPECT_NE(err.find("has no \"checksum\""), std::string::npos) << err;
}

TEST(CheckpointTest, ATruncatedCheckpointIsRejected) {
  TempDir dir;
  TestProgram saved;
  std::string path = checkpointPath(dir.path, 1, 0);
  ASSERT_EQ(writeCheckpoint(path, saved.spec, 1, 0, 1, saved.ptrs), "");
  std::string bytes = readText(path);
  writeText(path, bytes.substr(0, bytes.size() - 10));
  int64_t step;
  std::string err = readCheckpoint(path, saved.spec, 0, 1, saved.ptrs, step);
  EXPECT_EQ(err.rfind("checkpoint '" + path + "': ", 0), 0u) << err;
}

TEST(CheckpointTest, WritingGoesThroughATempFileThenRename) {
  TempDir dir;
  TestProgram first;
  first.fill(1);
  std::string path = checkpointPath(dir.path, 5, 0);
  ASSERT_EQ(writeCheckpoint(path, first.spec, 5, 0, 1, first.ptrs), "");
  std::string good = readText(path);
  // Nothing but the checkpoint is left in the directory.
  std::vector<int64_t> steps;
  ASSERT_EQ(listCheckpoints(dir.path, 0, steps), "");
  EXPECT_EQ(steps, std::vector<int64_t>{5});
  EXPECT_FALSE(exists(path + ".tmp-" + std::to_string(::getpid())));

  // A write that cannot complete (its temp file cannot be created: a
  // directory is in the way) fails and leaves the old checkpoint intact,
  // which shows the target itself is never opened for writing.
  std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  ASSERT_EQ(::mkdir(tmp.c_str(), 0777), 0);
  TestProgram second;
  second.fill(2);
  std::string err = writeCheckpoint(path, second.spec, 5, 0, 1, second.ptrs);
  EXPECT_NE(err.find("cannot write checkpoint '" + path + "'"),
            std::string::npos)
      << err;
  EXPECT_EQ(readText(path), good);
  ::rmdir(tmp.c_str());

  // Once it can, the new checkpoint replaces the old one in full.
  ASSERT_EQ(writeCheckpoint(path, second.spec, 5, 0, 1, second.ptrs), "");
  TestProgram loaded;
  int64_t step;
  ASSERT_EQ(readCheckpoint(path, loaded.spec, 0, 1, loaded.ptrs, step), "");
  EXPECT_EQ(loaded.w, second.w);
}

TEST(CheckpointTest, ListingAndPruningSeeOnlyThisRanksCheckpoints) {
  TempDir dir;
  TestProgram p;
  for (int64_t step : {10, 2, 30, 20})
    ASSERT_EQ(writeCheckpoint(checkpointPath(dir.path, step, 0), p.spec, step,
                              0, 2, p.ptrs),
              "");
  ASSERT_EQ(writeCheckpoint(checkpointPath(dir.path, 40, 1), p.spec, 40, 1, 2,
                            p.ptrs),
            "");
  writeText(dir.file("ckpt-000000x1-rank0.safetensors"), "");
  writeText(dir.file("notes.txt"), "");
  std::vector<int64_t> steps;
  ASSERT_EQ(listCheckpoints(dir.path, 0, steps), "");
  EXPECT_EQ(steps, (std::vector<int64_t>{2, 10, 20, 30}));
  ASSERT_EQ(pruneCheckpoints(dir.path, 0, 2), "");
  ASSERT_EQ(listCheckpoints(dir.path, 0, steps), "");
  EXPECT_EQ(steps, (std::vector<int64_t>{20, 30}));
  ASSERT_EQ(listCheckpoints(dir.path, 1, steps), "");
  EXPECT_EQ(steps, std::vector<int64_t>{40});
  ASSERT_EQ(listCheckpoints(dir.file("missing"), 0, steps), "");
  EXPECT_TRUE(steps.empty());
}

//===----------------------------------------------------------------------===//
// Loss log
//===----------------------------------------------------------------------===//

TEST(LossLogTest, FreshLogReplacesTheOldOne) {
  TempDir dir;
  std::string path = dir.file("loss.csv");
  writeText(path, "old contents\n");
  FILE *f = nullptr;
  ASSERT_EQ(openLossLog(path, 0, f), "");
  ASSERT_EQ(appendLoss(f, path, 0, 0.5f), "");
  ASSERT_EQ(appendLoss(f, path, 1, 1.0f / 3.0f), "");
  std::fclose(f);
  EXPECT_EQ(readText(path), "step,loss\n0,0.5\n1,0.333333343\n");
}

TEST(LossLogTest, ResumeDropsRowsFromTheResumedStepAndATornLine) {
  TempDir dir;
  std::string path = dir.file("loss.csv");
  writeText(path, "step,loss\n0,4\n1,3\n2,2\n3,1\n4,0.5\n5,0.2");
  FILE *f = nullptr;
  ASSERT_EQ(openLossLog(path, 3, f), "");
  ASSERT_EQ(appendLoss(f, path, 3, 0.75f), "");
  std::fclose(f);
  EXPECT_EQ(readText(path), "step,loss\n0,4\n1,3\n2,2\n3,0.75\n");

  // A torn last row before the resumed step is dropped too.
  writeText(path, "step,loss\n0,4\n1,3");
  ASSERT_EQ(openLossLog(path, 5, f), "");
  std::fclose(f);
  EXPECT_EQ(readText(path), "step,loss\n0,4\n");

  // A missing log is started.
  std::string fresh = dir.file("fresh.csv");
  ASSERT_EQ(openLossLog(fresh, 5, f), "");
  std::fclose(f);
  EXPECT_EQ(readText(fresh), "step,loss\n");
}

TEST(LossLogTest, ResumeRefusesAFileThatIsNotALossLog) {
  TempDir dir;
  std::string path = dir.file("notes.csv");
  writeText(path, "name,value\nx,1\n");
  FILE *f = nullptr;
  EXPECT_EQ(openLossLog(path, 2, f),
            "'" + path +
                "' is not a loss log (its first line is 'name,value', not "
                "'step,loss'); not continuing it");
  EXPECT_EQ(f, nullptr);
  EXPECT_EQ(readText(path), "name,value\nx,1\n");
}

//===----------------------------------------------------------------------===//
// Arena accounting and memory counters
//===----------------------------------------------------------------------===//

TEST(ArenaTest, CountsLiveAndPeakBytes) {
  Context ctx(1024);
  arenaAcquire(ctx, 0, 256);
  arenaAcquire(ctx, 256, 128);
  EXPECT_EQ(ctx.liveBytes, 384);
  arenaRelease(ctx, 0, 256);
  arenaAcquire(ctx, 512, 512); // fills the arena to its end
  arenaAcquire(ctx, 0, 256);   // reuses the released range
  EXPECT_EQ(ctx.liveBytes, 896);
  EXPECT_EQ(ctx.peakLiveBytes, 896);
  EXPECT_NE(checkArenaEmpty(ctx), "");
  arenaRelease(ctx, 256, 128);
  arenaRelease(ctx, 512, 512);
  arenaRelease(ctx, 0, 256);
  arenaAcquire(ctx, 100, 0); // zero bytes: not tracked
  arenaRelease(ctx, 100, 0);
  EXPECT_EQ(ctx.liveBytes, 0);
  EXPECT_EQ(ctx.peakLiveBytes, 896);
  EXPECT_EQ(checkArenaEmpty(ctx), "");
}

TEST(ArenaDeathTest, OverlapsAndBadReleasesArePlannerBugs) {
  GTEST_FLAG_SET(death_test_style, "threadsafe"); // OpenBLAS threads
  Context ctx(1024);
  arenaAcquire(ctx, 100, 100);
  EXPECT_EXIT(arenaAcquire(ctx, 150, 10), ::testing::ExitedWithCode(1),
              "arenaAcquire: buffer \\[150, 160\\) overlaps the live buffer "
              "\\[100, 200\\) \\(a bug in the memory planner or the emitter\\)");
  EXPECT_EXIT(arenaAcquire(ctx, 50, 51), ::testing::ExitedWithCode(1),
              "buffer \\[50, 101\\) overlaps the live buffer \\[100, 200\\)");
  EXPECT_EXIT(arenaAcquire(ctx, 1000, 100), ::testing::ExitedWithCode(1),
              "buffer \\[1000, 1100\\) is not inside the arena of 1024 bytes");
  EXPECT_EXIT(arenaRelease(ctx, 300, 10), ::testing::ExitedWithCode(1),
              "arenaRelease: buffer \\[300, 310\\) is not live");
  EXPECT_EXIT(arenaRelease(ctx, 100, 50), ::testing::ExitedWithCode(1),
              "buffer \\[100, 150\\) was acquired as \\[100, 200\\)");
  ctx.step = 7;
  EXPECT_EXIT(arenaAcquire(ctx, 199, 1), ::testing::ExitedWithCode(1),
              "loom-train: error: step 7: arenaAcquire: buffer \\[199, 200\\)");
  // Adjacent ranges do not overlap.
  arenaAcquire(ctx, 0, 100);
  arenaAcquire(ctx, 200, 100);
  EXPECT_EQ(ctx.liveBytes, 300);
}

TEST(MemoryCountersTest, JsonHasEveryCategory) {
  TestProgram p;
  Context ctx(p.spec.arenaBytes);
  std::string error;
  Block params = ctx.allocator.allocate(MemCategory::Params, 100, error);
  Block arena = ctx.allocator.allocate(MemCategory::Arena, 256, error);
  ASSERT_EQ(error, "");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(params.get()) % 64, 0u);
  ctx.allocator.record(MemCategory::Data, 1000);
  arenaAcquire(ctx, 0, 64);
  arenaAcquire(ctx, 64, 32);
  EXPECT_EQ(memoryCountersJson(ctx, p.spec),
            "{\n"
            "  \"rank\": 0,\n"
            "  \"stage\": 0,\n"
            "  \"device_peak_bytes\": 356,\n"
            "  \"host_peak_bytes\": 0,\n"
            "  \"planned_device_peak_bytes\": 0,\n"
            "  \"device_memory_bytes\": 0,\n"
            "  \"arena_peak_live_bytes\": 96,\n"
            "  \"planned_peak_bytes\": 128,\n"
            "  \"host_to_device_bytes\": 0,\n"
            "  \"device_to_host_bytes\": 0,\n"
            "  \"params_bytes\": 100,\n"
            "  \"state_bytes\": 0,\n"
            "  \"data_bytes\": 1000,\n"
            "  \"batch_bytes\": 0,\n"
            "  \"results_bytes\": 0,\n"
            "  \"arena_bytes\": 256,\n"
            "  \"host_bytes\": 0,\n"
            "  \"total_bytes\": 1356\n"
            "}\n");
  Block tooBig = ctx.allocator.allocate(MemCategory::Batch, -5, error);
  EXPECT_EQ(tooBig.get(), nullptr);
  EXPECT_EQ(error, "cannot allocate -5 bytes of batch");
}

// The pools: the device pool (params, state, batch, results, arena) within
// its budget, the host pool apart, the datasets in neither.
TEST(MemoryCountersTest, PoolsAndTheDeviceBudget) {
  Allocator allocator;
  allocator.deviceBudget = 1000;
  std::string error;
  Block params = allocator.allocate(MemCategory::Params, 600, error);
  Block host = allocator.allocate(MemCategory::Host, 5000, error);
  allocator.record(MemCategory::Data, 7000);
  ASSERT_EQ(error, "");
  Block arena = allocator.allocate(MemCategory::Arena, 400, error);
  ASSERT_EQ(error, "");
  EXPECT_EQ(allocator.poolPeakBytes(MemPool::Device), 1000);
  EXPECT_EQ(allocator.poolPeakBytes(MemPool::Host), 5000);
  // One byte more is out of device memory, as on a GPU.
  Block over = allocator.allocate(MemCategory::Results, 1, error);
  EXPECT_EQ(over.get(), nullptr);
  EXPECT_NE(error.find("out of device memory allocating 1 bytes of results: "
                       "the device pool would hold 1001 bytes, over the "
                       "--device-memory budget of 1000 bytes"),
            std::string::npos)
      << error;
  EXPECT_EQ(allocator.poolPeakBytes(MemPool::Device), 1000);
}

// Swap copies run on the copy thread; wait() completes them, and a rate
// limit makes each take bytes / rate seconds.
TEST(SwapCopyTest, CopiesRoundTripAndHonourTheRate) {
  Context ctx(0);
  std::vector<float> device(4096), host(4096, 0.0f), back(4096, 0.0f);
  for (size_t i = 0; i < device.size(); ++i)
    device[i] = static_cast<float>(i) * 0.5f;
  const int64_t bytes = static_cast<int64_t>(device.size() * sizeof(float));
  CopyHandle out = swapOutStart(ctx, host.data(), device.data(), bytes);
  wait(ctx, out);
  EXPECT_EQ(std::memcmp(host.data(), device.data(), bytes), 0);
  CopyHandle in = swapInStart(ctx, back.data(), host.data(), bytes);
  wait(ctx, in);
  EXPECT_EQ(std::memcmp(back.data(), device.data(), bytes), 0);

  // 16 KiB at 128 KiB/s: at least 0.125 s.
  Context slow(0);
  slow.hostLinkBytesPerSecond = 128.0 * 1024;
  auto begin = std::chrono::steady_clock::now();
  CopyHandle timed = swapOutStart(slow, host.data(), device.data(), bytes);
  wait(slow, timed);
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - begin)
                       .count();
  EXPECT_GE(seconds, 0.12);
}

} // namespace

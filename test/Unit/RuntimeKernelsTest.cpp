//===- RuntimeKernelsTest.cpp - CPU kernels against plain references ------===//
//
// Each kernel of loom/Runtime/CpuKernels.h against a straightforward loop
// written from the header's documentation (double accumulation, one
// rounding), on odd sizes, plus the inputs that must fail.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/CpuKernels.h"
#include "RuntimeImpl.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

using namespace loom::rt;
using namespace loom::rt::cpu;

namespace {

std::vector<float> randomFloats(size_t n, unsigned seed, float scale = 2.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

/// Elementwise equality within `ulps` units in the last place.
void expectClose(const std::vector<float> &actual,
                 const std::vector<double> &expected, double rel = 2e-7) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    double tol = rel * std::max(1.0, std::fabs(expected[i]));
    EXPECT_NEAR(actual[i], expected[i], tol) << "element " << i;
  }
}

//===----------------------------------------------------------------------===//
// gemm
//===----------------------------------------------------------------------===//

struct GemmCase {
  bool transA, transB;
};

/// Every combination of transposes, for the gemm suites.
auto allTransposes() {
  return ::testing::Values(GemmCase{false, false}, GemmCase{true, false},
                           GemmCase{false, true}, GemmCase{true, true});
}

/// In double: start[i][j] + (op(A) op(B))[i][j] for one M x N matrix
/// (row-major; A stored K x M when transA, B stored N x K when transB).
std::vector<double> referenceProduct(const GemmCase &p, int64_t m, int64_t n,
                                     int64_t k, const std::vector<float> &a,
                                     const std::vector<float> &b,
                                     const std::vector<double> &start) {
  std::vector<double> ref(start);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t l = 0; l < k; ++l) {
        float av = p.transA ? a[l * m + i] : a[i * k + l];
        float bv = p.transB ? b[j * k + l] : b[l * n + j];
        ref[i * n + j] += static_cast<double>(av) * bv;
      }
  return ref;
}

class GemmTest : public ::testing::TestWithParam<GemmCase> {};

TEST_P(GemmTest, MatchesNaiveProductForEveryBatch) {
  const GemmCase p = GetParam();
  const int64_t batch = 3, m = 5, n = 7, k = 4;
  // A_b stored K x M when transA (else M x K); B_b stored N x K when transB.
  std::vector<float> a = randomFloats(batch * m * k, 1);
  std::vector<float> b = randomFloats(batch * k * n, 2);
  std::vector<float> c(batch * m * n, -1.0f);
  gemm(p.transA, p.transB, batch, m, n, k, a.data(), m * k, b.data(), k * n,
       c.data(), m * n);
  std::vector<double> ref(c.size());
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t l = 0; l < k; ++l) {
          float av = p.transA ? a[bi * m * k + l * m + i] : a[bi * m * k + i * k + l];
          float bv = p.transB ? b[bi * k * n + j * k + l] : b[bi * k * n + l * n + j];
          sum += static_cast<double>(av) * bv;
        }
        ref[bi * m * n + i * n + j] = sum;
      }
  expectClose(c, ref, 1e-5);
}

INSTANTIATE_TEST_SUITE_P(AllTransposes, GemmTest, allTransposes());

TEST(GemmTest, ZeroStrideBroadcastsOneOperand) {
  // The same weight matrix for every batch element (stride 0).
  const int64_t batch = 2, m = 2, n = 3, k = 2;
  std::vector<float> a = {1, 2, 3, 4, /*b=1*/ 5, 6, 7, 8};
  std::vector<float> w = {1, 0, 2, 0, 1, 3};
  std::vector<float> c(batch * m * n);
  gemm(false, false, batch, m, n, k, a.data(), m * k, w.data(), 0, c.data(),
       m * n);
  std::vector<float> expected = {1, 2, 8, 3, 4, 18, 5, 6, 28, 7, 8, 38};
  EXPECT_EQ(c, expected);
}

/// The exact (double) dot product of query row i and key row j of head h
/// in batch b, q and k laid out [B, S, H, D] (f32 or bf16 elements).
template <typename T>
double headDot(const std::vector<T> &q, const std::vector<T> &k, int64_t S,
               int64_t H, int64_t D, int64_t b, int64_t h, int64_t i,
               int64_t j) {
  double sum = 0;
  for (int64_t d = 0; d < D; ++d)
    sum += static_cast<double>(float(q[((b * S + i) * H + h) * D + d])) *
           float(k[((b * S + j) * H + h) * D + d]);
  return sum;
}

TEST(GemmTest, StridedReadsHeadsInPlace) {
  // Attention's scores q k^T per (batch, head), q and k [B, S, H, D] read in
  // place: matrix (b, h) starts at b*S*H*D + h*D with rows H*D apart; C is
  // [B, H, S, S] written with rows S + 1 apart (a padded row, left alone).
  const int64_t B = 3, S = 5, H = 2, D = 4, ldc = S + 1;
  std::vector<float> q = randomFloats(B * S * H * D, 3);
  std::vector<float> k = randomFloats(B * S * H * D, 4);
  std::vector<float> c(B * H * S * ldc, -7.0f);
  gemmStrided(false, true, B, H, S, S, D, q.data(), S * H * D, D, H * D,
              k.data(), S * H * D, D, H * D, c.data(), H * S * ldc, S * ldc,
              ldc);
  std::vector<float> got;
  std::vector<double> ref;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < S; ++i) {
        for (int64_t j = 0; j < S; ++j) {
          ref.push_back(headDot(q, k, S, H, D, b, h, i, j));
          got.push_back(c[(b * H + h) * S * ldc + i * ldc + j]);
        }
        EXPECT_EQ(c[(b * H + h) * S * ldc + i * ldc + S], -7.0f);
      }
  expectClose(got, ref, 1e-5);
}

/// Sets cpu::gemm's critical-stride policy for one test.
class StridePolicyScope {
public:
  explicit StridePolicyScope(GemmStridePolicy policy)
      : saved(setGemmStridePolicy(policy)) {}
  ~StridePolicyScope() { setGemmStridePolicy(saved); }

private:
  GemmStridePolicy saved;
};

TEST(GemmTest, CriticalStrideCopiesGiveTheSameBits) {
  // Both operands' rows 512 floats apart (a critical stride) and wider than
  // the matrices they hold, so the padded copy must take only each row's
  // columns. Copied or not, and whatever tuning picks on each call, the
  // library sees the same values: the same bits, the right product.
  const int64_t m = 64, n = 256, k = 128, ld = 512;
  for (bool transA : {false, true})
    for (bool transB : {false, true}) {
      SCOPED_TRACE(std::string("transA ") + (transA ? "1" : "0") +
                   ", transB " + (transB ? "1" : "0"));
      std::vector<float> a = randomFloats((transA ? k : m) * ld, 11);
      std::vector<float> b = randomFloats((transB ? n : k) * ld, 12);
      auto product = [&](GemmStridePolicy policy) {
        StridePolicyScope scope(policy);
        std::vector<float> c(m * n, -1.0f);
        gemmStrided(transA, transB, 1, 1, m, n, k, a.data(), 0, 0, ld,
                    b.data(), 0, 0, ld, c.data(), 0, 0, n);
        return c;
      };
      std::vector<float> direct = product(GemmStridePolicy::Direct);
      EXPECT_EQ(product(GemmStridePolicy::Pad), direct);
      for (int call = 0; call < 6; ++call)
        EXPECT_EQ(product(GemmStridePolicy::Tune), direct) << "call " << call;
      std::vector<double> ref(m * n);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double sum = 0;
          for (int64_t l = 0; l < k; ++l)
            sum += static_cast<double>(transA ? a[l * ld + i]
                                              : a[i * ld + l]) *
                   (transB ? b[j * ld + l] : b[l * ld + j]);
          ref[i * n + j] = sum;
        }
      expectClose(direct, ref, 1e-4); // 128 float products of up to 4
    }
}

TEST(GemmTest, CriticalStrideTuningTriesBothThenKeepsOne) {
  // Both operands at a critical stride (a shape no other test uses): Tune
  // runs each of the three variants twice (4 copies), then one variant
  // for good (0 or 1 copy per call); Direct never copies, Pad always.
  const int64_t m = 256, n = 256, k = 80; // A^T: rows of m floats
  std::vector<float> a = randomFloats(m * k, 16);
  std::vector<float> b = randomFloats(k * n, 17);
  std::vector<float> c(m * n);
  auto copiesOf = [&](GemmStridePolicy policy, int calls) {
    StridePolicyScope scope(policy);
    int64_t before = gemmStrideCopies();
    for (int call = 0; call < calls; ++call)
      gemmStrided(true, false, 1, 1, m, n, k, a.data(), 0, 0, m, b.data(), 0,
                  0, n, c.data(), 0, 0, n);
    return gemmStrideCopies() - before;
  };
  EXPECT_EQ(copiesOf(GemmStridePolicy::Direct, 3), 0);
  EXPECT_EQ(copiesOf(GemmStridePolicy::Pad, 3), 3);
  EXPECT_EQ(copiesOf(GemmStridePolicy::Tune, 6), 4);
  int64_t settled = copiesOf(GemmStridePolicy::Tune, 4);
  EXPECT_TRUE(settled == 0 || settled == 4) << settled;
}

TEST(GemmBiasTest, CriticalStrideCopiesKeepTheBias) {
  // gemmBias accumulates onto the bias (beta 1): a copied operand must not
  // change what is added to what.
  const int64_t m = 64, n = 256, k = 256;
  std::vector<float> a = randomFloats(m * k, 13);
  std::vector<float> b = randomFloats(k * n, 14);
  std::vector<float> bias = randomFloats(n, 15);
  auto product = [&](GemmStridePolicy policy) {
    StridePolicyScope scope(policy);
    std::vector<float> c(m * n, -1.0f);
    gemmBias(false, false, m, n, k, a.data(), b.data(), bias.data(),
             c.data());
    return c;
  };
  EXPECT_EQ(product(GemmStridePolicy::Pad),
            product(GemmStridePolicy::Direct));
}

TEST(GemmTest, Bf16StridedIsTheExactProductRoundedOnce) {
  // bf16 heads read in place (as above, with a padded C row left alone):
  // products of bf16 values are exact, so the result is the double-precision
  // sum of the bf16 inputs' products rounded to bf16, up to the f32
  // accumulation (one bf16 step at a rounding boundary at most). Twice:
  // the shape's first call widens, the second takes oneDNN's matmul where
  // it agreed.
  const int64_t B = 2, S = 5, H = 3, D = 16, ldc = S + 1;
  std::vector<float> qf = randomFloats(B * S * H * D, 5);
  std::vector<float> kf = randomFloats(B * S * H * D, 6);
  std::vector<bf16> q(qf.begin(), qf.end()), k(kf.begin(), kf.end());
  for (int call = 0; call < 2; ++call) {
    SCOPED_TRACE("call " + std::to_string(call));
    std::vector<bf16> c(B * H * S * ldc, bf16(-7.0f));
    gemmStrided(false, true, B, H, S, S, D, q.data(), S * H * D, D, H * D,
                k.data(), S * H * D, D, H * D, c.data(), H * S * ldc, S * ldc,
                ldc);
    int inexact = 0;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < S; ++i) {
          for (int64_t j = 0; j < S; ++j) {
            double sum = headDot(q, k, S, H, D, b, h, i, j);
            float got = c[(b * H + h) * S * ldc + i * ldc + j];
            float expected = bf16(static_cast<float>(sum));
            if (got != expected) {
              ++inexact;
              EXPECT_NEAR(got, expected, std::fabs(expected) * 0x1p-7);
            }
          }
          EXPECT_EQ(float(c[(b * H + h) * S * ldc + i * ldc + S]), -7.0f);
        }
    EXPECT_LE(inexact, 2);
  }
}

TEST(GemmTest, Bf16SharedWeightMatchesTheF32Product) {
  // Integers below 256 are exact in bf16, and so are these products.
  const int64_t batch = 2, m = 2, n = 3, k = 2;
  std::vector<bf16> a = {1, 2, 3, 4, 5, 6, 7, 8}, w = {1, 0, 2, 0, 1, 3};
  std::vector<bf16> c(batch * m * n);
  gemm(false, false, batch, m, n, k, a.data(), m * k, w.data(), 0, c.data(),
       m * n);
  std::vector<float> got(c.begin(), c.end());
  std::vector<float> expected = {1, 2, 8, 3, 4, 18, 5, 6, 28, 7, 8, 38};
  EXPECT_EQ(got, expected);
}

TEST(GemmTest, EmptyContractionGivesZeros) {
  std::vector<float> c(6, 42.0f);
  gemm(false, false, 1, 2, 3, 0, nullptr, 0, nullptr, 0, c.data(), 6);
  EXPECT_EQ(c, std::vector<float>(6, 0.0f));
}

class Bf16GemmTest : public ::testing::TestWithParam<GemmCase> {};

/// Expects `c` (batch m x n bf16 matrices) to be the products of `a`'s
/// matrices (batch of them) with `b` (one), each the double-precision sum
/// of the exact bf16 products rounded to bf16, up to the f32 accumulation
/// (one bf16 step where the sum lies at a rounding boundary, rarely).
void expectExactProductsRoundedOnce(const GemmCase &p, int64_t batch,
                                    int64_t m, int64_t n, int64_t k,
                                    const std::vector<bf16> &a,
                                    const std::vector<bf16> &b,
                                    const std::vector<bf16> &c) {
  std::vector<float> wb(b.begin(), b.end());
  int inexact = 0;
  for (int64_t i = 0; i < batch; ++i) {
    std::vector<float> wa(a.begin() + i * m * k, a.begin() + (i + 1) * m * k);
    std::vector<double> ref = referenceProduct(
        p, m, n, k, wa, wb, std::vector<double>(m * n, 0.0));
    for (int64_t e = 0; e < m * n; ++e) {
      float got = c[i * m * n + e];
      float expected = bf16(static_cast<float>(ref[e]));
      if (got != expected) {
        ++inexact;
        EXPECT_NEAR(got, expected, std::fabs(expected) * 0x1p-7) << e;
      }
    }
  }
  EXPECT_LE(inexact, batch * m * n / 100 + 2);
}

TEST_P(Bf16GemmTest, IsTheExactProductRoundedOnce) {
  // Dense bf16 matrices, each transpose, one weight shared by a batch of
  // two (stride 0, as a linear layer's), and the shape on which oneDNN
  // 2.6's AMX kernel raced when threaded, with B transposed (16 x 50 x 32:
  // a quarter of C wrong in 8 of 30 runs; the runtime runs it on one
  // thread). Each shape twice: its first call widens and checks oneDNN's
  // matmul against that, later calls take the matmul where it agreed.
  const GemmCase p = GetParam();
  const int64_t shapes[][4] = {{2, 16, 48, 40}, {1, 16, 50, 32}};
  for (const auto &shape : shapes) {
    const int64_t batch = shape[0], m = shape[1], n = shape[2], k = shape[3];
    std::vector<float> af = randomFloats(batch * m * k, 21);
    std::vector<float> bf = randomFloats(k * n, 22);
    std::vector<bf16> a(af.begin(), af.end()), b(bf.begin(), bf.end());
    for (int call = 0; call < 2; ++call) {
      std::vector<bf16> c(batch * m * n, bf16(-7.0f));
      gemm(p.transA, p.transB, batch, m, n, k, a.data(), m * k, b.data(), 0,
           c.data(), m * n);
      SCOPED_TRACE("m " + std::to_string(m) + " n " + std::to_string(n) +
                   ", call " + std::to_string(call));
      expectExactProductsRoundedOnce(p, batch, m, n, k, a, b, c);
    }
  }
}

#ifdef LOOM_GEMM_DNNL
TEST(Bf16GemmMatmulTest, LaterCallsOfAShapeTakeOneDnnsMatmul) {
  // A linear layer's shapes, forward and both gradients: after each
  // shape's first (checked) call, oneDNN computes them, where it has a
  // bf16 kernel for this CPU (AVX-512 BF16, AMX); on others (AVX2) every
  // call widens, and the products are the same.
  const int64_t m = 64, n = 96, k = 32;
  std::vector<float> af = randomFloats(m * k, 31), bf = randomFloats(k * n, 32);
  std::vector<bf16> a(af.begin(), af.end()), b(bf.begin(), bf.end());
  std::vector<bf16> c(m * n);
  const Bf16MatmulCounts before = bf16MatmulCounts();
  for (int call = 0; call < 3; ++call)
    gemm(false, false, 1, m, n, k, a.data(), 0, b.data(), 0, c.data(), 0);
  const Bf16MatmulCounts after = bf16MatmulCounts();
  EXPECT_EQ(after.refusedShapes, before.refusedShapes);
  EXPECT_EQ(after.calls - before.calls, bf16MatmulAvailable() ? 2 : 0);
  expectExactProductsRoundedOnce({false, false}, 1, m, n, k, a, b, c);
}

TEST_P(Bf16GemmTest, SplitAmongThreadsIsTheExactProductEveryTime) {
  // Products large enough to be split among the threads, one per way of
  // splitting: an even batch, C's rows (with an uneven batch of three),
  // and C's columns (few rows). Small integers make every partial sum
  // exact in f32, so each element of every call is the exact sum rounded
  // to bf16 once, whatever the order: the widening path's first call and
  // each split matmul call after it. A race between the threads' blocks
  // would show as a call with a wrong element.
  const GemmCase p = GetParam();
  const int64_t shapes[][4] = {
      {2, 64, 128, 128}, {3, 96, 64, 64}, {1, 16, 256, 256}};
  std::mt19937 gen(43);
  std::uniform_int_distribution<int> small(-4, 4);
  const Bf16MatmulCounts before = bf16MatmulCounts();
  for (const auto &shape : shapes) {
    const int64_t batch = shape[0], m = shape[1], n = shape[2], k = shape[3];
    std::vector<float> af(batch * m * k), bf(k * n);
    for (float &x : af)
      x = small(gen);
    for (float &x : bf)
      x = small(gen);
    std::vector<bf16> a(af.begin(), af.end()), b(bf.begin(), bf.end());
    std::vector<bf16> expected;
    for (int64_t i = 0; i < batch; ++i) {
      std::vector<float> wa(af.begin() + i * m * k,
                            af.begin() + (i + 1) * m * k);
      for (double sum : referenceProduct(p, m, n, k, wa, bf,
                                         std::vector<double>(m * n, 0.0)))
        expected.push_back(bf16(static_cast<float>(sum)));
    }
    for (int call = 0; call < 6; ++call) {
      std::vector<bf16> c(batch * m * n, bf16(-7.0f));
      gemm(p.transA, p.transB, batch, m, n, k, a.data(), m * k, b.data(), 0,
           c.data(), m * n);
      int64_t wrong = 0;
      for (size_t e = 0; e < c.size(); ++e)
        wrong += c[e].bits != expected[e].bits;
      ASSERT_EQ(wrong, 0) << "batch " << batch << " m " << m << " n " << n
                          << ", call " << call;
    }
  }
  const Bf16MatmulCounts after = bf16MatmulCounts();
  EXPECT_EQ(after.refusedShapes, before.refusedShapes);
  // Each shape's check of its matmul and its five matmul calls (on a CPU
  // without oneDNN's bf16 kernels every call widens).
  if (bf16MatmulAvailable() && std::thread::hardware_concurrency() > 1 &&
      !std::getenv("OMP_NUM_THREADS")) {
    EXPECT_GE(after.splitCalls - before.splitCalls, 3 * 6);
  }
}
TEST_P(Bf16GemmTest, BiasIsAddedBeforeTheOneRounding) {
  // A linear layer's gemm with its bias epilogue in bf16: each element is
  // the exact sum of the products and the bias, rounded to bf16 once.
  // Small integers (sums exact in f32); the products are split among the
  // threads (rows, or columns where A is transposed) and one is too small
  // to split. The widening path's first call, then oneDNN's matmul with
  // its bias argument.
  const GemmCase p = GetParam();
  const int64_t shapes[][3] = {{128, 96, 128}, {16, 40, 24}};
  std::mt19937 gen(45);
  std::uniform_int_distribution<int> small(-4, 4);
  const Bf16MatmulCounts before = bf16MatmulCounts();
  for (const auto &shape : shapes) {
    const int64_t m = shape[0], n = shape[1], k = shape[2];
    std::vector<float> af(m * k), bf(k * n), biasf(n);
    for (std::vector<float> *v : {&af, &bf, &biasf})
      for (float &x : *v)
        x = small(gen) * 8;
    std::vector<bf16> a(af.begin(), af.end()), b(bf.begin(), bf.end()),
        bias(biasf.begin(), biasf.end());
    std::vector<double> rows(m * n);
    for (int64_t r = 0; r < m; ++r)
      for (int64_t j = 0; j < n; ++j)
        rows[r * n + j] = biasf[j];
    std::vector<double> ref = referenceProduct(p, m, n, k, af, bf, rows);
    for (int call = 0; call < 3; ++call) {
      std::vector<bf16> c(m * n, bf16(-7.0f));
      gemmBias(p.transA, p.transB, m, n, k, a.data(), b.data(), bias.data(),
               c.data());
      int64_t wrong = 0;
      for (int64_t e = 0; e < m * n; ++e)
        wrong += c[e].bits != bf16(static_cast<float>(ref[e])).bits;
      EXPECT_EQ(wrong, 0) << "m " << m << ", call " << call;
    }
  }
  const Bf16MatmulCounts after = bf16MatmulCounts();
  EXPECT_EQ(after.refusedShapes, before.refusedShapes);
  // Calls 1 and 2 of each shape (none without oneDNN's bf16 kernels).
  EXPECT_EQ(after.calls - before.calls, bf16MatmulAvailable() ? 2 * 2 : 0);
}

TEST(Bf16GemmMatmulTest, StridedSplitsAreTheExactProductInPlace) {
  // gemmStrided's split among threads on padded, strided operands (the
  // attention heads' case): every way of splitting, with the batch strides
  // of A, B and C, a broadcast B, transposes, and a padded C whose padding
  // must stay. Small integers make every sum exact, so each call (the
  // widening path's, then the split matmul's) is the exact sum rounded to
  // bf16 once.
  struct Case {
    bool transA, transB;
    int64_t outer, inner, m, n, k;
    bool broadcastB;
    const char *split;
  };
  const Case cases[] = {
      {false, true, 2, 3, 64, 64, 64, false, "outer batch"},
      {false, false, 1, 4, 64, 64, 64, true, "inner batch"},
      {false, true, 3, 1, 96, 64, 64, false, "rows"},
      {true, true, 3, 1, 64, 96, 64, false, "columns"},
      {true, false, 1, 1, 64, 256, 64, true, "columns (B untransposed)"},
  };
  std::mt19937 gen(44);
  std::uniform_int_distribution<int> small(-4, 4);
  const Bf16MatmulCounts before = bf16MatmulCounts();
  for (const Case &c : cases) {
    SCOPED_TRACE(c.split);
    // Stored matrices: rows x cols with `pad` spare elements per row, and
    // spare elements between matrices too.
    const int64_t aRows = c.transA ? c.k : c.m, aCols = c.transA ? c.m : c.k;
    const int64_t bRows = c.transB ? c.n : c.k, bCols = c.transB ? c.k : c.n;
    const int64_t lda = aCols + 3, ldb = bCols + 5, ldc = c.n + 2;
    const int64_t aInner = aRows * lda + 7, aOuter = c.inner * aInner + 1;
    const int64_t bInner = c.broadcastB ? 0 : bRows * ldb + 2;
    const int64_t bOuter = c.broadcastB ? 0 : c.inner * bInner + 3;
    const int64_t cInner = c.m * ldc + 4, cOuter = c.inner * cInner + 6;
    std::vector<float> af(c.outer * aOuter), bf(c.broadcastB
                                                   ? bRows * ldb
                                                   : c.outer * bOuter);
    for (float &x : af)
      x = small(gen);
    for (float &x : bf)
      x = small(gen);
    std::vector<bf16> a(af.begin(), af.end()), b(bf.begin(), bf.end());
    auto at = [](const std::vector<float> &v, int64_t base, int64_t ld,
                 bool trans, int64_t r, int64_t col) {
      return trans ? v[base + col * ld + r] : v[base + r * ld + col];
    };
    for (int call = 0; call < 3; ++call) {
      std::vector<bf16> cm(c.outer * cOuter, bf16(-7.0f));
      gemmStrided(c.transA, c.transB, c.outer, c.inner, c.m, c.n, c.k,
                  a.data(), aOuter, aInner, lda, b.data(), bOuter, bInner,
                  ldb, cm.data(), cOuter, cInner, ldc);
      int64_t wrong = 0;
      std::vector<bool> written(cm.size(), false);
      for (int64_t o = 0; o < c.outer; ++o)
        for (int64_t in = 0; in < c.inner; ++in)
          for (int64_t r = 0; r < c.m; ++r)
            for (int64_t col = 0; col < c.n; ++col) {
              double sum = 0;
              for (int64_t p = 0; p < c.k; ++p)
                sum += double(at(af, o * aOuter + in * aInner, lda,
                                 c.transA, r, p)) *
                       at(bf, o * bOuter + in * bInner, ldb, c.transB, p,
                          col);
              const int64_t e = o * cOuter + in * cInner + r * ldc + col;
              written[e] = true;
              wrong += cm[e].bits != bf16(static_cast<float>(sum)).bits;
            }
      int64_t padding = 0;
      for (size_t e = 0; e < cm.size(); ++e)
        padding += !written[e] && float(cm[e]) != -7.0f;
      EXPECT_EQ(wrong, 0) << "call " << call;
      EXPECT_EQ(padding, 0) << "call " << call;
    }
  }
  // Each case's check of its matmul and two matmul calls, split (where
  // oneDNN has bf16 kernels for this CPU).
  const Bf16MatmulCounts after = bf16MatmulCounts();
  EXPECT_EQ(after.refusedShapes, before.refusedShapes);
  if (bf16MatmulAvailable() && std::thread::hardware_concurrency() > 1 &&
      !std::getenv("OMP_NUM_THREADS")) {
    EXPECT_GE(after.splitCalls - before.splitCalls, 5 * 3);
  }
}

#endif

INSTANTIATE_TEST_SUITE_P(AllTransposes, Bf16GemmTest, allTransposes());

class GemmBiasTest : public ::testing::TestWithParam<GemmCase> {};

TEST_P(GemmBiasTest, AddsTheBiasToEveryRowOfTheProduct) {
  const GemmCase p = GetParam();
  const int64_t m = 6, n = 9, k = 5;
  std::vector<float> a = randomFloats(m * k, 3), b = randomFloats(k * n, 4);
  std::vector<float> bias = randomFloats(n, 5);
  std::vector<float> c(m * n, -7.0f); // overwritten, not accumulated onto
  gemmBias(p.transA, p.transB, m, n, k, a.data(), b.data(), bias.data(),
           c.data());
  std::vector<double> rows(m * n);
  for (int64_t i = 0; i < m * n; ++i)
    rows[i] = bias[i % n];
  expectClose(c, referenceProduct(p, m, n, k, a, b, rows), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(AllTransposes, GemmBiasTest, allTransposes());

class GemmAccumulateTest : public ::testing::TestWithParam<GemmCase> {};

TEST_P(GemmAccumulateTest, AddsTheProductOntoWhatCHolds) {
  const GemmCase p = GetParam();
  // Large enough that the library blocks K (its partial sums go onto C in
  // turn) and to take the critical-stride path's copies (n = 256).
  const int64_t m = 33, n = 256, k = 300;
  std::vector<float> a = randomFloats(m * k, 13), b = randomFloats(k * n, 14);
  std::vector<float> start = randomFloats(m * n, 15), c = start;
  gemmAccumulate(p.transA, p.transB, m, n, k, a.data(), b.data(), c.data());
  expectClose(c,
              referenceProduct(p, m, n, k, a, b,
                               std::vector<double>(start.begin(), start.end())),
              1e-4);
}

INSTANTIATE_TEST_SUITE_P(AllTransposes, GemmAccumulateTest,
                         allTransposes());

TEST(GemmAccumulateTest, EmptyContractionLeavesC) {
  std::vector<float> c = {1, -2, 3, 4, 5, -6};
  gemmAccumulate(false, false, 2, 3, 0, nullptr, nullptr, c.data());
  EXPECT_EQ(c, (std::vector<float>{1, -2, 3, 4, 5, -6}));
}

TEST(GemmBiasTest, EmptyContractionGivesTheBias) {
  std::vector<float> c(6, 42.0f), bias = {1, -2, 3};
  gemmBias(false, false, 2, 3, 0, nullptr, nullptr, bias.data(), c.data());
  EXPECT_EQ(c, (std::vector<float>{1, -2, 3, 1, -2, 3}));
}

TEST(GemmBiasTest, GeluEpilogueWritesThePreActivationAndItsGelu) {
  const int64_t m = 6, n = 9, k = 5;
  std::vector<float> a = randomFloats(m * k, 6), b = randomFloats(k * n, 7);
  std::vector<float> bias = randomFloats(n, 8);
  std::vector<float> pre(m * n, -7.0f), act(m * n, -7.0f), biased(m * n);
  gemmBiasGelu(false, true, m, n, k, a.data(), b.data(), bias.data(),
               pre.data(), act.data());
  gemmBias(false, true, m, n, k, a.data(), b.data(), bias.data(),
           biased.data());
  EXPECT_EQ(pre, biased);
  // PyTorch's gelu(approximate="tanh"), in double.
  std::vector<double> ref(act.size());
  for (size_t i = 0; i < ref.size(); ++i) {
    double x = biased[i];
    ref[i] = 0.5 * x *
             (1.0 + std::tanh(std::sqrt(2.0 / M_PI) *
                              (x + 0.044715 * x * x * x)));
  }
  expectClose(act, ref, 1e-6);
}

TEST(GemmBiasTest, DGeluEpilogueScalesTheProductByGelusDerivative) {
  const int64_t m = 6, n = 9, k = 5;
  std::vector<float> a = randomFloats(m * k, 9), b = randomFloats(n * k, 10);
  std::vector<float> pre = randomFloats(m * n, 11);
  for (float &x : pre)
    x *= 4.0f; // the derivative's whole range, its dip below 0 included
  std::vector<float> product(m * n), grad(m * n, -7.0f);
  gemm(false, true, 1, m, n, k, a.data(), 0, b.data(), 0, product.data(), 0);
  gemmDGelu(false, true, m, n, k, a.data(), b.data(), pre.data(), grad.data());
  // The derivative of PyTorch's gelu(approximate="tanh"), in double: a
  // central difference of the GELU itself (step 1e-5), not the formula
  // the kernel evaluates.
  auto gelu = [](double x) {
    return 0.5 * x *
           (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
  };
  std::vector<double> ref(grad.size());
  for (size_t i = 0; i < ref.size(); ++i) {
    double x = pre[i], h = 1e-5;
    ref[i] = product[i] * (gelu(x + h) - gelu(x - h)) / (2 * h);
  }
  expectClose(grad, ref, 1e-5);
}

//===----------------------------------------------------------------------===//
// softmax / log_softmax
//===----------------------------------------------------------------------===//

std::vector<double> referenceSoftmax(const std::vector<float> &x, int64_t outer,
                                     int64_t n, int64_t inner, bool log) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) { return o * n * inner + j * inner + i; };
      double max = -INFINITY;
      for (int64_t j = 0; j < n; ++j)
        max = std::max(max, static_cast<double>(x[at(j)]));
      double sum = 0;
      for (int64_t j = 0; j < n; ++j)
        sum += std::exp(x[at(j)] - max);
      for (int64_t j = 0; j < n; ++j)
        y[at(j)] = log ? x[at(j)] - max - std::log(sum)
                       : std::exp(x[at(j)] - max) / sum;
    }
  return y;
}

TEST(SoftmaxTest, MiddleAxisMatchesReference) {
  const int64_t outer = 3, n = 5, inner = 4;
  std::vector<float> x = randomFloats(outer * n * inner, 3, 10.0f);
  std::vector<float> y(x.size());
  softmax(x.data(), y.data(), outer, n, inner, /*log=*/false);
  expectClose(y, referenceSoftmax(x, outer, n, inner, false));
  // Each (outer, inner) lane sums to 1.
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double sum = 0;
      for (int64_t j = 0; j < n; ++j)
        sum += y[o * n * inner + j * inner + i];
      EXPECT_NEAR(sum, 1.0, 1e-6);
    }
}

TEST(SoftmaxTest, Bf16IsTheReferenceOfTheBf16InputRoundedOnce) {
  // The probabilities of the bf16 inputs, computed in double by the
  // reference and rounded to bf16: equal, or one bf16 step apart where the
  // f32 kernel's result sits at a rounding boundary. Along a middle axis
  // (the whole tensor widened first), along rows (each row widened and
  // rounded in one pass; the attention scores' case, long rows included),
  // and rows in place.
  struct Case {
    int64_t outer, n, inner;
    bool inPlace;
  };
  for (Case c : {Case{3, 7, 2, false}, Case{3, 7, 1, false},
                 Case{64, 130, 1, false}, Case{64, 130, 1, true}}) {
    SCOPED_TRACE("n " + std::to_string(c.n) + " inner " +
                 std::to_string(c.inner) + (c.inPlace ? " in place" : ""));
    std::vector<float> xf = randomFloats(c.outer * c.n * c.inner, 9, 10.0f);
    std::vector<bf16> x(xf.begin(), xf.end()), y(x.size());
    std::vector<float> widened(x.begin(), x.end());
    std::vector<bf16> &out = c.inPlace ? x : y;
    softmax(x.data(), out.data(), c.outer, c.n, c.inner, /*log=*/false);
    std::vector<double> ref =
        referenceSoftmax(widened, c.outer, c.n, c.inner, false);
    int inexact = 0;
    for (size_t i = 0; i < out.size(); ++i) {
      float expected = bf16(static_cast<float>(ref[i]));
      if (float(out[i]) != expected) {
        ++inexact;
        EXPECT_NEAR(float(out[i]), expected, expected * 0x1p-7) << i;
      }
    }
    EXPECT_LE(inexact, static_cast<int>(out.size() / 100) + 2);
  }
}

TEST(SoftmaxTest, LogSoftmaxMatchesReference) {
  const int64_t outer = 7, n = 33, inner = 1;
  std::vector<float> x = randomFloats(outer * n, 4, 30.0f);
  std::vector<float> y(x.size());
  softmax(x.data(), y.data(), outer, n, inner, /*log=*/true);
  expectClose(y, referenceSoftmax(x, outer, n, inner, true));
}

TEST(SoftmaxTest, LargeLogitsDoNotOverflowAndNaNPropagates) {
  std::vector<float> x = {1000.0f, 1000.0f, 0.0f, NAN};
  std::vector<float> y(4);
  softmax(x.data(), y.data(), 2, 2, 1, false);
  EXPECT_FLOAT_EQ(y[0], 0.5f);
  EXPECT_FLOAT_EQ(y[1], 0.5f);
  EXPECT_TRUE(std::isnan(y[2]));
  EXPECT_TRUE(std::isnan(y[3]));
}

TEST(SoftmaxTest, InPlace) {
  std::vector<float> x = randomFloats(12, 5);
  std::vector<double> ref = referenceSoftmax(x, 3, 4, 1, false);
  softmax(x.data(), x.data(), 3, 4, 1, false);
  expectClose(x, ref);
}

//===----------------------------------------------------------------------===//
// layer_norm / rms_norm
//===----------------------------------------------------------------------===//

TEST(NormTest, LayerNormWithAndWithoutAffine) {
  const int64_t rows = 6, cols = 37;
  const double eps = 1e-5;
  std::vector<float> x = randomFloats(rows * cols, 6, 5.0f);
  std::vector<float> scale = randomFloats(cols, 7);
  std::vector<float> bias = randomFloats(cols, 8);
  for (int affine = 0; affine < 2; ++affine) {
    std::vector<float> y(x.size());
    layerNorm(x.data(), affine ? scale.data() : nullptr,
              affine ? bias.data() : nullptr, y.data(), rows, cols, eps);
    std::vector<double> ref(x.size());
    for (int64_t r = 0; r < rows; ++r) {
      double mean = 0, var = 0;
      for (int64_t j = 0; j < cols; ++j)
        mean += x[r * cols + j];
      mean /= cols;
      for (int64_t j = 0; j < cols; ++j)
        var += (x[r * cols + j] - mean) * (x[r * cols + j] - mean);
      var /= cols;
      for (int64_t j = 0; j < cols; ++j) {
        double v = (x[r * cols + j] - mean) / std::sqrt(var + eps);
        ref[r * cols + j] = affine ? v * scale[j] + bias[j] : v;
      }
    }
    expectClose(y, ref, 1e-6);
  }
}

// A bf16 output (loom-fuse-norm-narrowing) holds the f32 norm, checked
// against the formula above, rounded once: a norm and a conversion after
// it, bit for bit.
TEST(NormTest, Bf16OutputIsTheF32NormRoundedOnce) {
  const int64_t rows = 7, cols = 300;
  std::vector<float> x = randomFloats(rows * cols, 11, 3.0f);
  std::vector<float> scale = randomFloats(cols, 12), bias = randomFloats(cols, 13);
  std::vector<float> wide(x.size());
  std::vector<bf16> narrow(x.size());
  auto expectRounded = [&](const char *what) {
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_EQ(narrow[i].bits, bf16::round(wide[i])) << what << " element " << i;
  };
  layerNorm(x.data(), scale.data(), bias.data(), wide.data(), rows, cols, 1e-5);
  layerNorm(x.data(), scale.data(), bias.data(), narrow.data(), rows, cols, 1e-5);
  expectRounded("layer norm");
  rmsNorm(x.data(), scale.data(), wide.data(), rows, cols, 1e-6);
  rmsNorm(x.data(), scale.data(), narrow.data(), rows, cols, 1e-6);
  expectRounded("rms norm");
}

TEST(NormTest, LayerNormOfAConstantRowIsZero) {
  std::vector<float> x(8, 3.25f), y(8, 1.0f);
  layerNorm(x.data(), nullptr, nullptr, y.data(), 1, 8, 1e-5);
  EXPECT_EQ(y, std::vector<float>(8, 0.0f));
}

// normGrad against central differences of the norms themselves (nothing
// of the gradient formula): L = sum(w * norm(x)), with w the cotangent.
// 40 rows put more than one row in some of the kernel's row blocks.
TEST(NormTest, NormGradIsTheNormsDerivative) {
  const int64_t rows = 40, cols = 13;
  const double eps = 1e-5;
  const float h = 1e-2f;
  std::vector<float> x = randomFloats(rows * cols, 21, 3.0f);
  std::vector<float> w = randomFloats(rows * cols, 22);
  std::vector<float> scale = randomFloats(cols, 23), bias = randomFloats(cols, 24);
  for (int rms = 0; rms < 2; ++rms) {
    for (int affine = 0; affine < 2; ++affine) {
      SCOPED_TRACE(std::string(rms ? "rms" : "layer") +
                   (affine ? " norm with scale" : " norm"));
      const float *s = affine ? scale.data() : nullptr;
      // The loss over `row` (-1: all rows) at x, scale and bias.
      auto loss = [&](const std::vector<float> &xs, const std::vector<float> &ss,
                      const std::vector<float> &bs, int64_t row) {
        std::vector<float> y(xs.size());
        const float *sp = affine ? ss.data() : nullptr;
        if (rms)
          rmsNorm(xs.data(), sp, y.data(), rows, cols, eps);
        else
          layerNorm(xs.data(), sp, bs.data(), y.data(), rows, cols, eps);
        double l = 0;
        for (int64_t i = 0; i < rows * cols; ++i)
          if (row < 0 || i / cols == row)
            l += static_cast<double>(w[i]) * y[i];
        return l;
      };
      std::vector<float> dx(x.size()), dscale(cols), dbias(cols);
      normGrad(x.data(), w.data(), s, nullptr, dx.data(), dscale.data(),
               dbias.data(), rows, cols, eps, rms);
      for (int64_t i = 0; i < rows * cols; ++i) {
        std::vector<float> up = x, down = x;
        up[i] += h;
        down[i] -= h;
        double fd = (loss(up, scale, bias, i / cols) -
                     loss(down, scale, bias, i / cols)) /
                    (static_cast<double>(up[i]) - down[i]);
        ASSERT_NEAR(dx[i], fd, 2e-3 + 2e-3 * std::fabs(fd)) << "dx " << i;
      }
      for (int64_t j = 0; j < cols; ++j) {
        double sumW = 0;
        for (int64_t r = 0; r < rows; ++r)
          sumW += w[r * cols + j];
        EXPECT_NEAR(dbias[j], sumW, 1e-4 * (1 + std::fabs(sumW))) << j;
        if (!affine)
          continue;
        std::vector<float> up = scale, down = scale;
        up[j] += h;
        down[j] -= h;
        double fd = (loss(x, up, bias, -1) - loss(x, down, bias, -1)) /
                    (static_cast<double>(up[j]) - down[j]);
        EXPECT_NEAR(dscale[j], fd, 1e-3 * (1 + std::fabs(fd))) << "dscale " << j;
      }
    }
  }
  // No rows: the parameter gradients are zero, nothing else is written.
  std::vector<float> dscale(cols, 7.0f), dbias(cols, 7.0f);
  normGrad(nullptr, static_cast<const float *>(nullptr), nullptr, nullptr,
           nullptr, dscale.data(), dbias.data(), 0, cols, eps, false);
  EXPECT_EQ(dscale, std::vector<float>(cols, 0.0f));
  EXPECT_EQ(dbias, std::vector<float>(cols, 0.0f));
}

// loom-fuse-norm-grad's two folds are exact: a bf16 cotangent is read as
// its widening, and the residual is added as the add kernel added it.
TEST(NormTest, NormGradOfBf16CotangentOntoResidualIsTheUnfusedBits) {
  const int64_t rows = 37, cols = 70;
  std::vector<float> x = randomFloats(rows * cols, 31, 3.0f);
  std::vector<float> residual = randomFloats(rows * cols, 32);
  std::vector<float> scale = randomFloats(cols, 33);
  std::vector<bf16> g16(x.size());
  std::vector<float> g(x.size());
  std::vector<float> wide = randomFloats(x.size(), 34);
  for (size_t i = 0; i < x.size(); ++i) {
    g16[i] = bf16(wide[i]);
    g[i] = static_cast<float>(g16[i]);
  }
  for (int rms = 0; rms < 2; ++rms) {
    std::vector<float> dx(x.size()), ds(cols), db(cols);
    normGrad(x.data(), g.data(), scale.data(), nullptr, dx.data(), ds.data(),
             db.data(), rows, cols, 1e-5, rms);
    std::vector<float> fused(x.size()), fusedDs(cols), fusedDb(cols);
    normGrad(x.data(), g16.data(), scale.data(), residual.data(), fused.data(),
             fusedDs.data(), fusedDb.data(), rows, cols, 1e-5, rms);
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_EQ(fused[i], residual[i] + dx[i]) << "element " << i;
    EXPECT_EQ(fusedDs, ds);
    EXPECT_EQ(fusedDb, db);
  }
}

TEST(NormTest, RmsNormWithAndWithoutScale) {
  const int64_t rows = 5, cols = 19;
  const double eps = 1e-6;
  std::vector<float> x = randomFloats(rows * cols, 9, 4.0f);
  std::vector<float> scale = randomFloats(cols, 10);
  for (int affine = 0; affine < 2; ++affine) {
    std::vector<float> y(x.size());
    rmsNorm(x.data(), affine ? scale.data() : nullptr, y.data(), rows, cols,
            eps);
    std::vector<double> ref(x.size());
    for (int64_t r = 0; r < rows; ++r) {
      double ms = 0;
      for (int64_t j = 0; j < cols; ++j)
        ms += static_cast<double>(x[r * cols + j]) * x[r * cols + j];
      ms /= cols;
      for (int64_t j = 0; j < cols; ++j) {
        double v = x[r * cols + j] / std::sqrt(ms + eps);
        ref[r * cols + j] = affine ? v * scale[j] : v;
      }
    }
    expectClose(y, ref, 1e-6);
  }
}

//===----------------------------------------------------------------------===//
// cross_entropy
//===----------------------------------------------------------------------===//

double referenceSampleLoss(const float *row, int64_t classes, int64_t label) {
  double max = -INFINITY;
  for (int64_t c = 0; c < classes; ++c)
    max = std::max(max, static_cast<double>(row[c]));
  double sum = 0;
  for (int64_t c = 0; c < classes; ++c)
    sum += std::exp(row[c] - max);
  return -(row[label] - max - std::log(sum));
}

TEST(CrossEntropyTest, ReductionsWithIgnoreIndex) {
  Context ctx;
  const int64_t n = 6, classes = 5;
  std::vector<float> logits = randomFloats(n * classes, 11, 6.0f);
  std::vector<int64_t> labels = {0, -100, 4, 2, -100, 1};
  std::vector<double> per(n, 0.0);
  double total = 0;
  for (int64_t s = 0; s < n; ++s)
    if (labels[s] != -100) {
      per[s] = referenceSampleLoss(&logits[s * classes], classes, labels[s]);
      total += per[s];
    }

  std::vector<float> none(n, 7.0f);
  crossEntropy(ctx, "ce", logits.data(), labels.data(), none.data(), n, classes,
               Reduction::None, true, -100);
  expectClose(none, per, 1e-6);
  EXPECT_EQ(none[1], 0.0f);

  float mean = 0, sum = 0;
  crossEntropy(ctx, "ce", logits.data(), labels.data(), &mean, n, classes,
               Reduction::Mean, true, -100);
  crossEntropy(ctx, "ce", logits.data(), labels.data(), &sum, n, classes,
               Reduction::Sum, true, -100);
  EXPECT_NEAR(mean, total / 4, 1e-6); // 4 counted samples
  EXPECT_NEAR(sum, total, 1e-5);
}

// loom-fuse-loss-softmax: crossEntropySoftmax's loss is crossEntropy's and
// its probabilities are softmax's, bit for bit, on every row (ignored
// samples' too), for both label types.
TEST(CrossEntropyTest, SoftmaxOutputIsTheSoftmaxBits) {
  Context ctx;
  const int64_t n = 9, classes = 300;
  std::vector<float> logits = randomFloats(n * classes, 12, 6.0f);
  std::vector<int64_t> labels = {0, -100, 299, 2, -100, 1, 17, 5, 123};
  std::vector<int32_t> labels32(labels.begin(), labels.end());
  std::vector<float> softmaxed(logits.size());
  softmax(logits.data(), softmaxed.data(), n, classes, 1, false);
  for (Reduction reduction : {Reduction::None, Reduction::Mean}) {
    std::vector<float> loss(n), fusedLoss(n), probs(logits.size(), 7.0f);
    crossEntropy(ctx, "ce", logits.data(), labels.data(), loss.data(), n,
                 classes, reduction, true, -100);
    crossEntropySoftmax(ctx, "ce", logits.data(), labels.data(),
                        fusedLoss.data(), probs.data(), n, classes, reduction,
                        true, -100);
    EXPECT_EQ(fusedLoss, loss);
    EXPECT_EQ(probs, softmaxed);
    std::fill(probs.begin(), probs.end(), 7.0f);
    crossEntropySoftmax(ctx, "ce", logits.data(), labels32.data(),
                        fusedLoss.data(), probs.data(), n, classes, reduction,
                        true, -100);
    EXPECT_EQ(fusedLoss, loss);
    EXPECT_EQ(probs, softmaxed);
  }
}

TEST(CrossEntropyTest, MeanOverOnlyIgnoredSamplesIsNaN) {
  Context ctx;
  std::vector<float> logits = {1, 2, 3, 4};
  std::vector<int64_t> labels = {-1, -1};
  float out = 0;
  crossEntropy(ctx, "ce", logits.data(), labels.data(), &out, 2, 2,
               Reduction::Mean, true, -1);
  EXPECT_TRUE(std::isnan(out));
}

TEST(CrossEntropyDeathTest, LabelOutOfRangeFailsNamingTheSample) {
  GTEST_FLAG_SET(death_test_style, "threadsafe"); // OpenBLAS threads
  Context ctx;
  std::vector<float> logits(3 * 4, 0.5f);
  std::vector<int64_t> labels = {1, 4, 0};
  float out = 0;
  EXPECT_EXIT(crossEntropy(ctx, "loom.cross_entropy", logits.data(),
                           labels.data(), &out, 3, 4, Reduction::Mean, false, 0),
              ::testing::ExitedWithCode(1),
              "loom-train: error: loom.cross_entropy: label 4 of sample 1 is "
              "out of range \\[0, 4\\)");
  std::vector<int64_t> negative = {1, 2, -5};
  EXPECT_EXIT(crossEntropy(ctx, "ce", logits.data(), negative.data(), &out, 3,
                           4, Reduction::Sum, true, -100),
              ::testing::ExitedWithCode(1),
              "label -5 of sample 2 is out of range \\[0, 4\\) and is not the "
              "ignore_index -100");
}

//===----------------------------------------------------------------------===//
// gather / scatter_add
//===----------------------------------------------------------------------===//

TEST(GatherTest, MiddleAxisWithRepeatsFloatAndInt64) {
  Context ctx;
  const int64_t outer = 2, axis = 5, inner = 3;
  std::vector<int64_t> indices = {4, 0, 4, 2};
  const int64_t numIndices = static_cast<int64_t>(indices.size());
  std::vector<float> data(outer * axis * inner);
  std::vector<int64_t> idata(data.size());
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<float>(i) * 0.5f;
    idata[i] = static_cast<int64_t>(i) * 1000000007LL;
  }
  std::vector<float> out(outer * numIndices * inner);
  std::vector<int64_t> iout(out.size());
  gather(ctx, "g", data.data(), 4, indices.data(), out.data(), outer, axis,
         inner, numIndices);
  gather(ctx, "g", idata.data(), 8, indices.data(), iout.data(), outer, axis,
         inner, numIndices);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < numIndices; ++i)
      for (int64_t e = 0; e < inner; ++e) {
        int64_t src = (o * axis + indices[i]) * inner + e;
        int64_t dst = (o * numIndices + i) * inner + e;
        EXPECT_EQ(out[dst], data[src]);
        EXPECT_EQ(iout[dst], idata[src]);
      }
}

TEST(GatherDeathTest, NegativeAndTooLargeIndicesFail) {
  GTEST_FLAG_SET(death_test_style, "threadsafe"); // OpenBLAS threads
  Context ctx;
  std::vector<float> data(6), out(2);
  std::vector<int64_t> negative = {0, -1};
  EXPECT_EXIT(gather(ctx, "loom.gather", data.data(), 4, negative.data(),
                     out.data(), 1, 6, 1, 2),
              ::testing::ExitedWithCode(1),
              "loom.gather: index -1 at position 1 is out of range \\[0, 6\\)");
  std::vector<int64_t> large = {6, 0};
  EXPECT_EXIT(gather(ctx, "loom.gather", data.data(), 4, large.data(),
                     out.data(), 1, 6, 1, 2),
              ::testing::ExitedWithCode(1),
              "index 6 at position 0 is out of range \\[0, 6\\)");
}

TEST(ScatterAddTest, DuplicateIndicesAccumulateInDouble) {
  Context ctx;
  const int64_t outer = 2, axis = 4, inner = 3;
  std::vector<int64_t> indices = {1, 3, 1, 1, 0};
  const int64_t numIndices = static_cast<int64_t>(indices.size());
  std::vector<float> target = randomFloats(outer * axis * inner, 12);
  std::vector<float> updates = randomFloats(outer * numIndices * inner, 13);
  // One update far larger than the others: float accumulation would lose
  // the small ones, double accumulation keeps them.
  updates[inner * 2] = 1e8f;
  updates[inner * 3] = -1e8f;
  std::vector<double> ref(target.begin(), target.end());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < numIndices; ++i)
      for (int64_t e = 0; e < inner; ++e)
        ref[(o * axis + indices[i]) * inner + e] +=
            updates[(o * numIndices + i) * inner + e];
  std::vector<float> out(target.size());
  scatterAdd(ctx, "s", target.data(), indices.data(), updates.data(),
             out.data(), outer, axis, inner, numIndices);
  for (size_t i = 0; i < out.size(); ++i)
    EXPECT_EQ(out[i], static_cast<float>(ref[i])) << "element " << i;
  // In place (out aliases target) gives the same.
  std::vector<float> inPlace = target;
  scatterAdd(ctx, "s", inPlace.data(), indices.data(), updates.data(),
             inPlace.data(), outer, axis, inner, numIndices);
  EXPECT_EQ(inPlace, out);
}

TEST(ScatterAddDeathTest, OutOfRangeIndexFails) {
  GTEST_FLAG_SET(death_test_style, "threadsafe"); // OpenBLAS threads
  Context ctx;
  std::vector<float> target(4), updates(1), out(4);
  std::vector<int64_t> indices = {4};
  EXPECT_EXIT(scatterAdd(ctx, "loom.scatter_add", target.data(),
                         indices.data(), updates.data(), out.data(), 1, 4, 1,
                         1),
              ::testing::ExitedWithCode(1),
              "loom.scatter_add: index 4 at position 0 is out of range");
}

//===----------------------------------------------------------------------===//
// i32 indices and labels (JAX's): the same results as i64, the same errors
//===----------------------------------------------------------------------===//

TEST(Int32IndexTest, GatherScatterAddAndCrossEntropyMatchInt64) {
  Context ctx;
  const int64_t outer = 2, axis = 5, inner = 3;
  std::vector<int64_t> indices64 = {4, 0, 4, 2, 1};
  std::vector<int32_t> indices32(indices64.begin(), indices64.end());
  const int64_t numIndices = static_cast<int64_t>(indices64.size());
  std::vector<float> data = randomFloats(outer * axis * inner, 21);
  std::vector<float> out64(outer * numIndices * inner, -1.0f);
  std::vector<float> out32(out64.size(), -2.0f);
  gather(ctx, "g", data.data(), 4, indices64.data(), out64.data(), outer,
         axis, inner, numIndices);
  gather(ctx, "g", data.data(), 4, indices32.data(), out32.data(), outer,
         axis, inner, numIndices);
  EXPECT_EQ(out32, out64);
  EXPECT_EQ(out32[inner], data[0]); // position 1 reads row 0

  std::vector<float> updates = randomFloats(out64.size(), 22);
  std::vector<float> sum64(data.size()), sum32(data.size());
  scatterAdd(ctx, "s", data.data(), indices64.data(), updates.data(),
             sum64.data(), outer, axis, inner, numIndices);
  scatterAdd(ctx, "s", data.data(), indices32.data(), updates.data(),
             sum32.data(), outer, axis, inner, numIndices);
  EXPECT_EQ(sum32, sum64);
  EXPECT_NE(sum32, data); // the updates landed

  const int64_t n = 4, classes = 5;
  std::vector<float> logits = randomFloats(n * classes, 23, 4.0f);
  std::vector<int64_t> labels64 = {3, -100, 0, 4};
  std::vector<int32_t> labels32(labels64.begin(), labels64.end());
  for (Reduction r : {Reduction::None, Reduction::Mean, Reduction::Sum}) {
    std::vector<float> l64(n, 9.0f), l32(n, 8.0f);
    crossEntropy(ctx, "ce", logits.data(), labels64.data(), l64.data(), n,
                 classes, r, true, -100);
    crossEntropy(ctx, "ce", logits.data(), labels32.data(), l32.data(), n,
                 classes, r, true, -100);
    EXPECT_EQ(l32[0], l64[0]);
    if (r == Reduction::None) {
      EXPECT_EQ(l32, l64);
    }
  }
  float mean = 0;
  crossEntropy(ctx, "ce", logits.data(), labels32.data(), &mean, n, classes,
               Reduction::Mean, true, -100);
  EXPECT_NEAR(mean,
              (referenceSampleLoss(&logits[0], classes, 3) +
               referenceSampleLoss(&logits[2 * classes], classes, 0) +
               referenceSampleLoss(&logits[3 * classes], classes, 4)) /
                  3,
              1e-6);
}

TEST(Int32IndexDeathTest, OutOfRangeIndicesAndLabelsFailNamingTheOp) {
  GTEST_FLAG_SET(death_test_style, "threadsafe"); // OpenBLAS threads
  Context ctx;
  std::vector<float> data(6), out(2), updates(2), target(6);
  std::vector<int32_t> large = {0, 6};
  EXPECT_EXIT(gather(ctx, "loom.gather", data.data(), 4, large.data(),
                     out.data(), 1, 6, 1, 2),
              ::testing::ExitedWithCode(1),
              "loom.gather: index 6 at position 1 is out of range \\[0, 6\\)");
  std::vector<int32_t> lowest = {std::numeric_limits<int32_t>::min(), 0};
  EXPECT_EXIT(gather(ctx, "loom.gather", data.data(), 4, lowest.data(),
                     out.data(), 1, 6, 1, 2),
              ::testing::ExitedWithCode(1),
              "loom.gather: index -2147483648 at position 0 is out of range");
  std::vector<int32_t> negative = {1, -1};
  EXPECT_EXIT(scatterAdd(ctx, "loom.scatter_add", target.data(),
                         negative.data(), updates.data(), data.data(), 1, 6, 1,
                         2),
              ::testing::ExitedWithCode(1),
              "loom.scatter_add: index -1 at position 1 is out of range");
  std::vector<float> logits(3 * 4, 0.5f);
  std::vector<int32_t> labels = {1, 4, 0};
  float loss = 0;
  EXPECT_EXIT(crossEntropy(ctx, "loom.cross_entropy", logits.data(),
                           labels.data(), &loss, 3, 4, Reduction::Mean, false,
                           0),
              ::testing::ExitedWithCode(1),
              "loom.cross_entropy: label 4 of sample 1 is out of range");
}

//===----------------------------------------------------------------------===//
// copyStrided
//===----------------------------------------------------------------------===//

TEST(CopyStridedTest, Transpose) {
  // src [2, 3] row-major; dst [3, 2] = src^T: dst[i][j] = src[j][i].
  std::vector<float> src = {0, 1, 2, 3, 4, 5};
  std::vector<float> dst(6);
  int64_t shape[] = {3, 2}, strides[] = {1, 3};
  copyStrided(src.data(), dst.data(), 4, 2, shape, strides, 0);
  EXPECT_EQ(dst, (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

TEST(CopyStridedTest, ThreeDimensionalPermutationOfInt64) {
  // src [2, 3, 4]; dst [4, 2, 3] = permute(2, 0, 1).
  std::vector<int64_t> src(24);
  for (int i = 0; i < 24; ++i)
    src[i] = i * 1000003LL;
  std::vector<int64_t> dst(24);
  int64_t shape[] = {4, 2, 3}, strides[] = {1, 12, 4};
  copyStrided(src.data(), dst.data(), 8, 3, shape, strides, 0);
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 3; ++c)
        EXPECT_EQ(dst[(a * 2 + b) * 3 + c], src[b * 12 + c * 4 + a]);
}

TEST(CopyStridedTest, SliceWithOffsetAndStep) {
  // src [4, 5]; dst = src[1:3, 0:5:2] -> [2, 3].
  std::vector<float> src(20);
  for (int i = 0; i < 20; ++i)
    src[i] = static_cast<float>(i);
  std::vector<float> dst(6);
  int64_t shape[] = {2, 3}, strides[] = {5, 2};
  copyStrided(src.data(), dst.data(), 4, 2, shape, strides, 5);
  EXPECT_EQ(dst, (std::vector<float>{5, 7, 9, 10, 12, 14}));
}

TEST(CopyStridedTest, BroadcastWithZeroStrides) {
  // src [3] -> dst [2, 3] (rows repeat), and a scalar -> [2, 2].
  std::vector<float> src = {1, 2, 3};
  std::vector<float> dst(6);
  int64_t shape[] = {2, 3}, strides[] = {0, 1};
  copyStrided(src.data(), dst.data(), 4, 2, shape, strides, 0);
  EXPECT_EQ(dst, (std::vector<float>{1, 2, 3, 1, 2, 3}));
  std::vector<float> col(4);
  int64_t shape2[] = {2, 2}, strides2[] = {0, 0};
  copyStrided(src.data(), col.data(), 4, 2, shape2, strides2, 2);
  EXPECT_EQ(col, (std::vector<float>{3, 3, 3, 3}));
}

TEST(CopyStridedTest, RankZeroAndEmpty) {
  std::vector<float> src = {1, 2, 3};
  float one = 0;
  copyStrided(src.data(), &one, 4, 0, nullptr, nullptr, 2);
  EXPECT_EQ(one, 3.0f);
  float untouched = 9;
  int64_t shape[] = {0, 3}, strides[] = {3, 1};
  copyStrided(src.data(), &untouched, 4, 2, shape, strides, 0);
  EXPECT_EQ(untouched, 9.0f);
}

TEST(CopyStridedTest, LargeCopyTakesTheParallelPath) {
  // 256 x 300 transpose: above the parallel threshold.
  const int64_t r = 256, c = 300;
  std::vector<float> src(r * c);
  for (size_t i = 0; i < src.size(); ++i)
    src[i] = static_cast<float>(i);
  std::vector<float> dst(src.size());
  int64_t shape[] = {c, r}, strides[] = {1, c};
  copyStrided(src.data(), dst.data(), 4, 2, shape, strides, 0);
  for (int64_t i = 0; i < c; ++i)
    for (int64_t j = 0; j < r; ++j)
      ASSERT_EQ(dst[i * r + j], src[j * c + i]);
}

} // namespace

#if defined(__SSE2__)
// The runtime's compute threads flush denormals to zero (Threads.cpp): a
// product below FLT_MIN becomes 0, and a GEMM reading denormal inputs
// treats them as 0.
TEST(RuntimeThreads, DenormalsAreFlushedToZero) {
  unsigned saved = _mm_getcsr();
  volatile float tiny = 1e-30f;
  EXPECT_GT(tiny * 1e-10f, 0.0f); // a denormal, before
  flushDenormalsToZero();
  EXPECT_EQ(tiny * 1e-10f, 0.0f);
  float a[4] = {1e-40f, 1e-40f, 1e-40f, 1e-40f}, b[4] = {1e30f, 0, 0, 1e30f},
        c[4] = {1, 1, 1, 1};
  gemm(false, false, 1, 2, 2, 2, a, 0, b, 0, c, 0);
  for (float v : c)
    EXPECT_EQ(v, 0.0f);
  _mm_setcsr(saved);
}
#endif

TEST(Bf16Test, RoundsToNearestEvenAndQuietsNaN) {
  // Every bf16 bit pattern as the top half, with low halves below, at and
  // above the tie: every rounding case, the infinities, overflow to them,
  // subnormals and every NaN (quiet and signalling, both signs). The
  // reference decides by cases on the bits: a finite float rounds to its
  // top half when the low half is under 0x8000, to the next pattern up
  // (in magnitude) when over, and to the even one of the two at the tie; a
  // NaN keeps its sign and top payload and gets the quiet bit. bitsOf of
  // the rounded float (how the generated loops store) gives the same bits.
  int checked = 0;
  for (uint32_t top = 0; top <= 0xffffu; ++top)
    for (uint32_t low : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u,
                         0xffffu}) {
      const uint32_t u = top << 16 | low;
      float x;
      std::memcpy(&x, &u, sizeof x);
      const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
      uint32_t want = top;
      if (nan)
        want = top | 0x0040u;
      else if (low > 0x8000u || (low == 0x8000u && (top & 1u)))
        want = top + 1;
      ASSERT_EQ(bf16::round(x), want) << std::hex << u;
      const float wide = bf16::roundToFloat(x);
      uint32_t wideBits;
      std::memcpy(&wideBits, &wide, sizeof wide);
      ASSERT_EQ(wideBits, want << 16) << std::hex << u;
      // A stored bf16 result (rounded where computed) by its bits: the
      // same as rounding it again.
      ASSERT_EQ(bf16::bitsOf(wide), want) << std::hex << u;
      ++checked;
    }
  EXPECT_EQ(checked, 65536 * 6);
}

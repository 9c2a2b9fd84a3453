//===- CpuKernels.cpp - Library kernels of the CPU backend ----------------===//
//
// Numerics follow loom-run (lib/Interpreter): statistics and sums accumulate
// in double in a fixed order and each result is rounded to float once, so
// the results are the same for any number of threads. Two exceptions, for
// speed: gemm is the GEMM library's (cmake/LoomCpu.cmake: oneDNN's
// dnnl_sgemm, which may split k among threads, or cblas_sgemm; bf16:
// oneDNN's matmul, each shape checked once against the widened f32 gemm);
// softmax and cross-entropy evaluate exp in float (loom/Runtime/VecMath.h,
// vectorised), once per element, as PyTorch does, and sum a row in 8 lanes
// (still in double, in a fixed order). Kernels that can fail (bad labels or indices)
// check all their inputs first, on the calling thread, and only then start
// the parallel loops.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/CpuKernels.h"
#include "loom/Runtime/VecMath.h"
#include "RuntimeImpl.h"

#ifdef LOOM_GEMM_DNNL
#include <dnnl.h>
#include <oneapi/dnnl/dnnl.hpp>
#else
#include <cblas.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

#include <array>
#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#ifdef _OPENMP
#define LOOM_PRAGMA(x) _Pragma(#x)
/// A parallel loop when `work` (roughly: elements touched) is worth threads.
#define LOOM_PARALLEL_FOR(work)                                                \
  LOOM_PRAGMA(omp parallel for schedule(static) if ((work) >= kParallelWork))
#else
#define LOOM_PARALLEL_FOR(work)
#endif

namespace loom {
namespace rt {
namespace cpu {

namespace {

/// Below this many elements a loop runs on one thread.
[[maybe_unused]] constexpr int64_t kParallelWork = 1 << 15;

/// Lanes of the row reductions below: each lane folds every kLanes-th
/// element, then the lanes fold in order. A fixed order (the same bits for
/// any thread count) whose lanes are independent, so the loops vectorise;
/// one accumulator would be a serial chain of dependent additions.
constexpr int64_t kLanes = 8;

/// The largest of `n` floats `term(j)` that are not NaN (-inf if none).
/// Max is exact, so the order changes nothing. Callers need no NaN flag: a
/// NaN term makes exp(term - max) and so the row's sum NaN, and with it
/// every result of the row, as a NaN max would.
template <typename Term> float rowMax(int64_t n, Term term) {
  float lane[kLanes];
  for (int64_t l = 0; l < kLanes; ++l)
    lane[l] = -std::numeric_limits<float>::infinity();
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) {
      float v = term(j + l);
      lane[l] = v > lane[l] ? v : lane[l];
    }
  float max = -std::numeric_limits<float>::infinity();
  for (int64_t l = 0; l < kLanes; ++l)
    max = lane[l] > max ? lane[l] : max;
  for (; j < n; ++j) {
    float v = term(j);
    max = v > max ? v : max;
  }
  return max;
}

/// The sum of `n` floats `term(j)` in double, in kLanes lanes.
template <typename Term> double rowSum(int64_t n, Term term) {
  double lane[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int64_t l = 0; l < kLanes; ++l)
      lane[l] += static_cast<double>(term(j + l));
  double sum = 0.0;
  for (int64_t l = 0; l < kLanes; ++l)
    sum += lane[l];
  for (; j < n; ++j)
    sum += static_cast<double>(term(j));
  return sum;
}

[[noreturn]] void badCall(const char *op, const std::string &what) {
  fatal(op, what + " (a bug in the emitted code)");
}

std::string rangeText(int64_t size) {
  return "[0, " + std::to_string(size) + ")";
}

} // namespace

//===----------------------------------------------------------------------===//
// gemm
//===----------------------------------------------------------------------===//

namespace {

/// One row-major C = op(A) op(B) + beta C through the GEMM library; the
/// caller checked the sizes (k >= 1, all within int).
void callLibrary(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                 const float *a, int64_t lda, const float *b, int64_t ldb,
                 float beta, float *c, int64_t ldc) {
#ifdef LOOM_GEMM_DNNL
  dnnl_status_t status =
      dnnl_sgemm(transA ? 'T' : 'N', transB ? 'T' : 'N', m, n, k, 1.0f, a, lda,
                 b, ldb, beta, c, ldc);
  if (status != dnnl_success)
    badCall("gemm", "oneDNN's sgemm failed (status " +
                        std::to_string(static_cast<int>(status)) + ")");
#else
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), 1.0f, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), beta, c,
              static_cast<int>(ldc));
#endif
}

// Critical strides. Rows a multiple of 256 floats (1 KiB) apart fall into
// few cache sets, and on some CPUs a library's kernels then run at half
// speed: oneDNN 2.6 on an AVX2 AMD EPYC ran C = A^T B at 70 GFLOP/s with
// B's rows 4 KiB apart (256 x 1024 x 1024) and at 147 with them copied 16
// floats apart, copy included, while OpenBLAS packs and is immune. Whether
// the copy pays depends on the CPU, the library and the shape, so each
// shape (transposes, sizes, leading dimensions) called outside a parallel
// region is run as it is and with each such operand copied, twice each,
// and the fastest kept. The variants call the same kernel on the same
// values with only the rows' addresses moved, so the choice changes no
// bits (RuntimeKernelsTest's critical-stride tests check it).

/// The variants, in the order they are tried.
enum Variant { kDirect, kPadA, kPadB, kVariants };
constexpr int kRounds = 2;
/// Floats added to a copied operand's rows.
constexpr int64_t kPad = 16;
/// The largest operand copied (floats: 16 MiB).
constexpr int64_t kMaxCopy = int64_t(1) << 22;

std::atomic<GemmStridePolicy> stridePolicy{GemmStridePolicy::Tune};
std::atomic<int64_t> strideCopies{0};

bool critical(int64_t rows, int64_t ld) {
  return ld % 256 == 0 && rows >= 64 && rows * ld <= kMaxCopy;
}

/// The rows of a matrix (`rows` x `cols`, `ld` apart) copied into this
/// thread's scratch `slot` with rows `cols + kPad` apart.
const float *padRows(const float *x, int64_t rows, int64_t cols, int64_t ld,
                     int slot) {
  thread_local std::vector<float> scratch[2];
  std::vector<float> &buffer = scratch[slot];
  strideCopies.fetch_add(1, std::memory_order_relaxed);
  const int64_t to = cols + kPad;
  buffer.resize(static_cast<size_t>(rows * to));
  float *out = buffer.data();
  LOOM_PARALLEL_FOR(rows * cols)
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(out + r * to, x + r * ld,
                static_cast<size_t>(cols) * sizeof(float));
  return out;
}

/// What has been measured of one shape.
struct Trials {
  double seconds[kVariants] = {}; // the fastest run of each variant
  int runs = 0;                   // of the eligible variants, in turn
  int choice = -1;                // once every round has run
};

/// The shapes seen so far and their trials; one per process.
class StrideTuner {
public:
  using Key = std::array<int64_t, 7>;

  /// The variant to run now among `eligible` (a bit per variant).
  int pick(const Key &key, unsigned eligible) {
    std::lock_guard<std::mutex> lock(mutex);
    Trials &t = shapes[key];
    if (t.choice >= 0)
      return t.choice;
    int turn = t.runs % __builtin_popcount(eligible);
    for (int v = 0; v < kVariants; ++v)
      if (eligible & (1u << v) && turn-- == 0)
        return v;
    return kDirect;
  }

  void record(const Key &key, unsigned eligible, int variant,
              double seconds) {
    std::lock_guard<std::mutex> lock(mutex);
    Trials &t = shapes[key];
    if (t.choice >= 0)
      return;
    double &best = t.seconds[variant];
    best = best == 0 ? seconds : std::min(best, seconds);
    if (++t.runs < kRounds * __builtin_popcount(eligible))
      return;
    t.choice = kDirect;
    for (int v = 0; v < kVariants; ++v)
      if (eligible & (1u << v) && t.seconds[v] < t.seconds[t.choice])
        t.choice = v;
  }

private:
  std::mutex mutex;
  std::map<Key, Trials> shapes;
};

StrideTuner &strideTuner() {
  static StrideTuner tuner;
  return tuner;
}

/// callLibrary, with an operand whose rows lie a critical stride apart
/// copied first when that has been measured faster for this shape (or
/// always, or never, as setGemmStridePolicy says).
void libraryGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                 const float *a, int64_t lda, const float *b, int64_t ldb,
                 float beta, float *c, int64_t ldc) {
  GemmStridePolicy policy = stridePolicy.load(std::memory_order_relaxed);
  const int64_t aRows = transA ? k : m, aCols = transA ? m : k;
  const int64_t bRows = transB ? n : k, bCols = transB ? k : n;
  unsigned eligible = 1u << kDirect;
  if (critical(aRows, lda))
    eligible |= 1u << kPadA;
  if (critical(bRows, ldb))
    eligible |= 1u << kPadB;
  bool inParallel = false;
#ifdef _OPENMP
  inParallel = omp_in_parallel();
#endif
  if (eligible == 1u << kDirect || policy == GemmStridePolicy::Direct ||
      (policy == GemmStridePolicy::Tune && inParallel)) {
    callLibrary(transA, transB, m, n, k, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  auto run = [&](int variant) {
    const float *ua = a, *ub = b;
    int64_t ulda = lda, uldb = ldb;
    if (variant == kPadA) {
      ua = padRows(a, aRows, aCols, lda, 0);
      ulda = aCols + kPad;
    }
    if (variant == kPadB) {
      ub = padRows(b, bRows, bCols, ldb, 1);
      uldb = bCols + kPad;
    }
    callLibrary(transA, transB, m, n, k, ua, ulda, ub, uldb, beta, c, ldc);
  };
  if (policy == GemmStridePolicy::Pad) {
    run(eligible & (1u << kPadA) ? kPadA : kPadB);
    return;
  }
  const StrideTuner::Key key = {transA, transB, m, n, k, lda, ldb};
  StrideTuner &tuner = strideTuner();
  int variant = tuner.pick(key, eligible);
  auto start = std::chrono::steady_clock::now();
  run(variant);
  std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  tuner.record(key, eligible, variant, took.count());
}

/// gemm as the strided form with dense matrices (either element type).
template <typename T>
void denseGemm(bool transA, bool transB, int64_t batch, int64_t m, int64_t n,
               int64_t k, const T *a, int64_t strideA, const T *b,
               int64_t strideB, T *c, int64_t strideC) {
  if (batch < 0)
    badCall("gemm", "negative batch " + std::to_string(batch));
  gemmStrided(transA, transB, 1, batch, m, n, k, a, 0, strideA,
              transA ? m : k, b, 0, strideB, transB ? k : n, c, 0, strideC,
              n);
}

} // namespace

GemmStridePolicy setGemmStridePolicy(GemmStridePolicy policy) {
  return stridePolicy.exchange(policy);
}

int64_t gemmStrideCopies() {
  return strideCopies.load(std::memory_order_relaxed);
}

void gemm(bool transA, bool transB, int64_t batch, int64_t m, int64_t n,
          int64_t k, const float *a, int64_t strideA, const float *b,
          int64_t strideB, float *c, int64_t strideC) {
  denseGemm(transA, transB, batch, m, n, k, a, strideA, b, strideB, c,
            strideC);
}

namespace {

/// gemmStrided, and with `bias` (n elements) gemmBias's epilogue: each of
/// C's rows starts as the bias and the product is added onto it (beta 1);
/// with `accumulate`, the product is added onto what C holds (beta 1).
void stridedGemm(bool transA, bool transB, int64_t outer, int64_t inner,
                 int64_t m, int64_t n, int64_t k, const float *a,
                 int64_t aOuter, int64_t aInner, int64_t lda, const float *b,
                 int64_t bOuter, int64_t bInner, int64_t ldb, float *c,
                 int64_t cOuter, int64_t cInner, int64_t ldc,
                 const float *bias, bool accumulate = false) {
  if (outer < 0 || inner < 0 || m < 0 || n < 0 || k < 0)
    badCall("gemm", "negative size: batch " + std::to_string(outer) + " x " +
                        std::to_string(inner) + ", m " + std::to_string(m) +
                        ", n " + std::to_string(n) + ", k " +
                        std::to_string(k));
  int64_t batch = outer * inner;
  if (batch == 0 || m == 0 || n == 0)
    return;
  if (ldc < n)
    badCall("gemm", "ldc " + std::to_string(ldc) + " < n " + std::to_string(n));
  // C's rows before the product is added: the bias, or none (beta 0).
  auto startRows = [&](float *ci) {
    for (int64_t r = 0; r < m; ++r) {
      if (bias)
        std::memcpy(ci + r * ldc, bias, static_cast<size_t>(n) * sizeof(float));
      else
        std::memset(ci + r * ldc, 0, static_cast<size_t>(n) * sizeof(float));
    }
  };
  if (k == 0) { // an empty sum (BLAS needs k >= 1 for its lda checks)
    if (accumulate)
      return; // C + 0
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        startRows(c + o * cOuter + i * cInner);
    return;
  }
  // CBLAS takes int sizes and leading dimensions (one limit for either
  // library).
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX ||
      ldb > INT_MAX || ldc > INT_MAX)
    badCall("gemm", "a matrix dimension exceeds the BLAS limit " +
                        std::to_string(INT_MAX));
  if (lda < (transA ? m : k) || ldb < (transB ? k : n))
    badCall("gemm", "a leading dimension is shorter than its rows");
  auto one = [&](int64_t index) {
    int64_t o = index / inner, i = index % inner;
    const float *ai = a + o * aOuter + i * aInner;
    const float *bi = b + o * bOuter + i * bInner;
    float *ci = c + o * cOuter + i * cInner;
    if (bias)
      startRows(ci);
    libraryGemm(transA, transB, m, n, k, ai, lda, bi, ldb,
                bias || accumulate ? 1.0f : 0.0f, ci, ldc);
  };
#ifdef _OPENMP
  // A batch of at least one matrix per thread: the matrices in parallel,
  // each gemm on its thread (oneDNN and OpenBLAS's OpenMP build run
  // single-threaded inside a parallel region), rather than every thread on
  // each small gemm in turn with a fork and join per matrix.
  int threads = omp_get_max_threads();
  if (batch > 1 && threads > 1 && batch >= threads && !omp_in_parallel()) {
#pragma omp parallel for schedule(static)
    for (int64_t index = 0; index < batch; ++index)
      one(index);
    return;
  }
#endif
  for (int64_t index = 0; index < batch; ++index)
    one(index);
}

} // namespace

void gemmStrided(bool transA, bool transB, int64_t outer, int64_t inner,
                 int64_t m, int64_t n, int64_t k, const float *a,
                 int64_t aOuter, int64_t aInner, int64_t lda, const float *b,
                 int64_t bOuter, int64_t bInner, int64_t ldb, float *c,
                 int64_t cOuter, int64_t cInner, int64_t ldc) {
  stridedGemm(transA, transB, outer, inner, m, n, k, a, aOuter, aInner, lda,
              b, bOuter, bInner, ldb, c, cOuter, cInner, ldc,
              /*bias=*/nullptr);
}

void gemmBias(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
              const float *a, const float *b, const float *bias, float *c) {
  stridedGemm(transA, transB, 1, 1, m, n, k, a, 0, 0, transA ? m : k, b, 0, 0,
              transB ? k : n, c, 0, 0, n, bias);
}

void gemmAccumulate(bool transA, bool transB, int64_t m, int64_t n,
                    int64_t k, const float *a, const float *b, float *c) {
  stridedGemm(transA, transB, 1, 1, m, n, k, a, 0, 0, transA ? m : k, b, 0, 0,
              transB ? k : n, c, 0, 0, n, /*bias=*/nullptr,
              /*accumulate=*/true);
}

namespace {

// The tanh GELU's constants as convert-loom-to-loomrt's f32 constants
// round them: 2 sqrt(2 / pi), 0.044715 and 3 * 0.044715.
constexpr float kGeluK2 = 1.59576917f;
constexpr float kGeluC = 0.0447149985f;
constexpr float kGeluC3 = 0.134145007f;

/// sigmoid(z) as convert-loom-to-loomrt writes it: 1 / (1 + e^-z).
inline float geluSigmoid(float z) { return 1.0f / (1.0f + vm::exp(-z)); }

} // namespace

void gemmBiasGelu(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                  const float *a, const float *b, const float *bias,
                  float *pre, float *c) {
  gemmBias(transA, transB, m, n, k, a, b, bias, pre);
  const int64_t count = m * n;
  // The operations of convert-loom-to-loomrt's loom.gelu (approximate =
  // tanh), in its order.
  LOOM_PARALLEL_FOR(count)
  for (int64_t i = 0; i < count; ++i) {
    const float x = pre[i];
    c[i] = x * geluSigmoid(kGeluK2 * (x + kGeluC * (x * (x * x))));
  }
}

void gemmDGelu(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
               const float *a, const float *b, const float *pre, float *c) {
  gemm(transA, transB, 1, m, n, k, a, 0, b, 0, c, 0);
  const int64_t count = m * n;
  // The operations of convert-loom-to-loomrt's loom.gelu_grad
  // (approximate = tanh), in its order.
  LOOM_PARALLEL_FOR(count)
  for (int64_t i = 0; i < count; ++i) {
    const float x = pre[i];
    const float x2 = x * x;
    const float s = geluSigmoid(kGeluK2 * (x + kGeluC * (x * x2)));
    const float dz = kGeluK2 * (1.0f + kGeluC3 * x2);
    c[i] = c[i] * (s * (1.0f + (x * (1.0f - s)) * dz));
  }
}

namespace {

/// Elements from the first to the last one that `outer` x `inner` matrices
/// of `rows` rows of `cols` elements, `ld` apart, touch.
int64_t stridedSpan(int64_t outer, int64_t inner, int64_t rows, int64_t cols,
                    int64_t outerStride, int64_t innerStride, int64_t ld) {
  if (outer == 0 || inner == 0 || rows == 0 || cols == 0)
    return 0;
  return (outer - 1) * outerStride + (inner - 1) * innerStride +
         (rows - 1) * ld + cols;
}

std::atomic<int64_t> bf16MatmulCalls{0}, bf16MatmulRefused{0},
    bf16MatmulSplit{0};

#ifdef LOOM_GEMM_DNNL
/// A strided bf16 gemm shape as oneDNN matmul primitives, one per part of
/// the product (a block of the batch, of C's rows or of its columns) that
/// a thread computes, and whether its first product agreed with the
/// widening path.
struct Bf16Matmul {
  enum class State { Unchecked, Agrees, Refused };
  /// One thread's block: a primitive on one thread and where its A, B and
  /// C start, in elements from the shape's.
  struct Part {
    dnnl::matmul primitive;
    dnnl::memory::desc a, b, c, bias;
    int64_t aOffset = 0, bOffset = 0, cOffset = 0, biasOffset = 0;
  };
  std::vector<Part> parts;
  /// Whether C's rows get a bias (n elements) added before the rounding.
  bool hasBias = false;
  std::atomic<State> state{State::Unchecked};

  /// C = op(A) op(B) (+ bias) into `c` (laid out as the shape's C).
  void run(const bf16 *a, const bf16 *b, const bf16 *bias, bf16 *c) const;
};

/// The OpenMP threads of this thread's next parallel regions (oneDNN's
/// too) set to one while it lives, and restored after: oneDNN's
/// primitives are built for and run on one thread. `threads` is what
/// they were.
struct OneThread {
#ifdef _OPENMP
  const int threads = omp_get_max_threads();
  OneThread() { omp_set_num_threads(1); }
  ~OneThread() { omp_set_num_threads(threads); }
#else
  const int threads = 1;
#endif
};

const dnnl::engine &cpuEngine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// Every primitive is built for and run on one thread, and a product is
// split into blocks, one per thread, instead: oneDNN 2.6's AMX matmul
// races when it splits some shapes among threads itself (16 x 50 x 32 with
// B transposed: a quarter of C wrong in 8 of 30 runs on 2 threads, never on
// 1). Each thread's block is its own primitive with its own (per-thread)
// scratchpad, so no two threads share a kernel's buffers. The blocks are
// fixed by the shape and the thread count, so a run gives the same bits
// as any other with as many threads; with another thread count oneDNN may
// pick another kernel or blocking for a block, and the sums' order (and
// their last bits) may differ, as the f32 gemm's do.
void Bf16Matmul::run(const bf16 *pa, const bf16 *pb, const bf16 *pbias,
                     bf16 *pc) const {
  auto runPart = [&](const Part &part) {
    thread_local dnnl::stream stream(cpuEngine());
    auto memory = [](const dnnl::memory::desc &d, const void *data) {
      return dnnl::memory(d, cpuEngine(), const_cast<void *>(data));
    };
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC, memory(part.a, pa + part.aOffset)},
        {DNNL_ARG_WEIGHTS, memory(part.b, pb + part.bOffset)},
        {DNNL_ARG_DST, memory(part.c, pc + part.cOffset)}};
    if (hasBias)
      args[DNNL_ARG_BIAS] = memory(part.bias, pbias + part.biasOffset);
    part.primitive.execute(stream, args);
    stream.wait();
  };
  const int count = static_cast<int>(parts.size());
#ifdef _OPENMP
  if (count > 1 && !omp_in_parallel()) {
#pragma omp parallel for num_threads(count) schedule(static, 1)
    for (int i = 0; i < count; ++i) {
      omp_set_num_threads(1); // this thread's task only
      runPart(parts[i]);
    }
    bf16MatmulSplit.fetch_add(1, std::memory_order_relaxed);
    return;
  }
#endif
  OneThread one;
  for (const Part &part : parts)
    runPart(part);
}

/// A block of a strided gemm's product: [o0, o0 + outer) of the outer
/// batch, [i0, i0 + inner) of the inner one, C's rows [r0, r0 + m) and
/// columns [j0, j0 + n).
struct GemmBlock {
  int64_t o0, outer, i0, inner, r0, m, j0, n;
};

/// How a product of `outer` x `inner` m x n matrices (k deep) is split
/// among `threads` threads: whole matrices where the batch divides evenly,
/// else bands of C's rows or columns (multiples of 16, AMX's tile), else
/// uneven batch blocks; one block where the product is too small for a
/// fork and join to pay (about 2 us of AMX work). oneDNN 2.6's AMX kernel
/// takes no operand that is a band of a wider matrix's columns (it falls
/// back to its AVX-512 bf16 gemm): a band of C's rows reads such a band
/// of a transposed A, a band of C's columns one of an untransposed B. So
/// rows where A is not transposed, else columns: AMX where B is
/// transposed, the AVX-512 gemm otherwise (the weight gradients, dY^T X).
/// Splitting their contraction instead (f32 partial sums on AMX, then
/// added) measured no faster in a GPT step.
std::vector<GemmBlock> splitGemm(bool transA, int64_t outer, int64_t inner,
                                 int64_t m, int64_t n, int64_t k,
                                 int threads) {
  const GemmBlock whole = {0, outer, 0, inner, 0, m, 0, n};
  const double work = double(outer) * inner * m * n * k;
  if (threads < 2 || work < double(1 << 20))
    return {whole};
  std::vector<GemmBlock> blocks;
  // Cuts `extent` into `threads` pieces of `align`-multiples along the
  // dimension whose start and size fields are `start` and `size`.
  using Field = int64_t GemmBlock::*;
  auto cut = [&](Field start, Field size, int64_t extent, int64_t align) {
    int64_t piece = (extent + threads - 1) / threads;
    piece = (piece + align - 1) / align * align;
    for (int64_t at = 0; at < extent; at += piece) {
      GemmBlock block = whole;
      block.*start = at;
      block.*size = std::min(piece, extent - at);
      blocks.push_back(block);
    }
  };
  const Field outerStart = &GemmBlock::o0, outerSize = &GemmBlock::outer;
  const Field innerStart = &GemmBlock::i0, innerSize = &GemmBlock::inner;
  const Field rowStart = &GemmBlock::r0, rowSize = &GemmBlock::m;
  const Field colStart = &GemmBlock::j0, colSize = &GemmBlock::n;
  const int64_t band = 16 * threads;
  if (outer % threads == 0)
    cut(outerStart, outerSize, outer, 1);
  else if (inner % threads == 0)
    cut(innerStart, innerSize, inner, 1);
  else if (!transA && m >= band)
    cut(rowStart, rowSize, m, 16);
  else if (n >= band)
    cut(colStart, colSize, n, 16);
  else if (m >= band)
    cut(rowStart, rowSize, m, 16);
  else if (outer >= threads)
    cut(outerStart, outerSize, outer, 1);
  else if (inner >= threads)
    cut(innerStart, innerSize, inner, 1);
  else
    blocks.push_back(whole);
  return blocks;
}

/// The matmul primitives of a strided bf16 gemm shape (all sizes >= 1),
/// built on its first call and kept for the process; null where oneDNN
/// refuses the strides or has only its reference kernel for them (slower
/// than widening).
Bf16Matmul *bf16MatmulFor(bool transA, bool transB, int64_t outer,
                          int64_t inner, int64_t m, int64_t n, int64_t k,
                          int64_t aOuter, int64_t aInner, int64_t lda,
                          int64_t bOuter, int64_t bInner, int64_t ldb,
                          int64_t cOuter, int64_t cInner, int64_t ldc,
                          bool bias) {
  using Key = std::array<int64_t, 17>;
  static std::mutex mutex;
  static std::map<Key, std::unique_ptr<Bf16Matmul>> built;
  const Key key = {transA, transB, outer,  inner,  m,      n,
                   k,      aOuter, aInner, lda,    bOuter, bInner,
                   ldb,    cOuter, cInner, ldc,    bias};
  // A bf16 [o, i, rows, cols] operand. A batch dimension of extent 1
  // takes the stride a plain (row-major) layout would give it: oneDNN
  // reads the dimensions' order from the strides, and a batch stride
  // smaller than a matrix's span made it see a permuted layout and fall
  // back from AMX to its AVX-512 gemm (a row block of a bigger C, or a
  // broadcast weight).
  auto plain = [](std::array<int64_t, 4> dims, std::array<int64_t, 4> st) {
    for (int d = 1; d >= 0; --d)
      if (dims[d] == 1) {
        st[d] = 1;
        for (int inner = d + 1; inner < 4; ++inner)
          st[d] = std::max(st[d], st[inner] * dims[inner]);
      }
    return dnnl::memory::desc({dims[0], dims[1], dims[2], dims[3]},
                              dnnl::memory::data_type::bf16,
                              {st[0], st[1], st[2], st[3]});
  };
  // rows x cols matrices, o x i of them. An operand whose batch stride is
  // 0 is one matrix broadcast along that dimension (oneDNN: extent 1
  // there).
  auto desc = [&](int64_t o, int64_t i, int64_t rows, int64_t cols,
                  int64_t so, int64_t si, int64_t sr, int64_t sc) {
    return plain({so == 0 ? 1 : o, si == 0 ? 1 : i, rows, cols},
                 {so, si, sr, sc});
  };
  auto part = [&](const GemmBlock &blk) {
    Bf16Matmul::Part made;
    made.a = transA ? desc(blk.outer, blk.inner, blk.m, k, aOuter, aInner, 1,
                           lda)
                    : desc(blk.outer, blk.inner, blk.m, k, aOuter, aInner,
                           lda, 1);
    made.b = transB ? desc(blk.outer, blk.inner, k, blk.n, bOuter, bInner, 1,
                           ldb)
                    : desc(blk.outer, blk.inner, k, blk.n, bOuter, bInner,
                           ldb, 1);
    // C is written whole: no extent-1 dimension stands for a batch.
    made.c = plain({blk.outer, blk.inner, blk.m, blk.n},
                   {cOuter, cInner, ldc, 1});
    made.aOffset = blk.o0 * aOuter + blk.i0 * aInner +
                   (transA ? blk.r0 : blk.r0 * lda);
    made.bOffset = blk.o0 * bOuter + blk.i0 * bInner +
                   (transB ? blk.j0 * ldb : blk.j0);
    made.cOffset = blk.o0 * cOuter + blk.i0 * cInner + blk.r0 * ldc + blk.j0;
    // The bias along C's columns, one row broadcast over everything else.
    if (bias) {
      made.bias = plain({1, 1, 1, blk.n}, {0, 0, 0, 1});
      made.biasOffset = blk.j0;
    }
    dnnl::matmul::primitive_desc pd(
        bias ? dnnl::matmul::desc(made.a, made.b, made.bias, made.c)
             : dnnl::matmul::desc(made.a, made.b, made.c),
        cpuEngine());
    if (std::string(pd.impl_info_str()).rfind("ref", 0) == 0)
      throw dnnl::error(dnnl_unimplemented, "only the reference kernel");
    made.primitive = dnnl::matmul(pd);
    return made;
  };
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, added] = built.try_emplace(key);
  if (added) {
    OneThread one; // primitives blocked for one thread
    try {
      auto made = std::make_unique<Bf16Matmul>();
      made->hasBias = bias;
      for (const GemmBlock &blk :
           splitGemm(transA, outer, inner, m, n, k, one.threads))
        made->parts.push_back(part(blk));
      it->second = std::move(made);
    } catch (const dnnl::error &) {
      // Strides oneDNN does not take, or only its reference kernel for
      // them: the widening path.
    }
  }
  return it->second.get();
}

/// Whether `got` (the matmul's C) is `want` (the widening path's f32 C)
/// rounded to bf16, up to two f32 sums of the same products in different
/// orders: within a bf16 step of the element, or 2^-12 of the largest
/// element of its matrix (cancellation).
bool agrees(const bf16 *got, const float *want, int64_t outer, int64_t inner,
            int64_t m, int64_t n, int64_t cOuter, int64_t cInner,
            int64_t ldc) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * cOuter + i * cInner;
      float largest = 0.0f;
      for (int64_t r = 0; r < m; ++r)
        for (int64_t j = 0; j < n; ++j)
          largest = std::max(largest, std::fabs(want[base + r * ldc + j]));
      for (int64_t r = 0; r < m; ++r)
        for (int64_t j = 0; j < n; ++j) {
          const int64_t at = base + r * ldc + j;
          const float expected = bf16(want[at]);
          const float diff = std::fabs(float(got[at]) - expected);
          if (!(diff <= std::fabs(expected) * 0x1p-7f + largest * 0x1p-12f))
            return false;
        }
    }
  return true;
}
#endif

/// `count` bf16 values widened into this thread's scratch `slot`.
const float *widen(const bf16 *x, int64_t count, int slot) {
  thread_local std::vector<float> scratch[3];
  std::vector<float> &buffer = scratch[slot];
  buffer.resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    buffer[i] = bf16::toFloat(x[i].bits);
  return buffer.data();
}

/// The bf16 strided gemm, with a bias (n elements) added to every row of
/// C before the one rounding where `bias` is given (gemmBias's).
void bf16Gemm(bool transA, bool transB, int64_t outer, int64_t inner,
              int64_t m, int64_t n, int64_t k, const bf16 *a, int64_t aOuter,
              int64_t aInner, int64_t lda, const bf16 *b, int64_t bOuter,
              int64_t bInner, int64_t ldb, const bf16 *bias, bf16 *c,
              int64_t cOuter, int64_t cInner, int64_t ldc) {
  if (outer < 0 || inner < 0 || m < 0 || n < 0 || k < 0)
    badCall("gemm", "negative size");
  int64_t aSpan = stridedSpan(outer, inner, transA ? k : m, transA ? m : k,
                              aOuter, aInner, lda);
  int64_t bSpan = stridedSpan(outer, inner, transB ? n : k, transB ? k : n,
                              bOuter, bInner, ldb);
  int64_t cSpan = stridedSpan(outer, inner, m, n, cOuter, cInner, ldc);
#ifdef LOOM_GEMM_DNNL
  Bf16Matmul *matmul =
      outer > 0 && inner > 0 && m > 0 && n > 0 && k > 0
          ? bf16MatmulFor(transA, transB, outer, inner, m, n, k, aOuter,
                          aInner, lda, bOuter, bInner, ldb, cOuter, cInner,
                          ldc, bias != nullptr)
          : nullptr;
  if (matmul && matmul->state == Bf16Matmul::State::Agrees) {
    matmul->run(a, b, bias, c);
    bf16MatmulCalls.fetch_add(1, std::memory_order_relaxed);
    return;
  }
#endif
  const float *wa = widen(a, aSpan, 0), *wb = widen(b, bSpan, 1);
  const float *wbias = bias ? widen(bias, n, 2) : nullptr;
  thread_local std::vector<float> product;
  product.resize(static_cast<size_t>(cSpan));
  stridedGemm(transA, transB, outer, inner, m, n, k, wa, aOuter, aInner, lda,
              wb, bOuter, bInner, ldb, product.data(), cOuter, cInner, ldc,
              wbias);
  // Only the elements of C's matrices: a strided C may interleave others.
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      for (int64_t r = 0; r < m; ++r) {
        int64_t row = o * cOuter + i * cInner + r * ldc;
        for (int64_t j = 0; j < n; ++j)
          c[row + j] = product[row + j];
      }
#ifdef LOOM_GEMM_DNNL
  // A shape's first call: the matmul's C against the one just written
  // (insurance: oneDNN 2.6's threaded AMX kernels were wrong on some
  // shapes; see Bf16Matmul::run).
  if (matmul && matmul->state == Bf16Matmul::State::Unchecked) {
    thread_local std::vector<bf16> check;
    check.resize(static_cast<size_t>(cSpan));
    matmul->run(a, b, bias, check.data());
    const bool ok = agrees(check.data(), product.data(), outer, inner, m, n,
                           cOuter, cInner, ldc);
    matmul->state = ok ? Bf16Matmul::State::Agrees : Bf16Matmul::State::Refused;
    if (!ok)
      bf16MatmulRefused.fetch_add(1, std::memory_order_relaxed);
  }
#endif
}

} // namespace

void gemm(bool transA, bool transB, int64_t batch, int64_t m, int64_t n,
          int64_t k, const bf16 *a, int64_t strideA, const bf16 *b,
          int64_t strideB, bf16 *c, int64_t strideC) {
  denseGemm(transA, transB, batch, m, n, k, a, strideA, b, strideB, c,
            strideC);
}

void gemmStrided(bool transA, bool transB, int64_t outer, int64_t inner,
                 int64_t m, int64_t n, int64_t k, const bf16 *a,
                 int64_t aOuter, int64_t aInner, int64_t lda, const bf16 *b,
                 int64_t bOuter, int64_t bInner, int64_t ldb, bf16 *c,
                 int64_t cOuter, int64_t cInner, int64_t ldc) {
  bf16Gemm(transA, transB, outer, inner, m, n, k, a, aOuter, aInner, lda, b,
           bOuter, bInner, ldb, /*bias=*/nullptr, c, cOuter, cInner, ldc);
}

void gemmBias(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
              const bf16 *a, const bf16 *b, const bf16 *bias, bf16 *c) {
  bf16Gemm(transA, transB, 1, 1, m, n, k, a, 0, 0, transA ? m : k, b, 0, 0,
           transB ? k : n, bias, c, 0, 0, n);
}

Bf16MatmulCounts bf16MatmulCounts() {
  Bf16MatmulCounts counts;
  counts.calls = bf16MatmulCalls.load(std::memory_order_relaxed);
  counts.refusedShapes = bf16MatmulRefused.load(std::memory_order_relaxed);
  counts.splitCalls = bf16MatmulSplit.load(std::memory_order_relaxed);
  return counts;
}

bool bf16MatmulAvailable() {
#ifdef LOOM_GEMM_DNNL
  // What bf16MatmulFor asks of every shape, asked of a small plain one.
  static const bool available = [] {
    OneThread one;
    try {
      dnnl::memory::desc d({16, 16}, dnnl::memory::data_type::bf16,
                           dnnl::memory::format_tag::ab);
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(d, d, d),
                                      cpuEngine());
      return std::string(pd.impl_info_str()).rfind("ref", 0) != 0;
    } catch (const dnnl::error &) {
      return false;
    }
  }();
  return available;
#else
  return false;
#endif
}

//===----------------------------------------------------------------------===//
// softmax, layer_norm, rms_norm
//===----------------------------------------------------------------------===//

void softmax(const float *x, float *y, int64_t outer, int64_t n, int64_t inner,
             bool log) {
  if (outer < 0 || n < 0 || inner < 0)
    badCall("softmax", "negative size");
  int64_t lanes = outer * inner;
  LOOM_PARALLEL_FOR(lanes * n)
  for (int64_t lane = 0; lane < lanes; ++lane) {
    int64_t o = lane / inner, i = lane % inner;
    const float *xs = x + o * n * inner + i;
    float *ys = y + o * n * inner + i;
    // exp in float (as frameworks compute it), one evaluation per element;
    // the sum accumulates in double.
    const float maxf = rowMax(n, [&](int64_t j) { return xs[j * inner]; });
    double sum = 0.0;
    if (!log && inner == 1) {
      // The exponentials in one vectorised loop, then their sum.
      for (int64_t j = 0; j < n; ++j)
        ys[j] = vm::exp(xs[j] - maxf);
      sum = rowSum(n, [&](int64_t j) { return ys[j]; });
    } else {
      sum = rowSum(n, [&](int64_t j) {
        float e = vm::exp(xs[j * inner] - maxf);
        if (!log)
          ys[j * inner] = e;
        return e;
      });
    }
    if (log) {
      double logSum = std::log(sum);
      for (int64_t j = 0; j < n; ++j)
        ys[j * inner] =
            static_cast<float>(static_cast<double>(xs[j * inner] - maxf) -
                               logSum);
    } else {
      double inverse = 1.0 / sum;
      for (int64_t j = 0; j < n; ++j)
        ys[j * inner] = static_cast<float>(ys[j * inner] * inverse);
    }
  }
}

void softmax(const bf16 *x, bf16 *y, int64_t outer, int64_t n, int64_t inner,
             bool log) {
  if (outer < 0 || n < 0 || inner < 0)
    badCall("softmax", "negative size");
  if (log || inner != 1) {
    // The f32 softmax of the widened tensor, through the bits (a loop that
    // converts the bf16 struct is not vectorised).
    int64_t count = outer * n * inner;
    thread_local std::vector<float> wide;
    wide.resize(static_cast<size_t>(count));
    float *w = wide.data(); // this thread's, taken outside the loops
    LOOM_PARALLEL_FOR(count)
    for (int64_t i = 0; i < count; ++i)
      w[i] = bf16::toFloat(x[i].bits);
    softmax(w, w, outer, n, inner, log);
    LOOM_PARALLEL_FOR(count)
    for (int64_t i = 0; i < count; ++i)
      y[i].bits = bf16::round(w[i]);
    return;
  }
  // Rows (the attention scores'): each widened into this thread's row,
  // the f32 softmax's arithmetic on it, rounded as it is written back, in
  // one pass over the tensor rather than three.
  LOOM_PARALLEL_FOR(outer * n)
  for (int64_t r = 0; r < outer; ++r) {
    thread_local std::vector<float> row;
    if (row.size() < static_cast<size_t>(n))
      row.resize(static_cast<size_t>(n));
    float *w = row.data();
    const uint16_t *xs = &x[r * n].bits;
    uint16_t *ys = &y[r * n].bits;
    for (int64_t j = 0; j < n; ++j)
      w[j] = bf16::toFloat(xs[j]);
    const float maxf = rowMax(n, [&](int64_t j) { return w[j]; });
    for (int64_t j = 0; j < n; ++j)
      w[j] = vm::exp(w[j] - maxf);
    const double inverse = 1.0 / rowSum(n, [&](int64_t j) { return w[j]; });
    for (int64_t j = 0; j < n; ++j)
      ys[j] = bf16::round(static_cast<float>(w[j] * inverse));
  }
}

namespace {

/// The sum of term(j) for j in [0, n), in double, as 8 interleaved partial
/// sums added in a fixed order at the end: independent chains the compiler
/// keeps in vector registers, where one running sum waits on each add
/// (layerNorm of 256 columns took 0.2 ms a call that way). The order
/// depends only on n: the same bits on every rank and run.
template <typename Term> double laneSum(int64_t n, Term term) {
  constexpr int64_t kLanes = 8;
  double lanes[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int64_t l = 0; l < kLanes; ++l)
      lanes[l] += term(j + l);
  for (int64_t l = 0; j < n; ++j, ++l)
    lanes[l] += term(j);
  double sum = 0.0;
  for (double lane : lanes)
    sum += lane;
  return sum;
}

} // namespace

namespace {

/// A norm's result as `Out` stores it: an f32 value, or its bf16 rounding.
inline void storeNormed(float &out, double v) { out = static_cast<float>(v); }
inline void storeNormed(bf16 &out, double v) {
  out.bits = bf16::round(static_cast<float>(v));
}

template <typename Out>
void layerNormImpl(const float *x, const float *scale, const float *bias,
                   Out *y, int64_t rows, int64_t cols, double eps) {
  if (rows < 0 || cols < 0)
    badCall("layerNorm", "negative size");
  if (cols == 0)
    return;
  LOOM_PARALLEL_FOR(rows * cols)
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = x + r * cols;
    Out *out = y + r * cols;
    double mean = laneSum(cols, [&](int64_t j) {
                    return static_cast<double>(row[j]);
                  }) /
                  static_cast<double>(cols);
    double squares = laneSum(cols, [&](int64_t j) {
      double d = row[j] - mean;
      return d * d;
    });
    double rstd = 1.0 / std::sqrt(squares / static_cast<double>(cols) + eps);
    for (int64_t j = 0; j < cols; ++j) {
      double v = (row[j] - mean) * rstd;
      if (scale)
        v *= scale[j];
      if (bias)
        v += bias[j];
      storeNormed(out[j], v);
    }
  }
}

template <typename Out>
void rmsNormImpl(const float *x, const float *scale, Out *y, int64_t rows,
                 int64_t cols, double eps) {
  if (rows < 0 || cols < 0)
    badCall("rmsNorm", "negative size");
  if (cols == 0)
    return;
  LOOM_PARALLEL_FOR(rows * cols)
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = x + r * cols;
    Out *out = y + r * cols;
    double squares = laneSum(cols, [&](int64_t j) {
      return static_cast<double>(row[j]) * row[j];
    });
    double rms = 1.0 / std::sqrt(squares / static_cast<double>(cols) + eps);
    for (int64_t j = 0; j < cols; ++j) {
      double v = row[j] * rms;
      if (scale)
        v *= scale[j];
      storeNormed(out[j], v);
    }
  }
}

/// Rows per block of normGrad's parameter sums: each block sums its rows
/// in f32, the blocks add in double in their order.
constexpr int64_t kNormGradBlocks = 32;

/// One row of normGrad: its input gradient into `dx` (added onto
/// `residual` when not null), its terms added onto the block's parameter
/// sums. `xhat` and `gh` are scratch rows. Restrict pointers, so that each
/// loop vectorises without runtime alias checks.
void normGradRow(const float *__restrict x, const float *__restrict g,
                 const float *__restrict scale,
                 const float *__restrict residual, float *__restrict dx,
                 float *__restrict scaleSum, float *__restrict biasSum,
                 float *__restrict xhat, float *__restrict gh, int64_t cols,
                 double eps, bool rms) {
  const double n = static_cast<double>(cols);
  // The statistics as layerNorm / rmsNorm compute them.
  double mean =
      rms ? 0.0
          : laneSum(cols, [&](int64_t j) { return static_cast<double>(x[j]); }) /
                n;
  double squares = laneSum(cols, [&](int64_t j) {
    double d = x[j] - mean;
    return d * d;
  });
  const float rstd = static_cast<float>(1.0 / std::sqrt(squares / n + eps));
  const float meanf = static_cast<float>(mean);
  for (int64_t j = 0; j < cols; ++j)
    xhat[j] = (x[j] - meanf) * rstd;
  if (scale)
    for (int64_t j = 0; j < cols; ++j)
      gh[j] = g[j] * scale[j];
  else
    for (int64_t j = 0; j < cols; ++j)
      gh[j] = g[j];
  const float ghXhatMean = static_cast<float>(
      laneSum(cols,
              [&](int64_t j) { return static_cast<double>(gh[j]) * xhat[j]; }) /
      n);
  const float ghMean =
      rms ? 0.0f
          : static_cast<float>(laneSum(cols, [&](int64_t j) {
              return static_cast<double>(gh[j]);
            }) / n);
  if (residual)
    for (int64_t k = 0; k < cols; ++k)
      dx[k] = residual[k] + rstd * (gh[k] - ghMean - xhat[k] * ghXhatMean);
  else
    for (int64_t k = 0; k < cols; ++k)
      dx[k] = rstd * (gh[k] - ghMean - xhat[k] * ghXhatMean);
  for (int64_t k = 0; k < cols; ++k) {
    scaleSum[k] += g[k] * xhat[k];
    biasSum[k] += g[k];
  }
}

/// A cotangent row as f32: the row itself, or a bf16 row widened into
/// `scratch`.
inline const float *widenedRow(const float *g, float *) { return g; }
inline const float *widenedRow(const bf16 *g, float *scratch) {
  return scratch;
}
inline void widenRow(const float *, float *, int64_t) {}
inline void widenRow(const bf16 *g, float *__restrict scratch, int64_t cols) {
  const uint16_t *bits = &g->bits;
  for (int64_t j = 0; j < cols; ++j)
    scratch[j] = bf16::toFloat(bits[j]);
}

template <typename G>
void normGradImpl(const float *x, const G *g, const float *scale,
                  const float *residual, float *dx, float *dscale,
                  float *dbias, int64_t rows, int64_t cols, double eps,
                  bool rms) {
  if (rows < 0 || cols < 0)
    badCall("normGrad", "negative size");
  if (cols == 0)
    return;
  // The rows in a fixed number of blocks (not one per thread), so that the
  // parameter sums do not depend on the thread count.
  const int64_t blocks = std::min(rows, kNormGradBlocks);
  std::vector<float> partial(static_cast<size_t>(2 * blocks * cols), 0.0f);
  float *sums = partial.data();
  LOOM_PARALLEL_FOR(rows * cols)
  for (int64_t b = 0; b < blocks; ++b) {
    thread_local std::vector<float> scratch;
    if (scratch.size() < static_cast<size_t>(3 * cols))
      scratch.resize(static_cast<size_t>(3 * cols));
    float *xhat = scratch.data(), *wide = xhat + 2 * cols;
    float *scaleSum = sums + 2 * b * cols;
    for (int64_t r = rows * b / blocks; r < rows * (b + 1) / blocks; ++r) {
      widenRow(g + r * cols, wide, cols);
      normGradRow(x + r * cols, widenedRow(g + r * cols, wide), scale,
                  residual ? residual + r * cols : nullptr, dx + r * cols,
                  scaleSum, scaleSum + cols, xhat, xhat + cols, cols, eps,
                  rms);
    }
  }
  for (int64_t j = 0; j < cols; ++j) {
    double scaleTotal = 0.0, biasTotal = 0.0;
    for (int64_t b = 0; b < blocks; ++b) {
      scaleTotal += sums[2 * b * cols + j];
      biasTotal += sums[(2 * b + 1) * cols + j];
    }
    dscale[j] = static_cast<float>(scaleTotal);
    dbias[j] = static_cast<float>(biasTotal);
  }
}

} // namespace

void normGrad(const float *x, const float *g, const float *scale,
              const float *residual, float *dx, float *dscale, float *dbias,
              int64_t rows, int64_t cols, double eps, bool rms) {
  normGradImpl(x, g, scale, residual, dx, dscale, dbias, rows, cols, eps,
               rms);
}

void normGrad(const float *x, const bf16 *g, const float *scale,
              const float *residual, float *dx, float *dscale, float *dbias,
              int64_t rows, int64_t cols, double eps, bool rms) {
  normGradImpl(x, g, scale, residual, dx, dscale, dbias, rows, cols, eps,
               rms);
}

void layerNorm(const float *x, const float *scale, const float *bias, float *y,
               int64_t rows, int64_t cols, double eps) {
  layerNormImpl(x, scale, bias, y, rows, cols, eps);
}

void layerNorm(const float *x, const float *scale, const float *bias, bf16 *y,
               int64_t rows, int64_t cols, double eps) {
  layerNormImpl(x, scale, bias, y, rows, cols, eps);
}

void rmsNorm(const float *x, const float *scale, float *y, int64_t rows,
             int64_t cols, double eps) {
  rmsNormImpl(x, scale, y, rows, cols, eps);
}

void rmsNorm(const float *x, const float *scale, bf16 *y, int64_t rows,
             int64_t cols, double eps) {
  rmsNormImpl(x, scale, y, rows, cols, eps);
}

//===----------------------------------------------------------------------===//
// cross_entropy
//===----------------------------------------------------------------------===//

namespace {

template <typename Label>
void crossEntropyImpl(Context &ctx, const char *op, const float *logits,
                      const Label *labels, float *out, float *probs,
                      int64_t n, int64_t classes, Reduction reduction,
                      bool hasIgnore, int64_t ignoreIndex) {
  if (n < 0 || classes < 0)
    fail(ctx, op, "negative size (a bug in the emitted code)");
  if (reduction != Reduction::None && reduction != Reduction::Mean &&
      reduction != Reduction::Sum)
    fail(ctx, op, "unknown reduction (a bug in the emitted code)");
  // Check every label before computing anything.
  int64_t counted = 0;
  for (int64_t s = 0; s < n; ++s) {
    int64_t label = labels[s];
    if (hasIgnore && label == ignoreIndex)
      continue;
    if (label < 0 || label >= classes) {
      std::string message = "label " + std::to_string(label) + " of sample " +
                            std::to_string(s) + " is out of range " +
                            rangeText(classes);
      if (hasIgnore)
        message += " and is not the ignore_index " + std::to_string(ignoreIndex);
      fail(ctx, op, message.c_str());
    }
    ++counted;
  }
  std::vector<double> losses(static_cast<size_t>(n), 0.0);
  LOOM_PARALLEL_FOR(n * classes)
  for (int64_t s = 0; s < n; ++s) {
    int64_t label = labels[s];
    bool ignored = hasIgnore && label == ignoreIndex;
    if (ignored && !probs)
      continue;
    const float *row = logits + s * classes;
    const float max = rowMax(classes, [&](int64_t c) { return row[c]; });
    double sum;
    if (probs) {
      // softmax's arithmetic (its f32 rows): the exponentials stored, their
      // sum, the scaling; the loss sums the same exponentials.
      float *p = probs + s * classes;
      for (int64_t c = 0; c < classes; ++c)
        p[c] = vm::exp(row[c] - max);
      sum = rowSum(classes, [&](int64_t c) { return p[c]; });
      double inverse = 1.0 / sum;
      for (int64_t c = 0; c < classes; ++c)
        p[c] = static_cast<float>(p[c] * inverse);
    } else {
      sum = rowSum(classes, [&](int64_t c) { return vm::exp(row[c] - max); });
    }
    if (!ignored)
      losses[static_cast<size_t>(s)] =
          static_cast<double>(max) + std::log(sum) - row[label];
  }
  if (reduction == Reduction::None) {
    for (int64_t s = 0; s < n; ++s)
      out[s] = static_cast<float>(losses[static_cast<size_t>(s)]);
    return;
  }
  double total = 0.0;
  for (double l : losses)
    total += l;
  // Mean over no counted sample is 0/0 = NaN, as in PyTorch.
  out[0] = static_cast<float>(
      reduction == Reduction::Mean ? total / static_cast<double>(counted)
                                   : total);
}

} // namespace

void crossEntropy(Context &ctx, const char *op, const float *logits,
                  const int64_t *labels, float *out, int64_t n,
                  int64_t classes, Reduction reduction, bool hasIgnore,
                  int64_t ignoreIndex) {
  crossEntropyImpl(ctx, op, logits, labels, out, nullptr, n, classes,
                   reduction, hasIgnore, ignoreIndex);
}

void crossEntropy(Context &ctx, const char *op, const float *logits,
                  const int32_t *labels, float *out, int64_t n,
                  int64_t classes, Reduction reduction, bool hasIgnore,
                  int64_t ignoreIndex) {
  crossEntropyImpl(ctx, op, logits, labels, out, nullptr, n, classes,
                   reduction, hasIgnore, ignoreIndex);
}

void crossEntropySoftmax(Context &ctx, const char *op, const float *logits,
                         const int64_t *labels, float *out, float *probs,
                         int64_t n, int64_t classes, Reduction reduction,
                         bool hasIgnore, int64_t ignoreIndex) {
  crossEntropyImpl(ctx, op, logits, labels, out, probs, n, classes, reduction,
                   hasIgnore, ignoreIndex);
}

void crossEntropySoftmax(Context &ctx, const char *op, const float *logits,
                         const int32_t *labels, float *out, float *probs,
                         int64_t n, int64_t classes, Reduction reduction,
                         bool hasIgnore, int64_t ignoreIndex) {
  crossEntropyImpl(ctx, op, logits, labels, out, probs, n, classes, reduction,
                   hasIgnore, ignoreIndex);
}

//===----------------------------------------------------------------------===//
// gather, scatter_add
//===----------------------------------------------------------------------===//

namespace {

/// Fails naming the first index outside [0, axisSize).
template <typename Index>
void checkIndices(Context &ctx, const char *op, const Index *indices,
                  int64_t numIndices, int64_t axisSize) {
  for (int64_t i = 0; i < numIndices; ++i) {
    int64_t index = indices[i];
    if (index < 0 || index >= axisSize)
      fail(ctx, op,
           ("index " + std::to_string(index) + " at position " +
            std::to_string(i) + " is out of range " + rangeText(axisSize))
               .c_str());
  }
}

template <typename Index>
void gatherImpl(Context &ctx, const char *op, const void *data,
                int64_t elemBytes, const Index *indices, void *out,
                int64_t outer, int64_t axisSize, int64_t inner,
                int64_t numIndices) {
  if (elemBytes <= 0 || outer < 0 || axisSize < 0 || inner < 0 ||
      numIndices < 0)
    fail(ctx, op, "invalid sizes (a bug in the emitted code)");
  checkIndices(ctx, op, indices, numIndices, axisSize);
  const auto *src = static_cast<const uint8_t *>(data);
  auto *dst = static_cast<uint8_t *>(out);
  size_t sliceBytes = static_cast<size_t>(inner * elemBytes);
  int64_t slices = outer * numIndices;
  LOOM_PARALLEL_FOR(slices * inner)
  for (int64_t s = 0; s < slices; ++s) {
    int64_t o = s / numIndices, i = s % numIndices;
    std::memcpy(dst + static_cast<size_t>(s) * sliceBytes,
                src + static_cast<size_t>(o * axisSize + indices[i]) * sliceBytes,
                sliceBytes);
  }
}

template <typename Index>
void scatterAddImpl(Context &ctx, const char *op, const float *target,
                    const Index *indices, const float *updates, float *out,
                    int64_t outer, int64_t axisSize, int64_t inner,
                    int64_t numIndices) {
  if (outer < 0 || axisSize < 0 || inner < 0 || numIndices < 0)
    fail(ctx, op, "invalid sizes (a bug in the emitted code)");
  checkIndices(ctx, op, indices, numIndices, axisSize);
  if (out != target)
    std::memmove(out, target,
                 static_cast<size_t>(outer * axisSize * inner) * sizeof(float));
  // The updates of each target slice, in update order (a stable counting
  // sort of the positions by index): each slice then sums its updates in
  // double, in that order, independently of the others.
  std::vector<int64_t> first(static_cast<size_t>(axisSize) + 1, 0);
  for (int64_t i = 0; i < numIndices; ++i)
    ++first[static_cast<size_t>(indices[i]) + 1];
  for (int64_t t = 0; t < axisSize; ++t)
    first[static_cast<size_t>(t) + 1] += first[static_cast<size_t>(t)];
  std::vector<int64_t> order(static_cast<size_t>(numIndices));
  {
    std::vector<int64_t> next(first.begin(), first.end() - 1);
    for (int64_t i = 0; i < numIndices; ++i)
      order[static_cast<size_t>(next[static_cast<size_t>(indices[i])]++)] = i;
  }
  int64_t slices = outer * axisSize;
#ifdef _OPENMP
#pragma omp parallel if (numIndices * inner >= kParallelWork)
#endif
  {
    std::vector<double> sums(static_cast<size_t>(inner));
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
    for (int64_t s = 0; s < slices; ++s) {
      int64_t o = s / axisSize, t = s % axisSize;
      int64_t begin = first[static_cast<size_t>(t)];
      int64_t end = first[static_cast<size_t>(t) + 1];
      if (begin == end)
        continue;
      float *dst = out + s * inner;
      for (int64_t e = 0; e < inner; ++e)
        sums[static_cast<size_t>(e)] = dst[e];
      for (int64_t p = begin; p < end; ++p) {
        const float *src =
            updates + (o * numIndices + order[static_cast<size_t>(p)]) * inner;
        for (int64_t e = 0; e < inner; ++e)
          sums[static_cast<size_t>(e)] += src[e];
      }
      for (int64_t e = 0; e < inner; ++e)
        dst[e] = static_cast<float>(sums[static_cast<size_t>(e)]);
    }
  }
}

} // namespace

void gather(Context &ctx, const char *op, const void *data, int64_t elemBytes,
            const int64_t *indices, void *out, int64_t outer, int64_t axisSize,
            int64_t inner, int64_t numIndices) {
  gatherImpl(ctx, op, data, elemBytes, indices, out, outer, axisSize, inner,
             numIndices);
}

void gather(Context &ctx, const char *op, const void *data, int64_t elemBytes,
            const int32_t *indices, void *out, int64_t outer, int64_t axisSize,
            int64_t inner, int64_t numIndices) {
  gatherImpl(ctx, op, data, elemBytes, indices, out, outer, axisSize, inner,
             numIndices);
}

void scatterAdd(Context &ctx, const char *op, const float *target,
                const int64_t *indices, const float *updates, float *out,
                int64_t outer, int64_t axisSize, int64_t inner,
                int64_t numIndices) {
  scatterAddImpl(ctx, op, target, indices, updates, out, outer, axisSize,
                 inner, numIndices);
}

void scatterAdd(Context &ctx, const char *op, const float *target,
                const int32_t *indices, const float *updates, float *out,
                int64_t outer, int64_t axisSize, int64_t inner,
                int64_t numIndices) {
  scatterAddImpl(ctx, op, target, indices, updates, out, outer, axisSize,
                 inner, numIndices);
}

//===----------------------------------------------------------------------===//
// copyStrided
//===----------------------------------------------------------------------===//

namespace {

template <typename T>
void copyElements(const uint8_t *src, int64_t stride, uint8_t *dst,
                  int64_t count) {
  const T *s = reinterpret_cast<const T *>(src);
  T *d = reinterpret_cast<T *>(dst);
  for (int64_t i = 0; i < count; ++i)
    d[i] = s[i * stride];
}

} // namespace

void copyStrided(const void *src, void *dst, int64_t elemBytes, int32_t rank,
                 const int64_t *shape, const int64_t *srcStrides,
                 int64_t srcOffset) {
  if (elemBytes <= 0 || rank < 0)
    badCall("copyStrided", "invalid element size or rank");
  int64_t total = 1;
  for (int32_t d = 0; d < rank; ++d) {
    if (shape[d] < 0)
      badCall("copyStrided", "negative dimension");
    total *= shape[d];
  }
  if (total == 0)
    return;
  const auto *in = static_cast<const uint8_t *>(src);
  auto *out = static_cast<uint8_t *>(dst);
  if (rank == 0) {
    std::memcpy(out, in + srcOffset * elemBytes, static_cast<size_t>(elemBytes));
    return;
  }
  // One innermost row at a time; its source start from the row's index.
  int64_t cols = shape[rank - 1];
  int64_t colStride = srcStrides[rank - 1];
  int64_t rows = total / cols;
  LOOM_PARALLEL_FOR(total)
  for (int64_t r = 0; r < rows; ++r) {
    int64_t start = srcOffset, rest = r;
    for (int32_t d = rank - 2; d >= 0; --d) {
      start += (rest % shape[d]) * srcStrides[d];
      rest /= shape[d];
    }
    const uint8_t *from = in + start * elemBytes;
    uint8_t *to = out + r * cols * elemBytes;
    if (colStride == 1) {
      std::memcpy(to, from, static_cast<size_t>(cols * elemBytes));
      continue;
    }
    switch (elemBytes) {
    case 1:
      copyElements<uint8_t>(from, colStride, to, cols);
      break;
    case 2:
      copyElements<uint16_t>(from, colStride, to, cols);
      break;
    case 4:
      copyElements<uint32_t>(from, colStride, to, cols);
      break;
    case 8:
      copyElements<uint64_t>(from, colStride, to, cols);
      break;
    default:
      for (int64_t i = 0; i < cols; ++i)
        std::memcpy(to + i * elemBytes, from + i * colStride * elemBytes,
                    static_cast<size_t>(elemBytes));
    }
  }
}

} // namespace cpu
} // namespace rt
} // namespace loom

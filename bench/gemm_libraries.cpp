// Times single-precision GEMMs of a transformer training step with one BLAS
// library (the one it is linked against), for bench/gemm_libraries.py.
//
// Shapes are row-major C[M,N] = op(A) op(B) as the CPU runtime's cpu::gemm
// calls them for a GPT-2-style block of hidden size H on T tokens:
// projections forward (A · Wᵀ), the input gradient (dY · W) and the weight
// gradient (dYᵀ · X), and attention's scores and context for 32 heads of
// 128 positions (one single-threaded GEMM per head, the heads spread over
// the threads, as cpu::gemmStrided runs a batch).
//
// Usage: gemm_libraries H T SECONDS. Prints one line per shape:
//   name M N K transA transB threaded GFLOP/s
// Built with -DLOOM_BENCH_DNNL the calls go to oneDNN's dnnl_sgemm; else
// to cblas_sgemm (OpenBLAS, BLIS, MKL).

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#ifdef LOOM_BENCH_DNNL
#include <dnnl.h>
#else
extern "C" void cblas_sgemm(int layout, int transA, int transB, int m, int n,
                            int k, float alpha, const float *a, int lda,
                            const float *b, int ldb, float beta, float *c,
                            int ldc);
#endif
#include <omp.h>

namespace {

void sgemm(bool ta, bool tb, int m, int n, int k, const float *a,
           const float *b, float *c) {
  int lda = ta ? m : k, ldb = tb ? k : n;
#ifdef LOOM_BENCH_DNNL
  dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb,
             0.0f, c, n);
#else
  constexpr int rowMajor = 101, noTrans = 111, trans = 112;
  cblas_sgemm(rowMajor, ta ? trans : noTrans, tb ? trans : noTrans, m, n, k,
              1.0f, a, lda, b, ldb, 0.0f, c, n);
#endif
}

struct Shape {
  const char *name;
  int m, n, k;
  bool ta, tb, threaded;
};

} // namespace

int main(int argc, char **argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s HIDDEN TOKENS SECONDS\n", argv[0]);
    return 2;
  }
  int h = std::atoi(argv[1]), t = std::atoi(argv[2]);
  double seconds = std::atof(argv[3]);
  const Shape shapes[] = {
      {"qkv-fwd", t, 3 * h, h, false, true, true},
      {"proj-fwd", t, h, h, false, true, true},
      {"fc-fwd", t, 4 * h, h, false, true, true},
      {"fc2-fwd", t, h, 4 * h, false, true, true},
      {"lmhead-fwd", t, 1000, h, false, true, true},
      {"qkv-dx", t, h, 3 * h, false, false, true},
      {"fc-dx", t, h, 4 * h, false, false, true},
      {"qkv-dw", 3 * h, h, t, true, false, true},
      {"fc2-dw", h, 4 * h, t, true, false, true},
      {"lmhead-dw", 1000, h, t, true, false, true},
      {"scores", 128, 128, 64, false, true, false},
      {"context", 128, 64, 128, false, false, false},
  };
  int threads = omp_get_max_threads();
  for (const Shape &s : shapes) {
    // Operands larger than the last-level cache rotate, as a step's do.
    size_t a = size_t(s.m) * s.k, b = size_t(s.k) * s.n, c = size_t(s.m) * s.n;
    constexpr int heads = 32;
    int copies = s.threaded ? 4 : heads;
    std::vector<float> A(a * copies), B(b * copies), C(c * copies);
    for (size_t i = 0; i < A.size(); ++i)
      A[i] = float(i % 97) / 97.0f - 0.5f;
    for (size_t i = 0; i < B.size(); ++i)
      B[i] = float(i % 89) / 89.0f - 0.5f;
    auto run = [&](int i) {
      if (s.threaded) {
        sgemm(s.ta, s.tb, s.m, s.n, s.k, &A[a * (i % copies)],
              &B[b * (i % copies)], &C[c * (i % copies)]);
        return 1;
      }
      // A batch of heads, each GEMM on one thread.
#pragma omp parallel for schedule(static) num_threads(threads)
      for (int x = 0; x < heads; ++x)
        sgemm(s.ta, s.tb, s.m, s.n, s.k, &A[a * x], &B[b * x], &C[c * x]);
      return heads;
    };
    for (int i = 0; i < 3; ++i)
      run(i);
    using clock = std::chrono::steady_clock;
    auto start = clock::now();
    double elapsed = 0;
    int64_t calls = 0;
    for (int i = 0; elapsed < seconds; ++i) {
      calls += run(i);
      elapsed = std::chrono::duration<double>(clock::now() - start).count();
    }
    double gflops = 2.0 * s.m * s.n * s.k * calls / elapsed / 1e9;
    std::printf("%s %d %d %d %d %d %d %.2f\n", s.name, s.m, s.n, s.k, s.ta,
                s.tb, s.threaded, gflops);
  }
  return 0;
}

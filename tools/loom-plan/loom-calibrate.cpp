//===- loom-calibrate.cpp - Measure this machine's kernel rates -----------===//
//
// Run by `loom-plan calibrate`: times the CPU backend's own kernels on this
// machine, with the thread count the training ranks will use
// (OMP_NUM_THREADS), and prints one JSON object:
//   gemm: [{m, n, k, seconds}] for square GEMMs of 32..1024 (the runtime's
//         loom::rt::cpu::gemm, i.e. the BLAS the programs link);
//   stream_bytes_per_s: c = a + b over 64 MiB arrays (an emitted
//         elementwise loop's shape: two reads, one write);
//   small_kernel_s: the same loop over 256 floats (per-kernel overhead).
// Each figure is the minimum of several repetitions.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/CpuKernels.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace {

template <typename F>
double fastest(int repeat, F &&f) {
  double best = 1e30;
  for (int r = 0; r < repeat; ++r) {
    auto start = std::chrono::steady_clock::now();
    f();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                             start)
                   .count();
    best = std::min(best, s);
  }
  return best;
}

__attribute__((noinline)) void add(const float *a, const float *b, float *c,
                                   long n) {
#pragma omp parallel for
  for (long i = 0; i < n; ++i)
    c[i] = a[i] + b[i];
}

} // namespace

int main() {
  std::printf("{\"gemm\": [");
  bool first = true;
  for (long n : {32, 64, 128, 256, 512, 1024}) {
    std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n);
    int inner = n <= 128 ? 200 : n <= 512 ? 10 : 2;
    double s = fastest(5, [&] {
      for (int i = 0; i < inner; ++i)
        loom::rt::cpu::gemm(false, false, 1, n, n, n, a.data(), 0, b.data(), 0,
                            c.data(), 0);
    });
    std::printf("%s{\"m\": %ld, \"n\": %ld, \"k\": %ld, \"seconds\": %.9g}",
                first ? "" : ", ", n, n, n, s / inner);
    first = false;
  }
  long big = 16L << 20;
  std::vector<float> a(big, 1.0f), b(big, 2.0f), c(big);
  double stream = fastest(5, [&] { add(a.data(), b.data(), c.data(), big); });
  long small = 256;
  int calls = 20000;
  double tiny = fastest(5, [&] {
    for (int i = 0; i < calls; ++i)
      add(a.data() + (i & 7), b.data(), c.data(), small);
  });
  std::printf("], \"stream_bytes_per_s\": %.6g, \"small_kernel_s\": %.6g}\n",
              3.0 * 4.0 * big / stream, tiny / calls);
  return 0;
}

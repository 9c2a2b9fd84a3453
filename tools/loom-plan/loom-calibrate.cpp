//===- loom-calibrate.cpp - Measure this machine's kernel rates -----------===//
//
// Run by `loom-plan calibrate`: times the CPU backend's own kernels on this
// machine, with the thread count the training ranks will use
// (OMP_NUM_THREADS), and prints one JSON object:
//   gemm: [{batch, m, n, k, trans_a, trans_b, seconds}] for the GEMM shapes
//         of transformer layers at widths 32..512 (the runtime's
//         loom::rt::cpu::gemm, i.e. the BLAS the programs link), operands
//         out of cache as in a training step;
//   stream_bytes_per_s: c = a + b over 64 MiB arrays (an emitted
//         elementwise loop's shape: two reads, one write);
//   small_kernel_s: the same loop over 256 floats (per-kernel overhead);
//   vector_units_per_s: the tanh GELU an emitted kernel computes, over a
//         cache-resident array, in loomrt::computeWork's arithmetic units
//         (8 simple ops, an exp of 24 and a division of 8 per element):
//         the rate at which
//         compute-bound elementwise kernels run.
// Each figure is the median of five repetitions (see `typical`).
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/CpuKernels.h"
#include "loom/Runtime/VecMath.h"

#include <algorithm>
#include <tuple>
#include <chrono>
#include <cstdio>
#include <vector>

namespace {

/// The median time of `repeat` runs of `f`: calibrate runs on every rank
/// of a host at once, as the training processes do, and the median is what
/// a step meets under that contention (the fastest run is a moment when
/// the other ranks happened to be idle).
template <typename F>
double typical(int repeat, F &&f) {
  std::vector<double> times;
  for (int r = 0; r < repeat; ++r) {
    auto start = std::chrono::steady_clock::now();
    f();
    times.push_back(std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - start)
                        .count());
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2,
                   times.end());
  return times[times.size() / 2];
}

__attribute__((noinline)) void add(const float *a, const float *b, float *c,
                                   long n) {
#pragma omp parallel for
  for (long i = 0; i < n; ++i)
    c[i] = a[i] + b[i];
}

/// The tanh GELU as convert-loom-to-loomrt lowers it, in its order.
__attribute__((noinline)) void gelu(const float *x, float *y, long n) {
#pragma omp parallel for
  for (long i = 0; i < n; ++i) {
    const float v = x[i];
    const float z = 1.59576917f * (v + 0.0447149985f * (v * (v * v)));
    y[i] = v * (1.0f / (1.0f + loom::rt::vm::exp(-z)));
  }
}

/// loomrt::computeWork's units for one element of `gelu`.
constexpr double kGeluUnits = 8 + 24 + 8;

} // namespace

int main() {
  // Transformer-shaped GEMMs at four widths s: a linear layer forward
  // (4s x 3s x s), its weight gradient (transposed A) and its input
  // gradient (transposed B), and attention's batched scores (16 matrices of
  // s/2 x s/2 x 64, transposed B).
  std::printf("{\"gemm\": [");
  bool first = true;
  for (long s : {32, 64, 128, 256, 512}) {
    struct Shape {
      bool ta, tb;
      long batch, m, n, k;
    } shapes[] = {{false, false, 1, 4 * s, 3 * s, s},
                  {true, false, 1, s, 3 * s, 4 * s},
                  {false, true, 1, 4 * s, s, 3 * s},
                  {false, true, 16, s / 2, s / 2, 64}};
    for (const Shape &g : shapes) {
      // Operands as a training step has them: not in cache. Successive
      // calls rotate through copies that together exceed 64 MiB.
      long elems = g.batch * (g.m * g.k + g.k * g.n + g.m * g.n);
      long copies = std::max(1L, (64L << 20) / (4 * elems) + 1);
      std::vector<float> pool(copies * elems, 0.5f);
      auto operands = [&](long i) {
        float *base = pool.data() + (i % copies) * elems;
        return std::make_tuple(base, base + g.batch * g.m * g.k,
                               base + g.batch * (g.m * g.k + g.k * g.n));
      };
      double flops = 2.0 * g.batch * g.m * g.n * g.k;
      int inner = std::max(1, static_cast<int>(2e8 / flops));
      long call = 0;
      double t = typical(5, [&] {
        for (int i = 0; i < inner; ++i) {
          auto [a, b, c] = operands(call++);
          loom::rt::cpu::gemm(g.ta, g.tb, g.batch, g.m, g.n, g.k, a,
                              g.m * g.k, b, g.k * g.n, c, g.m * g.n);
        }
      });
      std::printf("%s{\"batch\": %ld, \"m\": %ld, \"n\": %ld, \"k\": %ld, "
                  "\"trans_a\": %s, \"trans_b\": %s, \"seconds\": %.9g}",
                  first ? "" : ", ", g.batch, g.m, g.n, g.k,
                  g.ta ? "true" : "false", g.tb ? "true" : "false", t / inner);
      first = false;
    }
  }
  long big = 16L << 20;
  std::vector<float> a(big, 1.0f), b(big, 2.0f), c(big);
  double stream = typical(5, [&] { add(a.data(), b.data(), c.data(), big); });
  long small = 256;
  int calls = 20000;
  double tiny = typical(5, [&] {
    for (int i = 0; i < calls; ++i)
      add(a.data() + (i & 7), b.data(), c.data(), small);
  });
  // 256 KiB in and out: in cache, and long enough per call that the
  // threads' fork and join do not count.
  long resident = 32L << 10;
  int passes = 200;
  double vector = typical(5, [&] {
    for (int i = 0; i < passes; ++i)
      gelu(a.data() + (i & 7), c.data(), resident);
  });
  std::printf("], \"stream_bytes_per_s\": %.6g, \"small_kernel_s\": %.6g, "
              "\"vector_units_per_s\": %.6g}\n",
              3.0 * 4.0 * big / stream, tiny / calls,
              kGeluUnits * resident * passes / vector);
  return 0;
}

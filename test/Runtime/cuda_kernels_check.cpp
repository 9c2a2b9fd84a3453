//===- cuda_kernels_check.cpp - CUDA kernels against the CPU kernels ------===//
//
// Runs every kernel of CudaKernels.h on random inputs and compares with
// the CPU kernel of CpuKernels.h (which the unit tests check against plain
// references), plus a one-rank NCCL all-reduce; with --bad-label, a label
// error found on the device. Exits 77 (skip) when there is no CUDA device,
// 1 on a mismatch.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/CudaKernels.h"
#include "RuntimeImpl.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

using namespace loom::rt;

namespace {

int failures = 0;

std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

/// Device copy of a host vector, freed at exit (the process is short).
template <typename T> T *upload(Context &ctx, const std::vector<T> &host) {
  auto *ptr = static_cast<T *>(
      cuda::deviceAlloc(ctx, static_cast<int64_t>(host.size() * sizeof(T))));
  cuda::copyToDevice(ctx, ptr, host.data(),
                     static_cast<int64_t>(host.size() * sizeof(T)));
  return ptr;
}

template <typename T>
std::vector<T> download(Context &ctx, const T *device, size_t n) {
  std::vector<T> host(n);
  cuda::synchronize(ctx);
  cuda::copyToHost(ctx, host.data(), device, static_cast<int64_t>(n * sizeof(T)));
  return host;
}

void compare(const char *what, const std::vector<float> &gpu,
             const std::vector<float> &cpu, double rel) {
  double worst = 0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    double err = std::fabs(static_cast<double>(gpu[i]) - cpu[i]) /
                 std::max(1.0, std::fabs(static_cast<double>(cpu[i])));
    if (!(err <= worst))
      worst = err; // NaN counts as a failure
  }
  bool ok = worst <= rel;
  std::printf("%-28s %s (max relative error %.3g)\n", what, ok ? "ok" : "FAILED",
              worst);
  failures += !ok;
}

} // namespace

int main(int argc, char **argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: skipped\n");
    return 77;
  }
  Context ctx;
  cuda::init(ctx);

  if (argc > 1 && std::strcmp(argv[1], "--bad-label") == 0) {
    // Found on the device, reported by synchronize() through fail().
    std::vector<float> logits(2 * 3, 0.5f);
    std::vector<int64_t> labels = {1, 7};
    float *dl = upload(ctx, logits), *dout = upload(ctx, std::vector<float>(1));
    int64_t *dlab = upload(ctx, labels);
    cuda::crossEntropy(ctx, "loom.cross_entropy", dl, dlab, dout, 2, 3,
                       cpu::Reduction::Mean, false, 0);
    cuda::synchronize(ctx);
    std::printf("the bad label was not reported\n");
    return 1;
  }

  // gemm: batch 3, every transpose combination.
  for (int t = 0; t < 4; ++t) {
    bool ta = t & 1, tb = t & 2;
    const int64_t batch = 3, m = 37, n = 29, k = 41;
    std::vector<float> a = randomFloats(batch * m * k, 1), b = randomFloats(batch * k * n, 2);
    std::vector<float> cpu(batch * m * n);
    cpu::gemm(ta, tb, batch, m, n, k, a.data(), m * k, b.data(), k * n, cpu.data(), m * n);
    float *da = upload(ctx, a), *db = upload(ctx, b);
    float *dc = upload(ctx, std::vector<float>(cpu.size()));
    cuda::gemm(ctx, ta, tb, batch, m, n, k, da, m * k, db, k * n, dc, m * n);
    compare(("gemm transA=" + std::to_string(ta) + " transB=" + std::to_string(tb)).c_str(),
            download(ctx, dc, cpu.size()), cpu, 1e-4);
  }

  // gemmBias (cuBLASLt's bias epilogue): every transpose combination, and
  // an empty sum (every row the bias).
  for (int t = 0; t < 5; ++t) {
    bool ta = t & 1, tb = t & 2;
    const int64_t m = 37, n = 29, k = t == 4 ? 0 : 41;
    std::vector<float> a = randomFloats(m * 41, 4), b = randomFloats(41 * n, 5);
    std::vector<float> bias = randomFloats(n, 6), cpu(m * n);
    cpu::gemmBias(ta, tb, m, n, k, a.data(), b.data(), bias.data(), cpu.data());
    float *da = upload(ctx, a), *db = upload(ctx, b), *dbias = upload(ctx, bias);
    float *dc = upload(ctx, std::vector<float>(cpu.size()));
    cuda::gemmBias(ctx, ta, tb, m, n, k, da, db, dbias, dc);
    compare(("gemmBias transA=" + std::to_string(ta) + " transB=" + std::to_string(tb) +
             " k=" + std::to_string(k)).c_str(),
            download(ctx, dc, cpu.size()), cpu, 1e-4);
  }

  // bf16 gemmBias (--precision bf16's linear layers): small integers, so
  // the f32 sum is exact and both round it to the same bf16 once.
  for (int t = 0; t < 4; ++t) {
    bool ta = t & 1, tb = t & 2;
    const int64_t m = 37, n = 32, k = 41;
    std::mt19937 rng(16 + t);
    std::uniform_int_distribution<int> small(-4, 4);
    auto ints = [&](size_t count) {
      std::vector<bf16> v(count);
      for (bf16 &x : v)
        x = bf16(static_cast<float>(small(rng) * 8));
      return v;
    };
    std::vector<bf16> a = ints(m * k), b = ints(k * n), bias = ints(n);
    std::vector<bf16> cpu(m * n);
    cpu::gemmBias(ta, tb, m, n, k, a.data(), b.data(), bias.data(), cpu.data());
    bf16 *da = upload(ctx, a), *db = upload(ctx, b), *dbias = upload(ctx, bias);
    bf16 *dc = upload(ctx, std::vector<bf16>(cpu.size()));
    cuda::gemmBias(ctx, ta, tb, m, n, k, da, db, dbias, dc);
    std::vector<bf16> gpu = download(ctx, dc, cpu.size());
    compare(("bf16 gemmBias transA=" + std::to_string(ta) + " transB=" +
             std::to_string(tb)).c_str(),
            std::vector<float>(gpu.begin(), gpu.end()),
            std::vector<float>(cpu.begin(), cpu.end()), 0.0);
  }

  // gemmAccumulate (cuBLAS with beta = 1): the product added onto C, every
  // transpose combination, and an empty sum (C unchanged).
  for (int t = 0; t < 5; ++t) {
    bool ta = t & 1, tb = t & 2;
    const int64_t m = 37, n = 29, k = t == 4 ? 0 : 41;
    std::vector<float> a = randomFloats(m * 41, 13), b = randomFloats(41 * n, 14);
    std::vector<float> start = randomFloats(m * n, 15), cpu = start;
    cpu::gemmAccumulate(ta, tb, m, n, k, a.data(), b.data(), cpu.data());
    float *da = upload(ctx, a), *db = upload(ctx, b), *dc = upload(ctx, start);
    cuda::gemmAccumulate(ctx, ta, tb, m, n, k, da, db, dc);
    compare(("gemmAccumulate transA=" + std::to_string(ta) + " transB=" +
             std::to_string(tb) + " k=" + std::to_string(k)).c_str(),
            download(ctx, dc, cpu.size()), cpu, 1e-4);
  }

  // gemmBiasGelu: n = 32 runs cuBLASLt's GELU_AUX_BIAS epilogue, n = 29
  // (not a multiple of 8) gemmBias and the GELU kernel. The activation's
  // tolerance allows for cuBLASLt's own tanh.
  for (int64_t n : {32, 29}) {
    const int64_t m = 37, k = 41;
    std::vector<float> a = randomFloats(m * k, 7), b = randomFloats(k * n, 8);
    std::vector<float> bias = randomFloats(n, 9), pre(m * n), act(m * n);
    cpu::gemmBiasGelu(false, true, m, n, k, a.data(), b.data(), bias.data(),
                      pre.data(), act.data());
    float *da = upload(ctx, a), *db = upload(ctx, b), *dbias = upload(ctx, bias);
    float *dpre = upload(ctx, std::vector<float>(pre.size()));
    float *dact = upload(ctx, std::vector<float>(act.size()));
    cuda::gemmBiasGelu(ctx, false, true, m, n, k, da, db, dbias, dpre, dact);
    std::string what = "gemmBiasGelu n=" + std::to_string(n);
    compare((what + " input").c_str(), download(ctx, dpre, pre.size()), pre, 1e-4);
    compare((what + " output").c_str(), download(ctx, dact, act.size()), act, 1e-3);
  }

  // gemmDGelu: n = 32 runs cuBLASLt's DGELU epilogue, n = 29 the gemm and
  // the derivative kernel.
  for (int64_t n : {32, 29}) {
    const int64_t m = 37, k = 41;
    std::vector<float> a = randomFloats(m * k, 10), b = randomFloats(n * k, 11);
    std::vector<float> pre = randomFloats(m * n, 12), grad(m * n);
    cpu::gemmDGelu(false, true, m, n, k, a.data(), b.data(), pre.data(),
                   grad.data());
    float *da = upload(ctx, a), *db = upload(ctx, b), *dpre = upload(ctx, pre);
    float *dgrad = upload(ctx, std::vector<float>(grad.size()));
    cuda::gemmDGelu(ctx, false, true, m, n, k, da, db, dpre, dgrad);
    compare(("gemmDGelu n=" + std::to_string(n)).c_str(),
            download(ctx, dgrad, grad.size()), grad, 1e-3);
  }

  // softmax / log_softmax along a middle axis, and a long row.
  const int64_t shapes[][3] = {{3, 50, 7}, {2, 5000, 1}};
  for (int log = 0; log < 2; ++log)
    for (const auto &shape : shapes) {
      const int64_t outer = shape[0], n = shape[1], inner = shape[2];
      std::vector<float> x = randomFloats(outer * n * inner, 3), cpu(x.size());
      cpu::softmax(x.data(), cpu.data(), outer, n, inner, log);
      float *dx = upload(ctx, x), *dy = upload(ctx, std::vector<float>(x.size()));
      cuda::softmax(ctx, dx, dy, outer, n, inner, log);
      compare(log ? "log_softmax" : "softmax", download(ctx, dy, x.size()), cpu, 1e-6);
    }

  // layer_norm and rms_norm with affine parameters.
  {
    const int64_t rows = 33, cols = 1000;
    std::vector<float> x = randomFloats(rows * cols, 4), scale = randomFloats(cols, 5),
                       bias = randomFloats(cols, 6), cpu(x.size());
    float *dx = upload(ctx, x), *ds = upload(ctx, scale), *db = upload(ctx, bias);
    float *dy = upload(ctx, std::vector<float>(x.size()));
    cpu::layerNorm(x.data(), scale.data(), bias.data(), cpu.data(), rows, cols, 1e-5);
    cuda::layerNorm(ctx, dx, ds, db, dy, rows, cols, 1e-5);
    compare("layer_norm", download(ctx, dy, x.size()), cpu, 1e-6);
    cpu::rmsNorm(x.data(), scale.data(), cpu.data(), rows, cols, 1e-6);
    cuda::rmsNorm(ctx, dx, ds, dy, rows, cols, 1e-6);
    compare("rms_norm", download(ctx, dy, x.size()), cpu, 1e-6);
    // bf16 outputs (loom-fuse-norm-narrowing): each f32 result rounded
    // once; the two sums' orders may round a result to a neighbour.
    std::vector<bf16> cpu16(x.size());
    bf16 *dy16 = upload(ctx, cpu16);
    auto widened = [](const std::vector<bf16> &v) {
      return std::vector<float>(v.begin(), v.end());
    };
    cpu::layerNorm(x.data(), scale.data(), bias.data(), cpu16.data(), rows, cols,
                   1e-5);
    cuda::layerNorm(ctx, dx, ds, db, dy16, rows, cols, 1e-5);
    compare("layer_norm bf16", widened(download(ctx, dy16, x.size())),
            widened(cpu16), 1e-2);
    cpu::rmsNorm(x.data(), scale.data(), cpu16.data(), rows, cols, 1e-6);
    cuda::rmsNorm(ctx, dx, ds, dy16, rows, cols, 1e-6);
    compare("rms_norm bf16", widened(download(ctx, dy16, x.size())),
            widened(cpu16), 1e-2);
    // norm_grad: the input gradient and the parameter sums over the rows
    // (the CPU sums per block of rows in f32, CUDA per column in double).
    std::vector<float> g = randomFloats(x.size(), 8), cpuDs(cols), cpuDb(cols);
    float *dg = upload(ctx, g);
    float *dds = upload(ctx, std::vector<float>(cols));
    float *ddb = upload(ctx, std::vector<float>(cols));
    for (int rms = 0; rms < 2; ++rms) {
      cpu::normGrad(x.data(), g.data(), scale.data(), nullptr, cpu.data(),
                    cpuDs.data(), cpuDb.data(), rows, cols, 1e-5, rms);
      cuda::normGrad(ctx, dx, dg, ds, nullptr, dy, dds, ddb, rows, cols, 1e-5,
                     rms);
      compare(rms ? "norm_grad rms dx" : "norm_grad dx",
              download(ctx, dy, x.size()), cpu, 1e-5);
      compare("norm_grad dscale", download(ctx, dds, cols), cpuDs, 1e-4);
      compare("norm_grad dbias", download(ctx, ddb, cols), cpuDb, 1e-4);
    }
    // A bf16 cotangent and a residual (loom-fuse-norm-grad).
    std::vector<bf16> g16(g.begin(), g.end());
    bf16 *dg16 = upload(ctx, g16);
    float *dres = upload(ctx, x);
    cpu::normGrad(x.data(), g16.data(), scale.data(), x.data(), cpu.data(),
                  cpuDs.data(), cpuDb.data(), rows, cols, 1e-5, false);
    cuda::normGrad(ctx, dx, dg16, ds, dres, dy, dds, ddb, rows, cols, 1e-5,
                   false);
    compare("norm_grad bf16+residual dx", download(ctx, dy, x.size()), cpu,
            1e-5);
  }

  // cross_entropy: each reduction, with ignored samples.
  {
    const int64_t n = 64, classes = 300;
    std::vector<float> logits = randomFloats(n * classes, 7);
    std::vector<int64_t> labels(n);
    for (int64_t s = 0; s < n; ++s)
      labels[s] = s % 5 == 0 ? -100 : (s * 37) % classes;
    float *dl = upload(ctx, logits);
    int64_t *dlab = upload(ctx, labels);
    int32_t *dlab32 = upload(ctx, std::vector<int32_t>(labels.begin(), labels.end()));
    for (auto reduction : {cpu::Reduction::None, cpu::Reduction::Mean, cpu::Reduction::Sum}) {
      size_t outSize = reduction == cpu::Reduction::None ? n : 1;
      std::vector<float> cpu(outSize);
      cpu::crossEntropy(ctx, "ce", logits.data(), labels.data(), cpu.data(), n, classes,
                        reduction, true, -100);
      float *dout = upload(ctx, std::vector<float>(outSize));
      cuda::crossEntropy(ctx, "ce", dl, dlab, dout, n, classes, reduction, true, -100);
      compare("cross_entropy", download(ctx, dout, outSize), cpu, 1e-6);
      cuda::crossEntropy(ctx, "ce", dl, dlab32, dout, n, classes, reduction, true, -100);
      compare("cross_entropy (i32 labels)", download(ctx, dout, outSize), cpu, 1e-6);
    }
    // crossEntropySoftmax: the loss and every row's softmax (ignored rows
    // included), against the CPU's.
    std::vector<float> cpuLoss(1), cpuProbs(logits.size());
    cpu::crossEntropySoftmax(ctx, "ce", logits.data(), labels.data(),
                             cpuLoss.data(), cpuProbs.data(), n, classes,
                             cpu::Reduction::Mean, true, -100);
    float *dloss = upload(ctx, std::vector<float>(1));
    float *dprobs = upload(ctx, std::vector<float>(logits.size()));
    cuda::crossEntropySoftmax(ctx, "ce", dl, dlab, dloss, dprobs, n, classes,
                              cpu::Reduction::Mean, true, -100);
    compare("cross_entropy+softmax loss", download(ctx, dloss, 1), cpuLoss,
            1e-6);
    compare("cross_entropy+softmax probs", download(ctx, dprobs, logits.size()),
            cpuProbs, 1e-6);
  }

  // gather and scatter_add with duplicate indices.
  {
    const int64_t outer = 3, axis = 40, inner = 17;
    std::vector<int64_t> indices = {5, 0, 39, 5, 5, 12};
    const int64_t num = static_cast<int64_t>(indices.size());
    std::vector<float> data = randomFloats(outer * axis * inner, 8);
    std::vector<float> cpu(outer * num * inner);
    cpu::gather(ctx, "gather", data.data(), 4, indices.data(), cpu.data(), outer, axis,
                inner, num);
    float *dd = upload(ctx, data), *dout = upload(ctx, std::vector<float>(cpu.size()));
    int64_t *di = upload(ctx, indices);
    cuda::gather(ctx, "gather", dd, 4, di, dout, outer, axis, inner, num);
    compare("gather", download(ctx, dout, cpu.size()), cpu, 0);

    std::vector<float> updates = randomFloats(outer * num * inner, 9), sum(data.size());
    cpu::scatterAdd(ctx, "scatter_add", data.data(), indices.data(), updates.data(),
                    sum.data(), outer, axis, inner, num);
    float *du = upload(ctx, updates), *dsum = upload(ctx, std::vector<float>(data.size()));
    cuda::scatterAdd(ctx, "scatter_add", dd, di, du, dsum, outer, axis, inner, num);
    compare("scatter_add", download(ctx, dsum, data.size()), sum, 1e-6);

    // The same with i32 indices (JAX's): the i32 overloads, same results.
    std::vector<int32_t> indices32(indices.begin(), indices.end());
    int32_t *di32 = upload(ctx, indices32);
    float *dout32 = upload(ctx, std::vector<float>(cpu.size()));
    cuda::gather(ctx, "gather", dd, 4, di32, dout32, outer, axis, inner, num);
    compare("gather (i32)", download(ctx, dout32, cpu.size()), cpu, 0);
    float *dsum32 = upload(ctx, std::vector<float>(data.size()));
    cuda::scatterAdd(ctx, "scatter_add", dd, di32, du, dsum32, outer, axis, inner, num);
    compare("scatter_add (i32)", download(ctx, dsum32, data.size()), sum, 1e-6);
  }

  // copyStrided: a 3-D permutation.
  {
    std::vector<float> src = randomFloats(4 * 5 * 6, 10), cpu(src.size());
    int64_t shape[] = {6, 4, 5}, strides[] = {1, 30, 6};
    cpu::copyStrided(src.data(), cpu.data(), 4, 3, shape, strides, 0);
    float *ds = upload(ctx, src), *dd = upload(ctx, std::vector<float>(src.size()));
    cuda::copyStrided(ctx, ds, dd, 4, 3, shape, strides, 0);
    compare("copyStrided", download(ctx, dd, src.size()), cpu, 0);
  }

  // A one-rank NCCL all-reduce (average of one = identity).
  {
    std::vector<float> v = randomFloats(1000, 11);
    float *dv = upload(ctx, v);
    CommHandle h = cuda::allReduceStart(ctx, dv, 1000, ReduceOp::Avg);
    cuda::wait(ctx, h);
    compare("allReduce avg (1 rank)", download(ctx, dv, v.size()), v, 0);
  }

  cuda::shutdown(ctx);
  std::printf(failures ? "%d FAILED\n" : "all ok\n", failures);
  return failures ? 1 : 0;
}

//===- Emulation.cpp - The CUDA backend's API on the CPU ------------------===//
//
// LoomRuntimeCudaEmulation: CudaKernels.h implemented with the CPU
// runtime, for programs emitted for CUDA and built as host code
// (loom/Runtime/CudaEmulation.h, `loomc --target cuda --cuda-emulate`).
// Device memory is host memory; every call completes before it returns
// (the "streams" are program order); gemm is the CPU BLAS where the GPU
// has cuBLAS; the row-wise kernels, losses, gathers and scatters are the
// CPU kernels (so an out-of-range label fails at once, where the GPU
// reports it at the next synchronize); communication is the CPU runtime's
// MPI where the GPU has NCCL. Host C++ only: no CUDA installation needed.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/CudaKernels.h"

#include "../RuntimeImpl.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

namespace loom {
namespace rt {
namespace cuda {

namespace {

/// What init() made (ctx.cuda): nothing to hold but the fact.
struct EmulatedDevice {
  int64_t allocations = 0;
};

EmulatedDevice &state(Context &ctx) {
  if (!ctx.cuda)
    fail(ctx, "cuda", "the CUDA backend is not initialised (call cuda::init)");
  return *static_cast<EmulatedDevice *>(ctx.cuda);
}

} // namespace

void init(Context &ctx) {
  if (!ctx.cuda)
    ctx.cuda = new EmulatedDevice();
}

void shutdown(Context &ctx) {
  delete static_cast<EmulatedDevice *>(ctx.cuda);
  ctx.cuda = nullptr;
}

void synchronize(Context &ctx) { state(ctx); }

void *computeStream(Context &ctx) {
  state(ctx);
  return nullptr;
}

void checkKernelLaunch(Context &ctx, const char *) { state(ctx); }

void *deviceAlloc(Context &ctx, int64_t bytes) {
  EmulatedDevice &device = state(ctx);
  if (bytes < 0)
    fail(ctx, "deviceAlloc", "negative size");
  // 256-byte aligned like cudaMalloc; a size aligned_alloc accepts.
  size_t size = (static_cast<size_t>(bytes ? bytes : 1) + 255) / 256 * 256;
  void *ptr = std::aligned_alloc(256, size);
  if (!ptr)
    fail(ctx, "deviceAlloc",
         ("cannot allocate " + std::to_string(bytes) +
          " bytes of (emulated) device memory")
             .c_str());
  ++device.allocations;
  return ptr;
}

void deviceFree(Context &ctx, void *ptr) {
  state(ctx);
  std::free(ptr);
}

void copyToDevice(Context &ctx, void *dst, const void *src, int64_t bytes) {
  state(ctx);
  ctx.hostToDeviceBytes += std::max<int64_t>(bytes, 0);
  if (bytes > 0)
    std::memcpy(dst, src, static_cast<size_t>(bytes));
}

void copyToHost(Context &ctx, void *dst, const void *src, int64_t bytes) {
  state(ctx);
  ctx.deviceToHostBytes += std::max<int64_t>(bytes, 0);
  if (bytes > 0)
    std::memcpy(dst, src, static_cast<size_t>(bytes));
}

//===----------------------------------------------------------------------===//
// Kernels: the CPU's
//===----------------------------------------------------------------------===//

void gemm(Context &ctx, bool transA, bool transB, int64_t batch, int64_t m,
          int64_t n, int64_t k, const float *a, int64_t strideA,
          const float *b, int64_t strideB, float *c, int64_t strideC) {
  state(ctx);
  cpu::gemm(transA, transB, batch, m, n, k, a, strideA, b, strideB, c,
            strideC);
}

void gemmBias(Context &ctx, bool transA, bool transB, int64_t m, int64_t n,
              int64_t k, const float *a, const float *b, const float *bias,
              float *c) {
  state(ctx);
  cpu::gemmBias(transA, transB, m, n, k, a, b, bias, c);
}

void gemmBias(Context &ctx, bool transA, bool transB, int64_t m, int64_t n,
              int64_t k, const bf16 *a, const bf16 *b, const bf16 *bias,
              bf16 *c) {
  state(ctx);
  cpu::gemmBias(transA, transB, m, n, k, a, b, bias, c);
}

void gemmAccumulate(Context &ctx, bool transA, bool transB, int64_t m,
                    int64_t n, int64_t k, const float *a, const float *b,
                    float *c) {
  state(ctx);
  cpu::gemmAccumulate(transA, transB, m, n, k, a, b, c);
}

void gemmBiasGelu(Context &ctx, bool transA, bool transB, int64_t m,
                  int64_t n, int64_t k, const float *a, const float *b,
                  const float *bias, float *pre, float *c) {
  state(ctx);
  cpu::gemmBiasGelu(transA, transB, m, n, k, a, b, bias, pre, c);
}

void gemmDGelu(Context &ctx, bool transA, bool transB, int64_t m,
               int64_t n, int64_t k, const float *a, const float *b,
               const float *pre, float *c) {
  state(ctx);
  cpu::gemmDGelu(transA, transB, m, n, k, a, b, pre, c);
}

void gemmStrided(Context &ctx, bool transA, bool transB, int64_t outer,
                 int64_t inner, int64_t m, int64_t n, int64_t k,
                 const float *a, int64_t aOuter, int64_t aInner, int64_t lda,
                 const float *b, int64_t bOuter, int64_t bInner, int64_t ldb,
                 float *c, int64_t cOuter, int64_t cInner, int64_t ldc) {
  state(ctx);
  cpu::gemmStrided(transA, transB, outer, inner, m, n, k, a, aOuter, aInner,
                   lda, b, bOuter, bInner, ldb, c, cOuter, cInner, ldc);
}

void gemm(Context &ctx, bool transA, bool transB, int64_t batch, int64_t m,
          int64_t n, int64_t k, const bf16 *a, int64_t strideA,
          const bf16 *b, int64_t strideB, bf16 *c, int64_t strideC) {
  state(ctx);
  cpu::gemm(transA, transB, batch, m, n, k, a, strideA, b, strideB, c,
            strideC);
}

void gemmStrided(Context &ctx, bool transA, bool transB, int64_t outer,
                 int64_t inner, int64_t m, int64_t n, int64_t k,
                 const bf16 *a, int64_t aOuter, int64_t aInner, int64_t lda,
                 const bf16 *b, int64_t bOuter, int64_t bInner, int64_t ldb,
                 bf16 *c, int64_t cOuter, int64_t cInner, int64_t ldc) {
  state(ctx);
  cpu::gemmStrided(transA, transB, outer, inner, m, n, k, a, aOuter, aInner,
                   lda, b, bOuter, bInner, ldb, c, cOuter, cInner, ldc);
}

void softmax(Context &ctx, const float *x, float *y, int64_t outer, int64_t n,
             int64_t inner, bool log) {
  state(ctx);
  cpu::softmax(x, y, outer, n, inner, log);
}

void softmax(Context &ctx, const bf16 *x, bf16 *y, int64_t outer, int64_t n,
             int64_t inner, bool log) {
  state(ctx);
  cpu::softmax(x, y, outer, n, inner, log);
}

void layerNorm(Context &ctx, const float *x, const float *scale,
               const float *bias, float *y, int64_t rows, int64_t cols,
               double eps) {
  state(ctx);
  cpu::layerNorm(x, scale, bias, y, rows, cols, eps);
}

void layerNorm(Context &ctx, const float *x, const float *scale,
               const float *bias, bf16 *y, int64_t rows, int64_t cols,
               double eps) {
  state(ctx);
  cpu::layerNorm(x, scale, bias, y, rows, cols, eps);
}

void normGrad(Context &ctx, const float *x, const float *g,
              const float *scale, const float *residual, float *dx,
              float *dscale, float *dbias, int64_t rows, int64_t cols,
              double eps, bool rms) {
  state(ctx);
  cpu::normGrad(x, g, scale, residual, dx, dscale, dbias, rows, cols, eps,
                rms);
}

void normGrad(Context &ctx, const float *x, const bf16 *g,
              const float *scale, const float *residual, float *dx,
              float *dscale, float *dbias, int64_t rows, int64_t cols,
              double eps, bool rms) {
  state(ctx);
  cpu::normGrad(x, g, scale, residual, dx, dscale, dbias, rows, cols, eps,
                rms);
}

void rmsNorm(Context &ctx, const float *x, const float *scale, float *y,
             int64_t rows, int64_t cols, double eps) {
  state(ctx);
  cpu::rmsNorm(x, scale, y, rows, cols, eps);
}

void rmsNorm(Context &ctx, const float *x, const float *scale, bf16 *y,
             int64_t rows, int64_t cols, double eps) {
  state(ctx);
  cpu::rmsNorm(x, scale, y, rows, cols, eps);
}

void crossEntropy(Context &ctx, const char *op, const float *logits,
                  const int64_t *labels, float *out, int64_t n,
                  int64_t classes, cpu::Reduction reduction, bool hasIgnore,
                  int64_t ignoreIndex) {
  state(ctx);
  cpu::crossEntropy(ctx, op, logits, labels, out, n, classes, reduction,
                    hasIgnore, ignoreIndex);
}

void crossEntropy(Context &ctx, const char *op, const float *logits,
                  const int32_t *labels, float *out, int64_t n,
                  int64_t classes, cpu::Reduction reduction, bool hasIgnore,
                  int64_t ignoreIndex) {
  state(ctx);
  cpu::crossEntropy(ctx, op, logits, labels, out, n, classes, reduction,
                    hasIgnore, ignoreIndex);
}

void crossEntropySoftmax(Context &ctx, const char *op, const float *logits,
                         const int64_t *labels, float *out, float *probs,
                         int64_t n, int64_t classes, cpu::Reduction reduction,
                         bool hasIgnore, int64_t ignoreIndex) {
  state(ctx);
  cpu::crossEntropySoftmax(ctx, op, logits, labels, out, probs, n, classes,
                           reduction, hasIgnore, ignoreIndex);
}

void crossEntropySoftmax(Context &ctx, const char *op, const float *logits,
                         const int32_t *labels, float *out, float *probs,
                         int64_t n, int64_t classes, cpu::Reduction reduction,
                         bool hasIgnore, int64_t ignoreIndex) {
  state(ctx);
  cpu::crossEntropySoftmax(ctx, op, logits, labels, out, probs, n, classes,
                           reduction, hasIgnore, ignoreIndex);
}

void gather(Context &ctx, const char *op, const void *data, int64_t elemBytes,
            const int64_t *indices, void *out, int64_t outer, int64_t axisSize,
            int64_t inner, int64_t numIndices) {
  state(ctx);
  cpu::gather(ctx, op, data, elemBytes, indices, out, outer, axisSize, inner,
              numIndices);
}

void gather(Context &ctx, const char *op, const void *data, int64_t elemBytes,
            const int32_t *indices, void *out, int64_t outer, int64_t axisSize,
            int64_t inner, int64_t numIndices) {
  state(ctx);
  cpu::gather(ctx, op, data, elemBytes, indices, out, outer, axisSize, inner,
              numIndices);
}

void scatterAdd(Context &ctx, const char *op, const float *target,
                const int64_t *indices, const float *updates, float *out,
                int64_t outer, int64_t axisSize, int64_t inner,
                int64_t numIndices) {
  state(ctx);
  cpu::scatterAdd(ctx, op, target, indices, updates, out, outer, axisSize,
                  inner, numIndices);
}

void scatterAdd(Context &ctx, const char *op, const float *target,
                const int32_t *indices, const float *updates, float *out,
                int64_t outer, int64_t axisSize, int64_t inner,
                int64_t numIndices) {
  state(ctx);
  cpu::scatterAdd(ctx, op, target, indices, updates, out, outer, axisSize,
                  inner, numIndices);
}

void copyStrided(Context &ctx, const void *src, void *dst, int64_t elemBytes,
                 int32_t rank, const int64_t *shape, const int64_t *srcStrides,
                 int64_t srcOffset) {
  state(ctx);
  cpu::copyStrided(src, dst, elemBytes, rank, shape, srcStrides, srcOffset);
}

//===----------------------------------------------------------------------===//
// Communication: the CPU runtime's MPI
//===----------------------------------------------------------------------===//

CommHandle allReduceStart(Context &ctx, float *buffer, int64_t count,
                          ReduceOp op, Group group) {
  state(ctx);
  return rt::allReduceStart(ctx, buffer, count, op, group);
}

CommHandle rowSparseAllReduceStart(Context &ctx, float *buffer, int64_t rows,
                                   int64_t width, Group group) {
  state(ctx);
  return rt::rowSparseAllReduceStart(ctx, buffer, rows, width, group);
}

CommHandle sendStart(Context &ctx, const void *buffer, int64_t bytes, int peer,
                     int tag, Group group) {
  state(ctx);
  return rt::sendStart(ctx, buffer, bytes, peer, tag, group);
}

CommHandle recvStart(Context &ctx, void *buffer, int64_t bytes, int peer,
                     int tag, Group group) {
  state(ctx);
  return rt::recvStart(ctx, buffer, bytes, peer, tag, group);
}

void wait(Context &ctx, CommHandle handle) {
  state(ctx);
  rt::wait(ctx, handle);
}

//===----------------------------------------------------------------------===//
// Swap copies: the CPU runtime's copy thread
//===----------------------------------------------------------------------===//

CopyHandle swapOutStart(Context &ctx, void *host, const void *device,
                        int64_t bytes) {
  state(ctx);
  ctx.deviceToHostBytes += std::max<int64_t>(bytes, 0);
  return rt::swapOutStart(ctx, host, device, bytes);
}

CopyHandle swapInStart(Context &ctx, void *device, const void *host,
                       int64_t bytes) {
  state(ctx);
  ctx.hostToDeviceBytes += std::max<int64_t>(bytes, 0);
  return rt::swapInStart(ctx, device, host, bytes);
}

void wait(Context &ctx, CopyHandle handle) {
  state(ctx);
  rt::wait(ctx, handle);
}

} // namespace cuda
} // namespace rt
} // namespace loom

//===- CudaKernels.h - Library kernels and comm of the CUDA backend -*- C++ -*-//
//
// The CUDA backend (library LoomRuntimeCUDA, built when CMake finds nvcc,
// cuBLAS and NCCL): the kernels of CpuKernels.h with the same signatures and
// semantics, on device pointers, enqueued on the rank's compute stream, and
// Comm.h's operations over NCCL on a separate communication stream. Plain
// C++ (no CUDA headers) so emitted code compiles without nvcc.
//
// Execution model: every call returns once its work is enqueued. Errors the
// host can see (bad sizes, CUDA/cuBLAS/NCCL failures) call fail() at once;
// errors only the device sees (an out-of-range label or index) are recorded
// on the device and reported by the next synchronize(), naming the op and
// the offending value. A comm start records an event on the compute stream
// and makes the communication stream wait for it, so it sees everything
// enqueued before it; wait() makes the compute stream wait for the
// operation, without blocking the host. NCCL has no tags: sends and
// receives between two ranks match in posting order, and are posted
// together (one NCCL group) at the next wait(), collective or
// synchronize(), so a ring of them cannot deadlock.
//
// Differences from the CPU kernels: reductions (softmax, norms, losses)
// accumulate in double in a fixed order, so results are deterministic but
// may differ from the CPU's in the last bit; scatterAdd adds duplicate
// indices with float atomics, in an unspecified order.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_CUDAKERNELS_H
#define LOOM_RUNTIME_CUDAKERNELS_H

#include "loom/Runtime/Comm.h"
#include "loom/Runtime/CpuKernels.h"
#include "loom/Runtime/Runtime.h"

#include <cstdint>

namespace loom {
namespace rt {
namespace cuda {

/// Binds this rank to a device (local rank modulo the device count) and
/// creates its compute and communication streams, its cuBLAS handle and its
/// NCCL communicator over the world (MPI must be initialised: trainMain()
/// does it). Fails with a clear error when there is no usable device.
void init(Context &ctx);
/// Releases what init() created (after synchronising).
void shutdown(Context &ctx);
/// Waits for all work enqueued on the compute stream; reports kernel
/// failures (e.g. a bad label) through fail().
void synchronize(Context &ctx);

/// The compute stream (a cudaStream_t): emitted kernels launch on it, so
/// they are ordered with the library's kernels and the communication's
/// events.
void *computeStream(Context &ctx);
/// Called after each launch of an emitted kernel: fail() naming `kernel`
/// when the launch failed (e.g. no code for this GPU's architecture).
void checkKernelLaunch(Context &ctx, const char *kernel);

/// Device memory (256-byte aligned); fail() when out of memory.
void *deviceAlloc(Context &ctx, int64_t bytes);
void deviceFree(Context &ctx, void *ptr);
/// Synchronous copies between host and device memory.
void copyToDevice(Context &ctx, void *dst, const void *src, int64_t bytes);
void copyToHost(Context &ctx, void *dst, const void *src, int64_t bytes);

// The kernels: see CpuKernels.h for what each computes.
void gemm(Context &ctx, bool transA, bool transB, int64_t batch, int64_t m,
          int64_t n, int64_t k, const float *a, int64_t strideA,
          const float *b, int64_t strideB, float *c, int64_t strideC);
/// cpu::gemmStrided's operands on the device: outer x inner matrices read
/// in place (rows lda/ldb/ldc apart).
void gemmStrided(Context &ctx, bool transA, bool transB, int64_t outer,
                 int64_t inner, int64_t m, int64_t n, int64_t k,
                 const float *a, int64_t aOuter, int64_t aInner, int64_t lda,
                 const float *b, int64_t bOuter, int64_t bInner, int64_t ldb,
                 float *c, int64_t cOuter, int64_t cInner, int64_t ldc);
/// cpu::gemmBias's on the device: one cuBLASLt matmul with the bias
/// epilogue (CUBLASLT_EPILOGUE_BIAS).
void gemmBias(Context &ctx, bool transA, bool transB, int64_t m, int64_t n,
              int64_t k, const float *a, const float *b, const float *bias,
              float *c);
/// cpu::gemmAccumulate's on the device: cuBLAS with beta = 1.
void gemmAccumulate(Context &ctx, bool transA, bool transB, int64_t m,
                    int64_t n, int64_t k, const float *a, const float *b,
                    float *c);
/// cpu::gemmBiasGelu's on the device: one cuBLASLt matmul with the
/// CUBLASLT_EPILOGUE_GELU_AUX_BIAS epilogue (`pre` its aux output), when n
/// is a multiple of 8 (cuBLASLt's rule for the aux leading dimension);
/// else gemmBias into `pre` and a GELU kernel.
void gemmBiasGelu(Context &ctx, bool transA, bool transB, int64_t m,
                  int64_t n, int64_t k, const float *a, const float *b,
                  const float *bias, float *pre, float *c);
/// cpu::gemmDGelu's on the device: one cuBLASLt matmul with the
/// CUBLASLT_EPILOGUE_DGELU epilogue (`pre` its aux input) when n is a
/// multiple of 8, else the gemm and a kernel scaling C.
void gemmDGelu(Context &ctx, bool transA, bool transB, int64_t m,
               int64_t n, int64_t k, const float *a, const float *b,
               const float *pre, float *c);
/// bf16 operands and result, f32 accumulation (--precision bf16).
void gemmBias(Context &ctx, bool transA, bool transB, int64_t m, int64_t n,
              int64_t k, const bf16 *a, const bf16 *b, const bf16 *bias,
              bf16 *c);
void gemm(Context &ctx, bool transA, bool transB, int64_t batch, int64_t m,
          int64_t n, int64_t k, const bf16 *a, int64_t strideA,
          const bf16 *b, int64_t strideB, bf16 *c, int64_t strideC);
void gemmStrided(Context &ctx, bool transA, bool transB, int64_t outer,
                 int64_t inner, int64_t m, int64_t n, int64_t k,
                 const bf16 *a, int64_t aOuter, int64_t aInner, int64_t lda,
                 const bf16 *b, int64_t bOuter, int64_t bInner, int64_t ldb,
                 bf16 *c, int64_t cOuter, int64_t cInner, int64_t ldc);
void softmax(Context &ctx, const float *x, float *y, int64_t outer, int64_t n,
             int64_t inner, bool log);
void softmax(Context &ctx, const bf16 *x, bf16 *y, int64_t outer, int64_t n,
             int64_t inner, bool log);
void layerNorm(Context &ctx, const float *x, const float *scale,
               const float *bias, float *y, int64_t rows, int64_t cols,
               double eps);
void rmsNorm(Context &ctx, const float *x, const float *scale, float *y,
             int64_t rows, int64_t cols, double eps);
// A bf16 `y`: the f32 result rounded once (a norm and the conversion after
// it, in one pass).
void layerNorm(Context &ctx, const float *x, const float *scale,
               const float *bias, bf16 *y, int64_t rows, int64_t cols,
               double eps);
void rmsNorm(Context &ctx, const float *x, const float *scale, bf16 *y,
             int64_t rows, int64_t cols, double eps);
void normGrad(Context &ctx, const float *x, const float *g,
              const float *scale, const float *residual, float *dx,
              float *dscale, float *dbias, int64_t rows, int64_t cols,
              double eps, bool rms);
void normGrad(Context &ctx, const float *x, const bf16 *g,
              const float *scale, const float *residual, float *dx,
              float *dscale, float *dbias, int64_t rows, int64_t cols,
              double eps, bool rms);
// Labels and indices: i64 or i32, as in CpuKernels.h.
void crossEntropy(Context &ctx, const char *op, const float *logits,
                  const int64_t *labels, float *out, int64_t n,
                  int64_t classes, cpu::Reduction reduction, bool hasIgnore,
                  int64_t ignoreIndex);
void crossEntropy(Context &ctx, const char *op, const float *logits,
                  const int32_t *labels, float *out, int64_t n,
                  int64_t classes, cpu::Reduction reduction, bool hasIgnore,
                  int64_t ignoreIndex);
void crossEntropySoftmax(Context &ctx, const char *op, const float *logits,
                         const int64_t *labels, float *out, float *probs,
                         int64_t n, int64_t classes, cpu::Reduction reduction,
                         bool hasIgnore, int64_t ignoreIndex);
void crossEntropySoftmax(Context &ctx, const char *op, const float *logits,
                         const int32_t *labels, float *out, float *probs,
                         int64_t n, int64_t classes, cpu::Reduction reduction,
                         bool hasIgnore, int64_t ignoreIndex);
void gather(Context &ctx, const char *op, const void *data, int64_t elemBytes,
            const int64_t *indices, void *out, int64_t outer, int64_t axisSize,
            int64_t inner, int64_t numIndices);
void gather(Context &ctx, const char *op, const void *data, int64_t elemBytes,
            const int32_t *indices, void *out, int64_t outer, int64_t axisSize,
            int64_t inner, int64_t numIndices);
void scatterAdd(Context &ctx, const char *op, const float *target,
                const int64_t *indices, const float *updates, float *out,
                int64_t outer, int64_t axisSize, int64_t inner,
                int64_t numIndices);
void scatterAdd(Context &ctx, const char *op, const float *target,
                const int32_t *indices, const float *updates, float *out,
                int64_t outer, int64_t axisSize, int64_t inner,
                int64_t numIndices);
void copyStrided(Context &ctx, const void *src, void *dst, int64_t elemBytes,
                 int32_t rank, const int64_t *shape, const int64_t *srcStrides,
                 int64_t srcOffset);

// Communication over NCCL (device buffers); see Comm.h.
CommHandle allReduceStart(Context &ctx, float *buffer, int64_t count,
                          ReduceOp op, Group group = Group::World);
/// On the GPU a dense all-reduce of the table (the same sum); emulated,
/// the CPU runtime's row exchange.
CommHandle rowSparseAllReduceStart(Context &ctx, float *buffer, int64_t rows,
                                   int64_t width, Group group = Group::World);
CommHandle sendStart(Context &ctx, const void *buffer, int64_t bytes, int peer,
                     int tag, Group group = Group::World);
CommHandle recvStart(Context &ctx, void *buffer, int64_t bytes, int peer,
                     int tag, Group group = Group::World);
void wait(Context &ctx, CommHandle handle);

// Swap copies (loom-swap) between device buffers and the host pool
// (hostArena, pinned on first use), on the rank's copy stream: a swap-out
// starts after the compute so far, and wait() makes the compute stream
// wait for the copy (not the host). Emulated: the CPU runtime's copy
// thread (Comm.h, --host-link applies).
CopyHandle swapOutStart(Context &ctx, void *host, const void *device,
                        int64_t bytes);
CopyHandle swapInStart(Context &ctx, void *device, const void *host,
                       int64_t bytes);
void wait(Context &ctx, CopyHandle handle);

} // namespace cuda
} // namespace rt
} // namespace loom

#endif // LOOM_RUNTIME_CUDAKERNELS_H

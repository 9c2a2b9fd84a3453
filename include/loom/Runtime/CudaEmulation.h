//===- CudaEmulation.h - CUDA source as host C++ ----------------*- C++ -*-===//
//
// Builds the CUDA source that Loom emits (see CudaProgram.h) as ordinary
// host C++, so that every emitted kernel runs, and every program trains, on
// a machine without a GPU (`loomc --target cuda --cuda-emulate`):
//
//  - __global__, __device__, __host__ and __forceinline__ mean nothing;
//  - threadIdx, blockIdx, blockDim and gridDim are thread_local values that
//    LOOM_LAUNCH(kernel, grid, block, stream, args...) sets while it calls
//    the kernel once per block and thread, in order, on the calling thread
//    (before it returns: a launch is synchronous);
//  - a kernel with __syncthreads barriers is written in phases: the code
//    between two barriers runs under `if (LOOM_IN_PHASE(phase))`, `phase`
//    counting the barriers passed, and only shared memory carries values
//    across a barrier. LOOM_LAUNCH_PHASED(kernel, grid, block, phases,
//    stream, args...) runs each block's threads through phase 0, then all
//    through phase 1, and so on (on a GPU, LOOM_IN_PHASE is true and the
//    barriers are real); __syncthreads does nothing here, and __shared__
//    variables are function statics, one per block since blocks run one
//    after the other;
//  - a small part of the CUDA runtime API (cudaMalloc, cudaFree,
//    cudaMemcpy[Async], cudaMemset, streams and events) works on host
//    memory, synchronously;
//  - the runtime's cuda:: API (CudaKernels.h) is the library
//    LoomRuntimeCudaEmulation: device memory is host memory, gemm is the
//    CPU BLAS (as cuBLAS would be), softmax, norms, losses, gather and
//    scatter are the CPU kernels, and communication is the CPU runtime's
//    MPI (NCCL's place).
//
// What emulation checks: the emitted source's syntax and types (as host
// C++), its indexing (every thread's grid-stride iterations, run under the
// sanitizers too), launch geometry that leaves elements out, the memory
// plan and the order of kernels, library calls and communication, and the
// numbers (the CPU program's, to rounding).
//
// What it cannot check: data races between threads and blocks (they run
// one after the other, so a kernel that is only correct sequentially
// passes), real concurrency of streams and of communication with compute
// (everything is synchronous here), warp-level behaviour, memory
// coalescing, occupancy, register and shared-memory limits, device-only
// numerics (fast-math intrinsics, fused multiply-add contraction, the
// GPU's libm) and the real cuBLAS/NCCL: the device check
// (utils/device_check.py, run on a GPU machine) trains the emitted programs
// there against the CPU's losses and times them against PyTorch.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_CUDAEMULATION_H
#define LOOM_RUNTIME_CUDAEMULATION_H

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned x = 1, unsigned y = 1, unsigned z = 1)
      : x(x), y(y), z(z) {}
};
using uint3 = dim3;

namespace loom {
namespace cuda_emulation {
/// The indices of the emulated thread running a kernel.
inline thread_local uint3 threadIdx;
inline thread_local uint3 blockIdx;
inline thread_local dim3 blockDim;
inline thread_local dim3 gridDim;
/// The phase of a phased kernel (LOOM_LAUNCH_PHASED) that the emulated
/// threads are running.
inline thread_local int phase = 0;

/// Runs `body` for every thread of each block, `phases` times: phase 0 for
/// all the block's threads, then phase 1, and so on.
template <typename Body>
void launchPhased(dim3 grid, dim3 block, int phases, Body body) {
  gridDim = grid;
  blockDim = block;
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx) {
        blockIdx = uint3(bx, by, bz);
        for (int p = 0; p < phases; ++p) {
          phase = p;
          for (unsigned tz = 0; tz < block.z; ++tz)
            for (unsigned ty = 0; ty < block.y; ++ty)
              for (unsigned tx = 0; tx < block.x; ++tx) {
                threadIdx = uint3(tx, ty, tz);
                body();
              }
        }
      }
  phase = 0;
}

/// Runs `body` (the kernel call) once per thread of every block of the
/// grid, blocks and threads in order, with the indices set.
template <typename Body> void launch(dim3 grid, dim3 block, Body body) {
  launchPhased(grid, block, 1, body);
}
} // namespace cuda_emulation
} // namespace loom

#define __shared__ static
inline void __syncthreads() {}
#define LOOM_IN_PHASE(p) ((p) == ::loom::cuda_emulation::phase)
#define LOOM_LAUNCH_PHASED(kernel, grid, block, phases, stream, ...)           \
  do {                                                                         \
    (void)(stream);                                                            \
    ::loom::cuda_emulation::launchPhased(dim3(grid), dim3(block), (phases),    \
                                         [&] { kernel(__VA_ARGS__); });        \
  } while (0)

using loom::cuda_emulation::blockDim;
using loom::cuda_emulation::blockIdx;
using loom::cuda_emulation::gridDim;
using loom::cuda_emulation::threadIdx;

/// kernel<<<grid, block, 0, stream>>>(args...): synchronous, on this
/// thread. The stream orders nothing (everything is in program order).
#define LOOM_LAUNCH(kernel, grid, block, stream, ...)                          \
  do {                                                                         \
    (void)(stream);                                                            \
    ::loom::cuda_emulation::launch(dim3(grid), dim3(block),                    \
                                   [&] { kernel(__VA_ARGS__); });              \
  } while (0)

//===----------------------------------------------------------------------===//
// The CUDA runtime API, on host memory
//===----------------------------------------------------------------------===//

enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
};
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};
/// Streams and events order nothing: every call completes before it
/// returns.
struct CUstream_st {};
struct CUevent_st {};
using cudaStream_t = CUstream_st *;
using cudaEvent_t = CUevent_st *;

inline const char *cudaGetErrorString(cudaError_t error) {
  switch (error) {
  case cudaSuccess:
    return "no error";
  case cudaErrorInvalidValue:
    return "invalid argument";
  case cudaErrorMemoryAllocation:
    return "out of memory";
  }
  return "unknown error";
}
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
inline cudaError_t cudaMalloc(void **ptr, size_t bytes) {
  if (!ptr)
    return cudaErrorInvalidValue;
  // 256-byte aligned, as cudaMalloc's.
  *ptr = std::aligned_alloc(256, (bytes + 255) / 256 * 256 + (bytes ? 0 : 256));
  return *ptr ? cudaSuccess : cudaErrorMemoryAllocation;
}
inline cudaError_t cudaFree(void *ptr) {
  std::free(ptr);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes,
                              cudaMemcpyKind) {
  if (bytes)
    std::memmove(dst, src, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes,
                                   cudaMemcpyKind kind, cudaStream_t = nullptr) {
  return cudaMemcpy(dst, src, bytes, kind);
}
inline cudaError_t cudaMemset(void *ptr, int value, size_t bytes) {
  if (bytes)
    std::memset(ptr, value, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaMemsetAsync(void *ptr, int value, size_t bytes,
                                   cudaStream_t = nullptr) {
  return cudaMemset(ptr, value, bytes);
}
inline cudaError_t cudaStreamCreate(cudaStream_t *stream) {
  static CUstream_st emulated;
  *stream = &emulated;
  return cudaSuccess;
}
inline cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t,
                                       unsigned = 0) {
  return cudaSuccess;
}
inline cudaError_t cudaEventCreate(cudaEvent_t *event) {
  static CUevent_st emulated;
  *event = &emulated;
  return cudaSuccess;
}
inline cudaError_t cudaEventDestroy(cudaEvent_t) { return cudaSuccess; }
inline cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t = nullptr) {
  return cudaSuccess;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }

#endif // LOOM_RUNTIME_CUDAEMULATION_H


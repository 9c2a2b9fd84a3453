//===- CudaProgram.h - What an emitted .cu includes -------------*- C++ -*-===//
//
// The one include of the CUDA source that `loom-translate --emit-cuda`
// (loomc --target cuda) writes: the runtime's API (Runtime.h, Comm.h,
// CudaKernels.h) and LOOM_LAUNCH(kernel, grid, block, stream, args...),
// through which the source launches its __global__ kernels:
//
//  - compiled by nvcc: the CUDA runtime and kernel<<<grid, block, 0,
//    stream>>>(args...); link LoomRuntimeCUDA;
//  - compiled as host C++ with -DLOOM_CUDA_EMULATION (loomc --target cuda
//    --cuda-emulate): loom/Runtime/CudaEmulation.h, whose LOOM_LAUNCH runs
//    the kernel once per (block, thread) on the calling thread; link
//    LoomRuntimeCudaEmulation.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_CUDAPROGRAM_H
#define LOOM_RUNTIME_CUDAPROGRAM_H

#include "loom/Runtime/Comm.h"
#include "loom/Runtime/CudaKernels.h"
#include "loom/Runtime/Runtime.h"

#if defined(LOOM_CUDA_EMULATION)
#include "loom/Runtime/CudaEmulation.h"
#elif defined(__CUDACC__)
#include <cuda_runtime.h>
#define LOOM_LAUNCH(kernel, grid, block, stream, ...)                          \
  kernel<<<(grid), (block), 0, (stream)>>>(__VA_ARGS__)
// A kernel whose threads synchronise (barriers, warp shuffles): a launch
// like any other on a GPU; the emulation runs its threads as fibers.
#define LOOM_LAUNCH_SYNC(kernel, grid, block, stream, ...)                     \
  kernel<<<(grid), (block), 0, (stream)>>>(__VA_ARGS__)
#else
#error "an emitted CUDA program builds with nvcc, or as host C++ with -DLOOM_CUDA_EMULATION"
#endif

#endif // LOOM_RUNTIME_CUDAPROGRAM_H

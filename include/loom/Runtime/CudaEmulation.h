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
//  - a kernel whose threads synchronise (__syncthreads, the warp shuffles
//    __shfl_down_sync and __shfl_xor_sync) is launched with
//    LOOM_LAUNCH_SYNC(kernel, grid, block, stream, args...): each thread
//    of a block is a fiber (ucontext) on the calling thread, switched at
//    every barrier and shuffle, so the kernel is written as for a GPU. A
//    barrier releases the block when every live thread of it has arrived;
//    a shuffle exchanges the values of the lanes of `mask` once they have
//    all arrived. A thread that finishes while others wait at a barrier,
//    or lanes that never meet, abort the program with the kernel's block
//    and thread (divergent synchronisation, which a GPU leaves undefined);
//    __shared__ variables are function statics, one per block since
//    blocks run one after the other;
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
// passes; the fibers of a block switch only at barriers and shuffles),
// real concurrency of streams and of communication with compute
// (everything is synchronous here), lanes of a warp diverging between
// shuffles (they run one at a time), memory
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
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include <ucontext.h>

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
/// Sets gridDim and blockDim, then blockIdx to each block of `grid` in
/// order, calling `runBlock()` for each.
template <typename RunBlock>
void forEachBlock(dim3 grid, dim3 block, RunBlock runBlock) {
  gridDim = grid;
  blockDim = block;
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx) {
        blockIdx = uint3(bx, by, bz);
        runBlock();
      }
}

/// Runs `body` (the kernel call) once per thread of every block of the
/// grid, blocks and threads in order, with the indices set. For kernels
/// without barriers or shuffles (LOOM_LAUNCH).
template <typename Body> void launch(dim3 grid, dim3 block, Body body) {
  forEachBlock(grid, block, [&] {
    for (unsigned tz = 0; tz < block.z; ++tz)
      for (unsigned ty = 0; ty < block.y; ++ty)
        for (unsigned tx = 0; tx < block.x; ++tx) {
          threadIdx = uint3(tx, ty, tz);
          body();
        }
  });
}

/// The threads of one block as fibers (LOOM_LAUNCH_SYNC): each runs the
/// kernel on its own stack and returns to the scheduler at a barrier or a
/// shuffle; the scheduler resumes the runnable ones in thread order and
/// releases a barrier (a warp's shuffle) once its threads (lanes) are all
/// there.
class FiberBlock {
public:
  enum class State { runnable, barrier, shuffle, shuffled, done };

  /// Where the fibers of this OS thread are (null outside a launch).
  static FiberBlock *&current() {
    static thread_local FiberBlock *block = nullptr;
    return block;
  }

  template <typename Body>
  void run(dim3 grid, dim3 block, const char *kernel, Body &body) {
    size_t n = static_cast<size_t>(block.x) * block.y * block.z;
    threads.assign(n, Thread());
    std::vector<std::unique_ptr<char[]>> &stacks = stackPool();
    while (stacks.size() < n)
      stacks.emplace_back(new char[kStackBytes]);
    name = kernel;
    run_ = [](void *b) { (*static_cast<Body *>(b))(); };
    bodyPtr = &body;
    current() = this;
    forEachBlock(grid, block, [&] {
      for (size_t t = 0; t < n; ++t) {
        Thread &th = threads[t];
        th = Thread();
        th.warpBase = t - t % 32;
        th.index = uint3(static_cast<unsigned>(t % block.x),
                         static_cast<unsigned>(t / block.x % block.y),
                         static_cast<unsigned>(t / block.x / block.y));
        getcontext(&th.context);
        th.context.uc_stack.ss_sp = stacks[t].get();
        th.context.uc_stack.ss_size = kStackBytes;
        th.context.uc_link = &scheduler;
        makecontext(&th.context, &FiberBlock::entry, 0);
      }
      schedule();
    });
    current() = nullptr;
  }

  /// __syncthreads.
  void barrier() {
    self().state = State::barrier;
    yield();
  }

  /// A shuffle of `value` among the lanes of `mask`: the value `source`
  /// (a lane of the warp) posted, or `value` when `source` is not one.
  template <typename T> T shuffle(unsigned mask, T value, int source) {
    static_assert(sizeof(T) <= sizeof(uint64_t), "a shuffle moves 8 bytes");
    Thread &me = self();
    std::memcpy(&me.posted, &value, sizeof(T));
    me.mask = mask;
    me.state = State::shuffle;
    yield(); // until every lane of mask has posted
    T result = value;
    unsigned lane = laneOf(me);
    if (source >= 0 && source < 32 && (mask >> source & 1u) &&
        source != static_cast<int>(lane))
      std::memcpy(&result, &threads[me.warpBase + source].posted, sizeof(T));
    me.state = State::shuffled;
    yield(); // until every lane has read, before a lane posts again
    return result;
  }

  unsigned lane() { return laneOf(self()); }

private:
  struct Thread {
    ucontext_t context;
    uint3 index;
    State state = State::runnable;
    uint64_t posted = 0;
    unsigned mask = 0;
    size_t warpBase = 0;
  };
  static constexpr size_t kStackBytes = 64 * 1024;

  /// One stack per thread of the largest block yet, kept across blocks
  /// and launches (of every kernel) of this OS thread.
  static std::vector<std::unique_ptr<char[]>> &stackPool() {
    static thread_local std::vector<std::unique_ptr<char[]>> stacks;
    return stacks;
  }

  static void entry() {
    FiberBlock *b = current();
    b->run_(b->bodyPtr);
    b->threads[b->running].state = State::done;
  }

  Thread &self() { return threads[running]; }
  unsigned laneOf(const Thread &t) const {
    return static_cast<unsigned>(&t - threads.data()) % 32;
  }
  void yield() { swapcontext(&threads[running].context, &scheduler); }

  [[noreturn]] void fail(const char *why) {
    std::fprintf(stderr,
                 "loom cuda emulation: kernel %s, block (%u, %u, %u): %s\n",
                 name, blockIdx.x, blockIdx.y, blockIdx.z, why);
    std::abort();
  }

  /// Runs the block's fibers until all are done.
  void schedule() {
    for (;;) {
      bool progressed = false;
      for (size_t t = 0; t < threads.size(); ++t) {
        if (threads[t].state != State::runnable)
          continue;
        running = t;
        threadIdx = threads[t].index;
        swapcontext(&scheduler, &threads[t].context);
        progressed = true;
      }
      if (progressed)
        continue;
      size_t done = 0, atBarrier = 0;
      for (const Thread &t : threads) {
        done += t.state == State::done;
        atBarrier += t.state == State::barrier;
      }
      if (done == threads.size())
        return;
      // Warps may shuffle while the others wait at a barrier.
      if (releaseShuffles())
        continue;
      if (atBarrier == 0)
        fail("the lanes of a warp shuffle do not all reach it");
      if (atBarrier != threads.size())
        fail("__syncthreads is not reached by every thread of the block");
      for (Thread &t : threads)
        t.state = State::runnable;
    }
  }

  /// Releases each warp whose lanes of the shuffle's mask are all posted
  /// (or have all read); whether any was.
  bool releaseShuffles() {
    bool released = false;
    for (size_t base = 0; base < threads.size(); base += 32) {
      size_t end = base + 32 < threads.size() ? base + 32 : threads.size();
      for (State waiting : {State::shuffle, State::shuffled}) {
        unsigned mask = 0;
        bool any = false;
        for (size_t t = base; t < end; ++t)
          if (threads[t].state == waiting) {
            mask = threads[t].mask;
            any = true;
          }
        if (!any)
          continue;
        bool all = true;
        for (size_t t = base; t < end; ++t)
          if ((mask >> (t - base) & 1u) && threads[t].state != waiting)
            all = false;
        if (!all)
          continue;
        for (size_t t = base; t < end; ++t)
          if (threads[t].state == waiting)
            threads[t].state = State::runnable;
        released = true;
      }
    }
    return released;
  }

  std::vector<Thread> threads;
  ucontext_t scheduler;
  size_t running = 0;
  const char *name = "";
  void (*run_)(void *) = nullptr;
  void *bodyPtr = nullptr;
};

/// LOOM_LAUNCH_SYNC: `body` for every thread of every block, the threads
/// of a block as fibers that synchronise.
template <typename Body>
void launchSync(dim3 grid, dim3 block, const char *kernel, Body body) {
  FiberBlock fibers;
  fibers.run(grid, block, kernel, body);
}
} // namespace cuda_emulation
} // namespace loom

#define __shared__ static
inline void __syncthreads() {
  if (auto *block = ::loom::cuda_emulation::FiberBlock::current())
    block->barrier();
}
template <typename T>
T __shfl_down_sync(unsigned mask, T value, unsigned delta) {
  auto *block = ::loom::cuda_emulation::FiberBlock::current();
  if (!block)
    return value; // outside LOOM_LAUNCH_SYNC: no other lane
  return block->shuffle(mask, value,
                        static_cast<int>(block->lane() + delta));
}
template <typename T> T __shfl_xor_sync(unsigned mask, T value, int lanes) {
  auto *block = ::loom::cuda_emulation::FiberBlock::current();
  if (!block)
    return value;
  return block->shuffle(mask, value,
                        static_cast<int>(block->lane() ^ lanes));
}
#define LOOM_LAUNCH_SYNC(kernel, grid, block, stream, ...)                     \
  do {                                                                         \
    (void)(stream);                                                            \
    ::loom::cuda_emulation::launchSync(dim3(grid), dim3(block), #kernel,       \
                                       [&] { kernel(__VA_ARGS__); });          \
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


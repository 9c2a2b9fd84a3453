// The emulation runs the threads of a LOOM_LAUNCH_SYNC block as fibers:
// __syncthreads waits for the whole block and a warp shuffle for the lanes
// of its mask, so values cross threads as on a GPU; a barrier some threads
// never reach aborts naming the kernel and block.
// RUN: split-file %s %t
// RUN: c++ -std=c++17 -Wall -Wextra -Werror -DLOOM_CUDA_EMULATION -x c++ -I %loom_src/include %t/sync.cpp -o %t/sync
// RUN: %t/sync | FileCheck %s
// RUN: c++ -std=c++17 -Wall -Wextra -Werror -DLOOM_CUDA_EMULATION -x c++ -I %loom_src/include %t/diverge.cpp -o %t/diverge
// RUN: not --crash %t/diverge 2>&1 | FileCheck %s --check-prefix=DIVERGE

// Block b of 64 threads: thread t holds 100 b + t. Shared memory reverses
// the values across a barrier, then each warp's butterfly (xor shuffles)
// gives every lane its warp's sum, and down shuffles its lane + 1's value.
// CHECK: block 0: reversed 63 0, warp sums 1520 496, next 1 63
// CHECK: block 1: reversed 163 100, warp sums 4720 3696, next 101 163

//--- sync.cpp
#include "loom/Runtime/CudaEmulation.h"
#include <cstdio>

__global__ void kernel(int *reversed, int *sums, int *next) {
  __shared__ int values[64];
  int t = threadIdx.x, mine = 100 * blockIdx.x + t;
  values[t] = mine;
  __syncthreads();
  reversed[64 * blockIdx.x + t] = values[63 - t];
  int sum = mine;
  for (int lanes = 16; lanes > 0; lanes /= 2)
    sum += __shfl_xor_sync(0xffffffffu, sum, lanes);
  sums[64 * blockIdx.x + t] = sum;
  next[64 * blockIdx.x + t] = __shfl_down_sync(0xffffffffu, mine, 1);
}

int main() {
  int reversed[128], sums[128], next[128];
  LOOM_LAUNCH_SYNC(kernel, 2, 64, nullptr, reversed, sums, next);
  for (int b = 0; b < 2; ++b)
    std::printf("block %d: reversed %d %d, warp sums %d %d, next %d %d\n", b,
                reversed[64 * b], reversed[64 * b + 63], sums[64 * b + 40],
                sums[64 * b + 3], next[64 * b], next[64 * b + 63]);
  return 0;
}

//--- diverge.cpp
#include "loom/Runtime/CudaEmulation.h"

__global__ void diverging(int *out) {
  if (threadIdx.x < 16)
    __syncthreads();
  out[threadIdx.x] = 1;
}

int main() {
  int out[32];
  LOOM_LAUNCH_SYNC(diverging, 1, 32, nullptr, out);
  return out[0];
}
// DIVERGE: loom cuda emulation: kernel diverging, block (0, 0, 0): __syncthreads is not reached by every thread of the block

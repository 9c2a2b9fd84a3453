//===- Threads.cpp - Threads per rank ---------------------------------------===//
//
// Several ranks on one machine (mpirun -np N on a node) must share its
// cores: left alone, every rank's OpenMP pool (which the GEMM library
// shares) starts one thread per core, and spinning threads of
// different ranks then take turns on the same cores. Unless the user chose
// (OMP_NUM_THREADS), each rank gets cores / ranks-on-this-node threads.
//
// Denormal floats are flushed to zero on the compute threads: as a model
// trains, the softmax of large logits underflows into denormals, and a
// GEMM reading them runs up to 90 times slower on x86 (measured on the tied
// LM head's gradient of a GPT-2-style model: 1 ms at step 1, 96 ms at step
// 3). Values below 1.2e-38 become zero, as TensorFlow's CPU kernels do.
//
//===----------------------------------------------------------------------===//

#include "RuntimeImpl.h"

#include <cstdlib>
#include <thread>

#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

#ifdef _OPENMP
#include <omp.h>
#endif

namespace loom {
namespace rt {

int shareCoresAmongLocalRanks(Context &ctx) {
  int localRanks = 1;
  if (ctx.comm != MPI_COMM_NULL) {
    MPI_Comm node;
    if (MPI_Comm_split_type(ctx.comm, MPI_COMM_TYPE_SHARED, ctx.rank,
                            MPI_INFO_NULL, &node) == MPI_SUCCESS) {
      MPI_Comm_size(node, &localRanks);
      MPI_Comm_free(&node);
    }
  }
  unsigned cores = std::thread::hardware_concurrency();
  int threads = cores == 0 ? 1 : static_cast<int>(cores) / localRanks;
  if (threads < 1)
    threads = 1;
#ifdef _OPENMP
  if (!std::getenv("OMP_NUM_THREADS"))
    omp_set_num_threads(threads);
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void flushDenormalsToZero() {
#if defined(__SSE2__)
  // MXCSR's flush-to-zero (bit 15) and denormals-are-zero (bit 6).
  auto set = [] { _mm_setcsr(_mm_getcsr() | 0x8040); };
  set();
#ifdef _OPENMP
  // The pool's threads, and those the GEMM library starts from them, inherit
  // the setting from the thread that creates them; set it on each anyway.
#pragma omp parallel
  set();
#endif
#endif
}

} // namespace rt
} // namespace loom

//===- Threads.cpp - Threads per rank ---------------------------------------===//
//
// Several ranks on one machine (mpirun -np N on a node) must share its
// cores: left alone, every rank's OpenMP pool (which OpenBLAS's OpenMP
// build shares) starts one thread per core, and spinning threads of
// different ranks then take turns on the same cores. Unless the user chose
// (OMP_NUM_THREADS), each rank gets cores / ranks-on-this-node threads.
//
//===----------------------------------------------------------------------===//

#include "RuntimeImpl.h"

#include <cstdlib>
#include <thread>

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

} // namespace rt
} // namespace loom

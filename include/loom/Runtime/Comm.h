//===- Comm.h - Asynchronous communication --------------------*- C++ -*-===//
//
// Collectives and point-to-point transfers are started, return a handle,
// and are completed by wait(). The CPU backend is MPI (also for one rank);
// the CUDA backend is NCCL on a communication stream. Groups (dp/tp/pp)
// are sub-communicators created by the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_COMM_H
#define LOOM_RUNTIME_COMM_H

#include "loom/Runtime/Runtime.h"

#include <cstdint>

namespace loom {
namespace rt {

enum class ReduceOp : int32_t { Sum = 0, Max = 1, Min = 2, Avg = 3 };

/// An in-flight operation; wait() completes it.
struct CommHandle {
  int64_t id = -1;
};

/// Rank and size in the world (and later in groups).
int worldRank(Context &ctx);
int worldSize(Context &ctx);

CommHandle allReduceStart(Context &ctx, float *buffer, int64_t count,
                          ReduceOp op);
CommHandle sendStart(Context &ctx, const void *buffer, int64_t bytes, int peer,
                     int tag);
CommHandle recvStart(Context &ctx, void *buffer, int64_t bytes, int peer,
                     int tag);
void wait(Context &ctx, CommHandle handle);

} // namespace rt
} // namespace loom

#endif // LOOM_RUNTIME_COMM_H

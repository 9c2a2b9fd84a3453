//===- Comm.h - Asynchronous communication --------------------*- C++ -*-===//
//
// Collectives and point-to-point transfers are started, return a handle,
// and are completed by wait(). The CPU backend is MPI (also for one rank),
// driven by a communication thread per rank so that started operations
// advance while the compute thread runs kernels;
// the CUDA backend is NCCL on a communication stream. Groups (dp/tp/pp)
// are sub-communicators created by the runtime from the program's mesh:
// world rank r has coordinates (d, p, t) with r = (d*pp + p)*tp + t (tp
// fastest, so a tensor-parallel group sits on one node). Group::Dp holds the
// ranks with this rank's (p, t), ordered by d; Group::Tp those with its
// (d, p), ordered by t; Group::Pp those with its (d, t), ordered by p.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_COMM_H
#define LOOM_RUNTIME_COMM_H

#include "loom/Runtime/Runtime.h"

#include <cstdint>

namespace loom {
namespace rt {

enum class ReduceOp : int32_t { Sum = 0, Max = 1, Min = 2, Avg = 3 };

/// The communicator an operation runs on (see above).
enum class Group : int32_t { World = 0, Dp = 1, Tp = 2, Pp = 3 };
constexpr int kNumGroups = 4;

/// An in-flight operation; wait() completes it.
struct CommHandle {
  int64_t id = -1;
};

/// Rank and size in the world.
int worldRank(Context &ctx);
int worldSize(Context &ctx);
/// This rank's index in `group` and the group's size.
int groupRank(Context &ctx, Group group);
int groupSize(Context &ctx, Group group);

/// All-reduces `count` floats in place over `group`; Avg divides the sum by
/// the group's size.
CommHandle allReduceStart(Context &ctx, float *buffer, int64_t count,
                          ReduceOp op, Group group = Group::World);
/// The sum over `group` of `rows` rows of `width` floats of which few are
/// nonzero (a data-parallel embedding gradient, loom.row_sparse): each rank
/// sends the indices and values of its rows holding a nonzero, and every
/// rank adds all of them, in rank order, into the zeroed buffer. The result
/// is allReduceStart's sum up to the order of the additions; the bytes
/// sent grow with the rows touched, not with the table.
CommHandle rowSparseAllReduceStart(Context &ctx, float *buffer, int64_t rows,
                                   int64_t width, Group group = Group::World);
/// Point-to-point: `peer` is a rank of `group` (its index in the group).
CommHandle sendStart(Context &ctx, const void *buffer, int64_t bytes, int peer,
                     int tag, Group group = Group::World);
CommHandle recvStart(Context &ctx, void *buffer, int64_t bytes, int peer,
                     int tag, Group group = Group::World);
/// Blocks until the operation completed (a watchdog ends the run when it
/// does not within trainMain's --comm-timeout); the handle is then free.
void wait(Context &ctx, CommHandle handle);
/// Whether the operation completed, without completing it (wait() is still
/// needed) and without any MPI call: operations advance on the rank's
/// communication thread while the caller computes.
bool isComplete(Context &ctx, CommHandle handle);

//===----------------------------------------------------------------------===//
// Swap copies between the device pool and the host pool (loom-swap)
//===----------------------------------------------------------------------===//

/// An in-flight copy; wait() completes it.
struct CopyHandle {
  int64_t id = -1;
};

/// The step's host pool: hostArenaBytes (ProgramSpec) bytes, 64-byte
/// aligned, where loom-swap's offloaded buffers live.
char *hostArena(Context &ctx);
/// Start copying `bytes` from a device buffer to the host pool (swapOut)
/// or back (swapIn) on the rank's copy thread; the buffers must stay
/// allocated and unchanged (the target unread) until wait(). With
/// trainMain's --host-link RATE each copy takes at least bytes / RATE
/// seconds, as over a PCIe link.
CopyHandle swapOutStart(Context &ctx, void *host, const void *device,
                        int64_t bytes);
CopyHandle swapInStart(Context &ctx, void *device, const void *host,
                       int64_t bytes);
/// Blocks until the copy is done; the handle is then free.
void wait(Context &ctx, CopyHandle handle);

} // namespace rt
} // namespace loom

#endif // LOOM_RUNTIME_COMM_H

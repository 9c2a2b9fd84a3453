//===- Comm.cpp - Asynchronous communication over MPI ---------------------===//
//
// Each start function posts non-blocking MPI operations on the runtime's
// own communicator (a duplicate of MPI_COMM_WORLD) or one of its groups
// (Context::initGroups, MPI_Comm_split) and returns a handle;
// wait() completes them. Transfers larger than an MPI count (int) are split
// into chunks, posted in order (MPI keeps messages between two ranks with one
// tag in order, so the chunks match up). Avg is Sum followed by a division
// in wait(). MPI errors are returned (MPI_ERRORS_RETURN) and reported with
// fail().
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Comm.h"
#include "RuntimeImpl.h"
#include "loom/Support/Mesh.h"

#include <algorithm>
#include <climits>
#include <string>

namespace loom {
namespace rt {

namespace {

/// Elements per MPI call: the largest multiple of 64 that fits in an int.
constexpr int64_t kMaxChunk = (INT_MAX / 64) * 64;

std::string mpiError(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<size_t>(length));
}

void check(Context &ctx, const char *op, int code) {
  if (code != MPI_SUCCESS)
    fail(ctx, op, mpiError(code).c_str());
}

void requireComm(Context &ctx, const char *op) {
  if (ctx.comm == MPI_COMM_NULL)
    fail(ctx, op, "communication is not initialised (call it from a step "
                  "run by trainMain)");
}

const char *groupName(Group group) {
  switch (group) {
  case Group::World:
    return "world";
  case Group::Dp:
    return "dp";
  case Group::Tp:
    return "tp";
  case Group::Pp:
    return "pp";
  }
  return "?";
}

/// The index of `group` into the Context's arrays; fail() for a value
/// outside the enum.
size_t groupIndex(Context &ctx, const char *op, Group group) {
  int g = static_cast<int>(group);
  if (g < 0 || g >= kNumGroups)
    fail(ctx, op, ("unknown group " + std::to_string(g)).c_str());
  return static_cast<size_t>(g);
}

MPI_Comm commOf(Context &ctx, const char *op, Group group) {
  size_t g = groupIndex(ctx, op, group);
  return ctx.groupComms[g] != MPI_COMM_NULL ? ctx.groupComms[g] : ctx.comm;
}

void checkPeer(Context &ctx, const char *op, int peer, int tag, Group group) {
  size_t g = groupIndex(ctx, op, group);
  if (peer < 0 || peer >= ctx.groupSizes[g])
    fail(ctx, op,
         ("peer " + std::to_string(peer) + " is not a rank of the " +
          (group == Group::World ? std::string("world")
                                 : groupName(group) + std::string(" group")) +
          " of " + std::to_string(ctx.groupSizes[g]))
             .c_str());
  void *ub = nullptr;
  int found = 0;
  MPI_Comm_get_attr(ctx.comm, MPI_TAG_UB, &ub, &found);
  int maxTag = found ? *static_cast<int *>(ub) : 32767;
  if (tag < 0 || tag > maxTag)
    fail(ctx, op,
         ("tag " + std::to_string(tag) + " is outside [0, " +
          std::to_string(maxTag) + "]")
             .c_str());
}

CommHandle newHandle(Context &ctx, PendingComm pending) {
  pending.active = true;
  int64_t id;
  if (!ctx.freeHandles.empty()) {
    id = ctx.freeHandles.back();
    ctx.freeHandles.pop_back();
    ctx.pending[static_cast<size_t>(id)] = std::move(pending);
  } else {
    id = static_cast<int64_t>(ctx.pending.size());
    ctx.pending.push_back(std::move(pending));
  }
  CommHandle handle;
  handle.id = id;
  return handle;
}

MPI_Op mpiOp(Context &ctx, ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum:
  case ReduceOp::Avg:
    return MPI_SUM;
  case ReduceOp::Max:
    return MPI_MAX;
  case ReduceOp::Min:
    return MPI_MIN;
  }
  fail(ctx, "allReduce",
       ("unknown reduction " + std::to_string(static_cast<int>(op))).c_str());
}

} // namespace

void Context::initComm() {
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  for (int g = 0; g < kNumGroups; ++g) {
    groupRanks[g] = rank;
    groupSizes[g] = size;
  }
}

void Context::initGroups(int dp, int tp, int pp) {
  // Group -> (colour: names the group, key: the rank's order in it), from
  // the mesh layout r = (d*pp + p)*tp + t.
  const Mesh mesh{dp, pp, tp};
  int colours[kNumGroups] = {0}, keys[kNumGroups] = {rank};
  for (auto [group, axis] : {std::pair{Group::Dp, MeshAxis::Dp},
                             std::pair{Group::Tp, MeshAxis::Tp},
                             std::pair{Group::Pp, MeshAxis::Pp}}) {
    colours[static_cast<int>(group)] =
        static_cast<int>(mesh.groupColour(rank, axis));
    keys[static_cast<int>(group)] = static_cast<int>(mesh.groupRank(rank, axis));
  }
  for (int g = 1; g < kNumGroups; ++g) {
    MPI_Comm_split(comm, colours[g], keys[g], &groupComms[g]);
    MPI_Comm_set_errhandler(groupComms[g], MPI_ERRORS_RETURN);
    MPI_Comm_rank(groupComms[g], &groupRanks[g]);
    MPI_Comm_size(groupComms[g], &groupSizes[g]);
  }
}

void Context::freeComm() {
  for (int g = 1; g < kNumGroups; ++g)
    if (groupComms[g] != MPI_COMM_NULL)
      MPI_Comm_free(&groupComms[g]);
  if (comm != MPI_COMM_NULL)
    MPI_Comm_free(&comm);
  comm = MPI_COMM_NULL;
}

int worldRank(Context &ctx) { return ctx.rank; }
int worldSize(Context &ctx) { return ctx.size; }

int groupRank(Context &ctx, Group group) {
  return ctx.groupRanks[groupIndex(ctx, "groupRank", group)];
}
int groupSize(Context &ctx, Group group) {
  return ctx.groupSizes[groupIndex(ctx, "groupSize", group)];
}

CommHandle allReduceStart(Context &ctx, float *buffer, int64_t count,
                          ReduceOp op, Group group) {
  requireComm(ctx, "allReduce");
  MPI_Comm comm = commOf(ctx, "allReduce", group);
  if (count < 0 || (count > 0 && !buffer))
    fail(ctx, "allReduce",
         ("invalid buffer of " + std::to_string(count) + " floats").c_str());
  MPI_Op mop = mpiOp(ctx, op);
  PendingComm pending;
  for (int64_t begin = 0; begin < count; begin += kMaxChunk) {
    int n = static_cast<int>(std::min(kMaxChunk, count - begin));
    MPI_Request request;
    check(ctx, "allReduce",
          MPI_Iallreduce(MPI_IN_PLACE, buffer + begin, n, MPI_FLOAT, mop,
                         comm, &request));
    pending.requests.push_back(request);
  }
  if (op == ReduceOp::Avg) {
    pending.avgBuffer = buffer;
    pending.avgCount = count;
    pending.avgSize = groupSize(ctx, group);
  }
  return newHandle(ctx, std::move(pending));
}

CommHandle sendStart(Context &ctx, const void *buffer, int64_t bytes, int peer,
                     int tag, Group group) {
  requireComm(ctx, "send");
  checkPeer(ctx, "send", peer, tag, group);
  MPI_Comm comm = commOf(ctx, "send", group);
  if (bytes < 0 || (bytes > 0 && !buffer))
    fail(ctx, "send",
         ("invalid buffer of " + std::to_string(bytes) + " bytes").c_str());
  PendingComm pending;
  const char *data = static_cast<const char *>(buffer);
  int64_t begin = 0;
  do { // a zero-byte message is still one message
    int n = static_cast<int>(std::min(kMaxChunk, bytes - begin));
    MPI_Request request;
    check(ctx, "send",
          MPI_Isend(data + begin, n, MPI_BYTE, peer, tag, comm, &request));
    pending.requests.push_back(request);
    begin += n;
  } while (begin < bytes);
  return newHandle(ctx, std::move(pending));
}

CommHandle recvStart(Context &ctx, void *buffer, int64_t bytes, int peer,
                     int tag, Group group) {
  requireComm(ctx, "recv");
  checkPeer(ctx, "recv", peer, tag, group);
  MPI_Comm comm = commOf(ctx, "recv", group);
  if (bytes < 0 || (bytes > 0 && !buffer))
    fail(ctx, "recv",
         ("invalid buffer of " + std::to_string(bytes) + " bytes").c_str());
  PendingComm pending;
  char *data = static_cast<char *>(buffer);
  int64_t begin = 0;
  do {
    int n = static_cast<int>(std::min(kMaxChunk, bytes - begin));
    MPI_Request request;
    check(ctx, "recv",
          MPI_Irecv(data + begin, n, MPI_BYTE, peer, tag, comm, &request));
    pending.requests.push_back(request);
    begin += n;
  } while (begin < bytes);
  pending.expectedBytes = bytes;
  pending.chunkBytes = kMaxChunk;
  pending.peer = peer;
  pending.tag = tag;
  pending.group = group;
  return newHandle(ctx, std::move(pending));
}

void wait(Context &ctx, CommHandle handle) {
  if (handle.id < 0 || handle.id >= static_cast<int64_t>(ctx.pending.size()) ||
      !ctx.pending[static_cast<size_t>(handle.id)].active)
    fail(ctx, "wait",
         ("handle " + std::to_string(handle.id) +
          " is not an operation in flight (never started, or already waited "
          "for)")
             .c_str());
  PendingComm &pending = ctx.pending[static_cast<size_t>(handle.id)];
  std::vector<MPI_Status> statuses(pending.requests.size());
  int code = MPI_Waitall(static_cast<int>(pending.requests.size()),
                         pending.requests.data(), statuses.data());
  if (code == MPI_ERR_IN_STATUS)
    for (const MPI_Status &status : statuses)
      if (status.MPI_ERROR != MPI_SUCCESS) {
        code = status.MPI_ERROR;
        break;
      }
  check(ctx, "wait", code);
  if (pending.expectedBytes >= 0) {
    // A message shorter than the posted receive arrives without error:
    // compare what came with what was expected.
    int64_t received = 0;
    for (const MPI_Status &status : statuses) {
      int n = 0;
      MPI_Get_count(&status, MPI_BYTE, &n);
      received += n;
    }
    if (received != pending.expectedBytes)
      fail(ctx, "recv",
           ("expected " + std::to_string(pending.expectedBytes) +
            " bytes from rank " + std::to_string(pending.peer) +
            (pending.group == Group::World
                 ? std::string()
                 : " of the " + std::string(groupName(pending.group)) +
                       " group") +
            " (tag " +
            std::to_string(pending.tag) + "), received " +
            std::to_string(received))
               .c_str());
  }
  if (pending.avgBuffer && pending.avgSize > 1) {
    float size = static_cast<float>(pending.avgSize);
    for (int64_t i = 0; i < pending.avgCount; ++i)
      pending.avgBuffer[i] /= size;
  }
  pending = PendingComm();
  ctx.freeHandles.push_back(handle.id);
}

} // namespace rt
} // namespace loom

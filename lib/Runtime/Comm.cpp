//===- Comm.cpp - Asynchronous communication over MPI ---------------------===//
//
// Each start function checks its arguments and queues the operation with
// the rank's communication thread (CommEngine, Progress.cpp), which posts it
// on the runtime's own communicator (a duplicate of MPI_COMM_WORLD) or one of
// its groups (Context::initGroups, MPI_Comm_split) and drives it while the
// compute thread goes on; wait() blocks until the thread saw it complete,
// with a watchdog (Context::commTimeoutSeconds). Avg is Sum followed by a
// division in wait(). MPI errors are returned (MPI_ERRORS_RETURN) and
// reported with fail().
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Comm.h"
#include "RuntimeImpl.h"
#include "loom/Support/Mesh.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace loom {
namespace rt {

namespace {

std::string mpiError(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<size_t>(length));
}

void requireComm(Context &ctx, const char *op) {
  if (ctx.comm == MPI_COMM_NULL || !ctx.engine)
    fail(ctx, op, "communication is not initialised (call it from a step "
                  "run by trainMain)");
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

CommHandle submit(Context &ctx, PendingComm op) {
  CommHandle handle;
  handle.id = ctx.engine->submit(std::move(op));
  return handle;
}

/// "rank 2 (host1)".
std::string describeRank(Context &ctx, int worldRank) {
  std::string text = "rank " + std::to_string(worldRank);
  if (worldRank >= 0 && worldRank < static_cast<int>(ctx.hostNames.size()))
    text += " (" + ctx.hostNames[static_cast<size_t>(worldRank)] + ")";
  return text;
}

/// "the dp all-reduce of 1024 floats with rank 0 (host0), rank 2 (host1)".
std::string describe(Context &ctx, const PendingComm &op) {
  const std::vector<int> &members =
      ctx.groupMembers[static_cast<size_t>(op.group)];
  std::string group = op.group == Group::World
                          ? std::string()
                          : std::string(groupName(op.group)) + " ";
  auto peerText = [&] {
    int world = op.peer >= 0 && op.peer < static_cast<int>(members.size())
                    ? members[static_cast<size_t>(op.peer)]
                    : op.peer;
    return describeRank(ctx, world);
  };
  switch (op.kind) {
  case PendingComm::Kind::AllReduce: {
    std::string text = "the " + group + "all-reduce of " +
                       std::to_string(op.count) + " floats with ";
    const char *separator = "";
    for (int member : members)
      if (member != ctx.rank) {
        text += separator + describeRank(ctx, member);
        separator = ", ";
      }
    return text;
  }
  case PendingComm::Kind::Send:
    return "the " + group + "send of " + std::to_string(op.count) +
           " bytes to " + peerText() + " (tag " + std::to_string(op.tag) + ")";
  case PendingComm::Kind::Recv:
    return "the " + group + "receive of " + std::to_string(op.count) +
           " bytes from " + peerText() + " (tag " + std::to_string(op.tag) +
           ")";
  }
  return "an operation";
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

void Context::initComm() {
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  for (int g = 0; g < kNumGroups; ++g) {
    groupRanks[g] = rank;
    groupSizes[g] = size;
    groupMembers[g].resize(static_cast<size_t>(size));
    for (int r = 0; r < size; ++r)
      groupMembers[g][static_cast<size_t>(r)] = r;
  }
  // Every rank's host, for messages about its peers.
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  std::vector<char> names(static_cast<size_t>(size) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(),
                MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm);
  hostNames.clear();
  for (int r = 0; r < size; ++r)
    hostNames.emplace_back(&names[static_cast<size_t>(r) * MPI_MAX_PROCESSOR_NAME]);
  MPI_Comm_dup(comm, &rowSparseComms[0]);
  MPI_Comm_set_errhandler(rowSparseComms[0], MPI_ERRORS_RETURN);
  if (size == 2) {
    MPI_Comm_dup(comm, &pairComms[0]);
    MPI_Comm_set_errhandler(pairComms[0], MPI_ERRORS_RETURN);
  }
  engine = std::make_unique<CommEngine>(clockStart);
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
    MPI_Comm_dup(groupComms[g], &rowSparseComms[g]);
    MPI_Comm_set_errhandler(rowSparseComms[g], MPI_ERRORS_RETURN);
    MPI_Comm_rank(groupComms[g], &groupRanks[g]);
    MPI_Comm_size(groupComms[g], &groupSizes[g]);
    if (pairComms[g] != MPI_COMM_NULL)
      MPI_Comm_free(&pairComms[g]);
    // (Collective over the group: both of its ranks make it.)
    if (groupSizes[g] == 2) {
      MPI_Comm_dup(groupComms[g], &pairComms[g]);
      MPI_Comm_set_errhandler(pairComms[g], MPI_ERRORS_RETURN);
    }
    // The world ranks of the group, in group order.
    MPI_Group world, part;
    MPI_Comm_group(comm, &world);
    MPI_Comm_group(groupComms[g], &part);
    std::vector<int> local(static_cast<size_t>(groupSizes[g]));
    for (int i = 0; i < groupSizes[g]; ++i)
      local[static_cast<size_t>(i)] = i;
    groupMembers[g].assign(local.size(), 0);
    MPI_Group_translate_ranks(part, groupSizes[g], local.data(), world,
                              groupMembers[g].data());
    MPI_Group_free(&part);
    MPI_Group_free(&world);
  }
}

void Context::freeComm() {
  engine.reset(); // joins the communication thread
  for (int g = 0; g < kNumGroups; ++g) {
    if (g > 0 && groupComms[g] != MPI_COMM_NULL)
      MPI_Comm_free(&groupComms[g]);
    if (rowSparseComms[g] != MPI_COMM_NULL)
      MPI_Comm_free(&rowSparseComms[g]);
    if (pairComms[g] != MPI_COMM_NULL)
      MPI_Comm_free(&pairComms[g]);
  }
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
  PendingComm pending;
  pending.kind = PendingComm::Kind::AllReduce;
  pending.comm = commOf(ctx, "allReduce", group);
  if (count < 0 || (count > 0 && !buffer))
    fail(ctx, "allReduce",
         ("invalid buffer of " + std::to_string(count) + " floats").c_str());
  pending.op = mpiOp(ctx, op);
  pending.buffer = buffer;
  pending.count = count;
  pending.group = group;
  if (op == ReduceOp::Avg)
    pending.avgSize = groupSize(ctx, group);
  size_t g = groupIndex(ctx, "allReduce", group);
  if (ctx.groupSizes[g] == 2 && ctx.pairComms[g] != MPI_COMM_NULL) {
    pending.comm = ctx.pairComms[g];
    pending.pairPeer = 1 - ctx.groupRanks[g];
    pending.pairLow = ctx.groupRanks[g] == 0;
  }
  return submit(ctx, std::move(pending));
}

CommHandle rowSparseAllReduceStart(Context &ctx, float *buffer, int64_t rows,
                                   int64_t width, Group group) {
  requireComm(ctx, "rowSparseAllReduce");
  size_t g = groupIndex(ctx, "rowSparseAllReduce", group);
  if (rows < 0 || width < 0 || (rows > 0 && width > 0 && !buffer))
    fail(ctx, "rowSparseAllReduce",
         ("invalid buffer of " + std::to_string(rows) + " rows of " +
          std::to_string(width) + " floats")
             .c_str());
  PendingComm pending;
  pending.kind = PendingComm::Kind::AllReduce;
  pending.rowSparse = true;
  pending.comm = ctx.rowSparseComms[g] != MPI_COMM_NULL ? ctx.rowSparseComms[g]
                                                         : ctx.comm;
  pending.op = MPI_SUM;
  pending.buffer = buffer;
  pending.count = rows * width;
  pending.width = width;
  pending.group = group;
  return submit(ctx, std::move(pending));
}

namespace {
CommHandle pointToPoint(Context &ctx, const char *what, PendingComm::Kind kind,
                        const void *buffer, int64_t bytes, int peer, int tag,
                        Group group) {
  requireComm(ctx, what);
  checkPeer(ctx, what, peer, tag, group);
  PendingComm pending;
  pending.kind = kind;
  pending.comm = commOf(ctx, what, group);
  if (bytes < 0 || (bytes > 0 && !buffer))
    fail(ctx, what,
         ("invalid buffer of " + std::to_string(bytes) + " bytes").c_str());
  pending.buffer = const_cast<void *>(buffer); // a send only reads it
  pending.count = bytes;
  pending.peer = peer;
  pending.tag = tag;
  pending.group = group;
  return submit(ctx, std::move(pending));
}
} // namespace

CommHandle sendStart(Context &ctx, const void *buffer, int64_t bytes, int peer,
                     int tag, Group group) {
  return pointToPoint(ctx, "send", PendingComm::Kind::Send, buffer, bytes,
                      peer, tag, group);
}

CommHandle recvStart(Context &ctx, void *buffer, int64_t bytes, int peer,
                     int tag, Group group) {
  return pointToPoint(ctx, "recv", PendingComm::Kind::Recv, buffer, bytes,
                      peer, tag, group);
}

bool isComplete(Context &ctx, CommHandle handle) {
  return ctx.engine && ctx.engine->isComplete(handle.id);
}

void wait(Context &ctx, CommHandle handle) {
  if (!ctx.engine || !ctx.engine->isLive(handle.id))
    fail(ctx, "wait",
         ("handle " + std::to_string(handle.id) +
          " is not an operation in flight (never started, or already waited "
          "for)")
             .c_str());
  PendingComm done;
  double waitBegin = ctx.now();
  if (!ctx.engine->wait(handle.id, ctx.commTimeoutSeconds, done)) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g", ctx.commTimeoutSeconds);
    fail(ctx, "wait",
         ("no completion within " + std::string(seconds) + " s of " +
          describe(ctx, done) +
          ": the peer is unreachable or stopped (a link down, a rank "
          "killed); if the transfer is legitimately that slow, raise "
          "--comm-timeout")
             .c_str());
  }
  recordComm(ctx, done, waitBegin, ctx.now());
  if (done.error != MPI_SUCCESS)
    fail(ctx, "wait", (describe(ctx, done) + " failed: " + mpiError(done.error))
                          .c_str());
  if (done.kind == PendingComm::Kind::Recv) {
    // A message shorter than the posted receive arrives without error:
    // compare what came with what was expected.
    int64_t received = 0;
    for (const MPI_Status &status : done.statuses) {
      int n = 0;
      MPI_Get_count(&status, MPI_BYTE, &n);
      received += n;
    }
    if (received != done.count)
      fail(ctx, "recv",
           ("expected " + std::to_string(done.count) + " bytes from rank " +
            std::to_string(done.peer) +
            (done.group == Group::World
                 ? std::string()
                 : " of the " + std::string(groupName(done.group)) +
                       " group") +
            " (tag " + std::to_string(done.tag) + "), received " +
            std::to_string(received))
               .c_str());
  }
  if (done.avgSize > 1) {
    float size = static_cast<float>(done.avgSize);
    float *data = static_cast<float *>(done.buffer);
    for (int64_t i = 0; i < done.count; ++i)
      data[i] /= size;
  }
}

} // namespace rt
} // namespace loom

//===- RuntimeImpl.h - The runtime's internals ------------------*- C++ -*-===//
//
// Not installed and not part of the API the emitted code sees: the Context,
// the counting allocator, and the pieces of trainMain() (data, weights,
// checkpoints, the loss log), each a function that returns an error string
// (empty on success) so that unit tests can check every message. trainMain()
// turns a non-empty string into fail().
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_RUNTIMEIMPL_H
#define LOOM_LIB_RUNTIME_RUNTIMEIMPL_H

#include "loom/Runtime/Comm.h"
#include "loom/Runtime/Runtime.h"
#include "loom/Support/Npy.h"
#include "loom/Support/Safetensors.h"

#include <mpi.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace loom {
namespace rt {

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

/// What a block of memory holds, for the --memory-counters report.
enum class MemCategory : int {
  Params = 0,  ///< Role::Param arguments
  State = 1,   ///< Role::State arguments
  Data = 2,    ///< the datasets read from DIR/*.npy
  Batch = 3,   ///< the per-step Role::Data argument buffers
  Results = 4, ///< result buffers (those with `updates` swap with arguments)
  Arena = 5,   ///< the planned workspace
  Host = 6,    ///< the host pool of swapped activations (loom-swap)
};
constexpr int kNumMemCategories = 7;
/// "params", "state", "data", "batch", "results", "arena", "host".
const char *memCategoryName(MemCategory category);

/// A 64-byte aligned, zero-initialised block owned by an Allocator.
struct BlockDeleter {
  void operator()(void *p) const;
};
using Block = std::unique_ptr<void, BlockDeleter>;

/// The pools a rank's memory comes from. On the CPU backend host memory
/// stands in for both, but each is counted (and the device pool budgeted)
/// as on a GPU.
enum class MemPool : int {
  Device = 0, ///< params, state, batch, results, arena
  Host = 1,   ///< the host pool of loom-swap's offloaded activations
  Other = 2,  ///< the datasets: host memory that is not a pool
};
MemPool memPoolOf(MemCategory category);

/// Allocates 64-byte aligned zeroed blocks and counts their bytes per
/// category, and per pool the bytes held and their peak. The counts are of
/// bytes allocated: the runtime allocates everything before the first step
/// and frees nothing before it returns.
class Allocator {
public:
  /// An empty Block and an error on failure (overflow, out of memory, or a
  /// device pool that would exceed `deviceBudget`).
  Block allocate(MemCategory category, int64_t bytes, std::string &error);
  /// Counts `bytes` allocated elsewhere (e.g. by the .npy reader).
  void record(MemCategory category, int64_t bytes) {
    counts[static_cast<int>(category)] += bytes;
    addToPool(memPoolOf(category), bytes);
  }
  int64_t bytes(MemCategory category) const {
    return counts[static_cast<int>(category)];
  }
  int64_t totalBytes() const;
  /// Bytes the pool holds now, and the most it held.
  int64_t poolBytes(MemPool pool) const { return held[static_cast<int>(pool)]; }
  int64_t poolPeakBytes(MemPool pool) const {
    return peak[static_cast<int>(pool)];
  }
  /// The device pool's budget (0: none).
  int64_t deviceBudget = 0;

private:
  void addToPool(MemPool pool, int64_t bytes) {
    int64_t &h = held[static_cast<int>(pool)];
    h += bytes;
    if (h > peak[static_cast<int>(pool)])
      peak[static_cast<int>(pool)] = h;
  }
  int64_t counts[kNumMemCategories] = {};
  int64_t held[3] = {}, peak[3] = {};
};

//===----------------------------------------------------------------------===//
// Context
//===----------------------------------------------------------------------===//

/// One asynchronous operation in flight: what to post, the MPI requests of
/// its chunks once posted (a large transfer is split into several), and how
/// it ended.
struct PendingComm {
  enum class Kind { AllReduce, Send, Recv };
  Kind kind = Kind::AllReduce;
  void *buffer = nullptr;
  /// Floats for an all-reduce, bytes for a send or receive.
  int64_t count = 0;
  MPI_Op op = MPI_SUM;
  MPI_Comm comm = MPI_COMM_NULL;
  Group group = Group::World;
  int peer = -1;
  int tag = 0;
  /// For an Avg all-reduce: divide the floats by `avgSize` (the group's
  /// size) once complete.
  int avgSize = 0;
  /// An all-reduce in a group of two ranks (not row-sparse): the other
  /// rank's index, and its values. Each rank sends its buffer and receives
  /// the other's at once (both directions of the link busy, B / rate; MPI's
  /// non-blocking all-reduce of two ranks reduces at one and sends back,
  /// 2 B / rate), then combines the two, the lower rank's value first, so
  /// both hold the same bits. -1 otherwise.
  int pairPeer = -1;
  bool pairLow = false;
  std::vector<float> pairValues;

  /// A row-sparse all-reduce (rowSparseAllReduceStart): `count` floats as
  /// `count / width` rows. Exchanged in two collectives on the group's own
  /// row-sparse communicator: the ranks' row counts (phase 0), then their
  /// row indices and rows (phase 1); the sum is formed on completion.
  bool rowSparse = false;
  int64_t width = 0;
  int phase = 0;
  /// This rank's nonzero rows: their indices and values, packed.
  std::vector<int64_t> rowIndices;
  std::vector<float> rowValues;
  int64_t localRows = 0;
  /// Every rank's row count (phase 0), then all ranks' rows (phase 1).
  std::vector<int64_t> rankRows;
  /// Phase 1's per-rank counts and offsets in rows (MPI reads them until
  /// the all-gathers complete).
  std::vector<int> rowCounts, rowOffsets;
  std::vector<int64_t> allIndices;
  std::vector<float> allValues;
  MPI_Datatype rowType = MPI_DATATYPE_NULL;
  /// Bytes this rank contributed (its count, indices and rows), for the
  /// statistics.
  int64_t sentBytes = 0;

  // Set by the communication thread.
  std::vector<MPI_Request> requests;
  std::vector<MPI_Status> statuses;
  /// MPI_SUCCESS, or the first error posting or completing it.
  int error = 0;
  /// Seconds since the engine started: issued (start call), completed (seen
  /// by the communication thread).
  double issuedAt = 0, completedAt = 0;
};

/// The communication thread of a rank (Progress.cpp): the start functions
/// of Comm.h queue an operation and return; the thread posts queued
/// operations in issue order (so every rank posts its messages in the order
/// its program issued them, as MPI's matching requires) and drives all
/// posted ones with MPI_Test until they complete, while the compute thread
/// runs kernels without calling MPI. A handle's completion is published as
/// soon as MPI completed it, never behind an earlier operation (a receive
/// must not wait for an earlier send whose matching receive the peer posts
/// only later: sends never block). wait() blocks on a condition variable,
/// never on MPI, with a watchdog: no completion within `timeout` seconds is
/// an error naming the operation and its peers.
///
/// Requires MPI_THREAD_MULTIPLE (trainMain asks for it): the compute thread
/// still makes the collective setup calls outside steps.
class CommEngine {
public:
  /// `start`: the time point the engine's clock counts from (the
  /// Context's, so that spans of both threads share a clock).
  explicit CommEngine(std::chrono::steady_clock::time_point start);
  /// Joins the thread; every handle must have been waited for.
  ~CommEngine();
  CommEngine(const CommEngine &) = delete;
  CommEngine &operator=(const CommEngine &) = delete;

  /// Queues `op` for posting; returns its handle id.
  int64_t submit(PendingComm op);
  /// Whether `id` completed (no MPI call; for tests and the trace).
  bool isComplete(int64_t id);
  /// Whether `id` names an operation issued and not yet waited for.
  bool isLive(int64_t id);
  /// Blocks until `id` completes or `timeoutSeconds` pass (<= 0: forever).
  /// On completion moves the operation out into `done`, frees the handle
  /// and returns true; false on timeout (`done` then holds a copy, for the
  /// message).
  bool wait(int64_t id, double timeoutSeconds, PendingComm &done);
  /// Seconds since the engine started.
  double now() const;

private:
  struct Slot;
  void loop();
  void post(Slot &slot);
  enum class Progress { Pending, Advanced, Done };
  /// Tests the slot's requests (MPI_Testall): Done once the operation
  /// completed, Advanced when a row-sparse all-reduce finished its first
  /// collective and posted its second.
  Progress test(Slot &slot);
  /// Row-sparse all-reduce phases (Progress.cpp).
  void postRowCounts(PendingComm &op);
  void postRows(PendingComm &op);
  void sumRows(PendingComm &op);
  /// A two-rank all-reduce's result from the two values (pairPeer).
  void combinePair(PendingComm &op);
  /// MPI_Testall of op's requests; true once all completed (or failed).
  bool testRequests(PendingComm &op);

  std::mutex mutex;
  std::condition_variable workReady; ///< submit() / stop -> the thread
  std::condition_variable completed; ///< the thread -> wait()
  std::vector<std::unique_ptr<Slot>> slots;
  std::vector<int64_t> freeSlots;
  std::deque<int64_t> toPost;
  /// Posted operations not yet complete, in issue order.
  std::vector<int64_t> inFlight;
  /// The row-sparse all-reduce between its two collectives (-1: none);
  /// the next ones wait in `rowSparseWaiting` (issue order) so that every rank posts
  /// the collectives of its row-sparse communicators in one order.
  int64_t rowSparseBusy = -1;
  std::deque<int64_t> rowSparseWaiting;
  /// Threads blocked in wait(): while there are any, the thread polls at
  /// its shortest pause (see the file comment of Progress.cpp).
  int waiters = 0;
  bool stopping = false;
  std::chrono::steady_clock::time_point start;
  std::thread thread;
};

/// The copy thread of a rank (Copy.cpp): swapOutStart/swapInStart queue a
/// copy between the device and host pools and return; the thread copies
/// them in issue order, each taking at least bytes / rate seconds when a
/// rate is set (--host-link), and wait() blocks until a copy is done.
class CopyEngine {
public:
  CopyEngine(std::chrono::steady_clock::time_point start,
             double bytesPerSecond);
  /// Joins the thread.
  ~CopyEngine();
  CopyEngine(const CopyEngine &) = delete;
  CopyEngine &operator=(const CopyEngine &) = delete;

  /// Queues a copy; returns its handle id.
  int64_t submit(void *dst, const void *src, int64_t bytes, bool out);
  /// Blocks until `id` is done; returns false for an id not in flight.
  /// `issued`/`done`: the copy's times on the engine's clock.
  bool wait(int64_t id, double &issued, double &done, int64_t &bytes,
            bool &out);

private:
  struct Job {
    void *dst;
    const void *src;
    int64_t bytes;
    bool out;
    double issuedAt = 0, doneAt = 0;
    bool done = false;
  };
  void loop();
  double now() const;

  std::mutex mutex;
  std::condition_variable workReady, completed;
  std::map<int64_t, Job> jobs;
  std::deque<int64_t> queue;
  int64_t nextId = 0;
  bool stopping = false;
  double bytesPerSecond;
  std::chrono::steady_clock::time_point start;
  std::thread thread;
};

/// A span of the timeline (Trace.cpp): seconds on the rank's clock.
struct TraceSpan {
  std::string name;
  const char *track; ///< "compute" or one of kCommTracks
  double begin, end;
  std::string args; ///< the inside of a JSON object
};

/// Per Group, the track of its communication.
constexpr const char *kCommTracks[kNumGroups] = {"comm world", "comm dp",
                                                 "comm tp", "comm pp"};

/// Totals of one kind of operation in one group (--comm-stats).
struct CommStat {
  int64_t ops = 0;
  int64_t bytes = 0;
  double seconds = 0;     ///< start call to completion, summed
  double waitSeconds = 0; ///< blocked in wait(), summed
};

/// What a rank measured about itself (Trace.cpp).
struct Recorder {
  /// Whether spans are kept (--trace).
  bool tracing = false;
  /// The clock at the last traceMark.
  double mark = 0;
  std::vector<TraceSpan> spans;
  /// The device memory in use over time (--trace's counter track): the
  /// device pool's persistent buffers plus the arena's live bytes, after
  /// each arena acquire and release, as (time, bytes).
  std::vector<std::pair<double, int64_t>> deviceMemory;
  /// Add to this rank's clock to get rank 0's.
  double clockOffset = 0;
  /// Per Group and PendingComm::Kind.
  CommStat stats[kNumGroups][3];
};

class Context {
public:
  /// A context without communication (unit tests); trainMain() sets up MPI
  /// with initComm().
  explicit Context(int64_t arenaBytes = 0) : arenaBytes(arenaBytes) {}

  /// Duplicates MPI_COMM_WORLD (MPI must be initialised) so the runtime's
  /// messages never match the application's, with MPI_ERRORS_RETURN. Every
  /// group is the world until initGroups().
  void initComm();
  /// Splits the world into the dp, tp and pp groups of the mesh dp x pp x
  /// tp (their product must be the world size): rank r = (d*pp + p)*tp + t.
  void initGroups(int dp, int tp, int pp);
  void freeComm();

  // Communication (Comm.cpp).
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 1;
  /// Per Group (Comm.h): the communicator (index 0 is `comm`, the world),
  /// this rank's index in it and its size.
  MPI_Comm groupComms[kNumGroups] = {MPI_COMM_NULL, MPI_COMM_NULL, MPI_COMM_NULL,
                            MPI_COMM_NULL};
  /// Per Group: a duplicate of its communicator for the row-sparse
  /// all-reduces, whose second collective is posted only once the first
  /// completed; on their own communicator (and one at a time, CommEngine)
  /// every rank posts them in the same order whatever else is in flight.
  MPI_Comm rowSparseComms[kNumGroups] = {MPI_COMM_NULL, MPI_COMM_NULL,
                                         MPI_COMM_NULL, MPI_COMM_NULL};
  /// Per Group of two ranks: a duplicate of its communicator for the
  /// all-reduces exchanged as one message each way (PendingComm::pairPeer),
  /// so that their point-to-point messages match nothing else.
  MPI_Comm pairComms[kNumGroups] = {MPI_COMM_NULL, MPI_COMM_NULL,
                                    MPI_COMM_NULL, MPI_COMM_NULL};
  int groupRanks[kNumGroups] = {0, 0, 0, 0};
  int groupSizes[kNumGroups] = {1, 1, 1, 1};
  /// Per Group: the world ranks of its members, in group order.
  std::vector<int> groupMembers[kNumGroups];
  /// The rank's clock: seconds since the Context was made.
  double now() const;
  std::chrono::steady_clock::time_point clockStart =
      std::chrono::steady_clock::now();
  Recorder recorder;

  /// Started by initComm(): the rank's communication thread.
  std::unique_ptr<CommEngine> engine;
  /// Started by the first swap copy: the rank's copy thread (loom-swap),
  /// and the host link's rate in bytes per second (--host-link; 0: none).
  std::unique_ptr<CopyEngine> copies;
  double hostLinkBytesPerSecond = 0;
  /// The host pool (ProgramSpec::hostArenaBytes) and its size.
  char *hostArena = nullptr;
  int64_t hostArenaBytes = 0;
  /// The watchdog of wait(): seconds without completion before it is an
  /// error (trainMain's --comm-timeout; <= 0: wait forever).
  double commTimeoutSeconds = 30;
  /// Per world rank, the name of its host (MPI_Get_processor_name), for
  /// the watchdog's message.
  std::vector<std::string> hostNames;

  // Arena accounting (Memory.cpp).
  int64_t arenaBytes;
  std::map<int64_t, int64_t> liveRanges; ///< offset -> bytes
  int64_t liveBytes = 0;
  int64_t peakLiveBytes = 0;

  Allocator allocator;
  /// The step being run (for error messages), -1 outside the loop.
  int64_t step = -1;

  /// The CUDA backend's per-rank state (lib/Runtime/cuda), null unless
  /// cuda::init() ran. Owned by that library.
  void *cuda = nullptr;
  /// Device-resident parameters and state (Runtime.h): the host's copies
  /// are newer than the device's; the runtime reads them after this step.
  bool hostStateNewer = true;
  bool stateToHost = false;
  /// Bytes the CUDA backend copied between host and device memory (the
  /// --memory-counters `host_to_device_bytes`, `device_to_host_bytes`).
  int64_t hostToDeviceBytes = 0, deviceToHostBytes = 0;
};

/// Prints `loom-train: error: <op>: <message>` and exits with status 1
/// (MPI_Abort when MPI runs with more than one rank).
[[noreturn]] void fatal(const std::string &op, const std::string &message);
/// fatal() in two halves: the message, and ending the run (MPI_Abort when
/// other ranks may be waiting). An error every rank detects at once prints
/// on each, meets at a barrier, then ends, so that no rank's abort cuts off
/// another's message.
void printError(const std::string &op, const std::string &message);
[[noreturn]] void abortRun();

/// Checks that no arena buffer is live (after a step); a planner-bug error
/// naming the first live range otherwise.
std::string checkArenaEmpty(const Context &ctx);

/// The --memory-counters JSON object.
std::string memoryCountersJson(const Context &ctx, const ProgramSpec &spec);

//===----------------------------------------------------------------------===//
// Spec
//===----------------------------------------------------------------------===//

/// Elements of a TensorSpec (product of the shape).
int64_t numElements(const TensorSpec &tensor);
/// Bytes of a TensorSpec.
int64_t numBytes(const TensorSpec &tensor);
/// "[2, 3]".
std::string formatShape(const int64_t *shape, int32_t rank);
std::string formatShape(const std::vector<int64_t> &shape);
/// The safetensors name of a dtype ("F32", "I64", "I32").
const char *safetensorsDType(DType type);

/// Checks a ProgramSpec for everything trainMain() relies on (see
/// Runtime.h); the error names the argument or result.
std::string validateSpec(const ProgramSpec &spec);

/// A hash of everything about the program that a checkpoint depends on:
/// the names, roles, dtypes and shapes of arguments and results, the
/// `updates` indices and the batch size (not the model name or the arena
/// layout). 16 hex digits.
std::string specFingerprint(const ProgramSpec &spec);

//===----------------------------------------------------------------------===//
// Data
//===----------------------------------------------------------------------===//

/// One Role::Data argument's dataset: the whole .npy file in memory.
struct Dataset {
  std::string path;
  npy::Array array;
  int64_t rows = 0;
  int64_t rowBytes = 0;
};

/// Reads `dir/<name>.npy` for the data argument `tensor`: its dtype must be
/// the argument's, its shape the argument's apart from dim 0, which needs
/// at least `batchSize` rows.
std::string loadDataset(const std::string &dir, const TensorSpec &tensor,
                        int64_t batchSize, Dataset &dataset);

/// Copies the batch of step `step`, rows [step*B, (step+1)*B) with each row
/// index taken modulo the number of rows, to `dst`.
void copyBatch(const Dataset &dataset, int64_t step, int64_t batchSize,
               void *dst);

//===----------------------------------------------------------------------===//
// Weights and checkpoints
//===----------------------------------------------------------------------===//

/// Loads every Param argument from the safetensors file `path` (key =
/// argument name; dtype and shape checked) into `args[i]`. Nothing is
/// written to `args` unless every parameter is present and well-formed.
std::string loadWeights(const std::string &path, const ProgramSpec &spec,
                        void *const *args);

/// The checksum a checkpoint's metadata carries: "fnv1a64:" and 16 hex
/// digits over the tensors' names, dtypes and bytes, in name order.
std::string dataChecksum(const std::vector<safetensors::Tensor> &tensors);

/// `dir/ckpt-<step, 8 digits>-rank<rank>.safetensors`.
std::string checkpointPath(const std::string &dir, int64_t step, int rank);

/// Writes all Param and State arguments with metadata (format, model,
/// fingerprint, step, rank, world size) atomically to `path`.
std::string writeCheckpoint(const std::string &path, const ProgramSpec &spec,
                            int64_t step, int rank, int worldSize,
                            const void *const *args);

/// Reads a checkpoint written by writeCheckpoint() for the same program
/// (fingerprint), rank and world size, with its checksum intact, into the
/// Param and State arguments; `step` gets its step. Nothing is written to
/// `args` on error.
std::string readCheckpoint(const std::string &path, const ProgramSpec &spec,
                           int rank, int worldSize, void *const *args,
                           int64_t &step);

/// The steps of the checkpoints of `rank` in `dir`, ascending. A missing
/// directory is no checkpoint (not an error).
std::string listCheckpoints(const std::string &dir, int rank,
                            std::vector<int64_t> &steps);

/// Deletes all but the newest `keep` checkpoints of `rank` in `dir`.
std::string pruneCheckpoints(const std::string &dir, int rank, int64_t keep);

//===----------------------------------------------------------------------===//
// The loss log
//===----------------------------------------------------------------------===//

/// Opens the CSV loss log `path` ("step,loss", one row per step) for
/// appending. Starting at step 0 it is (re)created; starting later
/// (resume) the rows of steps >= `firstStep` and any torn last line are
/// dropped, atomically, and the file is continued (created if missing).
std::string openLossLog(const std::string &path, int64_t firstStep,
                        FILE *&file);

/// Appends one row and flushes it.
std::string appendLoss(FILE *file, const std::string &path, int64_t step,
                       float loss);

//===----------------------------------------------------------------------===//
// Timelines and statistics (Trace.cpp)
//===----------------------------------------------------------------------===//

/// "dp", "tp", "pp", "world" (Comm.cpp).
const char *groupName(Group group);
/// "all_reduce", "send", "recv".
const char *commKindName(PendingComm::Kind kind);
/// Estimates this rank's clock offset to rank 0's (collective; --trace).
void alignClocks(Context &ctx);
/// A span on `track` when tracing.
void recordSpan(Context &ctx, std::string name, const char *track,
                double begin, double end, std::string args = "");
/// Counts a completed operation and, when tracing, adds its span and the
/// span of the wait that completed it.
void recordComm(Context &ctx, const PendingComm &done, double waitBegin,
                double waitEnd);
/// Collective: rank 0 writes every rank's spans as one Chrome-trace file.
std::string writeTrace(Context &ctx, const std::string &path);
/// Collective: rank 0 writes every rank's CommStats as JSON.
std::string writeCommStats(Context &ctx, const std::string &path);

/// A span on the compute track from construction to destruction.
class TraceScope {
public:
  TraceScope(Context &ctx, std::string name)
      : ctx(ctx), name(std::move(name)), begin(ctx.now()) {}
  ~TraceScope() { recordSpan(ctx, std::move(name), "compute", begin, ctx.now()); }
  TraceScope(const TraceScope &) = delete;
  TraceScope &operator=(const TraceScope &) = delete;

private:
  Context &ctx;
  std::string name;
  double begin;
};

/// Caps this rank's OpenMP threads at cores / ranks on this node unless
/// OMP_NUM_THREADS is set (Threads.cpp); returns the threads it will use.
int shareCoresAmongLocalRanks(Context &ctx);

/// Flushes denormal floats to zero on this thread and the OpenMP pool's
/// (x86: MXCSR FTZ and DAZ; Threads.cpp says why).
void flushDenormalsToZero();

} // namespace rt
} // namespace loom

#endif // LOOM_LIB_RUNTIME_RUNTIMEIMPL_H

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

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
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
};
constexpr int kNumMemCategories = 6;
/// "params", "state", "data", "batch", "results", "arena".
const char *memCategoryName(MemCategory category);

/// A 64-byte aligned, zero-initialised block owned by an Allocator.
struct BlockDeleter {
  void operator()(void *p) const;
};
using Block = std::unique_ptr<void, BlockDeleter>;

/// Allocates 64-byte aligned zeroed blocks and counts their bytes per
/// category. The counts are of bytes allocated: the runtime allocates
/// everything before the first step and frees nothing before it returns.
class Allocator {
public:
  /// An empty Block and an error on failure (overflow, out of memory).
  Block allocate(MemCategory category, int64_t bytes, std::string &error);
  /// Counts `bytes` allocated elsewhere (e.g. by the .npy reader).
  void record(MemCategory category, int64_t bytes) {
    counts[static_cast<int>(category)] += bytes;
  }
  int64_t bytes(MemCategory category) const {
    return counts[static_cast<int>(category)];
  }
  int64_t totalBytes() const;

private:
  int64_t counts[kNumMemCategories] = {};
};

//===----------------------------------------------------------------------===//
// Context
//===----------------------------------------------------------------------===//

/// One asynchronous communication in flight (MPI requests of one handle;
/// a large transfer is split into several).
struct PendingComm {
  bool active = false;
  std::vector<MPI_Request> requests;
  /// For an Avg all-reduce: divide `count` floats at `buffer` by `avgSize`
  /// (the group's size).
  float *avgBuffer = nullptr;
  int64_t avgCount = 0;
  int avgSize = 1;
  /// For a receive: the bytes expected (checked against what arrived).
  int64_t expectedBytes = -1;
  int64_t chunkBytes = 0;
  int peer = -1;
  int tag = 0;
  Group group = Group::World;
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
  int groupRanks[kNumGroups] = {0, 0, 0, 0};
  int groupSizes[kNumGroups] = {1, 1, 1, 1};
  std::vector<PendingComm> pending;
  std::vector<int64_t> freeHandles;

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

/// `dir/ckpt-<step, 8 digits>-rank<rank>.safetensors`.
std::string checkpointPath(const std::string &dir, int64_t step, int rank);

/// Writes all Param and State arguments with metadata (format, model,
/// fingerprint, step, rank, world size) atomically to `path`.
std::string writeCheckpoint(const std::string &path, const ProgramSpec &spec,
                            int64_t step, int rank, int worldSize,
                            const void *const *args);

/// Reads a checkpoint written by writeCheckpoint() for the same program
/// (fingerprint), rank and world size into the Param and State arguments;
/// `step` gets its step. Nothing is written to `args` on error.
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

/// Caps this rank's OpenMP threads at cores / ranks on this node unless
/// OMP_NUM_THREADS is set (Threads.cpp); returns the threads it will use.
int shareCoresAmongLocalRanks(Context &ctx);

} // namespace rt
} // namespace loom

#endif // LOOM_LIB_RUNTIME_RUNTIMEIMPL_H

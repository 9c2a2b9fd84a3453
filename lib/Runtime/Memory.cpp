//===- Memory.cpp - Allocation, arena accounting, fatal errors ------------===//

#include "RuntimeImpl.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <thread>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace loom {
namespace rt {

namespace {
constexpr int64_t kAlignment = 64;
} // namespace

int64_t dtypeSize(DType type) {
  switch (type) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::I64:
    return 8;
  case DType::BF16:
    return 2;
  }
  return 0;
}

const char *dtypeName(DType type) {
  switch (type) {
  case DType::F32:
    return "float32";
  case DType::I64:
    return "int64";
  case DType::I32:
    return "int32";
  case DType::BF16:
    return "bfloat16";
  }
  return "unknown";
}

const char *memCategoryName(MemCategory category) {
  switch (category) {
  case MemCategory::Params:
    return "params";
  case MemCategory::State:
    return "state";
  case MemCategory::Data:
    return "data";
  case MemCategory::Batch:
    return "batch";
  case MemCategory::Results:
    return "results";
  case MemCategory::Arena:
    return "arena";
  case MemCategory::Host:
    return "host";
  }
  return "unknown";
}

//===----------------------------------------------------------------------===//
// Allocator
//===----------------------------------------------------------------------===//

MemPool memPoolOf(MemCategory category) {
  switch (category) {
  case MemCategory::Params:
  case MemCategory::State:
  case MemCategory::Batch:
  case MemCategory::Results:
  case MemCategory::Arena:
    return MemPool::Device;
  case MemCategory::Host:
    return MemPool::Host;
  case MemCategory::Data:
    return MemPool::Other;
  }
  return MemPool::Other;
}

void BlockDeleter::operator()(void *p) const { std::free(p); }

Block Allocator::allocate(MemCategory category, int64_t bytes,
                          std::string &error) {
  if (bytes < 0 ||
      bytes > std::numeric_limits<int64_t>::max() - kAlignment) {
    error = "cannot allocate " + std::to_string(bytes) + " bytes of " +
            memCategoryName(category);
    return Block();
  }
  // aligned_alloc needs a size that is a multiple of the alignment; a
  // zero-byte tensor still gets a valid, distinct pointer.
  int64_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded == 0)
    rounded = kAlignment;
  MemPool pool = memPoolOf(category);
  if (pool == MemPool::Device && deviceBudget > 0 &&
      poolBytes(MemPool::Device) + bytes > deviceBudget) {
    error = "out of device memory allocating " + std::to_string(bytes) +
            " bytes of " + memCategoryName(category) +
            ": the device pool would hold " +
            std::to_string(poolBytes(MemPool::Device) + bytes) +
            " bytes, over the --device-memory budget of " +
            std::to_string(deviceBudget) +
            " bytes the program was compiled for (a bug in the memory "
            "planner, which checked the budget)";
    return Block();
  }
  void *p = std::aligned_alloc(kAlignment, static_cast<size_t>(rounded));
  if (!p) {
    error = "out of memory allocating " + std::to_string(bytes) +
            " bytes of " + memCategoryName(category);
    return Block();
  }
  std::memset(p, 0, static_cast<size_t>(rounded));
  counts[static_cast<int>(category)] += bytes;
  addToPool(pool, bytes);
  return Block(p);
}

int64_t Allocator::totalBytes() const {
  int64_t total = 0;
  for (int64_t c : counts)
    total += c;
  return total;
}

//===----------------------------------------------------------------------===//
// Fatal errors
//===----------------------------------------------------------------------===//

void printError(const std::string &op, const std::string &message) {
  std::fflush(stdout);
  std::fprintf(stderr, "loom-train: error: %s: %s\n", op.c_str(),
               message.c_str());
  std::fflush(stderr);
}

void fatal(const std::string &op, const std::string &message) {
  printError(op, message);
  abortRun();
}

void abortRun() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) {
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    // The other ranks may be blocked in a collective: only MPI_Abort ends
    // them. Alone, finalising first keeps mpirun's report short, but only
    // the thread that initialised MPI may do so.
    bool inParallel = false;
#ifdef _OPENMP
    inParallel = omp_in_parallel();
#endif
    if (size > 1) {
      // MPI_Abort reaches the other ranks through mpirun; with a link down
      // it may not return: end this rank regardless after a grace period.
      std::thread([] {
        std::this_thread::sleep_for(std::chrono::seconds(5));
        std::_Exit(1);
      }).detach();
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    else if (!inParallel)
      MPI_Finalize();
  }
  std::exit(1);
}

void fail(Context &ctx, const char *op, const char *message) {
  std::string where = op ? op : "kernel";
  if (ctx.step >= 0)
    where = "step " + std::to_string(ctx.step) + ": " + where;
  fatal(where, message ? message : "(no message)");
}

//===----------------------------------------------------------------------===//
// Arena accounting
//===----------------------------------------------------------------------===//

namespace {

std::string range(int64_t offset, int64_t bytes) {
  return "[" + std::to_string(offset) + ", " + std::to_string(offset + bytes) +
         ")";
}

[[noreturn]] void plannerBug(Context &ctx, const char *op,
                             const std::string &what) {
  fail(ctx, op, (what + " (a bug in the memory planner or the emitter)").c_str());
}

/// A sample of the device memory in use for --trace: the device pool's
/// buffers other than the arena, and the arena's live bytes.
void recordDeviceMemory(Context &ctx) {
  if (!ctx.recorder.tracing)
    return;
  const Allocator &a = ctx.allocator;
  int64_t persistent = a.bytes(MemCategory::Params) +
                       a.bytes(MemCategory::State) +
                       a.bytes(MemCategory::Batch) +
                       a.bytes(MemCategory::Results);
  ctx.recorder.deviceMemory.push_back({ctx.now(), persistent + ctx.liveBytes});
}

} // namespace

void arenaAcquire(Context &ctx, int64_t offset, int64_t bytes) {
  if (offset < 0 || bytes < 0 || offset > ctx.arenaBytes ||
      bytes > ctx.arenaBytes - offset)
    plannerBug(ctx, "arenaAcquire",
               "buffer " + range(offset, bytes) +
                   " is not inside the arena of " +
                   std::to_string(ctx.arenaBytes) + " bytes");
  if (bytes == 0)
    return;
  // The live ranges are disjoint and ordered by offset: only the nearest
  // neighbour on each side can overlap [offset, offset + bytes).
  auto next = ctx.liveRanges.lower_bound(offset);
  if (next != ctx.liveRanges.end() && next->first < offset + bytes)
    plannerBug(ctx, "arenaAcquire",
               "buffer " + range(offset, bytes) + " overlaps the live buffer " +
                   range(next->first, next->second));
  if (next != ctx.liveRanges.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second > offset)
      plannerBug(ctx, "arenaAcquire",
                 "buffer " + range(offset, bytes) +
                     " overlaps the live buffer " +
                     range(prev->first, prev->second));
  }
  ctx.liveRanges.emplace(offset, bytes);
  ctx.liveBytes += bytes;
  if (ctx.liveBytes > ctx.peakLiveBytes)
    ctx.peakLiveBytes = ctx.liveBytes;
  recordDeviceMemory(ctx);
}

void arenaRelease(Context &ctx, int64_t offset, int64_t bytes) {
  if (bytes == 0)
    return;
  auto it = ctx.liveRanges.find(offset);
  if (it == ctx.liveRanges.end())
    plannerBug(ctx, "arenaRelease",
               "buffer " + range(offset, bytes) + " is not live");
  if (it->second != bytes)
    plannerBug(ctx, "arenaRelease",
               "buffer " + range(offset, bytes) + " was acquired as " +
                   range(it->first, it->second));
  ctx.liveBytes -= bytes;
  ctx.liveRanges.erase(it);
  recordDeviceMemory(ctx);
}

std::string checkArenaEmpty(const Context &ctx) {
  if (ctx.liveRanges.empty())
    return "";
  const auto &first = *ctx.liveRanges.begin();
  return std::to_string(ctx.liveRanges.size()) +
         " arena buffer(s) still live when the step returned, the first " +
         range(first.first, first.second) +
         " (a bug in the memory planner or the emitter)";
}

std::string memoryCountersJson(const Context &ctx, const ProgramSpec &spec) {
  std::string out = "{\n";
  auto field = [&](const std::string &key, int64_t value, bool last = false) {
    out += "  \"" + key + "\": " + std::to_string(value) + (last ? "\n" : ",\n");
  };
  field("rank", ctx.rank);
  field("stage", spec.stage);
  // The pools: what the device holds (params, state, batch, results and
  // the whole arena) and the host pool of swapped activations.
  field("device_peak_bytes", ctx.allocator.poolPeakBytes(MemPool::Device));
  field("host_peak_bytes", ctx.allocator.poolPeakBytes(MemPool::Host));
  field("planned_device_peak_bytes", spec.plannedDevicePeakBytes);
  field("device_memory_bytes", spec.deviceMemoryBytes);
  field("arena_peak_live_bytes", ctx.peakLiveBytes);
  field("planned_peak_bytes", spec.plannedPeakBytes);
  // Copies between host and device memory (the CUDA backend; 0 on CPU).
  field("host_to_device_bytes", ctx.hostToDeviceBytes);
  field("device_to_host_bytes", ctx.deviceToHostBytes);
  for (int c = 0; c < kNumMemCategories; ++c) {
    auto category = static_cast<MemCategory>(c);
    field(std::string(memCategoryName(category)) + "_bytes",
          ctx.allocator.bytes(category));
  }
  field("total_bytes", ctx.allocator.totalBytes(), /*last=*/true);
  return out + "}\n";
}

bool hostStateChanged(Context &ctx) { return ctx.hostStateNewer; }
void deviceStateLoaded(Context &ctx) { ctx.hostStateNewer = false; }
bool stateWantedOnHost(Context &ctx) { return ctx.stateToHost; }

} // namespace rt
} // namespace loom

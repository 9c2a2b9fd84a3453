//===- Train.cpp - trainMain: options, setup, the step loop ---------------===//

#include "RuntimeImpl.h"
#include "loom/Runtime/CpuKernels.h"

#include "loom/Support/ByteSize.h"
#include "loom/Support/AtomicFile.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace loom {
namespace rt {

namespace {

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

struct Options {
  std::string data;
  int64_t steps = -1;
  std::string log;
  std::string weights;
  std::string checkpointDir;
  int64_t checkpointEvery = 0;
  int64_t keepCheckpoints = 2;
  bool resume = false;
  /// --resume=latest-valid: skip checkpoints that fail their checks.
  bool resumeLatestValid = false;
  std::string memoryCounters;
  std::string trace;
  std::string commStats;
  double commTimeout = 30;
  /// --host-link: bytes per second of the device<->host link (0: none).
  double hostLink = 0;
  /// --gemm-strides: cpu::gemm's critical-stride policy.
  cpu::GemmStridePolicy gemmStrides = cpu::GemmStridePolicy::Tune;
  bool quiet = false;
  bool help = false;
};

void printHelp(const char *program, const ProgramSpec *const *stages,
               int32_t numStages) {
  const ProgramSpec &spec = *stages[0];
  std::printf(
      "usage: %s --data DIR --steps N [options]\n"
      "\n"
      "Trains model '%s' (batch size %lld) for N steps.\n"
      "\n"
      "  --data DIR              the dataset: DIR/<name>.npy for each data "
      "input;\n"
      "                          step s reads rows [s*B, (s+1)*B), wrapping "
      "around\n"
      "  --steps N               the total number of steps (a resumed run "
      "stops at N too)\n"
      "  --log FILE              write 'step,loss' CSV rows (the loss of step "
      "s is the\n"
      "                          forward loss before that step's update)\n"
      "  --weights FILE          initial parameters (safetensors); default:\n"
      "                          weights.safetensors next to this executable;\n"
      "                          tensor-parallel programs: each rank's slice,\n"
      "                          FILE with {rank} for the rank (default:\n"
      "                          weights.rank<r>.safetensors next to it)\n"
      "  --checkpoint-dir DIR    write checkpoints (params and optimizer "
      "state) to DIR,\n"
      "                          atomically, after the last step and every K "
      "steps\n"
      "  --checkpoint-every K    checkpoint every K steps (default: only at "
      "the end)\n"
      "  --keep-checkpoints N    keep the newest N checkpoints (default 2)\n"
      "  --resume                continue from the newest checkpoint in "
      "--checkpoint-dir\n"
      "                          (from step 0 with --weights if there is "
      "none); a\n"
      "                          corrupted one (checksum) is an error\n"
      "  --resume=latest-valid   the same, falling back to the newest "
      "checkpoint that\n"
      "                          every rank can read intact\n"
      "  --memory-counters FILE  write the allocator's byte counts, the "
      "device and host\n"
      "                          pools' peaks and the arena's peak live "
      "bytes as JSON\n"
      "                          (a {rank} in FILE: every rank writes its "
      "own; else the\n"
      "                          rank that logs the loss)\n"
      "  --trace FILE            write a Chrome-trace timeline (Perfetto): per "
      "rank, the\n"
      "                          compute track and one per communication "
      "group\n"
      "  --comm-stats FILE       write bytes and seconds per group (dp, tp, pp) "
      "and per\n"
      "                          operation kind, per rank, as JSON\n"
      "  --comm-timeout SECONDS  end the run when a communication does not "
      "complete\n"
      "                          within SECONDS (a link down, a rank killed; "
      "default 30,\n"
      "                          0: wait forever)\n"
      "  --host-link RATE        bytes per second of the link loom-swap's "
      "copies take\n"
      "                          (e.g. 12GiB; suffixes as loomc "
      "--device-memory; default:\n"
      "                          unlimited)\n"
      "  --gemm-strides POLICY   tune (default), direct or pad: whether a "
      "CPU GEMM\n"
      "                          operand whose rows lie a multiple of 1 KiB "
      "apart is\n"
      "                          copied to padded rows first (tune: when "
      "timed faster\n"
      "                          on its first calls; the bits are the "
      "same)\n"
      "  --quiet                 no progress line\n"
      "  --help                  this text\n",
      program, spec.modelName ? spec.modelName : "?",
      static_cast<long long>(spec.batchSize));
  const char *roles[] = {"param", "state", "data", "loss", "other"};
  for (int32_t k = 0; k < numStages; ++k) {
    if (numStages > 1)
      std::printf("\nInputs of pipeline stage %d of %d (ranks with pipeline "
                  "coordinate %d):\n",
                  k, numStages, k);
    else
      std::printf("\nInputs:\n");
    int shadows = 0;
    for (int32_t i = 0; i < stages[k]->numArgs; ++i) {
      const TensorSpec &t = stages[k]->args[i];
      if (!t.name || dtypeSize(t.dtype) == 0 || t.rank < 0 ||
          t.rank > kMaxRank)
        continue;
      // Derived from the weights: nothing to give.
      if (t.role == Role::Shadow) {
        ++shadows;
        continue;
      }
      int role = static_cast<int>(t.role);
      std::printf("  %-6s %s %s %s\n",
                  role >= 0 && role <= 4 ? roles[role] : "?", t.name,
                  dtypeName(t.dtype), formatShape(t.shape, t.rank).c_str());
    }
    if (shadows)
      std::printf("  (and %d bf16 copies of weights, written from them after "
                  "every load)\n",
                  shadows);
  }
}

bool parseCount(const std::string &text, int64_t &value) {
  if (text.empty() || text.size() > 18)
    return false;
  value = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return false;
    value = value * 10 + (c - '0');
  }
  return true;
}

/// Parses argv; returns an error for the user (empty on success).
std::string parseOptions(int argc, char **argv, Options &options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool hasValue = false;
    if (arg.compare(0, 2, "--") == 0) {
      size_t eq = arg.find('=');
      if (eq != std::string::npos) {
        value = arg.substr(eq + 1);
        arg = arg.substr(0, eq);
        hasValue = true;
      }
    }
    auto flag = [&](bool &out) -> std::string {
      if (hasValue)
        return arg + " takes no value";
      out = true;
      return "";
    };
    auto text = [&](std::string &out) -> std::string {
      if (!hasValue) {
        if (i + 1 >= argc)
          return arg + " needs a value";
        value = argv[++i];
      }
      if (value.empty())
        return arg + " needs a non-empty value";
      out = value;
      return "";
    };
    auto count = [&](int64_t &out, int64_t min) -> std::string {
      std::string v;
      if (std::string err = text(v); !err.empty())
        return err;
      if (!parseCount(v, out) || out < min)
        return arg + " expects an integer >= " + std::to_string(min) +
               ", got '" + v + "'";
      return "";
    };
    std::string err;
    if (arg == "--help" || arg == "-h")
      err = flag(options.help);
    else if (arg == "--data")
      err = text(options.data);
    else if (arg == "--steps")
      err = count(options.steps, 0);
    else if (arg == "--log")
      err = text(options.log);
    else if (arg == "--weights")
      err = text(options.weights);
    else if (arg == "--checkpoint-dir")
      err = text(options.checkpointDir);
    else if (arg == "--checkpoint-every")
      err = count(options.checkpointEvery, 1);
    else if (arg == "--keep-checkpoints")
      err = count(options.keepCheckpoints, 1);
    else if (arg == "--resume") {
      options.resume = true;
      if (hasValue && value == "latest-valid")
        options.resumeLatestValid = true;
      else if (hasValue)
        err = "--resume takes no value or '=latest-valid', got '" + value + "'";
    }
    else if (arg == "--memory-counters")
      err = text(options.memoryCounters);
    else if (arg == "--trace")
      err = text(options.trace);
    else if (arg == "--comm-stats")
      err = text(options.commStats);
    else if (arg == "--comm-timeout") {
      std::string v;
      err = text(v);
      char *end = nullptr;
      if (err.empty()) {
        options.commTimeout = std::strtod(v.c_str(), &end);
        if (*end != '\0' || !(options.commTimeout >= 0))
          err = arg + " expects a number of seconds >= 0, got '" + v + "'";
      }
    } else if (arg == "--host-link") {
      std::string v;
      err = text(v);
      int64_t rate = 0;
      if (err.empty()) {
        std::string e = ::loom::parseByteSize(v, rate);
        if (!e.empty() || rate <= 0)
          err = arg + ": " +
                (e.empty() ? "expects a rate > 0 bytes per second, got '" +
                                 v + "'"
                           : e);
        options.hostLink = static_cast<double>(rate);
      }
    } else if (arg == "--gemm-strides") {
      std::string v;
      err = text(v);
      if (v == "tune")
        options.gemmStrides = cpu::GemmStridePolicy::Tune;
      else if (v == "direct")
        options.gemmStrides = cpu::GemmStridePolicy::Direct;
      else if (v == "pad")
        options.gemmStrides = cpu::GemmStridePolicy::Pad;
      else if (err.empty())
        err = arg + " expects tune, direct or pad, got '" + v + "'";
    } else if (arg == "--quiet")
      err = flag(options.quiet);
    else
      err = "unknown option '" + std::string(argv[i]) + "'";
    if (!err.empty())
      return err;
  }
  if (options.help)
    return "";
  if (options.data.empty())
    return "--data DIR is required";
  if (options.steps < 0)
    return "--steps N is required";
  if (options.checkpointDir.empty()) {
    if (options.checkpointEvery > 0)
      return "--checkpoint-every needs --checkpoint-dir";
    if (options.resume)
      return "--resume needs --checkpoint-dir";
  }
  return "";
}

/// Whether this process is rank 0 of an MPI launch, before MPI_Init (for
/// printing command-line errors once).
bool launchedAsRankZero() {
  for (const char *var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (const char *value = std::getenv(var))
      return std::strcmp(value, "0") == 0;
  return true;
}

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

/// `file` in the directory of the running executable.
std::string besideExecutable(const char *argv0, const std::string &file) {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  std::string exe = n > 0 ? std::string(buf, static_cast<size_t>(n))
                          : std::string(argv0 ? argv0 : "");
  size_t slash = exe.rfind('/');
  std::string dir = slash == std::string::npos ? "." : exe.substr(0, slash);
  return dir + "/" + file;
}

/// The initial weights of the rank with tensor-parallel coordinate `rank`:
/// --weights (its `{rank}`s replaced by that coordinate when the program is
/// tensor-parallel) or, by default, weights.safetensors (tensor-parallel:
/// weights.rank<t>.safetensors, as loomc writes them) next to the
/// executable.
std::string weightsPath(const Options &options, const ProgramSpec &spec,
                        int rank, const char *argv0) {
  const std::string placeholder = "{rank}";
  std::string r = std::to_string(rank);
  if (spec.tp <= 1)
    return options.weights.empty()
               ? besideExecutable(argv0, "weights.safetensors")
               : options.weights;
  if (options.weights.empty())
    return besideExecutable(argv0, "weights.rank" + r + ".safetensors");
  std::string path = options.weights;
  size_t at = path.find(placeholder);
  if (at == std::string::npos)
    fatal("weights",
          "the program is tensor-parallel (tp=" + std::to_string(spec.tp) +
              "): each rank loads its own slice of the weights, so --weights "
              "must name them with a {rank} placeholder (e.g. "
              "--weights DIR/weights.rank{rank}.safetensors), got '" +
              path + "'");
  for (; at != std::string::npos; at = path.find(placeholder, at + r.size()))
    path.replace(at, placeholder.size(), r);
  return path;
}

/// mkdir -p.
std::string makeDirectories(const std::string &path) {
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    partial = path.substr(0, pos);
    if (partial.empty())
      continue;
    if (::mkdir(partial.c_str(), 0777) != 0 && errno != EEXIST)
      return "cannot create directory '" + partial +
             "': " + std::strerror(errno);
  }
  struct stat info;
  if (::stat(path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    return "'" + path + "' is not a directory";
  return "";
}

bool isDirectory(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

//===----------------------------------------------------------------------===//
// Progress
//===----------------------------------------------------------------------===//

using Clock = std::chrono::steady_clock;

std::string formatDuration(double seconds) {
  if (!(seconds >= 0) || seconds > 1e8)
    return "?";
  long long s = static_cast<long long>(seconds + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%lld:%02lld:%02lld", s / 3600,
                (s / 60) % 60, s % 60);
  return buf;
}

class Progress {
public:
  Progress(bool enabled, int64_t first, int64_t total, int64_t batch)
      : enabled(enabled), first(first), total(total), batch(batch),
        start(Clock::now()), tty(::isatty(STDERR_FILENO)) {}

  /// After step `step` (0-based) with `loss`; `seconds` is the step's
  /// own time (batch load, step, log; not a checkpoint).
  void update(int64_t step, float loss, double seconds) {
    if (!enabled)
      return;
    stepSeconds.push_back(seconds);
    Clock::time_point now = Clock::now();
    bool last = step + 1 == total;
    if (!last && printed && now - lastPrint < std::chrono::seconds(1))
      return;
    lastPrint = now;
    printed = true;
    double elapsed = std::chrono::duration<double>(now - start).count();
    double done = static_cast<double>(step + 1 - first);
    double perStep = done > 0 ? elapsed / done : 0;
    double rate = elapsed > 0 ? done * static_cast<double>(batch) / elapsed : 0;
    std::fprintf(stderr, "%sstep %lld/%lld  loss %.6g  %.1f samples/s  ETA %s%s",
                 tty ? "\r" : "", static_cast<long long>(step + 1),
                 static_cast<long long>(total), static_cast<double>(loss),
                 rate,
                 formatDuration(perStep * static_cast<double>(total - step - 1))
                     .c_str(),
                 tty ? (last ? "\n" : "   ") : "\n");
    std::fflush(stderr);
  }

  /// The last line: how many steps ran and their median time, which
  /// leaves out the first steps' warm-up (page faults, GEMM tuning) as
  /// the mean would not; what benchmarks read.
  void summary() const {
    if (!enabled || stepSeconds.empty())
      return;
    std::vector<double> sorted = stepSeconds;
    std::sort(sorted.begin(), sorted.end());
    size_t n = sorted.size();
    double median = n % 2 ? sorted[n / 2]
                          : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    std::fprintf(stderr,
                 "loom-train: %zu steps; median step %.3f ms, first %.3f ms, "
                 "fastest %.3f ms\n",
                 n, median * 1e3, stepSeconds.front() * 1e3, sorted[0] * 1e3);
  }

private:
  bool enabled;
  int64_t first, total, batch;
  Clock::time_point start, lastPrint;
  bool tty;
  bool printed = false;
  std::vector<double> stepSeconds;
};

//===----------------------------------------------------------------------===//
// The run
//===----------------------------------------------------------------------===//

/// Everything a run allocates.
struct Buffers {
  std::vector<Block> args, results;
  std::vector<void *> argPtrs, resultPtrs;
  Block arena;
};

void check(const std::string &op, const std::string &error) {
  if (!error.empty())
    fatal(op, error);
}

/// The step all ranks resume from: the newest checkpoint every rank has
/// (ranks prune only after all have written a newer one, so the oldest of
/// the ranks' newest checkpoints exists everywhere), or -1 if no rank has
/// one. Some ranks with checkpoints and others without is an error: the
/// directory belongs to another world size or was damaged.
int64_t agreeOnResumeStep(Context &ctx, const std::string &dir,
                          const std::vector<int64_t> &steps) {
  int64_t mine = steps.empty() ? -1 : steps.back();
  int64_t lowest = mine, highest = mine;
  if (ctx.size > 1) {
    MPI_Allreduce(&mine, &lowest, 1, MPI_INT64_T, MPI_MIN, ctx.comm);
    MPI_Allreduce(&mine, &highest, 1, MPI_INT64_T, MPI_MAX, ctx.comm);
  }
  if (lowest < 0 && highest >= 0)
    fatal("checkpoint",
          "some of the " + std::to_string(ctx.size) + " ranks find no "
          "checkpoint in '" + dir + "' while others do (the newest is step " +
              std::to_string(highest) +
              "): was it written by another number of ranks?");
  return lowest;
}

/// --resume=latest-valid: the newest step whose checkpoint every rank reads
/// intact (readCheckpoint: checksum, program, rank), loaded into `args`;
/// its path. Each refused file is reported with why; none left is an error.
std::string resumeLatestValid(Context &ctx, const ProgramSpec &spec,
                              const std::string &dir,
                              std::vector<int64_t> candidates,
                              void *const *args, int64_t &startStep) {
  for (;;) {
    int64_t mine = candidates.empty() ? -1 : candidates.back(), step = mine;
    if (ctx.size > 1)
      MPI_Allreduce(&mine, &step, 1, MPI_INT64_T, MPI_MIN, ctx.comm);
    if (step < 0)
      fatal("checkpoint",
            "no checkpoint in '" + dir + "' is intact on every rank (each "
            "refused one is named above); start without --resume from "
            "--weights, or restore a checkpoint");
    std::string path = checkpointPath(dir, step, ctx.rank);
    std::string err = readCheckpoint(path, spec, ctx.rank, ctx.size, args,
                                     startStep);
    int ok = err.empty() ? 1 : 0, all = ok;
    if (ctx.size > 1)
      MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, ctx.comm);
    if (all)
      return path;
    if (!ok)
      std::fprintf(stderr,
                   "loom-train: warning: rank %d: %s; trying an older "
                   "checkpoint\n",
                   ctx.rank, err.c_str());
    while (!candidates.empty() && candidates.back() >= step)
      candidates.pop_back();
  }
}

void writeCheckpointAndPrune(Context &ctx, const ProgramSpec &spec,
                             const Options &options, int64_t step,
                             const Buffers &buffers) {
  std::string path = checkpointPath(options.checkpointDir, step, ctx.rank);
  check("checkpoint", writeCheckpoint(path, spec, step, ctx.rank, ctx.size,
                                      buffers.argPtrs.data()));
  // Only once every rank has its new checkpoint may the old ones go.
  if (ctx.size > 1)
    MPI_Barrier(ctx.comm);
  check("checkpoint", pruneCheckpoints(options.checkpointDir, ctx.rank,
                                       options.keepCheckpoints));
}

int run(Context &ctx, const ProgramSpec *const *stages, const Options &options,
        const char *argv0) {
  const ProgramSpec &first = *stages[0];
  bool rank0 = ctx.rank == 0;

  // 0. The launch must match the mesh: every rank checks and says so.
  int64_t meshSize = int64_t{first.dp} * first.tp * first.pp;
  if (first.dp > 0 && meshSize != ctx.size) {
    printError("mesh",
               "rank " + std::to_string(ctx.rank) + ": the program was "
               "compiled for the mesh dp=" + std::to_string(first.dp) +
               ",tp=" + std::to_string(first.tp) + ",pp=" +
               std::to_string(first.pp) + " (" + std::to_string(meshSize) +
               " ranks) but runs on " + std::to_string(ctx.size) +
               " rank(s); launch it with mpirun -np " +
               std::to_string(meshSize));
    // Every rank sees the same mismatch: all say so before any aborts.
    MPI_Barrier(ctx.comm);
    abortRun();
  }
  // The groups: rank r = (d*pp + p)*tp + t. A replicated program's ranks
  // are all data-parallel (each reads the rows of step s alone).
  if (first.dp > 0)
    ctx.initGroups(first.dp, first.tp, first.pp);
  else
    ctx.initGroups(ctx.size, 1, 1);
  // This rank's stage; the loss is the last stage's, logged by the rank
  // (d=0, p=pp-1, t=0).
  const ProgramSpec &spec = *stages[groupRank(ctx, Group::Pp)];
  ctx.arenaBytes = spec.arenaBytes;
  const bool lead = ctx.rank == (first.pp - 1) * first.tp;
  // This rank's share of each step's rows (replicated programs: all of it):
  // its data-parallel coordinate d picks batch s*dp + d.
  const int64_t dataParallel = spec.dp > 0 ? spec.dp : 1;
  const int64_t dataRank = spec.dp > 0 ? groupRank(ctx, Group::Dp) : 0;
  const int tensorRank = groupRank(ctx, Group::Tp);

  // 1. Where to start: a checkpoint (--resume) or the weights.
  int64_t startStep = 0;
  std::string resumeFrom;
  std::vector<int64_t> steps;
  if (!options.checkpointDir.empty()) {
    check("checkpoint",
          listCheckpoints(options.checkpointDir, ctx.rank, steps));
    int64_t agreed = agreeOnResumeStep(ctx, options.checkpointDir, steps);
    if (options.resume && agreed >= 0)
      resumeFrom = checkpointPath(options.checkpointDir, agreed, ctx.rank);
    else if (options.resume && lead)
      std::fprintf(stderr,
                   "loom-train: no checkpoint in '%s'; starting at step 0\n",
                   options.checkpointDir.c_str());
    if (!options.resume && !steps.empty())
      fatal("checkpoint",
            "'" + options.checkpointDir + "' already holds checkpoints (the " +
                "newest is step " + std::to_string(steps.back()) +
                "); pass --resume to continue from it, or choose another "
                "--checkpoint-dir");
  }

  // 2. Buffers: arguments, results, the arena (the device pool, within
  // the budget the program was compiled for).
  Buffers buffers;
  std::string error;
  ctx.allocator.deviceBudget = spec.deviceMemoryBytes;
  for (int32_t i = 0; i < spec.numArgs; ++i) {
    const TensorSpec &t = spec.args[i];
    // A weight's bf16 shadow counts with the weights.
    MemCategory category =
        t.role == Role::Param || t.role == Role::Shadow ? MemCategory::Params
        : t.role == Role::State                         ? MemCategory::State
                                                        : MemCategory::Batch;
    buffers.args.push_back(ctx.allocator.allocate(category, numBytes(t), error));
    check("memory", error);
    buffers.argPtrs.push_back(buffers.args.back().get());
  }
  for (int32_t j = 0; j < spec.numResults; ++j) {
    const TensorSpec &r = spec.results[j];
    // An update written in place is its argument's buffer.
    if (r.inPlace) {
      buffers.resultPtrs.push_back(
          buffers.argPtrs[static_cast<size_t>(r.updates)]);
      continue;
    }
    buffers.results.push_back(
        ctx.allocator.allocate(MemCategory::Results, numBytes(r), error));
    check("memory", error);
    buffers.resultPtrs.push_back(buffers.results.back().get());
  }
  buffers.arena = ctx.allocator.allocate(MemCategory::Arena, spec.arenaBytes,
                                         error);
  check("memory", error);
  // The host pool of loom-swap's offloaded buffers.
  Block hostPool;
  if (spec.hostArenaBytes > 0) {
    hostPool = ctx.allocator.allocate(MemCategory::Host, spec.hostArenaBytes,
                                      error);
    check("memory", error);
    ctx.hostArena = static_cast<char *>(hostPool.get());
    ctx.hostArenaBytes = spec.hostArenaBytes;
  }

  // 3. Params and state (state is zero unless resumed).
  bool hasParams = false;
  for (int32_t i = 0; i < spec.numArgs; ++i)
    hasParams |= spec.args[i].role == Role::Param;
  if (!resumeFrom.empty() && options.resumeLatestValid) {
    resumeFrom = resumeLatestValid(ctx, spec, options.checkpointDir, steps,
                                   buffers.argPtrs.data(), startStep);
  } else if (!resumeFrom.empty()) {
    check("checkpoint", readCheckpoint(resumeFrom, spec, ctx.rank, ctx.size,
                                       buffers.argPtrs.data(), startStep));
  } else if (hasParams) {
    std::string weights = weightsPath(options, spec, tensorRank, argv0);
    check("weights", loadWeights(weights, spec, buffers.argPtrs.data()));
  }

  // 4. Data.
  if (!isDirectory(options.data))
    fatal("data", "'" + options.data + "' is not a directory (--data DIR)");
  std::vector<std::pair<int32_t, Dataset>> datasets;
  for (int32_t i = 0; i < spec.numArgs; ++i) {
    if (spec.args[i].role != Role::Data)
      continue;
    Dataset dataset;
    // Each step consumes dp batches, one per data-parallel rank.
    check("data", loadDataset(options.data, spec.args[i],
                              spec.batchSize * dataParallel, dataset));
    // The npy reader allocated the dataset; count its bytes.
    ctx.allocator.record(MemCategory::Data,
                         static_cast<int64_t>(dataset.array.data.size()));
    datasets.emplace_back(i, std::move(dataset));
  }

  // 5. Outputs, only now that every input is valid.
  if (!options.checkpointDir.empty() && rank0)
    check("checkpoint", makeDirectories(options.checkpointDir));
  if (ctx.size > 1)
    MPI_Barrier(ctx.comm);
  FILE *log = nullptr;
  if (!options.log.empty() && lead)
    check("log", openLossLog(options.log, startStep, log));

  int32_t lossIndex = 0;
  for (int32_t j = 0; j < spec.numResults; ++j)
    if (spec.results[j].role == Role::Loss)
      lossIndex = j;

  if (startStep > 0 && lead && !options.quiet)
    std::fprintf(stderr, "loom-train: resuming from '%s' at step %lld\n",
                 resumeFrom.c_str(), static_cast<long long>(startStep));

  // 6. The loop.
  Progress progress(lead && !options.quiet, startStep, options.steps,
                    spec.batchSize);
  char *arena = static_cast<char *>(buffers.arena.get());
  for (int64_t step = startStep; step < options.steps; ++step) {
    Clock::time_point stepStart = Clock::now();
    {
      TraceScope scope(ctx, "load batch");
      for (const auto &[index, dataset] : datasets)
        copyBatch(dataset, step * dataParallel + dataRank, spec.batchSize,
                  buffers.argPtrs[static_cast<size_t>(index)]);
    }
    ctx.step = step;
    bool due = options.checkpointEvery > 0 &&
               (step + 1) % options.checkpointEvery == 0;
    bool checkpoint = !options.checkpointDir.empty() &&
                      (due || step + 1 == options.steps);
    // A device keeping the parameters and state returns them for it.
    ctx.stateToHost = checkpoint;
    {
      TraceScope scope(ctx, "step " + std::to_string(step));
      spec.step(ctx, buffers.argPtrs.data(), buffers.resultPtrs.data(), arena);
    }
    check("step " + std::to_string(step), checkArenaEmpty(ctx));
    ctx.step = -1;
    float loss = *static_cast<const float *>(
        buffers.resultPtrs[static_cast<size_t>(lossIndex)]);
    if (log)
      check("log", appendLoss(log, options.log, step, loss));
    // The updated values become the next step's arguments; the old
    // argument buffers take the next step's results (updates written in
    // place already are the arguments).
    for (int32_t j = 0; j < spec.numResults; ++j) {
      int32_t target = spec.results[j].updates;
      if (target >= 0 && !spec.results[j].inPlace)
        std::swap(buffers.argPtrs[static_cast<size_t>(target)],
                  buffers.resultPtrs[static_cast<size_t>(j)]);
    }
    progress.update(step, loss,
                    std::chrono::duration<double>(Clock::now() - stepStart)
                        .count());
    if (checkpoint) {
      TraceScope scope(ctx, "checkpoint");
      writeCheckpointAndPrune(ctx, spec, options, step + 1, buffers);
    }
  }
  progress.summary();
  if (startStep >= options.steps && lead && !options.quiet)
    std::fprintf(stderr,
                 "loom-train: the checkpoint is at step %lld, not before "
                 "--steps %lld: nothing to do\n",
                 static_cast<long long>(startStep),
                 static_cast<long long>(options.steps));

  if (log && std::fclose(log) != 0)
    fatal("log", "cannot close '" + options.log + "': " + std::strerror(errno));

  if (spec.plannedPeakBytes > 0 && ctx.peakLiveBytes > spec.plannedPeakBytes)
    std::fprintf(stderr,
                 "loom-train: warning: rank %d: the arena's peak of live bytes "
                 "(%lld) exceeds the memory planner's prediction (%lld)\n",
                 ctx.rank, static_cast<long long>(ctx.peakLiveBytes),
                 static_cast<long long>(spec.plannedPeakBytes));

  if (spec.plannedDevicePeakBytes > 0 &&
      ctx.allocator.poolPeakBytes(MemPool::Device) >
          spec.plannedDevicePeakBytes)
    std::fprintf(stderr,
                 "loom-train: warning: rank %d: the device pool's peak "
                 "(%lld bytes) exceeds the memory planner's device peak "
                 "(%lld)\n",
                 ctx.rank,
                 static_cast<long long>(
                     ctx.allocator.poolPeakBytes(MemPool::Device)),
                 static_cast<long long>(spec.plannedDevicePeakBytes));

  // 7. Memory counters, the timeline and the communication statistics.
  if (!options.memoryCounters.empty()) {
    std::string path = options.memoryCounters;
    bool perRank = false;
    for (size_t at; (at = path.find("{rank}")) != std::string::npos;
         perRank = true)
      path.replace(at, 6, std::to_string(ctx.rank));
    if (perRank || lead)
      check("memory-counters",
            writeFileAtomically(path, memoryCountersJson(ctx, spec)));
  }
  if (!options.trace.empty())
    check("trace", writeTrace(ctx, options.trace));
  if (!options.commStats.empty())
    check("comm-stats", writeCommStats(ctx, options.commStats));
  return 0;
}

} // namespace

int trainMainStages(int argc, char **argv, const ProgramSpec *const *stages,
                    int32_t numStages) {
  const char *program = argc > 0 && argv[0] ? argv[0] : "train";
  if (!stages || numStages < 1)
    fatal("program", "no stage programs (a bug in the emitted program)");
  for (int32_t k = 0; k < numStages; ++k)
    if (!stages[k])
      fatal("program", "stage " + std::to_string(k) +
                           " is missing (a bug in the emitted program)");
  Options options;
  if (std::string err = parseOptions(argc, argv, options); !err.empty()) {
    if (launchedAsRankZero())
      std::fprintf(stderr,
                   "loom-train: error: %s\n(run '%s --help' for the options)\n",
                   err.c_str(), program);
    return 2;
  }
  if (options.help) {
    printHelp(program, stages, numStages);
    return 0;
  }

  for (int32_t k = 0; k < numStages; ++k) {
    const ProgramSpec &spec = *stages[k];
    if (std::string err = validateSpec(spec); !err.empty())
      fatal("program", (numStages > 1 ? "stage " + std::to_string(k) + ": "
                                       : std::string()) +
                           err + " (a bug in the emitted program)");
    if (spec.stage != k || spec.pp != numStages || spec.dp != stages[0]->dp ||
        spec.tp != stages[0]->tp || spec.batchSize != stages[0]->batchSize)
      fatal("program",
            "stage program " + std::to_string(k) + " of " +
                std::to_string(numStages) + " says stage=" +
                std::to_string(spec.stage) + ", pp=" +
                std::to_string(spec.pp) + ", dp=" + std::to_string(spec.dp) +
                ", tp=" + std::to_string(spec.tp) + ", batch size " +
                std::to_string(spec.batchSize) +
                " (the stages must be 0..pp-1 in order, pp their number, and "
                "share dp, tp and the batch size; a bug in the emitted "
                "program)");
  }

  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    // The communication thread (Progress.cpp) calls MPI beside the
    // compute thread.
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE)
      fatal("mpi", "this MPI library does not support MPI_THREAD_MULTIPLE, "
                   "which the runtime's communication thread needs (Open MPI "
                   "and MPICH builds from Debian do)");
  }
  int status;
  {
    Context ctx;
    ctx.initComm();
    ctx.commTimeoutSeconds = options.commTimeout;
    ctx.hostLinkBytesPerSecond = options.hostLink;
    cpu::setGemmStridePolicy(options.gemmStrides);
    ctx.recorder.tracing = !options.trace.empty();
    if (ctx.recorder.tracing)
      alignClocks(ctx);
    shareCoresAmongLocalRanks(ctx);
    flushDenormalsToZero();
    status = run(ctx, stages, options, program);
    ctx.freeComm();
  }
  if (!initialized)
    MPI_Finalize();
  return status;
}

int trainMain(int argc, char **argv, const ProgramSpec &spec) {
  const ProgramSpec *stages[] = {&spec};
  return trainMainStages(argc, argv, stages, 1);
}

} // namespace rt
} // namespace loom

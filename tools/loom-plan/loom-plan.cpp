//===- loom-plan.cpp - The planner's tool ---------------------------------===//
//
//   loom-plan MODEL --cluster SPEC --gpus N --global-batch G [--json] [-o plan.json]
//   loom-plan MODEL --compare SPEC SPEC ... --gpus N --global-batch G [--plot F.svg]
//
// Searches the training plans of MODEL on a cluster (lib/Planner), prints
// the best candidates with their predicted step time, throughput, MFU and
// memory, why the others were rejected, and writes the best as a plan that
// `loomc --plan` compiles. See docs/planner.md.
//
//===----------------------------------------------------------------------===//

#include "loom/Import/Model.h"
#include "loom/Pipelines/Plan.h"
#include "loom/Planner/ClusterSpec.h"
#include "loom/Planner/CostModel.h"
#include "loom/Planner/ProgramPlay.h"
#include "loom/Planner/Search.h"
#include "loom/InitAllDialects.h"
#include "loom/InitAllPasses.h"
#include "loom/Support/AtomicFile.h"
#include "loom/Support/Mesh.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <unistd.h>

#include <chrono>
#include <map>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::planner;
namespace cl = llvm::cl;
namespace json = llvm::json;

namespace {

cl::OptionCategory category("loom-plan options");

cl::list<std::string> positionals(cl::Positional,
                                  cl::desc("<model.onnx|model.mlir> [SPEC ...]"),
                                  cl::cat(category));
cl::opt<std::string> cluster("cluster",
                             cl::desc("Cluster spec: a bundled name (--list-clusters) "
                                      "or a JSON file (docs/cluster-spec.md)"),
                             cl::value_desc("SPEC"), cl::cat(category));
cl::opt<bool> compareMode(
    "compare",
    cl::desc("Compare clusters: MODEL --compare SPEC SPEC ... prints the best "
             "plan on each (one row per spec; names or files)"),
    cl::cat(category));
cl::opt<int64_t> gpus("gpus", cl::desc("GPUs to plan for"), cl::value_desc("N"),
                      cl::init(0), cl::cat(category));
cl::opt<int64_t> globalBatch("global-batch",
                             cl::desc("Samples per step over all replicas"),
                             cl::value_desc("G"), cl::init(0), cl::cat(category));
cl::opt<std::string> mesh("mesh",
                          cl::desc("Evaluate this mesh dp=D,tp=T,pp=P instead "
                                   "of searching meshes"),
                          cl::cat(category));
cl::opt<int64_t> microbatches("microbatches",
                              cl::desc("Fix the micro-batches per step"),
                              cl::init(0), cl::cat(category));
cl::opt<std::string> microBatchSizes(
    "micro-batch-sizes",
    cl::desc("Rows per micro-batch to try, comma list (default: the model's "
             "batch, the only one loomc compiles a fixed-batch model at)"),
    cl::value_desc("R,R,..."), cl::cat(category));
cl::opt<std::string> recompute("recompute",
                               cl::desc("Fix recomputation: none, full, "
                                        "selective or comm-free"),
                               cl::cat(category));
cl::opt<std::string> schedule("schedule", cl::desc("Fix the schedule: 1f1b or gpipe"),
                              cl::cat(category));
cl::opt<std::string> swapOpt(
    "swap",
    cl::desc("none: never plan activation swap; host (default where the "
             "spec gives host_link): a plan over the GPU's memory may swap "
             "activations to host memory (loom-swap, Mbapp)"),
    cl::cat(category));
cl::opt<std::string> precisionOpt(
    "precision",
    cl::desc("Arithmetic of the plans: f32 (default) or bf16 (loomc "
             "--precision bf16: products at the GPU's bf16 peak, activations "
             "from the bf16 compile; written into the plan)"),
    cl::init("f32"), cl::cat(category));
cl::opt<int64_t> overlapSplit("overlap-split",
                              cl::desc("Fix the Oases overlap split K"),
                              cl::init(0), cl::cat(category));
cl::opt<std::string> optimizer("optimizer",
                               cl::desc("Optimizer whose state is planned "
                                        "for: sgd, adam or adamw (default)"),
                               cl::init("adamw"), cl::cat(category));
cl::opt<int64_t> maxTp("max-tp",
                       cl::desc("Largest tensor-parallel degree searched "
                                "(default: GPUs per node)"),
                       cl::init(0), cl::cat(category));
cl::opt<int64_t> top("top", cl::desc("Candidates in the table (default 10)"),
                     cl::init(10), cl::cat(category));
cl::opt<bool> jsonOut("json", cl::desc("Print JSON instead of tables"),
                      cl::cat(category));
cl::opt<bool> checkMemory(
    "check-memory",
    cl::desc("Compile the best plan with loomc's passes (no C++) and print "
             "each stage's device peak by Loom's memory plan next to the "
             "prediction (JSON: memory_plan_device_bytes); the plan is "
             "unrolled over its micro-batches, so a large model with many "
             "takes long"),
    cl::cat(category));
cl::opt<bool> checkTime(
    "check-time",
    cl::desc("Compile the best plan with loomc's passes (no C++) and play "
             "the compiled step on the spec (loomc --play: every op timed, "
             "the program's own transfers and waits); prints its step time "
             "next to the prediction (JSON: played_step_time_s and "
             "played_exposed_comm_s)"),
    cl::cat(category));
cl::opt<std::string> planOut("o", cl::desc("Write the best plan (loomc --plan); "
                                            "calibrate: the spec"),
                             cl::value_desc("plan.json"), cl::cat(category));
cl::opt<std::string> traceOut("trace",
                              cl::desc("Write the best plan's simulated "
                                       "timeline (Chrome trace, as train --trace)"),
                              cl::value_desc("FILE"), cl::cat(category));
cl::opt<double> budget("budget-usd-per-hour",
                       cl::desc("--compare: as many GPUs of each cluster as "
                                "this buys (instead of --gpus)"),
                       cl::init(0), cl::cat(category));
cl::opt<double> trainTokens("train-tokens",
                            cl::desc("--compare: tokens to train, for the time "
                                     "and cost columns (default 1e9)"),
                            cl::init(1e9), cl::cat(category));
cl::opt<std::string> plotOut("plot",
                             cl::desc("--compare: write a bar chart (SVG) of "
                                      "tokens/s and tokens per dollar"),
                             cl::value_desc("FILE.svg"), cl::cat(category));
cl::opt<bool> listClusters("list-clusters", cl::desc("List the bundled specs"),
                           cl::cat(category));
cl::opt<bool> ignoreMemory(
    "ignore-memory",
    cl::desc("Rank plans that exceed the GPU's memory too (what-if)"),
    cl::cat(category));
cl::opt<std::string> network(
    "network",
    cl::desc("calibrate: the link between hosts, tc syntax (e.g. 1gbit, "
             "100mbit; default 1gbit), as python -m loom.vcluster --link sets it"),
    cl::init("1gbit"), cl::cat(category));
cl::opt<double> networkLatency("network-latency-us",
                               cl::desc("calibrate: one message's latency "
                                        "between hosts (default 100)"),
                               cl::init(100), cl::cat(category));
cl::opt<int64_t> ranksPerHost("ranks-per-host",
                              cl::desc("calibrate: ranks per host (the spec's "
                                       "gpus_per_node; default 1)"),
                              cl::init(1), cl::cat(category));
cl::opt<int64_t> threads("calibrate-threads",
                         cl::desc("calibrate: threads per rank (default 1)"),
                         cl::init(1), cl::cat(category));
cl::opt<bool> measureLinks(
    "vcluster",
    cl::desc("calibrate: also measure the links: the runtime's send and "
             "all-reduce between two virtual hosts over --network (python -m "
             "loom.vcluster; root) give efficiency.comm, .all_reduce and the "
             "latency"),
    cl::cat(category));
cl::opt<int64_t> concurrent(
    "concurrent",
    cl::desc("calibrate: ranks that share this machine's cores when the "
             "programs run (e.g. every rank of a vcluster run); the kernels "
             "are timed with that many copies at once (default 1)"),
    cl::init(1), cl::cat(category));
cl::opt<bool> quiet("q", cl::desc("No progress lines"), cl::cat(category));

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

int fail(const llvm::Twine &message) {
  llvm::errs() << "loom-plan: error: " << message << "\n";
  return 1;
}

json::Value estimateJSON(const Estimate &e, const ClusterSpec &spec,
                         llvm::StringRef model, OptimizerKind opt) {
  Plan plan;
  plan.model = model.str();
  plan.options = trainingOptions(e, opt);
  json::Array stages;
  for (auto [k, s] : llvm::enumerate(e.stages))
    stages.push_back(json::Object{
        {"simulated_peak_bytes",
         k < e.sim.peakBytes.size() ? e.sim.peakBytes[k] : 0.0},
        {"ops", json::Array{static_cast<int64_t>(s.begin),
                            static_cast<int64_t>(s.end)}},
        {"forward_s", s.work.forward},
        {"backward_s", s.work.backward},
        {"recompute_s", s.work.recompute},
        {"exposed_tp_comm_s", s.work.forwardComm + s.work.backwardComm},
        {"send_s", s.work.sendNext},
        {"dp_all_reduce_s", s.work.gradAllReduce},
        {"optimizer_s", s.work.optimizer},
        {"device_bytes", s.deviceBytes},
        {"param_bytes", s.params},
        {"optimizer_state_bytes", s.optimizerState},
        {"activation_bytes_per_microbatch", s.activations},
        {"microbatches_in_flight", s.inFlight},
        {"swapped_bytes", s.swappedBytes},
        {"exposed_swap_s", s.exposedSwap}});
  return json::Object{
      {"plan_summary", e.candidate.describe()},
      {"step_time_s", e.stepTime},
      {"tokens_per_s", e.tokensPerSecond},
      {"mfu", e.mfu},
      {"tflops_per_gpu", e.tflopsPerGpu},
      {"memory_per_device_bytes", e.memoryPerDevice},
      {"gpu_memory_bytes", spec.gpu.memoryBytes},
      {"bubble_fraction", e.sim.bubbleFraction},
      {"exposed_comm_s", e.sim.exposedComm},
      {"usd_per_hour", e.usdPerHour},
      {"tokens_per_usd", e.tokensPerUsd},
      {"stages", std::move(stages)},
      {"plan", toJSON(plan)}};
}

void printTable(const SearchResult &r, const ClusterSpec &spec) {
  size_t n = std::min<size_t>(r.ranked.size(), top);
  // The plan column as wide as its longest entry (at least 44).
  size_t width = 44;
  for (size_t i = 0; i < n; ++i)
    width = std::max(width, r.ranked[i].candidate.describe().size());
  auto plan = [&](std::string text) {
    text.resize(width, ' ');
    return text;
  };
  llvm::outs() << llvm::formatv(
      "{0,-4} {1} {2,10} {3,11} {4,6} {5,8} {6,9} {7,7} {8,9}\n", "rank",
      plan("plan"), "step s", "tokens/s", "MFU", "TFLOPS", "mem GiB",
      "bubble", "exp.comm");
  for (size_t i = 0; i < n; ++i) {
    const Estimate &e = r.ranked[i];
    llvm::outs() << llvm::formatv(
        "{0,-4} {1} {2,10:f4} {3,11:f0} {4,5:f1}% {5,8:f1} {6,9:f2} "
        "{7,6:f1}% {8,9:f4}\n",
        i + 1, plan(e.candidate.describe()), e.stepTime, e.tokensPerSecond,
        100 * e.mfu, e.tflopsPerGpu, e.memoryPerDevice / kGiB,
        100 * e.sim.bubbleFraction, e.sim.exposedComm);
  }
  llvm::outs() << llvm::formatv("{0} plans priced, {1} fit {2} GiB per GPU",
                                r.evaluated, r.ranked.size(),
                                llvm::format("%.1f", spec.gpu.memoryBytes / kGiB))
               << "\n";
  for (const auto &[reason, rej] : r.rejected) {
    llvm::outs() << "rejected " << rej.count << ": " << reason;
    if (!rej.closest.rejected.empty())
      llvm::outs() << " (closest: " << rej.closest.candidate.describe()
                   << ", " << rej.closest.rejected << ")";
    llvm::outs() << "\n";
  }
}

std::optional<RecomputePolicy> parseRecompute(llvm::StringRef s) {
  std::optional<RecomputePolicy> p = symbolizeRecomputePolicy(s);
  if (p == RecomputePolicy::automatic)
    return std::nullopt;
  return p;
}

/// The SVG bar chart of --compare: tokens/s and tokens per dollar per
/// cluster, each scaled to its largest value.
std::string compareSvg(const std::vector<std::pair<std::string, Estimate>> &rows) {
  double maxTps = 0, maxTpu = 0;
  for (const auto &[name, e] : rows) {
    maxTps = std::max(maxTps, e.tokensPerSecond);
    maxTpu = std::max(maxTpu, e.tokensPerUsd);
  }
  int width = 760, rowH = 44, top = 50;
  int height = top + rowH * static_cast<int>(rows.size()) + 30;
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width
     << "\" height=\"" << height << "\" font-family=\"sans-serif\" "
     << "font-size=\"12\">\n<text x=\"10\" y=\"20\" font-size=\"15\">"
     << "loom-plan --compare: best plan per cluster</text>\n"
     << "<rect x=\"200\" y=\"30\" width=\"12\" height=\"10\" fill=\"#4878cf\"/>"
     << "<text x=\"216\" y=\"40\">tokens/s</text>"
     << "<rect x=\"300\" y=\"30\" width=\"12\" height=\"10\" fill=\"#e58c2e\"/>"
     << "<text x=\"316\" y=\"40\">tokens per USD</text>\n";
  int i = 0;
  for (const auto &[name, e] : rows) {
    int y = top + rowH * i++;
    double a = maxTps > 0 ? e.tokensPerSecond / maxTps : 0;
    double b = maxTpu > 0 ? e.tokensPerUsd / maxTpu : 0;
    os << "<text x=\"10\" y=\"" << y + 20 << "\">" << name << "</text>\n";
    os << llvm::formatv("<rect x=\"170\" y=\"{0}\" width=\"{1:f1}\" "
                        "height=\"16\" fill=\"#4878cf\"/>",
                        y + 2, 400 * a)
       << llvm::formatv("<text x=\"{0:f1}\" y=\"{1}\">{2:e2}</text>\n",
                        175 + 400 * a, y + 14, e.tokensPerSecond)
       << llvm::formatv("<rect x=\"170\" y=\"{0}\" width=\"{1:f1}\" "
                        "height=\"16\" fill=\"#e58c2e\"/>",
                        y + 20, 400 * b)
       << llvm::formatv("<text x=\"{0:f1}\" y=\"{1}\">{2:e2}</text>\n",
                        175 + 400 * b, y + 32, e.tokensPerUsd);
  }
  os << "</svg>\n";
  return s;
}

/// A rate in tc's syntax (100mbit, 1gbit, 12500kbps) in bytes per second.
std::optional<double> parseRate(llvm::StringRef text) {
  static const std::pair<const char *, double> units[] = {
      {"gbit", 1e9 / 8}, {"mbit", 1e6 / 8}, {"kbit", 1e3 / 8},
      {"gbps", 1e9},     {"mbps", 1e6},     {"kbps", 1e3},
      {"bit", 1.0 / 8},  {"bps", 1.0}};
  for (auto [suffix, scale] : units)
    if (text.consume_back(suffix)) {
      double value;
      if (text.getAsDouble(value) || value <= 0)
        return std::nullopt;
      return value * scale;
    }
  return std::nullopt;
}

/// This process's environment with `overrides` ("NAME=value") in place of
/// any variables of those names.
std::vector<std::string> environmentWith(llvm::ArrayRef<std::string> overrides) {
  std::vector<std::string> env;
  for (char **e = environ; *e; ++e) {
    llvm::StringRef name = llvm::StringRef(*e).split('=').first;
    if (llvm::none_of(overrides, [&](const std::string &o) {
          return llvm::StringRef(o).split('=').first == name;
        }))
      env.push_back(*e);
  }
  env.insert(env.end(), overrides.begin(), overrides.end());
  return env;
}

/// One run of the runtime's communication benchmark
/// (build/test/Runtime/loom-test-comm-bench) between two virtual hosts over
/// `rate`, messages of `bytes`: its JSON line, or an error.
llvm::Expected<json::Value> vclusterCommBench(llvm::StringRef binDir,
                                              llvm::StringRef rate,
                                              int64_t bytes) {
  auto error = [](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   message.str());
  };
  llvm::SmallString<256> bench(llvm::sys::path::parent_path(binDir));
  llvm::sys::path::append(bench, "test", "Runtime", "loom-test-comm-bench");
  if (!llvm::sys::fs::can_execute(bench))
    return error("--vcluster: " + bench + " not found (build the tests)");
  llvm::ErrorOr<std::string> python = llvm::sys::findProgramByName("python3");
  if (!python)
    return error("--vcluster: python3 not found on PATH");
  std::vector<std::string> envStrings = environmentWith(
      {std::string("PYTHONPATH=") + LOOM_PYTHON_DIR, "LOOM_BENCH=bandwidth",
       "LOOM_BENCH_BYTES=" + std::to_string(bytes), "LOOM_BENCH_REPEAT=3",
       "OMP_NUM_THREADS=1"});
  std::vector<llvm::StringRef> env(envStrings.begin(), envStrings.end());
  llvm::SmallString<128> out, err;
  llvm::sys::fs::createTemporaryFile("loom-calibrate-link", "json", out);
  llvm::sys::fs::createTemporaryFile("loom-calibrate-link", "err", err);
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(out),
                                                llvm::StringRef(err)};
  std::string rateText = rate.str();
  llvm::StringRef args[] = {*python, "-m", "loom.vcluster", "--name",
                            "calib", "run", "--hosts", "2", "--link",
                            rateText, "--", bench, "--data", "/tmp",
                            "--steps", "1", "--quiet", "--comm-timeout", "600"};
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(*python, args, env, redirects, 1800, 0,
                                     &message);
  auto text = llvm::MemoryBuffer::getFile(out);
  auto errText = llvm::MemoryBuffer::getFile(err);
  llvm::sys::fs::remove(out);
  llvm::sys::fs::remove(err);
  if (rc != 0 || !text) {
    std::string why = errText ? (*errText)->getBuffer().trim().str() : message;
    return error("--vcluster: the link measurement failed (root and iproute2 "
                 "are needed): " + why);
  }
  llvm::SmallVector<llvm::StringRef> lines;
  (*text)->getBuffer().split(lines, '\n');
  for (llvm::StringRef line : lines)
    if (line.starts_with("{"))
      return json::parse(line);
  return error("--vcluster: the benchmark printed no result");
}

/// loom-plan calibrate: this machine as a cluster spec. Each rank is a
/// "GPU" running the CPU backend with --threads threads; its GEMM rate,
/// size-dependent efficiency, streaming bandwidth, per-kernel overhead and
/// elementwise arithmetic rate are measured by loom-calibrate (the
/// runtime's own kernels, an emitted kernel's GELU); the links
/// between hosts are what the vcluster configures (--network).
int calibrate(const char *argv0) {
  std::string self = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&calibrate));
  llvm::SmallString<256> tool(llvm::sys::path::parent_path(self));
  llvm::sys::path::append(tool, "loom-calibrate");
  if (!llvm::sys::fs::can_execute(tool))
    return fail("calibrate: " + tool + " not found (build the loom-calibrate "
                "target)");
  std::optional<double> rate = parseRate(network);
  if (!rate)
    return fail("--network must be a tc rate such as 1gbit or 100mbit, got '" +
                network + "'");
  if (threads < 1 || ranksPerHost < 1 || concurrent < 1)
    return fail("--calibrate-threads, --ranks-per-host and --concurrent must "
                "be >= 1");
  std::string n = std::to_string(threads);
  std::vector<std::string> envStrings =
      environmentWith({"OMP_NUM_THREADS=" + n, "OPENBLAS_NUM_THREADS=" + n});
  std::vector<llvm::StringRef> env(envStrings.begin(), envStrings.end());
  if (!quiet)
    llvm::errs() << "loom-plan: calibrate: timing GEMMs, streaming, small "
                    "kernels and elementwise arithmetic on "
                 << threads << " thread(s), "
                 << concurrent << " rank(s) at once\n";
  // --concurrent copies at once: what one rank gets while the others of
  // this machine compute too.
  std::vector<llvm::SmallString<128>> outs(concurrent);
  std::vector<llvm::sys::ProcessInfo> procs;
  for (llvm::SmallString<128> &out : outs) {
    llvm::sys::fs::createTemporaryFile("loom-calibrate", "json", out);
    std::optional<llvm::StringRef> redirects[] = {
        std::nullopt, llvm::StringRef(out), std::nullopt};
    std::string error;
    procs.push_back(llvm::sys::ExecuteNoWait(tool, {tool.str()}, env, redirects,
                                             0, &error));
    if (procs.back().Pid == llvm::sys::ProcessInfo::InvalidPid)
      return fail("calibrate: cannot run " + tool + ": " + error);
  }
  bool ok = true;
  for (llvm::sys::ProcessInfo &p : procs)
    ok &= llvm::sys::Wait(p, std::nullopt).ReturnCode == 0;
  // Each figure from the slowest copy.
  double stream = 1e300, launch = 0, vector = 1e300;
  std::map<size_t, double> gemmSeconds;
  std::vector<std::pair<double, double>> gemmFlops; // flops, seconds
  const json::Array *shapes = nullptr;
  std::vector<json::Value> parsedAll;
  for (llvm::SmallString<128> &out : outs) {
    auto buffer = llvm::MemoryBuffer::getFile(out);
    llvm::sys::fs::remove(out);
    llvm::Expected<json::Value> parsed =
        buffer ? json::parse((*buffer)->getBuffer())
               : llvm::Expected<json::Value>(llvm::createStringError(
                     llvm::inconvertibleErrorCode(), "no output"));
    if (!ok || !parsed || !parsed->getAsObject()) {
      if (!parsed)
        llvm::consumeError(parsed.takeError());
      return fail("calibrate: loom-calibrate failed");
    }
    parsedAll.push_back(std::move(*parsed));
  }
  for (const json::Value &v : parsedAll) {
    const json::Object *m = v.getAsObject();
    stream = std::min(stream, m->getNumber("stream_bytes_per_s").value_or(0));
    launch = std::max(launch, m->getNumber("small_kernel_s").value_or(0));
    vector = std::min(vector, m->getNumber("vector_units_per_s").value_or(0));
    if (const json::Array *list = m->getArray("gemm")) {
      shapes = list;
      for (size_t i = 0; i < list->size(); ++i)
        gemmSeconds[i] = std::max(
            gemmSeconds[i],
            (*list)[i].getAsObject()->getNumber("seconds").value_or(0));
    }
  }
  // GEMMs: t = (f + f_half) / R + launch, fitted to every measured shape
  // by least squares on the relative error (x = f/t', y = 1/t', t' the
  // time beyond the launch: minimise sum (x/R + y f_half/R - 1)^2).
  double sxx = 0, sxy = 0, syy = 0, sx = 0, sy = 0;
  if (shapes)
    for (size_t i = 0; i < shapes->size(); ++i) {
      const json::Object *o = (*shapes)[i].getAsObject();
      double f = 2.0 * o->getNumber("batch").value_or(1) * *o->getNumber("m") *
                 *o->getNumber("n") * *o->getNumber("k");
      double t = gemmSeconds[i] - launch;
      if (t <= 0)
        continue;
      double x = f / t, y = 1.0 / t;
      sxx += x * x, sxy += x * y, syy += y * y, sx += x, sy += y;
    }
  double det = sxx * syy - sxy * sxy;
  if (det <= 0 || stream <= 0)
    return fail("calibrate: no GEMM or bandwidth measured");
  double a = (sx * syy - sy * sxy) / det, b = (sxx * sy - sxy * sx) / det;
  if (a <= 0)
    return fail("calibrate: the GEMM times do not fit a rate");
  double best = 1.0 / a, half = std::max(b / a, 1.0);
  ClusterSpec spec;
  spec.name = "this-machine";
  spec.description =
      llvm::formatv("measured by loom-plan calibrate: one rank of the CPU "
                    "backend with {0} thread(s) per \"GPU\" ({3} rank(s) "
                    "computing at once), {1} per host, hosts joined by {2}",
                    threads.getValue(), ranksPerHost.getValue(),
                    network.getValue(), concurrent.getValue())
          .str();
  spec.gpu.model = "CPU backend rank (" + n + " thread(s))";
  // Host memory shared by the ranks of a host.
  double memory = static_cast<double>(sysconf(_SC_PHYS_PAGES)) *
                  static_cast<double>(sysconf(_SC_PAGE_SIZE));
  spec.gpu.memoryBytes = static_cast<int64_t>(memory / ranksPerHost);
  for (double &p : spec.gpu.peakFlops)
    p = best;
  spec.gpu.memoryBandwidth = stream;
  spec.gpusPerNode = ranksPerHost;
  spec.intraNode = {"shared memory (MPI)", stream / 2, 2e-6};
  spec.peerToPeer = true;
  spec.network = {"vcluster veth, tc " + network, *rate, networkLatency * 1e-6};
  spec.efficiency.gemm = 1.0;
  spec.efficiency.gemmHalfFlops = std::max(half, 1.0);
  spec.efficiency.memory = 1.0;
  // Elementwise arithmetic against the GEMM rate (the spec's fp32 peak).
  spec.efficiency.vector = vector > 0 ? std::min(1.0, vector / best) : 1.0;
  spec.efficiency.comm = 1.0;
  spec.efficiency.allReduce = 1.0;
  if (measureLinks) {
    // A 16 MiB send and all-reduce give the efficiencies; a 1 KiB send the
    // latency (the time of the message less its bytes at the rate).
    if (!quiet)
      llvm::errs() << "loom-plan: calibrate: measuring the runtime's send and "
                      "all-reduce between two virtual hosts over " << network
                   << "\n";
    llvm::StringRef binDir = llvm::sys::path::parent_path(self);
    llvm::Expected<json::Value> big =
        vclusterCommBench(binDir, network, 16 << 20);
    if (!big)
      return fail(llvm::toString(big.takeError()));
    llvm::Expected<json::Value> small = vclusterCommBench(binDir, network, 1024);
    if (!small)
      return fail(llvm::toString(small.takeError()));
    const json::Object *b = big->getAsObject(), *m1 = small->getAsObject();
    double bytes = b->getNumber("bytes").value_or(0);
    double send = b->getNumber("send_runtime_s").value_or(0);
    double allReduce = b->getNumber("allreduce_runtime_s").value_or(0);
    double tiny = m1->getNumber("send_runtime_s").value_or(0);
    if (bytes <= 0 || send <= 0 || allReduce <= 0 || tiny <= 0)
      return fail("--vcluster: the benchmark's figures are missing");
    spec.efficiency.comm = std::min(1.0, bytes / send / *rate);
    spec.efficiency.allReduce = std::min(1.0, bytes / allReduce / *rate);
    spec.network.latency = std::max(0.0, tiny - 1024.0 / *rate);
  }
  spec.efficiency.launch = launch;
  spec.reservedBytes = 0;
  spec.price = {0.01, "placeholder written by loom-plan calibrate: set "
                      "price.usd_per_gpu_hour",
                "n/a"};
  spec.sources = {"loom-plan calibrate (loom-calibrate: the runtime's gemm, "
                  "an elementwise loop of 64 MiB and of 256 floats)"};
  if (measureLinks)
    spec.sources.push_back("loom-plan calibrate --vcluster: the runtime's "
                           "send and all-reduce (loom-test-comm-bench) between "
                           "two virtual hosts over " + network.getValue());
  std::string text = printClusterSpec(spec);
  if (!planOut.empty()) {
    if (std::string e = ::loom::writeFileAtomically(planOut, text); !e.empty())
      return fail(e);
    if (!quiet)
      llvm::errs() << "loom-plan: calibrate: wrote " << planOut << "\n";
  } else {
    llvm::outs() << text;
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllPasses();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "loom-plan: search training plans and compare clusters\n\n"
      "  loom-plan model.mlir --cluster rtx3090-pcie --gpus 32 --global-batch 512\n"
      "  loom-plan model.mlir --cluster dgx-a100 --gpus 64 --global-batch 512 "
      "--mesh dp=8,tp=8,pp=1\n"
      "  loom-plan model.mlir --compare rtx4090 a100-pcie h100-sxm --gpus 64 "
      "--global-batch 512 --plot cmp.svg\n"
      "  loom-plan calibrate --network 1gbit -o here.json   # this machine as a spec\n\n"
      "Predictions come from the cost model (roofline kernels, alpha-beta\n"
      "collectives) and a discrete-event play of the pipeline schedule; see\n"
      "docs/planner.md for what is modelled and how it was validated.\n"
      "The best plan written with -o compiles with loomc --plan.\n");

  if (listClusters) {
    for (const std::string &name : bundledClusterNames()) {
      llvm::Expected<ClusterSpec> spec = loadClusterSpec(name);
      if (!spec)
        return fail(llvm::toString(spec.takeError()));
      llvm::outs() << llvm::formatv("{0,-16} {1,3} x {2} per node, {3} GiB, "
                                    "${4}/GPU-hour\n",
                                    name, spec->gpusPerNode, spec->gpu.model,
                                    spec->gpu.memoryBytes / kGiB,
                                    spec->price.usdPerGpuHour);
    }
    return 0;
  }
  if (!positionals.empty() && positionals.front() == "calibrate")
    return calibrate(argv[0]);
  if (positionals.empty())
    return fail("no model: loom-plan MODEL --cluster SPEC --gpus N "
                "--global-batch G (--help)");
  std::string modelFile = positionals.front();
  std::vector<std::string> compare(positionals.begin() + 1, positionals.end());
  if (!compareMode && !compare.empty())
    return fail("more than one model: give one model (and --compare SPEC ... "
                "to compare clusters)");
  if (compareMode && compare.empty())
    return fail("--compare needs cluster specs: MODEL --compare SPEC SPEC ...");
  if (!compareMode && cluster.empty())
    return fail("give --cluster SPEC (or --compare SPEC ...)");
  if (compareMode && !cluster.empty())
    return fail("give either --cluster or --compare, not both");
  if (globalBatch < 1)
    return fail("--global-batch G: samples per step (an integer >= 1)");

  SearchOptions options;
  options.gpus = gpus;
  options.globalBatch = globalBatch;
  options.maxTensorParallel = maxTp;
  options.ignoreMemory = ignoreMemory;
  std::optional<OptimizerKind> opt = symbolizeOptimizerKind(optimizer);
  if (!opt)
    return fail("--optimizer must be sgd, adam or adamw, got '" + optimizer + "'");
  options.optimizer = *opt;
  if (!mesh.empty()) {
    ::loom::Mesh m;
    if (std::string e = ::loom::parseMesh(mesh, m); !e.empty())
      return fail("--mesh: " + e);
    if (gpus > 0 && m.numRanks() != gpus)
      return fail(llvm::formatv("--mesh {0} has {1} ranks but --gpus is {2}",
                                mesh, m.numRanks(), gpus.getValue()));
    options.gpus = m.numRanks();
    options.mesh = m;
  }
  if (options.gpus < 1 && budget <= 0)
    return fail("--gpus N: the GPUs to plan for (an integer >= 1)");
  if (microbatches.getNumOccurrences()) {
    if (microbatches < 1)
      return fail("--microbatches must be >= 1");
    options.microbatches = microbatches;
  }
  if (!microBatchSizes.empty())
    for (llvm::StringRef part : llvm::split(microBatchSizes, ',')) {
      int64_t v;
      if (part.trim().getAsInteger(10, v) || v < 1)
        return fail("--micro-batch-sizes must be positive integers, got '" +
                    part + "'");
      options.microBatchSizes.push_back(v);
    }
  if (!recompute.empty()) {
    options.recompute = parseRecompute(recompute);
    if (!options.recompute)
      return fail("--recompute must be none, full, selective or comm-free, "
                  "got '" + recompute + "'");
  }
  if (!swapOpt.empty()) {
    if (swapOpt != "none" && swapOpt != "host")
      return fail("--swap must be none or host, got '" + swapOpt + "'");
    options.swap = swapOpt == "none" ? SwapPolicy::none : SwapPolicy::host;
  }
  std::optional<Precision> precision = symbolizePrecision(precisionOpt);
  if (!precision)
    return fail("--precision must be f32 or bf16, got '" + precisionOpt +
                "'");
  if (!schedule.empty()) {
    options.schedule = symbolizePipelineScheduleKind(schedule);
    if (!options.schedule)
      return fail("--schedule must be 1f1b or gpipe, got '" + schedule + "'");
  }
  if (overlapSplit.getNumOccurrences()) {
    if (overlapSplit < 1)
      return fail("--overlap-split must be >= 1");
    options.overlapSplit = overlapSplit;
  }

  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };
  auto progress = [&](llvm::StringRef line) {
    if (!quiet)
      llvm::errs() << llvm::format("loom-plan: [%6.1f s] ", elapsed()) << line
                   << "\n";
  };
  options.progress = progress;

  MLIRContext context(registry);
  context.disableMultithreading();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  ModelImportOptions importOptions;
  OwningOpRef<ModuleOp> module =
      importModel(modelFile, importOptions, &context, sourceMgr, "loom-plan");
  if (!module || failed(verify(*module)))
    return fail("could not load '" + modelFile + "'");
  func::FuncOp entry = findEntryFunction(*module);
  if (!entry)
    return fail("the model has no public function");
  progress("loaded " + modelFile);
  ProfileCache profiles(*module, entry.getName().str(), *precision,
                        options.optimizer);

  // --compare: the best plan on each cluster.
  if (compareMode) {
    std::vector<std::pair<std::string, Estimate>> rows;
    json::Array out;
    for (const std::string &name : compare) {
      llvm::Expected<ClusterSpec> spec = loadClusterSpec(name);
      if (!spec)
        return fail(llvm::toString(spec.takeError()));
      SearchOptions o = options;
      if (budget > 0) {
        // The most GPUs the budget buys, whole nodes when it buys one.
        int64_t n = static_cast<int64_t>(budget / spec->price.usdPerGpuHour);
        if (n >= spec->gpusPerNode)
          n -= n % spec->gpusPerNode;
        if (n < 1)
          return fail(llvm::formatv("--budget-usd-per-hour {0} buys no GPU "
                                    "of '{1}' (${2} per GPU-hour)",
                                    budget.getValue(), spec->name,
                                    spec->price.usdPerGpuHour));
        o.gpus = n;
      }
      std::string error;
      SearchResult r = searchPlans(profiles, *spec, o, error);
      if (!error.empty())
        return fail(spec->name + ": " + error);
      if (r.ranked.empty()) {
        progress(spec->name + ": no plan fits");
        continue;
      }
      rows.emplace_back(spec->name + " x" + std::to_string(o.gpus),
                        r.ranked.front());
      json::Object row = std::move(
          *estimateJSON(r.ranked.front(), *spec, modelFile, options.optimizer)
               .getAsObject());
      row["cluster"] = spec->name;
      row["gpus"] = o.gpus;
      double peak = CostModel(*spec, profiles.get(1, error)->format).peak();
      row["rcc_tflops_per_usd_hour"] =
          peak / 1e12 / spec->price.usdPerGpuHour;
      row["train_hours"] = trainTokens / r.ranked.front().tokensPerSecond / 3600;
      row["train_usd"] = trainTokens / r.ranked.front().tokensPerUsd;
      out.push_back(std::move(row));
    }
    if (jsonOut) {
      llvm::outs() << llvm::formatv("{0:2}", json::Value(std::move(out)))
                   << "\n";
    } else {
      llvm::outs() << llvm::formatv(
          "{0,-22} {1,-40} {2,11} {3,12} {4,8} {5,10} {6,11} {7,9}\n",
          "cluster", "best plan", "tokens/s", "tokens/USD", "USD/h",
          "train h", "train USD", "RCC");
      for (size_t i = 0; i < rows.size(); ++i) {
        const json::Object *o = out[i].getAsObject();
        const Estimate &e = rows[i].second;
        llvm::outs() << llvm::formatv(
            "{0,-22} {1,-40} {2,11:f0} {3,12:f0} {4,8:f2} {5,10:f1} "
            "{6,11:f0} {7,9:f1}\n",
            rows[i].first, e.candidate.describe(), e.tokensPerSecond,
            e.tokensPerUsd, e.usdPerHour, *o->getNumber("train_hours"),
            *o->getNumber("train_usd"),
            *o->getNumber("rcc_tflops_per_usd_hour"));
      }
      llvm::outs() << llvm::formatv("(train h / train USD: {0:e} tokens; RCC: "
                                    "peak TFLOPS per USD per GPU-hour)\n",
                                    trainTokens.getValue());
    }
    if (!plotOut.empty())
      if (std::string e = ::loom::writeFileAtomically(plotOut, compareSvg(rows));
          !e.empty())
        return fail(e);
    return rows.empty() ? fail("no cluster has a plan that fits") : 0;
  }

  llvm::Expected<ClusterSpec> spec = loadClusterSpec(cluster);
  if (!spec)
    return fail(llvm::toString(spec.takeError()));
  std::string error;
  SearchResult result = searchPlans(profiles, *spec, options, error);
  if (!error.empty())
    return fail(error);
  progress(llvm::formatv("{0} plans priced, {1} fit", result.evaluated,
                         result.ranked.size())
               .str());
  if (result.ranked.empty()) {
    std::string why = closestRejection(result);
    // The closest feasible alternative: more GPUs of the same kind.
    std::string more;
    if (!options.mesh)
      for (int64_t n = options.gpus * 2;
           n <= options.gpus * 64 &&
           (spec->maxNodes == 0 || n <= spec->maxNodes * spec->gpusPerNode);
           n *= 2) {
        SearchOptions o = options;
        o.gpus = n;
        o.progress = nullptr;
        std::string e;
        SearchResult r = searchPlans(profiles, *spec, o, e);
        if (e.empty() && !r.ranked.empty() && options.globalBatch > 0) {
          more = llvm::formatv("; it fits on {0} GPUs ({1})", n,
                               r.ranked.front().candidate.describe());
          break;
        }
      }
    return fail(llvm::formatv("the model fits on no plan with {0} GPUs of '{1}' "
                              "({2} MiB each); the closest: {3}{4}",
                              options.gpus, spec->name,
                              llvm::format("%.0f", spec->gpu.memoryBytes / 1048576.0),
                              why, more.empty() ? "; try more GPUs or a smaller "
                                                  "micro-batch"
                                                : more));
  }

  // The best plan again, with its events, for the trace.
  const Estimate &best = result.ranked.front();
  std::string e2;
  Estimate traced = evaluatePlan(
      *profiles.get(best.candidate.mesh.tp, e2), *profiles.get(1, e2), *spec,
      profiles.phaseFactors(*spec), best.candidate, options, /*record=*/true);
  if (!traceOut.empty()) {
    std::vector<int64_t> ranks;
    for (int64_t k = 0; k < best.candidate.mesh.pp; ++k)
      ranks.push_back(best.candidate.mesh.rank({0, k, 0}));
    if (std::string e = ::loom::writeFileAtomically(
            traceOut, writeTrace(traced.sim, ranks,
                                 best.candidate.describe() + " on " + spec->name));
        !e.empty())
      return fail(e);
  }
  if (!planOut.empty()) {
    Plan plan;
    plan.model = modelFile;
    plan.options = trainingOptions(best, options.optimizer);
    if (std::string e = ::loom::writeFileAtomically(planOut, printPlan(plan));
        !e.empty())
      return fail(e);
  }

  // --check-memory: the memory plan of the best plan, per stage;
  // --check-time: the play of its compiled step. One compile for both.
  std::vector<int64_t> planned;
  std::optional<double> played, playedExposed;
  if (checkMemory || checkTime) {
    progress("compiling the best plan");
    std::string e;
    OwningOpRef<ModuleOp> compiled;
    FailureOr<std::vector<int64_t>> peaks = compiledFigures(
        *module, trainingOptions(best, options.optimizer),
        "loomrt.device_peak_bytes", e, &compiled);
    if (failed(peaks))
      return fail((checkMemory ? "--check-memory: " : "--check-time: ") + e);
    if (checkMemory)
      planned = std::move(*peaks);
    if (checkTime) {
      progress("playing the compiled step");
      FailureOr<SimResult> play =
          playProgram(*compiled, *spec, /*recordEvents=*/false, e);
      if (failed(play))
        return fail("--check-time: " + e);
      played = play->stepTime;
      playedExposed = play->exposedComm;
    }
  }

  if (jsonOut) {
    json::Array candidates;
    for (size_t i = 0; i < std::min<size_t>(result.ranked.size(), top); ++i)
      candidates.push_back(
          estimateJSON(result.ranked[i], *spec, modelFile, options.optimizer));
    json::Object rejected;
    for (const auto &[reason, rej] : result.rejected)
      rejected[reason] = json::Object{
          {"count", rej.count},
          {"closest", rej.closest.rejected.empty()
                          ? json::Value(nullptr)
                          : json::Value(rej.closest.candidate.describe() +
                                        ": " + rej.closest.rejected)}};
    json::Object root = std::move(*estimateJSON(best, *spec, modelFile,
                                                options.optimizer)
                                       .getAsObject());
    root["cluster"] = spec->name;
    root["gpus"] = options.gpus;
    root["global_batch"] = options.globalBatch;
    root["plans_priced"] = result.evaluated;
    root["candidates"] = std::move(candidates);
    root["rejected"] = std::move(rejected);
    root["search_seconds"] = elapsed();
    if (checkMemory) {
      json::Array peaks;
      for (int64_t bytes : planned)
        peaks.push_back(bytes + spec->reservedBytes);
      root["memory_plan_device_bytes"] = std::move(peaks);
    }
    if (played) {
      root["played_step_time_s"] = *played;
      root["played_exposed_comm_s"] = *playedExposed;
    }
    llvm::outs() << llvm::formatv("{0:2}", json::Value(std::move(root)))
                 << "\n";
  } else {
    llvm::outs() << llvm::formatv("{0}: {1} GPUs ({2} per node), global batch "
                                  "{3}, ${4:f2}/hour\n",
                                  spec->name, options.gpus, spec->gpusPerNode,
                                  options.globalBatch, best.usdPerHour);
    printTable(result, *spec);
    // Both with the spec's reserve, as memory per device is.
    for (auto [k, bytes] : llvm::enumerate(planned))
      llvm::outs() << llvm::formatv(
          "best plan, stage {0}: memory plan {1:f2} GiB, predicted {2:f2} "
          "GiB\n",
          k, (bytes + spec->reservedBytes) / kGiB,
          k < best.stages.size() ? best.stages[k].deviceBytes / kGiB : 0.0);
    if (played)
      llvm::outs() << llvm::formatv(
          "best plan: compiled step played {0:f3} ms, predicted {1:f3} ms; "
          "exposed communication played {2:f3} ms, predicted {3:f3} ms\n",
          *played * 1e3, best.stepTime * 1e3, *playedExposed * 1e3,
          best.sim.exposedComm * 1e3);
  }
  return 0;
}

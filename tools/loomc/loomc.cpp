//===- loomc.cpp - The Loom compiler driver -------------------------------===//
//
// Model in, training program out. loomc is I/O around lib/Pipelines: it
// reads the model and the flags (over --plan), builds the training
// pipeline from the typed TrainingOptions (the same pipeline loom-opt's
// --loom-training-pipeline builds), runs it, and writes OUTDIR: step.cpp,
// the weights (per tensor-parallel rank too), memory.json, plan.json,
// build.sh and train. `-v` prints the pipeline and its timings.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/LoomToLoomRT/Passes.h"
#include "loom/Conversion/StableHLOToLoom/Passes.h"
#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/LoomInterfaces.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"
#include "loom/Dialect/LoomRT/IR/LoomRTDialect.h"
#include "loom/Dialect/LoomRT/Transforms/Passes.h"
#include "loom/Import/Model.h"
#include "loom/InitAllDialects.h"
#include "loom/InitAllPasses.h"
#include "loom/Import/StableHLO.h"
#include "loom/Pipelines/Plan.h"
#include "loom/Pipelines/TrainingPipeline.h"
#include "loom/Pipelines/WeightSlicing.h"
#include "loom/Planner/AutoSwap.h"
#include "loom/Planner/CostModel.h"
#include "loom/Planner/ProgramPlay.h"
#include "loom/Planner/Search.h"
#include "llvm/Support/FormatVariadic.h"
#include "loom/Support/AtomicFile.h"
#include "loom/Support/ByteSize.h"
#include "loom/Target/Cpp/BuildCommand.h"
#include "loom/Target/Cpp/EmitCpp.h"
#include "loom/Target/Cuda/BuildCommand.h"
#include "loom/Target/Cuda/EmitCuda.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/Extensions/AllExtensions.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"

#include <chrono>

using namespace mlir;
using mlir::loom::TrainingOptions;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("loomc options");

cl::opt<std::string> modelFile(
    cl::Positional,
    cl::desc("<model.onnx|model.mlir> (default: the model --plan FILE names)"),
    cl::cat(category));
cl::opt<std::string> outDir("o", cl::desc("Output directory"), cl::Required,
                            cl::value_desc("dir"), cl::cat(category));
cl::opt<std::string> lossName(
    "loss", cl::desc("The result that is the loss (loom.name); default: the "
                     "model's only result"),
    cl::value_desc("name"), cl::cat(category));
cl::list<std::string> trainable(
    "trainable", cl::desc("ONNX initializers to train (names or regexes, "
                          "comma list); default: every float initializer"),
    cl::value_desc("names"), cl::CommaSeparated, cl::cat(category));
cl::list<std::string> frozen(
    "frozen", cl::desc("ONNX initializers not to train (names or regexes)"),
    cl::value_desc("names"), cl::CommaSeparated, cl::cat(category));
cl::opt<std::string> weightsFile(
    "weights", cl::desc(".mlir input: the initial weights (safetensors) to "
                        "copy into OUTDIR"),
    cl::value_desc("file"), cl::cat(category));
cl::opt<std::string> optimizer("optimizer",
                               cl::desc("sgd, adam or adamw (default sgd)"),
                               cl::init("sgd"), cl::cat(category));
cl::opt<double> lr("lr", cl::desc("Learning rate (default 0.01)"), cl::init(0.01),
                   cl::cat(category));
cl::opt<double> momentum("momentum", cl::desc("SGD momentum"), cl::init(0.0),
                         cl::cat(category));
cl::opt<bool> nesterov("nesterov", cl::desc("SGD Nesterov momentum"),
                       cl::cat(category));
cl::opt<double> weightDecay(
    "weight-decay", cl::desc("Weight decay (default: 0, AdamW 0.01)"),
    cl::init(-1.0), cl::cat(category));
cl::opt<std::string> betas("betas", cl::desc("Adam betas 'b1,b2' (default "
                                             "0.9,0.999)"),
                           cl::init("0.9,0.999"), cl::cat(category));
cl::opt<double> eps("eps", cl::desc("Adam epsilon"), cl::init(1e-8),
                    cl::cat(category));
cl::opt<double> clipGradNorm(
    "clip-grad-norm", cl::desc("Clip the global gradient norm (0: off)"),
    cl::init(0.0), cl::cat(category));
cl::opt<std::string> lrSchedule("lr-schedule",
                                cl::desc("Learning-rate schedule: constant, "
                                         "warmup or cosine"),
                                cl::init("constant"), cl::cat(category));
cl::opt<int64_t> warmupSteps("warmup-steps", cl::desc("Warm-up steps"),
                             cl::init(0), cl::cat(category));
cl::opt<int64_t> totalSteps("total-steps",
                            cl::desc("Steps of the cosine schedule"),
                            cl::init(0), cl::cat(category));
cl::opt<double> minLr("min-lr", cl::desc("Final learning rate (cosine)"),
                      cl::init(0.0), cl::cat(category));
cl::opt<std::string> mesh("mesh", cl::desc("Device mesh dp=D,tp=T,pp=P (default 1,1,1): "
                                           "D data-parallel replicas of P pipeline "
                                           "stages of T tensor-parallel ranks; "
                                           "mpirun -np D*T*P"),
                          cl::init("dp=1,tp=1,pp=1"), cl::cat(category));
cl::opt<int64_t> microbatches(
    "microbatches",
    cl::desc("Micro-batches per step (default 1): each step runs M "
             "micro-batches of the model's batch size per data-parallel "
             "rank, pipelined over the stages (gradient accumulation when "
             "pp=1)"),
    cl::init(1), cl::cat(category));
cl::opt<int64_t> microBatch(
    "micro-batch",
    cl::desc("Rows per micro-batch (default: the model's batch). An ONNX "
             "model exported with a dynamic batch axis is imported at this "
             "size, so one export compiles for any size; a model whose "
             "batch is fixed must have this one"),
    cl::value_desc("rows"), cl::init(0), cl::cat(category));
cl::list<std::string> dimSizes(
    "dim",
    cl::desc("Bind a shape-polymorphic StableHLO model's dimension variable "
             "(JAX's name, as in jax.export.symbolic_shape('b, s')) to a "
             "size: NAME=N (repeat or comma list; --micro-batch binds the "
             "other dynamic dimensions 0)"),
    cl::value_desc("NAME=N"), cl::CommaSeparated, cl::cat(category));
cl::opt<int64_t> stepBatch(
    "batch",
    cl::desc("Rows per step and data-parallel rank, checked against the "
             "model: M micro-batches of the model's batch size (default: "
             "that product)"),
    cl::init(0), cl::cat(category));
cl::opt<std::string> pipelineSchedule(
    "schedule", cl::desc("Pipeline schedule: 1f1b (default) or gpipe"),
    cl::init("1f1b"), cl::cat(category));
cl::list<std::string> stageBoundaries(
    "stage-boundaries",
    cl::desc("Ops that must begin a pipeline stage: sequence positions or "
             "ONNX node names (see loom-pipeline-partition)"),
    cl::value_desc("ops"), cl::CommaSeparated, cl::cat(category));
cl::opt<int64_t> memoryBudget(
    "memory-budget",
    cl::desc("Bytes of parameters and activations allowed per pipeline stage "
             "(0: no limit)"),
    cl::init(0), cl::cat(category));
cl::opt<std::string> deviceMemory(
    "device-memory",
    cl::desc("Device memory per rank, e.g. 24GiB (suffixes B, KiB, MiB, "
             "GiB, TiB; none: bytes; 0: unbounded): a pipeline stage whose "
             "planned device peak (memory.json device_peak_bytes) exceeds it "
             "is a compile error naming the stage and what would fit it"),
    cl::value_desc("bytes"), cl::cat(category));
cl::opt<std::string> swapPolicy(
    "swap",
    cl::desc("Activation offload to fit --device-memory: none (default), "
             "host (loom-swap: activations of a stage over the budget go to "
             "a host pool between their forward and backward uses; CPU and "
             "CUDA targets), peer (to a neighbouring pipeline stage with "
             "room under the budget, over the pipeline link: Mbapp's "
             "balance across stages), balance (to the next stage, which "
             "passes its own on when it has no room, as peer; what no stage "
             "further on can hold, to the host pool) or auto (per stage over "
             "the budget, "
             "swap, recompute, or recompute part of the excess and swap "
             "the rest, whichever --cluster prices cheapest: the copies' "
             "time not hidden behind compute against the recomputed "
             "flops; under pipelines, that program against peer's and "
             "balance's, all played on --cluster). With --cluster, each host "
             "copy hides behind as many ops as the spec says it takes"),
    cl::init("none"), cl::cat(category));
cl::opt<std::string> precision(
    "precision",
    cl::desc("Arithmetic: f32 (default) or bf16 (loom-mixed-precision: "
             "matrix products, forward and backward, on bf16 operands with "
             "f32 accumulation; parameters, optimizer state, norms, softmax, "
             "the loss and collectives stay f32)"),
    cl::init("f32"), cl::cat(category));
cl::opt<std::string> excessPrecision(
    "excess-precision",
    cl::desc("With --precision bf16: a fused loop keeps the values it does "
             "not store in f32 and rounds what it stores once "
             "(loom-excess-precision, as XLA and torch.compile do): on "
             "(default), off (every op rounds to bf16, as PyTorch's eager "
             "autocast does), auto (= on)"),
    cl::value_desc("on|off|auto"), cl::init("on"), cl::cat(category));
cl::opt<std::string> weightShadows(
    "weight-shadows",
    cl::desc("With --precision bf16: each weight the products read has a "
             "bf16 copy that the optimizer's update writes, so no step "
             "starts with a loop converting the weights "
             "(loom-weight-shadows; the same arithmetic): on (default), "
             "off, auto (= on)"),
    cl::value_desc("on|off|auto"), cl::init("on"), cl::cat(category));
cl::opt<std::string> commSchedule(
    "comm-schedule",
    cl::desc("TriRace: post each pipeline send and each all-reduce right "
             "after its data is computed (a tensor-parallel input "
             "gradient's all-reduce then overlaps the weight gradient) and "
             "each receive as soon as the previous one from that peer was "
             "consumed (loom-comm-schedule): on (default), off (the "
             "schedule's order, for comparison), auto (= on)"),
    cl::value_desc("on|off|auto"), cl::init("on"), cl::cat(category));
cl::opt<std::string> sparseEmbeddingGrad(
    "sparse-embedding-grad",
    cl::desc("Under dp, exchange embedding gradients by rows (TriRace): off "
             "(default: every gradient in a dense all-reduce bucket), on "
             "(every embedding table whose gradient only its lookups "
             "touch), auto (those where the rows take fewer bytes than the "
             "table); the update is unchanged"),
    cl::value_desc("off|on|auto"), cl::init("off"), cl::cat(category));
cl::opt<int64_t> bucketBytes(
    "bucket-bytes",
    cl::desc("Largest data-parallel gradient bucket, bytes (0: per gradient)"),
    cl::init(25 * 1024 * 1024), cl::cat(category));
cl::opt<int64_t> pipelineWeights(
    "pipeline-weights",
    cl::desc("Weight versions: 1 (default), or 2 for PipeDream-2BW's rule "
             "W(t+1) = W(t) - lr*grad f(W(t-1)): each step's data-parallel "
             "gradient all-reduce overlaps the next step's forward and "
             "backward (needs dp > 1, SGD without weight decay, a constant "
             "learning rate)"),
    cl::value_desc("1|2"), cl::init(1), cl::cat(category));
cl::opt<int64_t> overlapSplit(
    "overlap-split",
    cl::desc("Oases: split each micro-batch into K sub-batches interleaved "
             "so that one's tensor-parallel all-reduces overlap the next "
             "one's compute (default 1: off; needs tp > 1; K must divide "
             "the micro-batch, else the sequence is split where no op "
             "between two collectives mixes its positions)"),
    cl::value_desc("K"), cl::init(1), cl::cat(category));
cl::opt<int64_t> maxInflightCollectives(
    "max-inflight-collectives",
    cl::desc("With --overlap-split: all-reduces in flight per group "
             "(default 1)"),
    cl::value_desc("N"), cl::init(1), cl::cat(category));
cl::opt<std::string> recompute(
    "recompute",
    cl::desc("Activations the backward pass recomputes instead of keeping "
             "(loom-recompute): none (default), full (keep layer inputs, "
             "replay layers with their collectives), selective (the "
             "attention core), comm-free (everything up to communication "
             "results: no collective is replayed), auto (per stage, the "
             "cheapest of those that fits --device-memory)"),
    cl::init("none"), cl::cat(category));
cl::opt<std::string> planFile(
    "plan",
    cl::desc("Read the mesh, micro-batches, schedule and stage boundaries "
             "from a plan (JSON, as loomc writes OUTDIR/plan.json and "
             "loom-plan -o writes); flags given on the command line override "
             "it. 'auto': let the planner choose them for --cluster, --gpus "
             "and --global-batch (what the flags fix is not searched)"),
    cl::value_desc("plan.json|auto"), cl::cat(category));
cl::opt<std::string> clusterSpec(
    "cluster",
    cl::desc("--plan auto, --swap and --play: the cluster spec (a "
             "bundled "
             "name, see loom-plan --list-clusters, or a JSON file; loom-plan "
             "calibrate writes this machine's)"),
    cl::value_desc("SPEC"), cl::cat(category));
cl::opt<int64_t> planGpus("gpus", cl::desc("--plan auto: GPUs to plan for"),
                          cl::value_desc("N"), cl::init(0), cl::cat(category));
cl::opt<int64_t> globalBatch(
    "global-batch",
    cl::desc("--plan auto: samples per step over all data-parallel replicas"),
    cl::value_desc("G"), cl::init(0), cl::cat(category));
cl::opt<std::string> target(
    "target",
    cl::desc("cpu (C++, OUTDIR/step.cpp) or cuda (CUDA, OUTDIR/step.cu: "
             "nvcc builds train for a GPU)"),
    cl::init("cpu"), cl::cat(category));
cl::opt<bool> cudaEmulate(
    "cuda-emulate",
    cl::desc("--target cuda: build train from step.cu as host code (CUDA "
             "emulated on the CPU: loom/Runtime/CudaEmulation.h), not with "
             "nvcc"),
    cl::cat(category));
cl::opt<bool> requireSharded(
    "require-sharded",
    cl::desc("With --mesh tp=T: a parameter of at least 1 % of the model "
             "that tensor parallelism leaves replicated is an error (by "
             "default a warning naming it and the op that stopped it; "
             "OUTDIR/sharding.json lists every parameter's cut)"),
    cl::cat(category));
cl::opt<bool> playOnCluster(
    "play",
    cl::desc("Play the compiled step on --cluster SPEC (every op of each "
             "stage's program timed by the cost model, transfers on their "
             "channels, waits where the program waits): prints the "
             "predicted step time and writes OUTDIR/play.json and "
             "OUTDIR/play-trace.json (the timeline, as train --trace)"),
    cl::cat(category));
cl::opt<bool> rollRepeats(
    "roll-repeats",
    cl::desc("Print each run of repeats of the same ops on other buffers "
             "(the micro-batches of a pipeline schedule or of gradient "
             "accumulation) as one loop over a table of offsets, so the "
             "source grows with the distinct runs, not with micro-batches "
             "(default on; =false prints every op)"),
    cl::init(true), cl::cat(category));
cl::opt<bool> emitOnly("emit-only",
                       cl::desc("Write the sources, weights and reports; do "
                                "not build OUTDIR/train"),
                       cl::cat(category));
cl::opt<bool> verbose("v", cl::desc("Print the pipeline and its timings"),
                      cl::cat(category));
cl::opt<std::string> cxx("cxx",
                         cl::desc("C++ compiler for OUTDIR/train (default: "
                                  "mpicxx)"),
                         cl::init("mpicxx"), cl::cat(category));

int fail(const Twine &message) {
  llvm::errs() << "loomc: error: " << message << "\n";
  return 1;
}

/// Sets `field` from an enumerated flag given on the command line (its
/// spelling is the enum's, `symbolize`); an unknown value is an error
/// listing `spellings`. Returns false after reporting it.
template <typename E>
bool takeEnum(const cl::opt<std::string> &flag, E &field,
              std::optional<E> (*symbolize)(llvm::StringRef),
              llvm::StringRef spellings, llvm::StringRef hint = "") {
  if (flag.getNumOccurrences() == 0)
    return true;
  std::optional<E> kind = symbolize(flag.getValue());
  if (!kind) {
    fail("--" + flag.ArgStr + " must be " + spellings + ", got '" +
         flag.getValue() + "'" + hint);
    return false;
  }
  field = *kind;
  return true;
}

/// One line on what tensor parallelism cut (from loom-report-sharding's
/// report); the warnings about what it did not are the pass's.
void printShardingSummary(const llvm::json::Value &report) {
  const llvm::json::Object *object = report.getAsObject();
  if (!object)
    return;
  int64_t tp = object->getInteger("tp").value_or(1);
  int64_t elements = object->getInteger("elements").value_or(0);
  int64_t perRank = object->getInteger("per_rank_elements").value_or(0);
  double fraction = object->getNumber("sharded_fraction").value_or(0);
  int64_t params = 0, cut = 0;
  if (const llvm::json::Array *list = object->getArray("params"))
    for (const llvm::json::Value &entry : *list) {
      ++params;
      if (const llvm::json::Object *p = entry.getAsObject())
        cut += p->getObject("sharded") != nullptr;
    }
  llvm::errs() << llvm::format(
      "loomc: tp=%lld cuts %lld of %lld parameters, %.1f %% of %lld "
      "elements (each rank holds %lld); OUTDIR/sharding.json lists them\n",
      static_cast<long long>(tp), static_cast<long long>(cut),
      static_cast<long long>(params), 100.0 * fraction,
      static_cast<long long>(elements), static_cast<long long>(perRank));
}

/// TrainingOptions from the defaults, then --plan, then the flags given on
/// the command line (which override the plan).
bool planFromFile() { return !planFile.empty() && planFile != "auto"; }

/// The training options of the command line over --plan FILE's; `model`
/// gets the model the plan names (empty without one).
FailureOr<TrainingOptions> buildOptions(std::string &model) {
  TrainingOptions o;
  if (planFromFile()) {
    std::string error;
    std::unique_ptr<llvm::MemoryBuffer> input = openInputFile(planFile, &error);
    if (!input)
      return fail("--plan: " + error), failure();
    mlir::loom::Plan plan;
    plan.options = o;
    if (std::string e = mlir::loom::parsePlan(input->getBuffer(), plan);
        !e.empty())
      return fail("--plan '" + planFile + "': " + e), failure();
    o = plan.options;
    model = plan.model;
  }
  auto given = [](const cl::Option &opt) { return opt.getNumOccurrences() > 0; };
  // A flag given on the command line overrides the plan.
  auto take = [&](auto &flag, auto &field) {
    if (given(flag))
      field = flag;
  };
  if (given(mesh) || !planFromFile())
    if (std::string e = ::loom::parseMesh(mesh, o.mesh); !e.empty())
      return fail("--mesh: " + e), failure();
  take(microbatches, o.microbatches);
  take(microBatch, o.microBatch);
  take(overlapSplit, o.overlapSplit);
  take(pipelineWeights, o.pipelineWeights);
  take(maxInflightCollectives, o.maxInflightCollectives);
  if (!takeEnum(pipelineSchedule, o.schedule,
                mlir::loom::symbolizePipelineScheduleKind, "1f1b or gpipe",
                " (the learning-rate schedule is --lr-schedule)"))
    return failure();
  if (given(stageBoundaries))
    o.stageBoundaries.assign(stageBoundaries.begin(), stageBoundaries.end());
  take(memoryBudget, o.memoryBudget);
  if (!takeEnum(recompute, o.recompute, mlir::loom::symbolizeRecomputePolicy,
                "none, full, selective, comm-free or auto"))
    return failure();
  take(bucketBytes, o.bucketBytes);
  take(requireSharded, o.requireSharded);
  if (given(deviceMemory))
    if (std::string e = ::loom::parseByteSize(deviceMemory, o.deviceMemory);
        !e.empty())
      return fail("--device-memory: " + e), failure();
  if (!takeEnum(swapPolicy, o.swap, mlir::loom::symbolizeSwapPolicy,
                "none, host, peer or auto") ||
      !takeEnum(precision, o.precision, mlir::loom::symbolizePrecision,
                "f32 or bf16") ||
      !takeEnum(excessPrecision, o.excessPrecision,
                mlir::loom::symbolizeSwitch, "on, off or auto") ||
      !takeEnum(weightShadows, o.weightShadows, mlir::loom::symbolizeSwitch,
                "on, off or auto") ||
      !takeEnum(commSchedule, o.commSchedule, mlir::loom::symbolizeSwitch,
                "on, off or auto") ||
      !takeEnum(sparseEmbeddingGrad, o.sparseEmbeddingGrad,
                mlir::loom::symbolizeSwitch, "off, on or auto"))
    return failure();
  if (given(target) || !planFromFile()) {
    std::optional<mlir::loom::Target> kind = mlir::loom::symbolizeTarget(target);
    if (!kind)
      return fail("--target must be cpu or cuda, got '" + target + "'"),
             failure();
    o.target = *kind;
  }
  o.loss = lossName;

  mlir::loom::OptimizerOptions &opt = o.optimizer;
  if (given(optimizer) || !planFromFile()) {
    std::optional<mlir::loom::OptimizerKind> kind =
        mlir::loom::symbolizeOptimizerKind(optimizer);
    if (!kind)
      return fail("--optimizer must be sgd, adam or adamw, got '" + optimizer +
                  "'"),
             failure();
    opt.kind = *kind;
  }
  if (!planFromFile())
    opt.lr = lr;
  take(lr, opt.lr);
  take(momentum, opt.momentum);
  take(nesterov, opt.nesterov);
  take(weightDecay, opt.weightDecay);
  if (given(betas)) {
    auto [b1, b2] = StringRef(betas).split(',');
    if (b1.trim().getAsDouble(opt.beta1) || b2.trim().getAsDouble(opt.beta2))
      return fail("--betas must be 'b1,b2', got '" + betas + "'"), failure();
  }
  take(eps, opt.eps);
  take(clipGradNorm, opt.clipGradNorm);
  if (given(lrSchedule) || !planFromFile()) {
    std::optional<mlir::loom::LrSchedule> kind =
        mlir::loom::symbolizeLrSchedule(lrSchedule);
    if (!kind)
      return fail("--lr-schedule must be constant, warmup or cosine, got '" +
                  lrSchedule + "'"),
             failure();
    opt.schedule = *kind;
  }
  take(warmupSteps, opt.warmupSteps);
  take(totalSteps, opt.totalSteps);
  take(minLr, opt.minLr);

  if (std::string e = mlir::loom::verifyTrainingOptions(o); !e.empty())
    return fail(e), failure();
  if (stepBatch.getNumOccurrences() &&
      (stepBatch < 1 || stepBatch % o.microbatches != 0))
    return fail("--microbatches " + std::to_string(o.microbatches) +
                " does not divide --batch " + std::to_string(stepBatch) +
                ": every micro-batch has the same number of rows"),
           failure();
  return o;
}

/// --play: the compiled step played on --cluster (ProgramPlay.h); prints
/// the step time and writes OUTDIR/play.json and OUTDIR/play-trace.json.
/// Returns an error message, empty on success.
std::string playCompiledStep(ModuleOp module, StringRef outDir) {
  namespace planner = mlir::loom::planner;
  llvm::Expected<planner::ClusterSpec> spec =
      planner::loadClusterSpec(clusterSpec);
  if (!spec)
    return llvm::toString(spec.takeError());
  std::string error;
  FailureOr<planner::SimResult> played =
      planner::playProgram(module, *spec, /*recordEvents=*/true, error);
  if (failed(played))
    return "--play: " + error;
  auto path = [&](StringRef name) {
    SmallString<256> p(outDir);
    llvm::sys::path::append(p, name);
    return std::string(p);
  };
  llvm::json::Array stages;
  for (size_t k = 0; k < played->busy.size(); ++k)
    stages.push_back(llvm::json::Object{
        {"stage", static_cast<int64_t>(k)},
        {"busy_s", played->busy[k]},
        {"peak_live_bytes", played->peakBytes[k]}});
  llvm::json::Object root{{"cluster", spec->name},
                          {"step_time_s", played->stepTime},
                          {"bubble_fraction", played->bubbleFraction},
                          {"exposed_comm_s", played->exposedComm},
                          {"stages", std::move(stages)}};
  std::string json;
  llvm::raw_string_ostream os(json);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  if (std::string e = ::loom::writeFileAtomically(path("play.json"), json);
      !e.empty())
    return e;
  if (std::string e = ::loom::writeFileAtomically(
          path("play-trace.json"),
          planner::writeTrace(*played, planner::playedRanks(module),
                              "loomc --play on " + spec->name));
      !e.empty())
    return e;
  llvm::errs() << llvm::formatv(
      "loomc: --play on {0}: step {1:f3} ms, bubble {2:f1} %, exposed "
      "communication {3:f3} ms; OUTDIR/play-trace.json is the timeline\n",
      spec->name, played->stepTime * 1e3, played->bubbleFraction * 100,
      played->exposedComm * 1e3);
  return "";
}

/// --plan auto: the planner's best plan for --cluster, --gpus and
/// --global-batch, searching what the command line does not fix, applied
/// to `o`. Returns an error message, empty on success.
std::string planAutomatically(ModuleOp module, StringRef function,
                              TrainingOptions &o) {
  namespace planner = mlir::loom::planner;
  auto given = [](const cl::Option &opt) { return opt.getNumOccurrences() > 0; };
  if (clusterSpec.empty() || planGpus < 1 || globalBatch < 1)
    return "--plan auto needs --cluster SPEC, --gpus N and --global-batch G";
  llvm::Expected<planner::ClusterSpec> spec =
      planner::loadClusterSpec(clusterSpec);
  if (!spec)
    return "--plan auto: " + llvm::toString(spec.takeError());
  planner::SearchOptions search;
  search.gpus = planGpus;
  search.globalBatch = globalBatch;
  search.optimizer = o.optimizer.kind;
  if (given(mesh)) {
    if (o.mesh.numRanks() != planGpus)
      return "--plan auto: --mesh " + mesh + " has " +
             std::to_string(o.mesh.numRanks()) + " ranks but --gpus is " +
             std::to_string(planGpus);
    search.mesh = o.mesh;
  }
  if (given(microbatches))
    search.microbatches = o.microbatches;
  if (given(pipelineSchedule))
    search.schedule = o.schedule;
  if (given(recompute) &&
      o.recompute != mlir::loom::RecomputePolicy::automatic)
    search.recompute = o.recompute;
  if (given(overlapSplit))
    search.overlapSplit = o.overlapSplit;
  planner::ProfileCache profiles(module, function.str(), o.precision,
                                 o.optimizer.kind);
  std::string error;
  planner::SearchResult result =
      planner::searchPlans(profiles, *spec, search, error);
  if (!error.empty())
    return "--plan auto: " + error;
  if (result.ranked.empty()) {
    std::string closest = planner::closestRejection(result);
    if (!closest.empty())
      closest = "; the closest, " + closest;
    return "--plan auto: no plan fits " + std::to_string(planGpus) + " GPUs of '" +
           spec->name + "'" + closest +
           " (loom-plan lists the candidates and why each was rejected)";
  }
  const planner::Estimate &best = result.ranked.front();
  o.mesh = best.candidate.mesh;
  o.microbatches = best.candidate.microbatches;
  o.schedule = best.candidate.schedule;
  o.recompute = best.candidate.recompute;
  o.overlapSplit = best.candidate.overlapSplit;
  if (!given(stageBoundaries))
    o.stageBoundaries = best.stageBoundaries;
  llvm::errs() << llvm::format(
      "loomc: --plan auto on %lld x %s: %s (predicted %.4g s/step, %.4g "
      "tokens/s; of %lld plans priced, %zu fit)\n",
      static_cast<long long>(planGpus), spec->name.c_str(),
      best.candidate.describe().c_str(), best.stepTime, best.tokensPerSecond,
      static_cast<long long>(result.evaluated), result.ranked.size());
  return "";
}

int run(int argc, char **argv) {
  DialectRegistry registry;
  mlir::loom::registerAllDialects(registry);
  mlir::loom::registerAllPasses();
  registerPassManagerCLOptions();
  registerMLIRContextCLOptions();
  registerAsmPrinterCLOptions();

  // --help shows loomc's options; LLVM's and MLIR's own (the --mlir-*
  // flags, which all work) are listed by --help-hidden.
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "loomc: compile a model into a training program\n\n"
      "  loomc model.onnx --optimizer adamw --lr 1e-3 -o out\n"
      "  out/train --data DIR --steps 100 --log loss.csv\n\n"
      "OUTDIR gets step.cpp (the generated step; one per pipeline stage;\n"
      "step.cu with --target cuda),\n"
      "weights.safetensors (with --mesh tp=T also\n"
      "weights.rank<t>.safetensors, tensor-parallel rank t's slices),\n"
      "memory.json (the memory plan: per stage device_peak_bytes, checked\n"
      "against --device-memory), plan.json (mesh, schedule, stage\n"
      "partition; --plan reads it back), with --mesh tp=T sharding.json\n"
      "(which parameters are cut, and why the others are not),\n"
      "build.sh and train.\n"
      "Rank r of mpirun -np dp*tp*pp has coordinates (d, p, t) with\n"
      "r = (d*pp + p)*tp + t.\n"
      "The pass pipeline is lib/Pipelines' (loom-opt\n"
      "--loom-training-pipeline runs the same); -v prints it.\n"
      "mlir-opt's --mlir-* flags work too (e.g. --mlir-print-ir-after-all);\n"
      "--help-hidden lists them.\n");

  std::string planModel;
  FailureOr<TrainingOptions> built = buildOptions(planModel);
  if (failed(built))
    return 1;
  const std::string model = modelFile.empty() ? planModel : modelFile;
  if (model.empty())
    return fail("no model to compile: give model.onnx or model.mlir, or "
                "--plan PLAN.json (which names one)");
  TrainingOptions &options = *built;
  if (cudaEmulate && options.target != mlir::loom::Target::cuda)
    return fail("--cuda-emulate builds a CUDA program for the CPU: it needs "
                "--target cuda");
  if (playOnCluster && clusterSpec.empty())
    return fail("--play times the compiled step on a cluster: give --cluster "
                "SPEC (a bundled name, see loom-plan --list-clusters, or a "
                "JSON file; loom-plan calibrate writes this machine's)");

  if (std::error_code ec = llvm::sys::fs::create_directories(outDir))
    return fail("cannot create '" + outDir + "': " + ec.message());
  auto outPath = [&](StringRef name) {
    SmallString<256> path(outDir);
    llvm::sys::path::append(path, name);
    return std::string(path);
  };
  options.partitionReport = outPath("partition.json");
  options.memoryReport = outPath("memory.json");
  options.shardingReport = outPath("sharding.json");

  MLIRContext context(registry);
  context.disableMultithreading();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  std::vector<std::pair<std::string, double>> timings;
  auto clock = std::chrono::steady_clock::now();
  auto lap = [&](StringRef name) {
    auto now = std::chrono::steady_clock::now();
    timings.emplace_back(name.str(),
                         std::chrono::duration<double>(now - clock).count());
    clock = now;
    if (verbose)
      llvm::errs() << llvm::format("loomc: %-28s %8.3f s\n", name.str().c_str(),
                                   timings.back().second);
  };

  // Weights land in OUTDIR only after the whole compilation succeeded.
  std::string weightsTmp = outPath("weights.safetensors.importing");
  auto failAndClean = [&](const Twine &message) {
    llvm::sys::fs::remove(weightsTmp);
    return fail(message);
  };
  mlir::loom::ModelImportOptions importOptions;
  importOptions.weightsOut = weightsTmp;
  importOptions.trainable.assign(trainable.begin(), trainable.end());
  importOptions.frozen.assign(frozen.begin(), frozen.end());
  importOptions.hasWeightsFile = !weightsFile.empty();
  importOptions.batch = options.microBatch;
  importOptions.dims.assign(dimSizes.begin(), dimSizes.end());
  OwningOpRef<ModuleOp> module = mlir::loom::importModel(
      model, importOptions, &context, sourceMgr, "loomc");
  if (!module || failed(verify(*module)))
    return failAndClean("could not load '" + model + "'");
  lap("import");

  func::FuncOp entry = mlir::loom::findEntryFunction(*module);
  if (!entry)
    return failAndClean("the model has no public function");
  // A model whose batch is fixed (loom IR and StableHLO have static shapes)
  // compiles only at that micro-batch: the first data argument says it.
  // A loom IR model with a symbolic batch ('?') takes --micro-batch's.
  for (unsigned i = 0; i < entry.getNumArguments(); ++i) {
    auto type = dyn_cast<ShapedType>(entry.getArgumentTypes()[i]);
    if (!type || type.getRank() == 0 ||
        entry.getArgAttr(i, mlir::loom::LoomDialect::getParamAttrName()))
      continue;
    auto nameAttr = entry.getArgAttrOfType<StringAttr>(
        i, mlir::loom::LoomDialect::getNameAttrName());
    std::string name =
        nameAttr ? nameAttr.getValue().str() : "argument " + std::to_string(i);
    if (type.isDynamicDim(0))
      return failAndClean("the model's batch is symbolic ('?' in its "
                          "argument '" +
                          name + "'): give its size with --micro-batch N");
    if (options.microBatch > 0 && type.getDimSize(0) != options.microBatch)
      return failAndClean(
          "--micro-batch " + std::to_string(options.microBatch) +
          ": the model's batch is fixed at " +
          std::to_string(type.getDimSize(0)) + " by its argument '" + name +
          "' (its shapes are static); compile it at --micro-batch " +
          std::to_string(type.getDimSize(0)) +
          ", or import an ONNX export with a dynamic batch axis or a "
          "shape-polymorphic JAX export (loom-translate --import-stablehlo "
          "--micro-batch N)");
    break;
  }
  options.function = entry.getName().str();

  if (planFile == "auto") {
    if (std::string e = planAutomatically(*module, options.function, options);
        !e.empty())
      return failAndClean(e);
    if (std::string e = mlir::loom::verifyTrainingOptions(options); !e.empty())
      return failAndClean("--plan auto chose options this build refuses: " + e);
    lap("plan auto");
  }

  // Swap on --cluster: host copies hide behind as much compute as the
  // spec says they take (loom-swap's timed placement, in --swap auto's
  // trials too); --swap auto sheds each stage's excess by swapping or
  // recomputing, whichever the spec prices cheaper (under pipelines, or
  // peer).
  if (options.swap == mlir::loom::SwapPolicy::automatic ||
      (options.swap != mlir::loom::SwapPolicy::none && !clusterSpec.empty())) {
    namespace planner = mlir::loom::planner;
    if (clusterSpec.empty())
      return failAndClean("--swap auto prices swapping against recomputing "
                          "on a cluster: give --cluster SPEC (a bundled name "
                          "or a JSON file; loom-plan calibrate writes this "
                          "machine's)");
    llvm::Expected<planner::ClusterSpec> spec =
        planner::loadClusterSpec(clusterSpec);
    if (!spec)
      return failAndClean(llvm::toString(spec.takeError()));
    options.swapTiming =
        planner::CostModel(*spec, options.precision ==
                                          mlir::loom::Precision::bf16
                                      ? planner::NumberFormat::bf16
                                      : planner::NumberFormat::fp32)
            .swapCopyTiming();
    if (options.swap == mlir::loom::SwapPolicy::automatic) {
      std::vector<planner::StageShedding> decisions;
      planner::PeerPricing peer;
      if (std::string e = planner::resolveAutoSwap(*module, options, *spec,
                                                   decisions, peer);
          !e.empty())
        return failAndClean(e);
      auto ms = [](double s) {
        return s < 0 ? std::string("cannot fit")
                     : llvm::formatv("{0:f3} ms", s * 1e3).str();
      };
      using Way = planner::StageShedding::Way;
      for (const planner::StageShedding &d : decisions) {
        std::string way =
            d.way == Way::swap        ? "swap"
            : d.way == Way::recompute ? "recompute"
                                      : llvm::formatv("recompute {0:f0} % of "
                                                      "the excess, swap the "
                                                      "rest",
                                                      d.mixedFraction * 100)
                                            .str();
        std::string swap = d.exposedSwap < 0
                               ? std::string("swap cannot fit")
                               : "swap copies " + ms(d.exposedSwap) +
                                     " exposed per step";
        llvm::errs() << "loomc: --swap auto: stage " << d.stage << ": " << way
                     << " (" << swap << ", recompute " << ms(d.recompute)
                     << ", both " << ms(d.mixed) << " on " << spec->name
                     << ")\n";
      }
      // Each whole-pipeline way played against the per-stage choice.
      auto reportWhole = [&](StringRef name, bool chosen, double step,
                             StringRef unavailable, StringRef what) {
        std::string played = "(step " + ms(step) + " played on " +
                             spec->name + ", per-stage choice " +
                             ms(peer.perStageStep) + ")";
        if (chosen)
          llvm::errs() << "loomc: --swap auto: " << name << " instead "
                       << played << ": " << what << "\n";
        else if (!decisions.empty() && step >= 0)
          llvm::errs() << "loomc: --swap auto: not " << name << " " << played
                       << "\n";
        else if (!decisions.empty() && !unavailable.empty())
          llvm::errs() << "loomc: --swap auto: not " << name << ": "
                       << unavailable << "\n";
      };
      reportWhole("peer", peer.chosen, peer.peerStep, peer.unavailable,
                  "the excess goes to neighbouring stages with room");
      reportWhole("balance", peer.balanceChosen, peer.balanceStep,
                  peer.balanceUnavailable,
                  "the next stages' room, then the host pool");
      if (decisions.empty() && !peer.chosen && !peer.balanceChosen)
        llvm::errs() << "loomc: --swap auto: every stage fits the budget; "
                        "nothing is swapped or recomputed\n";
      lap("swap auto");
    }
  }

  // --recompute auto: each stage's policy, by the device budget (unless
  // the plan already says).
  if (options.recompute == mlir::loom::RecomputePolicy::automatic &&
      options.stageRecompute.empty()) {
    if (std::string e = mlir::loom::resolveAutoRecompute(*module, options);
        !e.empty())
      return failAndClean(e);
    lap("recompute auto");
  }

  PassManager pm(&context, ModuleOp::getOperationName());
  if (failed(applyPassManagerCLOptions(pm)))
    return 1;
  mlir::loom::buildTrainingPipeline(pm, options);
  std::string pipeline;
  {
    llvm::raw_string_ostream os(pipeline);
    pm.printAsTextualPipeline(os);
  }
  if (verbose) {
    llvm::errs() << "loomc: pipeline: " << pipeline << "\n";
    pm.enableTiming();
  }
  if (failed(pm.run(*module)))
    return failAndClean("compilation failed (see the errors above)");
  lap("passes");

  if (stepBatch.getNumOccurrences())
    if (std::string e = mlir::loom::checkStepRows(*module, options, stepBatch);
        !e.empty())
      return failAndClean(e);
  // The plan: what every rank runs (docs/plan.md).
  std::string error;
  FailureOr<mlir::loom::Plan> plan =
      mlir::loom::collectPlan(*module, options, model, pipeline, error);
  if (failed(plan))
    return failAndClean(error);
  if (plan->sharding)
    printShardingSummary(*plan->sharding);

  if (playOnCluster)
    if (std::string e = playCompiledStep(*module, outDir); !e.empty())
      return failAndClean(e);

  bool cuda = options.target == mlir::loom::Target::cuda;
  StringRef sourceName = cuda ? "step.cu" : "step.cpp";
  std::string code;
  llvm::raw_string_ostream codeStream(code);
  mlir::loom::EmitCppOptions cppOptions;
  mlir::loom::EmitCudaOptions cudaOptions;
  cppOptions.rollRepeats = cudaOptions.rollRepeats = rollRepeats;
  if (cuda ? failed(mlir::loom::emitCuda(*module, codeStream, cudaOptions))
           : failed(mlir::loom::emitCpp(*module, codeStream, cppOptions)))
    return fail(cuda ? "CUDA emission failed" : "C++ emission failed");
  if (std::string e = ::loom::writeFileAtomically(outPath(sourceName), code);
      !e.empty())
    return fail(e);
  lap(cuda ? "emit-cuda" : "emit-cpp");

  // Weights: the imported ones, or the --weights file.
  if (llvm::sys::fs::exists(weightsTmp)) {
    if (std::error_code ec =
            llvm::sys::fs::rename(weightsTmp, outPath("weights.safetensors")))
      return fail("cannot write weights: " + ec.message());
  } else if (!weightsFile.empty()) {
    if (std::error_code ec = llvm::sys::fs::copy_file(
            weightsFile, outPath("weights.safetensors")))
      return fail("cannot copy --weights '" + weightsFile +
                  "': " + ec.message());
  }
  if (options.mesh.tp > 1) {
    if (!llvm::sys::fs::exists(outPath("weights.safetensors")))
      return fail("--mesh " + options.mesh.str() +
                  ": tensor parallelism needs the model's weights (an ONNX "
                  "model, or --weights for .mlir) to write each rank's slice");
    if (std::string e = mlir::loom::writeRankWeights(
            outPath("weights.safetensors"), options.mesh.tp,
            plan->tensorParallelParameters, outPath);
        !e.empty())
      return fail(e);
    lap("slice weights");
  }

  if (std::string e = ::loom::writeFileAtomically(
          outPath("plan.json"), mlir::loom::printPlan(*plan));
      !e.empty())
    return fail(e);

  // The build command, also saved as OUTDIR/build.sh.
  std::string buildError;
  std::vector<std::string> command =
      cuda ? mlir::loom::cudaBuildCommand(cxx, outPath(sourceName),
                                          outPath("train"), cudaEmulate,
                                          buildError)
           : mlir::loom::buildCommand(cxx, outPath(sourceName),
                                      outPath("train"));
  if (command.empty()) {
    if (emitOnly)
      return 0;
    return fail("--target cuda: " + buildError);
  }
  std::string script = mlir::loom::buildScript(command, sourceName);
  if (std::string e = ::loom::writeFileAtomically(outPath("build.sh"), script);
      !e.empty())
    return fail(e);
  if (emitOnly) {
    lap("write");
    return 0;
  }
  auto program = llvm::sys::findProgramByName(command.front());
  if (!program)
    return fail("compiler '" + command.front() +
                "' not found (install openmpi: libopenmpi-dev, or pass --cxx)");
  // nvcc's host compiler (-ccbin) must exist too.
  if (cuda && !cudaEmulate && !llvm::sys::findProgramByName(cxx))
    return fail("C++ compiler '" + cxx +
                "' (nvcc's host compiler) not found (install openmpi: "
                "libopenmpi-dev, or pass --cxx)");
  if (std::string e = mlir::loom::runBuildCommand(*program, command);
      !e.empty())
    return fail("building " + outPath("train") + " failed (" + e +
                "); the command is in build.sh");
  lap("build train");
  if (verbose) {
    double total = 0;
    for (const auto &t : timings)
      total += t.second;
    llvm::errs() << llvm::format("loomc: %-28s %8.3f s\n", "total", total);
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  return run(argc, argv);
}

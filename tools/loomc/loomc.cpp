//===- loomc.cpp - The Loom compiler driver -------------------------------===//
//
// Model in, training program out: import (ONNX, StableHLO text or loom IR),
// shape inference, autodiff, optimizer, lowering, memory plan, C++
// emission, and the build of OUTDIR/train against lib/Runtime. Every step
// is a pass or translation that loom-opt / loom-translate also run alone;
// `-v` prints the pipeline and its timings.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/LoomToLoomRT/Passes.h"
#include "loom/Conversion/StableHLOToLoom/Passes.h"
#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/LoomInterfaces.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"
#include "loom/Dialect/LoomRT/IR/LoomRTDialect.h"
#include "loom/Dialect/LoomRT/Transforms/Passes.h"
#include "loom/Import/Onnx.h"
#include "loom/InitAllDialects.h"
#include "loom/InitAllPasses.h"
#include "loom/Import/StableHLO.h"
#include "loom/Support/AtomicFile.h"
#include "loom/Support/Safetensors.h"
#include "loom/Target/Cpp/EmitCpp.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/Extensions/AllExtensions.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
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
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("loomc options");

cl::opt<std::string> modelFile(cl::Positional, cl::desc("<model.onnx|model.mlir>"),
                               cl::Required, cl::cat(category));
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
cl::opt<std::string> planFile(
    "plan",
    cl::desc("Read the mesh, micro-batches, schedule and stage boundaries "
             "from a plan (JSON, as loomc writes OUTDIR/plan.json); flags "
             "given on the command line override it"),
    cl::value_desc("plan.json"), cl::cat(category));
cl::opt<std::string> target("target", cl::desc("cpu or cuda"),
                            cl::init("cpu"), cl::cat(category));
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

struct Step {
  std::string name;
  double seconds;
};

/// Parses dp=D,tp=T,pp=P.
LogicalResult parseMesh(StringRef text, int64_t &dp, int64_t &tp,
                        int64_t &pp) {
  dp = tp = pp = 1;
  SmallVector<StringRef> parts;
  text.split(parts, ',', -1, false);
  for (StringRef part : parts) {
    auto [key, value] = part.split('=');
    int64_t n;
    if (value.trim().getAsInteger(10, n) || n < 1) {
      llvm::errs() << "loomc: error: --mesh: '" << part
                   << "' is not AXIS=N with N >= 1\n";
      return failure();
    }
    key = key.trim();
    if (key == "dp")
      dp = n;
    else if (key == "tp")
      tp = n;
    else if (key == "pp")
      pp = n;
    else {
      llvm::errs() << "loomc: error: --mesh: unknown axis '" << key
                   << "' (dp, tp, pp)\n";
      return failure();
    }
  }
  return success();
}

OwningOpRef<ModuleOp> loadModel(MLIRContext &context, llvm::SourceMgr &sourceMgr,
                                StringRef weightsOut) {
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input = openInputFile(modelFile, &error);
  if (!input) {
    llvm::errs() << "loomc: error: " << error << "\n";
    return nullptr;
  }
  if (StringRef(modelFile).ends_with(".onnx")) {
    if (!weightsFile.empty()) {
      llvm::errs() << "loomc: error: --weights is for .mlir models; an ONNX "
                      "model carries its weights\n";
      return nullptr;
    }
    mlir::loom::OnnxImportOptions options;
    options.weightsOut = weightsOut.str();
    options.trainable.assign(trainable.begin(), trainable.end());
    options.frozen.assign(frozen.begin(), frozen.end());
    options.modelDir = llvm::sys::path::parent_path(modelFile).str();
    StringRef bytes = input->getBuffer();
    sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
    return mlir::loom::importOnnx(bytes, modelFile, options, &context);
  }
  if (!trainable.empty() || !frozen.empty()) {
    llvm::errs() << "loomc: error: --trainable/--frozen are for ONNX models; "
                    "mark parameters of a .mlir model with loom.param (or "
                    "loom-translate --trainable)\n";
    return nullptr;
  }
  bool isStableHLO = input->getBuffer().contains("stablehlo.");
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  if (isStableHLO)
    return mlir::loom::importStableHLO(sourceMgr, &context);
  return parseSourceFile<ModuleOp>(sourceMgr, &context);
}

std::string optimizerOptions() {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto num = [](double x) {
    std::string s;
    llvm::raw_string_ostream(s) << llvm::format("%.17g", x);
    return s;
  };
  auto [beta1, beta2] = StringRef(betas).split(',');
  os << "optimizer=" << optimizer << " lr=" << num(lr);
  if (optimizer == "sgd") {
    os << " momentum=" << num(momentum);
    if (nesterov)
      os << " nesterov=true";
  } else {
    os << " beta1=" << beta1.trim() << " beta2=" << beta2.trim()
       << " eps=" << num(eps);
  }
  if (weightDecay >= 0)
    os << " weight-decay=" << num(weightDecay);
  if (clipGradNorm > 0)
    os << " clip-grad-norm=" << num(clipGradNorm);
  os << " schedule=" << lrSchedule;
  if (warmupSteps > 0)
    os << " warmup-steps=" << warmupSteps;
  if (totalSteps > 0)
    os << " total-steps=" << totalSteps;
  if (minLr > 0)
    os << " min-lr=" << num(minLr);
  return text;
}

/// How a parameter is cut over the tensor-parallel ranks (its loom.shard).
struct ShardSpec {
  /// `padded`: the size of dimension `dim` after zero padding (a vocabulary
  /// padded to a multiple of `parts`), or 0 for no padding.
  int64_t dim, parts, groups, padded;
  /// The shape of one rank's slice (the step argument's type).
  SmallVector<int64_t> local;
};

/// The loom.shard of each named parameter of the lowered step `step`.
FailureOr<std::map<std::string, ShardSpec>> collectShards(func::FuncOp step) {
  std::map<std::string, ShardSpec> shards;
  for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i) {
    auto shard = step.getArgAttrOfType<DictionaryAttr>(
        i, mlir::loom::LoomDialect::getShardAttrName());
    if (!shard)
      continue;
    auto name = step.getArgAttrOfType<StringAttr>(
        i, mlir::loom::LoomDialect::getNameAttrName());
    auto type = dyn_cast<ShapedType>(step.getArgument(i).getType());
    auto field = [&](StringRef key, int64_t otherwise) {
      auto attr = shard.getAs<IntegerAttr>(key);
      return attr ? attr.getInt() : otherwise;
    };
    ShardSpec spec{field("dim", -1), field("parts", 0), field("groups", 1),
                   field("padded", 0), {}};
    if (!name || !type || !type.hasStaticShape() || spec.dim < 0 ||
        spec.dim >= type.getRank() || spec.parts < 1 || spec.groups < 1 ||
        spec.padded < 0 ||
        (spec.padded &&
         (spec.groups != 1 ||
          spec.padded != type.getDimSize(spec.dim) * spec.parts))) {
      step.emitError() << "argument #" << i
                       << " has a malformed loom.shard or no loom.name";
      return failure();
    }
    spec.local.assign(type.getShape().begin(), type.getShape().end());
    shards[name.getValue().str()] = spec;
  }
  return shards;
}

/// Writes OUTDIR/weights.rank<r>.safetensors for each of the `tp` ranks:
/// the full weights with each sharded parameter cut to the rank's slice
/// (dimension `dim`, zero-extended to `padded` rows when given, is `groups`
/// equal blocks, each cut into `parts` equal parts; rank r holds part r of
/// every block). Returns an error message.
std::string writeRankWeights(const std::string &full, int64_t tp,
                             const std::map<std::string, ShardSpec> &shards,
                             llvm::function_ref<std::string(StringRef)> path) {
  namespace st = ::loom::safetensors;
  std::vector<st::Tensor> tensors;
  std::map<std::string, std::string> metadata;
  if (std::string e = st::readFile(full, tensors, metadata); !e.empty())
    return "cannot read '" + full + "': " + e;
  for (const auto &[name, shard] : shards) {
    auto it = llvm::find_if(tensors,
                            [&](const st::Tensor &t) { return t.name == name; });
    if (it == tensors.end())
      return "the weights file '" + full + "' has no tensor '" + name +
             "' (a tensor-parallel parameter)";
    SmallVector<int64_t> expected(shard.local);
    expected[shard.dim] *= shard.parts;
    // A padded dimension: the file holds the unpadded tensor (fewer than
    // `parts` rows short of `padded`).
    if (shard.padded && it->shape.size() == expected.size() &&
        static_cast<size_t>(shard.dim) < it->shape.size() &&
        it->shape[shard.dim] < shard.padded &&
        it->shape[shard.dim] > shard.padded - shard.parts)
      expected[shard.dim] = it->shape[shard.dim];
    if (shard.parts != tp ||
        !llvm::equal(it->shape, expected) || st::dtypeSize(it->dtype) == 0)
      return "the weights file's tensor '" + name +
             "' does not match its tensor-parallel slice (shape [" +
             llvm::join(llvm::map_range(it->shape,
                                        [](int64_t d) { return std::to_string(d); }),
                        ", ") +
             "], " + std::to_string(shard.parts) + " parts of dimension " +
             std::to_string(shard.dim) +
             (shard.padded ? " padded to " + std::to_string(shard.padded)
                           : std::string()) +
             ")";
  }
  for (int64_t rank = 0; rank < tp; ++rank) {
    std::vector<st::Tensor> sliced;
    for (const st::Tensor &t : tensors) {
      auto found = shards.find(t.name);
      if (found == shards.end()) {
        sliced.push_back(t);
        continue;
      }
      const ShardSpec &shard = found->second;
      auto dim = static_cast<size_t>(shard.dim);
      size_t outer = 1, inner = st::dtypeSize(t.dtype);
      for (size_t i = 0; i < t.shape.size(); ++i) {
        if (i < dim)
          outer *= static_cast<size_t>(t.shape[i]);
        else if (i > dim)
          inner *= static_cast<size_t>(t.shape[i]);
      }
      // Dimension `dim` is zero-extended to `padded` rows when padded (one
      // group): a rank's part may end past the real rows.
      auto size = static_cast<size_t>(t.shape[dim]);
      auto groups = static_cast<size_t>(shard.groups);
      size_t full = shard.padded ? static_cast<size_t>(shard.padded) : size;
      size_t block = full / groups, part = block / static_cast<size_t>(tp);
      st::Tensor out{t.name, t.dtype, t.shape, {}};
      out.shape[dim] = shard.local[dim];
      out.data.reserve(outer * groups * part * inner);
      for (size_t o = 0; o < outer; ++o)
        for (size_t g = 0; g < groups; ++g) {
          size_t first = g * block + static_cast<size_t>(rank) * part;
          size_t real = first < size ? std::min(part, size - first) : 0;
          if (real > 0) {
            size_t begin = (o * size + first) * inner;
            out.data.insert(out.data.end(), t.data.begin() + begin,
                            t.data.begin() + begin + real * inner);
          }
          out.data.insert(out.data.end(), (part - real) * inner, 0);
        }
      sliced.push_back(std::move(out));
    }
    std::string name = "weights.rank" + std::to_string(rank) + ".safetensors";
    if (std::string e = st::writeFile(path(name), sliced, metadata); !e.empty())
      return "cannot write '" + path(name) + "': " + e;
  }
  return "";
}

/// Applies a plan file (--plan): the mesh, micro-batches, schedule and
/// stage boundaries it holds, unless the command line sets them.
LogicalResult applyPlan(StringRef path) {
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input = openInputFile(path, &error);
  if (!input) {
    llvm::errs() << "loomc: error: --plan: " << error << "\n";
    return failure();
  }
  llvm::Expected<llvm::json::Value> parsed =
      llvm::json::parse(input->getBuffer());
  if (!parsed) {
    llvm::errs() << "loomc: error: --plan '" << path
                 << "' is not JSON: " << llvm::toString(parsed.takeError())
                 << "\n";
    return failure();
  }
  const llvm::json::Object *root = parsed->getAsObject();
  auto bad = [&](StringRef what) {
    llvm::errs() << "loomc: error: --plan '" << path << "': " << what << "\n";
    return failure();
  };
  if (!root)
    return bad("expected a JSON object");
  if (const llvm::json::Value *m = root->get("mesh")) {
    const llvm::json::Object *axes = m->getAsObject();
    if (!axes)
      return bad("\"mesh\" must be an object {\"dp\": D, \"tp\": T, \"pp\": P}");
    std::string text;
    for (StringRef axis : {"dp", "tp", "pp"}) {
      std::optional<int64_t> n = axes->getInteger(axis);
      if (axes->get(axis) && (!n || *n < 1))
        return bad(("\"mesh\"." + axis + " must be an integer >= 1").str());
      if (n)
        text += (text.empty() ? "" : ",") + axis.str() + "=" + std::to_string(*n);
    }
    if (!mesh.getNumOccurrences() && !text.empty())
      mesh = text;
  }
  if (const llvm::json::Value *v = root->get("microbatches")) {
    std::optional<int64_t> n = v->getAsInteger();
    if (!n || *n < 1)
      return bad("\"microbatches\" must be an integer >= 1");
    if (!microbatches.getNumOccurrences())
      microbatches = *n;
  }
  if (const llvm::json::Value *v = root->get("schedule")) {
    std::optional<StringRef> text = v->getAsString();
    if (!text)
      return bad("\"schedule\" must be \"1f1b\" or \"gpipe\"");
    if (!pipelineSchedule.getNumOccurrences())
      pipelineSchedule = text->str();
  }
  // The stage boundaries: given, or the cuts of a written partition.
  const llvm::json::Array *cuts = root->getArray("stage_boundaries");
  if (!cuts)
    if (const llvm::json::Object *partition = root->getObject("partition"))
      cuts = partition->getArray("cuts");
  if (cuts && !stageBoundaries.getNumOccurrences()) {
    for (const llvm::json::Value &cut : *cuts) {
      if (std::optional<int64_t> n = cut.getAsInteger())
        stageBoundaries.push_back(std::to_string(*n));
      else if (std::optional<StringRef> name = cut.getAsString())
        stageBoundaries.push_back(name->str());
      else
        return bad("stage boundaries must be positions or op names");
    }
  }
  return success();
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
      "OUTDIR gets step.cpp (the generated step; one per pipeline stage),\n"
      "weights.safetensors (with --mesh tp=T also\n"
      "weights.rank<t>.safetensors, tensor-parallel rank t's slices),\n"
      "memory.json (the memory plan), plan.json (mesh, schedule, stage\n"
      "partition; --plan reads it back), build.sh and train.\n"
      "Rank r of mpirun -np dp*tp*pp has coordinates (d, p, t) with\n"
      "r = (d*pp + p)*tp + t.\n"
      "mlir-opt's --mlir-* flags work too (e.g. --mlir-print-ir-after-all);\n"
      "--help-hidden lists them.\n");

  if (!planFile.empty() && failed(applyPlan(planFile)))
    return 1;
  int64_t dp, tp, pp;
  if (failed(parseMesh(mesh, dp, tp, pp)))
    return 1;
  if (microbatches < 1)
    return fail("--microbatches must be >= 1, got " +
                std::to_string(static_cast<int64_t>(microbatches)));
  if (stepBatch.getNumOccurrences() &&
      (stepBatch < 1 || stepBatch % microbatches != 0))
    return fail("--microbatches " + std::to_string(microbatches) +
                " does not divide --batch " + std::to_string(stepBatch) +
                ": every micro-batch has the same number of rows");
  if (pipelineSchedule != "1f1b" && pipelineSchedule != "gpipe")
    return fail("--schedule must be 1f1b or gpipe, got '" + pipelineSchedule +
                "' (the learning-rate schedule is --lr-schedule)");
  if (target != "cpu" && target != "cuda")
    return fail("--target must be cpu or cuda, got '" + target + "'");
  if (target == "cuda")
    return fail("--target cuda: the CUDA runtime backend compiles "
                "(lib/Runtime/cuda) but code generation for it is not "
                "implemented yet; use --target cpu");
  if (optimizer != "sgd" && optimizer != "adam" && optimizer != "adamw")
    return fail("--optimizer must be sgd, adam or adamw, got '" + optimizer +
                "'");

  if (std::error_code ec = llvm::sys::fs::create_directories(outDir))
    return fail("cannot create '" + outDir + "': " + ec.message());
  auto outPath = [&](StringRef name) {
    SmallString<256> path(outDir);
    llvm::sys::path::append(path, name);
    return std::string(path);
  };

  MLIRContext context(registry);
  context.disableMultithreading();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  std::vector<Step> timings;
  auto clock = std::chrono::steady_clock::now();
  auto lap = [&](StringRef name) {
    auto now = std::chrono::steady_clock::now();
    timings.push_back(
        {name.str(), std::chrono::duration<double>(now - clock).count()});
    clock = now;
    if (verbose)
      llvm::errs() << llvm::format("loomc: %-28s %8.3f s\n", name.str().c_str(),
                                   timings.back().seconds);
  };

  // Weights land in OUTDIR only after the whole compilation succeeded.
  std::string weightsTmp = outPath("weights.safetensors.importing");
  OwningOpRef<ModuleOp> module = loadModel(context, sourceMgr, weightsTmp);
  if (!module || failed(verify(*module))) {
    llvm::sys::fs::remove(weightsTmp);
    return fail("could not load '" + modelFile + "'");
  }
  lap("import");

  func::FuncOp entry;
  for (func::FuncOp f : module->getOps<func::FuncOp>())
    if (f.isPublic() && (!entry || f.getName() == "main"))
      entry = f;
  if (!entry)
    return fail("the model has no public function");
  std::string name = entry.getName().str();

  // A pipeline (pp > 1, or micro-batches to accumulate) trains one
  // gradient function per stage, @<name>_stage<k>_grad.
  bool pipelined = pp > 1 || microbatches > 1;
  SmallVector<std::string> gradFunctions;
  if (pipelined)
    for (int64_t k = 0; k < pp; ++k)
      gradFunctions.push_back(name + "_stage" + std::to_string(k) + "_grad");
  else
    gradFunctions.push_back(name + "_grad");
  std::string partitionReport = outPath("partition.json");
  std::string pipeline =
      std::string("inline, symbol-dce, loom-shape-inference, ") +
      (tp > 1 ? "loom-tensor-parallel{function=" + name +
                    " tp=" + std::to_string(tp) + "}, "
              : std::string());
  if (pipelined) {
    pipeline += "loom-pipeline-partition{function=" + name +
                " stages=" + std::to_string(pp) +
                (memoryBudget > 0
                     ? " memory-budget=" + std::to_string(memoryBudget)
                     : std::string()) +
                (stageBoundaries.empty()
                     ? std::string()
                     : " stage-boundaries=" + llvm::join(stageBoundaries, ",")) +
                " report=" + partitionReport + "}, loom-pipeline-split{function=" +
                name + "}, loom-pipeline-schedule{function=" + name +
                " microbatches=" + std::to_string(microbatches) +
                " schedule=" + pipelineSchedule +
                (lossName.empty() ? std::string() : " loss=" + lossName) + "}, ";
  } else {
    pipeline += "loom-autodiff{function=" + name +
                (lossName.empty() ? std::string() : " loss=" + lossName) +
                "}, ";
  }
  SmallVector<std::string> stepFunctions;
  for (const std::string &grad : gradFunctions) {
    if (dp > 1)
      pipeline += "loom-data-parallel{function=" + grad +
                  " dp=" + std::to_string(dp) + "}, ";
    pipeline += "loom-optimizer{function=" + grad + " " + optimizerOptions() +
                "}, ";
    stepFunctions.push_back(StringRef(grad).drop_back(5).str() + "_step");
  }
  pipeline += "convert-loom-to-loomrt{function=" +
              llvm::join(stepFunctions, ",") +
              "}, loom-memory-plan{report=" + outPath("memory.json") + "}";
  if (verbose)
    llvm::errs() << "loomc: pipeline: builtin.module(" << pipeline << ")\n";
  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return 1;
  if (verbose)
    pm.enableTiming();
  if (failed(parsePassPipeline(pipeline, pm, llvm::errs())))
    return fail("bad pass pipeline (an option above is invalid)");
  if (failed(pm.run(*module))) {
    llvm::sys::fs::remove(weightsTmp);
    return fail("compilation failed (see the errors above)");
  }
  lap("passes");

  // The rows a step reads per data-parallel rank (dimension 0 of the data
  // arguments): M micro-batches of the model's batch size.
  if (stepBatch.getNumOccurrences()) {
    auto step = module->lookupSymbol<func::FuncOp>(stepFunctions.front());
    int64_t rows = -1;
    for (unsigned i = 0; step && i < step.getNumArguments() && rows < 0; ++i) {
      auto type = dyn_cast<ShapedType>(step.getArgumentTypes()[i]);
      if (type && type.getRank() > 0 &&
          !step.getArgAttr(i, mlir::loom::LoomDialect::getParamAttrName()) &&
          !step.getArgAttr(i, mlir::loom::LoomDialect::getStateAttrName()))
        rows = type.getDimSize(0);
    }
    if (rows >= 0 && rows != stepBatch) {
      llvm::sys::fs::remove(weightsTmp);
      return fail("--batch " + std::to_string(stepBatch) + " in " +
                  std::to_string(microbatches) + " micro-batch(es) needs a "
                  "model of batch size " +
                  std::to_string(stepBatch / microbatches) +
                  ", but the model's batch size is " +
                  std::to_string(rows / microbatches) +
                  " (its batch dimension is static: export it with batch " +
                  std::to_string(stepBatch / microbatches) + ")");
    }
  }

  // Tensor parallelism: the cut of each parameter, for the per-rank weights.
  std::map<std::string, ShardSpec> shards;
  if (tp > 1) {
    bool partitioned = false;
    for (const std::string &stepName : stepFunctions) {
      auto step = module->lookupSymbol<func::FuncOp>(stepName);
      FailureOr<std::map<std::string, ShardSpec>> found =
          step ? collectShards(step)
               : FailureOr<std::map<std::string, ShardSpec>>(failure());
      if (failed(found)) {
        llvm::sys::fs::remove(weightsTmp);
        return fail("no lowered @" + stepName + " with valid loom.shard");
      }
      partitioned |= step->hasAttr("loom.tp");
      shards.insert(found->begin(), found->end());
    }
    if (!partitioned) {
      llvm::sys::fs::remove(weightsTmp);
      return fail("--mesh " + mesh +
                  ": loom-tensor-parallel found no attention or MLP block, "
                  "embedding or LM head to partition in @" + name +
                  " (see the warning above); compile without tp");
    }
  }

  // Every parallel axis of the mesh must have left its collectives, each on
  // its own grid (the emitted code maps a grid to the runtime's group).
  if (auto step = module->lookupSymbol<func::FuncOp>(name + "_step")) {
    for (auto [axis, size] : {std::pair<StringRef, int64_t>("dp", dp),
                              std::pair<StringRef, int64_t>("tp", tp)}) {
      if (size <= 1)
        continue;
      bool found = false;
      step.walk([&](loomrt::AllReduceStartOp start) {
        found |= start.getGroup() == axis;
      });
      auto attr = step->getAttrOfType<IntegerAttr>(("loom." + axis).str());
      if (!found || !attr || attr.getInt() != size) {
        llvm::sys::fs::remove(weightsTmp);
        return fail("--mesh " + mesh + ": the compiled step has no " +
                    axis.str() + " collectives over " + std::to_string(size) +
                    " ranks (a bug in the parallelisation passes)");
      }
    }
  }

  std::string code;
  llvm::raw_string_ostream codeStream(code);
  if (failed(mlir::loom::emitCpp(*module, codeStream)))
    return fail("C++ emission failed");
  if (std::string e = ::loom::writeFileAtomically(outPath("step.cpp"), code);
      !e.empty())
    return fail(e);
  lap("emit-cpp");

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

  if (tp > 1) {
    if (!llvm::sys::fs::exists(outPath("weights.safetensors")))
      return fail("--mesh " + mesh + ": tensor parallelism needs the model's "
                  "weights (an ONNX model, or --weights for .mlir) to write "
                  "each rank's slice");
    if (std::string e = writeRankWeights(outPath("weights.safetensors"), tp,
                                         shards, outPath);
        !e.empty())
      return fail(e);
    lap("slice weights");
  }

  // The plan: what every rank runs. Rank r = (d*pp + p)*tp + t.
  llvm::json::Array parameters;
  for (const auto &[paramName, shard] : shards)
    parameters.push_back(llvm::json::Object{
        {"name", paramName},
        {"shard", llvm::json::Object{{"dim", shard.dim},
                                     {"parts", shard.parts},
                                     {"groups", shard.groups}}}});
  llvm::json::Object plan{
      {"model", modelFile},
      {"functions", llvm::json::Array(stepFunctions)},
      {"mesh", llvm::json::Object{{"dp", dp}, {"tp", tp}, {"pp", pp}}},
      {"rank_layout", "r = (d*pp + p)*tp + t"},
      {"microbatches", static_cast<int64_t>(microbatches)},
      {"schedule", pipelineSchedule},
      {"target", target},
      {"optimizer", optimizerOptions()},
      {"tensor_parallel_parameters", std::move(parameters)},
      {"pipeline", "builtin.module(" + pipeline + ")"},
  };
  if (pipelined) {
    // The partition report of loom-pipeline-partition: per-stage flops,
    // parameters, activation and cut bytes, and each op's stage.
    auto report = llvm::MemoryBuffer::getFile(partitionReport);
    llvm::Expected<llvm::json::Value> partition =
        report ? llvm::json::parse((*report)->getBuffer())
               : llvm::Expected<llvm::json::Value>(llvm::createStringError(
                     report.getError(), "cannot read the partition report"));
    if (!partition)
      return fail("the partition report '" + partitionReport +
                  "': " + llvm::toString(partition.takeError()));
    if (const llvm::json::Object *object = partition->getAsObject())
      if (const llvm::json::Array *cuts = object->getArray("cuts"))
        plan["stage_boundaries"] = llvm::json::Array(*cuts);
    plan["partition"] = std::move(*partition);
  }
  std::string planText;
  llvm::raw_string_ostream(planText)
      << llvm::formatv("{0:2}", llvm::json::Value(std::move(plan))) << "\n";
  if (std::string e = ::loom::writeFileAtomically(outPath("plan.json"), planText);
      !e.empty())
    return fail(e);

  // The build command, also saved as OUTDIR/build.sh.
  std::vector<std::string> command = {
      cxx, "-std=c++17", "-O3", "-fno-math-errno", "-fopenmp", "-I",
      LOOM_RUNTIME_INCLUDE_DIR, outPath("step.cpp"), LOOM_RUNTIME_LIBRARY,
      LOOM_SUPPORT_LIBRARY};
#ifdef LOOM_OPENBLAS_OPENMP
  command.push_back(LOOM_OPENBLAS_OPENMP);
  command.push_back(
      ("-Wl,-rpath," + llvm::sys::path::parent_path(LOOM_OPENBLAS_OPENMP))
          .str());
#else
  command.push_back("-lopenblas");
#endif
  command.push_back("-o");
  command.push_back(outPath("train"));
  std::string script = "#!/bin/sh\n# Rebuilds train from step.cpp.\nexec";
  for (const std::string &arg : command)
    script += " '" + arg + "'";
  script += "\n";
  if (std::string e = ::loom::writeFileAtomically(outPath("build.sh"), script);
      !e.empty())
    return fail(e);
  if (emitOnly) {
    lap("write");
    return 0;
  }
  auto program = llvm::sys::findProgramByName(cxx);
  if (!program)
    return fail("C++ compiler '" + cxx +
                "' not found (install openmpi: libopenmpi-dev, or pass --cxx)");
  SmallVector<StringRef> argsRef;
  for (const std::string &arg : command)
    argsRef.push_back(arg);
  std::string errorMessage;
  int rc = llvm::sys::ExecuteAndWait(*program, argsRef, std::nullopt, {}, 0, 0,
                                     &errorMessage);
  if (rc != 0)
    return fail("building " + outPath("train") + " failed (" +
                (errorMessage.empty() ? "exit " + std::to_string(rc)
                                      : errorMessage) +
                "); the command is in build.sh");
  lap("build train");
  if (verbose) {
    double total = 0;
    for (const Step &s : timings)
      total += s.seconds;
    llvm::errs() << llvm::format("loomc: %-28s %8.3f s\n", "total", total);
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  return run(argc, argv);
}

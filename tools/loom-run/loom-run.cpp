//===- loom-run.cpp - The reference interpreter of loom IR ----------------===//
//
//   loom-run FILE.mlir [--entry NAME] [--input NAME=FILE.npy ...]
//       [--weights FILE.safetensors] [--output-dir DIR] [--print]
//       [--check-finite] [--random-inputs [--seed N]] [--entry-all] [--check]
//       [--ranks N [--input NAME@R=FILE.npy ...]]
//   loom-run FILE.mlir (--compare-after=PIPELINE | --compare-with=OTHER.mlir)
//       [--seed N] [--entry NAME] [--tolerance T] [--input ...] [--weights ...]
//
// Runs one function of a loom module on the CPU (see
// loom/Interpreter/Interpreter.h) and prints or writes its results. The
// `check.*` ops of StableHLO test data are executed: a failed check is an
// error at the op and makes the exit status 1.
//
// --compare-after runs the entry function before and after a textual pass
// pipeline (on a clone of the module), --compare-with against the function
// of the same name in another file, on the same seeded random inputs, and
// reports the largest absolute and relative difference of each result.
//
//===----------------------------------------------------------------------===//

#include "loom/InitAllDialects.h"
#include "loom/InitAllPasses.h"
#include "loom/Interpreter/Arguments.h"
#include "loom/Interpreter/Interpreter.h"
#include "loom/Interpreter/Print.h"
#include "loom/Interpreter/TensorIO.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <new>
#include <unistd.h>
#include <set>

using namespace mlir;
using namespace mlir::loom::interp;
namespace cl = llvm::cl;

namespace {

int fail(const std::string &message) {
  llvm::errs() << "loom-run: error: " << message << "\n";
  return 1;
}

/// The function to run: `name` if given, else @main, else the only public
/// function with a body.
func::FuncOp findEntry(ModuleOp module, StringRef name, std::string &error) {
  SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
  auto list = [&] {
    std::string names;
    for (func::FuncOp f : functions)
      names += (names.empty() ? "@" : ", @") + f.getSymName().str();
    return names.empty() ? std::string("none") : names;
  };
  if (!name.empty()) {
    for (func::FuncOp f : functions)
      if (f.getSymName() == name)
        return f;
    error = "--entry names @" + name.str() +
            ", which is not a function of the module (its functions: " +
            list() + ")";
    return {};
  }
  for (func::FuncOp f : functions)
    if (f.getSymName() == "main")
      return f;
  SmallVector<func::FuncOp> candidates;
  for (func::FuncOp f : functions)
    if (f.isPublic() && !f.isExternal())
      candidates.push_back(f);
  if (candidates.size() == 1)
    return candidates.front();
  error = candidates.empty()
              ? "the module has no @main and no public function with a body "
                "to run"
              : "the module has no @main and several public functions (" +
                    list() + "); choose one with --entry NAME";
  return {};
}

/// Bytes the arguments of `func` take in the interpreter (static shapes
/// only; 4 bytes per float element, 8 per integer element).
double argumentBytes(func::FuncOp func) {
  double bytes = 0;
  for (Type t : func.getArgumentTypes()) {
    auto type = dyn_cast<RankedTensorType>(t);
    if (!type || !type.hasStaticShape())
      continue;
    bytes += static_cast<double>(type.getNumElements()) *
             (isa<FloatType>(type.getElementType()) ? 4 : 8);
  }
  return bytes;
}

/// A full-size model's arguments alone can exceed the memory; say so rather
/// than be killed while filling them. Returns "" when `copies` sets of the
/// arguments of `func` fit.
std::string checkArgumentMemory(func::FuncOp func, size_t copies) {
  double physical = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) *
                    static_cast<double>(::sysconf(_SC_PAGESIZE));
  double bytes = argumentBytes(func) * static_cast<double>(copies);
  if (physical > 0 && bytes > physical) {
    char message[256];
    std::snprintf(message, sizeof(message),
                  "the arguments of @%s need %.1f GiB in the interpreter, "
                  "more than this machine's %.1f GiB of memory; run a "
                  "smaller configuration",
                  func.getSymName().str().c_str(),
                  bytes / (1 << 30), physical / (1 << 30));
    return message;
  }
  return "";
}

/// A file name for a result: its name with characters other than letters,
/// digits, '.', '_' and '-' replaced by '_'.
std::string fileNameFor(const std::string &name) {
  std::string out = name;
  for (char &c : out)
    if (!llvm::isAlnum(c) && c != '.' && c != '_' && c != '-')
      c = '_';
  if (out.empty() || out == "." || out == "..")
    out = "_" + out;
  return out;
}

int runFunction(ArrayRef<func::FuncOp> funcs, Interpreter &interpreter,
                ArrayRef<ArgumentSources> sources, bool checkFinite,
                const std::string &outputDir, bool print, bool header,
                bool perRank);

int compareFunctions(func::FuncOp before, func::FuncOp after,
                     StringRef afterWhat, const ArgumentSources &sources,
                     bool checkFinite, double tolerance);

/// Everything but the out-of-memory guard of main().
int runMain(int argc, char **argv) {
  cl::OptionCategory category("loom-run options");
  cl::opt<std::string> inputFile(cl::Positional, cl::desc("<file.mlir>"),
                                 cl::Required, cl::cat(category));
  cl::opt<std::string> entry(
      "entry",
      cl::desc("Function to run (default: @main, else the only public "
               "one); with --ranks N, N comma-separated names give each "
               "rank its own (e.g. the stages of a pipeline)"),
      cl::value_desc("name"), cl::cat(category));
  cl::opt<std::string> meshOption(
      "mesh",
      cl::desc("With --ranks: lay the ranks out as the mesh dp=D,pp=P,tp=T "
               "(rank (d*P + p)*T + t, as compiled programs do); 1-D grids "
               "named dp, pp and tp then span that axis"),
      cl::value_desc("dp=D,pp=P,tp=T"), cl::cat(category));
  cl::list<std::string> inputs(
      "input",
      cl::desc("Value of an argument, by its loom.name or argN, from a .npy "
               "file (repeat for each argument)"),
      cl::value_desc("name=file.npy"), cl::cat(category));
  cl::opt<std::string> weights(
      "weights",
      cl::desc("safetensors file holding the loom.param arguments (by name)"),
      cl::value_desc("file"), cl::cat(category));
  cl::opt<std::string> outputDir(
      "output-dir",
      cl::desc("Write each result to DIR/<its loom.name or result<i>>.npy"),
      cl::value_desc("dir"), cl::cat(category));
  cl::opt<bool> print("print", cl::desc("Print the results (NumPy style)"),
                      cl::cat(category));
  cl::opt<bool> checkFinite(
      "check-finite",
      cl::desc("Stop at the first op that produces NaN or Inf and name it"),
      cl::cat(category));
  cl::opt<bool> randomInputs(
      "random-inputs",
      cl::desc("Fill arguments given no value with seeded random values"),
      cl::cat(category));
  cl::opt<uint64_t> seed("seed",
                         cl::desc("Seed of --random-inputs (default 0)"),
                         cl::value_desc("n"), cl::init(0), cl::cat(category));
  cl::opt<bool> entryAll(
      "entry-all",
      cl::desc("Run every public function with a body, in module order "
               "(e.g. the argument-less test functions of StableHLO's "
               "interpreter tests)"),
      cl::cat(category));
  cl::opt<bool> checkSummary(
      "check",
      cl::desc("Print 'checks: N passed, M failed' for the check.* ops run "
               "(a failed check always makes the exit status 1)"),
      cl::cat(category));
  cl::opt<unsigned> numRanks(
      "ranks",
      cl::desc("Run the function as N ranks in one process; shard "
               "communication ops exchange data between them; results go "
               "to DIR/rank<R>/ and are printed per rank"),
      cl::value_desc("n"), cl::init(1), cl::cat(category));
  cl::opt<std::string> compareAfter(
      "compare-after",
      cl::desc("Run the function on seeded random inputs before and after "
               "this pass pipeline (e.g. 'builtin.module(canonicalize)') and "
               "compare the results"),
      cl::value_desc("pipeline"), cl::cat(category));
  cl::opt<std::string> compareWith(
      "compare-with",
      cl::desc("Compare the function with the function of the same name in "
               "another file, on the same seeded random inputs"),
      cl::value_desc("file.mlir"), cl::cat(category));
  cl::opt<double> tolerance(
      "tolerance",
      cl::desc("With --compare-after/--compare-with: an element differs "
               "when |after - before| > T + T * |before| (default 1e-6)"),
      cl::value_desc("T"), cl::init(1e-6), cl::cat(category));
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "loom-run: the reference interpreter of loom IR\n\n"
      "  loom-run model.mlir --input x=x.npy --weights model.safetensors "
      "--print\n");

  bool comparing = !compareAfter.empty() || !compareWith.empty();
  if (comparing) {
    if (!compareAfter.empty() && !compareWith.empty())
      return fail("--compare-after and --compare-with exclude each other");
    if (entryAll || numRanks.getNumOccurrences() || !outputDir.empty() ||
        print || checkSummary)
      return fail("--compare-after/--compare-with compare one function on "
                  "one rank; they do not go with --entry-all, --ranks, "
                  "--output-dir, --print or --check");
    if (!(tolerance >= 0))
      return fail("--tolerance must be a non-negative number");
  } else if (tolerance.getNumOccurrences()) {
    return fail("--tolerance is the tolerance of --compare-after or "
                "--compare-with");
  }
  if (seed.getNumOccurrences() && !randomInputs && !comparing)
    return fail("--seed is the seed of --random-inputs; add --random-inputs");

  bool perRank = numRanks.getNumOccurrences() > 0;
  if (numRanks == 0)
    return fail("--ranks must be at least 1");
  if (perRank && entryAll)
    return fail("--ranks runs one function; use --entry NAME instead of "
                "--entry-all");
  // Rank R's inputs: its own (NAME@R=FILE) and those for every rank
  // (NAME=FILE) that it is not given its own value for.
  std::vector<std::pair<std::string, std::string>> common;
  std::vector<std::vector<std::pair<std::string, std::string>>> own(numRanks);
  for (const std::string &binding : inputs) {
    auto [name, path] = StringRef(binding).split('=');
    name = name.trim();
    if (!StringRef(binding).contains('=') || name.empty() || path.empty())
      return fail("invalid --input '" + binding +
                  "': expected NAME=FILE.npy, e.g. --input x=x.npy");
    if (name.contains('@')) {
      auto [argName, rankText] = name.rsplit('@');
      unsigned rank = 0;
      if (argName.trim().empty() || rankText.trim().getAsInteger(10, rank))
        return fail("invalid --input '" + binding +
                    "': expected NAME@RANK=FILE.npy, e.g. --input x@1=x1.npy");
      if (rank >= numRanks)
        return fail("--input '" + binding + "' names rank " +
                    std::to_string(rank) + ", but there are " +
                    std::to_string(numRanks) + " rank(s) (--ranks)");
      own[rank].emplace_back(argName.trim().str(), path.str());
      continue;
    }
    common.emplace_back(name.str(), path.str());
  }
  SmallVector<ArgumentSources> sources(numRanks);
  for (unsigned r = 0; r < numRanks; ++r) {
    sources[r].inputs = own[r];
    for (const auto &binding : common)
      if (llvm::none_of(own[r], [&](const auto &o) {
            return o.first == binding.first;
          }))
        sources[r].inputs.push_back(binding);
    sources[r].weightsPath = weights;
    if (randomInputs || comparing)
      sources[r].randomSeed = seed;
  }

  DialectRegistry registry;
  mlir::loom::registerAllDialects(registry);
  // --compare-after names passes.
  mlir::loom::registerAllPasses();
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  std::string errorMessage;
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(inputFile);
  if (!buffer)
    return fail("cannot open '" + inputFile +
                "': " + buffer.getError().message());
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1; // The parser or verifier reported why.

  SmallVector<func::FuncOp> entries;
  if (entryAll) {
    if (!entry.empty())
      return fail("--entry and --entry-all exclude each other");
    if (!outputDir.empty())
      return fail("--output-dir writes the results of one function; use "
                  "--entry NAME instead of --entry-all");
    for (func::FuncOp f : module->getOps<func::FuncOp>())
      if (f.isPublic() && !f.isExternal())
        entries.push_back(f);
    if (entries.empty())
      return fail("--entry-all: the module has no public function with a "
                  "body to run");
  } else {
    SmallVector<StringRef> names;
    StringRef(entry).split(names, ',');
    if (names.size() > 1 && (comparing || names.size() != numRanks))
      return fail("--entry lists " + std::to_string(names.size()) +
                  " functions: a list gives one function per rank and needs "
                  "--ranks " + std::to_string(names.size()));
    for (StringRef name : names) {
      std::string error;
      func::FuncOp func = findEntry(*module, name.trim(), error);
      if (!func)
        return fail(error);
      if (func.isExternal())
        return fail("@" + func.getSymName().str() + " has no body to run");
      entries.push_back(func);
    }
  }

  if (comparing) {
    func::FuncOp before = entries.front();
    OwningOpRef<ModuleOp> other;
    std::string afterWhat;
    if (!compareAfter.empty()) {
      afterWhat = "after the pipeline";
      std::string parseErrors;
      llvm::raw_string_ostream errorStream(parseErrors);
      FailureOr<OpPassManager> parsed =
          parsePassPipeline(compareAfter, errorStream);
      if (failed(parsed))
        return fail("invalid --compare-after pipeline '" + compareAfter +
                    "': " + StringRef(parseErrors).trim().str());
      PassManager pm(&context, parsed->getOpAnchorName());
      static_cast<OpPassManager &>(pm) = std::move(*parsed);
      other = module->clone();
      if (failed(pm.run(*other)))
        return fail("the --compare-after pipeline failed (see the "
                    "diagnostics above)");
    } else {
      afterWhat = "in " + compareWith;
      auto otherBuffer = llvm::MemoryBuffer::getFile(compareWith);
      if (!otherBuffer)
        return fail("cannot open '" + compareWith +
                    "': " + otherBuffer.getError().message());
      // Its own source manager: the parser reads the main buffer. Later
      // diagnostics at its ops reach the handler of the first file, which
      // loads the file it names.
      llvm::SourceMgr otherMgr;
      otherMgr.AddNewSourceBuffer(std::move(*otherBuffer), llvm::SMLoc());
      SourceMgrDiagnosticHandler otherHandler(otherMgr, &context);
      other = parseSourceFile<ModuleOp>(otherMgr, &context);
      if (!other)
        return 1;
    }
    std::string error;
    func::FuncOp after = findEntry(*other, before.getSymName(), error);
    if (!after)
      return fail(afterWhat + ": " + error);
    if (after.isExternal())
      return fail("@" + after.getSymName().str() + " has no body " +
                  afterWhat);
    return compareFunctions(before, after, afterWhat, sources.front(),
                            checkFinite, tolerance);
  }

  InterpreterOptions options;
  options.checkFinite = checkFinite;
  if (!meshOption.empty()) {
    options.mesh.assign(3, 1);
    SmallVector<StringRef> parts;
    StringRef(meshOption).split(parts, ',', -1, false);
    for (StringRef part : parts) {
      auto [key, value] = part.split('=');
      int64_t n = 0;
      key = key.trim();
      int axis = key == "dp" ? 0 : key == "pp" ? 1 : key == "tp" ? 2 : -1;
      if (axis < 0 || value.trim().getAsInteger(10, n) || n < 1)
        return fail("invalid --mesh '" + meshOption +
                    "': expected dp=D,pp=P,tp=T with sizes >= 1");
      options.mesh[axis] = n;
    }
    if (options.mesh[0] * options.mesh[1] * options.mesh[2] !=
        static_cast<int64_t>(numRanks))
      return fail("--mesh " + meshOption + " has " +
                  std::to_string(options.mesh[0] * options.mesh[1] *
                                 options.mesh[2]) +
                  " ranks, but --ranks is " + std::to_string(numRanks));
  }
  Interpreter interpreter(options);
  int status = 0;
  if (entries.size() > 1 && !entryAll) {
    status = runFunction(entries, interpreter, sources, checkFinite, outputDir,
                         print, /*header=*/false, perRank);
  } else {
    for (func::FuncOp func : entries) {
      if (int rc = runFunction(func, interpreter, sources, checkFinite,
                               outputDir, print, /*header=*/entryAll, perRank))
        status = rc;
      if (status && !entryAll)
        break;
    }
  }
  unsigned failedChecks = interpreter.getChecksFailed();
  if (checkSummary)
    llvm::outs() << "checks: " << interpreter.getChecksPassed()
                 << " passed, " << failedChecks << " failed\n";
  if (failedChecks && !status)
    status = 1;
  return status;
}

/// Binds the arguments of `funcs` (one function, or one per rank), runs
/// them and writes or prints their results.
int runFunction(ArrayRef<func::FuncOp> funcs, Interpreter &interpreter,
                ArrayRef<ArgumentSources> sources, bool checkFinite,
                const std::string &outputDir, bool print, bool header,
                bool perRank) {
  auto funcOf = [&](size_t r) { return funcs.size() == 1 ? funcs[0] : funcs[r]; };
  func::FuncOp func = funcs.front();

  if (std::string err = checkArgumentMemory(func, sources.size());
      !err.empty())
    return fail(err);

  SmallVector<func::FuncOp> perRankFuncs;
  for (size_t r = 0; r < sources.size(); ++r)
    perRankFuncs.push_back(funcOf(r));
  SmallVector<SmallVector<Tensor>> argsPerRank(sources.size());
  for (auto [r, rankSources] : llvm::enumerate(sources)) {
    std::string prefix = perRank ? "rank " + std::to_string(r) + ": " : "";
    SmallVector<Tensor> &args = argsPerRank[r];
    func::FuncOp func = funcOf(r);
    // One function per rank: an input binds on the ranks whose function
    // has that argument (it must name an argument of one of them).
    ArgumentSources filtered = rankSources;
    if (funcs.size() > 1) {
      auto hasArgument = [](func::FuncOp f, StringRef name) {
        for (unsigned i = 0; i < f.getNumArguments(); ++i)
          if (getArgumentName(f, i) == name)
            return true;
        return false;
      };
      for (const auto &input : rankSources.inputs)
        if (llvm::none_of(funcs, [&](func::FuncOp f) {
              return hasArgument(f, input.first);
            }))
          return fail("--input names '" + input.first +
                      "', which is an argument of none of the --entry "
                      "functions");
      llvm::erase_if(filtered.inputs, [&](const auto &input) {
        return !hasArgument(func, input.first);
      });
    }
    if (std::string err = bindArguments(func, filtered, args); !err.empty())
      return fail(prefix + err);
    if (checkFinite) {
      for (auto [i, arg] : llvm::enumerate(args)) {
        if (!arg.isFloat())
          continue;
        for (float v : arg.floats)
          if (!std::isfinite(v))
            return fail(prefix + "--check-finite: argument '" +
                        getArgumentName(func, i) + "' holds " +
                        (std::isnan(v) ? "NaN" : "Inf"));
      }
    }
  }

  FailureOr<SmallVector<SmallVector<Tensor>>> resultsPerRank =
      interpreter.runRanks(perRankFuncs, std::move(argsPerRank));
  if (failed(resultsPerRank))
    return 1;

  for (auto [r, results] : llvm::enumerate(*resultsPerRank)) {
    func::FuncOp func = funcOf(r);
    if (!outputDir.empty()) {
      SmallString<256> dir(outputDir);
      if (perRank)
        llvm::sys::path::append(dir, "rank" + std::to_string(r));
      if (std::error_code ec = llvm::sys::fs::create_directories(dir))
        return fail("cannot create --output-dir '" + std::string(dir) +
                    "': " + ec.message());
      std::set<std::string> used;
      for (auto [i, result] : llvm::enumerate(results)) {
        std::string name = fileNameFor(getResultName(func, i));
        if (!used.insert(name).second) {
          name = "result" + std::to_string(i);
          used.insert(name);
        }
        SmallString<256> path(dir);
        llvm::sys::path::append(path, name + ".npy");
        if (std::string err =
                ::loom::npy::writeFile(std::string(path), toNpy(result));
            !err.empty())
          return fail(err);
      }
    }
    if (print) {
      if (header && !results.empty())
        llvm::outs() << "@" << func.getSymName() << ":\n";
      for (auto [i, result] : llvm::enumerate(results)) {
        if (perRank)
          llvm::outs() << "rank " << r << ": ";
        llvm::outs() << getResultName(func, i) << " : "
                     << result.typeString() << "\n";
        printTensor(llvm::outs(), result);
      }
    }
  }
  return 0;
}

/// Element `i` of `t` as a double.
double elementAt(const Tensor &t, size_t i) {
  return t.isFloat() ? static_cast<double>(t.floats[i])
                     : static_cast<double>(t.ints[i]);
}

/// Runs `before` and `after` on the same arguments (bound by position from
/// the types of `after`, whose shapes a pipeline may have refined) and
/// prints the largest differences of each result.
int compareFunctions(func::FuncOp before, func::FuncOp after,
                     StringRef afterWhat, const ArgumentSources &sources,
                     bool checkFinite, double tolerance) {
  std::string name = "@" + before.getSymName().str();
  FunctionType beforeType = before.getFunctionType();
  FunctionType afterType = after.getFunctionType();
  if (beforeType.getNumInputs() != afterType.getNumInputs())
    return fail(name + " has " + std::to_string(beforeType.getNumInputs()) +
                " argument(s), but " + std::to_string(afterType.getNumInputs()) +
                " " + afterWhat.str());
  if (beforeType.getNumResults() != afterType.getNumResults())
    return fail(name + " has " + std::to_string(beforeType.getNumResults()) +
                " result(s), but " +
                std::to_string(afterType.getNumResults()) + " " +
                afterWhat.str());
  auto elementType = [](Type t) {
    auto shaped = dyn_cast<ShapedType>(t);
    return shaped ? shaped.getElementType() : t;
  };
  auto typeText = [](Type t) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << t;
    return text;
  };
  for (unsigned i = 0; i < beforeType.getNumResults(); ++i)
    if (elementType(beforeType.getResult(i)) !=
        elementType(afterType.getResult(i)))
      return fail("result '" + getResultName(before, i) + "' of " + name +
                  " is " + typeText(beforeType.getResult(i)) + ", but " +
                  typeText(afterType.getResult(i)) + " " + afterWhat.str());

  // The arguments are held once more while the "before" run copies them.
  if (std::string err = checkArgumentMemory(after, 2); !err.empty())
    return fail(err);
  SmallVector<Tensor> args;
  if (std::string err = bindArguments(after, sources, args); !err.empty())
    return fail(err);
  for (auto [i, arg] : llvm::enumerate(args)) {
    Type t = beforeType.getInput(i);
    auto type = dyn_cast<RankedTensorType>(t);
    bool ok = type && elementType(afterType.getInput(i)) ==
                          type.getElementType() &&
              type.getRank() == arg.rank();
    for (int64_t d = 0; ok && d < arg.rank(); ++d)
      ok = type.isDynamicDim(d) || type.getDimSize(d) == arg.shape[d];
    if (!ok)
      return fail("argument " + std::to_string(i) + " ('" +
                  getArgumentName(before, i) + "') of " + name + " is " +
                  typeText(t) + ", which does not take the " +
                  arg.typeString() + " made for its type " +
                  typeText(afterType.getInput(i)) + " " + afterWhat.str());
  }

  InterpreterOptions options;
  options.checkFinite = checkFinite;
  Interpreter beforeInterpreter(options), afterInterpreter(options);
  FailureOr<SmallVector<Tensor>> beforeResults =
      beforeInterpreter.run(before, args);
  if (failed(beforeResults))
    return 1;
  FailureOr<SmallVector<Tensor>> afterResults =
      afterInterpreter.run(after, std::move(args));
  if (failed(afterResults))
    return 1;

  bool equivalent = true;
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(*beforeResults, *afterResults))) {
    const Tensor &b = std::get<0>(pair);
    const Tensor &a = std::get<1>(pair);
    llvm::outs() << "result " << getResultName(before, i) << ": ";
    if (b.shape != a.shape) {
      llvm::outs() << "shape " << b.typeString() << " before, "
                   << a.typeString() << " " << afterWhat << "\n";
      equivalent = false;
      continue;
    }
    const double inf = std::numeric_limits<double>::infinity();
    double maxAbs = 0, maxRel = 0;
    for (size_t e = 0, n = static_cast<size_t>(b.size()); e < n; ++e) {
      double x = elementAt(b, e), y = elementAt(a, e);
      double abs = 0, rel = 0;
      if (std::isnan(x) || std::isnan(y)) {
        if (!(std::isnan(x) && std::isnan(y)))
          abs = rel = inf;
      } else if (x != y) {
        abs = std::fabs(y - x); // inf - inf is NaN: x != y, so one is finite
        if (std::isnan(abs))
          abs = inf;
        rel = x == 0 ? inf : abs / std::fabs(x);
      }
      if (!(abs <= tolerance + tolerance * std::fabs(x)))
        equivalent = false;
      maxAbs = std::max(maxAbs, abs);
      maxRel = std::max(maxRel, rel);
    }
    llvm::outs() << "max abs diff " << llvm::format("%g", maxAbs)
                 << ", max rel diff " << llvm::format("%g", maxRel) << "\n";
  }
  llvm::outs() << "equivalent: " << (equivalent ? "yes" : "no")
               << " (tolerance " << llvm::format("%g", tolerance) << ")\n";
  return equivalent ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // InitLLVM installs a new-handler that aborts; without it an allocation
  // that fails throws std::bad_alloc, which the interpreter reports at the
  // op (and the handler below reports elsewhere).
  std::set_new_handler(nullptr);
  try {
    return runMain(argc, argv);
  } catch (const std::bad_alloc &) {
    // A tensor larger than memory (a huge declared shape, --random-inputs
    // for a full-size model): an error, not a crash.
    return fail("out of memory: the function's tensors do not fit (loom-run "
                "keeps every value in memory; try smaller shapes)");
  }
}

//===- ProgramPlay.cpp - The compiled step played on a cluster ------------===//
//
// See ProgramPlay.h. The stage programs are played together: each runs
// until a `wait` on a receive whose send no stage has played yet (or on a
// pipeline-axis all-reduce not every stage has started), then the next
// one, until all have returned; a round in which none moves is an error
// (a receive nobody sends).
//
//===----------------------------------------------------------------------===//

#include "loom/Planner/ProgramPlay.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/MeshGrid.h"
#include "loom/Dialect/LoomRT/IR/LoomRTDialect.h"
#include "loom/Planner/CostModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <map>
#include <tuple>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::planner;

namespace {

/// A started transfer: when it completes, once known.
struct Handle {
  /// A receive's completion is its send's arrival (and not before it was
  /// posted); a pipeline all-reduce's, the last stage's start plus its
  /// time.
  enum class Kind { done, recv, ppAllReduce } kind = Kind::done;
  double issued = 0, done = 0;
  std::tuple<int64_t, int64_t, int64_t> message; // recv: from, to, tag
  int64_t collective = 0; // ppAllReduce: its index in every stage
  double duration = 0;    // ppAllReduce
  std::string track, name;
};

struct Stage {
  func::FuncOp func;
  int64_t index;
  Block::iterator pc, end;
  /// The compute stream's clock; the channels' (all-reduces per axis,
  /// sends per peer, the copy stream) free times.
  double now = 0;
  double channel[::loom::kNumMeshAxes] = {0, 0, 0};
  std::map<int64_t, double> sendChannel;
  double copyChannel = 0;
  double busy = 0, waited = 0;
  int64_t ppCollectives = 0;
  /// The arena's live bytes, each buffer rounded up to the memory plan's
  /// alignment (`loomrt.alignment`) as the plan and the runtime count it.
  double liveBytes = 0;
  int64_t alignment = 1;
  llvm::DenseMap<Value, Handle> handles;
};

class Player {
public:
  Player(const ClusterSpec &spec, ::loom::Mesh mesh, bool record,
         SimResult &result)
      : spec(spec), mesh(mesh), record(record),
        result(result), cost(spec, NumberFormat::fp32) {}

  /// Plays `funcs` (in stage order) to the end.
  LogicalResult play(ArrayRef<func::FuncOp> funcs, std::string &error);

private:
  /// Plays `op` on `stage`; false when it must wait for another stage.
  bool step(Stage &stage, Operation &op, std::string &error);
  void span(Stage &stage, StringRef track, const Twine &name, double begin,
            double end) {
    if (record && end > begin)
      result.events.push_back(
          {stage.index, track.str(), name.str(), begin, end});
  }
  void memory(Stage &stage, double delta) {
    stage.liveBytes += delta;
    auto k = static_cast<size_t>(stage.index);
    result.peakBytes[k] = std::max(result.peakBytes[k], stage.liveBytes);
    if (record)
      result.memory[k].push_back({stage.now, stage.liveBytes});
  }

  const ClusterSpec &spec;
  ::loom::Mesh mesh;
  bool record;
  SimResult &result;
  /// Links (all-reduces, sends); ops are priced by computeOpTime.
  CostModel cost;
  /// Sends played: (from stage, to stage, tag) -> arrival.
  std::map<std::tuple<int64_t, int64_t, int64_t>, double> arrivals;
  /// Pipeline-axis all-reduces: index -> (stages started, latest start).
  std::map<int64_t, std::pair<int64_t, double>> ppStarts;
};

bool Player::step(Stage &stage, Operation &op, std::string &error) {
  auto axisOf = [](auto collective) {
    return static_cast<int>(collective.getMeshAxis());
  };
  auto groupName = [](int axis) {
    return std::string(::loom::meshAxisName(::loom::kMeshAxes[axis]));
  };
  auto arenaBytes = [&](Type type) {
    return static_cast<double>(
        llvm::alignTo(loomrt::bufferBytes(type), stage.alignment));
  };
  if (auto alloc = dyn_cast<loomrt::AllocOp>(op)) {
    if (alloc.getCategory() != "swap")
      memory(stage, arenaBytes(alloc.getType()));
    return true;
  }
  if (auto dealloc = dyn_cast<loomrt::DeallocOp>(op)) {
    auto alloc = dealloc.getBuffer().getDefiningOp<loomrt::AllocOp>();
    if (alloc && alloc.getCategory() != "swap")
      memory(stage, -arenaBytes(dealloc.getBuffer().getType()));
    return true;
  }
  if (isa<loomrt::ViewOp, loomrt::ConstantOp, loomrt::GridIndexOp,
          func::ReturnOp>(op))
    return true;

  if (auto start = dyn_cast<loomrt::AllReduceStartOp>(op)) {
    int axis = axisOf(start);
    double bytes = static_cast<double>(
        loomrt::bufferBytes(start.getBuffer().getType()));
    ::loom::MeshAxis meshAxis = ::loom::kMeshAxes[axis];
    int64_t n = mesh[meshAxis];
    // r = (d*pp + p)*tp + t: the stride of each axis's neighbours.
    int64_t stride = meshAxis == ::loom::MeshAxis::Tp   ? 1
                     : meshAxis == ::loom::MeshAxis::Pp ? mesh.tp
                                                        : mesh.tp * mesh.pp;
    double duration = cost.allReduceTime(bytes, n, stride);
    Handle h;
    h.track = groupName(axis);
    h.name = groupName(axis) + " all_reduce";
    if (meshAxis == ::loom::MeshAxis::Pp && n > 1) {
      // Every stage takes part: it completes after the last one starts.
      h.kind = Handle::Kind::ppAllReduce;
      h.collective = stage.ppCollectives++;
      h.duration = duration;
      h.issued = stage.now;
      auto &[started, latest] = ppStarts[h.collective];
      started += 1;
      latest = std::max(latest, stage.now);
    } else {
      double begin = std::max(stage.now, stage.channel[axis]);
      h.issued = begin;
      h.done = begin + duration;
      stage.channel[axis] = h.done;
    }
    stage.handles[start.getHandle()] = h;
    return true;
  }
  if (auto send = dyn_cast<loomrt::SendStartOp>(op)) {
    int64_t to = send.getPeer();
    double bytes =
        static_cast<double>(loomrt::bufferBytes(send.getBuffer().getType()));
    double &free = stage.sendChannel[to];
    double begin = std::max(stage.now, free);
    // Every tensor-parallel rank of the stage sends its own copy at once.
    double arrival = begin + cost.sendTime(bytes, stage.index * mesh.tp,
                                          to * mesh.tp, mesh.tp);
    free = arrival;
    arrivals[{stage.index, to, send.getTag()}] = arrival;
    Handle h;
    h.issued = begin;
    h.done = arrival;
    h.track = "pp";
    h.name = "pp send";
    stage.handles[send.getHandle()] = h;
    return true;
  }
  if (auto recv = dyn_cast<loomrt::RecvStartOp>(op)) {
    Handle h;
    h.kind = Handle::Kind::recv;
    h.issued = stage.now;
    h.message = {recv.getPeer(), stage.index, recv.getTag()};
    h.track = "pp";
    h.name = "pp recv";
    stage.handles[recv.getHandle()] = h;
    return true;
  }
  if (isa<loomrt::SwapOutOp, loomrt::SwapInOp>(op)) {
    if (spec.hostLink.bandwidth <= 0) {
      error = "the program swaps activations to host memory (loom-swap), "
              "but the cluster spec '" +
              spec.name + "' gives no host_link to time the copies";
      return false;
    }
    double bytes =
        static_cast<double>(loomrt::bufferBytes(op.getOperand(0).getType()));
    double begin = std::max(stage.now, stage.copyChannel);
    Handle h;
    h.issued = begin;
    h.done = begin + spec.hostLink.latency +
             bytes / (spec.hostLink.bandwidth * spec.efficiency.comm);
    stage.copyChannel = h.done;
    h.track = "copy";
    h.name = isa<loomrt::SwapOutOp>(op) ? "swap out" : "swap in";
    stage.handles[op.getResult(0)] = h;
    return true;
  }
  if (auto wait = dyn_cast<loomrt::WaitOp>(op)) {
    auto it = stage.handles.find(wait.getHandle());
    if (it == stage.handles.end()) {
      error = "a loomrt.wait on a handle no start op of stage " +
              std::to_string(stage.index) + " made";
      return false;
    }
    Handle &h = it->second;
    if (h.kind == Handle::Kind::recv) {
      auto sent = arrivals.find(h.message);
      if (sent == arrivals.end())
        return false; // the sender has not played it yet
      h.done = std::max(h.issued, sent->second);
    } else if (h.kind == Handle::Kind::ppAllReduce) {
      auto &[started, latest] = ppStarts[h.collective];
      if (started < mesh.pp)
        return false;
      h.issued = std::max(h.issued, latest);
      h.done = h.issued + h.duration;
    }
    span(stage, h.track, h.name, h.issued, h.done);
    if (h.done > stage.now) {
      span(stage, "compute", "wait " + h.name, stage.now, h.done);
      stage.waited += h.done - stage.now;
      stage.now = h.done;
    }
    stage.handles.erase(it);
    return true;
  }
  if (!loomrt::isComputeOp(&op)) {
    error = "the play has no time for '" + op.getName().getStringRef().str() +
            "' (stage " + std::to_string(stage.index) + ")";
    return false;
  }
  double duration = computeOpTime(&op, spec);
  span(stage, "compute", loomrt::traceSpanName(&op), stage.now,
       stage.now + duration);
  stage.now += duration;
  stage.busy += duration;
  return true;
}

LogicalResult Player::play(ArrayRef<func::FuncOp> funcs, std::string &error) {
  std::vector<Stage> stages(funcs.size());
  for (size_t k = 0; k < funcs.size(); ++k) {
    func::FuncOp func = funcs[k];
    stages[k].func = func;
    stages[k].index = static_cast<int64_t>(k);
    stages[k].pc = func.getBody().front().begin();
    stages[k].end = func.getBody().front().end();
    if (auto a = func->getAttrOfType<IntegerAttr>("loomrt.alignment"))
      stages[k].alignment = std::max<int64_t>(a.getInt(), 1);
  }
  result.peakBytes.assign(stages.size(), 0);
  result.memory.assign(stages.size(), {});
  bool moved = true;
  while (moved) {
    moved = false;
    for (Stage &stage : stages)
      while (stage.pc != stage.end) {
        if (!step(stage, *stage.pc, error)) {
          if (!error.empty())
            return failure();
          break;
        }
        ++stage.pc;
        moved = true;
      }
  }
  for (Stage &stage : stages)
    if (stage.pc != stage.end) {
      std::string what;
      llvm::raw_string_ostream os(what);
      stage.pc->print(os, OpPrintingFlags().skipRegions());
      error = "stage " + std::to_string(stage.index) +
              " waits for a transfer no stage starts: " + what;
      return failure();
    }
  double slowest = 0;
  for (Stage &stage : stages) {
    result.stepTime = std::max(result.stepTime, stage.now);
    result.busy.push_back(stage.busy);
    if (stage.busy >= slowest) {
      slowest = stage.busy;
      result.exposedComm = stage.waited;
    }
  }
  result.bubbleFraction =
      result.stepTime > 0 ? 1.0 - slowest / result.stepTime : 0.0;
  return success();
}

} // namespace

double mlir::loom::planner::computeOpTime(Operation *op,
                                          const ClusterSpec &spec) {
  if (!loomrt::isComputeOp(op))
    return 0;
  loomrt::OpWork work = loomrt::computeWork(op);
  // Elementwise and normalisation work: its bytes at the memory rate or
  // its arithmetic at the vector rate, whichever is slower (a launch each);
  // a GEMM's epilogue likewise, inside the GEMM's launch.
  CostModel cost(spec, work.bf16 ? NumberFormat::bf16 : NumberFormat::fp32);
  return cost.kernelTime(work.flops, work.bytes, work.gemm) +
         (work.epilogueBytes > 0
              ? cost.kernelTime(work.epilogueFlops, work.epilogueBytes,
                                /*gemm=*/false, /*launch=*/false)
              : 0.0);
}

FailureOr<PhaseTimes>
mlir::loom::planner::stepPhaseTimes(ModuleOp module, const ClusterSpec &spec,
                                    std::string &error) {
  Operation *at = nullptr;
  FailureOr<SmallVector<func::FuncOp>> funcs =
      getStagePrograms(module, error, at);
  if (failed(funcs))
    return failure();
  if (funcs->size() != 1) {
    error = "the module holds a step per pipeline stage, not one";
    return failure();
  }
  func::FuncOp step = funcs->front();
  // What a written buffer is: the argument or allocation under its views.
  enum class Writes { other, loss, optimizer };
  auto classify = [&](Value v) {
    v = loomrt::rootBuffer(v);
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      unsigned i = arg.getArgNumber();
      if (step.getArgAttr(i, "loomrt.in_place"))
        return Writes::optimizer;
      auto result = step.getArgAttrOfType<IntegerAttr>(i, "loomrt.result");
      return result && result.getInt() == 0 ? Writes::loss : Writes::other;
    }
    if (auto alloc = v.getDefiningOp<loomrt::AllocOp>())
      if (alloc.getCategory() == "optimizer")
        return Writes::optimizer;
    return Writes::other;
  };
  auto writes = [&](Operation *op, Writes kind) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return false;
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    return llvm::any_of(list, [&](const MemoryEffects::EffectInstance &e) {
      return isa<MemoryEffects::Write>(e.getEffect()) && e.getValue() &&
             classify(e.getValue()) == kind;
    });
  };
  Block &body = step.getBody().front();
  Operation *lastLossWrite = nullptr;
  for (Operation &op : body)
    if (loomrt::isComputeOp(&op) && writes(&op, Writes::loss))
      lastLossWrite = &op;
  if (!lastLossWrite) {
    error = "no op of @" + step.getName().str() + " writes the loss";
    return failure();
  }
  PhaseTimes times;
  bool forward = true;
  for (Operation &op : body) {
    if (!loomrt::isComputeOp(&op))
      continue;
    double t = computeOpTime(&op, spec);
    bool gemm = isa<loomrt::GemmOp>(op);
    if (forward)
      (gemm ? times.forwardGemm : times.forwardOther) += t;
    else if (writes(&op, Writes::optimizer))
      times.optimizer += t;
    else
      (gemm ? times.backwardGemm : times.backwardOther) += t;
    if (&op == lastLossWrite)
      forward = false;
  }
  return times;
}

FailureOr<SimResult> mlir::loom::planner::playProgram(ModuleOp module,
                                                      const ClusterSpec &spec,
                                                      bool recordEvents,
                                                      std::string &error) {
  Operation *at = nullptr;
  FailureOr<SmallVector<func::FuncOp>> funcs =
      getStagePrograms(module, error, at);
  FailureOr<::loom::Mesh> mesh = getMesh(module);
  if (failed(funcs) || failed(mesh)) {
    if (error.empty())
      error = "the module's device mesh @" + kMeshGridName.str() +
              " cannot be read";
    return failure();
  }
  if (funcs->size() == 1 && mesh->pp > 1) {
    error = llvm::formatv("the module holds one step program for pp = {0}",
                          mesh->pp)
                .str();
    return failure();
  }
  SimResult result;
  Player player(spec, *mesh, recordEvents, result);
  if (failed(player.play(*funcs, error)))
    return failure();
  return result;
}

std::vector<int64_t> mlir::loom::planner::playedRanks(ModuleOp module) {
  FailureOr<::loom::Mesh> mesh = getMesh(module);
  int64_t pp = succeeded(mesh) ? std::max<int64_t>(mesh->pp, 1) : 1;
  int64_t tp = succeeded(mesh) ? std::max<int64_t>(mesh->tp, 1) : 1;
  std::vector<int64_t> ranks;
  for (int64_t k = 0; k < pp; ++k)
    ranks.push_back(k * tp);
  return ranks;
}

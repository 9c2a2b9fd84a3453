//===- Simulator.cpp - Discrete-event play of a pipelined step ------------===//

#include "loom/Planner/Simulator.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir::loom::planner;

namespace {

struct Task {
  bool forward;
  int64_t micro;
};

/// Stage k's order of work: 1F1B runs min(P-k-1, M) forwards to fill the
/// pipeline, then alternates one forward and one backward, then drains.
std::vector<Task> order(int64_t k, int64_t P, int64_t M, SimSchedule s) {
  std::vector<Task> tasks;
  if (s == SimSchedule::gpipe) {
    for (int64_t m = 0; m < M; ++m)
      tasks.push_back({true, m});
    for (int64_t m = 0; m < M; ++m)
      tasks.push_back({false, m});
    return tasks;
  }
  int64_t warmup = std::min(P - k - 1, M);
  int64_t f = 0, b = 0;
  for (; f < warmup; ++f)
    tasks.push_back({true, f});
  while (f < M) {
    tasks.push_back({true, f++});
    tasks.push_back({false, b++});
  }
  while (b < M)
    tasks.push_back({false, b++});
  return tasks;
}

std::string escape(llvm::StringRef s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

} // namespace

SimResult mlir::loom::planner::simulateStep(
    const std::vector<StageWork> &stages, int64_t M, SimSchedule schedule,
    bool recordEvents) {
  int64_t P = static_cast<int64_t>(stages.size());
  SimResult result;
  result.busy.assign(P, 0.0);
  // Completion of each forward / backward (-1: not yet).
  std::vector<std::vector<double>> fwdDone(P, std::vector<double>(M, -1)),
      bwdDone(P, std::vector<double>(M, -1));
  std::vector<std::vector<Task>> tasks(P);
  for (int64_t k = 0; k < P; ++k)
    tasks[k] = order(k, P, M, schedule);
  std::vector<size_t> next(P, 0);
  std::vector<double> freeAt(P, 0.0);
  // Device memory: changes per stage as (time, delta), summed below.
  std::vector<std::vector<std::pair<double, double>>> deltas(P);
  for (int64_t k = 0; k < P; ++k)
    deltas[k].push_back({0.0, stages[k].baseBytes});
  auto record = [&](int64_t k, const char *track, std::string name, double b,
                    double e) {
    if (recordEvents && e > b)
      result.events.push_back({k, track, std::move(name), b, e});
  };

  // List scheduling: run each stage's next task whose input has arrived,
  // until every task ran (both schedules are deadlock-free).
  bool progress = true;
  while (progress) {
    progress = false;
    for (int64_t k = 0; k < P; ++k) {
      while (next[k] < tasks[k].size()) {
        const Task &t = tasks[k][next[k]];
        const StageWork &w = stages[k];
        double ready = 0;
        if (t.forward && k > 0) {
          if (fwdDone[k - 1][t.micro] < 0)
            break;
          ready = fwdDone[k - 1][t.micro] + stages[k - 1].sendNext;
          record(k - 1, "pp", "send act mb " + std::to_string(t.micro),
                 fwdDone[k - 1][t.micro], ready);
        } else if (!t.forward) {
          if (k + 1 < P) {
            if (bwdDone[k + 1][t.micro] < 0)
              break;
            ready = bwdDone[k + 1][t.micro] + w.sendNext;
            record(k + 1, "pp", "send grad mb " + std::to_string(t.micro),
                   bwdDone[k + 1][t.micro], ready);
          } else {
            ready = fwdDone[k][t.micro];
          }
        }
        double begin = std::max(freeAt[k], ready);
        double compute = t.forward ? w.forward : w.backward + w.recompute;
        double comm = t.forward ? w.forwardComm : w.backwardComm;
        double end = begin + compute + comm;
        std::string mb = " mb " + std::to_string(t.micro);
        if (t.forward) {
          record(k, "compute", "forward" + mb, begin, begin + compute);
        } else {
          if (w.recompute > 0)
            record(k, "compute", "recompute" + mb, begin, begin + w.recompute);
          record(k, "compute", "backward" + mb, begin + w.recompute,
                 begin + compute);
        }
        record(k, "tp", std::string("exposed tp all-reduce") + mb,
               begin + compute, end);
        (t.forward ? fwdDone : bwdDone)[k][t.micro] = end;
        if (t.forward)
          deltas[k].push_back({begin, w.activationBytes});
        else
          deltas[k].push_back({end, -w.activationBytes});
        result.busy[k] += compute;
        freeAt[k] = end;
        ++next[k];
        progress = true;
      }
    }
  }

  double step = 0;
  // Per stage: communication its compute waited for (exposed tp
  // collectives, the all-reduce past the last backward).
  std::vector<double> exposed(P, 0.0);
  for (int64_t k = 0; k < P; ++k) {
    const StageWork &w = stages[k];
    double pipelineEnd = freeAt[k];
    double lastBackward = w.backward + w.recompute;
    // The gradients go into their buckets; the all-reduce starts with the
    // last backward's first bucket; what it cannot hide runs after it.
    double copiedIn = pipelineEnd + w.bucketCopy;
    record(k, "compute", "gradients into buckets", pipelineEnd, copiedIn);
    double hidden = std::min({w.gradAllReduceHidden, lastBackward,
                              w.gradAllReduce});
    double arBegin = copiedIn - hidden;
    double arEnd = arBegin + w.gradAllReduce;
    double copiedOut = std::max(copiedIn, arEnd) + w.bucketCopy;
    record(k, "compute", "gradients out of buckets", copiedOut - w.bucketCopy,
           copiedOut);
    double updateBegin = copiedOut;
    double end = updateBegin + w.optimizer;
    record(k, "dp", "dp all-reduce", arBegin, arEnd);
    record(k, "compute", "optimizer", updateBegin, end);
    result.busy[k] += w.optimizer + 2.0 * w.bucketCopy;
    step = std::max(step, end);
    exposed[k] = M * (w.forwardComm + w.backwardComm) +
                 std::max(0.0, arEnd - copiedIn);
  }
  result.stepTime = step;
  for (int64_t k = 0; k < P; ++k) {
    // Frees before allocations at the same instant.
    llvm::stable_sort(deltas[k], [](const auto &a, const auto &b) {
      return a.first < b.first || (a.first == b.first && a.second < b.second);
    });
    double bytes = 0, peak = 0;
    std::vector<std::pair<double, double>> series;
    for (auto [time, delta] : deltas[k]) {
      bytes += delta;
      peak = std::max(peak, bytes);
      if (!series.empty() && series.back().first == time)
        series.back().second = bytes;
      else
        series.push_back({time, bytes});
    }
    result.peakBytes.push_back(peak);
    if (recordEvents)
      result.memory.push_back(std::move(series));
  }
  result.exposedComm = *std::max_element(exposed.begin(), exposed.end());
  // The bubble of the busiest stage: its share of the step spent neither
  // computing nor waiting for its own communication.
  int64_t busiest = std::max_element(result.busy.begin(), result.busy.end()) -
                    result.busy.begin();
  result.bubbleFraction =
      step > 0
          ? std::max(0.0, (step - result.busy[busiest] - exposed[busiest]) /
                              step)
          : 0;
  return result;
}

std::string
mlir::loom::planner::writeTrace(const SimResult &result,
                                const std::vector<int64_t> &rankOfStage,
                                llvm::StringRef title) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"source\": \"loom-plan "
        "simulator\", \"plan\": \""
     << escape(title) << "\"}, \"traceEvents\": [\n";
  const char *tracks[] = {"compute", "tp", "pp", "dp"};
  bool first = true;
  auto sep = [&] {
    if (!first)
      os << ",\n";
    first = false;
  };
  for (size_t k = 0; k < rankOfStage.size(); ++k) {
    int64_t pid = rankOfStage[k];
    sep();
    os << "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": " << pid
       << ", \"args\": {\"name\": \"rank " << pid << " (stage " << k
       << ", simulated)\"}}";
    for (int t = 0; t < 4; ++t) {
      sep();
      os << "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": " << pid
         << ", \"tid\": " << t + 1 << ", \"args\": {\"name\": \"" << tracks[t]
         << "\"}}";
    }
  }
  for (const SimEvent &e : result.events) {
    int tid = 1;
    for (int t = 0; t < 4; ++t)
      if (e.track == tracks[t])
        tid = t + 1;
    sep();
    os << "{\"name\": \"" << escape(e.name) << "\", \"cat\": \""
       << (tid == 1 ? "compute" : "comm") << "\", \"ph\": \"X\", \"pid\": "
       << rankOfStage[e.stage] << ", \"tid\": " << tid << ", \"ts\": "
       << llvm::format("%.3f", e.begin * 1e6)
       << ", \"dur\": " << llvm::format("%.3f", (e.end - e.begin) * 1e6)
       << "}";
  }
  // Device memory: one counter track per stage.
  for (auto [k, series] : llvm::enumerate(result.memory))
    for (auto [time, bytes] : series) {
      sep();
      os << "{\"name\": \"device memory\", \"ph\": \"C\", \"pid\": "
         << rankOfStage[k] << ", \"ts\": " << llvm::format("%.3f", time * 1e6)
         << ", \"args\": {\"bytes\": " << llvm::format("%.0f", bytes) << "}}";
    }
  os << "\n]}\n";
  return out;
}

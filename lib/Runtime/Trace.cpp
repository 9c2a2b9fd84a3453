//===- Trace.cpp - Measured timelines and communication statistics --------===//
//
// `--trace FILE` records, per rank, spans on named tracks: the compute
// thread's steps, each kernel and library call of the emitted step (named
// by what it computes and the model's name for it), waits, data loading and
// checkpoint writes on `compute`,
// and every communication from its start call to its completion (seen by
// the communication thread) on `comm <group>` lanes. At the end rank 0
// gathers every rank's spans and writes one Chrome-trace JSON file (opens in
// Perfetto and chrome://tracing): one process per rank, one thread per
// track. Clocks are aligned to rank 0's: each rank estimates its offset
// from ping-pongs with rank 0 (the exchange with the shortest round trip).
//
// `--comm-stats FILE` writes, per rank, the operations, bytes and seconds
// (start to completion, and blocked in wait) per group and per kind.
//
//===----------------------------------------------------------------------===//

#include "RuntimeImpl.h"
#include "loom/Support/AtomicFile.h"

#include <algorithm>
#include <cinttypes>
#include <cstring>

namespace loom {
namespace rt {

namespace {

/// `text` as the inside of a JSON string.
std::string escape(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

/// `value` with `digits` decimals (microseconds in the trace: 3).
std::string number(double value, int digits = 3) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, value);
  return buf;
}

/// Gathers every rank's `text` at rank 0 (empty elsewhere).
std::vector<std::string> gatherText(Context &ctx, const std::string &text) {
  std::vector<std::string> all;
  if (ctx.size == 1) {
    all.push_back(text);
    return all;
  }
  int length = static_cast<int>(text.size());
  std::vector<int> lengths(static_cast<size_t>(ctx.size));
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, ctx.comm);
  std::vector<int> offsets(static_cast<size_t>(ctx.size), 0);
  int total = 0;
  if (ctx.rank == 0)
    for (int r = 0; r < ctx.size; ++r) {
      offsets[static_cast<size_t>(r)] = total;
      total += lengths[static_cast<size_t>(r)];
    }
  std::vector<char> buffer(static_cast<size_t>(total) + 1);
  MPI_Gatherv(text.data(), length, MPI_CHAR, buffer.data(), lengths.data(),
              offsets.data(), MPI_CHAR, 0, ctx.comm);
  if (ctx.rank == 0)
    for (int r = 0; r < ctx.size; ++r)
      all.emplace_back(buffer.data() + offsets[static_cast<size_t>(r)],
                       static_cast<size_t>(lengths[static_cast<size_t>(r)]));
  return all;
}

} // namespace

double Context::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       clockStart)
      .count();
}

void alignClocks(Context &ctx) {
  // Each rank r > 0 in turn: 8 exchanges (r sends, rank 0 answers with its
  // clock); the offset of the shortest round trip assumes the answer was
  // read half-way through it.
  constexpr int kRounds = 8, kTag = 31000;
  for (int r = 1; r < ctx.size; ++r) {
    if (ctx.rank == 0) {
      for (int i = 0; i < kRounds; ++i) {
        char ping;
        MPI_Recv(&ping, 1, MPI_CHAR, r, kTag, ctx.comm, MPI_STATUS_IGNORE);
        double mine = ctx.now();
        MPI_Send(&mine, 1, MPI_DOUBLE, r, kTag, ctx.comm);
      }
    } else if (ctx.rank == r) {
      double best = -1;
      for (int i = 0; i < kRounds; ++i) {
        char ping = 0;
        double sent = ctx.now(), theirs = 0;
        MPI_Send(&ping, 1, MPI_CHAR, 0, kTag, ctx.comm);
        MPI_Recv(&theirs, 1, MPI_DOUBLE, 0, kTag, ctx.comm, MPI_STATUS_IGNORE);
        double back = ctx.now();
        if (best < 0 || back - sent < best) {
          best = back - sent;
          ctx.recorder.clockOffset = theirs - (sent + back) / 2;
        }
      }
    }
  }
}

const char *commKindName(PendingComm::Kind kind) {
  switch (kind) {
  case PendingComm::Kind::AllReduce:
    return "all_reduce";
  case PendingComm::Kind::Send:
    return "send";
  case PendingComm::Kind::Recv:
    return "recv";
  }
  return "?";
}

void recordSpan(Context &ctx, std::string name, const char *track,
                double begin, double end, std::string args) {
  if (!ctx.recorder.tracing)
    return;
  ctx.recorder.spans.push_back(
      {std::move(name), track, begin, end, std::move(args)});
}

void traceMark(Context &ctx) {
  if (ctx.recorder.tracing)
    ctx.recorder.mark = ctx.now();
}

void traceOp(Context &ctx, const char *name) {
  if (ctx.recorder.tracing)
    recordSpan(ctx, name, "compute", ctx.recorder.mark, ctx.now());
}

void recordComm(Context &ctx, const PendingComm &done, double waitBegin,
                double waitEnd) {
  int kind = static_cast<int>(done.kind);
  // A row-sparse all-reduce counts what this rank contributed: its row
  // count, row indices and rows.
  int64_t bytes = done.rowSparse ? done.sentBytes
                  : done.kind == PendingComm::Kind::AllReduce
                      ? done.count * int64_t{sizeof(float)}
                      : done.count;
  CommStat &stat = ctx.recorder.stats[static_cast<int>(done.group)][kind];
  stat.ops += 1;
  stat.bytes += bytes;
  stat.seconds += done.completedAt - done.issuedAt;
  stat.waitSeconds += waitEnd - waitBegin;
  if (!ctx.recorder.tracing)
    return;
  std::string group = groupName(done.group);
  std::string args = "\"bytes\": " + std::to_string(bytes) +
                     ", \"group\": \"" + group + "\"";
  if (done.kind != PendingComm::Kind::AllReduce)
    args += ", \"peer\": " + std::to_string(done.peer) +
            ", \"tag\": " + std::to_string(done.tag);
  std::string name = group + " " + commKindName(done.kind);
  recordSpan(ctx, name, kCommTracks[static_cast<int>(done.group)],
             done.issuedAt, done.completedAt, args);
  recordSpan(ctx, "wait " + name, "compute", waitBegin, waitEnd, args);
}

std::string writeTrace(Context &ctx, const std::string &path) {
  // This rank's events, lanes assigned per communication track so that
  // overlapping operations of one group sit on separate rows.
  std::vector<TraceSpan> spans = ctx.recorder.spans;
  std::stable_sort(spans.begin(), spans.end(),
                   [](const TraceSpan &a, const TraceSpan &b) {
                     return a.begin < b.begin;
                   });
  std::map<std::string, std::vector<double>> laneEnds;
  std::map<std::string, int> tids;
  std::string events;
  auto tidOf = [&](const std::string &track) {
    auto [it, inserted] = tids.try_emplace(track, static_cast<int>(tids.size()) + 1);
    if (inserted)
      events += "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": " +
                std::to_string(ctx.rank) + ", \"tid\": " +
                std::to_string(it->second) + ", \"args\": {\"name\": \"" +
                escape(track) + "\"}},\n";
    return it->second;
  };
  tidOf("compute");
  double offset = ctx.recorder.clockOffset;
  for (const TraceSpan &span : spans) {
    std::string track = span.track;
    if (track != "compute") {
      std::vector<double> &ends = laneEnds[track];
      size_t lane = 0;
      while (lane < ends.size() && ends[lane] > span.begin)
        ++lane;
      if (lane == ends.size())
        ends.push_back(span.end);
      else
        ends[lane] = span.end;
      if (lane > 0)
        track += " #" + std::to_string(lane + 1);
    }
    int tid = tidOf(track);
    events += "{\"name\": \"" + escape(span.name) + "\", \"cat\": \"" +
              (span.track == std::string("compute") ? "compute" : "comm") +
              "\", \"ph\": \"X\", \"pid\": " + std::to_string(ctx.rank) +
              ", \"tid\": " + std::to_string(tid) +
              ", \"ts\": " + number((span.begin + offset) * 1e6) +
              ", \"dur\": " + number((span.end - span.begin) * 1e6) +
              ", \"args\": {" + span.args + "}},\n";
  }
  // The device memory in use: a counter track, as loom-plan --trace's
  // simulated one.
  for (auto [time, bytes] : ctx.recorder.deviceMemory)
    events += "{\"name\": \"device memory\", \"ph\": \"C\", \"pid\": " +
              std::to_string(ctx.rank) +
              ", \"ts\": " + number((time + offset) * 1e6) +
              ", \"args\": {\"bytes\": " + std::to_string(bytes) + "}},\n";
  std::string host = ctx.rank < static_cast<int>(ctx.hostNames.size())
                         ? ctx.hostNames[static_cast<size_t>(ctx.rank)]
                         : "";
  events += "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": " +
            std::to_string(ctx.rank) + ", \"args\": {\"name\": \"rank " +
            std::to_string(ctx.rank) + (host.empty() ? "" : " (" + escape(host) + ")") +
            "\"}},\n{\"name\": \"process_sort_index\", \"ph\": \"M\", "
            "\"pid\": " + std::to_string(ctx.rank) +
            ", \"args\": {\"sort_index\": " + std::to_string(ctx.rank) + "}},\n";
  std::vector<std::string> all = gatherText(ctx, events);
  if (ctx.rank != 0)
    return "";
  std::string json = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  for (const std::string &part : all)
    json += part;
  if (json.size() >= 2 && json.compare(json.size() - 2, 2, ",\n") == 0)
    json.erase(json.size() - 2, 1);
  json += "]}\n";
  return writeFileAtomically(path, json);
}

std::string writeCommStats(Context &ctx, const std::string &path) {
  std::string mine = "    {\"rank\": " + std::to_string(ctx.rank) + ", \"groups\": {";
  const char *kinds[] = {"all_reduce", "send", "recv"};
  auto statJson = [](const CommStat &s) {
    return "{\"ops\": " + std::to_string(s.ops) +
           ", \"bytes\": " + std::to_string(s.bytes) +
           ", \"seconds\": " + number(s.seconds, 6) +
           ", \"wait_seconds\": " + number(s.waitSeconds, 6) + "}";
  };
  bool firstGroup = true;
  CommStat perKind[3];
  for (int g = 0; g < kNumGroups; ++g) {
    CommStat total;
    std::string byKind;
    for (int k = 0; k < 3; ++k) {
      const CommStat &s = ctx.recorder.stats[g][k];
      if (s.ops == 0)
        continue;
      total.ops += s.ops;
      total.bytes += s.bytes;
      total.seconds += s.seconds;
      total.waitSeconds += s.waitSeconds;
      perKind[k].ops += s.ops;
      perKind[k].bytes += s.bytes;
      perKind[k].seconds += s.seconds;
      perKind[k].waitSeconds += s.waitSeconds;
      byKind += std::string(byKind.empty() ? "" : ", ") + "\"" + kinds[k] +
                "\": " + statJson(s);
    }
    if (total.ops == 0)
      continue;
    std::string body = statJson(total);
    body.insert(body.size() - 1, ", \"kinds\": {" + byKind + "}");
    mine += std::string(firstGroup ? "" : ", ") + "\"" +
            groupName(static_cast<Group>(g)) + "\": " + body;
    firstGroup = false;
  }
  mine += "}, \"kinds\": {";
  bool firstKind = true;
  for (int k = 0; k < 3; ++k) {
    if (perKind[k].ops == 0)
      continue;
    mine += std::string(firstKind ? "" : ", ") + "\"" + kinds[k] +
            "\": " + statJson(perKind[k]);
    firstKind = false;
  }
  mine += "}}";
  std::vector<std::string> all = gatherText(ctx, mine);
  if (ctx.rank != 0)
    return "";
  std::string json = "{\n  \"ranks\": [\n";
  for (size_t r = 0; r < all.size(); ++r)
    json += all[r] + (r + 1 < all.size() ? ",\n" : "\n");
  json += "  ]\n}\n";
  return writeFileAtomically(path, json);
}

} // namespace rt
} // namespace loom

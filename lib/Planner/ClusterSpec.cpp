//===- ClusterSpec.cpp - Read, check and write cluster specs --------------===//
//
// The schema is docs/cluster-spec.md. Every check names the field the way
// the file spells it, so a user can find the line to fix.
//
//===----------------------------------------------------------------------===//

#include "loom/Planner/ClusterSpec.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#include <algorithm>
#include <optional>

#ifndef LOOM_CLUSTER_DIR
#define LOOM_CLUSTER_DIR ""
#endif

using namespace mlir::loom::planner;
namespace json = llvm::json;

llvm::StringRef mlir::loom::planner::numberFormatName(NumberFormat format) {
  switch (format) {
  case NumberFormat::fp32:
    return "fp32";
  case NumberFormat::tf32:
    return "tf32";
  case NumberFormat::bf16:
    return "bf16";
  case NumberFormat::fp16:
    return "fp16";
  }
  return "fp32";
}

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string shortNumber(double value) {
  return llvm::formatv("{0}", llvm::format("%g", value)).str();
}

/// Reads fields of one JSON object, remembering the first problem with the
/// dotted path of the field it is about.
class Reader {
public:
  explicit Reader(std::string &error) : error(error) {}

  const json::Object *object(const json::Object &parent, llvm::StringRef key,
                             const std::string &path, bool required = true) {
    const json::Value *value = parent.get(key);
    if (!value) {
      if (required)
        fail(join(path, key), "is missing (an object)");
      return nullptr;
    }
    const json::Object *object = value->getAsObject();
    if (!object)
      fail(join(path, key), "must be an object");
    return object;
  }

  std::string string(const json::Object &parent, llvm::StringRef key,
                     const std::string &path, bool required = true) {
    const json::Value *value = parent.get(key);
    if (!value) {
      if (required)
        fail(join(path, key), "is missing (a string)");
      return "";
    }
    std::optional<llvm::StringRef> s = value->getAsString();
    if (!s || (required && s->empty())) {
      fail(join(path, key), "must be a non-empty string");
      return "";
    }
    return s->str();
  }

  /// A number in [min, max] (exclusive bounds where `open`).
  double number(const json::Object &parent, llvm::StringRef key,
                const std::string &path, double min, double max,
                bool openMin, std::optional<double> fallback = std::nullopt) {
    const json::Value *value = parent.get(key);
    if (!value) {
      if (fallback)
        return *fallback;
      fail(join(path, key), "is missing (a number)");
      return 0;
    }
    std::optional<double> n = value->getAsNumber();
    bool ok = n && (openMin ? *n > min : *n >= min) && *n <= max;
    if (!ok) {
      std::string bound = std::string("must be a number ") +
                          (openMin ? "> " : ">= ") + shortNumber(min);
      if (max < 1e300)
        bound += " and <= " + shortNumber(max);
      fail(join(path, key), bound);
      return 0;
    }
    return *n;
  }

  int64_t integer(const json::Object &parent, llvm::StringRef key,
                  const std::string &path, int64_t min,
                  std::optional<int64_t> fallback = std::nullopt) {
    const json::Value *value = parent.get(key);
    if (!value) {
      if (fallback)
        return *fallback;
      fail(join(path, key), "is missing (an integer)");
      return 0;
    }
    std::optional<int64_t> n = value->getAsInteger();
    if (!n || *n < min) {
      fail(join(path, key), "must be an integer >= " + std::to_string(min));
      return 0;
    }
    return *n;
  }

  bool boolean(const json::Object &parent, llvm::StringRef key,
               const std::string &path) {
    const json::Value *value = parent.get(key);
    std::optional<bool> b = value ? value->getAsBoolean() : std::nullopt;
    if (!b) {
      fail(join(path, key), value ? "must be true or false"
                                  : "is missing (true or false)");
      return false;
    }
    return *b;
  }

  void fail(const std::string &field, const std::string &what) {
    if (error.empty())
      error = field + ": " + what;
  }

  static std::string join(const std::string &path, llvm::StringRef key) {
    return path.empty() ? key.str() : path + "." + key.str();
  }

private:
  std::string &error;
};

Link readLink(Reader &r, const json::Object &o, const std::string &path,
              llvm::StringRef bandwidthKey) {
  Link link;
  link.kind = r.string(o, "link", path);
  link.bandwidth =
      r.number(o, bandwidthKey, path, 0, 1e6, /*openMin=*/true) * 1e9;
  link.latency = r.number(o, "latency_us", path, 0, 1e6, false) * 1e-6;
  return link;
}

} // namespace

llvm::Expected<ClusterSpec>
mlir::loom::planner::parseClusterSpec(llvm::StringRef text,
                                      llvm::StringRef origin) {
  auto failure = [&](const std::string &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cluster spec '" + origin.str() +
                                       "': " + message);
  };
  llvm::Expected<json::Value> parsed = json::parse(text);
  if (!parsed)
    return failure("not valid JSON: " + llvm::toString(parsed.takeError()));
  const json::Object *root = parsed->getAsObject();
  if (!root)
    return failure("must be a JSON object");

  std::string error;
  Reader r(error);
  ClusterSpec spec;
  spec.name = r.string(*root, "name", "");
  spec.description = r.string(*root, "description", "", /*required=*/false);

  if (const json::Object *gpu = r.object(*root, "gpu", "")) {
    spec.gpu.model = r.string(*gpu, "model", "gpu");
    spec.gpu.memoryBytes = static_cast<int64_t>(
        r.number(*gpu, "memory_gib", "gpu", 0, 1e5, true) * kGiB);
    if (const json::Object *peak = r.object(*gpu, "peak_tflops", "gpu"))
      for (int f = 0; f < kNumNumberFormats; ++f)
        spec.gpu.peakFlops[f] =
            r.number(*peak, numberFormatName(static_cast<NumberFormat>(f)),
                     "gpu.peak_tflops", 0, 1e5, true) *
            1e12;
    spec.gpu.memoryBandwidth =
        r.number(*gpu, "memory_bandwidth_gbytes_per_s", "gpu", 0, 1e6, true) *
        1e9;
  }
  spec.gpusPerNode = r.integer(*root, "gpus_per_node", "", 1);
  spec.maxNodes = r.integer(*root, "max_nodes", "", 0, int64_t(0));

  if (const json::Object *intra = r.object(*root, "intra_node", "")) {
    spec.intraNode = readLink(r, *intra, "intra_node", "bandwidth_gbytes_per_s");
    spec.peerToPeer = r.boolean(*intra, "p2p", "intra_node");
    if (const json::Object *bridge =
            r.object(*intra, "bridge", "intra_node", /*required=*/false)) {
      spec.bridgeGroup = r.integer(*bridge, "gpus", "intra_node.bridge", 2);
      spec.bridge = readLink(r, *bridge, "intra_node.bridge",
                             "bandwidth_gbytes_per_s");
      if (error.empty() && spec.gpusPerNode % spec.bridgeGroup != 0)
        r.fail("intra_node.bridge.gpus",
               llvm::formatv("{0} does not divide gpus_per_node ({1})",
                             spec.bridgeGroup, spec.gpusPerNode)
                   .str());
    }
  }
  if (const json::Object *host =
          r.object(*root, "host_link", "", /*required=*/false))
    spec.hostLink =
        readLink(r, *host, "host_link", "bandwidth_gbytes_per_s");
  if (const json::Object *net = r.object(*root, "network", ""))
    spec.network = readLink(r, *net, "network",
                            "bandwidth_gbytes_per_s_per_node");

  if (const json::Object *eff =
          r.object(*root, "efficiency", "", /*required=*/false)) {
    ClusterSpec::Efficiency &e = spec.efficiency;
    e.gemm = r.number(*eff, "gemm", "efficiency", 0, 1, true, e.gemm);
    e.gemmHalfFlops = r.number(*eff, "gemm_half_gflop", "efficiency", 0, 1e9,
                               true, e.gemmHalfFlops / 1e9) *
                      1e9;
    e.memory = r.number(*eff, "memory", "efficiency", 0, 1, true, e.memory);
    e.vector = r.number(*eff, "vector", "efficiency", 0, 1, true, e.vector);
    e.comm = r.number(*eff, "comm", "efficiency", 0, 1, true, e.comm);
    e.allReduce =
        r.number(*eff, "all_reduce", "efficiency", 0, 1, true, e.comm);
    e.launch = r.number(*eff, "kernel_launch_us", "efficiency", 0, 1e6, false,
                        e.launch * 1e6) *
               1e-6;
  }
  if (spec.efficiency.allReduce < 0)
    spec.efficiency.allReduce = spec.efficiency.comm;
  spec.reservedBytes = static_cast<int64_t>(
      r.number(*root, "reserved_memory_gib", "", 0, 1e5, false, 0.0) * kGiB);
  spec.hostMemoryBytes = static_cast<int64_t>(
      r.number(*root, "host_memory_gib", "", 0, 1e6, false, 0.0) * kGiB);
  if (error.empty() && spec.reservedBytes >= spec.gpu.memoryBytes)
    r.fail("reserved_memory_gib",
           "leaves no memory (it must be below gpu.memory_gib)");

  if (const json::Object *price = r.object(*root, "price", "")) {
    spec.price.usdPerGpuHour =
        r.number(*price, "usd_per_gpu_hour", "price", 0, 1e4, true);
    spec.price.source = r.string(*price, "source", "price");
    spec.price.date = r.string(*price, "date", "price");
  }
  if (const json::Value *sources = root->get("sources")) {
    const json::Array *array = sources->getAsArray();
    if (!array)
      r.fail("sources", "must be an array of strings");
    else
      for (const json::Value &s : *array) {
        if (std::optional<llvm::StringRef> text = s.getAsString())
          spec.sources.push_back(text->str());
        else
          r.fail("sources", "must be an array of strings");
      }
  }
  if (!error.empty())
    return failure(error);
  return spec;
}

std::string mlir::loom::planner::bundledClusterDir() {
  if (std::optional<std::string> dir =
          llvm::sys::Process::GetEnv("LOOM_CLUSTER_DIR"))
    return *dir;
  return LOOM_CLUSTER_DIR;
}

std::vector<std::string> mlir::loom::planner::bundledClusterNames() {
  std::vector<std::string> names;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(bundledClusterDir(), ec), end;
       it != end && !ec; it.increment(ec))
    if (llvm::sys::path::extension(it->path()) == ".json")
      names.push_back(llvm::sys::path::stem(it->path()).str());
  llvm::sort(names);
  return names;
}

llvm::Expected<ClusterSpec>
mlir::loom::planner::loadClusterSpec(llvm::StringRef nameOrPath) {
  std::string path = nameOrPath.str();
  if (!nameOrPath.ends_with(".json") && !llvm::sys::fs::exists(path)) {
    llvm::SmallString<256> bundled(bundledClusterDir());
    llvm::sys::path::append(bundled, nameOrPath + ".json");
    if (!llvm::sys::fs::exists(bundled)) {
      std::string known;
      for (const std::string &name : bundledClusterNames())
        known += (known.empty() ? "" : ", ") + name;
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "no cluster spec '" + nameOrPath.str() +
              "': give a JSON file (docs/cluster-spec.md) or one of the "
              "bundled specs: " +
              (known.empty() ? "(none found in " + bundledClusterDir() + ")"
                             : known));
    }
    path = bundled.str().str();
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot read cluster spec '" + path +
                                       "': " + buffer.getError().message());
  return parseClusterSpec((*buffer)->getBuffer(), path);
}

std::string mlir::loom::planner::printClusterSpec(const ClusterSpec &spec) {
  auto link = [](const Link &l, llvm::StringRef bandwidthKey) {
    return json::Object{{"link", l.kind},
                        {bandwidthKey, l.bandwidth / 1e9},
                        {"latency_us", l.latency * 1e6}};
  };
  json::Object peak;
  for (int f = 0; f < kNumNumberFormats; ++f)
    peak[numberFormatName(static_cast<NumberFormat>(f))] =
        spec.gpu.peakFlops[f] / 1e12;
  json::Object intra = link(spec.intraNode, "bandwidth_gbytes_per_s");
  intra["p2p"] = spec.peerToPeer;
  if (spec.bridgeGroup > 1) {
    json::Object bridge = link(spec.bridge, "bandwidth_gbytes_per_s");
    bridge["gpus"] = spec.bridgeGroup;
    intra["bridge"] = std::move(bridge);
  }
  json::Array sources;
  for (const std::string &s : spec.sources)
    sources.push_back(s);
  json::Object root{
      {"name", spec.name},
      {"description", spec.description},
      {"gpu",
       json::Object{{"model", spec.gpu.model},
                    {"memory_gib", spec.gpu.memoryBytes / kGiB},
                    {"peak_tflops", std::move(peak)},
                    {"memory_bandwidth_gbytes_per_s",
                     spec.gpu.memoryBandwidth / 1e9}}},
      {"gpus_per_node", spec.gpusPerNode},
      {"max_nodes", spec.maxNodes},
      {"intra_node", std::move(intra)},
      {"network", link(spec.network, "bandwidth_gbytes_per_s_per_node")},
      {"efficiency",
       json::Object{{"gemm", spec.efficiency.gemm},
                    {"gemm_half_gflop", spec.efficiency.gemmHalfFlops / 1e9},
                    {"memory", spec.efficiency.memory},
                    {"vector", spec.efficiency.vector},
                    {"comm", spec.efficiency.comm},
                    {"all_reduce", spec.efficiency.allReduce < 0
                                       ? spec.efficiency.comm
                                       : spec.efficiency.allReduce},
                    {"kernel_launch_us", spec.efficiency.launch * 1e6}}},
      {"reserved_memory_gib", spec.reservedBytes / kGiB},
      {"price", json::Object{{"usd_per_gpu_hour", spec.price.usdPerGpuHour},
                             {"source", spec.price.source},
                             {"date", spec.price.date}}},
      {"sources", std::move(sources)}};
  if (spec.hostLink.bandwidth > 0)
    root["host_link"] = link(spec.hostLink, "bandwidth_gbytes_per_s");
  if (spec.hostMemoryBytes > 0)
    root["host_memory_gib"] = spec.hostMemoryBytes / kGiB;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", json::Value(std::move(root))) << "\n";
  return text;
}

//===- ClusterSpec.h - A GPU cluster, as the planner sees it ----*- C++ -*-===//
//
// A cluster spec (JSON, schema in docs/cluster-spec.md) describes one kind
// of machine: its GPU (memory, peak rates per element type, memory
// bandwidth), how many sit in a node and how they are linked (PCIe, an
// NVLink bridge per pair, NVSwitch), the network between nodes, what a GPU
// hour costs, and how efficiently kernels reach the peaks. Bundled specs
// live in share/clusters/<name>.json; `--cluster NAME` finds them there,
// `--cluster FILE.json` reads any other.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PLANNER_CLUSTERSPEC_H
#define LOOM_PLANNER_CLUSTERSPEC_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir {
namespace loom {
namespace planner {

/// Element types the spec gives peak rates for.
enum class NumberFormat { fp32, tf32, bf16, fp16 };
constexpr int kNumNumberFormats = 4;
llvm::StringRef numberFormatName(NumberFormat format);

/// One level of interconnect: bytes per second in one direction per GPU
/// (per node for the network), and the latency of one message.
struct Link {
  std::string kind;
  double bandwidth = 0; // bytes/s
  double latency = 0;   // s
};

struct ClusterSpec {
  std::string name, description;

  struct Gpu {
    std::string model;
    int64_t memoryBytes = 0;
    /// Dense peak FLOP/s per NumberFormat (tensor cores where they apply).
    double peakFlops[kNumNumberFormats] = {0, 0, 0, 0};
    double memoryBandwidth = 0; // bytes/s
  } gpu;

  int64_t gpusPerNode = 0;
  /// Nodes the cluster has (0: as many as asked for).
  int64_t maxNodes = 0;

  /// Between the GPUs of a node.
  Link intraNode;
  /// Whether GPUs of a node may copy to each other directly (PCIe P2P,
  /// NVLink); without it every transfer is staged through host memory.
  bool peerToPeer = true;
  /// GPUs joined by a faster bridge (NVLink bridges on pairs of 3090s):
  /// groups of `bridgeGroup` consecutive GPUs (1: none).
  int64_t bridgeGroup = 1;
  Link bridge;
  /// Between nodes: bandwidth per node (all its NICs together).
  Link network;
  /// Between a GPU and its host's memory (the PCIe link loom-swap's
  /// copies take); bandwidth 0 when the spec does not give it, and then
  /// the planner does not plan swap.
  Link hostLink;
  /// Host memory per node, the limit of what swapped plans keep there (0
  /// when the spec does not give it: not checked).
  int64_t hostMemoryBytes = 0;

  struct Efficiency {
    /// The fraction of the dense peak a large GEMM reaches.
    double gemm = 0.7;
    /// GEMM flops (on one GPU) at which it reaches half of that.
    double gemmHalfFlops = 2e9;
    /// The fraction of memory bandwidth a streaming kernel reaches.
    double memory = 0.8;
    /// The fraction of the fp32 peak that elementwise and normalisation
    /// kernels' arithmetic reaches, in loomrt::computeWork's units (a
    /// simple scalar op is 1, a transcendental tens: see there). Most GPU
    /// kernels are bound by memory whatever it is; on the CPU backend a
    /// GELU or softmax is bound by its exp or tanh.
    double vector = 1.0;
    /// The fraction of link bandwidth a point-to-point transfer reaches.
    double comm = 0.8;
    /// The fraction an all-reduce reaches (bus bandwidth: 2(n-1)/n of its
    /// bytes per link; < 0: as `comm`).
    double allReduce = -1;
    /// Seconds per kernel launch.
    double launch = 5e-6;
  } efficiency;

  /// Device memory no plan may use (context, library workspaces,
  /// fragmentation).
  int64_t reservedBytes = 0;

  struct Price {
    double usdPerGpuHour = 0;
    std::string source, date;
  } price;
  std::vector<std::string> sources;

  double peak(NumberFormat format) const {
    return gpu.peakFlops[static_cast<int>(format)];
  }
};

/// Parses and checks a spec. Errors name the field (`gpu.memory_gib: must
/// be a number > 0`) and the file (`origin`).
llvm::Expected<ClusterSpec> parseClusterSpec(llvm::StringRef text,
                                             llvm::StringRef origin);

/// The directory of the bundled specs (share/clusters of the source tree
/// this build came from; LOOM_CLUSTER_DIR overrides it).
std::string bundledClusterDir();
/// The bundled spec names, sorted.
std::vector<std::string> bundledClusterNames();
/// Loads `nameOrPath`: a file when it names one (or ends in .json), else a
/// bundled spec; an unknown name lists the bundled ones.
llvm::Expected<ClusterSpec> loadClusterSpec(llvm::StringRef nameOrPath);

/// The spec as JSON text (the schema parseClusterSpec reads).
std::string printClusterSpec(const ClusterSpec &spec);

} // namespace planner
} // namespace loom
} // namespace mlir

#endif // LOOM_PLANNER_CLUSTERSPEC_H

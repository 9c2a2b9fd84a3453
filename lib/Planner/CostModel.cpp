//===- CostModel.cpp - Roofline kernels and alpha-beta collectives --------===//

#include "loom/Planner/CostModel.h"

#include <algorithm>
#include <cmath>

using namespace mlir::loom::planner;

double CostModel::kernelTime(double flops, double bytes, bool gemm,
                             bool launch) const {
  const ClusterSpec::Efficiency &e = spec.efficiency;
  double overhead = launch ? e.launch : 0.0;
  if (gemm && flops > 0)
    return (flops + e.gemmHalfFlops) / (peak() * e.gemm) + overhead;
  double compute = flops / (spec.peak(NumberFormat::fp32) * e.vector);
  double memory = bytes / (spec.gpu.memoryBandwidth * e.memory);
  return std::max(compute, memory) + overhead;
}

mlir::loom::TrainingOptions::CopyTiming CostModel::swapCopyTiming() const {
  const ClusterSpec::Efficiency &e = spec.efficiency;
  if (spec.hostLink.bandwidth <= 0)
    return {};
  return {spec.hostLink.bandwidth * e.comm, peak() * e.gemm,
          spec.gpu.memoryBandwidth * e.memory, e.launch};
}

void CostModel::nodeLink(int64_t span, double &bandwidth, double &latency,
                         bool allReduce) const {
  double eff = allReduce && spec.efficiency.allReduce > 0
                   ? spec.efficiency.allReduce
                   : spec.efficiency.comm;
  if (spec.bridgeGroup > 1 && span <= spec.bridgeGroup) {
    bandwidth = spec.bridge.bandwidth * eff;
    latency = spec.bridge.latency;
    return;
  }
  // Without peer-to-peer, every transfer is a copy to host memory and one
  // back over the same PCIe link: half the bandwidth.
  bandwidth = spec.intraNode.bandwidth * eff * (spec.peerToPeer ? 1.0 : 0.5);
  latency = spec.intraNode.latency * (spec.peerToPeer ? 1.0 : 2.0);
}

double CostModel::allReduceTime(double bytes, int64_t n,
                                int64_t stride) const {
  if (n <= 1 || bytes <= 0)
    return 0;
  int64_t gpn = spec.gpusPerNode;
  int64_t span = (n - 1) * stride + 1;
  if (span <= gpn) {
    double bw, lat;
    nodeLink(span, bw, lat, /*allReduce=*/true);
    double ring = 2.0 * (n - 1) / n * bytes / bw + 2.0 * (n - 1) * lat;
    double tree = 2.0 * bytes / bw + 2.0 * std::ceil(std::log2(n)) * lat;
    return std::min(ring, tree);
  }
  // Across nodes: the group's GPUs in one node reduce among themselves,
  // the nodes all-reduce one slice per GPU, and the node gathers again.
  int64_t perNode = stride >= gpn ? 1 : std::max<int64_t>(1, gpn / stride);
  perNode = std::min(perNode, n);
  int64_t nodes = std::max<int64_t>(1, n / perNode);
  double intra = 0, intraLatency = 0;
  if (perNode > 1) {
    double bw, lat;
    nodeLink((perNode - 1) * stride + 1, bw, lat, /*allReduce=*/true);
    intra = 2.0 * (perNode - 1) / perNode * bytes / bw;
    intraLatency = 2.0 * (perNode - 1) * lat;
  }
  double arEff = spec.efficiency.allReduce > 0 ? spec.efficiency.allReduce
                                               : spec.efficiency.comm;
  double netBw = spec.network.bandwidth * arEff / gpn;
  double slice = bytes / perNode;
  double ring = 2.0 * (nodes - 1) / nodes * slice / netBw +
                2.0 * (nodes - 1) * spec.network.latency;
  double tree = 2.0 * slice / netBw +
                2.0 * std::ceil(std::log2(nodes)) * spec.network.latency;
  return intra + intraLatency + std::min(ring, tree);
}

const char *CostModel::linkBetween(int64_t a, int64_t b) const {
  int64_t gpn = spec.gpusPerNode;
  if (a / gpn != b / gpn)
    return "network";
  if (spec.bridgeGroup > 1 && a / spec.bridgeGroup == b / spec.bridgeGroup)
    return "bridge";
  return "node";
}

double CostModel::sendTime(double bytes, int64_t from, int64_t to,
                           int64_t concurrent) const {
  if (bytes <= 0 || from == to)
    return 0;
  int64_t gpn = spec.gpusPerNode;
  if (from / gpn == to / gpn) {
    double bw, lat;
    nodeLink(std::abs(to - from) + 1, bw, lat);
    if (spec.bridgeGroup > 1 &&
        from / spec.bridgeGroup != to / spec.bridgeGroup)
      nodeLink(spec.bridgeGroup + 1, bw, lat);
    return bytes / bw + lat;
  }
  double share = std::clamp<int64_t>(concurrent, 1, gpn);
  return bytes / (spec.network.bandwidth * spec.efficiency.comm / share) +
         spec.network.latency;
}

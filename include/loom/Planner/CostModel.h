//===- CostModel.h - Time of kernels and collectives on a cluster -*- C++ -*-===//
//
// Kernels by a roofline with calibrated efficiencies: a GEMM of f flops
// takes (f + f_half) / (peak * eff_gemm) (so small GEMMs reach less of the
// peak), anything else max(flops / peak_fp32, bytes / (bandwidth *
// eff_memory)), each plus a launch. Collectives by alpha-beta per link
// level (NVLink bridge, intra-node, network) with the cheapest of ring,
// hierarchical ring and tree, every GPU of a node sharing its network
// bandwidth (all groups of one kind run at once). Ranks are laid out as
// loomc lays them out: r = (d*pp + p)*tp + t, consecutive ranks in a node.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PLANNER_COSTMODEL_H
#define LOOM_PLANNER_COSTMODEL_H

#include "loom/Pipelines/TrainingOptions.h"
#include "loom/Planner/ClusterSpec.h"

#include <cstdint>

namespace mlir {
namespace loom {
namespace planner {

class CostModel {
public:
  CostModel(const ClusterSpec &spec, NumberFormat format)
      : spec(spec), format(format) {}

  const ClusterSpec &cluster() const { return spec; }
  double peak() const { return spec.peak(format); }

  /// One kernel (`launch` false: computed inside another's loop).
  double kernelTime(double flops, double bytes, bool gemm,
                    bool launch = true) const;

  /// A sum all-reduce of `bytes` per rank over `n` ranks `stride` apart.
  double allReduceTime(double bytes, int64_t n, int64_t stride) const;
  /// One message of `bytes` from rank `from` to rank `to`, with
  /// `concurrent` GPUs of the node sending across the network at once.
  double sendTime(double bytes, int64_t from, int64_t to,
                  int64_t concurrent) const;

  /// The link between two ranks (for reports): "bridge", "node" or
  /// "network".
  const char *linkBetween(int64_t a, int64_t b) const;

  /// The rates loom-swap times its host copies with (the host link's, a
  /// large GEMM's, streaming memory's, after the efficiencies, and the
  /// launch); all 0 when the spec has no host link.
  TrainingOptions::CopyTiming swapCopyTiming() const;

private:
  /// Bandwidth (bytes/s, after the comm efficiency) and latency of the
  /// link inside a node that joins GPUs `span` apart (bridge or node).
  void nodeLink(int64_t span, double &bandwidth, double &latency,
                bool allReduce = false) const;

  const ClusterSpec &spec;
  NumberFormat format;
};

} // namespace planner
} // namespace loom
} // namespace mlir

#endif // LOOM_PLANNER_COSTMODEL_H

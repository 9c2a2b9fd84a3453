//===- PlannerTest.cpp - Simulator and cost model against closed forms ----===//
//
// The discrete-event simulator and the collective model checked against
// the textbook formulas they must reduce to (none of them computed by the
// code under test): a pipeline of P equal stages over M micro-batches
// takes (M + P - 1)(F + B) under 1F1B and GPipe (Narayanan et al. 2021,
// Sec. 2.2.1; Huang et al. 2019); a ring all-reduce of B bytes over n GPUs
// moves 2(n-1)/n B over each link (Patarasuk & Yuan 2009).
//
//===----------------------------------------------------------------------===//

#include "loom/Planner/ClusterSpec.h"
#include "loom/Planner/CostModel.h"
#include "loom/Planner/Simulator.h"

#include "gtest/gtest.h"

using namespace mlir::loom::planner;

namespace {

std::vector<StageWork> equalStages(int64_t P, double F, double B,
                                   double send = 0) {
  StageWork w;
  w.forward = F;
  w.backward = B;
  w.sendNext = send;
  std::vector<StageWork> stages(P, w);
  stages.back().sendNext = 0;
  return stages;
}

TEST(PlannerSimulator, OneFOneBBubbleIsPMinusOneSlots) {
  for (int64_t P : {1, 2, 4, 8})
    for (int64_t M : {1, 4, 16}) {
      SimResult r = simulateStep(equalStages(P, 1.0, 2.0), M,
                                 SimSchedule::oneFOneB, false);
      EXPECT_DOUBLE_EQ(r.stepTime, (M + P - 1) * 3.0) << "P=" << P << " M=" << M;
      EXPECT_NEAR(r.bubbleFraction, (P - 1.0) / (M + P - 1.0), 1e-12);
    }
}

TEST(PlannerSimulator, GPipeTakesTheSameTimeAsOneFOneB) {
  SimResult r = simulateStep(equalStages(4, 1.0, 2.0), 8, SimSchedule::gpipe,
                             false);
  EXPECT_DOUBLE_EQ(r.stepTime, (8 + 4 - 1) * 3.0);
}

TEST(PlannerSimulator, TransfersAddToTheCriticalPath) {
  // The first micro-batch crosses P-1 links forward and P-1 back.
  double s = 0.25;
  SimResult r = simulateStep(equalStages(4, 1.0, 2.0, s), 1,
                             SimSchedule::oneFOneB, false);
  EXPECT_DOUBLE_EQ(r.stepTime, 4 * 3.0 + 2 * 3 * s);
}

TEST(PlannerSimulator, DataParallelAllReduceHidesBehindTheLastBackward) {
  std::vector<StageWork> stages = equalStages(1, 1.0, 2.0);
  stages[0].gradAllReduce = 1.5;
  stages[0].gradAllReduceHidden = 1.0;
  stages[0].optimizer = 0.5;
  SimResult r = simulateStep(stages, 2, SimSchedule::oneFOneB, true);
  // 2 x 3 s of compute; 1 s of the all-reduce under the last backward,
  // 0.5 s after it; then the update.
  EXPECT_DOUBLE_EQ(r.stepTime, 6.0 + 0.5 + 0.5);
  bool sawAllReduce = false;
  for (const SimEvent &e : r.events)
    if (e.track == "dp") {
      sawAllReduce = true;
      EXPECT_DOUBLE_EQ(e.begin, 5.0);
      EXPECT_DOUBLE_EQ(e.end, 6.5);
    }
  EXPECT_TRUE(sawAllReduce);
}

ClusterSpec testCluster() {
  llvm::Expected<ClusterSpec> spec = parseClusterSpec(R"({
    "name": "t", "gpu": {"model": "g", "memory_gib": 16,
      "peak_tflops": {"fp32": 10, "tf32": 10, "bf16": 20, "fp16": 20},
      "memory_bandwidth_gbytes_per_s": 500},
    "gpus_per_node": 4,
    "intra_node": {"link": "x", "bandwidth_gbytes_per_s": 10, "latency_us": 0, "p2p": true},
    "network": {"link": "n", "bandwidth_gbytes_per_s_per_node": 4, "latency_us": 0},
    "efficiency": {"comm": 1},
    "price": {"usd_per_gpu_hour": 1, "source": "s", "date": "d"}})",
                                                      "test");
  EXPECT_TRUE(static_cast<bool>(spec));
  return *spec;
}

TEST(PlannerCostModel, RingAllReduceInsideANode) {
  ClusterSpec spec = testCluster();
  CostModel cm(spec, NumberFormat::bf16);
  double bytes = 1e9;
  EXPECT_NEAR(cm.allReduceTime(bytes, 4, 1), 2.0 * 3 / 4 * bytes / 10e9,
              1e-9);
  EXPECT_EQ(cm.allReduceTime(bytes, 1, 1), 0.0);
}

TEST(PlannerCostModel, AcrossNodesTheNetworkShareBounds) {
  ClusterSpec spec = testCluster();
  CostModel cm(spec, NumberFormat::bf16);
  // 2 GPUs, one per node (stride 4): a ring of 2 over each GPU's quarter
  // of the node's network bandwidth.
  double bytes = 1e9;
  EXPECT_NEAR(cm.allReduceTime(bytes, 2, 4), 2.0 * 1 / 2 * bytes / (4e9 / 4),
              1e-9);
  EXPECT_STREQ(cm.linkBetween(0, 4), "network");
  EXPECT_STREQ(cm.linkBetween(0, 3), "node");
}

TEST(PlannerClusterSpec, ErrorsNameTheField) {
  llvm::Expected<ClusterSpec> spec =
      parseClusterSpec(R"({"name": "x", "gpu": {"model": "g"}})", "f.json");
  ASSERT_FALSE(static_cast<bool>(spec));
  std::string message = llvm::toString(spec.takeError());
  EXPECT_NE(message.find("f.json"), std::string::npos) << message;
  EXPECT_NE(message.find("gpu.memory_gib"), std::string::npos) << message;
}

} // namespace

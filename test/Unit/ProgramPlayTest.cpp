//===- ProgramPlayTest.cpp - The play of loomrt programs, by hand ---------===//
//
// Hand-written loomrt steps played on a spec whose rates make every time a
// round number (10 TFLOP/s, 10 GB/s links, no latency, no launch cost,
// efficiencies 1): a 1000^3 GEMM takes 2e9 / 1e13 = 0.2 ms, and moving
// 4 MB (a 1000x1000 f32 buffer) over a link 0.4 ms, as a send or as a
// two-rank ring all-reduce (2 (n-1)/n = 1 times the bytes). The expected
// timelines below are worked out by hand from those two figures.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/LoomRT/IR/LoomRTDialect.h"
#include "loom/Planner/ClusterSpec.h"
#include "loom/Planner/ProgramPlay.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::loom::planner;

namespace {

ClusterSpec roundCluster(bool hostLink = false) {
  std::string host =
      hostLink ? R"("host_link": {"link": "pcie", "bandwidth_gbytes_per_s": 10,
                   "latency_us": 0},)"
               : "";
  llvm::Expected<ClusterSpec> spec = parseClusterSpec(
      R"({"name": "round", "gpu": {"model": "g", "memory_gib": 16,
      "peak_tflops": {"fp32": 10, "tf32": 10, "bf16": 20, "fp16": 20},
      "memory_bandwidth_gbytes_per_s": 1000},
    "gpus_per_node": 8,
    "intra_node": {"link": "x", "bandwidth_gbytes_per_s": 10,
                   "latency_us": 0, "p2p": true},
    "network": {"link": "n", "bandwidth_gbytes_per_s_per_node": 10,
                "latency_us": 0},)" +
          host + R"(
    "efficiency": {"comm": 1, "all_reduce": 1, "gemm": 1,
                   "gemm_half_gflop": 1e-9, "memory": 1, "kernel_launch_us": 0},
    "price": {"usd_per_gpu_hour": 1, "source": "s", "date": "d"}})",
      "test");
  EXPECT_TRUE(static_cast<bool>(spec)) << llvm::toString(spec.takeError());
  return *spec;
}

struct Played {
  std::string error;
  FailureOr<SimResult> result = failure();
};

Played play(StringRef ir, bool hostLink = false) {
  DialectRegistry registry;
  registry.insert<func::FuncDialect, loomrt::LoomRTDialect,
                  mlir::loom::LoomDialect, shard::ShardDialect, arith::ArithDialect,
                  memref::MemRefDialect>();
  MLIRContext context(registry);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(ir, &context);
  EXPECT_TRUE(module);
  Played p;
  if (!module)
    return p;
  ClusterSpec spec = roundCluster(hostLink);
  p.result = playProgram(*module, spec, /*recordEvents=*/true, p.error);
  return p;
}

constexpr const char *kGemm =
    R"(loomrt.gemm ins(%a, %b : memref<1000x1000xf32>, memref<1000x1000xf32>)
         outs(%c : memref<1000x1000xf32>) {a_batched = false,
         b_batched = false, batch = 1 : i64, k = 1000 : i64, m = 1000 : i64,
         n = 1000 : i64, origin = "dot_general", trans_a = false,
         trans_b = false}
)";

std::string stepFunction(StringRef name, StringRef attrs, StringRef body) {
  return ("func.func @" + name +
          "(%a: memref<1000x1000xf32>, %b: memref<1000x1000xf32>, "
          "%c: memref<1000x1000xf32>, %x: memref<1000x1000xf32>) " +
          attrs + " {\n" + body + "  return\n}\n")
      .str();
}

TEST(ProgramPlay, AllReduceHidesBehindTheGemmItsWaitFollows) {
  // The all-reduce (0.4 ms) runs under the first GEMM (0.2 ms); the wait
  // stalls 0.2 ms; the second GEMM ends at 0.6 ms.
  std::string body = std::string(
      "  %h = loomrt.all_reduce_start %x on @mesh grid_axes = [2] "
      "{reduction = \"sum\"} : memref<1000x1000xf32>\n") +
                     kGemm + "  loomrt.wait %h\n" + kGemm;
  Played p = play("shard.grid @mesh(shape = 1x1x2)\n" +
                  stepFunction("step", "", body));
  ASSERT_TRUE(succeeded(p.result)) << p.error;
  EXPECT_NEAR(p.result->stepTime, 0.6e-3, 1e-12);
  EXPECT_NEAR(p.result->busy[0], 0.4e-3, 1e-12);
  EXPECT_NEAR(p.result->exposedComm, 0.2e-3, 1e-12);
  int waits = 0, allReduces = 0;
  for (const SimEvent &e : p.result->events) {
    if (e.track == "tp") {
      ++allReduces;
      EXPECT_NEAR(e.begin, 0.0, 1e-12);
      EXPECT_NEAR(e.end, 0.4e-3, 1e-12);
    }
    if (e.name == "wait tp all_reduce") {
      ++waits;
      EXPECT_NEAR(e.begin, 0.2e-3, 1e-12);
    }
  }
  EXPECT_EQ(allReduces, 1);
  EXPECT_EQ(waits, 1);
}

TEST(ProgramPlay, ReceiveCompletesWhenItsSendArrives) {
  // Stage 0: GEMM (0.2 ms), then sends 4 MB (0.4 ms): it arrives at 0.6 ms.
  // Stage 1 posts the receive at 0, waits until 0.6 ms, then its GEMM
  // ends at 0.8 ms: the step.
  std::string stage0 = std::string(kGemm) +
                       "  %s = loomrt.send_start %c on @mesh grid_axes = [1] "
                       "{peer = 1 : i64, tag = 7 : i64} : "
                       "memref<1000x1000xf32>\n  loomrt.wait %s\n";
  std::string stage1 = "  %r = loomrt.recv_start %x on @mesh grid_axes = [1] "
                       "{peer = 0 : i64, tag = 7 : i64} : "
                       "memref<1000x1000xf32>\n  loomrt.wait %r\n" +
                       std::string(kGemm);
  // Stage 1 comes first in the module: the play must wait for stage 0.
  Played p = play("shard.grid @mesh(shape = 1x2x1)\n" +
                  stepFunction("s1", "attributes {loom.stage = 1 : i64}",
                               stage1) +
                  stepFunction("s0", "attributes {loom.stage = 0 : i64}",
                               stage0));
  ASSERT_TRUE(succeeded(p.result)) << p.error;
  ASSERT_EQ(p.result->busy.size(), 2u);
  EXPECT_NEAR(p.result->stepTime, 0.8e-3, 1e-12);
  EXPECT_NEAR(p.result->busy[0], 0.2e-3, 1e-12);
  EXPECT_NEAR(p.result->busy[1], 0.2e-3, 1e-12);
  for (const SimEvent &e : p.result->events)
    if (e.name == "wait pp recv") {
      EXPECT_EQ(e.stage, 1);
      EXPECT_NEAR(e.begin, 0.0, 1e-12);
      EXPECT_NEAR(e.end, 0.6e-3, 1e-12);
    }
}

TEST(ProgramPlay, AReceiveNobodySendsIsAnError) {
  std::string stage0 = kGemm;
  std::string stage1 = "  %r = loomrt.recv_start %x on @mesh grid_axes = [1] "
                       "{peer = 0 : i64, tag = 3 : i64} : "
                       "memref<1000x1000xf32>\n  loomrt.wait %r\n";
  Played p = play("shard.grid @mesh(shape = 1x2x1)\n" +
                  stepFunction("s0", "attributes {loom.stage = 0 : i64}",
                               stage0) +
                  stepFunction("s1", "attributes {loom.stage = 1 : i64}",
                               stage1));
  EXPECT_TRUE(failed(p.result));
  EXPECT_NE(p.error.find("stage 1 waits for a transfer no stage starts: "
                         "loomrt.wait"),
            std::string::npos)
      << p.error;
}

TEST(ProgramPlay, SwapCopiesRunOnTheCopyStream) {
  // 4 MB out over a 10 GB/s host link: 0.4 ms under two GEMMs (0.4 ms),
  // so the wait costs nothing; the step is the GEMMs' 0.4 ms. Without a
  // host link in the spec the play cannot time the copy: an error.
  std::string body =
      "  %host = loomrt.alloc {category = \"swap\", offset = 0 : i64} : "
      "memref<1000x1000xf32>\n"
      "  %h = loomrt.swap_out %x to %host : memref<1000x1000xf32>, "
      "memref<1000x1000xf32>\n" +
      std::string(kGemm) + kGemm + "  loomrt.wait %h\n";
  std::string ir = "shard.grid @mesh(shape = 1x1x1)\n" +
                   stepFunction("step", "", body);
  Played p = play(ir, /*hostLink=*/true);
  ASSERT_TRUE(succeeded(p.result)) << p.error;
  EXPECT_NEAR(p.result->stepTime, 0.4e-3, 1e-12);
  EXPECT_NEAR(p.result->exposedComm, 0.0, 1e-12);
  Played none = play(ir, /*hostLink=*/false);
  EXPECT_TRUE(failed(none.result));
  EXPECT_NE(none.error.find("gives no host_link"), std::string::npos)
      << none.error;
}

} // namespace

// An op's price (computeOpTime) on the round spec with elementwise
// arithmetic at 1 % of the fp32 peak: 1e11 units per second, memory 1e12
// bytes per second. Over 1000x1000 elements an add reads and writes 12 MB
// (12 us) and costs 1e6 units (10 us): memory-bound. A tanh costs 36 units
// per element (360 us) against 8 MB (8 us): arithmetic-bound. A GEMM with a
// GELU-gradient epilogue adds that pass, 52 units per element (520 us),
// to its 200 us.
TEST(ProgramPlay, ElementwiseArithmeticAndEpiloguesArePriced) {
  DialectRegistry registry;
  registry.insert<func::FuncDialect, loomrt::LoomRTDialect,
                  mlir::loom::LoomDialect, arith::ArithDialect,
                  math::MathDialect, memref::MemRefDialect>();
  MLIRContext context(registry);
  std::string body = R"(
  loomrt.kernel ins(%a, %b : memref<1000x1000xf32>, memref<1000x1000xf32>)
      outs(%c : memref<1000x1000xf32>) attributes {origin = "add"} {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    loomrt.yield %s : f32
  }
  loomrt.kernel ins(%a : memref<1000x1000xf32>)
      outs(%c : memref<1000x1000xf32>) attributes {origin = "tanh"} {
  ^bb0(%p: f32):
    %one = arith.constant 1.0 : f32
    %t = math.tanh %p : f32
    loomrt.yield %t : f32
  }
  loomrt.gemm ins(%a, %b : memref<1000x1000xf32>, memref<1000x1000xf32>)
      outs(%c : memref<1000x1000xf32>) dgelu_input(%x : memref<1000x1000xf32>)
      {a_batched = false, b_batched = false, batch = 1 : i64, k = 1000 : i64,
       m = 1000 : i64, n = 1000 : i64, origin = "dot_general",
       trans_a = false, trans_b = false}
)";
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(stepFunction("step", "", body), &context);
  ASSERT_TRUE(module);
  ClusterSpec spec = roundCluster();
  spec.efficiency.vector = 0.01;
  std::vector<Operation *> ops;
  module->walk([&](Operation *op) {
    if (loomrt::isComputeOp(op))
      ops.push_back(op);
  });
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_NEAR(computeOpTime(ops[0], spec), 12e-6, 1e-12);
  EXPECT_NEAR(computeOpTime(ops[1], spec), 360e-6, 1e-12);
  // The DGELU epilogue, x sigmoid(z)'s derivative: 24 simple ops and an
  // exp (24 units) per element, a pass over the product at the vector rate.
  EXPECT_NEAR(computeOpTime(ops[2], spec), 680e-6, 1e-12);
  // At the default (1: the fp32 peak) the tanh is memory-bound again.
  spec.efficiency.vector = 1;
  EXPECT_NEAR(computeOpTime(ops[1], spec), 8e-6, 1e-12);
}

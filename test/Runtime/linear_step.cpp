//===- linear_step.cpp - A hand-written training step for the runtime -----===//
//
// What `loom-translate --emit-cpp` will emit, written by hand: linear
// regression y ~ x @ w + b with a mean squared error loss and SGD with
// momentum 0.9 (PyTorch's formula: m = 0.9 m + g; p -= lr m), a step
// counter as state, intermediates in the planned arena (with
// acquire/release), and the gradients averaged over the ranks (so any
// number of ranks that read the same data trains exactly like one).
//
// Test hook: LOOM_TEST_KILL_AT_STEP=K sends SIGKILL to the process when
// step K starts (to check that a killed run resumes exactly).
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Comm.h"
#include "loom/Runtime/CpuKernels.h"
#include "loom/Runtime/Runtime.h"

#include <csignal>
#include <cstdlib>

using namespace loom::rt;

namespace {

constexpr int64_t kBatch = 8;
constexpr int64_t kFeatures = 4;
constexpr float kLr = 0.05f;
constexpr float kMomentum = 0.9f;

// Arena plan: pred [8] @0, gradPred [8] @64, gradW [4] @128, gradB [1] @192.
constexpr int64_t kPred = 0, kGradPred = 64, kGradW = 128, kGradB = 192;
constexpr int64_t kArenaBytes = 256;
// Peak: pred + gradPred live together (gradW and gradB come after pred dies).
constexpr int64_t kPlannedPeak = 32 + 32;

void step(Context &ctx, void *const *args, void *const *results, char *arena) {
  const float *w = static_cast<const float *>(args[0]);
  const float *b = static_cast<const float *>(args[1]);
  const float *counter = static_cast<const float *>(args[2]);
  const float *mw = static_cast<const float *>(args[3]);
  const float *mb = static_cast<const float *>(args[4]);
  const float *x = static_cast<const float *>(args[5]);
  const float *y = static_cast<const float *>(args[6]);

  if (const char *kill = std::getenv("LOOM_TEST_KILL_AT_STEP"))
    if (static_cast<float>(std::atoi(kill)) == counter[0])
      std::raise(SIGKILL);

  // Forward: pred = x @ w, loss = mean((pred + b - y)^2).
  float *pred = reinterpret_cast<float *>(arena + kPred);
  arenaAcquire(ctx, kPred, kBatch * 4);
  cpu::gemm(false, false, 1, kBatch, 1, kFeatures, x, 0, w, 0, pred, 0);
  float *gradPred = reinterpret_cast<float *>(arena + kGradPred);
  arenaAcquire(ctx, kGradPred, kBatch * 4);
  double loss = 0;
  for (int64_t i = 0; i < kBatch; ++i) {
    float d = pred[i] + b[0] - y[i];
    loss += static_cast<double>(d) * d;
    gradPred[i] = 2.0f * d / static_cast<float>(kBatch);
  }
  arenaRelease(ctx, kPred, kBatch * 4);
  *static_cast<float *>(results[0]) = static_cast<float>(loss / kBatch);

  // Backward: dW = x^T @ gradPred, db = sum(gradPred).
  float *gradW = reinterpret_cast<float *>(arena + kGradW);
  arenaAcquire(ctx, kGradW, kFeatures * 4);
  cpu::gemm(true, false, 1, kFeatures, 1, kBatch, x, 0, gradPred, 0, gradW, 0);
  float *gradB = reinterpret_cast<float *>(arena + kGradB);
  arenaAcquire(ctx, kGradB, 4);
  double sum = 0;
  for (int64_t i = 0; i < kBatch; ++i)
    sum += gradPred[i];
  gradB[0] = static_cast<float>(sum);
  arenaRelease(ctx, kGradPred, kBatch * 4);

  // Data-parallel gradient average, both in flight at once.
  CommHandle hw = allReduceStart(ctx, gradW, kFeatures, ReduceOp::Avg);
  CommHandle hb = allReduceStart(ctx, gradB, 1, ReduceOp::Avg);
  wait(ctx, hb);
  wait(ctx, hw);

  // SGD with momentum.
  float *wNew = static_cast<float *>(results[1]);
  float *bNew = static_cast<float *>(results[2]);
  float *counterNew = static_cast<float *>(results[3]);
  float *mwNew = static_cast<float *>(results[4]);
  float *mbNew = static_cast<float *>(results[5]);
  for (int64_t f = 0; f < kFeatures; ++f) {
    mwNew[f] = kMomentum * mw[f] + gradW[f];
    wNew[f] = w[f] - kLr * mwNew[f];
  }
  mbNew[0] = kMomentum * mb[0] + gradB[0];
  bNew[0] = b[0] - kLr * mbNew[0];
  counterNew[0] = counter[0] + 1.0f;
  arenaRelease(ctx, kGradW, kFeatures * 4);
  arenaRelease(ctx, kGradB, 4);
}

const TensorSpec kArgs[] = {
    {"w", Role::Param, DType::F32, 2, {kFeatures, 1}, -1},
    {"b", Role::Param, DType::F32, 1, {1}, -1},
    {"step", Role::State, DType::F32, 0, {}, -1},
    {"momentum.w", Role::State, DType::F32, 2, {kFeatures, 1}, -1},
    {"momentum.b", Role::State, DType::F32, 1, {1}, -1},
    {"x", Role::Data, DType::F32, 2, {kBatch, kFeatures}, -1},
    {"y", Role::Data, DType::F32, 2, {kBatch, 1}, -1},
};

const TensorSpec kResults[] = {
    {"loss", Role::Loss, DType::F32, 0, {}, -1},
    {"w.new", Role::Param, DType::F32, 2, {kFeatures, 1}, 0},
    {"b.new", Role::Param, DType::F32, 1, {1}, 1},
    {"step.new", Role::State, DType::F32, 0, {}, 2},
    {"momentum.w.new", Role::State, DType::F32, 2, {kFeatures, 1}, 3},
    {"momentum.b.new", Role::State, DType::F32, 1, {1}, 4},
};

// dp = 0: replicated, so the same program runs on 1, 2 or 3 ranks, each
// reading the same rows; the step all-reduces (averages) its gradient itself.
const ProgramSpec kSpec = {
    "linear-regression", kArgs,       7,      kResults, 6,
    kArenaBytes,         kPlannedPeak, kBatch, step,     /*dp=*/0,
};

} // namespace

int main(int argc, char **argv) { return trainMain(argc, argv, kSpec); }

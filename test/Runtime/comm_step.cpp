//===- comm_step.cpp - Checks the Comm API from inside a step -------------===//
//
// A program with no arguments whose step exercises every Comm operation on
// any number of ranks and fails (through fail()) on a wrong value: the four
// reductions, overlapping collectives waited for out of order, a ring of
// point-to-point messages, zero-byte messages, a receive waited for while
// an earlier large send of the rank still waits for the peer's receive,
// progress without MPI calls from the compute thread (large transfers
// that complete while it only polls isComplete()), and row-sparse
// all-reduces in flight among dense ones. It prints
// `comm-check: rank R of N ok` per rank and step.
//
// Test hooks (LOOM_TEST_COMM=...) make it misuse the API, to check the
// errors: `bad-peer`, `double-wait`, `short-message` (needs 2 ranks).
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Comm.h"
#include "loom/Runtime/Runtime.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace loom::rt;

namespace {

void expect(Context &ctx, bool ok, const std::string &what) {
  if (!ok)
    fail(ctx, "comm-check", what.c_str());
}

void misuse(Context &ctx, const std::string &how) {
  int rank = worldRank(ctx), size = worldSize(ctx);
  char buffer[64] = {};
  if (how == "bad-peer") {
    sendStart(ctx, buffer, 8, size, 0);
  } else if (how == "double-wait") {
    CommHandle h = allReduceStart(ctx, reinterpret_cast<float *>(buffer), 4,
                                  ReduceOp::Sum);
    wait(ctx, h);
    wait(ctx, h);
  } else if (how == "short-message" && size >= 2) {
    if (rank == 0)
      wait(ctx, sendStart(ctx, buffer, 16, 1, 9));
    else if (rank == 1)
      wait(ctx, recvStart(ctx, buffer, 32, 0, 9));
  }
}

/// Spins, without any MPI call, until `handle` completed: only the
/// runtime's communication thread can complete it. Fails after 60 s.
void spinUntilComplete(Context &ctx, CommHandle handle, const char *what) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!isComplete(ctx, handle)) {
    if (std::chrono::steady_clock::now() > deadline)
      fail(ctx, "comm-check",
           (std::string(what) + " made no progress without MPI calls from the "
                                "compute thread")
               .c_str());
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

/// Sends never block a later receive: each rank sends a 16 MiB message
/// (past MPI's eager limits: it completes only once the peer posted the
/// receive) and a small one to the right, then waits for the small one
/// from the left before it posts the receive of the big one -- the pattern
/// of a pipeline's first stage (activations out, then a gradient in).
/// Completions published in issue order made every rank's small receive
/// wait for its big send, whose receive the peer posts only after its own
/// small receive returned: a deadlock until --comm-timeout.
void checkReceiveAfterUnmatchedSend(Context &ctx) {
  const int rank = worldRank(ctx), size = worldSize(ctx);
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  const int64_t bytes = 16 << 20;
  std::vector<char> bigOut(static_cast<size_t>(bytes), static_cast<char>(rank)),
      bigIn(static_cast<size_t>(bytes), -1);
  int smallOut = rank, smallIn = -1;
  CommHandle hBig = sendStart(ctx, bigOut.data(), bytes, right, 21);
  CommHandle hSmall = sendStart(ctx, &smallOut, sizeof smallOut, right, 22);
  CommHandle rSmall = recvStart(ctx, &smallIn, sizeof smallIn, left, 22);
  wait(ctx, rSmall);
  expect(ctx, smallIn == left, "small message wrong");
  CommHandle rBig = recvStart(ctx, bigIn.data(), bytes, left, 21);
  wait(ctx, rBig);
  wait(ctx, hSmall);
  wait(ctx, hBig);
  expect(ctx, bigIn[0] == static_cast<char>(left) &&
                  bigIn[static_cast<size_t>(bytes - 1)] ==
                      static_cast<char>(left),
         "big message after the small one wrong");
}

/// Progress during compute: a 32 MiB all-reduce and a 16 MiB ring message
/// (both far above MPI's eager limits, so they need many progress rounds)
/// complete while this thread only polls isComplete(), which calls no MPI.
void checkProgress(Context &ctx) {
  const int rank = worldRank(ctx), size = worldSize(ctx);
  const int64_t n = 8 << 20;
  // Element i is (rank + 1) * (i % 4099 + 1) on each rank: a chunk summed
  // with another rank's chunk at a different offset (the pair all-reduce
  // sends 1 MiB chunks) gives wrong sums.
  std::vector<float> big(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    big[static_cast<size_t>(i)] =
        static_cast<float>((rank + 1) * (i % 4099 + 1));
  CommHandle h = allReduceStart(ctx, big.data(), n, ReduceOp::Sum);
  spinUntilComplete(ctx, h, "an all-reduce of 32 MiB");
  wait(ctx, h);
  const float ranks = static_cast<float>(size * (size + 1) / 2);
  bool sums = true;
  for (int64_t i = 0; i < n; ++i)
    sums &= big[static_cast<size_t>(i)] ==
             ranks * static_cast<float>(i % 4099 + 1);
  expect(ctx, sums, "big all-reduce wrong");
  if (size < 2)
    return;
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  const int64_t bytes = 16 << 20;
  std::vector<char> out(static_cast<size_t>(bytes), static_cast<char>(rank)),
      in(static_cast<size_t>(bytes), -1);
  CommHandle hr = recvStart(ctx, in.data(), bytes, left, 11);
  CommHandle hs = sendStart(ctx, out.data(), bytes, right, 11);
  spinUntilComplete(ctx, hs, "a send of 16 MiB");
  spinUntilComplete(ctx, hr, "a receive of 16 MiB");
  wait(ctx, hs);
  wait(ctx, hr);
  expect(ctx, in[0] == static_cast<char>(left) &&
                  in[static_cast<size_t>(bytes - 1)] == static_cast<char>(left),
         "big ring message wrong");
}

/// Row-sparse all-reduces (rowSparseAllReduceStart): three in flight at
/// once, interleaved with dense all-reduces issued between them and waited
/// for in reverse order -- the row exchange's second collective is posted
/// after later operations, so this checks that every rank still posts its
/// collectives in one order. Rank r touches rows r, 2r+1 and the shared
/// row 0 of table k; rank 0 touches nothing in the last table and every
/// rank nothing in an all-zero one. Each must equal the dense sum.
void checkRowSparse(Context &ctx) {
  const int rank = worldRank(ctx), size = worldSize(ctx);
  const int64_t rows = 64, width = 5;
  auto value = [](int r, int64_t row, int64_t j, int table) {
    return static_cast<float>((r + 1) * 100 + row * 10 + j + table);
  };
  auto touched = [&](int r, int64_t row, int table) {
    if (table == 2)
      return false; // all zeros
    if (table == 1 && r == 0)
      return false;
    return row == 0 || row == r || row == 2 * r + 1;
  };
  std::vector<std::vector<float>> tables(3), expected(3);
  for (int t = 0; t < 3; ++t) {
    tables[t].assign(static_cast<size_t>(rows * width), 0.0f);
    expected[t].assign(static_cast<size_t>(rows * width), 0.0f);
    for (int64_t row = 0; row < rows; ++row)
      for (int64_t j = 0; j < width; ++j) {
        size_t at = static_cast<size_t>(row * width + j);
        if (touched(rank, row, t))
          tables[t][at] = value(rank, row, j, t);
        for (int r = 0; r < size; ++r)
          if (touched(r, row, t))
            expected[t][at] += value(r, row, j, t);
      }
  }
  std::vector<float> dense(1000, 1.0f), dense2(1000, 2.0f);
  CommHandle h0 = rowSparseAllReduceStart(ctx, tables[0].data(), rows, width);
  CommHandle d0 = allReduceStart(ctx, dense.data(), 1000, ReduceOp::Sum);
  CommHandle h1 = rowSparseAllReduceStart(ctx, tables[1].data(), rows, width);
  CommHandle d1 = allReduceStart(ctx, dense2.data(), 1000, ReduceOp::Sum);
  CommHandle h2 = rowSparseAllReduceStart(ctx, tables[2].data(), rows, width);
  wait(ctx, h2);
  wait(ctx, d1);
  wait(ctx, h1);
  wait(ctx, d0);
  wait(ctx, h0);
  for (int t = 0; t < 3; ++t)
    for (size_t i = 0; i < tables[t].size(); ++i)
      expect(ctx, tables[t][i] == expected[t][i],
             "row-sparse sum " + std::to_string(t) + " wrong at " +
                 std::to_string(i) + ": " + std::to_string(tables[t][i]) +
                 " != " + std::to_string(expected[t][i]));
  expect(ctx, dense[0] == static_cast<float>(size) &&
                  dense2[999] == static_cast<float>(2 * size),
         "dense all-reduce between row-sparse ones wrong");
}

void step(Context &ctx, void *const *, void *const *results, char *) {
  *static_cast<float *>(results[0]) = 0.0f;
  if (const char *how = std::getenv("LOOM_TEST_COMM"))
    misuse(ctx, how);

  const int rank = worldRank(ctx), size = worldSize(ctx);
  const int n = 1000;
  std::vector<float> sum(n), max(n), min(n), avg(n);
  for (int i = 0; i < n; ++i) {
    sum[i] = static_cast<float>(rank + i);
    max[i] = static_cast<float>(rank * 10 + i);
    min[i] = static_cast<float>(rank + i);
    avg[i] = static_cast<float>(rank);
  }
  // All four in flight, completed in reverse order.
  CommHandle hs = allReduceStart(ctx, sum.data(), n, ReduceOp::Sum);
  CommHandle hx = allReduceStart(ctx, max.data(), n, ReduceOp::Max);
  CommHandle hn = allReduceStart(ctx, min.data(), n, ReduceOp::Min);
  CommHandle ha = allReduceStart(ctx, avg.data(), n, ReduceOp::Avg);
  wait(ctx, ha);
  wait(ctx, hn);
  wait(ctx, hx);
  wait(ctx, hs);
  for (int i = 0; i < n; ++i) {
    std::string at = " at " + std::to_string(i);
    expect(ctx, sum[i] == static_cast<float>(size * i + size * (size - 1) / 2),
           "sum wrong" + at);
    expect(ctx, max[i] == static_cast<float>((size - 1) * 10 + i),
           "max wrong" + at);
    expect(ctx, min[i] == static_cast<float>(i), "min wrong" + at);
    expect(ctx, avg[i] == static_cast<float>(size - 1) / 2.0f,
           "avg wrong" + at);
  }

  // A ring: receive from the left, send to the right (to oneself alone).
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  std::vector<int64_t> out(100), in(100, -1);
  for (int j = 0; j < 100; ++j)
    out[j] = rank * 1000 + j;
  CommHandle hr = recvStart(ctx, in.data(), 800, left, 7);
  CommHandle hsend = sendStart(ctx, out.data(), 800, right, 7);
  // A zero-byte message on another tag, in flight at the same time.
  CommHandle hr0 = recvStart(ctx, nullptr, 0, left, 8);
  CommHandle hs0 = sendStart(ctx, nullptr, 0, right, 8);
  wait(ctx, hs0);
  wait(ctx, hr0);
  wait(ctx, hsend);
  wait(ctx, hr);
  for (int j = 0; j < 100; ++j)
    expect(ctx, in[j] == left * 1000 + j,
           "ring message wrong at " + std::to_string(j));

  checkReceiveAfterUnmatchedSend(ctx);
  checkProgress(ctx);
  checkRowSparse(ctx);

  std::printf("comm-check: rank %d of %d ok\n", rank, size);
  std::fflush(stdout);
}

const TensorSpec kResults[] = {{"loss", Role::Loss, DType::F32, 0, {}, -1}};
// dp = 0: replicated, runs on any number of ranks (the checks vary it).
const ProgramSpec kSpec = {"comm-check", nullptr, 0, kResults, 1, 0, 0, 0, step,
                           /*dp=*/0};

} // namespace

int main(int argc, char **argv) { return trainMain(argc, argv, kSpec); }

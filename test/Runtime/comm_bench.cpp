//===- comm_bench.cpp - Communication figures of the runtime --------------===//
//
// A program for bench/link_bandwidth.py and bench/overlap_progress.py (run
// under mpirun or python -m loom.vcluster; rank 0 prints one JSON line per
// measurement). LOOM_BENCH selects what to measure:
//
//   bandwidth  LOOM_BENCH_BYTES per message: rank 0 sends to rank 1 through
//              the runtime (sendStart/recvStart/wait) and through a plain
//              blocking MPI_Send/MPI_Recv loop; all ranks all-reduce the
//              same bytes through the runtime and through MPI_Allreduce.
//              Seconds per operation (best of LOOM_BENCH_REPEAT).
//   overlap    a compute block of LOOM_BENCH_COMPUTE_MS milliseconds (a
//              float loop, no MPI) and an all-reduce of LOOM_BENCH_BYTES,
//              each alone, then the all-reduce started before the block
//              and waited for after it.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Comm.h"
#include "loom/Runtime/Runtime.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace loom::rt;

namespace {

double seconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t envInt(const char *name, int64_t fallback) {
  const char *v = std::getenv(name);
  return v && *v ? std::atoll(v) : fallback;
}

/// Best of `repeat` timings of `body` (all ranks in step: a barrier first).
template <typename F> double best(int repeat, F body) {
  double result = 1e30;
  for (int i = 0; i < repeat; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    double start = seconds();
    body();
    double took = seconds() - start;
    MPI_Allreduce(MPI_IN_PLACE, &took, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    result = std::min(result, took);
  }
  return result;
}

/// About `ms` milliseconds of float work on this thread, no MPI.
float compute(double ms, std::vector<float> &work) {
  double until = seconds() + ms / 1e3;
  float acc = 0;
  while (seconds() < until)
    for (float &x : work) {
      x = x * 1.0000001f + 0.5f;
      acc += x;
    }
  return acc;
}

void bandwidth(Context &ctx, int64_t bytes, int repeat) {
  const int rank = worldRank(ctx), size = worldSize(ctx);
  std::vector<char> buffer(static_cast<size_t>(bytes), 1);
  std::vector<float> floats(static_cast<size_t>(bytes / 4), 1.0f);
  double p2pRuntime = 0, p2pMpi = 0;
  if (size >= 2) {
    p2pRuntime = best(repeat, [&] {
      if (rank == 0)
        wait(ctx, sendStart(ctx, buffer.data(), bytes, 1, 1));
      else if (rank == 1)
        wait(ctx, recvStart(ctx, buffer.data(), bytes, 0, 1));
    });
    p2pMpi = best(repeat, [&] {
      if (rank == 0)
        MPI_Send(buffer.data(), static_cast<int>(bytes), MPI_BYTE, 1, 2,
                 MPI_COMM_WORLD);
      else if (rank == 1)
        MPI_Recv(buffer.data(), static_cast<int>(bytes), MPI_BYTE, 0, 2,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    });
  }
  double arRuntime = best(repeat, [&] {
    wait(ctx, allReduceStart(ctx, floats.data(),
                             static_cast<int64_t>(floats.size()),
                             ReduceOp::Sum));
  });
  double arMpi = best(repeat, [&] {
    MPI_Allreduce(MPI_IN_PLACE, floats.data(), static_cast<int>(floats.size()),
                  MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  });
  if (rank == 0)
    std::printf("{\"bench\": \"bandwidth\", \"ranks\": %d, \"bytes\": %lld, "
                "\"send_runtime_s\": %.6f, \"send_mpi_s\": %.6f, "
                "\"allreduce_runtime_s\": %.6f, \"allreduce_mpi_s\": %.6f}\n",
                size, static_cast<long long>(bytes), p2pRuntime, p2pMpi,
                arRuntime, arMpi);
}

void overlap(Context &ctx, int64_t bytes, double ms, int repeat) {
  std::vector<float> floats(static_cast<size_t>(bytes / 4), 1.0f);
  std::vector<float> work(4096, 1.0f);
  float sink = 0;
  double computeOnly = best(repeat, [&] { sink += compute(ms, work); });
  double commOnly = best(repeat, [&] {
    wait(ctx, allReduceStart(ctx, floats.data(),
                             static_cast<int64_t>(floats.size()),
                             ReduceOp::Sum));
  });
  double both = best(repeat, [&] {
    CommHandle h = allReduceStart(ctx, floats.data(),
                                  static_cast<int64_t>(floats.size()),
                                  ReduceOp::Sum);
    sink += compute(ms, work);
    wait(ctx, h);
  });
  if (worldRank(ctx) == 0)
    std::printf("{\"bench\": \"overlap\", \"ranks\": %d, \"bytes\": %lld, "
                "\"compute_s\": %.6f, \"comm_s\": %.6f, \"both_s\": %.6f, "
                "\"sink\": %g}\n",
                worldSize(ctx), static_cast<long long>(bytes), computeOnly,
                commOnly, both, sink > 0 ? 1.0 : 0.0);
}

void step(Context &ctx, void *const *, void *const *results, char *) {
  *static_cast<float *>(results[0]) = 0.0f;
  std::string what = std::getenv("LOOM_BENCH") ? std::getenv("LOOM_BENCH") : "";
  int64_t bytes = envInt("LOOM_BENCH_BYTES", 4 << 20);
  int repeat = static_cast<int>(envInt("LOOM_BENCH_REPEAT", 3));
  if (what == "bandwidth")
    bandwidth(ctx, bytes, repeat);
  else if (what == "overlap")
    overlap(ctx, bytes, static_cast<double>(envInt("LOOM_BENCH_COMPUTE_MS", 200)),
            repeat);
  else
    fail(ctx, "comm-bench", "set LOOM_BENCH to bandwidth or overlap");
  std::fflush(stdout);
}

const TensorSpec kResults[] = {{"loss", Role::Loss, DType::F32, 0, {}, -1}};
const ProgramSpec kSpec = {"comm-bench", nullptr, 0, kResults, 1, 0, 0, 0, step,
                           /*dp=*/0};

} // namespace

int main(int argc, char **argv) { return trainMain(argc, argv, kSpec); }

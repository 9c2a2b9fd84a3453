//===- Copy.cpp - Swap copies between the device and host pools ----------===//
//
// loom-swap's offloads and prefetches: the emitted step starts a copy
// (swapOutStart, swapInStart) and waits on it later; a copy thread per rank
// does the copies in issue order, so they overlap the compute thread's
// kernels. On the CPU backend both pools are host memory: the copy is a
// memcpy, which --host-link RATE stretches to bytes / RATE seconds so that
// exposed transfer time is real in CPU runs. Every copy is a span on the
// "copy" track of --trace.
//
//===----------------------------------------------------------------------===//

#include "RuntimeImpl.h"

#include <cstring>

namespace loom {
namespace rt {

CopyEngine::CopyEngine(std::chrono::steady_clock::time_point start,
                       double bytesPerSecond)
    : bytesPerSecond(bytesPerSecond), start(start) {
  thread = std::thread([this] { loop(); });
}

CopyEngine::~CopyEngine() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  workReady.notify_all();
  if (thread.joinable())
    thread.join();
}

double CopyEngine::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start)
      .count();
}

int64_t CopyEngine::submit(void *dst, const void *src, int64_t bytes,
                           bool out) {
  int64_t id;
  {
    std::lock_guard<std::mutex> lock(mutex);
    id = nextId++;
    Job job{dst, src, bytes, out};
    job.issuedAt = now();
    jobs.emplace(id, job);
    queue.push_back(id);
  }
  workReady.notify_one();
  return id;
}

void CopyEngine::loop() {
  std::unique_lock<std::mutex> lock(mutex);
  for (;;) {
    workReady.wait(lock, [&] { return stopping || !queue.empty(); });
    if (queue.empty())
      return; // stopping, nothing left
    int64_t id = queue.front();
    queue.pop_front();
    Job job = jobs.at(id);
    lock.unlock();
    auto begin = std::chrono::steady_clock::now();
    if (job.bytes > 0)
      std::memcpy(job.dst, job.src, static_cast<size_t>(job.bytes));
    if (bytesPerSecond > 0) {
      auto until = begin + std::chrono::duration_cast<
                               std::chrono::steady_clock::duration>(
                               std::chrono::duration<double>(
                                   static_cast<double>(job.bytes) /
                                   bytesPerSecond));
      std::this_thread::sleep_until(until);
    }
    lock.lock();
    Job &slot = jobs.at(id);
    slot.done = true;
    slot.doneAt = now();
    completed.notify_all();
  }
}

bool CopyEngine::wait(int64_t id, double &issued, double &done,
                      int64_t &bytes, bool &out) {
  std::unique_lock<std::mutex> lock(mutex);
  auto it = jobs.find(id);
  if (it == jobs.end())
    return false;
  completed.wait(lock, [&] { return jobs.at(id).done; });
  const Job &job = jobs.at(id);
  issued = job.issuedAt;
  done = job.doneAt;
  bytes = job.bytes;
  out = job.out;
  jobs.erase(id);
  return true;
}

namespace {

CopyHandle start(Context &ctx, void *dst, const void *src, int64_t bytes,
                 bool out) {
  if (bytes < 0 || (bytes > 0 && (!dst || !src)))
    fail(ctx, out ? "swapOutStart" : "swapInStart",
         "invalid buffer (a bug in loom-swap or the emitter)");
  if (!ctx.copies)
    ctx.copies = std::make_unique<CopyEngine>(ctx.clockStart,
                                              ctx.hostLinkBytesPerSecond);
  return CopyHandle{ctx.copies->submit(dst, src, bytes, out)};
}

} // namespace

char *hostArena(Context &ctx) { return ctx.hostArena; }

CopyHandle swapOutStart(Context &ctx, void *host, const void *device,
                        int64_t bytes) {
  return start(ctx, host, device, bytes, /*out=*/true);
}

CopyHandle swapInStart(Context &ctx, void *device, const void *host,
                       int64_t bytes) {
  return start(ctx, device, host, bytes, /*out=*/false);
}

void wait(Context &ctx, CopyHandle handle) {
  double waitBegin = ctx.now();
  double issued = 0, done = 0;
  int64_t bytes = 0;
  bool out = false;
  if (!ctx.copies || !ctx.copies->wait(handle.id, issued, done, bytes, out))
    fail(ctx, "wait", "not a copy in flight (a bug in loom-swap or the "
                      "emitter)");
  if (ctx.recorder.tracing) {
    std::string args = "\"bytes\": " + std::to_string(bytes);
    recordSpan(ctx, out ? "swap out" : "swap in", "copy", issued, done, args);
    double waited = ctx.now();
    if (waited - waitBegin > 1e-6)
      recordSpan(ctx, out ? "wait swap out" : "wait swap in", "compute",
                 waitBegin, waited, args);
  }
}

} // namespace rt
} // namespace loom

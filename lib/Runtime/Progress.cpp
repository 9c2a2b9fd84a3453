//===- Progress.cpp - The communication thread of a rank ------------------===//
//
// CommEngine (RuntimeImpl.h): a thread per rank that posts the operations
// the compute thread queued, in issue order, and drives them with MPI_Test
// until they complete. MPI's CPU transports (TCP between hosts, shared
// memory inside one) advance only inside MPI calls; without this thread an
// all-reduce started before a kernel advanced only in the wait() after it.
//
// Each operation is published as complete as soon as MPI completed it,
// whatever is still in flight before it: a send past MPI's eager limit
// completes only once the peer posted the matching receive, and the peer
// may post it only after this rank's later receive returned (GPipe: the
// first stage sends every micro-batch's activations, then waits for the
// first gradient, which the last stage sends before it receives the later
// activations). Publishing completions in issue order made that receive
// wait for the send, a deadlock between the two ranks.
//
// A row-sparse all-reduce (rowSparseAllReduceStart) is two collectives on
// its group's row-sparse communicator: an all-gather of the ranks' row
// counts, then, once that completed, all-gathers of their row indices and
// rows; its sum is formed here when the second completes. Its second
// collective is posted later than operations issued after it, so these
// all-reduces run one at a time on communicators of their own: every rank
// posts their collectives in the same order.
//
// An all-reduce in a group of two ranks is one message each way on the
// group's pair communicator (both directions of the link at once; in
// chunks of kPairChunk elements, so that the directions interleave), the
// two values combined here on completion (PendingComm::pairPeer).
//
// Polling: while operations are in flight the thread tests them, and
// sleeps between rounds that completed nothing, from 5 us doubling to
// 200 us, so that a rank whose transfer waits on a slow link does not take
// a core from the kernels (ranks are often oversubscribed here); any
// completion or new operation resets the pause. While the compute thread
// is blocked in wait() the pause stays at 5 us (its core is free then, and
// the time between a transfer's end and the thread seeing it is on the
// critical path: with the overlap split's 32 all-reduces per step over a
// slow link, up to 200 us each). With nothing in flight the thread sleeps
// on a condition variable.
//
//===----------------------------------------------------------------------===//

#include "RuntimeImpl.h"

#include <algorithm>
#include <climits>
#include <optional>
#include <tuple>
#include <utility>

namespace loom {
namespace rt {

namespace {
/// Elements per MPI call: the largest multiple of 64 that fits in an int.
constexpr int64_t kMaxChunk = (INT_MAX / 64) * 64;
/// Elements per message of a two-rank all-reduce (1 MiB). Sent as one
/// message each way, a 13 MB gradient all-reduce over a throttled TCP link
/// (OpenMPI, the vcluster) took twice the link time in about half of the
/// steps: the two directions ran one after the other. In 1 MiB chunks
/// they interleave, and the time was the link's in every step.
constexpr int64_t kPairChunk = 256 * 1024;
constexpr auto kMinPause = std::chrono::microseconds(5);
constexpr auto kMaxPause = std::chrono::microseconds(200);
} // namespace

struct CommEngine::Slot {
  enum class State { Free, Queued, Posted, Complete };
  State state = State::Free;
  PendingComm op;
};

CommEngine::CommEngine(std::chrono::steady_clock::time_point start)
    : start(start) {
  thread = std::thread([this] { loop(); });
}

CommEngine::~CommEngine() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  workReady.notify_all();
  thread.join();
}

double CommEngine::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start)
      .count();
}

int64_t CommEngine::submit(PendingComm op) {
  op.issuedAt = now();
  int64_t id;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!freeSlots.empty()) {
      id = freeSlots.back();
      freeSlots.pop_back();
    } else {
      id = static_cast<int64_t>(slots.size());
      slots.push_back(std::make_unique<Slot>());
    }
    Slot &slot = *slots[static_cast<size_t>(id)];
    slot.state = Slot::State::Queued;
    slot.op = std::move(op);
    toPost.push_back(id);
  }
  workReady.notify_one();
  return id;
}

bool CommEngine::isLive(int64_t id) {
  std::lock_guard<std::mutex> lock(mutex);
  return id >= 0 && id < static_cast<int64_t>(slots.size()) &&
         slots[static_cast<size_t>(id)]->state != Slot::State::Free;
}

bool CommEngine::isComplete(int64_t id) {
  std::lock_guard<std::mutex> lock(mutex);
  return id >= 0 && id < static_cast<int64_t>(slots.size()) &&
         slots[static_cast<size_t>(id)]->state == Slot::State::Complete;
}

bool CommEngine::wait(int64_t id, double timeoutSeconds, PendingComm &done) {
  std::unique_lock<std::mutex> lock(mutex);
  Slot &slot = *slots[static_cast<size_t>(id)];
  auto isDone = [&] { return slot.state == Slot::State::Complete; };
  // Counted as blocked while it waits; the thread, woken, polls at its
  // shortest pause until no one is.
  struct Blocked {
    CommEngine &engine;
    explicit Blocked(CommEngine &engine) : engine(engine) {
      ++engine.waiters;
      engine.workReady.notify_one();
    }
    ~Blocked() { --engine.waiters; }
  };
  std::optional<Blocked> blocked;
  if (!isDone())
    blocked.emplace(*this);
  if (timeoutSeconds > 0) {
    if (!completed.wait_for(lock, std::chrono::duration<double>(timeoutSeconds),
                            isDone)) {
      // What the message needs; the requests stay with the thread.
      const PendingComm &op = slot.op;
      done = PendingComm();
      done.kind = op.kind;
      done.count = op.count;
      done.group = op.group;
      done.peer = op.peer;
      done.tag = op.tag;
      done.issuedAt = op.issuedAt;
      return false;
    }
  } else {
    completed.wait(lock, isDone);
  }
  done = std::move(slot.op);
  slot = Slot();
  freeSlots.push_back(id);
  return true;
}

void CommEngine::postRowCounts(PendingComm &op) {
  // This rank's rows holding a nonzero (a NaN counts), packed.
  const float *data = static_cast<const float *>(op.buffer);
  const int64_t rows = op.width > 0 ? op.count / op.width : 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = data + r * op.width;
    if (std::any_of(row, row + op.width, [](float v) { return v != 0.0f; })) {
      op.rowIndices.push_back(r);
      op.rowValues.insert(op.rowValues.end(), row, row + op.width);
    }
  }
  op.localRows = static_cast<int64_t>(op.rowIndices.size());
  op.sentBytes = int64_t{sizeof(int64_t)} +
                 op.localRows * (int64_t{sizeof(int64_t)} +
                                 op.width * int64_t{sizeof(float)});
  int size = 1;
  MPI_Comm_size(op.comm, &size);
  op.rankRows.assign(static_cast<size_t>(size), 0);
  MPI_Request request;
  int code = MPI_Iallgather(&op.localRows, 1, MPI_INT64_T, op.rankRows.data(),
                            1, MPI_INT64_T, op.comm, &request);
  if (code != MPI_SUCCESS) {
    op.error = code;
    return;
  }
  op.requests.push_back(request);
}

void CommEngine::postRows(PendingComm &op) {
  op.phase = 1;
  op.requests.clear();
  // MPI counts are ints: rows per rank, rows of `width` floats each. The
  // arrays live in `op`: MPI reads them until the all-gathers complete.
  std::vector<int> &counts = op.rowCounts, &offsets = op.rowOffsets;
  int64_t total = 0;
  for (int64_t n : op.rankRows) {
    counts.push_back(static_cast<int>(n));
    offsets.push_back(static_cast<int>(total));
    total += n;
  }
  if (total > INT_MAX || op.width > INT_MAX) {
    op.error = MPI_ERR_COUNT;
    return;
  }
  op.allIndices.resize(static_cast<size_t>(total));
  op.allValues.resize(static_cast<size_t>(total * op.width));
  MPI_Type_contiguous(static_cast<int>(op.width), MPI_FLOAT, &op.rowType);
  MPI_Type_commit(&op.rowType);
  int mine = static_cast<int>(op.localRows);
  for (auto [send, recv, type] :
       {std::tuple{static_cast<void *>(op.rowIndices.data()),
                   static_cast<void *>(op.allIndices.data()), MPI_INT64_T},
        std::tuple{static_cast<void *>(op.rowValues.data()),
                   static_cast<void *>(op.allValues.data()), op.rowType}}) {
    MPI_Request request;
    int code = MPI_Iallgatherv(send, mine, type, recv, counts.data(),
                               offsets.data(), type, op.comm, &request);
    if (code != MPI_SUCCESS) {
      op.error = code;
      return;
    }
    op.requests.push_back(request);
  }
  op.statuses.resize(op.requests.size());
}

void CommEngine::sumRows(PendingComm &op) {
  // Every rank adds the same rows in the same (rank) order: the ranks end
  // with identical sums.
  float *data = static_cast<float *>(op.buffer);
  std::fill(data, data + op.count, 0.0f);
  const float *value = op.allValues.data();
  for (int64_t index : op.allIndices) {
    float *row = data + index * op.width;
    for (int64_t j = 0; j < op.width; ++j)
      row[j] += value[j];
    value += op.width;
  }
}

void CommEngine::combinePair(PendingComm &op) {
  float *data = static_cast<float *>(op.buffer);
  const float *other = op.pairValues.data();
  // The lower rank's value first: the same operation on the same operands
  // in the same order on both ranks (max and min of a NaN depend on it).
  auto combine = [&](auto f) {
    for (int64_t i = 0; i < op.count; ++i)
      data[i] = op.pairLow ? f(data[i], other[i]) : f(other[i], data[i]);
  };
  if (op.op == MPI_MAX)
    combine([](float a, float b) { return b > a ? b : a; });
  else if (op.op == MPI_MIN)
    combine([](float a, float b) { return b < a ? b : a; });
  else
    combine([](float a, float b) { return a + b; });
  std::vector<float>().swap(op.pairValues);
}

void CommEngine::post(Slot &slot) {
  PendingComm &op = slot.op;
  // `request` is read after the call that fills it returned.
  auto record = [&](int code, const MPI_Request &request) {
    if (code != MPI_SUCCESS && op.error == MPI_SUCCESS)
      op.error = code;
    if (code == MPI_SUCCESS)
      op.requests.push_back(request);
  };
  if (op.rowSparse) {
    postRowCounts(op);
  } else if (op.kind == PendingComm::Kind::AllReduce && op.pairPeer >= 0) {
    // Both directions at once, in kPairChunk pieces; chunks pair up in
    // order (one tag).
    float *data = static_cast<float *>(op.buffer);
    op.pairValues.resize(static_cast<size_t>(op.count));
    for (int64_t begin = 0; begin < op.count; begin += kPairChunk) {
      int n = static_cast<int>(std::min(kPairChunk, op.count - begin));
      MPI_Request request;
      record(MPI_Irecv(op.pairValues.data() + begin, n, MPI_FLOAT,
                       op.pairPeer, 0, op.comm, &request),
             request);
      record(MPI_Isend(data + begin, n, MPI_FLOAT, op.pairPeer, 0, op.comm,
                       &request),
             request);
    }
  } else if (op.kind == PendingComm::Kind::AllReduce) {
    float *data = static_cast<float *>(op.buffer);
    for (int64_t begin = 0; begin < op.count; begin += kMaxChunk) {
      int n = static_cast<int>(std::min(kMaxChunk, op.count - begin));
      MPI_Request request;
      record(MPI_Iallreduce(MPI_IN_PLACE, data + begin, n, MPI_FLOAT, op.op,
                            op.comm, &request),
             request);
    }
  } else {
    // Chunks of one message pair up in order (MPI keeps messages between
    // two ranks with one tag in order); a zero-byte message is one message.
    char *data = static_cast<char *>(op.buffer);
    int64_t begin = 0;
    do {
      int n = static_cast<int>(std::min(kMaxChunk, op.count - begin));
      MPI_Request request;
      record(op.kind == PendingComm::Kind::Send
                 ? MPI_Isend(data + begin, n, MPI_BYTE, op.peer, op.tag,
                             op.comm, &request)
                 : MPI_Irecv(data + begin, n, MPI_BYTE, op.peer, op.tag,
                             op.comm, &request),
             request);
      begin += n;
    } while (begin < op.count);
  }
  op.statuses.resize(op.requests.size());
}

CommEngine::Progress CommEngine::test(Slot &slot) {
  PendingComm &op = slot.op;
  if (!op.requests.empty() && !testRequests(op))
    return Progress::Pending;
  if (op.pairPeer >= 0 && op.error == MPI_SUCCESS)
    combinePair(op);
  if (!op.rowSparse)
    return Progress::Done;
  if (op.error == MPI_SUCCESS && op.phase == 0) {
    postRows(op);
    if (op.error == MPI_SUCCESS)
      return Progress::Advanced;
  }
  if (op.rowType != MPI_DATATYPE_NULL)
    MPI_Type_free(&op.rowType);
  if (op.error == MPI_SUCCESS)
    sumRows(op);
  return Progress::Done;
}

bool CommEngine::testRequests(PendingComm &op) {
  int flag = 0;
  int code = MPI_Testall(static_cast<int>(op.requests.size()),
                         op.requests.data(), &flag, op.statuses.data());
  if (code == MPI_ERR_IN_STATUS) {
    for (const MPI_Status &status : op.statuses)
      if (status.MPI_ERROR != MPI_SUCCESS) {
        code = status.MPI_ERROR;
        break;
      }
    flag = 1;
  } else if (code != MPI_SUCCESS) {
    flag = 1;
  }
  if (code != MPI_SUCCESS && op.error == MPI_SUCCESS)
    op.error = code;
  return flag != 0;
}

void CommEngine::loop() {
  std::unique_lock<std::mutex> lock(mutex);
  auto pause = kMinPause;
  for (;;) {
    if (toPost.empty() && inFlight.empty() && rowSparseWaiting.empty()) {
      if (stopping)
        return;
      workReady.wait(lock);
      pause = kMinPause;
      continue;
    }
    bool progressed = false;
    // Post what was issued, in issue order. The slot stays put (slots hold
    // pointers) and only this thread touches a Queued or Posted slot's
    // requests, so MPI runs without the lock.
    while (!toPost.empty()) {
      int64_t id = toPost.front();
      toPost.pop_front();
      Slot *slot = slots[static_cast<size_t>(id)].get();
      if (slot->op.rowSparse) {
        if (rowSparseBusy >= 0) {
          rowSparseWaiting.push_back(id);
          continue;
        }
        rowSparseBusy = id;
      }
      lock.unlock();
      post(*slot);
      lock.lock();
      slot->state = Slot::State::Posted;
      inFlight.push_back(id);
      progressed = true;
    }
    // Drive every posted operation; publish each one as soon as it
    // completed (never behind an earlier one: see the file comment).
    std::vector<std::pair<int64_t, Slot *>> pending;
    for (int64_t id : inFlight)
      pending.emplace_back(id, slots[static_cast<size_t>(id)].get());
    lock.unlock();
    std::vector<int64_t> finished;
    bool rowSparseReleased = false;
    for (auto [id, slot] : pending) {
      Progress progress = test(*slot);
      if (progress != Progress::Pending && id == rowSparseBusy)
        rowSparseReleased = true;
      if (progress == Progress::Done) {
        slot->op.completedAt = now();
        finished.push_back(id);
      }
    }
    lock.lock();
    if (rowSparseReleased) {
      // The next row-sparse all-reduce may post its first collective.
      rowSparseBusy = -1;
      if (!rowSparseWaiting.empty()) {
        toPost.push_front(rowSparseWaiting.front());
        rowSparseWaiting.pop_front();
      }
      progressed = true;
    }
    if (!finished.empty()) {
      for (int64_t id : finished) {
        slots[static_cast<size_t>(id)]->state = Slot::State::Complete;
        inFlight.erase(std::find(inFlight.begin(), inFlight.end(), id));
      }
      completed.notify_all();
      progressed = true;
    }
    if (progressed) {
      pause = kMinPause;
      continue;
    }
    workReady.wait_for(lock, pause);
    pause = waiters > 0 ? kMinPause : std::min(pause * 2, kMaxPause);
  }
}

} // namespace rt
} // namespace loom

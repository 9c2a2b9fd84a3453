//===- CudaBackend.cpp - Device setup, memory and NCCL communication ------===//
//
// Host code of the CUDA backend (compiled by the C++ compiler against the
// CUDA runtime, cuBLAS and NCCL headers). See CudaKernels.h.
//
// NCCL has no message tags: point-to-point messages between two ranks match
// in the order they are posted. The tag is checked for range like the MPI
// backend's, so that a program valid on one backend is valid on the other.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/CudaKernels.h"
#include "CudaState.h"

#include <algorithm>
#include <string>

namespace loom {
namespace rt {
namespace cuda {

namespace {

void checkBlas(Context &ctx, const char *op, cublasStatus_t status) {
  if (status != CUBLAS_STATUS_SUCCESS)
    fail(ctx, op, (std::string("cuBLAS: ") + cublasGetStatusString(status)).c_str());
}

void checkNccl(Context &ctx, const char *op, ncclResult_t result,
               ncclComm_t comm = nullptr) {
  if (result == ncclSuccess || result == ncclInProgress)
    return;
  std::string message = std::string("NCCL: ") + ncclGetErrorString(result);
  if (const char *last = ncclGetLastError(comm); last && *last)
    message += std::string(" (") + last + ")";
  fail(ctx, op, message.c_str());
}

/// This rank's index among the ranks on its node.
int localRank(Context &ctx) {
  if (ctx.comm == MPI_COMM_NULL)
    return 0;
  MPI_Comm node;
  MPI_Comm_split_type(ctx.comm, MPI_COMM_TYPE_SHARED, ctx.rank, MPI_INFO_NULL,
                      &node);
  int rank = 0;
  MPI_Comm_rank(node, &rank);
  MPI_Comm_free(&node);
  return rank;
}

} // namespace

CudaState &state(Context &ctx) {
  if (!ctx.cuda)
    fail(ctx, "cuda", "the CUDA backend is not initialised (call cuda::init)");
  return *static_cast<CudaState *>(ctx.cuda);
}

void check(Context &ctx, const char *op, cudaError_t code) {
  if (code != cudaSuccess)
    fail(ctx, op, (std::string("CUDA: ") + cudaGetErrorString(code)).c_str());
}

long long registerOp(Context &ctx, const char *op) {
  CudaState &s = state(ctx);
  s.opNames.push_back(op ? op : "kernel");
  return static_cast<long long>(s.opNames.size()) - 1;
}

void *scratch(Context &ctx, size_t bytes) {
  CudaState &s = state(ctx);
  if (bytes <= s.scratchBytes)
    return s.scratch;
  // Stream-ordered: the old block is freed after the work that uses it.
  if (s.scratch)
    check(ctx, "cuda scratch", cudaFreeAsync(s.scratch, s.compute));
  s.scratch = nullptr;
  s.scratchBytes = 0;
  check(ctx, "cuda scratch", cudaMallocAsync(&s.scratch, bytes, s.compute));
  s.scratchBytes = bytes;
  return s.scratch;
}

//===----------------------------------------------------------------------===//
// Setup
//===----------------------------------------------------------------------===//

void init(Context &ctx) {
  if (ctx.cuda)
    return;
  int count = 0;
  cudaError_t code = cudaGetDeviceCount(&count);
  if (code != cudaSuccess || count == 0)
    fail(ctx, "cuda init",
         code != cudaSuccess
             ? (std::string("no CUDA device found (") +
                cudaGetErrorString(code) +
                "); this program needs a GPU, or build it with loomc "
                "--target cuda --cuda-emulate to run on the CPU")
                   .c_str()
             : "no CUDA device found; this program needs a GPU, or build it "
               "with loomc --target cuda --cuda-emulate to run on the CPU");
  auto *s = new CudaState();
  ctx.cuda = s;
  s->device = localRank(ctx) % count;
  check(ctx, "cuda init", cudaSetDevice(s->device));
  check(ctx, "cuda init",
        cudaStreamCreateWithFlags(&s->compute, cudaStreamNonBlocking));
  for (cudaStream_t &stream : s->comm)
    check(ctx, "cuda init",
          cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  check(ctx, "cuda init",
        cudaStreamCreateWithFlags(&s->copy, cudaStreamNonBlocking));
  checkBlas(ctx, "cuda init", cublasCreate(&s->blas));
  checkBlas(ctx, "cuda init", cublasSetStream(s->blas, s->compute));
  checkBlas(ctx, "cuda init", cublasLtCreate(&s->blasLt));
  // cuBLASLt's recommended workspace for Hopper and older (32 MiB on
  // Blackwell is a speed-up only).
  s->ltWorkspaceBytes = size_t{4} << 20;
  check(ctx, "cuda init", cudaMalloc(&s->ltWorkspace, s->ltWorkspaceBytes));
  check(ctx, "cuda init", cudaMalloc(&s->errors, sizeof(DeviceError)));
  check(ctx, "cuda init", cudaMemset(s->errors, 0, sizeof(DeviceError)));

  ncclUniqueId id;
  if (ctx.rank == 0)
    checkNccl(ctx, "cuda init", ncclGetUniqueId(&id));
  if (ctx.comm != MPI_COMM_NULL)
    MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, ctx.comm);
  checkNccl(ctx, "cuda init", ncclCommInitRank(&s->nccl, ctx.size, id, ctx.rank));
}

void shutdown(Context &ctx) {
  if (!ctx.cuda)
    return;
  auto *s = static_cast<CudaState *>(ctx.cuda);
  for (cudaStream_t stream : s->comm)
    cudaStreamSynchronize(stream);
  cudaStreamSynchronize(s->copy);
  cudaStreamSynchronize(s->compute);
  if (s->nccl)
    ncclCommDestroy(s->nccl);
  for (ncclComm_t comm : s->groupNccl)
    if (comm)
      ncclCommDestroy(comm);
  for (PendingOp &op : s->pending)
    if (op.done)
      cudaEventDestroy(op.done);
  for (cudaEvent_t event : s->freeEvents)
    cudaEventDestroy(event);
  if (s->scratch)
    cudaFree(s->scratch);
  cudaFree(s->errors);
  cublasDestroy(s->blas);
  if (s->blasLt)
    cublasLtDestroy(s->blasLt);
  if (s->ltWorkspace)
    cudaFree(s->ltWorkspace);
  for (cudaEvent_t event : s->copies)
    if (event)
      cudaEventDestroy(event);
  if (s->hostPoolPinned)
    cudaHostUnregister(ctx.hostArena);
  for (cudaStream_t stream : s->comm)
    cudaStreamDestroy(stream);
  cudaStreamDestroy(s->copy);
  cudaStreamDestroy(s->compute);
  delete s;
  ctx.cuda = nullptr;
}

void synchronize(Context &ctx) {
  CudaState &s = state(ctx);
  flushPointToPoint(ctx);
  check(ctx, "cuda synchronize", cudaStreamSynchronize(s.compute));
  DeviceError error;
  check(ctx, "cuda synchronize",
        cudaMemcpy(&error, s.errors, sizeof(error), cudaMemcpyDeviceToHost));
  if (error.flag) {
    std::string op = error.opId >= 0 &&
                             error.opId < static_cast<long long>(s.opNames.size())
                         ? s.opNames[static_cast<size_t>(error.opId)]
                         : "kernel";
    std::string message;
    if (error.kind == kLabelOutOfRange) {
      message = "label " + std::to_string(error.value) + " of sample " +
                std::to_string(error.position) + " is out of range [0, " +
                std::to_string(error.limit) + ")";
      if (error.ignore)
        message += " and is not the ignore_index " +
                   std::to_string(error.ignoreIndex);
    } else {
      message = "index " + std::to_string(error.value) + " at position " +
                std::to_string(error.position) + " is out of range [0, " +
                std::to_string(error.limit) + ")";
    }
    fail(ctx, op.c_str(), message.c_str());
  }
  s.opNames.clear();
}

void *computeStream(Context &ctx) { return state(ctx).compute; }

void checkKernelLaunch(Context &ctx, const char *kernel) {
  state(ctx);
  check(ctx, kernel, cudaGetLastError());
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

void *deviceAlloc(Context &ctx, int64_t bytes) {
  state(ctx);
  if (bytes < 0)
    fail(ctx, "deviceAlloc", "negative size");
  void *ptr = nullptr;
  cudaError_t code = cudaMalloc(&ptr, static_cast<size_t>(bytes ? bytes : 1));
  if (code != cudaSuccess)
    fail(ctx, "deviceAlloc",
         ("cannot allocate " + std::to_string(bytes) +
          " bytes of device memory: " + cudaGetErrorString(code))
             .c_str());
  return ptr;
}

void deviceFree(Context &ctx, void *ptr) {
  state(ctx);
  check(ctx, "deviceFree", cudaFree(ptr));
}

void copyToDevice(Context &ctx, void *dst, const void *src, int64_t bytes) {
  CudaState &s = state(ctx);
  ctx.hostToDeviceBytes += std::max<int64_t>(bytes, 0);
  check(ctx, "copyToDevice",
        cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes),
                        cudaMemcpyHostToDevice, s.compute));
  check(ctx, "copyToDevice", cudaStreamSynchronize(s.compute));
}

void copyToHost(Context &ctx, void *dst, const void *src, int64_t bytes) {
  CudaState &s = state(ctx);
  ctx.deviceToHostBytes += std::max<int64_t>(bytes, 0);
  check(ctx, "copyToHost",
        cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes),
                        cudaMemcpyDeviceToHost, s.compute));
  check(ctx, "copyToHost", cudaStreamSynchronize(s.compute));
}

//===----------------------------------------------------------------------===//
// Communication
//===----------------------------------------------------------------------===//

namespace {

cudaEvent_t takeEvent(Context &ctx, CudaState &s) {
  if (!s.freeEvents.empty()) {
    cudaEvent_t event = s.freeEvents.back();
    s.freeEvents.pop_back();
    return event;
  }
  cudaEvent_t event;
  check(ctx, "comm", cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  return event;
}

/// The communication stream of `group`.
cudaStream_t streamOf(Context &ctx, CudaState &s, Group group) {
  int g = static_cast<int>(group);
  if (g < 0 || g >= kNumGroups)
    fail(ctx, "comm", ("unknown group " + std::to_string(g)).c_str());
  return s.comm[g];
}

/// Makes `stream` wait for the work enqueued so far on the compute stream
/// (the buffer's producers).
void orderAfterCompute(Context &ctx, CudaState &s, cudaStream_t stream) {
  cudaEvent_t ready = takeEvent(ctx, s);
  check(ctx, "comm", cudaEventRecord(ready, s.compute));
  check(ctx, "comm", cudaStreamWaitEvent(stream, ready, 0));
  s.freeEvents.push_back(ready); // reusable: the wait captured the record
}

int64_t newHandle(CudaState &s, PendingOp op) {
  op.active = true;
  int64_t id;
  if (!s.freeHandles.empty()) {
    id = s.freeHandles.back();
    s.freeHandles.pop_back();
    s.pending[static_cast<size_t>(id)] = op;
  } else {
    id = static_cast<int64_t>(s.pending.size());
    s.pending.push_back(op);
  }
  return id;
}

/// A collective posted on `stream`: its completion event.
CommHandle finishCollective(Context &ctx, CudaState &s, cudaStream_t stream) {
  PendingOp op;
  op.done = takeEvent(ctx, s);
  check(ctx, "comm", cudaEventRecord(op.done, stream));
  CommHandle handle;
  handle.id = newHandle(s, op);
  return handle;
}

/// The NCCL communicator of `group`: the world's, or one made (on first
/// use, by every member at the same call, as the step is SPMD) from the
/// runtime's MPI group.
ncclComm_t ncclOf(Context &ctx, CudaState &s, Group group) {
  int g = static_cast<int>(group);
  if (g < 0 || g >= kNumGroups)
    fail(ctx, "comm", ("unknown group " + std::to_string(g)).c_str());
  if (g == 0 || ctx.groupComms[g] == MPI_COMM_NULL)
    return s.nccl;
  if (!s.groupNccl[g]) {
    ncclUniqueId id;
    if (ctx.groupRanks[g] == 0)
      checkNccl(ctx, "comm", ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, ctx.groupComms[g]);
    checkNccl(ctx, "comm",
              ncclCommInitRank(&s.groupNccl[g], ctx.groupSizes[g], id,
                               ctx.groupRanks[g]));
  }
  return s.groupNccl[g];
}

CommHandle queuePointToPoint(Context &ctx, CudaState &s, bool isSend,
                             const void *buffer, int64_t bytes, int peer,
                             Group group) {
  PendingOp op;
  op.comm = ncclOf(ctx, s, group);
  op.group = static_cast<int>(group);
  op.queued = true;
  op.isSend = isSend;
  op.buffer = const_cast<void *>(buffer);
  op.bytes = static_cast<size_t>(bytes);
  op.peer = peer;
  CommHandle handle;
  handle.id = newHandle(s, op);
  return handle;
}

void checkPeer(Context &ctx, const char *op, int peer, int tag, Group group) {
  int g = static_cast<int>(group);
  int size = g > 0 && g < kNumGroups ? ctx.groupSizes[g] : ctx.size;
  if (peer < 0 || peer >= size)
    fail(ctx, op,
         ("peer " + std::to_string(peer) + " is not a rank of its group of " +
          std::to_string(size))
             .c_str());
  if (tag < 0)
    fail(ctx, op, ("negative tag " + std::to_string(tag)).c_str());
}

} // namespace

void flushPointToPoint(Context &ctx) {
  CudaState &s = state(ctx);
  bool any = false;
  for (const PendingOp &op : s.pending)
    any |= op.active && op.queued;
  if (!any)
    return;
  // Each group's stream waits for the compute so far; the transfers are
  // posted together (one NCCL group), each on its group's stream.
  bool ordered[kNumGroups] = {};
  for (const PendingOp &op : s.pending)
    if (op.active && op.queued && !ordered[op.group]) {
      orderAfterCompute(ctx, s, s.comm[op.group]);
      ordered[op.group] = true;
    }
  checkNccl(ctx, "send/recv", ncclGroupStart());
  for (const PendingOp &op : s.pending) {
    if (!op.active || !op.queued)
      continue;
    cudaStream_t stream = s.comm[op.group];
    checkNccl(ctx, op.isSend ? "send" : "recv",
              op.isSend ? ncclSend(op.buffer, op.bytes, ncclUint8, op.peer,
                                   op.comm, stream)
                        : ncclRecv(op.buffer, op.bytes, ncclUint8, op.peer,
                                   op.comm, stream),
              op.comm);
  }
  checkNccl(ctx, "send/recv", ncclGroupEnd(), s.nccl);
  for (PendingOp &op : s.pending) {
    if (!op.active || !op.queued)
      continue;
    op.queued = false;
    op.done = takeEvent(ctx, s);
    check(ctx, "comm", cudaEventRecord(op.done, s.comm[op.group]));
  }
}

CommHandle allReduceStart(Context &ctx, float *buffer, int64_t count,
                          ReduceOp op, Group group) {
  CudaState &s = state(ctx);
  // Queued transfers are posted first: every rank posts its operations of
  // each communicator in the same order.
  flushPointToPoint(ctx);
  if (count < 0)
    fail(ctx, "allReduce", "negative count");
  ncclRedOp_t nop;
  switch (op) {
  case ReduceOp::Sum:
    nop = ncclSum;
    break;
  case ReduceOp::Max:
    nop = ncclMax;
    break;
  case ReduceOp::Min:
    nop = ncclMin;
    break;
  case ReduceOp::Avg:
    nop = ncclAvg;
    break;
  default:
    fail(ctx, "allReduce", "unknown reduction");
  }
  ncclComm_t comm = ncclOf(ctx, s, group);
  cudaStream_t stream = streamOf(ctx, s, group);
  orderAfterCompute(ctx, s, stream);
  checkNccl(ctx, "allReduce",
            ncclAllReduce(buffer, buffer, static_cast<size_t>(count), ncclFloat,
                          nop, comm, stream),
            comm);
  return finishCollective(ctx, s, stream);
}

CommHandle rowSparseAllReduceStart(Context &ctx, float *buffer, int64_t rows,
                                   int64_t width, Group group) {
  // NCCL has no all-gather of varying sizes without a host round trip for
  // the counts: the GPU sums the whole table (the same sum; the bytes of a
  // dense all-reduce). Documented in docs/training.md.
  if (rows < 0 || width < 0)
    fail(ctx, "rowSparseAllReduce", "negative size");
  return cuda::allReduceStart(ctx, buffer, rows * width, ReduceOp::Sum, group);
}

CommHandle sendStart(Context &ctx, const void *buffer, int64_t bytes, int peer,
                     int tag, Group group) {
  CudaState &s = state(ctx);
  checkPeer(ctx, "send", peer, tag, group);
  if (bytes < 0)
    fail(ctx, "send", "negative size");
  return queuePointToPoint(ctx, s, /*isSend=*/true, buffer, bytes, peer, group);
}

CommHandle recvStart(Context &ctx, void *buffer, int64_t bytes, int peer,
                     int tag, Group group) {
  CudaState &s = state(ctx);
  checkPeer(ctx, "recv", peer, tag, group);
  if (bytes < 0)
    fail(ctx, "recv", "negative size");
  return queuePointToPoint(ctx, s, /*isSend=*/false, buffer, bytes, peer,
                           group);
}

namespace {

/// A swap copy on the copy stream, after the compute so far (its source's
/// producers, and the last readers of its target's arena bytes).
CopyHandle startCopy(Context &ctx, void *dst, const void *src, int64_t bytes,
                     bool out) {
  CudaState &s = state(ctx);
  const char *op = out ? "swapOutStart" : "swapInStart";
  if (bytes < 0)
    fail(ctx, op, "negative size");
  if (!s.hostPoolPinned && ctx.hostArena && ctx.hostArenaBytes > 0) {
    // Pinned, so the copies run asynchronously at the link's speed.
    check(ctx, op,
          cudaHostRegister(ctx.hostArena,
                           static_cast<size_t>(ctx.hostArenaBytes),
                           cudaHostRegisterDefault));
    s.hostPoolPinned = true;
  }
  orderAfterCompute(ctx, s, s.copy);
  check(ctx, op,
        cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes),
                        out ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice,
                        s.copy));
  (out ? ctx.deviceToHostBytes : ctx.hostToDeviceBytes) += bytes;
  cudaEvent_t done = takeEvent(ctx, s);
  check(ctx, op, cudaEventRecord(done, s.copy));
  auto free = std::find(s.copies.begin(), s.copies.end(), nullptr);
  if (free == s.copies.end())
    free = s.copies.insert(s.copies.end(), nullptr);
  *free = done;
  return CopyHandle{free - s.copies.begin()};
}

} // namespace

CopyHandle swapOutStart(Context &ctx, void *host, const void *device,
                        int64_t bytes) {
  return startCopy(ctx, host, device, bytes, /*out=*/true);
}

CopyHandle swapInStart(Context &ctx, void *device, const void *host,
                       int64_t bytes) {
  return startCopy(ctx, device, host, bytes, /*out=*/false);
}

void wait(Context &ctx, CopyHandle handle) {
  CudaState &s = state(ctx);
  if (handle.id < 0 || handle.id >= static_cast<int64_t>(s.copies.size()) ||
      !s.copies[static_cast<size_t>(handle.id)])
    fail(ctx, "wait",
         ("copy " + std::to_string(handle.id) +
          " is not in flight (never started, or already waited for)")
             .c_str());
  cudaEvent_t &done = s.copies[static_cast<size_t>(handle.id)];
  // The compute stream (not the host) waits for the copy.
  check(ctx, "wait", cudaStreamWaitEvent(s.compute, done, 0));
  s.freeEvents.push_back(done);
  done = nullptr;
}

void wait(Context &ctx, CommHandle handle) {
  CudaState &s = state(ctx);
  if (handle.id < 0 || handle.id >= static_cast<int64_t>(s.pending.size()) ||
      !s.pending[static_cast<size_t>(handle.id)].active)
    fail(ctx, "wait",
         ("handle " + std::to_string(handle.id) +
          " is not an operation in flight (never started, or already waited "
          "for)")
             .c_str());
  flushPointToPoint(ctx);
  PendingOp &op = s.pending[static_cast<size_t>(handle.id)];
  // The compute stream (not the host) waits for the transfer.
  check(ctx, "wait", cudaStreamWaitEvent(s.compute, op.done, 0));
  s.freeEvents.push_back(op.done);
  op = PendingOp();
  s.freeHandles.push_back(handle.id);
}

} // namespace cuda
} // namespace rt
} // namespace loom

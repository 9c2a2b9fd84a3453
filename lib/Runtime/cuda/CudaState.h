//===- CudaState.h - Per-rank state of the CUDA backend ---------*- C++ -*-===//
//
// Shared by CudaBackend.cpp (host: setup, memory, NCCL) and CudaKernels.cu.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_CUDA_CUDASTATE_H
#define LOOM_LIB_RUNTIME_CUDA_CUDASTATE_H

#include "../RuntimeImpl.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <string>
#include <vector>

namespace loom {
namespace rt {
namespace cuda {

/// What a kernel found wrong, written by the first failing thread (flag
/// 0 -> 1 with atomicCAS) and read by synchronize().
struct DeviceError {
  unsigned long long flag;
  long long opId;     ///< index into CudaState::opNames
  long long kind;     ///< kLabelOutOfRange or kIndexOutOfRange
  long long position; ///< sample / index position
  long long value;    ///< the bad label / index
  long long limit;    ///< classes / axis size
  long long ignore;   ///< 1 when an ignore_index applied, its value below
  long long ignoreIndex;
};
constexpr long long kLabelOutOfRange = 1;
constexpr long long kIndexOutOfRange = 2;

/// One NCCL operation in flight: `done` is recorded on its group's comm
/// stream.
/// Point-to-point operations are queued (`queued`, with their arguments)
/// and posted together in one NCCL group by the next wait(), collective or
/// synchronize(): posted one by one on a stream, a ring of receives and
/// sends would deadlock, where MPI's non-blocking calls would not.
struct PendingOp {
  bool active = false;
  cudaEvent_t done = nullptr;
  bool queued = false;
  bool isSend = false;
  void *buffer = nullptr;
  size_t bytes = 0;
  int peer = -1;
  ncclComm_t comm = nullptr;
  int group = 0; ///< the Group whose stream it runs on
};

struct CudaState {
  int device = -1;
  cudaStream_t compute = nullptr;
  /// One communication stream per Group (world, dp, tp, pp): collectives
  /// of one group run in call order, those of different groups (a data-
  /// parallel gradient bucket and a tensor-parallel all-reduce, a pipeline
  /// transfer) at the same time, as loomrt's start/wait handles allow.
  cudaStream_t comm[kNumGroups] = {};
  /// loom-swap's copies between device buffers and the host pool.
  cudaStream_t copy = nullptr;
  /// Whether the host pool is pinned (cudaHostRegister), and the
  /// completion event of each copy in flight (index: CopyHandle id; null
  /// when free).
  bool hostPoolPinned = false;
  std::vector<cudaEvent_t> copies;
  cublasHandle_t blas = nullptr;
  /// cuBLASLt, for gemms with an epilogue (gemmBias), and its workspace.
  cublasLtHandle_t blasLt = nullptr;
  void *ltWorkspace = nullptr;
  size_t ltWorkspaceBytes = 0;
  ncclComm_t nccl = nullptr;
  /// NCCL communicators of the dp, tp and pp groups (index: Group), created
  /// on their first use from the runtime's MPI groups; [0] stays null (the
  /// world is `nccl`).
  ncclComm_t groupNccl[kNumGroups] = {};
  DeviceError *errors = nullptr; ///< device memory
  /// Ops that may record a DeviceError since the last synchronize().
  std::vector<std::string> opNames;
  /// Stream-ordered scratch for reductions (grown on demand).
  void *scratch = nullptr;
  size_t scratchBytes = 0;
  std::vector<PendingOp> pending;
  std::vector<int64_t> freeHandles;
  std::vector<cudaEvent_t> freeEvents;
};

/// The state cuda::init() created; fail() if it did not run.
CudaState &state(Context &ctx);
/// fail() with the CUDA error text when `code` is not cudaSuccess.
void check(Context &ctx, const char *op, cudaError_t code);
/// Registers an op that may record a DeviceError; returns its id.
long long registerOp(Context &ctx, const char *op);
/// Scratch of at least `bytes`, valid for work on the compute stream.
void *scratch(Context &ctx, size_t bytes);
/// Posts the queued point-to-point operations (one NCCL group).
void flushPointToPoint(Context &ctx);

} // namespace cuda
} // namespace rt
} // namespace loom

#endif // LOOM_LIB_RUNTIME_CUDA_CUDASTATE_H

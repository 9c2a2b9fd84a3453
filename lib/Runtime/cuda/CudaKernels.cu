//===- CudaKernels.cu - The CPU kernels' CUDA counterparts ----------------===//
//
// Row-wise ops (softmax, norms, cross-entropy) run one block per row: each
// thread accumulates a fixed, strided subset in double and the block
// combines the partial results in a fixed tree, so a result never depends
// on scheduling. gemm is cuBLAS (f32 accumulation, no TF32; bf16
// operands for --precision bf16); gemmBias is cuBLASLt's bias epilogue.
// Index and label checks happen on the device: the first bad value is
// recorded in the DeviceError that synchronize() reports.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/CudaKernels.h"
#include "CudaState.h"

#include <climits>
#include <string>

namespace loom {
namespace rt {
namespace cuda {

namespace {

constexpr int kThreads = 256;     // per block; a power of two
constexpr int64_t kMaxBlocks = 1 << 20; // grid-stride loops beyond this

int blocksFor(int64_t items, int64_t perBlock = 1) {
  int64_t blocks = (items + perBlock - 1) / perBlock;
  return static_cast<int>(blocks < 1 ? 1 : blocks > kMaxBlocks ? kMaxBlocks : blocks);
}

void checkLaunch(Context &ctx, const char *op) {
  check(ctx, op, cudaGetLastError());
}

//===----------------------------------------------------------------------===//
// Block reductions (fixed order)
//===----------------------------------------------------------------------===//

__device__ double maxPropagatingNaN(double a, double b) {
  return (isnan(a) || isnan(b)) ? NAN : (a > b ? a : b);
}

/// The block-wide sum of `v` (every thread gets it); `shared` holds
/// kThreads doubles.
__device__ double blockSum(double v, double *shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half)
      shared[threadIdx.x] += shared[threadIdx.x + half];
    __syncthreads();
  }
  double total = shared[0];
  __syncthreads();
  return total;
}

__device__ double blockMax(double v, double *shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half)
      shared[threadIdx.x] =
          maxPropagatingNaN(shared[threadIdx.x], shared[threadIdx.x + half]);
    __syncthreads();
  }
  double total = shared[0];
  __syncthreads();
  return total;
}

__device__ void recordError(DeviceError *error, long long opId, long long kind,
                            long long position, long long value,
                            long long limit, bool hasIgnore,
                            long long ignoreIndex) {
  if (atomicCAS(&error->flag, 0ull, 1ull) != 0ull)
    return;
  error->opId = opId;
  error->kind = kind;
  error->position = position;
  error->value = value;
  error->limit = limit;
  error->ignore = hasIgnore;
  error->ignoreIndex = ignoreIndex;
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

/// T: float, or bf16 (loaded into float, each result rounded once).
template <typename T>
__global__ void softmaxKernel(const T *x, T *y, int64_t lanes, int64_t n,
                              int64_t inner, bool log) {
  __shared__ double shared[kThreads];
  for (int64_t lane = blockIdx.x; lane < lanes; lane += gridDim.x) {
    int64_t o = lane / inner, i = lane % inner;
    const T *xs = x + o * n * inner + i;
    T *ys = y + o * n * inner + i;
    double max = -INFINITY;
    for (int64_t j = threadIdx.x; j < n; j += kThreads)
      max = maxPropagatingNaN(max, static_cast<float>(xs[j * inner]));
    max = blockMax(max, shared);
    double sum = 0;
    for (int64_t j = threadIdx.x; j < n; j += kThreads)
      sum += exp(static_cast<float>(xs[j * inner]) - max);
    sum = blockSum(sum, shared);
    double logSum = ::log(sum);
    for (int64_t j = threadIdx.x; j < n; j += kThreads) {
      double v = static_cast<float>(xs[j * inner]) - max;
      ys[j * inner] = static_cast<float>(log ? v - logSum : exp(v) / sum);
    }
  }
}

/// A norm's result as `Out` stores it: an f32 value, or its bf16 rounding.
__device__ inline void storeNormed(float &out, double v) {
  out = static_cast<float>(v);
}
__device__ inline void storeNormed(bf16 &out, double v) {
  out.bits = bf16::round(static_cast<float>(v));
}

template <typename Out>
__global__ void layerNormKernel(const float *x, const float *scale,
                                const float *bias, Out *y, int64_t rows,
                                int64_t cols, double eps) {
  __shared__ double shared[kThreads];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float *row = x + r * cols;
    double sum = 0;
    for (int64_t j = threadIdx.x; j < cols; j += kThreads)
      sum += row[j];
    double mean = blockSum(sum, shared) / static_cast<double>(cols);
    double squares = 0;
    for (int64_t j = threadIdx.x; j < cols; j += kThreads)
      squares += (row[j] - mean) * (row[j] - mean);
    double rstd =
        1.0 / sqrt(blockSum(squares, shared) / static_cast<double>(cols) + eps);
    for (int64_t j = threadIdx.x; j < cols; j += kThreads) {
      double v = (row[j] - mean) * rstd;
      if (scale)
        v *= scale[j];
      if (bias)
        v += bias[j];
      storeNormed(y[r * cols + j], v);
    }
  }
}

template <typename Out>
__global__ void rmsNormKernel(const float *x, const float *scale, Out *y,
                              int64_t rows, int64_t cols, double eps) {
  __shared__ double shared[kThreads];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float *row = x + r * cols;
    double squares = 0;
    for (int64_t j = threadIdx.x; j < cols; j += kThreads)
      squares += static_cast<double>(row[j]) * row[j];
    double rms =
        1.0 / sqrt(blockSum(squares, shared) / static_cast<double>(cols) + eps);
    for (int64_t j = threadIdx.x; j < cols; j += kThreads) {
      double v = row[j] * rms;
      if (scale)
        v *= scale[j];
      storeNormed(y[r * cols + j], v);
    }
  }
}

/// A cotangent element as f32.
__device__ inline double gradAt(const float *g, int64_t i) { return g[i]; }
__device__ inline double gradAt(const bf16 *g, int64_t i) {
  return bf16::toFloat(g[i].bits);
}

/// normGrad's rows: each block recomputes its rows' statistics as the norm
/// kernels do, writes the input gradient (onto `residual` when not null),
/// and keeps (mean, rstd) per row in `stats` for the parameter sums.
template <typename G>
__global__ void normGradRowsKernel(const float *x, const G *g,
                                   const float *scale, const float *residual,
                                   float *dx, double *stats, int64_t rows,
                                   int64_t cols, double eps, bool rms) {
  __shared__ double shared[kThreads];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float *xs = x + r * cols;
    const G *gs = g + r * cols;
    double mean = 0;
    if (!rms) {
      double sum = 0;
      for (int64_t j = threadIdx.x; j < cols; j += kThreads)
        sum += xs[j];
      mean = blockSum(sum, shared) / static_cast<double>(cols);
    }
    double squares = 0;
    for (int64_t j = threadIdx.x; j < cols; j += kThreads)
      squares += (xs[j] - mean) * (xs[j] - mean);
    double rstd =
        1.0 / sqrt(blockSum(squares, shared) / static_cast<double>(cols) + eps);
    double ghSum = 0, ghXhatSum = 0;
    for (int64_t j = threadIdx.x; j < cols; j += kThreads) {
      double gh = scale ? gradAt(gs, j) * scale[j] : gradAt(gs, j);
      ghSum += gh;
      ghXhatSum += gh * (xs[j] - mean) * rstd;
    }
    double ghMean = rms ? 0.0 : blockSum(ghSum, shared) / cols;
    double ghXhatMean = blockSum(ghXhatSum, shared) / cols;
    for (int64_t j = threadIdx.x; j < cols; j += kThreads) {
      double gh = scale ? gradAt(gs, j) * scale[j] : gradAt(gs, j);
      double xhat = (xs[j] - mean) * rstd;
      double v = rstd * (gh - ghMean - xhat * ghXhatMean);
      if (residual)
        v += residual[r * cols + j];
      dx[r * cols + j] = static_cast<float>(v);
    }
    if (threadIdx.x == 0) {
      stats[2 * r] = mean;
      stats[2 * r + 1] = rstd;
    }
  }
}

/// normGrad's parameter sums: a thread per column adds its rows in order.
template <typename G>
__global__ void normGradParamsKernel(const float *x, const G *g,
                                     const double *stats, float *dscale,
                                     float *dbias, int64_t rows,
                                     int64_t cols) {
  for (int64_t j = blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x;
       j < cols; j += static_cast<int64_t>(gridDim.x) * kThreads) {
    double scaleSum = 0, biasSum = 0;
    for (int64_t r = 0; r < rows; ++r) {
      double gv = gradAt(g, r * cols + j);
      scaleSum += gv * (x[r * cols + j] - stats[2 * r]) * stats[2 * r + 1];
      biasSum += gv;
    }
    dscale[j] = static_cast<float>(scaleSum);
    dbias[j] = static_cast<float>(biasSum);
  }
}

/// Per-sample losses (0 for ignored samples) into `losses` (double).
template <typename Label>
__global__ void crossEntropyKernel(const float *logits, const Label *labels,
                                   double *losses, float *probs, int64_t n,
                                   int64_t classes, bool hasIgnore,
                                   int64_t ignoreIndex, DeviceError *error,
                                   long long opId) {
  __shared__ double shared[kThreads];
  for (int64_t s = blockIdx.x; s < n; s += gridDim.x) {
    int64_t label = labels[s];
    bool ignored = hasIgnore && label == ignoreIndex;
    if (ignored && threadIdx.x == 0)
      losses[s] = 0;
    if (ignored && !probs)
      continue;
    if (!ignored && (label < 0 || label >= classes)) {
      if (threadIdx.x == 0) {
        recordError(error, opId, kLabelOutOfRange, s, label, classes, hasIgnore,
                    ignoreIndex);
        losses[s] = NAN;
      }
      continue;
    }
    const float *row = logits + s * classes;
    double max = -INFINITY;
    for (int64_t c = threadIdx.x; c < classes; c += kThreads)
      max = maxPropagatingNaN(max, row[c]);
    max = blockMax(max, shared);
    double sum = 0;
    for (int64_t c = threadIdx.x; c < classes; c += kThreads)
      sum += exp(row[c] - max);
    sum = blockSum(sum, shared);
    if (probs)
      // softmaxKernel's arithmetic for the row (crossEntropySoftmax).
      for (int64_t c = threadIdx.x; c < classes; c += kThreads)
        probs[s * classes + c] = static_cast<float>(exp(row[c] - max) / sum);
    if (!ignored && threadIdx.x == 0)
      losses[s] = max + ::log(sum) - row[label];
  }
}

/// The tanh GELU of `pre`, as cpu::gemmBiasGelu computes it.
__global__ void geluTanhKernel(const float *pre, float *out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const float x = pre[i];
    const float z = 1.59576917f * (x + 0.0447149985f * (x * (x * x)));
    out[i] = x * (1.0f / (1.0f + ::expf(-z)));
  }
}

/// `c` times the tanh GELU's derivative at `pre`, as cpu::gemmDGelu
/// computes it.
__global__ void dGeluTanhKernel(const float *pre, float *c, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const float x = pre[i];
    const float x2 = x * x;
    const float z = 1.59576917f * (x + 0.0447149985f * (x * x2));
    const float s = 1.0f / (1.0f + ::expf(-z));
    const float dz = 1.59576917f * (1.0f + 0.134145007f * x2);
    c[i] = c[i] * (s * (1.0f + (x * (1.0f - s)) * dz));
  }
}

__global__ void roundLossesKernel(const double *losses, float *out, int64_t n) {
  for (int64_t s = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; s < n;
       s += int64_t(gridDim.x) * blockDim.x)
    out[s] = static_cast<float>(losses[s]);
}

/// One block: the sum (or mean over the counted samples) of the losses.
template <typename Label>
__global__ void reduceLossesKernel(const double *losses, const Label *labels,
                                   float *out, int64_t n, bool mean,
                                   bool hasIgnore, int64_t ignoreIndex) {
  __shared__ double shared[kThreads];
  double sum = 0, counted = 0;
  for (int64_t s = threadIdx.x; s < n; s += kThreads) {
    sum += losses[s];
    counted += (hasIgnore && labels[s] == ignoreIndex) ? 0 : 1;
  }
  sum = blockSum(sum, shared);
  counted = blockSum(counted, shared);
  if (threadIdx.x == 0)
    out[0] = static_cast<float>(mean ? sum / counted : sum);
}

template <typename T, typename Index>
__global__ void gatherKernel(const T *data, const Index *indices, T *out,
                             int64_t total, int64_t axisSize, int64_t inner,
                             int64_t numIndices, DeviceError *error,
                             long long opId) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    int64_t k = e % inner, slice = e / inner;
    int64_t i = slice % numIndices, o = slice / numIndices;
    int64_t index = indices[i];
    if (index < 0 || index >= axisSize) {
      recordError(error, opId, kIndexOutOfRange, i, index, axisSize, false, 0);
      continue;
    }
    out[e] = data[(o * axisSize + index) * inner + k];
  }
}

template <typename Index>
__global__ void gatherBytesKernel(const uint8_t *data, const Index *indices,
                                  uint8_t *out, int64_t total, int64_t axisSize,
                                  int64_t inner, int64_t numIndices,
                                  int64_t elemBytes, DeviceError *error,
                                  long long opId) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    int64_t k = e % inner, slice = e / inner;
    int64_t i = slice % numIndices, o = slice / numIndices;
    int64_t index = indices[i];
    if (index < 0 || index >= axisSize) {
      recordError(error, opId, kIndexOutOfRange, i, index, axisSize, false, 0);
      continue;
    }
    const uint8_t *from = data + ((o * axisSize + index) * inner + k) * elemBytes;
    for (int64_t b = 0; b < elemBytes; ++b)
      out[e * elemBytes + b] = from[b];
  }
}

template <typename Index>
__global__ void scatterAddKernel(const Index *indices, const float *updates,
                                 float *out, int64_t total, int64_t axisSize,
                                 int64_t inner, int64_t numIndices,
                                 DeviceError *error, long long opId) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    int64_t k = e % inner, slice = e / inner;
    int64_t i = slice % numIndices, o = slice / numIndices;
    int64_t index = indices[i];
    if (index < 0 || index >= axisSize) {
      recordError(error, opId, kIndexOutOfRange, i, index, axisSize, false, 0);
      continue;
    }
    atomicAdd(&out[(o * axisSize + index) * inner + k], updates[e]);
  }
}

struct StridedView {
  int32_t rank;
  int64_t shape[kMaxRank];
  int64_t strides[kMaxRank];
  int64_t offset;
};

template <typename T>
__global__ void copyStridedKernel(const T *src, T *dst, StridedView view,
                                  int64_t total) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    int64_t from = view.offset, rest = e;
    for (int32_t d = view.rank - 1; d >= 0; --d) {
      from += (rest % view.shape[d]) * view.strides[d];
      rest /= view.shape[d];
    }
    dst[e] = src[from];
  }
}

/// Fails unless every size is non-negative.
void requireSizes(Context &ctx, const char *op,
                  std::initializer_list<int64_t> sizes) {
  for (int64_t s : sizes)
    if (s < 0)
      fail(ctx, op, "negative size (a bug in the emitted code)");
}

} // namespace

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

namespace {

/// cuBLAS's name of each element type of a gemm; the products accumulate
/// in f32 for both (CUBLAS_COMPUTE_32F: no TF32 for f32 operands).
template <typename T> cudaDataType blasType();
template <> cudaDataType blasType<float>() { return CUDA_R_32F; }
template <> cudaDataType blasType<bf16>() { return CUDA_R_16BF; }

template <typename T>
void gemmStridedImpl(Context &ctx, bool transA, bool transB, int64_t outer,
                     int64_t inner, int64_t m, int64_t n, int64_t k,
                     const T *a, int64_t aOuter, int64_t aInner, int64_t lda,
                     const T *b, int64_t bOuter, int64_t bInner, int64_t ldb,
                     T *c, int64_t cOuter, int64_t cInner, int64_t ldc,
                     bool accumulate = false) {
  CudaState &s = state(ctx);
  requireSizes(ctx, "gemm", {outer, inner, m, n, k});
  if (outer == 0 || inner == 0 || m == 0 || n == 0 || (k == 0 && accumulate))
    return;
  if (k == 0) {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        for (int64_t r = 0; r < m; ++r)
          check(ctx, "gemm",
                cudaMemsetAsync(c + o * cOuter + i * cInner + r * ldc, 0,
                                static_cast<size_t>(n) * sizeof(T),
                                s.compute));
    return;
  }
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX || inner > INT_MAX ||
      lda > INT_MAX || ldb > INT_MAX || ldc > INT_MAX)
    fail(ctx, "gemm", "a dimension exceeds the cuBLAS limit (int)");
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: the
  // row-major buffers read as column-major are the transposes, so B comes
  // first and each keeps its own transpose flag, with the row strides as
  // leading dimensions; one strided-batched call per outer index.
  // With accumulate, beta = 1: the product is added onto C.
  const float one = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  for (int64_t o = 0; o < outer; ++o) {
    cublasStatus_t status = cublasGemmStridedBatchedEx(
        s.blas, transB ? CUBLAS_OP_T : CUBLAS_OP_N,
        transA ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(n),
        static_cast<int>(m), static_cast<int>(k), &one, b + o * bOuter,
        blasType<T>(), static_cast<int>(ldb), bInner, a + o * aOuter,
        blasType<T>(), static_cast<int>(lda), aInner, &beta, c + o * cOuter,
        blasType<T>(), static_cast<int>(ldc), cInner, static_cast<int>(inner),
        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (status != CUBLAS_STATUS_SUCCESS)
      fail(ctx, "gemm",
           (std::string("cuBLAS: ") + cublasGetStatusString(status)).c_str());
  }
}

} // namespace

void gemm(Context &ctx, bool transA, bool transB, int64_t batch, int64_t m,
          int64_t n, int64_t k, const float *a, int64_t strideA,
          const float *b, int64_t strideB, float *c, int64_t strideC) {
  gemmStridedImpl(ctx, transA, transB, 1, batch, m, n, k, a, 0, strideA,
                  transA ? m : k, b, 0, strideB, transB ? k : n, c, 0,
                  strideC, n);
}

void gemmAccumulate(Context &ctx, bool transA, bool transB, int64_t m,
                    int64_t n, int64_t k, const float *a, const float *b,
                    float *c) {
  gemmStridedImpl(ctx, transA, transB, 1, 1, m, n, k, a, 0, 0, transA ? m : k,
                  b, 0, 0, transB ? k : n, c, 0, 0, n, /*accumulate=*/true);
}

namespace {

/// fail() with cuBLASLt's text unless `status` is success.
void checkLt(Context &ctx, cublasStatus_t status) {
  if (status != CUBLAS_STATUS_SUCCESS)
    fail(ctx, "gemm",
         (std::string("cuBLASLt: ") + cublasLtGetStatusString(status)).c_str());
}

} // namespace

namespace {

/// One cuBLASLt matmul of gemmBias's operands with `epilogue` (BIAS;
/// GELU_AUX_BIAS writing the biased product to `aux`, rows n apart; or
/// DGELU reading the pre-activation from `aux`, with no bias). T: float,
/// or bf16 with the bias epilogue (operands, bias and C in bf16, the sum
/// in f32, rounded once).
template <typename T>
void matmulLt(Context &ctx, bool transA, bool transB, int64_t m, int64_t n,
              int64_t k, const T *a, const T *b, const T *bias, T *c,
              cublasLtEpilogue_t epilogue, const T *aux) {
  CudaState &s = state(ctx);
  requireSizes(ctx, "gemm", {m, n, k});
  if (m == 0 || n == 0)
    return;
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
    fail(ctx, "gemm", "a dimension exceeds the cuBLAS limit (int)");
  if (k == 0) { // an empty sum: every row is the bias
    for (int64_t r = 0; r < m; ++r)
      check(ctx, "gemm",
            cudaMemcpyAsync(c + r * n, bias,
                            static_cast<size_t>(n) * sizeof(T),
                            cudaMemcpyDeviceToDevice, s.compute));
    return;
  }
  // As in gemmStridedImpl, row-major C = op(A) op(B) is column-major
  // C^T (n x m) = op(B)^T op(A)^T: B is cuBLASLt's first operand. The
  // bias epilogue adds a vector of D's rows (here C^T's n) to every
  // column, which is every row of the row-major C.
  cublasLtMatmulDesc_t desc = nullptr;
  checkLt(ctx, cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t opFirst = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opSecond = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  auto set = [&](cublasLtMatmulDescAttributes_t attribute, const void *value,
                 size_t bytes) {
    checkLt(ctx, cublasLtMatmulDescSetAttribute(desc, attribute, value, bytes));
  };
  set(CUBLASLT_MATMUL_DESC_TRANSA, &opFirst, sizeof(opFirst));
  set(CUBLASLT_MATMUL_DESC_TRANSB, &opSecond, sizeof(opSecond));
  set(CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue));
  if (bias)
    set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias));
  if (aux) {
    // The pre-activation (written by GELU_AUX_BIAS, read by DGELU),
    // column-major n x m: its leading dimension is n.
    const int64_t ld = n;
    set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof(aux));
    set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ld, sizeof(ld));
  }
  // Column-major layouts of the stored (row-major) buffers.
  auto layout = [&](int64_t rows, int64_t cols) {
    cublasLtMatrixLayout_t l = nullptr;
    checkLt(ctx,
            cublasLtMatrixLayoutCreate(&l, blasType<T>(), rows, cols, rows));
    return l;
  };
  cublasLtMatrixLayout_t first = transB ? layout(k, n) : layout(n, k);
  cublasLtMatrixLayout_t second = transA ? layout(m, k) : layout(k, m);
  cublasLtMatrixLayout_t out = layout(n, m);
  const float one = 1.0f, zero = 0.0f;
  cublasStatus_t status = cublasLtMatmul(
      s.blasLt, desc, &one, b, first, a, second, &zero, c, out, c, out,
      /*algo=*/nullptr, s.ltWorkspace, s.ltWorkspaceBytes, s.compute);
  cublasLtMatrixLayoutDestroy(first);
  cublasLtMatrixLayoutDestroy(second);
  cublasLtMatrixLayoutDestroy(out);
  cublasLtMatmulDescDestroy(desc);
  checkLt(ctx, status);
}

} // namespace

void gemmBias(Context &ctx, bool transA, bool transB, int64_t m, int64_t n,
              int64_t k, const float *a, const float *b, const float *bias,
              float *c) {
  matmulLt<float>(ctx, transA, transB, m, n, k, a, b, bias, c,
                  CUBLASLT_EPILOGUE_BIAS, nullptr);
}

void gemmBias(Context &ctx, bool transA, bool transB, int64_t m, int64_t n,
              int64_t k, const bf16 *a, const bf16 *b, const bf16 *bias,
              bf16 *c) {
  matmulLt<bf16>(ctx, transA, transB, m, n, k, a, b, bias, c,
                 CUBLASLT_EPILOGUE_BIAS, nullptr);
}

void gemmBiasGelu(Context &ctx, bool transA, bool transB, int64_t m,
                  int64_t n, int64_t k, const float *a, const float *b,
                  const float *bias, float *pre, float *c) {
  // cuBLASLt's rule: the aux leading dimension is a multiple of 8; an
  // empty sum has no matmul to attach the epilogue to.
  if (n % 8 == 0 && k > 0) {
    matmulLt<float>(ctx, transA, transB, m, n, k, a, b, bias, c,
                    CUBLASLT_EPILOGUE_GELU_AUX_BIAS, pre);
    return;
  }
  gemmBias(ctx, transA, transB, m, n, k, a, b, bias, pre);
  if (m == 0 || n == 0)
    return;
  CudaState &s = state(ctx);
  geluTanhKernel<<<blocksFor(m * n, kThreads), kThreads, 0, s.compute>>>(
      pre, c, m * n);
  checkLaunch(ctx, "gemm");
}

void gemmDGelu(Context &ctx, bool transA, bool transB, int64_t m,
               int64_t n, int64_t k, const float *a, const float *b,
               const float *pre, float *c) {
  // As gemmBiasGelu: the aux leading dimension a multiple of 8, and a
  // matmul to attach the epilogue to.
  if (n % 8 == 0 && k > 0) {
    matmulLt<float>(ctx, transA, transB, m, n, k, a, b, /*bias=*/nullptr,
                    c, CUBLASLT_EPILOGUE_DGELU, pre);
    return;
  }
  gemm(ctx, transA, transB, 1, m, n, k, a, 0, b, 0, c, 0);
  if (m == 0 || n == 0)
    return;
  CudaState &s = state(ctx);
  dGeluTanhKernel<<<blocksFor(m * n, kThreads), kThreads, 0, s.compute>>>(
      pre, c, m * n);
  checkLaunch(ctx, "gemm");
}

void gemm(Context &ctx, bool transA, bool transB, int64_t batch, int64_t m,
          int64_t n, int64_t k, const bf16 *a, int64_t strideA,
          const bf16 *b, int64_t strideB, bf16 *c, int64_t strideC) {
  gemmStridedImpl(ctx, transA, transB, 1, batch, m, n, k, a, 0, strideA,
                  transA ? m : k, b, 0, strideB, transB ? k : n, c, 0,
                  strideC, n);
}

void gemmStrided(Context &ctx, bool transA, bool transB, int64_t outer,
                 int64_t inner, int64_t m, int64_t n, int64_t k,
                 const float *a, int64_t aOuter, int64_t aInner, int64_t lda,
                 const float *b, int64_t bOuter, int64_t bInner, int64_t ldb,
                 float *c, int64_t cOuter, int64_t cInner, int64_t ldc) {
  gemmStridedImpl(ctx, transA, transB, outer, inner, m, n, k, a, aOuter,
                  aInner, lda, b, bOuter, bInner, ldb, c, cOuter, cInner, ldc);
}

void gemmStrided(Context &ctx, bool transA, bool transB, int64_t outer,
                 int64_t inner, int64_t m, int64_t n, int64_t k,
                 const bf16 *a, int64_t aOuter, int64_t aInner, int64_t lda,
                 const bf16 *b, int64_t bOuter, int64_t bInner, int64_t ldb,
                 bf16 *c, int64_t cOuter, int64_t cInner, int64_t ldc) {
  gemmStridedImpl(ctx, transA, transB, outer, inner, m, n, k, a, aOuter,
                  aInner, lda, b, bOuter, bInner, ldb, c, cOuter, cInner, ldc);
}

namespace {

template <typename T>
void softmaxImpl(Context &ctx, const T *x, T *y, int64_t outer, int64_t n,
                 int64_t inner, bool log) {
  CudaState &s = state(ctx);
  requireSizes(ctx, "softmax", {outer, n, inner});
  int64_t lanes = outer * inner;
  if (lanes == 0 || n == 0)
    return;
  softmaxKernel<T><<<blocksFor(lanes), kThreads, 0, s.compute>>>(
      x, y, lanes, n, inner, log);
  checkLaunch(ctx, "softmax");
}

} // namespace

void softmax(Context &ctx, const float *x, float *y, int64_t outer, int64_t n,
             int64_t inner, bool log) {
  softmaxImpl(ctx, x, y, outer, n, inner, log);
}

void softmax(Context &ctx, const bf16 *x, bf16 *y, int64_t outer, int64_t n,
             int64_t inner, bool log) {
  softmaxImpl(ctx, x, y, outer, n, inner, log);
}

namespace {

template <typename Out>
void layerNormImpl(Context &ctx, const float *x, const float *scale,
                   const float *bias, Out *y, int64_t rows, int64_t cols,
                   double eps) {
  CudaState &s = state(ctx);
  requireSizes(ctx, "layerNorm", {rows, cols});
  if (rows == 0 || cols == 0)
    return;
  layerNormKernel<<<blocksFor(rows), kThreads, 0, s.compute>>>(
      x, scale, bias, y, rows, cols, eps);
  checkLaunch(ctx, "layerNorm");
}

template <typename Out>
void rmsNormImpl(Context &ctx, const float *x, const float *scale, Out *y,
                 int64_t rows, int64_t cols, double eps) {
  CudaState &s = state(ctx);
  requireSizes(ctx, "rmsNorm", {rows, cols});
  if (rows == 0 || cols == 0)
    return;
  rmsNormKernel<<<blocksFor(rows), kThreads, 0, s.compute>>>(x, scale, y, rows,
                                                             cols, eps);
  checkLaunch(ctx, "rmsNorm");
}

} // namespace

void layerNorm(Context &ctx, const float *x, const float *scale,
               const float *bias, float *y, int64_t rows, int64_t cols,
               double eps) {
  layerNormImpl(ctx, x, scale, bias, y, rows, cols, eps);
}

void layerNorm(Context &ctx, const float *x, const float *scale,
               const float *bias, bf16 *y, int64_t rows, int64_t cols,
               double eps) {
  layerNormImpl(ctx, x, scale, bias, y, rows, cols, eps);
}

void rmsNorm(Context &ctx, const float *x, const float *scale, float *y,
             int64_t rows, int64_t cols, double eps) {
  rmsNormImpl(ctx, x, scale, y, rows, cols, eps);
}

void rmsNorm(Context &ctx, const float *x, const float *scale, bf16 *y,
             int64_t rows, int64_t cols, double eps) {
  rmsNormImpl(ctx, x, scale, y, rows, cols, eps);
}

namespace {

template <typename G>
void normGradImpl(Context &ctx, const float *x, const G *g,
                  const float *scale, const float *residual, float *dx,
                  float *dscale, float *dbias, int64_t rows, int64_t cols,
                  double eps, bool rms) {
  CudaState &s = state(ctx);
  requireSizes(ctx, "normGrad", {rows, cols});
  if (cols == 0)
    return;
  auto *stats = static_cast<double *>(scratch(
      ctx, static_cast<size_t>(rows > 0 ? 2 * rows : 1) * sizeof(double)));
  if (rows > 0) {
    normGradRowsKernel<<<blocksFor(rows), kThreads, 0, s.compute>>>(
        x, g, scale, residual, dx, stats, rows, cols, eps, rms);
    checkLaunch(ctx, "normGrad");
  }
  normGradParamsKernel<<<blocksFor(cols, kThreads), kThreads, 0, s.compute>>>(
      x, g, stats, dscale, dbias, rows, cols);
  checkLaunch(ctx, "normGrad");
}

} // namespace

void normGrad(Context &ctx, const float *x, const float *g,
              const float *scale, const float *residual, float *dx,
              float *dscale, float *dbias, int64_t rows, int64_t cols,
              double eps, bool rms) {
  normGradImpl(ctx, x, g, scale, residual, dx, dscale, dbias, rows, cols, eps,
               rms);
}

void normGrad(Context &ctx, const float *x, const bf16 *g,
              const float *scale, const float *residual, float *dx,
              float *dscale, float *dbias, int64_t rows, int64_t cols,
              double eps, bool rms) {
  normGradImpl(ctx, x, g, scale, residual, dx, dscale, dbias, rows, cols, eps,
               rms);
}

namespace {

template <typename Label>
void crossEntropyImpl(Context &ctx, const char *op, const float *logits,
                      const Label *labels, float *out, float *probs,
                      int64_t n, int64_t classes, cpu::Reduction reduction,
                      bool hasIgnore, int64_t ignoreIndex) {
  CudaState &s = state(ctx);
  requireSizes(ctx, op, {n, classes});
  if (reduction != cpu::Reduction::None && reduction != cpu::Reduction::Mean &&
      reduction != cpu::Reduction::Sum)
    fail(ctx, op, "unknown reduction (a bug in the emitted code)");
  auto *losses = static_cast<double *>(
      scratch(ctx, static_cast<size_t>(n > 0 ? n : 1) * sizeof(double)));
  long long opId = registerOp(ctx, op);
  if (n > 0) {
    crossEntropyKernel<<<blocksFor(n), kThreads, 0, s.compute>>>(
        logits, labels, losses, probs, n, classes, hasIgnore, ignoreIndex,
        s.errors, opId);
    checkLaunch(ctx, op);
  }
  if (reduction == cpu::Reduction::None) {
    if (n > 0)
      roundLossesKernel<<<blocksFor(n, kThreads), kThreads, 0, s.compute>>>(
          losses, out, n);
  } else {
    reduceLossesKernel<<<1, kThreads, 0, s.compute>>>(
        losses, labels, out, n, reduction == cpu::Reduction::Mean, hasIgnore,
        ignoreIndex);
  }
  checkLaunch(ctx, op);
}

template <typename Index>
void gatherImpl(Context &ctx, const char *op, const void *data,
                int64_t elemBytes, const Index *indices, void *out,
                int64_t outer, int64_t axisSize, int64_t inner,
                int64_t numIndices) {
  CudaState &s = state(ctx);
  requireSizes(ctx, op, {outer, axisSize, inner, numIndices});
  if (elemBytes <= 0)
    fail(ctx, op, "invalid element size (a bug in the emitted code)");
  int64_t total = outer * numIndices * inner;
  if (total == 0)
    return;
  long long opId = registerOp(ctx, op);
  int blocks = blocksFor(total, kThreads);
  if (elemBytes == 4)
    gatherKernel<<<blocks, kThreads, 0, s.compute>>>(
        static_cast<const uint32_t *>(data), indices,
        static_cast<uint32_t *>(out), total, axisSize, inner, numIndices,
        s.errors, opId);
  else if (elemBytes == 8)
    gatherKernel<<<blocks, kThreads, 0, s.compute>>>(
        static_cast<const uint64_t *>(data), indices,
        static_cast<uint64_t *>(out), total, axisSize, inner, numIndices,
        s.errors, opId);
  else
    gatherBytesKernel<<<blocks, kThreads, 0, s.compute>>>(
        static_cast<const uint8_t *>(data), indices,
        static_cast<uint8_t *>(out), total, axisSize, inner, numIndices,
        elemBytes, s.errors, opId);
  checkLaunch(ctx, op);
}

template <typename Index>
void scatterAddImpl(Context &ctx, const char *op, const float *target,
                    const Index *indices, const float *updates, float *out,
                    int64_t outer, int64_t axisSize, int64_t inner,
                    int64_t numIndices) {
  CudaState &s = state(ctx);
  requireSizes(ctx, op, {outer, axisSize, inner, numIndices});
  if (out != target)
    check(ctx, op,
          cudaMemcpyAsync(out, target,
                          static_cast<size_t>(outer * axisSize * inner) *
                              sizeof(float),
                          cudaMemcpyDeviceToDevice, s.compute));
  int64_t total = outer * numIndices * inner;
  if (total == 0)
    return;
  long long opId = registerOp(ctx, op);
  scatterAddKernel<<<blocksFor(total, kThreads), kThreads, 0, s.compute>>>(
      indices, updates, out, total, axisSize, inner, numIndices, s.errors,
      opId);
  checkLaunch(ctx, op);
}

} // namespace

void crossEntropy(Context &ctx, const char *op, const float *logits,
                  const int64_t *labels, float *out, int64_t n,
                  int64_t classes, cpu::Reduction reduction, bool hasIgnore,
                  int64_t ignoreIndex) {
  crossEntropyImpl(ctx, op, logits, labels, out, nullptr, n, classes,
                   reduction, hasIgnore, ignoreIndex);
}

void crossEntropy(Context &ctx, const char *op, const float *logits,
                  const int32_t *labels, float *out, int64_t n,
                  int64_t classes, cpu::Reduction reduction, bool hasIgnore,
                  int64_t ignoreIndex) {
  crossEntropyImpl(ctx, op, logits, labels, out, nullptr, n, classes,
                   reduction, hasIgnore, ignoreIndex);
}

void crossEntropySoftmax(Context &ctx, const char *op, const float *logits,
                         const int64_t *labels, float *out, float *probs,
                         int64_t n, int64_t classes, cpu::Reduction reduction,
                         bool hasIgnore, int64_t ignoreIndex) {
  crossEntropyImpl(ctx, op, logits, labels, out, probs, n, classes, reduction,
                   hasIgnore, ignoreIndex);
}

void crossEntropySoftmax(Context &ctx, const char *op, const float *logits,
                         const int32_t *labels, float *out, float *probs,
                         int64_t n, int64_t classes, cpu::Reduction reduction,
                         bool hasIgnore, int64_t ignoreIndex) {
  crossEntropyImpl(ctx, op, logits, labels, out, probs, n, classes, reduction,
                   hasIgnore, ignoreIndex);
}

void gather(Context &ctx, const char *op, const void *data, int64_t elemBytes,
            const int64_t *indices, void *out, int64_t outer, int64_t axisSize,
            int64_t inner, int64_t numIndices) {
  gatherImpl(ctx, op, data, elemBytes, indices, out, outer, axisSize, inner,
             numIndices);
}

void gather(Context &ctx, const char *op, const void *data, int64_t elemBytes,
            const int32_t *indices, void *out, int64_t outer, int64_t axisSize,
            int64_t inner, int64_t numIndices) {
  gatherImpl(ctx, op, data, elemBytes, indices, out, outer, axisSize, inner,
             numIndices);
}

void scatterAdd(Context &ctx, const char *op, const float *target,
                const int64_t *indices, const float *updates, float *out,
                int64_t outer, int64_t axisSize, int64_t inner,
                int64_t numIndices) {
  scatterAddImpl(ctx, op, target, indices, updates, out, outer, axisSize,
                 inner, numIndices);
}

void scatterAdd(Context &ctx, const char *op, const float *target,
                const int32_t *indices, const float *updates, float *out,
                int64_t outer, int64_t axisSize, int64_t inner,
                int64_t numIndices) {
  scatterAddImpl(ctx, op, target, indices, updates, out, outer, axisSize,
                 inner, numIndices);
}

void copyStrided(Context &ctx, const void *src, void *dst, int64_t elemBytes,
                 int32_t rank, const int64_t *shape, const int64_t *srcStrides,
                 int64_t srcOffset) {
  CudaState &s = state(ctx);
  if (rank < 0 || rank > kMaxRank)
    fail(ctx, "copyStrided",
         ("rank " + std::to_string(rank) + " is not in [0, " +
          std::to_string(kMaxRank) + "]")
             .c_str());
  StridedView view;
  view.rank = rank;
  view.offset = srcOffset;
  int64_t total = 1;
  for (int32_t d = 0; d < rank; ++d) {
    if (shape[d] < 0)
      fail(ctx, "copyStrided", "negative dimension (a bug in the emitted code)");
    view.shape[d] = shape[d];
    view.strides[d] = srcStrides[d];
    total *= shape[d];
  }
  if (total == 0)
    return;
  int blocks = blocksFor(total, kThreads);
  switch (elemBytes) {
  case 1:
    copyStridedKernel<<<blocks, kThreads, 0, s.compute>>>(
        static_cast<const uint8_t *>(src), static_cast<uint8_t *>(dst), view,
        total);
    break;
  case 2:
    copyStridedKernel<<<blocks, kThreads, 0, s.compute>>>(
        static_cast<const uint16_t *>(src), static_cast<uint16_t *>(dst), view,
        total);
    break;
  case 4:
    copyStridedKernel<<<blocks, kThreads, 0, s.compute>>>(
        static_cast<const uint32_t *>(src), static_cast<uint32_t *>(dst), view,
        total);
    break;
  case 8:
    copyStridedKernel<<<blocks, kThreads, 0, s.compute>>>(
        static_cast<const uint64_t *>(src), static_cast<uint64_t *>(dst), view,
        total);
    break;
  default:
    fail(ctx, "copyStrided",
         ("element size " + std::to_string(elemBytes) +
          " is not 1, 2, 4 or 8 bytes")
             .c_str());
  }
  checkLaunch(ctx, "copyStrided");
}

} // namespace cuda
} // namespace rt
} // namespace loom

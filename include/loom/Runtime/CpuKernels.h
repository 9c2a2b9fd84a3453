//===- CpuKernels.h - Library kernels of the CPU backend ---------*- C++ -*-===//
//
// The ops the emitter does not generate as loops: contractions (BLAS) and
// the row-wise normalisations, the loss, gathers and strided copies. All
// tensors are dense row-major; f32 unless stated. Each kernel computes
// exactly what the matching loom op computes (see the op docs): sums and
// statistics accumulate in double and are rounded once, like loom-run.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_CPUKERNELS_H
#define LOOM_RUNTIME_CPUKERNELS_H

#include "loom/Runtime/BFloat16.h"
#include "loom/Runtime/Runtime.h"

#include <cstdint>

namespace loom {
namespace rt {
namespace cpu {

/// For b in [0, batch): C_b (M x N) = op(A_b) * op(B_b), row-major.
/// op(A_b) is M x K (A_b stored K x M when transA), op(B_b) is K x N
/// (stored N x K when transB). A_b = A + b * strideA, and so on.
void gemm(bool transA, bool transB, int64_t batch, int64_t m, int64_t n,
          int64_t k, const float *a, int64_t strideA, const float *b,
          int64_t strideB, float *c, int64_t strideC);

/// How the f32 gemms treat an operand whose rows lie a multiple of 256
/// floats apart (a critical stride: few cache sets, which slows some
/// libraries' kernels on some CPUs). Tune (the default): each shape called
/// outside a parallel region is timed as it is and with such an operand
/// copied to rows 16 floats further apart, twice each, and the fastest
/// kept. Direct: never copy. Pad: always copy (the first such operand).
/// The variants give the same bits. Returns the previous policy; for
/// tests and benchmarks.
enum class GemmStridePolicy { Tune, Direct, Pad };
GemmStridePolicy setGemmStridePolicy(GemmStridePolicy policy);
/// The operands the f32 gemms have copied to padded rows so far (all
/// threads); for tests.
int64_t gemmStrideCopies();

/// The strided form of gemm, for operands read in place from a larger
/// tensor (attention's heads: [batch, seq, heads, dim] read as
/// batch x heads matrices of seq x dim). The batch is outer x inner
/// matrices; matrix (o, i) of A starts at a + o * aOuter + i * aInner and
/// its rows are lda apart (BLAS's leading dimension: >= its row length),
/// and likewise for B and C. gemm(...) is gemmStrided(..., 1, batch, ...,
/// 0, strideA, k or m, ...). Independent matrices of a batch run in
/// parallel (each gemm on one thread) when there are enough of them.
void gemmStrided(bool transA, bool transB, int64_t outer, int64_t inner,
                 int64_t m, int64_t n, int64_t k, const float *a,
                 int64_t aOuter, int64_t aInner, int64_t lda, const float *b,
                 int64_t bOuter, int64_t bInner, int64_t ldb, float *c,
                 int64_t cOuter, int64_t cInner, int64_t ldc);

/// C (M x N) = op(A) * op(B) + bias, the bias (N elements) added to every
/// row (loomrt.gemm's bias epilogue): C's rows start as the bias and the
/// gemm accumulates onto them (beta = 1).
void gemmBias(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
              const float *a, const float *b, const float *bias, float *c);

/// bf16 operands: op(A) * op(B) + bias summed in f32 and rounded to bf16
/// once (as the f32 gemmBias of the widened operands, rounded).
void gemmBias(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
              const bf16 *a, const bf16 *b, const bf16 *bias, bf16 *c);

/// C (M x N) += op(A) * op(B): the product added onto what C holds
/// (loomrt.gemm's accumulate: BLAS with beta = 1).
void gemmAccumulate(bool transA, bool transB, int64_t m, int64_t n,
                    int64_t k, const float *a, const float *b, float *c);

/// gemmBias into `pre` (M x N), then C = the tanh GELU of it, 0.5 x (1 +
/// tanh(sqrt(2 / pi) (x + 0.044715 x^3))), evaluated as the generated
/// elementwise kernels evaluate loom.gelu (loomrt.gemm's gelu_input
/// epilogue: `pre` is what the backward pass reads).
void gemmBiasGelu(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                  const float *a, const float *b, const float *bias,
                  float *pre, float *c);

/// C (M x N) = op(A) * op(B), each element then multiplied by the
/// derivative of the tanh GELU at the same element of `pre` (the forward's
/// gelu_input), evaluated as the generated elementwise kernels evaluate
/// loom.gelu_grad (loomrt.gemm's dgelu_input epilogue: the backward pass's
/// GELU gradient written with the product).
void gemmDGelu(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
               const float *a, const float *b, const float *pre, float *c);

/// bf16 operands and result (--precision bf16): each product of two bf16
/// values is exact in f32, the sums are f32 (as tensor cores do), and C is
/// rounded to bf16 once. With oneDNN, through its bf16 matmul (AMX tiles
/// where the CPU has them; on one thread: its threaded AMX kernels race on
/// some shapes); otherwise, and for a shape whose first matmul disagreed
/// with the widening path, the operands are widened into per-thread
/// scratch memory and multiplied by the f32 gemm.
void gemm(bool transA, bool transB, int64_t batch, int64_t m, int64_t n,
          int64_t k, const bf16 *a, int64_t strideA, const bf16 *b,
          int64_t strideB, bf16 *c, int64_t strideC);
void gemmStrided(bool transA, bool transB, int64_t outer, int64_t inner,
                 int64_t m, int64_t n, int64_t k, const bf16 *a,
                 int64_t aOuter, int64_t aInner, int64_t lda, const bf16 *b,
                 int64_t bOuter, int64_t bInner, int64_t ldb, bf16 *c,
                 int64_t cOuter, int64_t cInner, int64_t ldc);
/// The bf16 gemms oneDNN's matmul has computed so far, and the shapes it
/// was refused for (its first product disagreed with the widening path's
/// beyond the f32 sums' rounding), and how many of its runs (checks
/// included) were split among threads; for tests.
struct Bf16MatmulCounts {
  int64_t calls = 0, refusedShapes = 0, splitCalls = 0;
};
Bf16MatmulCounts bf16MatmulCounts();
/// Whether oneDNN has a bf16 matmul kernel other than its reference one
/// for this CPU (AVX-512 BF16, AMX). Without one (an AVX2 CPU) every bf16
/// gemm takes the widening path: the f32 product of the widened operands,
/// rounded once.
bool bf16MatmulAvailable();

/// Softmax (or log-softmax) of x viewed as [outer, n, inner] along n.
void softmax(const float *x, float *y, int64_t outer, int64_t n, int64_t inner,
             bool log);

/// bf16 input and output: the f32 softmax of the widened input (in
/// per-thread scratch memory), each result rounded once.
void softmax(const bf16 *x, bf16 *y, int64_t outer, int64_t n, int64_t inner,
             bool log);

/// Rows of `cols` elements: (x - mean) / sqrt(var + eps) * scale + bias;
/// scale/bias (length cols) may be null. A bf16 `y` gets the f32 result
/// rounded once (the norm and a conversion after it, in one pass).
void layerNorm(const float *x, const float *scale, const float *bias, float *y,
               int64_t rows, int64_t cols, double eps);
void layerNorm(const float *x, const float *scale, const float *bias, bf16 *y,
               int64_t rows, int64_t cols, double eps);
/// Rows of `cols` elements: x / sqrt(mean(x^2) + eps) * scale (may be null).
void rmsNorm(const float *x, const float *scale, float *y, int64_t rows,
             int64_t cols, double eps);
void rmsNorm(const float *x, const float *scale, bf16 *y, int64_t rows,
             int64_t cols, double eps);

/// The gradients of layerNorm (rms false) or rmsNorm over rows of `cols`
/// elements, from the input `x` and the result's cotangent `g` (f32, or
/// bf16 read widened): `dx` (added onto `residual` when that is not null),
/// and over the rows the sums of `g * xhat` into `dscale` and of `g` into
/// `dbias` (length cols). The statistics are recomputed as the norm
/// computes them; scale may be null. The parameter sums are the same bits
/// for any thread count.
void normGrad(const float *x, const float *g, const float *scale,
              const float *residual, float *dx, float *dscale, float *dbias,
              int64_t rows, int64_t cols, double eps, bool rms);
void normGrad(const float *x, const bf16 *g, const float *scale,
              const float *residual, float *dx, float *dscale, float *dbias,
              int64_t rows, int64_t cols, double eps, bool rms);

enum class Reduction : int32_t { None = 0, Mean = 1, Sum = 2 };
/// logits [n, classes], labels [n] (i64 or i32). Out: [n] for None, else a
/// scalar. A label == ignoreIndex (when hasIgnore) contributes 0 and is left
/// out of the mean. Any other label outside [0, classes) calls fail().
///
/// The label and index arguments here and below are overloaded on i64 and
/// i32 (JAX, through StableHLO, indexes with i32), rather than the lowering
/// widening i32 to i64 first: no extra buffer or kernel per step, and an
/// out-of-range value is reported exactly as the model supplied it.
void crossEntropy(Context &ctx, const char *op, const float *logits,
                  const int64_t *labels, float *out, int64_t n,
                  int64_t classes, Reduction reduction, bool hasIgnore,
                  int64_t ignoreIndex);
void crossEntropy(Context &ctx, const char *op, const float *logits,
                  const int32_t *labels, float *out, int64_t n,
                  int64_t classes, Reduction reduction, bool hasIgnore,
                  int64_t ignoreIndex);
/// crossEntropy that also writes the softmax of every row of the logits
/// into `probs` [n, classes] (ignored samples' rows too): the same bits as
/// softmax(logits) (loom-fuse-loss-softmax: the loss's gradient reads
/// them), from the exponentials the loss sums anyway.
void crossEntropySoftmax(Context &ctx, const char *op, const float *logits,
                         const int64_t *labels, float *out, float *probs,
                         int64_t n, int64_t classes, Reduction reduction,
                         bool hasIgnore, int64_t ignoreIndex);
void crossEntropySoftmax(Context &ctx, const char *op, const float *logits,
                         const int32_t *labels, float *out, float *probs,
                         int64_t n, int64_t classes, Reduction reduction,
                         bool hasIgnore, int64_t ignoreIndex);

/// data viewed as [outer, axisSize, inner], indices (i64 or i32, numIndices
/// of them, negative values are errors): out [outer, numIndices, inner].
void gather(Context &ctx, const char *op, const void *data, int64_t elemBytes,
            const int64_t *indices, void *out, int64_t outer, int64_t axisSize,
            int64_t inner, int64_t numIndices);
void gather(Context &ctx, const char *op, const void *data, int64_t elemBytes,
            const int32_t *indices, void *out, int64_t outer, int64_t axisSize,
            int64_t inner, int64_t numIndices);
/// out = target, then out[o, indices[i], :] += updates[o, i, :] (f32);
/// indices i64 or i32.
void scatterAdd(Context &ctx, const char *op, const float *target,
                const int64_t *indices, const float *updates, float *out,
                int64_t outer, int64_t axisSize, int64_t inner,
                int64_t numIndices);
void scatterAdd(Context &ctx, const char *op, const float *target,
                const int32_t *indices, const float *updates, float *out,
                int64_t outer, int64_t axisSize, int64_t inner,
                int64_t numIndices);

/// dst (dense, `shape`) [index] = src[offset + sum(index[d] * srcStrides[d])]
/// in elements; strides may be 0 (broadcast) — transpose, slice, broadcast
/// and the pieces of concat/split are all this copy.
void copyStrided(const void *src, void *dst, int64_t elemBytes, int32_t rank,
                 const int64_t *shape, const int64_t *srcStrides,
                 int64_t srcOffset);

} // namespace cpu
} // namespace rt
} // namespace loom

#endif // LOOM_RUNTIME_CPUKERNELS_H

//===- DotGeneral.cpp - loom.dot_general ----------------------------------===//
//
// The operands are first permuted to lhs [batch, free, contracting] and
// rhs [batch, contracting, free], i.e. B matrices [M, K] and [K, N]; then
// each batch is one [M, K] x [K, N] product, and [B, M, N] is exactly the
// result in its documented layout (batch, lhs free, rhs free). f32 products
// are cblas_sgemm, which also takes a matrix transposed ([K, M] / [N, K]),
// so that x . W^T needs no copy; other element types are plain loops
// (floats accumulate in double and round once; integers wrap).
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <cblas.h>

#include <climits>

namespace mlir {
namespace loom {
namespace interp {

namespace {

/// Checks that `dims` are distinct and in range of `rank`.
std::string checkDims(ArrayRef<int64_t> dims, int64_t rank, const char *what,
                      SmallVectorImpl<bool> &used) {
  for (int64_t d : dims) {
    if (d < 0 || d >= rank)
      return std::string(what) + " dimension " + std::to_string(d) +
             " is out of range for rank " + std::to_string(rank);
    if (used[d])
      return std::string(what) + " dimension " + std::to_string(d) +
             " is used twice";
    used[d] = true;
  }
  return "";
}

int64_t productOf(ArrayRef<int64_t> shape, ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= shape[d];
  return n;
}

bool isIdentity(ArrayRef<int64_t> permutation) {
  for (auto [i, p] : llvm::enumerate(permutation))
    if (p != static_cast<int64_t>(i))
      return false;
  return true;
}

/// [B, M, K] x [K, N] per batch with plain loops.
void multiplyLoops(const Tensor &a, const Tensor &b, int64_t batches,
                   int64_t m, int64_t k, int64_t n, Tensor &c) {
  for (int64_t p = 0; p < batches; ++p) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        int64_t at = (p * m + i) * n + j;
        if (c.isFloat()) {
          double sum = 0.0;
          for (int64_t q = 0; q < k; ++q)
            sum += static_cast<double>(a.floats[(p * m + i) * k + q]) *
                   b.floats[(p * k + q) * n + j];
          c.floats[at] = roundTo(c.kind, sum);
        } else {
          uint64_t sum = 0;
          for (int64_t q = 0; q < k; ++q)
            sum += static_cast<uint64_t>(a.ints[(p * m + i) * k + q]) *
                   static_cast<uint64_t>(b.ints[(p * k + q) * n + j]);
          c.ints[at] = wrapTo(c.kind, static_cast<int64_t>(sum));
        }
      }
    }
  }
}

} // namespace

std::string dotGeneral(const Tensor &lhs, const Tensor &rhs,
                       ArrayRef<int64_t> lhsBatch, ArrayRef<int64_t> rhsBatch,
                       ArrayRef<int64_t> lhsContract,
                       ArrayRef<int64_t> rhsContract, Tensor &out) {
  if (lhs.kind != rhs.kind)
    return "operand element types differ";
  if (lhs.kind == ElementKind::I1)
    return "expects numeric operands, got i1";
  if (lhsBatch.size() != rhsBatch.size() ||
      lhsContract.size() != rhsContract.size())
    return "batching and contracting dimensions must come in pairs";
  SmallVector<bool> lhsUsed(lhs.rank(), false), rhsUsed(rhs.rank(), false);
  for (auto [dims, rank, used, what] :
       {std::make_tuple(lhsBatch, lhs.rank(), &lhsUsed, "lhs batching"),
        std::make_tuple(lhsContract, lhs.rank(), &lhsUsed, "lhs contracting"),
        std::make_tuple(rhsBatch, rhs.rank(), &rhsUsed, "rhs batching"),
        std::make_tuple(rhsContract, rhs.rank(), &rhsUsed, "rhs contracting")})
    if (std::string err = checkDims(dims, rank, what, *used); !err.empty())
      return err;
  for (auto [l, r] : llvm::zip(lhsBatch, rhsBatch))
    if (lhs.shape[l] != rhs.shape[r])
      return "batching dimensions " + std::to_string(l) + " x " +
             std::to_string(r) + " have sizes " +
             std::to_string(lhs.shape[l]) + " and " +
             std::to_string(rhs.shape[r]) + " at run time";
  for (auto [l, r] : llvm::zip(lhsContract, rhsContract))
    if (lhs.shape[l] != rhs.shape[r])
      return "contracting dimensions " + std::to_string(l) + " x " +
             std::to_string(r) + " have sizes " +
             std::to_string(lhs.shape[l]) + " and " +
             std::to_string(rhs.shape[r]) + " at run time";

  SmallVector<int64_t> lhsFree, rhsFree;
  for (int64_t d = 0; d < lhs.rank(); ++d)
    if (!lhsUsed[d])
      lhsFree.push_back(d);
  for (int64_t d = 0; d < rhs.rank(); ++d)
    if (!rhsUsed[d])
      rhsFree.push_back(d);

  int64_t batches = productOf(lhs.shape, lhsBatch);
  int64_t m = productOf(lhs.shape, lhsFree);
  int64_t k = productOf(lhs.shape, lhsContract);
  int64_t n = productOf(rhs.shape, rhsFree);

  SmallVector<int64_t> shape;
  for (int64_t d : lhsBatch)
    shape.push_back(lhs.shape[d]);
  for (int64_t d : lhsFree)
    shape.push_back(lhs.shape[d]);
  for (int64_t d : rhsFree)
    shape.push_back(rhs.shape[d]);
  out = Tensor::zeros(lhs.kind, shape);
  if (batches == 0 || m == 0 || n == 0 || k == 0)
    return ""; // An empty sum is 0.

  // The operands in the layouts [batch, M, K] and [batch, K, N]: either as
  // they are, or (for BLAS) as they are with the matrix transposed
  // ([batch, K, M] / [batch, N, K]), else permuted into place.
  SmallVector<int64_t> lhsPerm(lhsBatch), lhsTransPerm(lhsBatch);
  lhsPerm.append(lhsFree.begin(), lhsFree.end());
  lhsPerm.append(lhsContract.begin(), lhsContract.end());
  lhsTransPerm.append(lhsContract.begin(), lhsContract.end());
  lhsTransPerm.append(lhsFree.begin(), lhsFree.end());
  SmallVector<int64_t> rhsPerm(rhsBatch), rhsTransPerm(rhsBatch);
  rhsPerm.append(rhsContract.begin(), rhsContract.end());
  rhsPerm.append(rhsFree.begin(), rhsFree.end());
  rhsTransPerm.append(rhsFree.begin(), rhsFree.end());
  rhsTransPerm.append(rhsContract.begin(), rhsContract.end());

  bool blas = lhs.kind == ElementKind::F32 && m <= INT_MAX && n <= INT_MAX &&
              k <= INT_MAX;
  bool transA = blas && !isIdentity(lhsPerm) && isIdentity(lhsTransPerm);
  bool transB = blas && !isIdentity(rhsPerm) && isIdentity(rhsTransPerm);
  Tensor lhsCopy, rhsCopy;
  const Tensor *a = &lhs, *b = &rhs;
  if (!transA && !isIdentity(lhsPerm)) {
    if (std::string err = transpose(lhs, lhsPerm, lhsCopy); !err.empty())
      return err;
    a = &lhsCopy;
  }
  if (!transB && !isIdentity(rhsPerm)) {
    if (std::string err = transpose(rhs, rhsPerm, rhsCopy); !err.empty())
      return err;
    b = &rhsCopy;
  }

  if (!blas) {
    multiplyLoops(*a, *b, batches, m, k, n, out);
    return "";
  }
  for (int64_t p = 0; p < batches; ++p)
    cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
                transB ? CblasTrans : CblasNoTrans, static_cast<int>(m),
                static_cast<int>(n), static_cast<int>(k), 1.0f,
                a->floats.data() + p * m * k, static_cast<int>(transA ? m : k),
                b->floats.data() + p * k * n, static_cast<int>(transB ? k : n),
                0.0f, out.floats.data() + p * m * n, static_cast<int>(n));
  return "";
}

} // namespace interp
} // namespace loom
} // namespace mlir

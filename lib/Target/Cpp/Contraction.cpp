//===- Contraction.cpp - loomrt.gemm as a BLAS call -----------------------===//
//
// A loomrt.gemm (one batched gemm of a dot_general, see
// lib/Conversion/LoomToLoomRT/Contraction.cpp) is one call of cpu::gemm,
// the runtime's batched wrapper of cblas_sgemm: transposes, batch, sizes,
// and a batch stride of 0 for an operand shared by the batch. The strided
// form (operands read in place, e.g. attention's heads) is one call of
// cpu::gemmStrided.
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::emit_cpp;

LogicalResult Emitter::emitGemm(loomrt::GemmOp gemm) {
  origin((gemm.getOrigin() + " -> " + name(gemm.getC())).str());
  int64_t m = gemm.getM(), n = gemm.getN(), k = gemm.getK();
  if (auto outer = gemm.getBatchOuterAttr()) {
    // The strided form: operands read in place, C dense.
    ArrayRef<int64_t> sa = *gemm.getAStrides();
    ArrayRef<int64_t> sb = *gemm.getBStrides();
    int64_t inner = gemm.getBatch() / outer.getInt();
    line() << "cpu::gemmStrided(" << (gemm.getTransA() ? "true" : "false")
           << ", " << (gemm.getTransB() ? "true" : "false") << ", "
           << outer.getInt() << ", " << inner << ", " << m << ", " << n
           << ", " << k << ", " << name(gemm.getA()) << ", " << sa[0] << ", "
           << sa[1] << ", " << sa[2] << ", " << name(gemm.getB()) << ", "
           << sb[0] << ", " << sb[1] << ", " << sb[2] << ", "
           << name(gemm.getC()) << ", " << inner * m * n << ", " << m * n
           << ", " << n << ");\n";
    return success();
  }
  line() << "cpu::gemm(" << (gemm.getTransA() ? "true" : "false") << ", "
         << (gemm.getTransB() ? "true" : "false") << ", " << gemm.getBatch()
         << ", " << m << ", " << n << ", " << k << ", " << name(gemm.getA())
         << ", " << (gemm.getABatched() ? m * k : 0) << ", "
         << name(gemm.getB()) << ", " << (gemm.getBBatched() ? k * n : 0)
         << ", " << name(gemm.getC()) << ", " << m * n << ");\n";
  return success();
}

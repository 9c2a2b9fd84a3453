//===- Library.cpp - Calls into the runtime library -----------------------===//
//
// The ops the emitters do not generate: a loomrt.gemm (one batched gemm of
// a dot_general, see lib/Conversion/LoomToLoomRT/Contraction.cpp) is one
// call of the runtime's batched gemm (cblas_sgemm or cuBLAS: transposes,
// batch, sizes, and a batch stride of 0 for an operand shared by the
// batch); softmax, the norms, cross-entropy, gather and scatter_add are
// its kernels; all_reduce_start, send_start and recv_start start a
// transfer on the group of their mesh axis and name its CommHandle, and
// loomrt.wait waits on one (loom/Runtime/Comm.h on the CPU, NCCL through
// loom/Runtime/CudaKernels.h on CUDA). The target names the namespace
// (EmitterBase::libraryCall).
//
//===----------------------------------------------------------------------===//

#include "loom/Target/Common/EmitterBase.h"

#include "llvm/Support/Format.h"

#include <type_traits>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::emit;

LogicalResult EmitterBase::emitGemm(loomrt::GemmOp gemm) {
  origin((gemm.getOrigin() + " -> " + name(gemm.getC())).str());
  int64_t m = gemm.getM(), n = gemm.getN(), k = gemm.getK();
  if (auto outer = gemm.getBatchOuterAttr()) {
    // The strided form: operands read in place (attention's heads), C dense.
    ArrayRef<int64_t> sa = *gemm.getAStrides();
    ArrayRef<int64_t> sb = *gemm.getBStrides();
    int64_t inner = gemm.getBatch() / outer.getInt();
    line() << libraryCall("gemmStrided", false)
           << (gemm.getTransA() ? "true" : "false") << ", "
           << (gemm.getTransB() ? "true" : "false") << ", " << outer.getInt()
           << ", " << inner << ", " << m << ", " << n << ", " << k << ", "
           << name(gemm.getA()) << ", " << sa[0] << ", " << sa[1] << ", "
           << sa[2] << ", " << name(gemm.getB()) << ", " << sb[0] << ", "
           << sb[1] << ", " << sb[2] << ", " << name(gemm.getC()) << ", "
           << inner * m * n << ", " << m * n << ", " << n << ");\n";
    return success();
  }
  if (Value bias = gemm.getBias()) {
    // The bias epilogue (loom-fuse-gemm-bias): one f32 matrix; with
    // gelu_input, the tanh GELU of the biased product too.
    Value pre = gemm.getGeluInput();
    line() << libraryCall(pre ? "gemmBiasGelu" : "gemmBias", false)
           << (gemm.getTransA() ? "true" : "false") << ", "
           << (gemm.getTransB() ? "true" : "false") << ", " << m << ", " << n
           << ", " << k << ", " << name(gemm.getA()) << ", "
           << name(gemm.getB()) << ", " << name(bias) << ", ";
    if (pre)
      os << name(pre) << ", ";
    os << name(gemm.getC()) << ");\n";
    return success();
  }
  if (Value pre = gemm.getDgeluInput()) {
    // The GELU gradient epilogue (loom-fuse-gemm-bias): one f32 matrix.
    line() << libraryCall("gemmDGelu", false)
           << (gemm.getTransA() ? "true" : "false") << ", "
           << (gemm.getTransB() ? "true" : "false") << ", " << m << ", " << n
           << ", " << k << ", " << name(gemm.getA()) << ", "
           << name(gemm.getB()) << ", " << name(pre) << ", "
           << name(gemm.getC()) << ");\n";
    return success();
  }
  if (gemm.getAccumulate()) {
    // The product added onto c (loom-fuse-gemm-accumulate): one f32 matrix.
    line() << libraryCall("gemmAccumulate", false)
           << (gemm.getTransA() ? "true" : "false") << ", "
           << (gemm.getTransB() ? "true" : "false") << ", " << m << ", " << n
           << ", " << k << ", " << name(gemm.getA()) << ", "
           << name(gemm.getB()) << ", " << name(gemm.getC()) << ");\n";
    return success();
  }
  line() << libraryCall("gemm", false) << (gemm.getTransA() ? "true" : "false")
         << ", " << (gemm.getTransB() ? "true" : "false") << ", "
         << gemm.getBatch() << ", " << m << ", " << n << ", " << k << ", "
         << name(gemm.getA()) << ", " << (gemm.getABatched() ? m * k : 0)
         << ", " << name(gemm.getB()) << ", "
         << (gemm.getBBatched() ? k * n : 0) << ", " << name(gemm.getC())
         << ", " << m * n << ");\n";
  return success();
}

LogicalResult EmitterBase::emitSoftmax(loomrt::SoftmaxOp softmax) {
  origin((softmax.getOrigin() + " -> " + name(softmax.getOutput())).str());
  ArrayRef<int64_t> s = shape(softmax.getInput());
  int64_t axis = softmax.getAxis();
  line() << libraryCall("softmax", false) << name(softmax.getInput()) << ", "
         << name(softmax.getOutput()) << ", "
         << numElements(s.take_front(axis)) << ", " << s[axis] << ", "
         << numElements(s.drop_front(axis + 1)) << ", "
         << (softmax.getLog() ? "true" : "false") << ");\n";
  return success();
}

LogicalResult EmitterBase::emitLayerNorm(loomrt::LayerNormOp norm) {
  origin((norm.getOrigin() + " -> " + name(norm.getOutput())).str());
  ArrayRef<int64_t> s = shape(norm.getInput());
  int64_t axis = norm.getAxis();
  std::string scale = norm.getScale() ? name(norm.getScale()) : "nullptr";
  std::string rows = std::to_string(numElements(s.take_front(axis)));
  std::string cols = std::to_string(numElements(s.drop_front(axis)));
  std::string eps;
  llvm::raw_string_ostream(eps)
      << llvm::format("%.17g", norm.getEpsilon().convertToDouble());
  if (norm.getRms()) {
    line() << libraryCall("rmsNorm", false) << name(norm.getInput()) << ", "
           << scale << ", " << name(norm.getOutput()) << ", " << rows << ", "
           << cols << ", " << eps << ");\n";
  } else {
    std::string bias = norm.getBias() ? name(norm.getBias()) : "nullptr";
    line() << libraryCall("layerNorm", false) << name(norm.getInput()) << ", "
           << scale << ", " << bias << ", " << name(norm.getOutput()) << ", "
           << rows << ", " << cols << ", " << eps << ");\n";
  }
  return success();
}

LogicalResult EmitterBase::emitNormGrad(loomrt::NormGradOp grad) {
  origin((grad.getOrigin() + " -> " + name(grad.getInputGrad())).str());
  ArrayRef<int64_t> s = shape(grad.getInput());
  int64_t axis = grad.getAxis();
  std::string eps;
  llvm::raw_string_ostream(eps)
      << llvm::format("%.17g", grad.getEpsilon().convertToDouble());
  line() << libraryCall("normGrad", false) << name(grad.getInput()) << ", "
         << name(grad.getCotangent()) << ", "
         << (grad.getScale() ? name(grad.getScale()) : "nullptr") << ", "
         << (grad.getResidual() ? name(grad.getResidual()) : "nullptr") << ", "
         << name(grad.getInputGrad()) << ", " << name(grad.getScaleGrad())
         << ", " << name(grad.getBiasGrad()) << ", "
         << numElements(s.take_front(axis)) << ", "
         << numElements(s.drop_front(axis)) << ", " << eps << ", "
         << (grad.getRms() ? "true" : "false") << ");\n";
  return success();
}

LogicalResult EmitterBase::emitCrossEntropy(loomrt::CrossEntropyOp ce) {
  origin((ce.getOrigin() + " -> " + name(ce.getOutput())).str());
  // crossEntropy, gather and scatterAdd are overloaded on the index
  // pointer type (i64 and i32), so the call is the same.
  if (!isIndexType(elementType(ce.getLabels())))
    return error(ce) << "cross_entropy labels must be i64 or i32";
  ArrayRef<int64_t> s = shape(ce.getLogits());
  int64_t classes = s.back();
  StringRef reduction = ce.getReduction();
  const char *kind = reduction == "none"  ? "Reduction::None"
                     : reduction == "sum" ? "Reduction::Sum"
                                          : "Reduction::Mean";
  IntegerAttr ignore = ce.getIgnoreIndexAttr();
  // With probs (loom-fuse-loss-softmax): the softmax of the logits too.
  Value probs = ce.getProbs();
  line() << libraryCall(probs ? "crossEntropySoftmax" : "crossEntropy", true)
         << cppQuote(ce.getOrigin()) << ", " << name(ce.getLogits()) << ", "
         << name(ce.getLabels()) << ", " << name(ce.getOutput()) << ", ";
  if (probs)
    os << name(probs) << ", ";
  os << numElements(s) / classes << ", " << classes << ", cpu::" << kind
     << ", " << (ignore ? "true" : "false") << ", "
     << (ignore ? ignore.getInt() : 0) << ");\n";
  return success();
}

LogicalResult EmitterBase::emitGather(loomrt::GatherOp gather) {
  origin((gather.getOrigin() + " -> " + name(gather.getOutput())).str());
  if (!isIndexType(elementType(gather.getIndices())))
    return error(gather) << "gather indices must be i64 or i32";
  ArrayRef<int64_t> s = shape(gather.getData());
  int64_t axis = gather.getAxis();
  line() << libraryCall("gather", true) << cppQuote(gather.getOrigin()) << ", "
         << name(gather.getData()) << ", "
         << elementBytes(elementType(gather.getData())) << ", "
         << name(gather.getIndices()) << ", " << name(gather.getOutput())
         << ", " << numElements(s.take_front(axis)) << ", " << s[axis] << ", "
         << numElements(s.drop_front(axis + 1)) << ", "
         << numElements(shape(gather.getIndices())) << ");\n";
  return success();
}

LogicalResult EmitterBase::emitScatterAdd(loomrt::ScatterAddOp scatter) {
  origin((scatter.getOrigin() + " -> " + name(scatter.getOutput())).str());
  if (!isIndexType(elementType(scatter.getIndices())))
    return error(scatter) << "scatter_add indices must be i64 or i32";
  ArrayRef<int64_t> s = shape(scatter.getTarget());
  int64_t axis = scatter.getAxis();
  line() << libraryCall("scatterAdd", true) << cppQuote(scatter.getOrigin())
         << ", " << name(scatter.getTarget()) << ", "
         << name(scatter.getIndices()) << ", " << name(scatter.getUpdates())
         << ", " << name(scatter.getOutput()) << ", "
         << numElements(s.take_front(axis)) << ", " << s[axis] << ", "
         << numElements(s.drop_front(axis + 1)) << ", "
         << numElements(shape(scatter.getIndices())) << ");\n";
  return success();
}

//===----------------------------------------------------------------------===//
// Communication
//===----------------------------------------------------------------------===//

LogicalResult
EmitterBase::emitAllReduceStart(loomrt::AllReduceStartOp start) {
  std::string n = globalName(start.getHandle());
  names[start.getHandle()] = n;
  StringRef reduction = start.getReduction();
  const char *op = reduction == "max"   ? "ReduceOp::Max"
                   : reduction == "min" ? "ReduceOp::Min"
                   : reduction == "avg" ? "ReduceOp::Avg"
                                        : "ReduceOp::Sum";
  const char *group = groupEnum(start.getMeshAxis());
  ArrayRef<int64_t> s = shape(start.getBuffer());
  if (start.getRowSparse()) {
    // Rows of dimension 0, each of the remaining dimensions' elements.
    line() << n << " = " << libraryCall("rowSparseAllReduceStart", true)
           << name(start.getBuffer()) << ", " << s.front() << ", "
           << numElements(s.drop_front()) << ", " << group << ");\n";
    return success();
  }
  line() << n << " = " << libraryCall("allReduceStart", true)
         << name(start.getBuffer())
         << ", " << numElements(s) << ", " << op << ", " << group << ");\n";
  return success();
}

template <typename StartOp>
LogicalResult EmitterBase::emitTransferStart(StartOp start) {
  constexpr bool isSend = std::is_same_v<StartOp, loomrt::SendStartOp>;
  const char *group = groupEnum(start.getMeshAxis());
  std::string n = globalName(start.getHandle());
  names[start.getHandle()] = n;
  Value buffer = start.getBuffer();
  line() << n << " = "
         << libraryCall(isSend ? "sendStart" : "recvStart", true)
         << name(buffer) << ", "
         << numElements(shape(buffer)) * elementBytes(elementType(buffer))
         << ", " << start.getPeer() << ", " << hole(start.getTag()) << ", "
         << group << ");\n";
  return success();
}

template LogicalResult
EmitterBase::emitTransferStart<loomrt::SendStartOp>(loomrt::SendStartOp);
template LogicalResult
EmitterBase::emitTransferStart<loomrt::RecvStartOp>(loomrt::RecvStartOp);

LogicalResult EmitterBase::emitSwap(Operation *op, Value source,
                                   Value target, Value handle, bool out) {
  std::string n = globalName(handle);
  names[handle] = n;
  line() << n << " = "
         << libraryCall(out ? "swapOutStart" : "swapInStart", true)
         << name(target) << ", " << name(source) << ", "
         << numElements(shape(source)) * elementBytes(elementType(source))
         << ");\n";
  return success();
}

LogicalResult EmitterBase::emitWait(loomrt::WaitOp wait) {
  line() << libraryCall("wait", true) << name(wait.getHandle()) << ");\n";
  return success();
}

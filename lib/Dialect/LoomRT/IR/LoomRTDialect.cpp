//===- LoomRTDialect.cpp - The loomrt dialect -----------------------------===//

#include "loom/Dialect/LoomRT/IR/LoomRTDialect.h"
#include "loom/Dialect/Loom/IR/LocationName.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::loomrt;

#include "loom/Dialect/LoomRT/IR/LoomRTDialect.cpp.inc"
#include "loom/Dialect/LoomRT/IR/LoomRTOpsEnums.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "loom/Dialect/LoomRT/IR/LoomRTTypes.cpp.inc"

#define GET_OP_CLASSES
#include "loom/Dialect/LoomRT/IR/LoomRTOps.cpp.inc"

void LoomRTDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "loom/Dialect/LoomRT/IR/LoomRTTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "loom/Dialect/LoomRT/IR/LoomRTOps.cpp.inc"
      >();
}

int64_t mlir::loomrt::bufferBytes(Type type) {
  auto memref = cast<MemRefType>(type);
  int64_t bits = memref.getElementType().getIntOrFloatBitWidth();
  return memref.getNumElements() * (bits == 1 ? 1 : (bits + 7) / 8);
}

Value mlir::loomrt::rootBuffer(Value value) {
  while (auto view = value.getDefiningOp<ViewOp>())
    value = view.getSource();
  return value;
}

SmallVector<Value> mlir::loomrt::aliasesOf(Value buffer) {
  SmallVector<Value> aliases{buffer};
  for (size_t i = 0; i < aliases.size(); ++i)
    for (Operation *user : aliases[i].getUsers())
      if (auto view = dyn_cast<ViewOp>(user))
        aliases.push_back(view.getResult());
  return aliases;
}

bool mlir::loomrt::livesPast(Value root, Operation *op) {
  if (isa<BlockArgument>(root))
    return true;
  for (Value alias : aliasesOf(root))
    for (Operation *user : alias.getUsers())
      if (!isa<ViewOp>(user) && user->getBlock() == op->getBlock() &&
          op->isBeforeInBlock(user))
        return true;
  return false;
}

SmallVector<int64_t> mlir::loomrt::inputStrides(KernelOp kernel, unsigned i) {
  if (ArrayAttr strides = kernel.getInStridesAttr())
    return SmallVector<int64_t>(
        cast<DenseI64ArrayAttr>(strides[i]).asArrayRef());
  return computeStrides(
      cast<MemRefType>(kernel.getOuts().front().getType()).getShape());
}

int64_t mlir::loomrt::inputOffset(KernelOp kernel, unsigned i) {
  if (std::optional<ArrayRef<int64_t>> offsets = kernel.getInOffsets())
    return (*offsets)[i];
  return 0;
}

bool mlir::loomrt::readsAtWrittenElement(KernelOp kernel, unsigned i) {
  return inputOffset(kernel, i) == 0 &&
         inputStrides(kernel, i) ==
         computeStrides(
             cast<MemRefType>(kernel.getOuts().front().getType()).getShape());
}

bool mlir::loomrt::touchedBetween(Operation *from, Operation *to,
                                  ArrayRef<Value> buffers, bool orRead) {
  for (Operation *op = from->getNextNode(); op && op != to;
       op = op->getNextNode()) {
    if (isMemoryEffectFree(op))
      continue;
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects ||
        (op->getNumRegions() != 0 && !isa<KernelOp, ReduceOp>(op)))
      return true;
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (const MemoryEffects::EffectInstance &e : list) {
      if (!isa<MemoryEffects::Write>(e.getEffect()) &&
          !(orRead && isa<MemoryEffects::Read>(e.getEffect())))
        continue;
      if (!e.getValue() ||
          llvm::is_contained(buffers, rootBuffer(e.getValue())))
        return true;
    }
  }
  return false;
}

bool mlir::loomrt::isPlainAdd(KernelOp kernel) {
  Block &body = kernel.getBody().front();
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (body.getNumArguments() != 2 || !yield ||
      yield.getValues().size() != 1)
    return false;
  Value sum = yield.getValues()[0];
  auto narrow = sum.getDefiningOp<arith::TruncFOp>();
  if (narrow)
    sum = narrow.getIn();
  auto add = sum.getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  // The argument an addend is, through its widening when bf16.
  auto argument = [&](Value x) -> Value {
    if (!narrow)
      return x;
    auto wide = x.getDefiningOp<arith::ExtFOp>();
    return wide && wide.getIn().getType().isBF16() ? wide.getIn() : Value();
  };
  Value x = argument(add.getLhs()), y = argument(add.getRhs());
  const size_t ops = narrow ? 5 : 2; // the extfs, addf, truncf, yield
  return x && y && x != y && llvm::hasNItems(body, ops) &&
         (narrow || add.getType().isF32()) &&
         llvm::is_contained(body.getArguments(), x) &&
         llvm::is_contained(body.getArguments(), y) &&
         (!narrow || narrow.getType().isBF16());
}

bool mlir::loomrt::readsDensely(KernelOp kernel) {
  for (unsigned i = 0; i < kernel.getIns().size(); ++i)
    if (!readsAtWrittenElement(kernel, i))
      return false;
  return true;
}

bool mlir::loomrt::isConversionKernel(KernelOp kernel, Type from, Type to) {
  if (kernel.getIns().size() != 1 || kernel.getOuts().size() != 1 ||
      !readsAtWrittenElement(kernel, 0))
    return false;
  auto in = cast<MemRefType>(kernel.getIns()[0].getType());
  auto out = cast<MemRefType>(kernel.getOuts()[0].getType());
  if (in.getElementType() != from || out.getElementType() != to ||
      in.getNumElements() != out.getNumElements())
    return false;
  Block &body = kernel.getBody().front();
  if (body.getOperations().size() != 2)
    return false;
  auto yield = cast<YieldOp>(body.getTerminator());
  Operation *cast = yield.getValues()[0].getDefiningOp();
  return isa_and_nonnull<arith::ExtFOp, arith::TruncFOp>(cast) &&
         cast->getOperand(0) == body.getArgument(0);
}

bool mlir::loomrt::isComputeOp(Operation *op) {
  return isa<KernelOp, ReduceOp, CopyOp, IotaOp, GemmOp, SoftmaxOp,
             LayerNormOp, NormGradOp, CrossEntropyOp, GatherOp,
             ScatterAddOp>(op);
}

// What a kernel body's scalar op costs, in units of a simple op (an add or
// a multiply) at full vector throughput: the CPU backend's loom/Runtime/
// VecMath.h functions, timed in a vectorised loop over a cache-resident
// array on an AVX-512 Xeon (2026-12-07; single thread, the emitted
// programs' flags): per element an add 0.025 ns, a division 0.18, a square
// root 0.22, rsqrt 0.38, exp 0.59, log 0.63, tanh 0.94, erf 1.42.
constexpr double kExpUnits = 24, kTanhUnits = 36;
// The runtime's row kernels, per element, from their `train --trace` times
// on that machine (a tp=2 GPT's softmax about 54 units, its layer norm
// about 35): counting their buffers once had priced them 2-3.6x fast.
constexpr double kSoftmaxUnits = 48, kNormUnits = 32;
// norm_grad: the norm's statistics, then two passes over the row in cache;
// timed at twice the norm (GPT h512 bf16: 0.52 ms a call, the norm 0.25).
constexpr double kNormGradUnits = 2 * kNormUnits;

static double scalarOpUnits(Operation &op) {
  return TypeSwitch<Operation *, double>(&op)
      .Case<YieldOp, arith::ConstantOp>([](Operation *) { return 0.0; })
      .Case<arith::DivFOp, math::SqrtOp>([](Operation *) { return 8.0; })
      .Case<math::RsqrtOp>([](Operation *) { return 16.0; })
      .Case<math::ExpOp, math::LogOp>([](Operation *) { return kExpUnits; })
      .Case<math::TanhOp>([](Operation *) { return kTanhUnits; })
      .Case<math::ErfOp>([](Operation *) { return 56.0; })
      .Case<math::PowFOp>([](Operation *) { return 2 * kExpUnits; })
      // Scalar libm calls: not vectorised.
      .Case<math::SinOp, math::CosOp>([](Operation *) { return 64.0; })
      .Default([](Operation *) { return 1.0; });
}

/// Elements of a statically shaped buffer, else 0.
static double elementCount(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && type.hasStaticShape()
             ? static_cast<double>(type.getNumElements())
             : 0.0;
}

OpWork mlir::loomrt::computeWork(Operation *op) {
  OpWork work;
  if (!isComputeOp(op))
    return work;
  // Bytes: every buffer the op declares it reads or writes, once per kind;
  // a copy moves only its shape's elements (a gradient into its bucket,
  // not the bucket).
  if (auto copy = dyn_cast<CopyOp>(op)) {
    auto elementBytes = [](Value v) {
      auto type = cast<MemRefType>(v.getType());
      return static_cast<double>(bufferBytes(type)) /
             static_cast<double>(std::max<int64_t>(type.getNumElements(), 1));
    };
    double n = 1;
    for (int64_t d : copy.getShape())
      n *= static_cast<double>(d);
    work.bytes =
        n * (elementBytes(copy.getSource()) + elementBytes(copy.getTarget()));
  } else if (auto effects = dyn_cast<MemoryEffectOpInterface>(op)) {
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    llvm::SmallDenseSet<std::pair<Value, int>> seen;
    for (const MemoryEffects::EffectInstance &e : list) {
      Value v = e.getValue();
      int write = isa<MemoryEffects::Write>(e.getEffect()) ? 1 : 0;
      if (v && isa<MemRefType>(v.getType()) && seen.insert({v, write}).second)
        work.bytes += static_cast<double>(bufferBytes(v.getType()));
    }
  }
  if (auto gemm = dyn_cast<GemmOp>(op)) {
    work.gemm = true;
    double product = static_cast<double>(gemm.getBatch()) *
                     static_cast<double>(gemm.getM()) *
                     static_cast<double>(gemm.getN());
    work.flops = 2.0 * product * static_cast<double>(gemm.getK());
    work.bf16 =
        cast<MemRefType>(gemm.getA().getType()).getElementType().isBF16();
    // Epilogues, priced as the CPU backend runs them: a pass over the
    // product (cuBLASLt applies them as it writes; its pass is cheaper).
    auto pass = [&](double units, double bytesPerElement) {
      work.epilogueFlops += units * product;
      work.epilogueBytes += bytesPerElement * product;
    };
    if (gemm.getBias())
      pass(1, 8); // c += bias, row by row
    // The GELU as x sigmoid(z): an exp and a division.
    if (gemm.getGeluInput())
      pass(16 + kExpUnits, 8); // read the pre-activation, write c
    if (gemm.getDgeluInput())
      pass(24 + kExpUnits, 12); // read both, write c
    // accumulate: BLAS adds the product onto c as it writes it (beta = 1);
    // c's read is among the bytes above (declared read and written).
    if (gemm.getAccumulate())
      pass(1, 0);
    return work;
  }
  auto scalarOps = [](Block &body) {
    double n = 0;
    for (Operation &inner : body)
      n += scalarOpUnits(inner);
    return n;
  };
  if (auto kernel = dyn_cast<KernelOp>(op))
    work.flops = scalarOps(kernel.getBody().front()) *
                 elementCount(kernel.getOuts()[0]);
  else if (auto reduce = dyn_cast<ReduceOp>(op))
    // The fold, and the ops fused into it per element.
    work.flops = (1.0 + (reduce.isFused()
                             ? scalarOps(reduce.getBody().front())
                             : 0.0)) *
                 elementCount(reduce.getInput());
  else if (isa<SoftmaxOp, CrossEntropyOp>(op))
    // An exp per element and three passes over the row in cache (its max,
    // the exponentials with their double sum, the scaling).
    work.flops = kSoftmaxUnits * elementCount(op->getOperand(0));
  else if (isa<LayerNormOp>(op))
    // Three passes over the row in double (the mean, the squares, the
    // normalisation).
    work.flops = kNormUnits * elementCount(op->getOperand(0));
  else if (isa<NormGradOp>(op))
    // The forward norm's statistics, then two more passes over the row
    // (the row sums, the input gradient and the parameter sums).
    work.flops = kNormGradUnits * elementCount(op->getOperand(0));
  return work;
}

std::string mlir::loomrt::traceSpanName(Operation *op) {
  std::string text = op->getName().stripDialect().str();
  if (auto origin = op->getAttrOfType<StringAttr>("origin"))
    text += " " + origin.getValue().str();
  if (StringRef name = loom::getLocationName(op->getLoc()); !name.empty())
    text += " (" + name.str() + ")";
  return text;
}

static int64_t elementCount(MemRefType type) {
  int64_t n = 1;
  for (int64_t d : type.getShape())
    n *= d;
  return n;
}

LogicalResult ViewOp::verify() {
  auto from = cast<MemRefType>(getSource().getType());
  auto to = cast<MemRefType>(getResult().getType());
  if (from.getElementType() != to.getElementType())
    return emitOpError("changes the element type from ")
           << from.getElementType() << " to " << to.getElementType();
  if (!from.hasStaticShape() || !to.hasStaticShape())
    return emitOpError("needs static shapes");
  if (elementCount(from) != elementCount(to))
    return emitOpError("changes the element count from ")
           << elementCount(from) << " to " << elementCount(to);
  return success();
}

static LogicalResult verifySwapTypes(Operation *op, Value source,
                                     Value target) {
  auto from = cast<MemRefType>(source.getType());
  auto to = cast<MemRefType>(target.getType());
  if (from != to)
    return op->emitOpError("copies ")
           << from << " into " << to << ": the types must be equal";
  if (!from.hasStaticShape())
    return op->emitOpError("needs a static shape");
  return success();
}

LogicalResult SwapOutOp::verify() {
  return verifySwapTypes(*this, getSource(), getTarget());
}

LogicalResult SwapInOp::verify() {
  if (failed(verifySwapTypes(*this, getSource(), getTarget())))
    return failure();
  // The wait on the handle, in this block.
  Operation *wait = nullptr;
  for (Operation *user : getHandle().getUsers()) {
    if (!isa<WaitOp>(user) || user->getBlock() != (*this)->getBlock())
      return emitOpError("handle must be waited on in the same block");
    if (!wait || user->isBeforeInBlock(wait))
      wait = user;
  }
  if (!wait)
    return emitOpError("the swapped-in buffer is never waited on");
  // Every other use of the target (through views) after that wait.
  SmallVector<Value> worklist{getTarget()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (user == getOperation())
        continue;
      if (auto view = dyn_cast<ViewOp>(user)) {
        worklist.push_back(view.getResult());
        continue;
      }
      Operation *top = wait->getBlock()->findAncestorOpInBlock(*user);
      if (!top || !wait->isBeforeInBlock(top))
        return (emitOpError("the swapped-in buffer is used before the wait "
                            "on its handle: prefetched too late"))
                   .attachNote(user->getLoc())
               << "used here";
    }
  }
  return success();
}

LogicalResult NormGradOp::verify() {
  auto input = cast<MemRefType>(getInput().getType());
  int64_t axis = getAxis();
  if (axis < 0 || axis >= input.getRank())
    return emitOpError("axis ") << axis << " is out of range for rank "
                                << input.getRank();
  for (Value full : {getCotangent(), getResidual(), getInputGrad()})
    if (full &&
        cast<MemRefType>(full.getType()).getShape() != input.getShape())
      return emitOpError("needs the input's shape for ") << full.getType()
             << ", the input is " << input;
  ArrayRef<int64_t> normalized = input.getShape().drop_front(axis);
  for (Value param : {getScale(), getScaleGrad(), getBiasGrad()})
    if (param && cast<MemRefType>(param.getType()).getShape() != normalized)
      return emitOpError("needs the normalised dimensions' shape for ")
             << param.getType() << ", the input is " << input
             << " normalised from axis " << axis;
  return success();
}

LogicalResult CrossEntropyOp::verify() {
  auto logits = cast<MemRefType>(getLogits().getType());
  if (Value probs = getProbs();
      probs && cast<MemRefType>(probs.getType()).getShape() !=
                   logits.getShape())
    return emitOpError("needs the logits' shape for its probabilities ")
           << probs.getType() << ", the logits are " << logits;
  return success();
}

LogicalResult ConstantOp::verify() {
  auto type = cast<MemRefType>(getBuffer().getType());
  auto valueType = cast<ShapedType>(getValue().getType());
  if (valueType.getShape() != type.getShape() ||
      valueType.getElementType() != type.getElementType())
    return emitOpError("value of type ")
           << valueType << " does not match the buffer " << type;
  return success();
}

LogicalResult GemmOp::verify() {
  int64_t m = getM(), n = getN(), k = getK(), batch = getBatch();
  if (batch < 0 || m < 0 || n < 0 || k < 0)
    return emitOpError("has a negative size");
  auto c = cast<MemRefType>(getC().getType());
  for (Value operand : {getA(), getB()})
    if (cast<MemRefType>(operand.getType()).getElementType() !=
        c.getElementType())
      return emitOpError("operands and output must share one element type, "
                         "got ")
             << operand.getType() << " and " << c;
  if (c.hasStaticShape() && elementCount(c) != batch * m * n)
    return emitOpError("output ")
           << c << " does not hold " << batch << " x " << m << " x " << n
           << " elements";
  auto outer = getBatchOuterAttr();
  auto aStrides = getAStridesAttr(), bStrides = getBStridesAttr();
  if (Value bias = getBias()) {
    auto type = cast<MemRefType>(bias.getType());
    if (outer || aStrides || bStrides || batch != 1)
      return emitOpError("takes a bias only in the plain form of one "
                         "matrix (batch 1, no strides)");
    if (type.getRank() != 1 || type.getDimSize(0) != n ||
        type.getElementType() != c.getElementType())
      return emitOpError("bias ") << type << " must hold n = " << n
                                  << " elements of the output's type "
                                  << c.getElementType();
    if (getGeluInput() && !c.getElementType().isF32())
      return emitOpError("takes a gelu_input only in f32");
  }
  if (Value pre = getGeluInput()) {
    if (!getBias())
      return emitOpError("takes a gelu_input only with a bias (cuBLASLt's "
                         "GELU_AUX_BIAS epilogue)");
    if (pre.getType() != getC().getType() || pre == getC())
      return emitOpError("gelu_input must be another buffer of the output's "
                         "type ")
             << getC().getType();
  }
  if (Value pre = getDgeluInput()) {
    if (outer || aStrides || bStrides || batch != 1 || getBias() ||
        !c.getElementType().isF32())
      return emitOpError("takes a dgelu_input only in the plain form of one "
                         "f32 matrix without a bias (cuBLASLt's DGELU "
                         "epilogue)");
    if (pre.getType() != getC().getType() || pre == getC())
      return emitOpError("dgelu_input must be another buffer of the "
                         "output's type ")
             << getC().getType();
  }
  if (getAccumulate() &&
      (outer || aStrides || bStrides || batch != 1 || getBias() ||
       getDgeluInput() || !c.getElementType().isF32()))
    return emitOpError("accumulates only in the plain form of one f32 "
                       "matrix without another epilogue (beta = 1)");
  if (!outer && !aStrides && !bStrides)
    return success();
  if (!outer || !aStrides || !bStrides)
    return emitOpError("needs all of batch_outer, a_strides and b_strides, "
                       "or none");
  if (outer.getInt() <= 0 || batch % outer.getInt() != 0)
    return emitOpError("batch_outer ")
           << outer.getInt() << " does not divide the batch " << batch;
  auto check = [&](DenseI64ArrayAttr strides, StringRef operand,
                   int64_t rowLength) -> LogicalResult {
    if (strides.size() != 3)
      return emitOpError() << operand
                           << "_strides must be [outer, inner, leading "
                              "dimension], got "
                           << strides.size() << " values";
    if (strides[0] < 0 || strides[1] < 0 || strides[2] < rowLength)
      return emitOpError() << operand << "_strides: negative stride, or a "
                           << "leading dimension below the row length "
                           << rowLength;
    return success();
  };
  if (failed(check(aStrides, "a", getTransA() ? m : k)) ||
      failed(check(bStrides, "b", getTransB() ? k : n)))
    return failure();
  return success();
}

/// A kernel or reduce body takes one scalar per input, of its element
/// type.
static LogicalResult verifyBodyArguments(Operation *op, Block &body,
                                         ValueRange ins) {
  if (body.getNumArguments() != ins.size())
    return op->emitOpError("body has ")
           << body.getNumArguments() << " arguments for " << ins.size()
           << " inputs";
  for (auto [arg, in] : llvm::zip(body.getArguments(), ins))
    if (arg.getType() != cast<MemRefType>(in.getType()).getElementType())
      return op->emitOpError("body argument type ")
             << arg.getType() << " does not match input element type "
             << cast<MemRefType>(in.getType()).getElementType();
  return success();
}

LogicalResult KernelOp::verify() {
  if (getOuts().empty())
    return emitOpError("needs at least one output");
  auto shape = cast<MemRefType>(getOuts().front().getType()).getShape();
  for (Value out : getOuts())
    if (cast<MemRefType>(out.getType()).getShape() != shape)
      return emitOpError("outputs differ in shape");
  Block &body = getBody().front();
  if (failed(verifyBodyArguments(*this, body, getIns())))
    return failure();
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getValues().size() != getOuts().size())
    return emitOpError("yields ") << yield.getValues().size()
                                  << " values for " << getOuts().size()
                                  << " outputs";
  for (auto [v, out] : llvm::zip(yield.getValues(), getOuts()))
    if (v.getType() != cast<MemRefType>(out.getType()).getElementType())
      return emitOpError("yields ") << v.getType() << " into "
                                    << out.getType();
  if (auto strides = getInStridesAttr()) {
    if (strides.size() != getIns().size())
      return emitOpError("has ") << strides.size() << " in_strides for "
                                 << getIns().size() << " inputs";
    for (Attribute s : strides) {
      auto array = dyn_cast<DenseI64ArrayAttr>(s);
      if (!array || array.size() != static_cast<int64_t>(shape.size()))
        return emitOpError("in_strides entries must be one stride per loop "
                           "dimension (")
               << shape.size() << ")";
      if (llvm::any_of(array.asArrayRef(), [](int64_t v) { return v < 0; }))
        return emitOpError("in_strides must not be negative");
    }
    std::optional<ArrayRef<int64_t>> offsets = getInOffsets();
    if (offsets && offsets->size() != getIns().size())
      return emitOpError("has ") << offsets->size() << " in_offsets for "
                                 << getIns().size() << " inputs";
    // The last element each input is read at lies in it.
    bool empty = llvm::is_contained(shape, 0);
    for (auto [i, in] : llvm::enumerate(getIns())) {
      int64_t offset = offsets ? (*offsets)[i] : 0;
      if (offset < 0)
        return emitOpError("in_offsets must not be negative");
      int64_t last = offset;
      for (auto [size, stride] : llvm::zip(
               shape, cast<DenseI64ArrayAttr>(strides[i]).asArrayRef()))
        last += (size - 1) * stride;
      int64_t elements = cast<MemRefType>(in.getType()).getNumElements();
      if (!empty && last >= elements)
        return emitOpError("reads input ")
               << i << " at element " << last << " of " << elements
               << " (in_strides and in_offsets out of bounds)";
    }
  } else if (getInOffsets()) {
    return emitOpError("has in_offsets without in_strides");
  } else {
    for (Value in : getIns())
      if (cast<MemRefType>(in.getType()).getShape() != shape)
        return emitOpError("input of type ")
               << in.getType()
               << " differs in shape from the outputs; give in_strides";
  }
  return success();
}

LogicalResult ReduceOp::verify() {
  if (getIns().empty())
    return emitOpError("needs an input");
  auto in = cast<MemRefType>(getInput().getType());
  for (int64_t d : getDims())
    if (d < 0 || d >= in.getRank())
      return emitOpError("reduces dimension ")
             << d << " of a rank-" << in.getRank() << " input";
  Type element = cast<MemRefType>(getOutput().getType()).getElementType();
  if (!isFused()) {
    if (getIns().size() != 1)
      return emitOpError("without a body reduces one input, not ")
             << getIns().size();
    return success();
  }
  if (!getBody().hasOneBlock())
    return emitOpError("body must be one block");
  Block &body = getBody().front();
  for (Value input : getIns())
    if (cast<MemRefType>(input.getType()).getShape() != in.getShape())
      return emitOpError("fused inputs differ in shape: ")
             << input.getType() << " and " << in;
  if (failed(verifyBodyArguments(*this, body, getIns())))
    return failure();
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield || yield.getValues().size() != 1 ||
      yield.getValues().front().getType() != element)
    return emitOpError("body must yield one ") << element;
  return success();
}

//===----------------------------------------------------------------------===//
// Collectives: the group is one axis of a shard.grid (the device mesh)
//===----------------------------------------------------------------------===//

static LogicalResult verifyMeshAxis(Operation *op, SymbolTableCollection &table,
                                    FlatSymbolRefAttr gridName,
                                    ArrayRef<int16_t> gridAxes) {
  auto grid =
      table.lookupNearestSymbolFrom<shard::GridOp>(op, gridName.getAttr());
  if (!grid)
    return op->emitOpError("names @")
           << gridName.getValue() << ", which is not a shard.grid of the module";
  if (grid.getShape().size() != ::loom::kNumMeshAxes)
    return op->emitOpError("runs on @")
           << gridName.getValue() << " of rank " << grid.getShape().size()
           << "; the runtime's communicators are the axes of a 3-D device "
              "mesh (dp, pp, tp)";
  if (gridAxes.size() != 1 || gridAxes[0] < 0 ||
      gridAxes[0] >= ::loom::kNumMeshAxes)
    return op->emitOpError("needs exactly one grid axis in [0, ")
           << ::loom::kNumMeshAxes << "), got [" << llvm::join(llvm::map_range(gridAxes, [](int16_t a) { return std::to_string(a); }), ", ") << "]";
  return success();
}

LogicalResult AllReduceStartOp::verify() {
  if (!getRowSparse())
    return success();
  if (getReduction() != "sum")
    return emitOpError("row_sparse sums rows; reduction must be \"sum\", got \"")
           << getReduction() << "\"";
  if (cast<MemRefType>(getBuffer().getType()).getRank() < 1)
    return emitOpError("row_sparse exchanges rows (dimension 0) of a buffer "
                       "of rank >= 1");
  return success();
}

LogicalResult AllReduceStartOp::verifySymbolUses(SymbolTableCollection &table) {
  return verifyMeshAxis(*this, table, getGridAttr(), getGridAxes());
}
LogicalResult SendStartOp::verifySymbolUses(SymbolTableCollection &table) {
  return verifyMeshAxis(*this, table, getGridAttr(), getGridAxes());
}
LogicalResult RecvStartOp::verifySymbolUses(SymbolTableCollection &table) {
  return verifyMeshAxis(*this, table, getGridAttr(), getGridAxes());
}
LogicalResult GridIndexOp::verifySymbolUses(SymbolTableCollection &table) {
  return verifyMeshAxis(*this, table, getGridAttr(), getGridAxes());
}

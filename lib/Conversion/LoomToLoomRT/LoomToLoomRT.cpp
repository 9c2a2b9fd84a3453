//===- LoomToLoomRT.cpp - Lower a loom function to loomrt -----------------===//
//
// The lowering walks the function once, in order, keeping the buffer that
// holds each tensor value. Elementwise chains are grouped first (a value
// with one use, by an elementwise op of the same shape, is computed inside
// its user's loop); each group becomes one loomrt.kernel at the position of
// its last op. Everything else maps one op to one loomrt op.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/LoomToLoomRT/Passes.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/LoomInterfaces.h"
#include "loom/Dialect/Loom/IR/MeshGrid.h"
#include "loom/Dialect/Loom/Transforms/TrainingFunctions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"


namespace mlir {
namespace loom {
#define GEN_PASS_DEF_CONVERTLOOMTOLOOMRT
#include "loom/Conversion/LoomToLoomRT/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;

namespace {

SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

bool isElementwise(Operation *op) {
  return op->hasTrait<::mlir::loom::OpTrait::ElementwiseMapping>();
}

MemRefType bufferType(Type tensorType) {
  auto type = cast<RankedTensorType>(tensorType);
  return MemRefType::get(type.getShape(), type.getElementType());
}

/// How a gemm reads one dot_general operand: `source` (the operand, or the
/// operand of the transpose defining it), in BLAS's plain or transposed
/// layout, or, when neither fits, through a copy into the plain layout
/// (`copyPerm`, dimensions of `source`).
struct OperandLayout {
  Value source;
  bool transposed = false;
  SmallVector<int64_t> copyPerm;
};

/// A dot_general as one batched gemm.
struct DotLayout {
  OperandLayout lhs, rhs;
  int64_t batch = 1, m = 1, n = 1, k = 1;
};

bool isIdentityPermutation(ArrayRef<int64_t> perm) {
  for (auto [i, p] : llvm::enumerate(perm))
    if (static_cast<int64_t>(i) != p)
      return false;
  return true;
}

/// `value` read with its dimensions in the order `plain` (or `trans`, which
/// BLAS transposes for free); looks through one transpose.
OperandLayout planOperand(Value value, ArrayRef<int64_t> plain,
                          ArrayRef<int64_t> trans) {
  // Reading a transpose's source directly saves materialising it.
  if (auto transpose = value.getDefiningOp<TransposeOp>()) {
    ArrayRef<int64_t> p = transpose.getPermutation();
    auto compose = [&](ArrayRef<int64_t> order) {
      SmallVector<int64_t> composed;
      for (int64_t d : order)
        composed.push_back(p[d]);
      return composed;
    };
    if (isIdentityPermutation(compose(plain)))
      return {transpose.getOperand(), false, {}};
    if (isIdentityPermutation(compose(trans)))
      return {transpose.getOperand(), true, {}};
  }
  if (isIdentityPermutation(plain))
    return {value, false, {}};
  if (isIdentityPermutation(trans))
    return {value, true, {}};
  return {value, false, SmallVector<int64_t>(plain.begin(), plain.end())};
}

DotLayout planDotLayout(DotGeneralOp op) {
  auto lhsType = cast<RankedTensorType>(op.getLhs().getType());
  auto rhsType = cast<RankedTensorType>(op.getRhs().getType());
  ArrayRef<int64_t> lhsBatch = op.getLhsBatchingDims();
  ArrayRef<int64_t> rhsBatch = op.getRhsBatchingDims();
  // Contracting pairs ordered by their lhs dimension.
  SmallVector<std::pair<int64_t, int64_t>> contract;
  for (auto [l, r] :
       llvm::zip(op.getLhsContractingDims(), op.getRhsContractingDims()))
    contract.push_back({l, r});
  llvm::sort(contract);
  SmallVector<int64_t> lhsContract, rhsContract;
  for (auto [l, r] : contract) {
    lhsContract.push_back(l);
    rhsContract.push_back(r);
  }
  auto freeDims = [](int64_t rank, ArrayRef<int64_t> batch,
                     ArrayRef<int64_t> contracting) {
    SmallVector<int64_t> free;
    for (int64_t d = 0; d < rank; ++d)
      if (!llvm::is_contained(batch, d) && !llvm::is_contained(contracting, d))
        free.push_back(d);
    return free;
  };
  SmallVector<int64_t> lhsFree =
      freeDims(lhsType.getRank(), lhsBatch, lhsContract);
  SmallVector<int64_t> rhsFree =
      freeDims(rhsType.getRank(), rhsBatch, rhsContract);
  auto concat = [](std::initializer_list<ArrayRef<int64_t>> parts) {
    SmallVector<int64_t> all;
    for (ArrayRef<int64_t> part : parts)
      all.append(part.begin(), part.end());
    return all;
  };
  auto size = [](RankedTensorType type, ArrayRef<int64_t> dims) {
    int64_t n = 1;
    for (int64_t d : dims)
      n *= type.getDimSize(d);
    return n;
  };
  DotLayout layout;
  layout.lhs = planOperand(op.getLhs(), concat({lhsBatch, lhsFree, lhsContract}),
                           concat({lhsBatch, lhsContract, lhsFree}));
  layout.rhs = planOperand(op.getRhs(), concat({rhsBatch, rhsContract, rhsFree}),
                           concat({rhsBatch, rhsFree, rhsContract}));
  layout.batch = size(lhsType, lhsBatch);
  layout.m = size(lhsType, lhsFree);
  layout.k = size(lhsType, lhsContract);
  layout.n = size(rhsType, rhsFree);
  return layout;
}

/// Whether every use of `transpose` reads through it without its own buffer:
/// one elementwise user (strided read), or dot_generals whose gemm reads the
/// transpose's source directly.
bool isTransposeAbsorbed(TransposeOp transpose) {
  Value result = transpose.getResult();
  if (result.use_empty())
    return false;
  if (result.hasOneUse() && isElementwise(*result.user_begin()))
    return true;
  return llvm::all_of(result.getUses(), [&](OpOperand &use) {
    auto dot = dyn_cast<DotGeneralOp>(use.getOwner());
    if (!dot)
      return false;
    DotLayout layout = planDotLayout(dot);
    const OperandLayout &plan =
        use.getOperandNumber() == 0 ? layout.lhs : layout.rhs;
    return plan.source == transpose.getOperand() && plan.copyPerm.empty();
  });
}

/// The ops of one function, lowered in order.
class FunctionLowering {
public:
  FunctionLowering(func::FuncOp source) : source(source) {}

  /// Builds the loomrt function next to `source`; null on error (reported).
  func::FuncOp run();

private:
  LogicalResult checkTypes();
  void groupElementwise();
  LogicalResult lowerOp(Operation *op, OpBuilder &b);
  LogicalResult lowerKernel(Operation *root, OpBuilder &b);
  LogicalResult lowerDotGeneral(DotGeneralOp op, OpBuilder &b);
  Value scalarize(Operation *op, ArrayRef<Value> operands, OpBuilder &b);

  /// The buffer an op writes its result `value` into: the function's result
  /// buffer when `value` is returned (and not yet written), else an alloc.
  Value destination(Value value, OpBuilder &b, StringRef category = "");
  StringRef categoryOf(Operation *op);
  Value bufferOf(Value value) { return buffers.lookup(value); }
  StringAttr originOf(Operation *op);

  func::FuncOp source;
  func::FuncOp target;
  DenseMap<Value, Value> buffers;
  /// Result index -> buffer argument of the lowered function.
  SmallVector<Value> resultBuffers;
  /// Returned values not yet assigned to their result buffer.
  DenseMap<Value, SmallVector<unsigned>> pendingResults;
  /// Results of asynchronous all-reduces and receives not yet waited for:
  /// the wait is emitted right before the first op that reads them.
  DenseMap<Value, Value> pendingWaits;
  /// Handles of started sends, waited for at the end of the function.
  SmallVector<Value> pendingSends;
  void waitFor(Value value, OpBuilder &b);
  /// Elementwise op -> the root (last op) of its fused group.
  DenseMap<Operation *, Operation *> groupRoot;
  llvm::MapVector<Operation *, SmallVector<Operation *>> groups;
};

StringAttr FunctionLowering::originOf(Operation *op) {
  StringRef name = op->getName().stripDialect();
  return StringAttr::get(op->getContext(), name);
}

StringRef FunctionLowering::categoryOf(Operation *op) {
  if (auto phase = op->getAttrOfType<StringAttr>(
          LoomDialect::PhaseAttrHelper::getNameStr())) {
    if (phase.getValue() == "backward")
      return "gradient";
    if (phase.getValue() == "optimizer")
      return "optimizer";
  }
  return "activation";
}

LogicalResult FunctionLowering::checkTypes() {
  auto check = [&](Type type, Operation *at, StringRef what) -> LogicalResult {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape())
      return at->emitError() << what << " has type " << type
                             << "; convert-loom-to-loomrt needs static shapes "
                                "(run loom-shape-inference first)";
    Type element = tensor.getElementType();
    if (!element.isF32() && !element.isInteger(64) && !element.isInteger(32) &&
        !element.isInteger(1))
      return at->emitError() << what << " has element type " << element
                             << "; the runtime supports f32, i64, i32 and i1";
    return success();
  };
  for (auto [i, type] : llvm::enumerate(source.getArgumentTypes()))
    if (failed(check(type, source, "argument #" + std::to_string(i))))
      return failure();
  for (auto [i, type] : llvm::enumerate(source.getResultTypes()))
    if (failed(check(type, source, "result #" + std::to_string(i))))
      return failure();
  WalkResult walk = source.walk([&](Operation *op) {
    if (isa<func::ReturnOp>(op) || op == source)
      return WalkResult::advance();
    if (op->getDialect() != source->getContext()->getLoadedDialect("loom") &&
        !isa<shard::AllReduceOp, shard::SendOp, shard::RecvOp>(op))
      return op->emitError("convert-loom-to-loomrt: unsupported op (only loom "
                           "ops, shard.all_reduce, shard.send and shard.recv "
                           "can be lowered; inline calls first)"),
             WalkResult::interrupt();
    for (Value result : op->getResults())
      if (failed(check(result.getType(), op, "result")))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

void FunctionLowering::groupElementwise() {
  for (Operation &op : source.getBody().front()) {
    if (!isElementwise(&op))
      continue;
    groupRoot[&op] = &op;
    groups[&op].push_back(&op);
  }
  // Ops are visited in order, so a producer's group is complete when its
  // single user merges it.
  for (Operation &op : source.getBody().front()) {
    if (!isElementwise(&op))
      continue;
    Operation *root = groupRoot[&op];
    for (Value operand : op.getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if (!producer || !isElementwise(producer) || !operand.hasOneUse() ||
          pendingResults.count(operand))
        continue;
      if (cast<ShapedType>(operand.getType()).getShape() !=
          cast<ShapedType>(op.getResult(0).getType()).getShape())
        continue;
      Operation *producerRoot = groupRoot[producer];
      if (producerRoot == root)
        continue;
      SmallVector<Operation *> members = groups.lookup(producerRoot);
      groups.erase(producerRoot);
      for (Operation *member : members)
        groupRoot[member] = root;
      auto &rootMembers = groups[root];
      rootMembers.append(members.begin(), members.end());
    }
  }
  for (auto &entry : groups)
    llvm::sort(entry.second, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
}

Value FunctionLowering::destination(Value value, OpBuilder &b,
                                    StringRef category) {
  auto it = pendingResults.find(value);
  if (it != pendingResults.end() && !it->second.empty()) {
    unsigned index = it->second.front();
    it->second.erase(it->second.begin());
    return resultBuffers[index];
  }
  Operation *def = value.getDefiningOp();
  if (category.empty())
    category = def ? categoryOf(def) : StringRef("activation");
  return loomrt::AllocOp::create(b, value.getLoc(), bufferType(value.getType()),
                                 b.getStringAttr(category), IntegerAttr());
}

/// The scalar arith/math ops of one elementwise loom op.
Value FunctionLowering::scalarize(Operation *op, ArrayRef<Value> v,
                                  OpBuilder &b) {
  Location loc = op->getLoc();
  Type type = getElementTypeOrSelf(op->getResult(0).getType());
  bool isFloat = isa<FloatType>(type);
  auto floatConst = [&](double x) -> Value {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, x));
  };
  auto sigmoid = [&](Value x) -> Value {
    Value negated = arith::NegFOp::create(b, loc, x);
    Value e = math::ExpOp::create(b, loc, negated);
    Value denom = arith::AddFOp::create(b, loc, floatConst(1.0), e);
    return arith::DivFOp::create(b, loc, floatConst(1.0), denom);
  };
  return TypeSwitch<Operation *, Value>(op)
      .Case([&](AddOp) -> Value {
        return isFloat ? Value(arith::AddFOp::create(b, loc, v[0], v[1]))
                       : Value(arith::AddIOp::create(b, loc, v[0], v[1]));
      })
      .Case([&](SubOp) -> Value {
        return isFloat ? Value(arith::SubFOp::create(b, loc, v[0], v[1]))
                       : Value(arith::SubIOp::create(b, loc, v[0], v[1]));
      })
      .Case([&](MulOp) -> Value {
        return isFloat ? Value(arith::MulFOp::create(b, loc, v[0], v[1]))
                       : Value(arith::MulIOp::create(b, loc, v[0], v[1]));
      })
      .Case([&](DivOp) -> Value {
        return isFloat ? Value(arith::DivFOp::create(b, loc, v[0], v[1]))
                       : Value(arith::DivSIOp::create(b, loc, v[0], v[1]));
      })
      .Case([&](PowOp) -> Value {
        if (!isFloat)
          return Value();
        return math::PowFOp::create(b, loc, v[0], v[1]);
      })
      .Case([&](MaxOp) -> Value {
        return isFloat ? Value(arith::MaximumFOp::create(b, loc, v[0], v[1]))
                       : Value(arith::MaxSIOp::create(b, loc, v[0], v[1]));
      })
      .Case([&](MinOp) -> Value {
        return isFloat ? Value(arith::MinimumFOp::create(b, loc, v[0], v[1]))
                       : Value(arith::MinSIOp::create(b, loc, v[0], v[1]));
      })
      .Case([&](NegOp) -> Value {
        if (isFloat)
          return arith::NegFOp::create(b, loc, v[0]);
        Value zero = arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, 0));
        return arith::SubIOp::create(b, loc, zero, v[0]);
      })
      .Case([&](AbsOp) -> Value {
        return isFloat ? Value(math::AbsFOp::create(b, loc, v[0]))
                       : Value(math::AbsIOp::create(b, loc, v[0]));
      })
      .Case([&](ExpOp) -> Value { return math::ExpOp::create(b, loc, v[0]); })
      .Case([&](LogOp) -> Value { return math::LogOp::create(b, loc, v[0]); })
      .Case([&](SqrtOp) -> Value { return math::SqrtOp::create(b, loc, v[0]); })
      .Case([&](RsqrtOp) -> Value {
        return math::RsqrtOp::create(b, loc, v[0]);
      })
      .Case([&](TanhOp) -> Value { return math::TanhOp::create(b, loc, v[0]); })
      .Case([&](SigmoidOp) -> Value { return sigmoid(v[0]); })
      .Case([&](ErfOp) -> Value { return math::ErfOp::create(b, loc, v[0]); })
      .Case([&](ReluOp) -> Value {
        // max(x, 0) that keeps NaN, as loom-run does.
        Value zero = floatConst(0.0);
        Value positive = arith::CmpFOp::create(
            b, loc, arith::CmpFPredicate::UGT, v[0], zero);
        return arith::SelectOp::create(b, loc, positive, v[0], zero);
      })
      .Case([&](SiluOp) -> Value {
        return arith::MulFOp::create(b, loc, v[0], sigmoid(v[0]));
      })
      .Case([&](GeluOp gelu) -> Value {
        Value x = v[0];
        Value inner;
        if (gelu.getApproximate() == GeluApproximation::tanh) {
          // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
          Value x3 = arith::MulFOp::create(
              b, loc, x, arith::MulFOp::create(b, loc, x, x));
          Value t = arith::AddFOp::create(
              b, loc, x, arith::MulFOp::create(b, loc, floatConst(0.044715), x3));
          inner = math::TanhOp::create(
              b, loc,
              arith::MulFOp::create(b, loc, floatConst(0.7978845608028654), t));
        } else {
          // 0.5 x (1 + erf(x / sqrt(2)))
          inner = math::ErfOp::create(
              b, loc,
              arith::MulFOp::create(b, loc, x, floatConst(0.7071067811865476)));
        }
        Value onePlus = arith::AddFOp::create(b, loc, floatConst(1.0), inner);
        return arith::MulFOp::create(
            b, loc, arith::MulFOp::create(b, loc, floatConst(0.5), x), onePlus);
      })
      .Case([&](CompareOp cmp) -> Value {
        Type operandType = v[0].getType();
        if (isa<FloatType>(operandType)) {
          arith::CmpFPredicate predicate = arith::CmpFPredicate::OEQ;
          switch (cmp.getDirection()) {
          case ComparisonDirection::eq: predicate = arith::CmpFPredicate::OEQ; break;
          case ComparisonDirection::ne: predicate = arith::CmpFPredicate::UNE; break;
          case ComparisonDirection::lt: predicate = arith::CmpFPredicate::OLT; break;
          case ComparisonDirection::le: predicate = arith::CmpFPredicate::OLE; break;
          case ComparisonDirection::gt: predicate = arith::CmpFPredicate::OGT; break;
          case ComparisonDirection::ge: predicate = arith::CmpFPredicate::OGE; break;
          }
          return arith::CmpFOp::create(b, loc, predicate, v[0], v[1]);
        }
        arith::CmpIPredicate predicate = arith::CmpIPredicate::eq;
        switch (cmp.getDirection()) {
        case ComparisonDirection::eq: predicate = arith::CmpIPredicate::eq; break;
        case ComparisonDirection::ne: predicate = arith::CmpIPredicate::ne; break;
        case ComparisonDirection::lt: predicate = arith::CmpIPredicate::slt; break;
        case ComparisonDirection::le: predicate = arith::CmpIPredicate::sle; break;
        case ComparisonDirection::gt: predicate = arith::CmpIPredicate::sgt; break;
        case ComparisonDirection::ge: predicate = arith::CmpIPredicate::sge; break;
        }
        return arith::CmpIOp::create(b, loc, predicate, v[0], v[1]);
      })
      .Case([&](SelectOp) -> Value {
        return arith::SelectOp::create(b, loc, v[0], v[1], v[2]);
      })
      .Case([&](ConvertOp) -> Value {
        Type from = v[0].getType();
        if (from == type)
          return v[0];
        bool fromFloat = isa<FloatType>(from);
        if (fromFloat && isFloat)
          return Value(); // f16/bf16 never reach here (checked types)
        if (fromFloat) {
          if (type.isInteger(1)) {
            Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(from, 0));
            return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE,
                                         v[0], zero);
          }
          return arith::FPToSIOp::create(b, loc, type, v[0]);
        }
        if (isFloat)
          return from.isInteger(1)
                     ? Value(arith::UIToFPOp::create(b, loc, type, v[0]))
                     : Value(arith::SIToFPOp::create(b, loc, type, v[0]));
        unsigned fromWidth = from.getIntOrFloatBitWidth();
        unsigned toWidth = type.getIntOrFloatBitWidth();
        if (toWidth == 1) {
          Value zero = arith::ConstantOp::create(b, loc, b.getIntegerAttr(from, 0));
          return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v[0],
                                       zero);
        }
        if (fromWidth == 1)
          return arith::ExtUIOp::create(b, loc, type, v[0]);
        if (fromWidth < toWidth)
          return arith::ExtSIOp::create(b, loc, type, v[0]);
        return arith::TruncIOp::create(b, loc, type, v[0]);
      })
      .Default([](Operation *) { return Value(); });
}

/// How a fused kernel reads one of its external inputs.
struct KernelInput {
  Value buffer;
  /// Strides per loop dimension; empty for a dense read of the loop shape.
  SmallVector<int64_t> strides;
};

LogicalResult FunctionLowering::lowerKernel(Operation *root, OpBuilder &b) {
  ArrayRef<Operation *> members = groups[root];
  ArrayRef<int64_t> loopShape =
      cast<ShapedType>(root->getResult(0).getType()).getShape();
  MLIRContext *ctx = root->getContext();

  // External inputs (deduplicated by buffer and access), scalars for splat
  // constants, strided reads for broadcasts.
  SmallVector<KernelInput> inputs;
  DenseMap<Value, unsigned> inputIndex; // loom value -> inputs index
  // In first-use order: the kernel body must not depend on pointer values.
  llvm::MapVector<Value, Attribute> splats;
  DenseSet<Operation *> memberSet(members.begin(), members.end());
  for (Operation *member : members) {
    for (Value operand : member->getOperands()) {
      if (memberSet.count(operand.getDefiningOp()) || inputIndex.count(operand) ||
          splats.count(operand))
        continue;
      Operation *def = operand.getDefiningOp();
      // A splat constant, possibly broadcast, becomes a scalar.
      Value splatSource = operand;
      if (auto bcast = dyn_cast_or_null<BroadcastOp>(def))
        splatSource = bcast.getOperand();
      if (auto constant = splatSource.getDefiningOp<ConstantOp>()) {
        auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
        if (dense && dense.isSplat()) {
          splats[operand] = dense.getSplatValue<Attribute>();
          continue;
        }
      }
      KernelInput input;
      if (auto bcast = dyn_cast_or_null<BroadcastOp>(def)) {
        // Read the broadcast's operand: stride 0 on broadcast dimensions.
        auto sourceType = cast<ShapedType>(bcast.getOperand().getType());
        SmallVector<int64_t> sourceStrides =
            rowMajorStrides(sourceType.getShape());
        input.strides.assign(loopShape.size(), 0);
        for (auto [i, dim] : llvm::enumerate(bcast.getDims()))
          if (sourceType.getDimSize(i) != 1)
            input.strides[dim] = sourceStrides[i];
        input.buffer = bufferOf(bcast.getOperand());
      } else if (auto transpose = dyn_cast_or_null<TransposeOp>(def);
                 transpose && transpose->hasOneUse()) {
        auto sourceType = cast<ShapedType>(transpose.getOperand().getType());
        SmallVector<int64_t> sourceStrides =
            rowMajorStrides(sourceType.getShape());
        input.strides.assign(loopShape.size(), 0);
        for (auto [i, p] : llvm::enumerate(transpose.getPermutation()))
          input.strides[i] = sourceStrides[p];
        input.buffer = bufferOf(transpose.getOperand());
      } else {
        input.buffer = bufferOf(operand);
      }
      if (!input.buffer)
        return member->emitError("convert-loom-to-loomrt: operand has no buffer");
      inputIndex[operand] = inputs.size();
      inputs.push_back(std::move(input));
    }
  }

  Value out = destination(root->getResult(0), b);
  buffers[root->getResult(0)] = out;

  SmallVector<Value> inBuffers;
  bool anyStrided = false;
  for (const KernelInput &input : inputs) {
    inBuffers.push_back(input.buffer);
    anyStrided |= !input.strides.empty();
  }
  ArrayAttr inStrides;
  if (anyStrided) {
    SmallVector<Attribute> strideAttrs;
    for (const KernelInput &input : inputs)
      strideAttrs.push_back(DenseI64ArrayAttr::get(
          ctx, input.strides.empty() ? ArrayRef<int64_t>(rowMajorStrides(loopShape))
                                     : ArrayRef<int64_t>(input.strides)));
    inStrides = ArrayAttr::get(ctx, strideAttrs);
  }
  SmallVector<std::string> names;
  for (Operation *member : members)
    names.push_back(member->getName().stripDialect().str());
  auto kernel = loomrt::KernelOp::create(
      b, root->getLoc(), inBuffers, ValueRange{out},
      b.getStringAttr(llvm::join(names, "+")), inStrides);

  Block *body = new Block();
  kernel.getBody().push_back(body);
  for (const KernelInput &input : inputs)
    body->addArgument(cast<MemRefType>(input.buffer.getType()).getElementType(),
                      root->getLoc());
  OpBuilder inner = OpBuilder::atBlockEnd(body);
  DenseMap<Value, Value> scalars;
  for (auto [value, index] : inputIndex)
    scalars[value] = body->getArgument(index);
  for (auto [value, attr] : splats)
    scalars[value] =
        arith::ConstantOp::create(inner, root->getLoc(), cast<TypedAttr>(attr));
  for (Operation *member : members) {
    SmallVector<Value> operands;
    for (Value operand : member->getOperands())
      operands.push_back(scalars.lookup(operand));
    Value result = scalarize(member, operands, inner);
    if (!result)
      return member->emitError("convert-loom-to-loomrt: no scalar lowering for "
                               "this op with element type ")
             << getElementTypeOrSelf(member->getResult(0).getType());
    scalars[member->getResult(0)] = result;
  }
  loomrt::YieldOp::create(inner, root->getLoc(),
                          ValueRange{scalars.lookup(root->getResult(0))});
  return success();
}

LogicalResult FunctionLowering::lowerDotGeneral(DotGeneralOp op, OpBuilder &b) {
  auto lhsType = cast<RankedTensorType>(op.getLhs().getType());
  if (!lhsType.getElementType().isF32())
    return op.emitError("convert-loom-to-loomrt: dot_general on ")
           << lhsType.getElementType()
           << " is not supported by the runtime (f32 only)";
  DotLayout layout = planDotLayout(op);
  // Reads an operand as planned: its buffer (or its transpose's source), or
  // a copy into the plain layout.
  auto read = [&](const OperandLayout &plan) -> Value {
    Value buffer = bufferOf(plan.source);
    if (plan.copyPerm.empty())
      return buffer;
    auto type = cast<RankedTensorType>(plan.source.getType());
    SmallVector<int64_t> shape, strides;
    SmallVector<int64_t> sourceStrides = rowMajorStrides(type.getShape());
    for (int64_t p : plan.copyPerm) {
      shape.push_back(type.getDimSize(p));
      strides.push_back(sourceStrides[p]);
    }
    auto copyType = MemRefType::get(shape, type.getElementType());
    Value copy = loomrt::AllocOp::create(b, op.getLoc(), copyType,
                                         b.getStringAttr("workspace"),
                                         IntegerAttr());
    loomrt::CopyOp::create(b, op.getLoc(), buffer, copy, shape, strides, 0,
                           rowMajorStrides(shape), 0,
                           b.getStringAttr("dot_general.layout"));
    return copy;
  };
  Value a = read(layout.lhs);
  Value bb = read(layout.rhs);
  bool transA = layout.lhs.transposed, transB = layout.rhs.transposed;
  int64_t batch = layout.batch, m = layout.m, n = layout.n, k = layout.k;
  Value c = destination(op.getResult(), b);
  buffers[op.getResult()] = c;
  loomrt::GemmOp::create(b, op.getLoc(), a, bb, c, batch, m, n, k, transA,
                         transB, /*a_batched=*/batch > 1,
                         /*b_batched=*/batch > 1, originOf(op));
  return success();
}

/// Checks that a collective runs on one axis of the device mesh @mesh (the
/// runtime has a communicator per mesh axis).
static LogicalResult checkMeshAxis(Operation *op, FlatSymbolRefAttr grid,
                                   ArrayRef<int16_t> gridAxes) {
  if (getMeshAxis(grid, gridAxes))
    return success();
  return op->emitError("convert-loom-to-loomrt: the runtime communicates "
                       "along one axis of the device mesh @")
         << kMeshGridName << " (grid_axes = [0], [1] or [2]: dp, pp, tp); this "
            "op runs on @"
         << grid.getValue() << " grid_axes = [" << llvm::join(llvm::map_range(gridAxes, [](int16_t a) { return std::to_string(a); }), ", ") << "]";
}

/// The peer (index on the one grid axis) and tag of a shard.send/recv.
static FailureOr<std::pair<int64_t, int64_t>>
pointToPoint(Operation *op, ArrayRef<int16_t> gridAxes,
             ArrayRef<int64_t> index, size_t numDynamic) {
  if (gridAxes.size() != 1 || index.size() != 1 || numDynamic != 0 ||
      ShapedType::isDynamic(index.front()))
    return op->emitError("convert-loom-to-loomrt: point-to-point transfers "
                         "need one grid axis and a static peer coordinate");
  auto tag = op->getAttrOfType<IntegerAttr>(LoomDialect::TagAttrHelper::getNameStr());
  if (!tag || tag.getInt() < 0 || tag.getInt() > 32767)
    return op->emitError("convert-loom-to-loomrt: point-to-point transfers "
                         "need a tag `loom.tag = N : i64` in [0, 32767] "
                         "(unique per direction within a step)");
  return std::make_pair(index.front(), tag.getInt());
}

void FunctionLowering::waitFor(Value value, OpBuilder &b) {
  auto it = pendingWaits.find(value);
  if (it == pendingWaits.end())
    return;
  loomrt::WaitOp::create(b, value.getLoc(), it->second);
  pendingWaits.erase(it);
}

LogicalResult FunctionLowering::lowerOp(Operation *op, OpBuilder &b) {
  Location loc = op->getLoc();
  // An all-reduce's result is complete only after its wait.
  for (Value operand : op->getOperands())
    waitFor(operand, b);
  // Elementwise members are emitted with their group's root.
  if (isElementwise(op)) {
    if (groupRoot.lookup(op) != op)
      return success();
    return lowerKernel(op, b);
  }
  auto result = [&](unsigned i = 0) { return op->getResult(i); };
  auto define = [&](unsigned i = 0) {
    Value buffer = destination(result(i), b);
    buffers[result(i)] = buffer;
    return buffer;
  };
  // A broadcast or splat constant whose every user is a kernel that reads
  // it in place needs no buffer.
  auto onlyFusedUsers = [&](Value value) {
    return !value.use_empty() &&
           llvm::all_of(value.getUsers(), [&](Operation *user) {
             return isElementwise(user) && !pendingResults.count(value);
           });
  };

  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](ConstantOp constant) -> LogicalResult {
        // A receive's operand only gives the type: no buffer.
        if (!constant->use_empty() && !pendingResults.count(result()) &&
            llvm::all_of(constant->getUsers(), [](Operation *user) {
              return isa<shard::RecvOp>(user);
            }))
          return success();
        auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
        if (dense && dense.isSplat() && onlyFusedUsers(constant.getResult()))
          return success();
        if (dense && dense.isSplat() &&
            llvm::all_of(constant->getUsers(), [&](Operation *user) {
              auto bcast = dyn_cast<BroadcastOp>(user);
              return bcast && onlyFusedUsers(bcast.getResult());
            }))
          return success();
        if (dense && dense.isSplat()) {
          // A splat becomes a fill loop, not a table of equal numbers.
          Value out = define();
          auto fill = loomrt::KernelOp::create(b, loc, ValueRange{},
                                               ValueRange{out},
                                               b.getStringAttr("fill"),
                                               ArrayAttr());
          Block *body = new Block();
          fill.getBody().push_back(body);
          OpBuilder inner = OpBuilder::atBlockEnd(body);
          Value scalar = arith::ConstantOp::create(
              inner, loc, cast<TypedAttr>(dense.getSplatValue<Attribute>()));
          loomrt::YieldOp::create(inner, loc, ValueRange{scalar});
          return success();
        }
        Value buffer = loomrt::ConstantOp::create(
            b, loc, bufferType(constant.getType()), constant.getValue());
        if (pendingResults.count(result())) {
          Value out = define();
          auto shape = cast<MemRefType>(out.getType()).getShape();
          loomrt::CopyOp::create(b, loc, buffer, out, shape,
                                 rowMajorStrides(shape), 0,
                                 rowMajorStrides(shape), 0, originOf(op));
          return success();
        }
        buffers[result()] = buffer;
        return success();
      })
      .Case([&](BroadcastOp bcast) -> LogicalResult {
        if (onlyFusedUsers(bcast.getResult()))
          return success();
        auto sourceType = cast<ShapedType>(bcast.getOperand().getType());
        auto shape = cast<ShapedType>(bcast.getType()).getShape();
        SmallVector<int64_t> sourceStrides =
            rowMajorStrides(sourceType.getShape());
        SmallVector<int64_t> strides(shape.size(), 0);
        for (auto [i, dim] : llvm::enumerate(bcast.getDims()))
          if (sourceType.getDimSize(i) != 1)
            strides[dim] = sourceStrides[i];
        Value source = bufferOf(bcast.getOperand());
        if (!source) {
          // A splat constant kept out of memory: materialise it now.
          auto constant = bcast.getOperand().getDefiningOp<ConstantOp>();
          source = loomrt::ConstantOp::create(
              b, loc, bufferType(constant.getType()), constant.getValue());
          buffers[bcast.getOperand()] = source;
        }
        loomrt::CopyOp::create(b, loc, source, define(), shape, strides, 0,
                               rowMajorStrides(shape), 0, originOf(op));
        return success();
      })
      // A reshape, and loom.tp_copy (the identity forward), view their
      // operand's buffer.
      .Case<ReshapeOp, TpCopyOp>([&](auto reshape) -> LogicalResult {
        Value source = bufferOf(reshape.getOperand());
        if (pendingResults.count(result())) {
          Value out = define();
          auto view = loomrt::ViewOp::create(b, loc, out.getType(), source);
          auto shape = cast<MemRefType>(out.getType()).getShape();
          loomrt::CopyOp::create(b, loc, view, out, shape,
                                 rowMajorStrides(shape), 0,
                                 rowMajorStrides(shape), 0, originOf(op));
          return success();
        }
        buffers[result()] = loomrt::ViewOp::create(
            b, loc, bufferType(reshape.getType()), source);
        return success();
      })
      .Case([&](TransposeOp transpose) -> LogicalResult {
        // A transpose read through strides (by one kernel) or by BLAS (by
        // gemms) needs no buffer.
        if (!pendingResults.count(result()) && isTransposeAbsorbed(transpose))
          return success();
        auto sourceType = cast<ShapedType>(transpose.getOperand().getType());
        SmallVector<int64_t> sourceStrides =
            rowMajorStrides(sourceType.getShape());
        SmallVector<int64_t> strides;
        for (int64_t p : transpose.getPermutation())
          strides.push_back(sourceStrides[p]);
        auto shape = cast<ShapedType>(transpose.getType()).getShape();
        loomrt::CopyOp::create(b, loc, bufferOf(transpose.getOperand()),
                               define(), shape, strides, 0,
                               rowMajorStrides(shape), 0, originOf(op));
        return success();
      })
      .Case([&](SliceOp slice) -> LogicalResult {
        auto sourceType = cast<ShapedType>(slice.getOperand().getType());
        SmallVector<int64_t> sourceStrides =
            rowMajorStrides(sourceType.getShape());
        SmallVector<int64_t> strides;
        int64_t offset = 0;
        for (auto [i, s] : llvm::enumerate(sourceStrides)) {
          strides.push_back(s * slice.getStrides()[i]);
          offset += s * slice.getStart()[i];
        }
        auto shape = cast<ShapedType>(slice.getType()).getShape();
        loomrt::CopyOp::create(b, loc, bufferOf(slice.getOperand()), define(),
                               shape, strides, offset, rowMajorStrides(shape),
                               0, originOf(op));
        return success();
      })
      .Case([&](ConcatOp concat) -> LogicalResult {
        Value out = define();
        auto outShape = cast<MemRefType>(out.getType()).getShape();
        SmallVector<int64_t> outStrides = rowMajorStrides(outShape);
        int64_t dim = concat.getDim();
        int64_t at = 0;
        for (Value input : concat.getInputs()) {
          auto shape = cast<ShapedType>(input.getType()).getShape();
          loomrt::CopyOp::create(b, loc, bufferOf(input), out, shape,
                                 rowMajorStrides(shape), 0, outStrides,
                                 at * outStrides[dim], originOf(op));
          at += shape[dim];
        }
        return success();
      })
      .Case([&](SplitOp split) -> LogicalResult {
        auto sourceShape = cast<ShapedType>(split.getOperand().getType()).getShape();
        SmallVector<int64_t> sourceStrides = rowMajorStrides(sourceShape);
        int64_t dim = split.getDim();
        int64_t at = 0;
        for (auto [i, value] : llvm::enumerate(split.getResults())) {
          auto shape = cast<ShapedType>(value.getType()).getShape();
          loomrt::CopyOp::create(b, loc, bufferOf(split.getOperand()), define(i),
                                 shape, sourceStrides, at * sourceStrides[dim],
                                 rowMajorStrides(shape), 0, originOf(op));
          at += shape[dim];
        }
        return success();
      })
      .Case([&](DotGeneralOp dot) { return lowerDotGeneral(dot, b); })
      .Case([&](shard::AllReduceOp allReduce) -> LogicalResult {
        // Start on a copy (the operand may be read again), wait before the
        // first use: compute between the two overlaps the transfer.
        auto type = dyn_cast<RankedTensorType>(allReduce.getType());
        if (!type || !type.getElementType().isF32() ||
            allReduce.getInput().getType() != allReduce.getType())
          return op->emitError("convert-loom-to-loomrt: the runtime all-reduces "
                               "f32 tensors of an unchanged type");
        if (failed(checkMeshAxis(op, allReduce.getGridAttr(),
                                 allReduce.getGridAxes())))
          return failure();
        StringRef reduction;
        switch (allReduce.getReduction()) {
        case shard::ReductionKind::Sum: reduction = "sum"; break;
        case shard::ReductionKind::Max: reduction = "max"; break;
        case shard::ReductionKind::Min: reduction = "min"; break;
        default:
          return op->emitError("convert-loom-to-loomrt: the runtime all-reduces "
                               "with sum, max or min");
        }
        Value out = define();
        auto shape = cast<MemRefType>(out.getType()).getShape();
        loomrt::CopyOp::create(b, loc, bufferOf(allReduce.getInput()), out,
                               shape, rowMajorStrides(shape), 0,
                               rowMajorStrides(shape), 0,
                               b.getStringAttr("all_reduce"));
        Value handle = loomrt::AllReduceStartOp::create(
            b, loc, loomrt::HandleType::get(b.getContext()), out,
            b.getStringAttr(reduction), allReduce.getGridAttr(),
            allReduce.getGridAxesAttr());
        pendingWaits[result()] = handle;
        return success();
      })
      .Case([&](shard::SendOp send) -> LogicalResult {
        // Send a copy (the operand's buffer may be overwritten before the
        // transfer completes), wait at the end of the step.
        FailureOr<std::pair<int64_t, int64_t>> peerTag =
            pointToPoint(op, send.getGridAxes(), send.getDestination(),
                         send.getDestinationDynamic().size());
        if (failed(peerTag) ||
            failed(checkMeshAxis(op, send.getGridAttr(), send.getGridAxes())))
          return failure();
        if (!send.getResult().use_empty())
          return op->emitError("convert-loom-to-loomrt: the result of "
                               "shard.send is used; the runtime's send has "
                               "no result");
        Value copy = loomrt::AllocOp::create(
            b, loc, bufferType(send.getInput().getType()),
            b.getStringAttr(categoryOf(op)), IntegerAttr());
        auto shape = cast<MemRefType>(copy.getType()).getShape();
        loomrt::CopyOp::create(b, loc, bufferOf(send.getInput()), copy, shape,
                               rowMajorStrides(shape), 0,
                               rowMajorStrides(shape), 0,
                               b.getStringAttr("send"));
        pendingSends.push_back(loomrt::SendStartOp::create(
            b, loc, loomrt::HandleType::get(b.getContext()), copy,
            send.getGridAttr(), send.getGridAxesAttr(),
            b.getI64IntegerAttr(peerTag->first),
            b.getI64IntegerAttr(peerTag->second)));
        return success();
      })
      .Case([&](shard::RecvOp recv) -> LogicalResult {
        // Receive into the result's buffer, wait before the first use.
        std::optional<ArrayRef<int64_t>> sourceIndex = recv.getSource();
        if (!sourceIndex)
          return op->emitError("convert-loom-to-loomrt: shard.recv needs a "
                               "static source");
        FailureOr<std::pair<int64_t, int64_t>> peerTag =
            pointToPoint(op, recv.getGridAxes(), *sourceIndex,
                         recv.getSourceDynamic().size());
        if (failed(peerTag) ||
            failed(checkMeshAxis(op, recv.getGridAttr(), recv.getGridAxes())))
          return failure();
        Value handle = loomrt::RecvStartOp::create(
            b, loc, loomrt::HandleType::get(b.getContext()), define(),
            recv.getGridAttr(), recv.getGridAxesAttr(),
            b.getI64IntegerAttr(peerTag->first),
            b.getI64IntegerAttr(peerTag->second));
        pendingWaits[result()] = handle;
        return success();
      })
      .Case([&](GatherOp gather) -> LogicalResult {
        loomrt::GatherOp::create(b, loc, bufferOf(gather.getData()),
                                 bufferOf(gather.getIndices()), define(),
                                 gather.getAxis(), originOf(op));
        return success();
      })
      .Case([&](ScatterAddOp scatter) -> LogicalResult {
        if (!getElementTypeOrSelf(scatter.getType()).isF32())
          return op->emitError("convert-loom-to-loomrt: scatter_add supports "
                               "f32 only");
        loomrt::ScatterAddOp::create(
            b, loc, bufferOf(scatter.getTarget()), bufferOf(scatter.getIndices()),
            bufferOf(scatter.getUpdates()), define(), scatter.getAxis(),
            originOf(op));
        return success();
      })
      .Case([&](GridIndexOp index) -> LogicalResult {
        if (failed(checkMeshAxis(op, index.getGridAttr(), index.getGridAxes())))
          return failure();
        loomrt::GridIndexOp::create(b, loc, define(), index.getGridAttr(),
                                    index.getGridAxesAttr());
        return success();
      })
      .Case([&](IotaOp iota) -> LogicalResult {
        loomrt::IotaOp::create(b, loc, define(), iota.getDim());
        return success();
      })
      .Case<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>([&](auto reduce) -> LogicalResult {
        loomrt::ReduceKind kind = isa<ReduceSumOp>(op)    ? loomrt::ReduceKind::sum
                                  : isa<ReduceMeanOp>(op) ? loomrt::ReduceKind::mean
                                                          : loomrt::ReduceKind::max;
        loomrt::ReduceOp::create(b, loc, bufferOf(reduce.getOperand()), define(),
                                 kind, reduce.getDims(), originOf(op));
        return success();
      })
      .Case<SoftmaxOp, LogSoftmaxOp>([&](auto softmax) -> LogicalResult {
        loomrt::SoftmaxOp::create(b, loc, bufferOf(softmax.getOperand()),
                                  define(), softmax.getAxis(),
                                  isa<LogSoftmaxOp>(op), originOf(op));
        return success();
      })
      .Case([&](LayerNormOp norm) -> LogicalResult {
        Value scale = norm.getScale() ? bufferOf(norm.getScale()) : Value();
        Value bias = norm.getBias() ? bufferOf(norm.getBias()) : Value();
        loomrt::LayerNormOp::create(b, loc, bufferOf(norm.getInput()), scale,
                                    bias, define(), norm.getAxis(),
                                    norm.getEpsilon(), /*rms=*/false,
                                    originOf(op));
        return success();
      })
      .Case([&](RmsNormOp norm) -> LogicalResult {
        Value scale = norm.getScale() ? bufferOf(norm.getScale()) : Value();
        loomrt::LayerNormOp::create(b, loc, bufferOf(norm.getInput()), scale,
                                    Value(), define(), norm.getAxis(),
                                    norm.getEpsilon(), /*rms=*/true,
                                    originOf(op));
        return success();
      })
      .Case([&](CrossEntropyOp ce) -> LogicalResult {
        StringRef reduction = stringifyLossReduction(ce.getReduction());
        loomrt::CrossEntropyOp::create(b, loc, bufferOf(ce.getLogits()),
                                       bufferOf(ce.getLabels()), define(),
                                       reduction, ce.getIgnoreIndexAttr(),
                                       originOf(op));
        return success();
      })
      .Default([&](Operation *) -> LogicalResult {
        return op->emitError("convert-loom-to-loomrt: no lowering for this op "
                             "yet");
      });
}

func::FuncOp FunctionLowering::run() {
  if (failed(checkTypes()))
    return nullptr;
  MLIRContext *ctx = source.getContext();
  auto returnOp = cast<func::ReturnOp>(source.getBody().front().getTerminator());

  // Signature: inputs, then one buffer per result.
  SmallVector<Type> argTypes;
  for (Type type : source.getArgumentTypes())
    argTypes.push_back(bufferType(type));
  for (Type type : source.getResultTypes())
    argTypes.push_back(bufferType(type));
  OpBuilder b(source);
  target = func::FuncOp::create(b, source.getLoc(), source.getName(),
                                FunctionType::get(ctx, argTypes, {}));
  unsigned numInputs = source.getNumArguments();
  for (unsigned i = 0; i < numInputs; ++i)
    target.setArgAttrs(i, source.getArgAttrDict(i));
  for (unsigned i = 0; i < source.getNumResults(); ++i) {
    SmallVector<NamedAttribute> attrs(source.getResultAttrs(i));
    attrs.push_back(b.getNamedAttr("loomrt.result", b.getI64IntegerAttr(i)));
    target.setArgAttrs(numInputs + i, DictionaryAttr::get(ctx, attrs));
  }
  target->setAttr("loomrt.num_inputs", b.getI64IntegerAttr(numInputs));
  for (NamedAttribute attr : source->getDiscardableAttrs())
    target->setAttr(attr.getName(), attr.getValue());

  Block *body = target.addEntryBlock();
  for (unsigned i = 0; i < numInputs; ++i)
    buffers[source.getArgument(i)] = body->getArgument(i);
  for (unsigned i = 0; i < source.getNumResults(); ++i) {
    resultBuffers.push_back(body->getArgument(numInputs + i));
    pendingResults[returnOp.getOperand(i)].push_back(i);
  }

  groupElementwise();
  OpBuilder builder = OpBuilder::atBlockEnd(body);
  for (Operation &op : source.getBody().front().without_terminator())
    if (failed(lowerOp(&op, builder)))
      return nullptr;

  // Results still in flight complete before the step returns.
  for (Value value : llvm::to_vector(returnOp.getOperands()))
    waitFor(value, builder);
  if (!pendingWaits.empty()) {
    returnOp.emitError("convert-loom-to-loomrt: an all-reduce or receive "
                       "result is never used");
    return nullptr;
  }

  // Results whose value was not written into their buffer (arguments,
  // views, constants, a value returned twice): copy.
  for (auto [value, indices] : pendingResults) {
    for (unsigned index : indices) {
      Value from = bufferOf(value);
      if (!from) {
        returnOp.emitError("convert-loom-to-loomrt: returned value #")
            << index << " has no buffer";
        return nullptr;
      }
      auto shape = cast<MemRefType>(from.getType()).getShape();
      loomrt::CopyOp::create(builder, returnOp.getLoc(), from,
                             resultBuffers[index], shape, rowMajorStrides(shape),
                             0, rowMajorStrides(shape), 0,
                             builder.getStringAttr("result"));
    }
  }
  // Sends complete before the step returns (their buffers live until here).
  for (Value handle : pendingSends)
    loomrt::WaitOp::create(builder, returnOp.getLoc(), handle);
  func::ReturnOp::create(builder, returnOp.getLoc());
  return target;
}

struct ConvertLoomToLoomRTPass
    : public mlir::loom::impl::ConvertLoomToLoomRTBase<ConvertLoomToLoomRTPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    SmallVector<func::FuncOp> chosen;
    if (!function.empty()) {
      for (const std::string &name : function) {
        auto f = module.lookupSymbol<func::FuncOp>(name);
        if (!f) {
          module.emitError("convert-loom-to-loomrt: no function named '")
              << name << "'";
          return signalPassFailure();
        }
        if (llvm::is_contained(chosen, f)) {
          module.emitError("convert-loom-to-loomrt: function '")
              << name << "' is named twice";
          return signalPassFailure();
        }
        chosen.push_back(f);
      }
    } else {
      func::FuncOp only;
      for (func::FuncOp f : funcs)
        if (names::isStepFunction(f.getName()))
          only = only ? func::FuncOp() : f;
      if (!only && funcs.size() == 1)
        only = funcs.front();
      if (!only) {
        module.emitError("convert-loom-to-loomrt: say which function to lower "
                         "with function=NAME (found ")
            << funcs.size() << " functions)";
        return signalPassFailure();
      }
      chosen.push_back(only);
    }
    for (func::FuncOp f : chosen) {
      if (f.isExternal()) {
        f.emitError("convert-loom-to-loomrt: function has no body");
        return signalPassFailure();
      }
    }
    for (func::FuncOp f : chosen) {
      FunctionLowering lowering(f);
      if (!lowering.run())
        return signalPassFailure();
    }
    for (func::FuncOp f : funcs)
      f.erase();
    // The device mesh stays: loomrt's collectives name its axes, and the
    // emitter reads the mesh from it.
  }
};

} // namespace

//===- Kernels.cpp - Generated loops and runtime-library kernels ----------===//
//
// Each fusion group of elementwise ops (see loom-fuse-elementwise) becomes
// one loomrt.kernel loop with a scalar arith/math body, at its last op;
// splat constants become fill loops; reductions
// and iota are generated loops; softmax, the norms and cross-entropy call
// the runtime library.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::loom_to_loomrt;

namespace {

//===----------------------------------------------------------------------===//
// Scalar bodies
//===----------------------------------------------------------------------===//

/// bf16 is a storage type: loops load it into f32, compute in f32 and
/// round each bf16 op's result (see lowerKernel).
Type computeType(Type element) {
  return element.isBF16() ? Float32Type::get(element.getContext()) : element;
}

/// `x` (f32) rounded to bf16 and widened back, when `element` is bf16.
Value roundToStorage(Value x, Type element, OpBuilder &b, Location loc) {
  if (!element.isBF16())
    return x;
  Value narrow = arith::TruncFOp::create(b, loc, element, x);
  return arith::ExtFOp::create(b, loc, x.getType(), narrow);
}

/// The scalar arith/math ops of one elementwise loom op on the scalars `v`
/// (one per operand, in the compute types); null when the op has none for
/// its element types.
Value scalarize(Operation *op, ArrayRef<Value> v, OpBuilder &b) {
  Location loc = op->getLoc();
  Type type = computeType(getElementTypeOrSelf(op->getResult(0).getType()));
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
  // The interpreter's method (see erfInv in ElementwiseKernels.cpp) in the
  // compute type: Winitzki's closed-form start, then two Newton steps on
  // erf(y) - |x| (enough for f32), +-inf at |x| = 1, NaN past it.
  auto erfInv = [&](Value x) -> Value {
    auto mul = [&](Value l, Value r) -> Value {
      return arith::MulFOp::create(b, loc, l, r);
    };
    auto sub = [&](Value l, Value r) -> Value {
      return arith::SubFOp::create(b, loc, l, r);
    };
    constexpr double kA = 0.147, kPi = 3.14159265358979323846;
    Value ax = math::AbsFOp::create(b, loc, x);
    Value one = floatConst(1.0);
    Value l = math::LogOp::create(
        b, loc, mul(sub(one, ax), arith::AddFOp::create(b, loc, one, ax)));
    Value t = arith::AddFOp::create(b, loc, floatConst(2.0 / (kPi * kA)),
                                    mul(floatConst(0.5), l));
    Value y = math::SqrtOp::create(
        b, loc,
        sub(math::SqrtOp::create(b, loc,
                                 sub(mul(t, t), mul(l, floatConst(1.0 / kA)))),
            t));
    for (int step = 0; step < 2; ++step) {
      Value residual = sub(math::ErfOp::create(b, loc, y), ax);
      Value inverseSlope = mul(
          floatConst(0.5 * std::sqrt(kPi)),
          math::ExpOp::create(b, loc, mul(y, y)));
      y = sub(y, mul(residual, inverseSlope));
    }
    Value isOne = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                        ax, one);
    y = arith::SelectOp::create(
        b, loc, isOne, floatConst(std::numeric_limits<double>::infinity()), y);
    Value negative = arith::CmpFOp::create(
        b, loc, arith::CmpFPredicate::OLT, x, floatConst(0.0));
    return arith::SelectOp::create(b, loc, negative,
                                   arith::NegFOp::create(b, loc, y), y);
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
      .Case([&](CosOp) -> Value { return math::CosOp::create(b, loc, v[0]); })
      .Case([&](SinOp) -> Value { return math::SinOp::create(b, loc, v[0]); })
      .Case([&](SigmoidOp) -> Value { return sigmoid(v[0]); })
      .Case([&](ErfOp) -> Value { return math::ErfOp::create(b, loc, v[0]); })
      .Case([&](ErfInvOp) -> Value { return erfInv(v[0]); })
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
        if (gelu.getApproximate() == GeluApproximation::tanh) {
          // 0.5 x (1 + tanh(z / 2)) = x sigmoid(z), z = 2 sqrt(2/pi)
          // (x + 0.044715 x^3): one exp and a division where tanh takes
          // both (a 30% faster loop), and no cancellation in 1 + tanh for
          // negative x.
          Value x3 = arith::MulFOp::create(
              b, loc, x, arith::MulFOp::create(b, loc, x, x));
          Value t = arith::AddFOp::create(
              b, loc, x, arith::MulFOp::create(b, loc, floatConst(0.044715), x3));
          Value z = arith::MulFOp::create(
              b, loc, floatConst(2 * 0.7978845608028654), t);
          return arith::MulFOp::create(b, loc, x, sigmoid(z));
        }
        // 0.5 x (1 + erf(x / sqrt(2)))
        Value inner = math::ErfOp::create(
            b, loc,
            arith::MulFOp::create(b, loc, x, floatConst(0.7071067811865476)));
        Value onePlus = arith::AddFOp::create(b, loc, floatConst(1.0), inner);
        return arith::MulFOp::create(
            b, loc, arith::MulFOp::create(b, loc, floatConst(0.5), x), onePlus);
      })
      .Case([&](GeluGradOp grad) -> Value {
        Value x = v[0], dy = v[1];
        auto mul = [&](Value l, Value r) -> Value {
          return arith::MulFOp::create(b, loc, l, r);
        };
        auto add = [&](Value l, Value r) -> Value {
          return arith::AddFOp::create(b, loc, l, r);
        };
        Value one = floatConst(1.0);
        Value x2 = mul(x, x);
        Value derivative;
        if (grad.getApproximate() == GeluApproximation::tanh) {
          // The derivative of x s, s = sigmoid(z) (loom.gelu's form),
          // z = 2k (x + c x^3), k = sqrt(2/pi), c = 0.044715:
          // s (1 + x (1 - s) z'), z' = 2k (1 + 3c x^2). (With t = tanh(z/2),
          // (1 + t) / 2 + x (1 - t^2) k (1 + 3c x^2) / 2.)
          Value k2 = floatConst(2 * 0.7978845608028654);
          Value s = sigmoid(
              mul(k2, add(x, mul(floatConst(0.044715), mul(x, x2)))));
          Value dz = mul(k2, add(one, mul(floatConst(3 * 0.044715), x2)));
          Value oneMinusS = arith::SubFOp::create(b, loc, one, s);
          derivative = mul(s, add(one, mul(mul(x, oneMinusS), dz)));
        } else {
          // Phi(x) + x phi(x) = (1 + erf(x / sqrt 2)) / 2
          //                     + x exp(-x^2 / 2) / sqrt(2 pi)
          Value erf = math::ErfOp::create(
              b, loc, mul(x, floatConst(0.7071067811865476)));
          Value pdf = mul(math::ExpOp::create(b, loc, mul(floatConst(-0.5), x2)),
                          floatConst(0.3989422804014327));
          derivative = add(mul(floatConst(0.5), add(one, erf)), mul(x, pdf));
        }
        return mul(dy, derivative);
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
        if (fromFloat && isFloat) // f32 <-> bf16 (f16 fails checkTypes)
          return from.getIntOrFloatBitWidth() < type.getIntOrFloatBitWidth()
                     ? Value(arith::ExtFOp::create(b, loc, type, v[0]))
                     : Value(arith::TruncFOp::create(b, loc, type, v[0]));
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

/// Whether `op` has a scalar body: it is built once, into a block that is
/// thrown away, so that the check and the lowering cannot disagree.
LogicalResult checkScalarLowering(Operation *op) {
  Block scratch;
  OpBuilder b(op->getContext());
  b.setInsertionPointToEnd(&scratch);
  SmallVector<Value> scalars;
  for (Value operand : op->getOperands())
    scalars.push_back(scratch.addArgument(
        computeType(getElementTypeOrSelf(operand.getType())), op->getLoc()));
  if (scalarize(op, scalars, b))
    return success();
  return op->emitError("convert-loom-to-loomrt: no scalar lowering for this "
                       "op with element type ")
         << getElementTypeOrSelf(op->getResult(0).getType());
}

//===----------------------------------------------------------------------===//
// Fused loops
//===----------------------------------------------------------------------===//

/// How a fused kernel reads one of its external inputs.
struct KernelInput {
  Value buffer;
  /// Strides per loop dimension; empty for a dense read of the loop shape.
  SmallVector<int64_t> strides;
};

/// What a fusion group reads: its external inputs (deduplicated by
/// value, in first-use order: the body must not depend on pointer values)
/// and its splat constants, read as scalars.
struct GroupInputs {
  SmallVector<KernelInput> inputs;
  llvm::MapVector<Value, unsigned> inputIndex; // loom value -> inputs index
  llvm::MapVector<Value, Attribute> splats;
};

/// The inputs of `members` (a fusion group in program order) over
/// `loopShape`: splat constants (possibly broadcast) as scalars, strided
/// reads for broadcasts and single-use transposes, the rest dense.
FailureOr<GroupInputs> collectInputs(ArrayRef<Operation *> members,
                                     ArrayRef<int64_t> loopShape,
                                     ConversionPatternRewriter &rewriter,
                                     LoweringState &state) {
  GroupInputs group;
  auto &[inputs, inputIndex, splats] = group;
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
            computeStrides(sourceType.getShape());
        input.strides.assign(loopShape.size(), 0);
        for (auto [i, dim] : llvm::enumerate(bcast.getDims()))
          if (sourceType.getDimSize(i) != 1)
            input.strides[dim] = sourceStrides[i];
        input.buffer = rewriter.getRemappedValue(bcast.getOperand());
      } else if (auto transpose = dyn_cast_or_null<TransposeOp>(def);
                 transpose && state.isBufferless(transpose)) {
        // Its one use is this kernel's.
        auto sourceType = cast<ShapedType>(transpose.getOperand().getType());
        SmallVector<int64_t> sourceStrides =
            computeStrides(sourceType.getShape());
        input.strides.assign(loopShape.size(), 0);
        for (auto [i, p] : llvm::enumerate(transpose.getPermutation()))
          input.strides[i] = sourceStrides[p];
        input.buffer = rewriter.getRemappedValue(transpose.getOperand());
      } else {
        input.buffer = rewriter.getRemappedValue(operand);
      }
      if (!input.buffer)
        return rewriter.notifyMatchFailure(member, "an operand has no buffer");
      inputIndex[operand] = inputs.size();
      inputs.push_back(std::move(input));
    }
  }
  return group;
}

/// Builds, at the end of `body` (one argument per input of `group`), the
/// scalar computation of `members` and yields the root's (the last
/// member's) value: bf16 inputs are widened once, each bf16 member's
/// result is rounded to bf16 (and computed in f32); the root's is narrowed
/// to `yieldType` when that is bf16 and, when `roundRoot`, first rounded
/// to its own storage type as a stored value would be.
void buildGroupBody(Block *body, ArrayRef<Operation *> members,
                    const GroupInputs &group, Type yieldType, bool roundRoot,
                    ConversionPatternRewriter &rewriter) {
  Operation *root = members.back();
  Location loc = root->getLoc();
  DenseMap<Value, Value> scalars;
  Type f32 = rewriter.getF32Type();
  for (auto [value, index] : group.inputIndex) {
    Value arg = body->getArgument(index);
    scalars[value] = arg.getType().isBF16()
                         ? Value(arith::ExtFOp::create(rewriter, loc, f32, arg))
                         : arg;
  }
  for (auto [value, attr] : group.splats) {
    auto typed = cast<TypedAttr>(attr);
    if (auto f = dyn_cast<FloatAttr>(attr); f && f.getType().isBF16())
      typed = rewriter.getF32FloatAttr(f.getValueAsDouble());
    scalars[value] = arith::ConstantOp::create(rewriter, loc, typed);
  }
  for (Operation *member : members) {
    SmallVector<Value> operands;
    for (Value operand : member->getOperands())
      operands.push_back(scalars.lookup(operand));
    // Checked before the conversion (checkScalarLowering).
    Value scalar = scalarize(member, operands, rewriter);
    scalars[member->getResult(0)] =
        member == root && !roundRoot
            ? scalar // rounded by the store
            : roundToStorage(scalar,
                             getElementTypeOrSelf(
                                 member->getResult(0).getType()),
                             rewriter, loc);
  }
  Value yielded = scalars.lookup(root->getResult(0));
  if (yieldType.isBF16() && !yielded.getType().isBF16())
    yielded = arith::TruncFOp::create(rewriter, loc, yieldType, yielded);
  loomrt::YieldOp::create(rewriter, loc, ValueRange{yielded});
}

/// The element types of `group`'s inputs: its body's arguments.
SmallVector<Type> argumentTypes(const GroupInputs &group) {
  SmallVector<Type> types;
  for (const KernelInput &input : group.inputs)
    types.push_back(cast<MemRefType>(input.buffer.getType()).getElementType());
  return types;
}

/// The members' names joined by '+': the kernel's origin.
std::string groupName(ArrayRef<Operation *> members) {
  SmallVector<std::string> names;
  for (Operation *member : members)
    names.push_back(member->getName().stripDialect().str());
  return llvm::join(names, "+");
}

/// One loomrt.kernel computing `members` (elementwise ops in program order,
/// the last one, `root`, giving the loop shape) and writing `result` (the
/// value the group produces); returns the buffer written.
FailureOr<Value> lowerKernel(ArrayRef<Operation *> members, Value result,
                             ConversionPatternRewriter &rewriter,
                             LoweringState &state) {
  Operation *root = members.back();
  ArrayRef<int64_t> loopShape =
      cast<ShapedType>(root->getResult(0).getType()).getShape();
  MLIRContext *ctx = root->getContext();
  FailureOr<GroupInputs> group =
      collectInputs(members, loopShape, rewriter, state);
  if (failed(group))
    return failure();

  Value out = state.destination(result, root, rewriter);

  SmallVector<Value> inBuffers;
  bool anyStrided = false;
  for (const KernelInput &input : group->inputs) {
    inBuffers.push_back(input.buffer);
    anyStrided |= !input.strides.empty();
  }
  ArrayAttr inStrides;
  if (anyStrided) {
    SmallVector<int64_t> dense = computeStrides(loopShape);
    SmallVector<Attribute> strideAttrs;
    for (const KernelInput &input : group->inputs)
      strideAttrs.push_back(DenseI64ArrayAttr::get(
          ctx, input.strides.empty() ? ArrayRef<int64_t>(dense)
                                     : ArrayRef<int64_t>(input.strides)));
    inStrides = ArrayAttr::get(ctx, strideAttrs);
  }
  Location loc = root->getLoc();
  auto kernel = loomrt::KernelOp::create(
      rewriter, loc, inBuffers, ValueRange{out},
      rewriter.getStringAttr(groupName(members)), inStrides,
      DenseI64ArrayAttr());

  OpBuilder::InsertionGuard guard(rewriter);
  SmallVector<Type> argTypes = argumentTypes(*group);
  Block *body = rewriter.createBlock(&kernel.getBody(), {}, argTypes,
                                     SmallVector<Location>(argTypes.size(), loc));
  buildGroupBody(body, members, *group,
                 cast<MemRefType>(out.getType()).getElementType(),
                 /*roundRoot=*/false, rewriter);
  return out;
}

/// The fusion group whose root (last op) is `root`: `root` and the ops
/// marked loom.fused that feed it, directly or through other members, each
/// once (a member may feed several others), in program order.
SmallVector<Operation *> groupOf(Operation *root) {
  llvm::SetVector<Operation *> members;
  members.insert(root);
  for (size_t i = 0; i < members.size(); ++i)
    for (Value operand : members[i]->getOperands())
      if (Operation *producer = operand.getDefiningOp();
          producer && isFusedIntoUser(producer))
        members.insert(producer);
  SmallVector<Operation *> ordered = members.takeVector();
  llvm::sort(ordered, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  return ordered;
}

/// An elementwise op: computed inside its user's loop when marked
/// loom.fused (it emits nothing, but what it reads must be complete here),
/// else the root of a group, one kernel.
class ElementwisePattern : public ConversionPattern {
public:
  ElementwisePattern(const TypeConverter &converter, MLIRContext *context,
                     LoweringState &state)
      : ConversionPattern(
            converter, MatchTraitOpTypeTag(),
            TypeID::get<::mlir::loom::OpTrait::ElementwiseMapping>(),
            /*benefit=*/1, context),
        state(state) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value>,
                  ConversionPatternRewriter &rewriter) const override {
    state.waitForOperands(op, rewriter);
    if (isFusedIntoUser(op)) {
      rewriter.eraseOp(op);
      return success();
    }
    FailureOr<Value> out =
        lowerKernel(groupOf(op), op->getResult(0), rewriter, state);
    if (failed(out))
      return failure();
    rewriter.replaceOp(op, *out);
    return success();
  }

private:
  LoweringState &state;
};

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

class ConstantPattern : public LoweringPattern<ConstantOp> {
public:
  using LoweringPattern::LoweringPattern;

  LogicalResult lower(ConstantOp constant, OpAdaptor,
                      ConversionPatternRewriter &rewriter) const override {
    if (state.isBufferless(constant)) {
      rewriter.eraseOp(constant);
      return success();
    }
    Location loc = constant.getLoc();
    Value result = constant.getResult();
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (dense && dense.isSplat()) {
      // A splat becomes a fill loop, not a table of equal numbers.
      Value out = define(result, rewriter);
      auto fill = loomrt::KernelOp::create(rewriter, loc, ValueRange{},
                                           ValueRange{out},
                                           rewriter.getStringAttr("fill"),
                                           ArrayAttr(), DenseI64ArrayAttr());
      {
        OpBuilder::InsertionGuard guard(rewriter);
        rewriter.createBlock(&fill.getBody());
        Value scalar = arith::ConstantOp::create(
            rewriter, loc, cast<TypedAttr>(dense.getSplatValue<Attribute>()));
        loomrt::YieldOp::create(rewriter, loc, ValueRange{scalar});
      }
      rewriter.replaceOp(constant, out);
      return success();
    }
    Value buffer = loomrt::ConstantOp::create(
        rewriter, loc, bufferType(constant.getType()), constant.getValue());
    if (state.isReturned(result)) {
      Value out = define(result, rewriter);
      createDenseCopy(rewriter, loc, buffer, out, originOf(constant));
      buffer = out;
    }
    rewriter.replaceOp(constant, buffer);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Generated loops and library calls
//===----------------------------------------------------------------------===//

class IotaPattern : public LoweringPattern<IotaOp> {
public:
  using LoweringPattern::LoweringPattern;

  LogicalResult lower(IotaOp iota, OpAdaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Value out = define(iota.getResult(), rewriter);
    loomrt::IotaOp::create(rewriter, iota.getLoc(), out, iota.getDim());
    rewriter.replaceOp(iota, out);
    return success();
  }
};

template <typename ReduceOp, loomrt::ReduceKind kind>
class ReducePattern : public LoweringPattern<ReduceOp> {
public:
  using LoweringPattern<ReduceOp>::LoweringPattern;
  using typename LoweringPattern<ReduceOp>::OpAdaptor;

  LogicalResult lower(ReduceOp reduce, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Operation *producer = reduce.getOperand().getDefiningOp();
    if (producer && isFusedIntoUser(producer))
      return lowerFused(reduce, groupOf(producer), rewriter);
    Value out = this->define(reduce.getResult(), rewriter);
    loomrt::ReduceOp::create(rewriter, reduce.getLoc(), adaptor.getOperand(),
                             out, kind, reduce.getDims(), originOf(reduce));
    rewriter.replaceOp(reduce, out);
    return success();
  }

private:
  /// The reduction of the value `members` (the elementwise group fused
  /// into it, loom-fuse-elementwise) compute: one loomrt.reduce whose body
  /// computes each element from the group's inputs, all read at the
  /// reduced tensor's index (the fusion pass admits no strided input).
  LogicalResult lowerFused(ReduceOp reduce, ArrayRef<Operation *> members,
                           ConversionPatternRewriter &rewriter) const {
    ArrayRef<int64_t> loopShape =
        cast<ShapedType>(reduce.getOperand().getType()).getShape();
    FailureOr<GroupInputs> group =
        collectInputs(members, loopShape, rewriter, this->state);
    if (failed(group))
      return failure();
    SmallVector<Value> ins;
    for (const KernelInput &input : group->inputs) {
      if (!input.strides.empty())
        return reduce.emitOpError(
            "convert-loom-to-loomrt: an input of the elementwise ops fused "
            "into this reduction is read through strides; rerun "
            "loom-fuse-elementwise on the unmarked program");
      ins.push_back(input.buffer);
    }
    Value out = this->define(reduce.getResult(), rewriter);
    Location loc = reduce.getLoc();
    auto fused = loomrt::ReduceOp::create(
        rewriter, loc, ins, out, kind, reduce.getDims(),
        rewriter.getStringAttr(groupName(members) + "+" +
                               originOf(reduce).getValue()));
    {
      OpBuilder::InsertionGuard guard(rewriter);
      SmallVector<Type> argTypes = argumentTypes(*group);
      Block *body =
          rewriter.createBlock(&fused.getBody(), {}, argTypes,
                               SmallVector<Location>(argTypes.size(), loc));
      buildGroupBody(body, members, *group,
                     cast<MemRefType>(out.getType()).getElementType(),
                     /*roundRoot=*/true, rewriter);
    }
    rewriter.replaceOp(reduce, out);
    return success();
  }
};

template <typename Softmax, bool isLog>
class SoftmaxPattern : public LoweringPattern<Softmax> {
public:
  using LoweringPattern<Softmax>::LoweringPattern;
  using typename LoweringPattern<Softmax>::OpAdaptor;

  LogicalResult lower(Softmax softmax, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Value out = this->define(softmax.getResult(), rewriter);
    loomrt::SoftmaxOp::create(rewriter, softmax.getLoc(), adaptor.getOperand(),
                              out, softmax.getAxis(), isLog,
                              originOf(softmax));
    rewriter.replaceOp(softmax, out);
    return success();
  }
};

class LayerNormPattern : public LoweringPattern<LayerNormOp> {
public:
  using LoweringPattern::LoweringPattern;

  LogicalResult lower(LayerNormOp norm, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Value out = define(norm.getResult(), rewriter);
    loomrt::LayerNormOp::create(
        rewriter, norm.getLoc(), adaptor.getInput(),
        norm.getScale() ? adaptor.getScale() : Value(),
        norm.getBias() ? adaptor.getBias() : Value(), out, norm.getAxis(),
        norm.getEpsilon(), /*rms=*/false, originOf(norm));
    rewriter.replaceOp(norm, out);
    return success();
  }
};

class RmsNormPattern : public LoweringPattern<RmsNormOp> {
public:
  using LoweringPattern::LoweringPattern;

  LogicalResult lower(RmsNormOp norm, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Value out = define(norm.getResult(), rewriter);
    loomrt::LayerNormOp::create(
        rewriter, norm.getLoc(), adaptor.getInput(),
        norm.getScale() ? adaptor.getScale() : Value(), Value(), out,
        norm.getAxis(), norm.getEpsilon(), /*rms=*/true, originOf(norm));
    rewriter.replaceOp(norm, out);
    return success();
  }
};

class NormGradPattern : public LoweringPattern<NormGradOp> {
public:
  using LoweringPattern::LoweringPattern;

  LogicalResult lower(NormGradOp grad, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    SmallVector<Value, 3> outs;
    for (Value result : grad->getResults())
      outs.push_back(define(result, rewriter));
    loomrt::NormGradOp::create(
        rewriter, grad.getLoc(), adaptor.getInput(), adaptor.getCotangent(),
        grad.getScale() ? adaptor.getScale() : Value(), /*residual=*/Value(),
        outs[0], outs[1],
        outs[2], grad.getAxis(), grad.getEpsilon(), grad.getRms(),
        originOf(grad));
    rewriter.replaceOp(grad, outs);
    return success();
  }
};

class CrossEntropyPattern : public LoweringPattern<CrossEntropyOp> {
public:
  using LoweringPattern::LoweringPattern;

  LogicalResult lower(CrossEntropyOp ce, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Value out = define(ce.getResult(), rewriter);
    loomrt::CrossEntropyOp::create(
        rewriter, ce.getLoc(), adaptor.getLogits(), adaptor.getLabels(), out,
        /*probs=*/Value(), stringifyLossReduction(ce.getReduction()),
        ce.getIgnoreIndexAttr(),
        originOf(ce));
    rewriter.replaceOp(ce, out);
    return success();
  }
};

} // namespace

bool loom_to_loomrt::isBufferlessConstant(ConstantOp constant,
                                          const LoweringState &state) {
  Value result = constant.getResult();
  // A receive's operand only gives the type.
  if (!constant->use_empty() && !state.isReturned(result) &&
      llvm::all_of(constant->getUsers(),
                   [](Operation *user) { return isa<shard::RecvOp>(user); }))
    return true;
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat())
    return false;
  // Kernels read a splat as a scalar, directly or through broadcasts.
  if (hasOnlyKernelUsers(result, state))
    return true;
  return llvm::all_of(constant->getUsers(), [&](Operation *user) {
    auto bcast = dyn_cast<BroadcastOp>(user);
    return bcast && hasOnlyKernelUsers(bcast.getResult(), state);
  });
}

LogicalResult loom_to_loomrt::checkKernelOp(Operation *op) {
  if (isElementwise(op))
    return checkScalarLowering(op);
  if (auto grad = dyn_cast<NormGradOp>(op);
      grad && !grad.getInput().getType().getElementType().isF32())
    return grad.emitOpError(
        "convert-loom-to-loomrt: the runtime's norm_grad takes f32 tensors; "
        "the reverse-mode rules of norms of other types write the "
        "derivative out");
  return success();
}

void loom_to_loomrt::populateKernelPatterns(const TypeConverter &converter,
                                            RewritePatternSet &patterns,
                                            LoweringState &state) {
  patterns.add<ElementwisePattern, ConstantPattern, IotaPattern,
               ReducePattern<ReduceSumOp, loomrt::ReduceKind::sum>,
               ReducePattern<ReduceMeanOp, loomrt::ReduceKind::mean>,
               ReducePattern<ReduceMaxOp, loomrt::ReduceKind::max>,
               SoftmaxPattern<SoftmaxOp, false>,
               SoftmaxPattern<LogSoftmaxOp, true>, LayerNormPattern,
               RmsNormPattern, NormGradPattern, CrossEntropyPattern>(
      converter, patterns.getContext(), state);
}

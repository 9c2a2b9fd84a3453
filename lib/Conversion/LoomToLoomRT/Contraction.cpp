//===- Contraction.cpp - dot_general as a BLAS gemm -----------------------===//
//
// A dot_general is one batched gemm over (batch, free, contracting)
// dimensions. BLAS transposes an operand for free, so an operand laid out
// with its contracting dimensions first, or a transpose feeding the
// dot_general, is read in place; so is a layout whose batch dimensions
// have strides of their own and whose free and contracting dimensions each
// read as one (attention's heads: the strided form of loomrt.gemm); any
// other layout is copied first.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"

#include <optional>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::loom_to_loomrt;

namespace {

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

/// The strides of `value`'s dimensions in the buffer a gemm reads for it:
/// its own (dense), or through one transpose its source's, permuted.
std::pair<Value, SmallVector<int64_t>> accessOf(Value value) {
  if (auto transpose = value.getDefiningOp<TransposeOp>()) {
    auto sourceType = cast<RankedTensorType>(transpose.getOperand().getType());
    SmallVector<int64_t> source = computeStrides(sourceType.getShape());
    SmallVector<int64_t> strides;
    for (int64_t p : transpose.getPermutation())
      strides.push_back(source[p]);
    return {transpose.getOperand(), strides};
  }
  auto type = cast<RankedTensorType>(value.getType());
  return {value, computeStrides(type.getShape())};
}

/// The stride of `dims` (outermost first) read as one dimension, when their
/// strides nest (size-1 dimensions do not count); 1 for no dimension of
/// size > 1.
std::optional<int64_t> collapse(ArrayRef<int64_t> shape,
                                ArrayRef<int64_t> strides,
                                ArrayRef<int64_t> dims) {
  int64_t stride = -1, span = 1;
  for (int64_t d : llvm::reverse(dims)) {
    if (shape[d] == 1)
      continue;
    if (stride < 0) {
      stride = strides[d];
      span = shape[d];
      continue;
    }
    if (strides[d] != stride * span)
      return std::nullopt;
    span *= shape[d];
  }
  return stride < 0 ? 1 : stride;
}

/// `value` read in place as matrices of `rows` x `cols` (or transposed),
/// one per index of the `batch` dimensions, when strides allow it.
std::optional<OperandLayout> planStrided(Value value, ArrayRef<int64_t> batch,
                                         ArrayRef<int64_t> rows,
                                         ArrayRef<int64_t> cols) {
  auto [source, strides] = accessOf(value);
  ArrayRef<int64_t> shape = cast<RankedTensorType>(value.getType()).getShape();
  int64_t r = 1, c = 1;
  for (int64_t d : rows)
    r *= shape[d];
  for (int64_t d : cols)
    c *= shape[d];
  std::optional<int64_t> rowStride = collapse(shape, strides, rows);
  std::optional<int64_t> colStride = collapse(shape, strides, cols);
  if (!rowStride || !colStride)
    return std::nullopt;
  OperandLayout layout;
  layout.source = source;
  layout.strided = true;
  if ((*colStride == 1 || c == 1) && (r == 1 || *rowStride >= c)) {
    layout.ld = r == 1 ? std::max<int64_t>(c, 1) : *rowStride;
  } else if ((*rowStride == 1 || r == 1) && (c == 1 || *colStride >= r)) {
    layout.transposed = true;
    layout.ld = c == 1 ? std::max<int64_t>(r, 1) : *colStride;
  } else {
    return std::nullopt;
  }
  for (int64_t d : batch)
    layout.batchStrides.push_back(shape[d] == 1 ? 0 : strides[d]);
  return layout;
}

/// The dimensions of a rank-`rank` operand that are neither batch nor
/// contracting, in order.
SmallVector<int64_t> freeDims(int64_t rank, ArrayRef<int64_t> batch,
                              ArrayRef<int64_t> contracting) {
  SmallVector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(batch, d) && !llvm::is_contained(contracting, d))
      free.push_back(d);
  return free;
}

SmallVector<int64_t> concat(std::initializer_list<ArrayRef<int64_t>> parts) {
  SmallVector<int64_t> all;
  for (ArrayRef<int64_t> part : parts)
    all.append(part.begin(), part.end());
  return all;
}

/// The number of elements of `type` over `dims`.
int64_t sizeOf(RankedTensorType type, ArrayRef<int64_t> dims) {
  SmallVector<int64_t> sizes;
  for (int64_t d : dims)
    sizes.push_back(type.getDimSize(d));
  return computeProduct(sizes);
}

class DotGeneralPattern : public LoweringPattern<DotGeneralOp> {
public:
  using LoweringPattern::LoweringPattern;

  LogicalResult lower(DotGeneralOp op, OpAdaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    DotLayout layout = planDotLayout(op);
    // Reads an operand as planned: its buffer (or its transpose's source),
    // or a copy into the plain layout.
    auto read = [&](const OperandLayout &plan) -> Value {
      Value buffer = rewriter.getRemappedValue(plan.source);
      if (plan.copyPerm.empty())
        return buffer;
      auto type = cast<RankedTensorType>(plan.source.getType());
      SmallVector<int64_t> shape, strides;
      SmallVector<int64_t> sourceStrides = computeStrides(type.getShape());
      for (int64_t p : plan.copyPerm) {
        shape.push_back(type.getDimSize(p));
        strides.push_back(sourceStrides[p]);
      }
      auto copyType = MemRefType::get(shape, type.getElementType());
      Value copy = loomrt::AllocOp::create(rewriter, loc, copyType,
                                           rewriter.getStringAttr("workspace"),
                                           IntegerAttr());
      loomrt::CopyOp::create(rewriter, loc, buffer, copy, shape, strides, 0,
                             computeStrides(shape), 0,
                             rewriter.getStringAttr("dot_general.layout"));
      return copy;
    };
    Value a = read(layout.lhs);
    Value b = read(layout.rhs);
    Value c = define(op.getResult(), rewriter);
    bool batched = layout.batch > 1;
    auto gemm = loomrt::GemmOp::create(
        rewriter, loc, a, b, c, layout.batch, layout.m, layout.n, layout.k,
        layout.lhs.transposed, layout.rhs.transposed, /*a_batched=*/batched,
        /*b_batched=*/batched, originOf(op), /*batch_outer=*/nullptr,
        /*a_strides=*/nullptr, /*b_strides=*/nullptr, /*bias=*/Value(),
        /*gelu_input=*/Value(), /*dgelu_input=*/Value());
    if (layout.strided) {
      auto strides = [&](const OperandLayout &plan) {
        return rewriter.getDenseI64ArrayAttr(
            {plan.batchStrides[0], plan.batchStrides[1], plan.ld});
      };
      gemm.setBatchOuterAttr(rewriter.getI64IntegerAttr(layout.batchOuter));
      gemm.setAStridesAttr(strides(layout.lhs));
      gemm.setBStridesAttr(strides(layout.rhs));
    }
    rewriter.replaceOp(op, c);
    return success();
  }
};

} // namespace

DotLayout loom_to_loomrt::planDotLayout(DotGeneralOp op) {
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
  SmallVector<int64_t> lhsFree =
      freeDims(lhsType.getRank(), lhsBatch, lhsContract);
  SmallVector<int64_t> rhsFree =
      freeDims(rhsType.getRank(), rhsBatch, rhsContract);
  DotLayout layout;
  layout.lhs = planOperand(op.getLhs(), concat({lhsBatch, lhsFree, lhsContract}),
                           concat({lhsBatch, lhsContract, lhsFree}));
  layout.rhs = planOperand(op.getRhs(), concat({rhsBatch, rhsContract, rhsFree}),
                           concat({rhsBatch, rhsFree, rhsContract}));
  layout.batch = sizeOf(lhsType, lhsBatch);
  layout.m = sizeOf(lhsType, lhsFree);
  layout.k = sizeOf(lhsType, lhsContract);
  layout.n = sizeOf(rhsType, rhsFree);
  // Whether the plan copies the operand: into the plain layout, or by
  // materialising the transpose that defines it.
  auto copies = [](const OperandLayout &plan, Value operand) {
    return !plan.copyPerm.empty() ||
           (operand.getDefiningOp<TransposeOp>() && plan.source == operand);
  };
  if (!copies(layout.lhs, op.getLhs()) && !copies(layout.rhs, op.getRhs()))
    return layout;

  // A layout BLAS cannot read as one dense batch: read both operands in
  // place through strides if they allow it, else copy (as planned above).
  std::optional<OperandLayout> lhs =
      planStrided(op.getLhs(), lhsBatch, lhsFree, lhsContract);
  std::optional<OperandLayout> rhs =
      planStrided(op.getRhs(), rhsBatch, rhsContract, rhsFree);
  if (!lhs || !rhs)
    return layout;
  // The batch dimensions as at most two levels (outer, inner): size-1
  // dimensions dropped, neighbours merged where both operands' strides nest
  // (the result is dense, so its strides always do).
  struct Level {
    int64_t size, lhsStride, rhsStride;
  };
  SmallVector<Level> levels;
  for (auto [i, d] : llvm::enumerate(lhsBatch)) {
    int64_t size = lhsType.getDimSize(d);
    if (size == 1)
      continue;
    Level next{size, lhs->batchStrides[i], rhs->batchStrides[i]};
    if (!levels.empty() &&
        levels.back().lhsStride == next.lhsStride * next.size &&
        levels.back().rhsStride == next.rhsStride * next.size) {
      levels.back() = {levels.back().size * next.size, next.lhsStride,
                       next.rhsStride};
      continue;
    }
    levels.push_back(next);
  }
  if (levels.size() > 2)
    return layout;
  while (levels.size() < 2)
    levels.insert(levels.begin(), Level{1, 0, 0});
  lhs->batchStrides = {levels[0].lhsStride, levels[1].lhsStride};
  rhs->batchStrides = {levels[0].rhsStride, levels[1].rhsStride};
  layout.lhs = *lhs;
  layout.rhs = *rhs;
  layout.strided = true;
  layout.batchOuter = levels[0].size;
  return layout;
}

bool loom_to_loomrt::isTransposeAbsorbed(TransposeOp transpose) {
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

LogicalResult loom_to_loomrt::checkContractionOp(Operation *op) {
  auto dot = dyn_cast<DotGeneralOp>(op);
  if (!dot)
    return success();
  auto lhsType = cast<RankedTensorType>(dot.getLhs().getType());
  Type element = lhsType.getElementType();
  if (!element.isF32() && !element.isBF16())
    return dot.emitError("convert-loom-to-loomrt: dot_general on ")
           << element << " is not supported by the runtime (f32 or bf16)";
  if (getElementTypeOrSelf(dot.getRhs().getType()) != element ||
      getElementTypeOrSelf(dot.getType()) != element)
    return dot.emitError("convert-loom-to-loomrt: dot_general needs one "
                         "element type for its operands and result (the "
                         "runtime's gemm), got ")
           << dot.getLhs().getType() << ", " << dot.getRhs().getType()
           << " -> " << dot.getType();
  return success();
}

void loom_to_loomrt::populateContractionPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns,
    LoweringState &state) {
  patterns.add<DotGeneralPattern>(converter, patterns.getContext(), state);
}

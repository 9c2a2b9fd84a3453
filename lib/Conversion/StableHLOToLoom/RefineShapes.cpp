//===- RefineShapes.cpp - Static shapes for polymorphic StableHLO ---------===//
//
// Implements -refine-stablehlo-shapes (see Passes.td for the contract).
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "loom/Conversion/StableHLOToLoom/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_REFINESTABLEHLOSHAPES
#include "loom/Conversion/StableHLOToLoom/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::shlo_to_loom;

namespace {

constexpr llvm::StringLiteral kPass = "refine-stablehlo-shapes";

bool isDynamic(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  return ranked && !ranked.hasStaticShape();
}

bool anyDynamic(TypeRange types) { return llvm::any_of(types, isDynamic); }

/// The shape of an elementwise op's result: its operands' (0-d operands,
/// a select's predicate or a clamp's bounds, broadcast).
std::optional<SmallVector<int64_t>> elementwiseShape(Operation *op) {
  std::optional<SmallVector<int64_t>> shape;
  for (Value operand : op->getOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (!type || type.getRank() == 0)
      continue;
    if (!type.hasStaticShape())
      return std::nullopt;
    if (shape && ArrayRef<int64_t>(*shape) != type.getShape())
      return std::nullopt;
    shape = SmallVector<int64_t>(type.getShape());
  }
  return shape ? shape : SmallVector<int64_t>();
}

bool isElementwise(Operation *op) {
  return isa<shlo::AbsOp, shlo::NegOp, shlo::ExpOp, shlo::Expm1Op,
             shlo::LogOp, shlo::Log1pOp, shlo::TanhOp, shlo::SineOp,
             shlo::CosineOp, shlo::LogisticOp, shlo::SqrtOp, shlo::RsqrtOp,
             shlo::NotOp, shlo::SignOp, shlo::ConvertOp, shlo::AddOp,
             shlo::SubtractOp, shlo::MulOp, shlo::DivOp, shlo::PowOp,
             shlo::MaxOp, shlo::MinOp, shlo::AndOp, shlo::OrOp, shlo::XorOp,
             shlo::IsFiniteOp, shlo::CompareOp, shlo::SelectOp,
             shlo::ClampOp, shlo::ReducePrecisionOp, shlo::chlo::ErfOp,
             shlo::chlo::ErfInvOp, shlo::chlo::ErfcOp,
             shlo::chlo::SquareOp>(op);
}

/// The static result shapes of `op` from its (static) operands; nullopt
/// when this pass cannot infer them.
std::optional<SmallVector<SmallVector<int64_t>>> inferShapes(Operation *op) {
  using Shapes = SmallVector<SmallVector<int64_t>>;
  auto one = [](ArrayRef<int64_t> shape) {
    return std::optional<Shapes>(Shapes{SmallVector<int64_t>(shape)});
  };
  if (isElementwise(op)) {
    std::optional<SmallVector<int64_t>> shape = elementwiseShape(op);
    if (!shape)
      return std::nullopt;
    return one(*shape);
  }
  if (auto b = dyn_cast<shlo::BroadcastInDimOp>(op)) {
    SmallVector<int64_t> shape(shapeOf(b.getResult()));
    for (auto [k, d] : llvm::enumerate(b.getBroadcastDimensions()))
      if (ShapedType::isDynamic(shape[d]))
        shape[d] = shapeOf(b.getOperand())[k];
    return one(shape);
  }
  if (auto t = dyn_cast<shlo::TransposeOp>(op)) {
    SmallVector<int64_t> shape;
    for (int64_t d : t.getPermutation())
      shape.push_back(shapeOf(t.getOperand())[d]);
    return one(shape);
  }
  if (auto c = dyn_cast<shlo::ConcatenateOp>(op)) {
    SmallVector<int64_t> shape(shapeOf(c.getInputs().front()));
    int64_t dim = c.getDimension();
    shape[dim] = 0;
    for (Value input : c.getInputs())
      shape[dim] += shapeOf(input)[dim];
    return one(shape);
  }
  if (auto d = dyn_cast<shlo::DotGeneralOp>(op)) {
    auto numbers = d.getDotDimensionNumbers();
    ArrayRef<int64_t> lhs = shapeOf(d.getLhs()), rhs = shapeOf(d.getRhs());
    SmallVector<int64_t> shape;
    for (int64_t b : numbers.getLhsBatchingDimensions())
      shape.push_back(lhs[b]);
    for (int64_t i = 0, e = lhs.size(); i < e; ++i)
      if (!llvm::is_contained(numbers.getLhsBatchingDimensions(), i) &&
          !llvm::is_contained(numbers.getLhsContractingDimensions(), i))
        shape.push_back(lhs[i]);
    for (int64_t i = 0, e = rhs.size(); i < e; ++i)
      if (!llvm::is_contained(numbers.getRhsBatchingDimensions(), i) &&
          !llvm::is_contained(numbers.getRhsContractingDimensions(), i))
        shape.push_back(rhs[i]);
    return one(shape);
  }
  if (auto r = dyn_cast<shlo::ReduceOp>(op)) {
    Shapes shapes;
    for (Value input : r.getInputs()) {
      SmallVector<int64_t> shape;
      for (auto [i, n] : llvm::enumerate(shapeOf(input)))
        if (!llvm::is_contained(r.getDimensions(), static_cast<int64_t>(i)))
          shape.push_back(n);
      shapes.push_back(shape);
    }
    return shapes;
  }
  if (auto p = dyn_cast<shlo::PadOp>(op)) {
    SmallVector<int64_t> shape;
    for (auto [i, n] : llvm::enumerate(shapeOf(p.getOperand())))
      shape.push_back(n + p.getEdgePaddingLow()[i] +
                      p.getEdgePaddingHigh()[i] +
                      std::max<int64_t>(n - 1, 0) * p.getInteriorPadding()[i]);
    return one(shape);
  }
  if (auto g = dyn_cast<shlo::GatherOp>(op)) {
    // Batch dimensions: the indices' without the index vector dimension;
    // offset dimensions: the slice sizes of the operand dimensions neither
    // collapsed nor batching, at `offset_dims`.
    auto numbers = g.getDimensionNumbers();
    SmallVector<int64_t> batch;
    for (auto [i, n] : llvm::enumerate(shapeOf(g.getStartIndices())))
      if (static_cast<int64_t>(i) != numbers.getIndexVectorDim())
        batch.push_back(n);
    SmallVector<int64_t> offsets;
    for (auto [i, n] : llvm::enumerate(g.getSliceSizes()))
      if (!llvm::is_contained(numbers.getCollapsedSliceDims(),
                              static_cast<int64_t>(i)) &&
          !llvm::is_contained(numbers.getOperandBatchingDims(),
                              static_cast<int64_t>(i)))
        offsets.push_back(n);
    ArrayRef<int64_t> offsetDims = numbers.getOffsetDims();
    int64_t rank = batch.size() + offsets.size();
    SmallVector<int64_t> shape;
    size_t b = 0, o = 0;
    for (int64_t d = 0; d < rank; ++d) {
      bool isOffset = llvm::is_contained(offsetDims, d);
      if ((isOffset && o >= offsets.size()) || (!isOffset && b >= batch.size()))
        return std::nullopt;
      shape.push_back(isOffset ? offsets[o++] : batch[b++]);
    }
    return one(shape);
  }
  if (auto s = dyn_cast<shlo::SelectAndScatterOp>(op))
    return one(shapeOf(s.getOperand()));
  if (isa<shlo::OptimizationBarrierOp, shlo::sdy::ShardingConstraintOp>(op) ||
      (isa<shlo::CustomCallOp>(op) &&
       cast<shlo::CustomCallOp>(op).getCallTargetName() == "Sharding")) {
    Shapes shapes;
    for (Value operand : op->getOperands())
      shapes.push_back(SmallVector<int64_t>(shapeOf(operand)));
    return shapes;
  }
  return std::nullopt;
}

struct RefineStableHLOShapesPass
    : loom::impl::RefineStableHLOShapesBase<RefineStableHLOShapesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool dynamic = false;
    module.walk([&](Operation *op) {
      dynamic |= anyDynamic(op->getResultTypes());
      for (Region &region : op->getRegions())
        for (Block &block : region)
          dynamic |= anyDynamic(block.getArgumentTypes());
    });
    // The names are for binding only.
    llvm::scope_exit dropNames([&] {
      for (auto func : module.getOps<func::FuncOp>())
        for (unsigned k = 0; k < func.getNumArguments(); ++k)
          func.removeArgAttr(k, LoomDialect::getDimNamesAttrName());
    });
    if (!dynamic)
      return;
    func::FuncOp entry;
    for (auto func : module.getOps<func::FuncOp>())
      if (func.isPublic() && !func.isExternal()) {
        entry = func;
        break;
      }
    if (!entry) {
      mlir::emitError(module.getLoc())
          << kPass << ": no public function to bind";
      return signalPassFailure();
    }
    if (failed(bindArguments(entry)) || failed(refine(entry.getBody())))
      return signalPassFailure();
    auto ret = cast<func::ReturnOp>(entry.getBody().front().getTerminator());
    entry.setType(FunctionType::get(&getContext(),
                                    entry.getBody().getArgumentTypes(),
                                    ret.getOperandTypes()));
    // Private helpers left uninlined keep their dynamic types: they are
    // never reached from the entry (the importer inlines and drops them).
  }

  /// The `dims` option as a map; reports a malformed entry.
  FailureOr<llvm::StringMap<int64_t>> parseDims(func::FuncOp entry) {
    llvm::StringMap<int64_t> sizes;
    for (const std::string &item : dims) {
      auto [name, value] = StringRef(item).split('=');
      int64_t size = 0;
      if (name.trim().empty() || value.trim().getAsInteger(10, size) ||
          size <= 0)
        return mlir::emitError(entry.getLoc())
               << kPass << ": --dim '" << item
               << "' is not NAME=N with N >= 1 (NAME: a JAX dimension "
                  "variable, as in jax.export.symbolic_shape('b, s'))";
      sizes[name.trim()] = size;
    }
    return sizes;
  }

  /// The dimension-variable name of dimension `d` of `arg` (empty: none).
  static StringRef dimName(func::FuncOp entry, BlockArgument arg, size_t d) {
    auto names = entry.getArgAttrOfType<ArrayAttr>(
        arg.getArgNumber(), LoomDialect::getDimNamesAttrName());
    if (!names || d >= names.size())
      return "";
    auto name = dyn_cast<StringAttr>(names[d]);
    return name ? name.getValue() : "";
  }

  LogicalResult bindArguments(func::FuncOp entry) {
    FailureOr<llvm::StringMap<int64_t>> sizes = parseDims(entry);
    if (failed(sizes))
      return failure();
    llvm::SetVector<StringRef> known; // in argument and dimension order
    for (BlockArgument arg : entry.getArguments()) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type)
        continue;
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (StringRef name = dimName(entry, arg, d); !name.empty())
          known.insert(name);
    }
    for (const auto &entryItem : *sizes)
      if (!known.contains(entryItem.getKey())) {
        std::string names = llvm::join(known, ", ");
        return mlir::emitError(entry.getLoc())
               << kPass << ": --dim " << entryItem.getKey()
               << ": the module has no dimension variable of that name ("
               << (names.empty() ? std::string("it names none")
                                 : "it has " + names)
               << ")";
      }
    for (BlockArgument arg : entry.getArguments()) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type || type.hasStaticShape())
        continue;
      SmallVector<int64_t> shape(type.getShape());
      for (auto [d, n] : llvm::enumerate(shape)) {
        if (!ShapedType::isDynamic(n))
          continue;
        StringRef name = dimName(entry, arg, d);
        if (auto it = sizes->find(name); !name.empty() && it != sizes->end()) {
          n = it->second;
          continue;
        }
        if (d == 0 && batch > 0) {
          n = batch;
          continue;
        }
        InFlightDiagnostic diag = mlir::emitError(entry.getLoc())
                                  << kPass << ": dimension " << d
                                  << " of argument " << arg.getArgNumber()
                                  << " (" << type << ") of '"
                                  << entry.getName() << "' is dynamic";
        if (!name.empty())
          diag << " (JAX's dimension variable '" << name
               << "'): bind it with --dim " << name << "=N"
               << (d == 0 ? " or --micro-batch N" : "");
        else if (d == 0)
          diag << " (a shape-polymorphic export): give the batch to bind it "
                  "to (loomc --micro-batch N, loom-translate "
                  "--import-stablehlo --micro-batch N)";
        else
          diag << "; only the batch (dimension 0, --micro-batch) and "
                  "dimensions JAX names (--dim NAME=N) are bound: export "
                  "the others static";
        return diag;
      }
      arg.setType(type.clone(shape));
    }
    return success();
  }

  /// Makes every op of `region` static, in order.
  LogicalResult refine(Region &region) {
    for (Block &block : region)
      for (Operation &op : llvm::make_early_inc_range(block))
        if (failed(refineOp(&op)))
          return failure();
    return success();
  }

  /// Replaces `op` by `replacement` (same results).
  void replace(Operation *op, Operation *replacement) {
    op->replaceAllUsesWith(replacement);
    op->erase();
  }

  LogicalResult refineOp(Operation *op) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    StringRef name = op->getName().getStringRef();
    auto resultType = [&](unsigned i) {
      return cast<RankedTensorType>(op->getResult(i).getType());
    };
    auto evaluateShape =
        [&](Value shape) -> std::optional<SmallVector<int64_t>> {
      std::optional<SmallVector<int64_t>> dims = evaluateInts(shape);
      if (!dims || llvm::any_of(*dims, [](int64_t n) { return n < 0; }))
        return std::nullopt;
      return dims;
    };
    auto error = [&]() { return mlir::emitError(loc) << kPass << ": "; };
    auto notKnown = [&](StringRef what) {
      return error() << "the " << what << " of '" << name
                     << "' is not known at import";
    };

    if (auto size = dyn_cast<shlo::GetDimensionSizeOp>(op)) {
      int64_t dim = size.getDimension();
      auto type = dyn_cast<RankedTensorType>(size.getOperand().getType());
      if (!type || dim < 0 || dim >= type.getRank() || type.isDynamicDim(dim))
        return notKnown("dimension");
      auto scalar = resultType(0);
      replace(op, shlo::ConstantOp::create(
                      b, loc,
                      DenseElementsAttr::get(
                          scalar, b.getIntegerAttr(scalar.getElementType(),
                                                   type.getDimSize(dim)))));
      return success();
    }
    // The dynamic shape ops: their shape operand evaluated, the static op.
    Value shapeOperand;
    if (auto o = dyn_cast<shlo::DynamicBroadcastInDimOp>(op))
      shapeOperand = o.getOutputDimensions();
    else if (auto o = dyn_cast<shlo::DynamicReshapeOp>(op))
      shapeOperand = o.getOutputShape();
    else if (auto o = dyn_cast<shlo::DynamicIotaOp>(op))
      shapeOperand = o.getOutputShape();
    if (shapeOperand) {
      std::optional<SmallVector<int64_t>> shape = evaluateShape(shapeOperand);
      if (!shape)
        return notKnown("output shape");
      auto type = resultType(0).clone(*shape);
      Operation *replacement;
      if (auto o = dyn_cast<shlo::DynamicIotaOp>(op))
        replacement = shlo::IotaOp::create(b, loc, type, o.getIotaDimension());
      else if (auto o = dyn_cast<shlo::DynamicReshapeOp>(op))
        replacement = shlo::ReshapeOp::create(b, loc, type, o.getOperand());
      else
        replacement = shlo::BroadcastInDimOp::create(
            b, loc, type, op->getOperand(0),
            cast<shlo::DynamicBroadcastInDimOp>(op).getBroadcastDimensions());
      replace(op, replacement);
      return success();
    }
    if (auto gather = dyn_cast<shlo::DynamicGatherOp>(op)) {
      std::optional<SmallVector<int64_t>> sizes =
          evaluateShape(gather.getSliceSizes());
      if (!sizes)
        return notKnown("slice sizes");
      auto replacement = shlo::GatherOp::create(
          b, loc, gather.getType(), gather.getOperand(),
          gather.getStartIndices(), gather.getDimensionNumbers(), *sizes,
          gather.getIndicesAreSorted());
      replace(op, replacement);
      return refineOp(replacement);
    }
    if (auto call = dyn_cast<shlo::CustomCallOp>(op)) {
      if (call.getCallTargetName() == "shape_assertion") {
        std::optional<int64_t> holds =
            op->getNumOperands() ? evaluateScalarInt(op->getOperand(0))
                                 : std::nullopt;
        if (!holds || !*holds) {
          auto message = op->getAttrOfType<StringAttr>("error_message");
          return error() << "at batch " << static_cast<int64_t>(batch)
                 << ", the export's shape assertion "
                 << (holds ? "fails" : "is not known at import") << ": "
                 << (message ? message.getValue() : StringRef("(no message)"));
        }
        op->erase();
        return success();
      }
    }
    if (auto loop = dyn_cast<shlo::WhileOp>(op)) {
      for (Region *region : {&loop.getCond(), &loop.getBody()}) {
        for (auto [arg, operand] :
             llvm::zip(region->getArguments(), loop->getOperands()))
          arg.setType(operand.getType());
        if (failed(refine(*region)))
          return failure();
      }
      for (auto [result, operand] :
           llvm::zip(loop->getResults(), loop->getOperands()))
        result.setType(operand.getType());
      return success();
    }
    // Ops with regions (reduce, reduce_window, select_and_scatter, ...):
    // their bodies work on 0-d values, static already.
    if (!anyDynamic(op->getResultTypes()))
      return success();
    if (anyDynamic(op->getOperandTypes()))
      return error() << "an operand of '" << name << "' is still dynamic";
    std::optional<SmallVector<SmallVector<int64_t>>> shapes = inferShapes(op);
    if (!shapes || shapes->size() != op->getNumResults())
      return error() << "cannot infer the static shape of '" << name
             << "' (Loom refines elementwise ops, broadcast_in_dim, "
                "dot_general, reduce, transpose, concatenate, pad, gather, "
                "select_and_scatter and the dynamic shape ops)";
    for (auto [result, shape] : llvm::zip(op->getResults(), *shapes)) {
      auto type = cast<RankedTensorType>(result.getType());
      if (type.getRank() != static_cast<int64_t>(shape.size()))
        return error() << "inferred a shape of rank " << shape.size()
                       << " for '" << name << "', whose result has rank "
                       << type.getRank();
      result.setType(type.clone(shape));
    }
    return success();
  }
};

} // namespace

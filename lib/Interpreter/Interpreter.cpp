//===- Interpreter.cpp - The reference interpreter of loom IR -------------===//

#include "loom/Interpreter/Interpreter.h"

#include "Kernels.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <deque>
#include <map>
#include <new>

namespace mlir {
namespace loom {
namespace interp {

namespace {

/// "[1, 2]" for the linear index `linear` of `shape`.
std::string indexString(ArrayRef<int64_t> shape, int64_t linear) {
  SmallVector<int64_t> index(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    index[d] = linear % shape[d];
    linear /= shape[d];
  }
  return formatShape(index);
}

CompareKind toCompareKind(ComparisonDirection direction) {
  switch (direction) {
  case ComparisonDirection::eq:
    return CompareKind::Eq;
  case ComparisonDirection::ne:
    return CompareKind::Ne;
  case ComparisonDirection::lt:
    return CompareKind::Lt;
  case ComparisonDirection::le:
    return CompareKind::Le;
  case ComparisonDirection::gt:
    return CompareKind::Gt;
  case ComparisonDirection::ge:
    return CompareKind::Ge;
  }
  return CompareKind::Eq;
}

LossKind toLossKind(LossReduction reduction) {
  switch (reduction) {
  case LossReduction::none:
    return LossKind::None;
  case LossReduction::mean:
    return LossKind::Mean;
  case LossReduction::sum:
    return LossKind::Sum;
  }
  return LossKind::Mean;
}

/// Runs the kernel of one op. Returns "" on success (with `results`
/// filled), an error message, or `kUnsupported`.
const char kUnsupported[] = "\x01unsupported";

std::string runKernel(Operation *op, ArrayRef<const Tensor *> in,
                      SmallVectorImpl<Tensor> &results) {
  Tensor &out = results.emplace_back();
  auto unaryOp = [&](UnaryKind kind) { return unary(kind, *in[0], out); };
  auto binaryOp = [&](BinaryKind kind) {
    return binary(kind, *in[0], *in[1], out);
  };
  auto resultKind = [&](Value v) {
    return *getElementKind(cast<RankedTensorType>(v.getType()).getElementType());
  };
  auto reduceOp = [&](ReduceKind kind, auto op) {
    return reduce(kind, *in[0], op.getDims(), op.getKeepdims(), out);
  };
  return llvm::TypeSwitch<Operation *, std::string>(op)
      .Case([&](AddOp) { return binaryOp(BinaryKind::Add); })
      .Case([&](SubOp) { return binaryOp(BinaryKind::Sub); })
      .Case([&](MulOp) { return binaryOp(BinaryKind::Mul); })
      .Case([&](DivOp) { return binaryOp(BinaryKind::Div); })
      .Case([&](PowOp) { return binaryOp(BinaryKind::Pow); })
      .Case([&](MaxOp) { return binaryOp(BinaryKind::Max); })
      .Case([&](MinOp) { return binaryOp(BinaryKind::Min); })
      .Case([&](NegOp) { return unaryOp(UnaryKind::Neg); })
      .Case([&](AbsOp) { return unaryOp(UnaryKind::Abs); })
      .Case([&](ExpOp) { return unaryOp(UnaryKind::Exp); })
      .Case([&](LogOp) { return unaryOp(UnaryKind::Log); })
      .Case([&](SqrtOp) { return unaryOp(UnaryKind::Sqrt); })
      .Case([&](RsqrtOp) { return unaryOp(UnaryKind::Rsqrt); })
      .Case([&](TanhOp) { return unaryOp(UnaryKind::Tanh); })
      .Case([&](SigmoidOp) { return unaryOp(UnaryKind::Sigmoid); })
      .Case([&](ErfOp) { return unaryOp(UnaryKind::Erf); })
      .Case([&](ReluOp) { return unaryOp(UnaryKind::Relu); })
      .Case([&](SiluOp) { return unaryOp(UnaryKind::Silu); })
      .Case([&](GeluOp g) {
        return unaryOp(g.getApproximate() == GeluApproximation::tanh
                           ? UnaryKind::GeluTanh
                           : UnaryKind::GeluErf);
      })
      .Case([&](CompareOp c) {
        return compare(toCompareKind(c.getDirection()), *in[0], *in[1], out);
      })
      .Case([&](SelectOp) { return select(*in[0], *in[1], *in[2], out); })
      .Case([&](ConvertOp c) {
        return convert(*in[0], resultKind(c.getResult()), out);
      })
      .Case([&](SoftmaxOp s) {
        return softmax(*in[0], static_cast<int64_t>(s.getAxis()),
                       /*log=*/false, out);
      })
      .Case([&](LogSoftmaxOp s) {
        return softmax(*in[0], static_cast<int64_t>(s.getAxis()),
                       /*log=*/true, out);
      })
      .Case([&](LayerNormOp n) {
        size_t next = 1;
        const Tensor *scale = n.getScale() ? in[next++] : nullptr;
        const Tensor *bias = n.getBias() ? in[next++] : nullptr;
        return layerNorm(*in[0], scale, bias, static_cast<int64_t>(n.getAxis()),
                         n.getEpsilon().convertToDouble(), out);
      })
      .Case([&](RmsNormOp n) {
        const Tensor *scale = n.getScale() ? in[1] : nullptr;
        return rmsNorm(*in[0], scale, static_cast<int64_t>(n.getAxis()),
                       n.getEpsilon().convertToDouble(), out);
      })
      .Case([&](CrossEntropyOp c) {
        std::optional<int64_t> ignore;
        if (std::optional<uint64_t> i = c.getIgnoreIndex())
          ignore = static_cast<int64_t>(*i);
        return crossEntropy(*in[0], *in[1], toLossKind(c.getReduction()),
                            ignore, out);
      })
      .Case([&](DotGeneralOp d) {
        return dotGeneral(*in[0], *in[1], d.getLhsBatchingDims(),
                          d.getRhsBatchingDims(), d.getLhsContractingDims(),
                          d.getRhsContractingDims(), out);
      })
      .Case([&](ReshapeOp r) {
        return reshape(*in[0], r.getType().getShape(), out);
      })
      // Megatron's f: the identity; its all-reduce is in the backward pass.
      .Case([&](TpCopyOp c) {
        return reshape(*in[0], c.getType().getShape(), out);
      })
      .Case([&](TransposeOp t) {
        return transpose(*in[0], t.getPermutation(), out);
      })
      .Case([&](BroadcastOp b) {
        return broadcast(*in[0], b.getDims(), b.getType().getShape(), out);
      })
      .Case([&](SliceOp s) {
        return slice(*in[0], s.getStart(), s.getLimit(), s.getStrides(), out);
      })
      .Case([&](ConcatOp c) {
        return concat(in, static_cast<int64_t>(c.getDim()), out);
      })
      .Case([&](SplitOp s) {
        results.clear();
        return split(*in[0], static_cast<int64_t>(s.getDim()), s.getSizes(),
                     results);
      })
      .Case([&](GatherOp g) {
        return gather(*in[0], *in[1], static_cast<int64_t>(g.getAxis()), out);
      })
      .Case([&](ScatterAddOp s) {
        return scatterAdd(*in[0], *in[1], *in[2],
                          static_cast<int64_t>(s.getAxis()), out);
      })
      .Case([&](IotaOp i) {
        return iota(resultKind(i.getResult()), i.getType().getShape(),
                    static_cast<int64_t>(i.getDim()), out);
      })
      .Case([&](ConstantOp c) { return constant(c.getValue(), out); })
      .Case([&](ReduceSumOp r) { return reduceOp(ReduceKind::Sum, r); })
      .Case([&](ReduceMeanOp r) { return reduceOp(ReduceKind::Mean, r); })
      .Case([&](ReduceMaxOp r) { return reduceOp(ReduceKind::Max, r); })
      .Case([&](arith::ConstantOp c) -> std::string {
        auto value = dyn_cast<ElementsAttr>(c.getValue());
        if (!value)
          return "only tensor constants are supported by the interpreter "
                 "(this one is a scalar " +
                 std::string(c.getType().getAbstractType().getName()) + ")";
        return constant(value, out);
      })
      .Default([&](Operation *) { return std::string(kUnsupported); });
}

/// Row-major coordinates of `rank` in a grid of `shape`.
SmallVector<int64_t> gridCoords(ArrayRef<int64_t> shape, int64_t rank) {
  SmallVector<int64_t> coords(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    coords[d] = rank % shape[d];
    rank /= shape[d];
  }
  return coords;
}

int64_t gridLinear(ArrayRef<int64_t> shape, ArrayRef<int64_t> coords) {
  int64_t linear = 0;
  for (auto [size, c] : llvm::zip(shape, coords))
    linear = linear * size + c;
  return linear;
}

/// The ranks of `rank`'s group along `axes` (those that differ from it only
/// on `axes`), in in-group order (row-major over `axes` as listed).
SmallVector<unsigned> gridGroup(ArrayRef<int64_t> shape, ArrayRef<int16_t> axes,
                                int64_t rank) {
  SmallVector<int64_t> coords = gridCoords(shape, rank);
  SmallVector<int64_t> sizes;
  for (int16_t a : axes)
    sizes.push_back(shape[a]);
  SmallVector<unsigned> group;
  forEachIndex(sizes, [&](ArrayRef<int64_t> index) {
    for (auto [a, i] : llvm::zip(axes, index))
      coords[a] = i;
    group.push_back(static_cast<unsigned>(gridLinear(shape, coords)));
  });
  return group;
}

/// The communication ops that stop a rank until they can complete.
bool isCommunication(Operation &op) {
  return op.getName().getDialectNamespace() == "shard" &&
         !isa<shard::ProcessLinearIndexOp>(op);
}

} // namespace

struct Interpreter::RankState {
  func::FuncOp func;
  Block *block = nullptr;
  DenseMap<Value, TensorRef> values;
  Block::iterator pc;
  bool done = false;
  SmallVector<TensorRef> results;
  /// Buffered sends to this rank, by sender.
  std::map<unsigned, std::deque<TensorRef>> inbox;
};

FailureOr<SmallVector<Tensor>> Interpreter::run(func::FuncOp func,
                                                SmallVector<Tensor> args) {
  SmallVector<SmallVector<Tensor>> argsPerRank;
  argsPerRank.push_back(std::move(args));
  FailureOr<SmallVector<SmallVector<Tensor>>> results =
      runRanks(func, std::move(argsPerRank));
  if (failed(results))
    return failure();
  return std::move(results->front());
}

FailureOr<SmallVector<SmallVector<Tensor>>>
Interpreter::runRanks(func::FuncOp func,
                      SmallVector<SmallVector<Tensor>> argsPerRank) {
  SmallVector<func::FuncOp> funcs(std::max<size_t>(argsPerRank.size(), 1),
                                  func);
  return runRanks(funcs, std::move(argsPerRank));
}

FailureOr<SmallVector<SmallVector<Tensor>>>
Interpreter::runRanks(ArrayRef<func::FuncOp> funcs,
                      SmallVector<SmallVector<Tensor>> argsPerRank) {
  callStack.clear();
  numRanks = static_cast<unsigned>(argsPerRank.size());
  if (funcs.empty())
    return failure();
  if (numRanks == 0)
    return func::FuncOp(funcs.front()).emitOpError()
           << "cannot be run on 0 ranks";
  if (funcs.size() != numRanks)
    return func::FuncOp(funcs.front()).emitOpError()
           << "runs on " << numRanks << " ranks but " << funcs.size()
           << " functions were given (one per rank)";
  SmallVector<RankState> ranks(numRanks);
  for (unsigned r = 0; r < numRanks; ++r) {
    func::FuncOp func = funcs[r];
    if (func.isExternal())
      return func.emitOpError() << "@" << func.getSymName()
                                << " has no body to interpret";
    Region &body = func.getBody();
    if (!llvm::hasSingleElement(body))
      return func.emitOpError()
             << "has " << body.getBlocks().size()
             << " blocks; the interpreter runs single-block functions only";
    Block &block = body.front();
    ranks[r].func = func;
    ranks[r].block = &block;
    SmallVector<TensorRef> refs;
    for (Tensor &t : argsPerRank[r])
      refs.push_back(std::make_shared<const Tensor>(std::move(t)));
    if (refs.size() != block.getNumArguments())
      return func.emitOpError() << "expects " << block.getNumArguments()
                                << " arguments, got " << refs.size();
    for (auto [i, arg] : llvm::enumerate(block.getArguments())) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type || !matchesType(*refs[i], type))
        return func.emitOpError()
               << "argument " << i << " has type " << arg.getType()
               << " but the interpreter was given " << refs[i]->typeString()
               << (numRanks > 1 ? " (rank " + std::to_string(r) + ")" : "");
      ranks[r].values[arg] = refs[i];
    }
    ranks[r].pc = block.begin();
  }
  func::FuncOp func = funcs.front();

  // Round-robin: each rank runs until it returns or blocks at a
  // communication op; a round in which no rank moves is a deadlock.
  while (true) {
    bool progress = false;
    bool allDone = true;
    for (unsigned r = 0; r < numRanks; ++r) {
      RankState &state = ranks[r];
      currentRank = r;
      while (!state.done) {
        if (state.pc == state.block->end())
          return state.func.emitOpError() << "ends without func.return";
        Operation &op = *state.pc;
        if (auto ret = dyn_cast<func::ReturnOp>(op)) {
          for (Value v : ret.getOperands())
            state.results.push_back(state.values.lookup(v));
          state.done = true;
          progress = true;
          break;
        }
        if (isCommunication(op)) {
          CommStatus status = communicate(r, ranks);
          if (status == CommStatus::Failed)
            return failure();
          if (status == CommStatus::Blocked)
            break;
        } else if (failed(execute(&op, state.values, /*depth=*/0))) {
          return failure();
        }
        ++state.pc;
        progress = true;
      }
      allDone &= state.done;
    }
    if (allDone)
      break;
    if (progress)
      continue;
    InFlightDiagnostic diag = func.emitError()
                              << "deadlock: every unfinished rank of @"
                              << func.getSymName()
                              << (llvm::all_equal(funcs) ? "" : " (and the other ranks' functions)")
                              << " is blocked at a communication op";
    for (unsigned r = 0; r < numRanks; ++r) {
      if (ranks[r].done) {
        diag.attachNote() << "rank " << r << " has returned";
        continue;
      }
      Operation *op = &*ranks[r].pc;
      diag.attachNote(op->getLoc())
          << "rank " << r << " is blocked at '" << op->getName() << "'";
    }
    return failure();
  }

  SmallVector<SmallVector<Tensor>> out;
  for (RankState &state : ranks) {
    SmallVector<Tensor> &results = out.emplace_back();
    for (const TensorRef &t : state.results)
      results.push_back(*t);
  }
  return out;
}

FailureOr<SmallVector<int64_t>>
Interpreter::gridShape(Operation *op, FlatSymbolRefAttr gridName,
                       SmallVectorImpl<int16_t> *axisMap) {
  auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(op, gridName);
  if (!grid) {
    op->emitOpError() << "uses @" << gridName.getValue()
                      << ", which is not a shard.grid of the module";
    return failure();
  }
  SmallVector<int64_t> shape(grid.getShape());
  int64_t devices = 1;
  for (int64_t d : shape) {
    if (ShapedType::isDynamic(d)) {
      op->emitOpError() << "uses grid @" << gridName.getValue()
                        << " of dynamic shape; the interpreter needs a static "
                           "grid with as many devices as ranks";
      return failure();
    }
    devices *= d;
  }
  // A 1-D grid naming an axis of the mesh.
  if (options.mesh.size() == 3 && shape.size() == 1) {
    SmallVector<int64_t> meshShape(options.mesh.begin(), options.mesh.end());
    int64_t meshDevices = meshShape[0] * meshShape[1] * meshShape[2];
    StringRef name = gridName.getValue();
    int16_t axis = name == "dp" ? 0 : name == "pp" ? 1 : name == "tp" ? 2 : -1;
    if (axis >= 0 && meshShape[axis] == shape[0] &&
        meshDevices == static_cast<int64_t>(numRanks)) {
      if (axisMap) {
        axisMap->clear();
        axisMap->push_back(axis);
      }
      return meshShape;
    }
  }
  if (devices != static_cast<int64_t>(numRanks)) {
    op->emitOpError() << "uses grid @" << gridName.getValue() << " of "
                      << devices << " devices (shape " << formatShape(shape)
                      << "), but loom-run runs " << numRanks
                      << " rank(s); give --ranks " << devices;
    return failure();
  }
  return shape;
}

Interpreter::CommStatus
Interpreter::communicate(unsigned r, MutableArrayRef<RankState> ranks) {
  RankState &state = ranks[r];
  Operation *op = &*state.pc;
  auto error = [&]() {
    InFlightDiagnostic diag = op->emitOpError();
    if (numRanks > 1)
      diag << "(rank " << r << ") ";
    return diag;
  };
  auto lookup = [&](RankState &s, Value v) -> TensorRef {
    return s.values.lookup(v);
  };
  auto operandsComputed = [&](Operation *o, RankState &s) {
    for (Value v : o->getOperands())
      if (!s.values.count(v))
        return false;
    return true;
  };
  if (!isa<shard::AllReduceOp, shard::AllGatherOp, shard::ReduceScatterOp,
           shard::AllToAllOp, shard::SendOp, shard::RecvOp>(op)) {
    error() << "is not supported by the interpreter (of the shard dialect it "
               "runs all_reduce, all_gather, reduce_scatter, all_to_all, send, "
               "recv and process_linear_index)";
    return CommStatus::Failed;
  }
  if (!operandsComputed(op, state)) {
    error() << "uses a value the interpreter has not computed";
    return CommStatus::Failed;
  }
  auto gridAttr = op->getAttrOfType<FlatSymbolRefAttr>("grid");
  SmallVector<int16_t> axisMap;
  FailureOr<SmallVector<int64_t>> shape = gridShape(op, gridAttr, &axisMap);
  if (failed(shape))
    return CommStatus::Failed;
  SmallVector<int16_t> axes;
  if (auto a = op->getAttrOfType<DenseI16ArrayAttr>("grid_axes"))
    axes.assign(a.asArrayRef().begin(), a.asArrayRef().end());
  // A mesh-axis grid: its axis 0 is an axis of the mesh.
  if (!axisMap.empty())
    for (int16_t &a : axes)
      a = a == 0 ? axisMap.front() : static_cast<int16_t>(shape->size());
  for (int16_t a : axes)
    if (a < 0 || a >= static_cast<int64_t>(shape->size())) {
      error() << "has grid axis " << a << " outside grid @"
              << gridAttr.getValue() << " of rank " << shape->size();
      return CommStatus::Failed;
    }

  auto bind = [&](RankState &s, Operation *o, const Tensor &t) {
    auto type = cast<RankedTensorType>(o->getResult(0).getType());
    if (!matchesType(t, type))
      return false;
    s.values[o->getResult(0)] = std::make_shared<const Tensor>(t);
    return true;
  };
  // The rank at in-group multi-index `index` of r's group.
  auto peer = [&](ArrayRef<int64_t> index, StringRef what) -> int64_t {
    if (index.size() != axes.size()) {
      error() << "has a " << what << " of " << index.size()
              << " coordinates for " << axes.size() << " grid axes";
      return -1;
    }
    SmallVector<int64_t> coords = gridCoords(*shape, r);
    for (auto [a, i] : llvm::zip(axes, index)) {
      if (i < 0 || i >= (*shape)[a]) {
        error() << "has " << what << " coordinate " << i
                << " outside grid axis " << a << " of size " << (*shape)[a];
        return -1;
      }
      coords[a] = i;
    }
    return gridLinear(*shape, coords);
  };

  // Static coordinates with the dynamic ones (index values) filled in.
  auto mixed = [&](ArrayRef<int64_t> statics, ValueRange dynamics) {
    SmallVector<int64_t> out;
    size_t next = 0;
    for (int64_t c : statics)
      out.push_back(ShapedType::isDynamic(c) && next < dynamics.size()
                        ? lookup(state, dynamics[next++])->ints[0]
                        : c);
    return out;
  };

  if (auto send = dyn_cast<shard::SendOp>(op)) {
    int64_t to = peer(mixed(send.getDestination(),
                            send.getDestinationDynamic()),
                      "destination");
    if (to < 0)
      return CommStatus::Failed;
    TensorRef value = lookup(state, send.getInput());
    ranks[to].inbox[r].push_back(value);
    if (!bind(state, op, *value)) {
      error() << "cannot return its input as its result type";
      return CommStatus::Failed;
    }
    return CommStatus::Done;
  }
  if (auto recv = dyn_cast<shard::RecvOp>(op)) {
    std::optional<ArrayRef<int64_t>> source = recv.getSource();
    if (!source) {
      error() << "has no source; the interpreter needs one";
      return CommStatus::Failed;
    }
    int64_t from = peer(mixed(*source, recv.getSourceDynamic()), "source");
    if (from < 0)
      return CommStatus::Failed;
    std::deque<TensorRef> &queue = state.inbox[static_cast<unsigned>(from)];
    if (queue.empty())
      return CommStatus::Blocked;
    TensorRef value = queue.front();
    queue.pop_front();
    if (!bind(state, op, *value)) {
      error() << "received " << value->typeString() << " from rank " << from
              << ", which does not match its result type "
              << op->getResult(0).getType();
      return CommStatus::Failed;
    }
    return CommStatus::Done;
  }

  // A collective: it runs once every rank of the group is at an op of the
  // same kind on the same grid axes.
  SmallVector<unsigned> group = gridGroup(*shape, axes, r);
  for (unsigned m : group) {
    if (m == r)
      continue;
    if (ranks[m].done)
      return CommStatus::Blocked;
    Operation *other = &*ranks[m].pc;
    if (!isCommunication(*other) ||
        other->getAttr("grid") != op->getAttr("grid") ||
        other->getAttr("grid_axes") != op->getAttr("grid_axes"))
      return CommStatus::Blocked;
    if (other->getName() != op->getName() ||
        other->getAttrDictionary() != op->getAttrDictionary()) {
      InFlightDiagnostic diag = error()
                                << "meets a different communication op of "
                                   "rank "
                                << m << " in its group";
      diag.attachNote(other->getLoc()) << "rank " << m << " is here";
      return CommStatus::Failed;
    }
    if (!operandsComputed(other, ranks[m])) {
      error() << "uses a value the interpreter has not computed";
      return CommStatus::Failed;
    }
  }
  SmallVector<TensorRef> inputs;
  for (unsigned m : group)
    inputs.push_back(lookup(ranks[m], ranks[m].pc->getOperand(0)));

  // Splits `x` into group.size() equal pieces along `axis`.
  auto splitEqually = [&](const Tensor &x, int64_t axis, StringRef axisName,
                          SmallVectorImpl<Tensor> &pieces) -> std::string {
    if (std::string err = checkDim(axis, x.rank(), axisName.str().c_str());
        !err.empty())
      return err;
    int64_t n = static_cast<int64_t>(group.size());
    if (x.shape[axis] % n != 0)
      return "cannot split dim " + std::to_string(axis) + " of size " +
             std::to_string(x.shape[axis]) + " (" + axisName.str() +
             ") into " + std::to_string(n) + " equal pieces for a group of " +
             std::to_string(n) + " ranks";
    SmallVector<int64_t> sizes(n, x.shape[axis] / n);
    return split(x, axis, sizes, pieces);
  };

  // One result per group member (in group order).
  SmallVector<Tensor> results;
  Tensor result;
  std::string message;
  if (isa<shard::AllReduceOp, shard::ReduceScatterOp>(op)) {
    auto reduction = cast<shard::ReductionKindAttr>(op->getAttr("reduction"))
                         .getValue();
    std::optional<BinaryKind> kind;
    switch (reduction) {
    case shard::ReductionKind::Sum:
      kind = BinaryKind::Add;
      break;
    case shard::ReductionKind::Max:
      kind = BinaryKind::Max;
      break;
    case shard::ReductionKind::Min:
      kind = BinaryKind::Min;
      break;
    case shard::ReductionKind::Product:
      kind = BinaryKind::Mul;
      break;
    default:
      break;
    }
    if (!kind) {
      error() << "has reduction '"
              << shard::stringifyReductionKind(reduction)
              << "'; the interpreter supports sum, max, min and product";
      return CommStatus::Failed;
    }
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    std::optional<ElementKind> to =
        getElementKind(resultType.getElementType());
    if (!to) {
      error() << "has result type " << resultType
              << "; the interpreter supports f32, f16, bf16, i64, i32 and i1";
      return CommStatus::Failed;
    }
    for (auto [i, input] : llvm::enumerate(inputs)) {
      Tensor converted;
      message = convert(*input, *to, converted);
      if (!message.empty())
        break;
      if (i == 0) {
        result = std::move(converted);
        continue;
      }
      Tensor sum;
      message = binary(*kind, result, converted, sum);
      if (!message.empty())
        break;
      result = std::move(sum);
    }
    if (message.empty()) {
      if (auto scatter = dyn_cast<shard::ReduceScatterOp>(op))
        message = splitEqually(result, scatter.getScatterAxis().getSExtValue(),
                               "scatter_axis", results);
      else
        results.assign(group.size(), result);
    }
  } else if (auto allToAll = dyn_cast<shard::AllToAllOp>(op)) {
    // pieces[i][j]: the piece member i sends to member j.
    SmallVector<SmallVector<Tensor>> pieces(group.size());
    for (auto [i, input] : llvm::enumerate(inputs)) {
      message = splitEqually(*input, allToAll.getSplitAxis().getSExtValue(),
                             "split_axis", pieces[i]);
      if (!message.empty())
        break;
    }
    for (size_t j = 0; message.empty() && j < group.size(); ++j) {
      SmallVector<const Tensor *> parts;
      for (size_t i = 0; i < group.size(); ++i)
        parts.push_back(&pieces[i][j]);
      Tensor out;
      message = concat(parts, allToAll.getConcatAxis().getSExtValue(), out);
      results.push_back(std::move(out));
    }
  } else {
    auto gather = cast<shard::AllGatherOp>(op);
    SmallVector<const Tensor *> parts;
    for (const TensorRef &t : inputs)
      parts.push_back(t.get());
    message = concat(parts, gather.getGatherAxis().getSExtValue(), result);
    results.assign(group.size(), result);
  }
  if (!message.empty()) {
    error() << message;
    return CommStatus::Failed;
  }
  for (const Tensor &t : results)
    if (failed(checkResults(op, t)))
      return CommStatus::Failed;
  for (auto [m, t] : llvm::zip(group, results)) {
    bind(ranks[m], &*ranks[m].pc, t);
    if (m != r)
      ++ranks[m].pc;
  }
  return CommStatus::Done;
}

LogicalResult Interpreter::withCallStack(InFlightDiagnostic &&diagnostic) {
  constexpr size_t kShown = 4;
  size_t shown = std::min(callStack.size(), kShown);
  for (size_t i = 0; i < shown; ++i)
    diagnostic.attachNote(callStack[callStack.size() - 1 - i]->getLoc())
        << "called from here";
  if (callStack.size() > shown)
    diagnostic.attachNote() << "and " << callStack.size() - shown
                            << " more enclosing calls";
  return failure();
}

FailureOr<SmallVector<Interpreter::TensorRef>>
Interpreter::call(func::FuncOp func, ArrayRef<TensorRef> args, unsigned depth) {
  if (func.isExternal())
    return withCallStack(func.emitOpError()
                         << "@" << func.getSymName()
                         << " has no body to interpret");
  Region &body = func.getBody();
  if (!llvm::hasSingleElement(body))
    return withCallStack(
        func.emitOpError()
        << "has " << body.getBlocks().size()
        << " blocks; the interpreter runs single-block functions only");
  Block &block = body.front();
  if (args.size() != block.getNumArguments())
    return withCallStack(func.emitOpError()
                         << "expects " << block.getNumArguments()
                         << " arguments, got " << args.size());

  DenseMap<Value, TensorRef> values;
  for (auto [i, arg] : llvm::enumerate(block.getArguments())) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !matchesType(*args[i], type))
      return withCallStack(func.emitOpError()
                           << "argument " << i << " has type " << arg.getType()
                           << " but the interpreter was given "
                           << args[i]->typeString());
    values[arg] = args[i];
  }

  for (Operation &op : block) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      SmallVector<TensorRef> results;
      for (Value v : ret.getOperands())
        results.push_back(values.lookup(v));
      return results;
    }
    if (failed(execute(&op, values, depth)))
      return failure();
  }
  return withCallStack(func.emitOpError() << "ends without func.return");
}

LogicalResult Interpreter::execute(Operation *op,
                                   DenseMap<Value, TensorRef> &values,
                                   unsigned depth) {
  if (auto index = dyn_cast<GridIndexOp>(op)) {
    FailureOr<SmallVector<int64_t>> shape =
        gridShape(op, index.getGridAttr());
    if (failed(shape))
      return failure();
    SmallVector<int64_t> coords = gridCoords(*shape, currentRank);
    Tensor result = Tensor::zeros(ElementKind::I64, {});
    for (int16_t axis : index.getGridAxes()) {
      if (axis < 0 || axis >= static_cast<int64_t>(shape->size()))
        return withCallStack(op->emitOpError()
                             << "has grid axis " << axis << " outside grid "
                             << index.getGridAttr());
      result.ints[0] = result.ints[0] * (*shape)[axis] + coords[axis];
    }
    values[op->getResult(0)] = std::make_shared<const Tensor>(std::move(result));
    return success();
  }
  if (auto index = dyn_cast<shard::ProcessLinearIndexOp>(op)) {
    if (failed(gridShape(op, index.getGridAttr())))
      return failure();
    // An index: held as a 0-d i64 tensor.
    Tensor rank = Tensor::zeros(ElementKind::I64, {});
    rank.ints[0] = currentRank;
    values[op->getResult(0)] = std::make_shared<const Tensor>(std::move(rank));
    return success();
  }
  if (op->getNumResults() == 1 && op->getResult(0).getType().isIndex() &&
      op->getDialect() && op->getDialect()->getNamespace() == "arith") {
    // Index arithmetic (e.g. a peer's rank from process_linear_index), on
    // 0-d i64 tensors.
    Tensor out = Tensor::zeros(ElementKind::I64, {});
    if (auto c = dyn_cast<arith::ConstantOp>(op)) {
      auto attr = dyn_cast<IntegerAttr>(c.getValue());
      if (!attr)
        return withCallStack(op->emitOpError() << "has a non-integer value");
      out.ints[0] = attr.getInt();
    } else {
      if (op->getNumOperands() != 2 || !values.count(op->getOperand(0)) ||
          !values.count(op->getOperand(1)))
        return withCallStack(op->emitOpError()
                             << "is not supported by the interpreter on "
                                "index values");
      int64_t a = values[op->getOperand(0)]->ints[0];
      int64_t b = values[op->getOperand(1)]->ints[0];
      bool divides = isa<arith::DivSIOp, arith::RemSIOp>(op);
      if (divides && b == 0)
        return withCallStack(op->emitOpError() << "divides by zero");
      if (isa<arith::AddIOp>(op))
        out.ints[0] = a + b;
      else if (isa<arith::SubIOp>(op))
        out.ints[0] = a - b;
      else if (isa<arith::MulIOp>(op))
        out.ints[0] = a * b;
      else if (isa<arith::DivSIOp>(op))
        out.ints[0] = a / b;
      else if (isa<arith::RemSIOp>(op))
        out.ints[0] = a % b;
      else
        return withCallStack(op->emitOpError()
                             << "is not supported by the interpreter on "
                                "index values (it runs arith.constant, addi, "
                                "subi, muli, divsi and remsi)");
    }
    values[op->getResult(0)] = std::make_shared<const Tensor>(std::move(out));
    return success();
  }
  if (isCommunication(*op))
    return withCallStack(
        op->emitOpError()
        << "is a communication op inside a called function; the interpreter "
           "runs communication ops only in the entry function (inline the "
           "call first, e.g. loom-opt --inline)");
  SmallVector<const Tensor *> in;
  SmallVector<TensorRef> operands;
  for (Value v : op->getOperands()) {
    auto it = values.find(v);
    if (it == values.end())
      return withCallStack(
          op->emitOpError()
          << "uses a value the interpreter has not computed (an operand "
             "defined outside the function body?)");
    in.push_back(it->second.get());
    operands.push_back(it->second);
  }
  for (Type t : op->getResultTypes()) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (!tensor || !getElementKind(tensor.getElementType()))
      return withCallStack(
          op->emitOpError()
          << "has a result of type " << t
          << "; the interpreter supports ranked tensors of f32, f16, bf16, "
             "i64, i32 and i1");
  }

  if (op->getName().getDialectNamespace() == "check")
    return executeCheck(op, in); // CheckKernels.cpp
  SmallVector<Tensor> results;
  if (auto callOp = dyn_cast<func::CallOp>(op)) {
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        op, callOp.getCalleeAttr());
    if (!callee)
      return withCallStack(op->emitOpError()
                           << "calls @" << callOp.getCallee()
                           << ", which is not a func.func in the module");
    if (depth + 1 > options.maxCallDepth)
      return withCallStack(op->emitOpError()
                           << "nests calls deeper than "
                           << options.maxCallDepth
                           << " (recursion?); the interpreter stops here");
    callStack.push_back(op);
    FailureOr<SmallVector<TensorRef>> called =
        call(callee, operands, depth + 1);
    callStack.pop_back();
    if (failed(called))
      return failure();
    for (const TensorRef &r : *called)
      results.push_back(*r);
  } else {
    std::string error;
    try {
      error = runKernel(op, in, results);
    } catch (const std::bad_alloc &) {
      // Only reached when the tool lets operator new throw (see
      // Interpreter.h); LLVM's default new-handler aborts instead.
      results.clear();
      error = "ran out of memory computing its results (the interpreter "
              "keeps every value in memory; use smaller shapes)";
    }
    if (error == kUnsupported)
      return withCallStack(
          op->emitOpError()
          << "is not supported by the interpreter (loom-run runs loom ops, "
             "func.call, func.return and arith.constant)");
    if (!error.empty())
      return withCallStack(op->emitOpError() << error);
  }
  if (failed(checkResults(op, results)))
    return failure();
  for (auto [value, tensor] : llvm::zip(op->getResults(), results))
    values[value] = std::make_shared<const Tensor>(std::move(tensor));
  return success();
}

LogicalResult Interpreter::checkResults(Operation *op,
                                        ArrayRef<Tensor> results) {
  if (results.size() != op->getNumResults())
    return withCallStack(op->emitOpError()
                         << "computed " << results.size() << " results for "
                         << op->getNumResults() << " result types");
  for (auto [i, pair] : llvm::enumerate(llvm::zip(op->getResults(), results))) {
    auto [value, tensor] = pair;
    auto type = cast<RankedTensorType>(value.getType());
    if (!matchesType(tensor, type))
      return withCallStack(
          op->emitOpError()
          << "computed result " << i << " as " << tensor.typeString()
          << ", which does not match its type " << type
          << " (inconsistent IR: run loom-shape-inference to check it)");
    if (!options.checkFinite || !tensor.isFloat())
      continue;
    for (size_t e = 0; e < tensor.floats.size(); ++e) {
      float v = tensor.floats[e];
      if (std::isfinite(v))
        continue;
      return withCallStack(
          op->emitOpError()
          << "produced " << (std::isnan(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf")
          << " at index "
          << indexString(tensor.shape, static_cast<int64_t>(e))
          << " of result " << i << " (" << tensor.typeString()
          << "), the first non-finite value (--check-finite)");
    }
  }
  return success();
}

} // namespace interp
} // namespace loom
} // namespace mlir

//===- Communication.cpp - The shard dialect's ops across the ranks -------===//
//
// The interpreter's virtual ranks meet at communication ops (see
// Interpreter.h): a send is buffered in the receiver's inbox, a recv
// completes once its message is there, and a collective (all_reduce,
// reduce_scatter, all_gather, all_to_all) runs when every rank of its group
// has reached the same op, computing each member's result. Ranks are laid
// out on the op's grid in row-major order, or on the mesh of the options
// for the 1-D grids named dp, pp and tp.
//
//===----------------------------------------------------------------------===//

#include "Execution.h"
#include "Kernels.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace loom {
namespace interp {

/// Row-major coordinates of `rank` in a grid of `shape`.
SmallVector<int64_t> gridCoords(ArrayRef<int64_t> shape, int64_t rank) {
  SmallVector<int64_t> coords(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    coords[d] = rank % shape[d];
    rank /= shape[d];
  }
  return coords;
}

namespace {

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

} // namespace

/// The communication ops that stop a rank until they can complete.
bool isCommunication(Operation &op) {
  return op.getName().getDialectNamespace() == "shard" &&
         !isa<shard::ProcessLinearIndexOp>(op);
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

} // namespace interp
} // namespace loom
} // namespace mlir

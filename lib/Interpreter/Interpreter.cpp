//===- Interpreter.cpp - The reference interpreter of loom IR -------------===//

//
// The driver of the interpreter: runRanks steps the ranks round-robin
// (each until it returns or blocks at a communication op, which
// Communication.cpp completes), execute() runs one op (rank and index
// arithmetic, func.call, `check` ops, or the op's kernel through
// Dispatch.cpp) and checkResults() checks what it computed.
//
//===----------------------------------------------------------------------===//

#include "loom/Interpreter/Interpreter.h"

#include "Execution.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/SymbolTable.h"

#include <cmath>
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

} // namespace

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

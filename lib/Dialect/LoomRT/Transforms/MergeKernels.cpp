//===- MergeKernels.cpp - A kernel run inside the loop that reads it ------===//
//
// Implements -loom-merge-kernels (see Passes.td for the contract): an
// elementwise kernel whose outputs the next op touching them, a kernel of
// the same loop, reads at the element it writes, is computed in that
// kernel's loop; an output nothing else reads goes with its buffer.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/LoomRT/IR/LoomRTDialect.h"
#include "loom/Dialect/LoomRT/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

namespace mlir {
namespace loomrt {
#define GEN_PASS_DEF_LOOMMERGEKERNELS
#include "loom/Dialect/LoomRT/Transforms/Passes.h.inc"
} // namespace loomrt
} // namespace mlir

using namespace mlir;

namespace {

ArrayRef<int64_t> loopShape(loomrt::KernelOp kernel) {
  return cast<MemRefType>(kernel.getOuts()[0].getType()).getShape();
}

/// The roots (loomrt::rootBuffer) of `values`.
SmallVector<Value> roots(ValueRange values) {
  SmallVector<Value> result;
  for (Value v : values)
    result.push_back(loomrt::rootBuffer(v));
  return result;
}

/// Whether an operand of `op` is a buffer with one of `bufferRoots`.
bool uses(Operation *op, ArrayRef<Value> bufferRoots) {
  return llvm::any_of(op->getOperands(), [&](Value v) {
    return isa<MemRefType>(v.getType()) &&
           llvm::is_contained(bufferRoots, loomrt::rootBuffer(v));
  });
}

/// Whether `out` (an output of `producer`) is read by an op other than
/// `producer` and `consumer`, or is no loomrt.alloc (an argument or
/// result of the step: its value is the point).
bool keptAfterMerge(Value out, loomrt::KernelOp producer,
                    loomrt::KernelOp consumer) {
  if (!out.getDefiningOp<loomrt::AllocOp>())
    return true;
  return llvm::any_of(out.getUsers(), [&](Operation *user) {
    return user != producer.getOperation() && user != consumer.getOperation();
  });
}

/// Where a merged kernel runs.
enum class Place { Consumer, Producer };

/// Whether the producer can run where the consumer is: nothing in between
/// writes its inputs, and nothing in between allocates a buffer unless
/// every input lives past the consumer anyway (an input read there must
/// not stay live across an allocation, which could raise the memory
/// plan's peak).
bool producerMovesDown(loomrt::KernelOp producer, loomrt::KernelOp consumer) {
  SmallVector<Value> inputs = roots(producer.getIns());
  if (loomrt::touchedBetween(producer, consumer, inputs))
    return false;
  if (llvm::all_of(inputs, [&](Value in) { return loomrt::livesPast(in, consumer); }))
    return true;
  for (Operation *op = producer->getNextNode(); op != consumer;
       op = op->getNextNode())
    if (isa<loomrt::AllocOp>(op))
      return false;
  return true;
}

/// Whether the consumer can run where the producer is: every producer
/// output goes (only the consumer read it); the consumer's other inputs
/// exist before the producer and nothing in between writes them or touches
/// its outputs; its outputs allocated in between (which then live from
/// the producer on) hold no more bytes than the producer's outputs that
/// go, so no point in between holds more than before.
bool consumerMovesUp(loomrt::KernelOp producer, loomrt::KernelOp consumer) {
  int64_t freed = 0, extended = 0;
  for (Value out : producer.getOuts()) {
    if (keptAfterMerge(out, producer, consumer))
      return false;
    freed += loomrt::bufferBytes(out.getType());
  }
  SmallVector<Value> others;
  for (Value in : consumer.getIns()) {
    if (llvm::is_contained(producer.getOuts(), in))
      continue;
    // The value and the buffer it views exist before the producer.
    for (Value v : {in, loomrt::rootBuffer(in)})
      if (Operation *def = v.getDefiningOp();
          def && (def->getBlock() != producer->getBlock() ||
                  !def->isBeforeInBlock(producer)))
        return false;
    others.push_back(loomrt::rootBuffer(in));
  }
  SmallVector<Value> outRoots;
  for (Value out : consumer.getOuts()) {
    Value root = loomrt::rootBuffer(out);
    outRoots.push_back(root);
    if (root != out)
      return false; // a view: its defining op would have to move too
    if (auto alloc = out.getDefiningOp<loomrt::AllocOp>();
        alloc && producer->isBeforeInBlock(alloc))
      extended += loomrt::bufferBytes(out.getType());
    else if (Operation *def = out.getDefiningOp();
             def && !def->isBeforeInBlock(producer))
      return false;
  }
  return extended <= freed &&
         !loomrt::touchedBetween(producer, consumer, others) &&
         !loomrt::touchedBetween(producer, consumer, outRoots,
                                 /*orRead=*/true);
}

/// The kernel `producer` merges into and where the merged kernel runs, or
/// null (Passes.td's conditions).
std::pair<loomrt::KernelOp, Place> mergeTarget(loomrt::KernelOp producer) {
  auto none = std::make_pair(loomrt::KernelOp(), Place::Consumer);
  SmallVector<Value> outRoots = roots(producer.getOuts());
  Operation *next = producer->getNextNode();
  while (next && !uses(next, outRoots))
    next = next->getNextNode();
  auto consumer = dyn_cast_or_null<loomrt::KernelOp>(next);
  if (!consumer || loopShape(consumer) != loopShape(producer) ||
      consumer->getDiscardableAttrDictionary() !=
          producer->getDiscardableAttrDictionary())
    return none;
  // It reads the outputs themselves at the elements it writes, and writes
  // none of them.
  for (auto [j, in] : llvm::enumerate(consumer.getIns()))
    if (llvm::is_contained(outRoots, loomrt::rootBuffer(in)) &&
        (!llvm::is_contained(producer.getOuts(), in) ||
         !loomrt::readsAtWrittenElement(consumer, j)))
      return none;
  SmallVector<Value> consumerOutRoots = roots(consumer.getOuts());
  for (Value root : consumerOutRoots)
    if (llvm::is_contained(outRoots, root))
      return none;
  // Nothing in between touches the producer's outputs, and an input the
  // consumer overwrites is read at the element written.
  SmallVector<Value> inRoots = roots(producer.getIns());
  if (loomrt::touchedBetween(producer, consumer, outRoots, /*orRead=*/true))
    return none;
  for (auto [i, root] : llvm::enumerate(inRoots))
    if (llvm::is_contained(consumerOutRoots, root) &&
        !loomrt::readsAtWrittenElement(producer, i))
      return none;
  if (producerMovesDown(producer, consumer))
    return {consumer, Place::Consumer};
  if (consumerMovesUp(producer, consumer))
    return {consumer, Place::Producer};
  return none;
}

/// `producer` and `consumer` as one kernel, at `place`.
void merge(loomrt::KernelOp producer, loomrt::KernelOp consumer,
           Place place) {
  MLIRContext *ctx = producer.getContext();
  // Inputs: the consumer's (those the producer writes come from its body),
  // then the producer's, each (buffer, strides) once.
  SmallVector<Value> ins;
  SmallVector<SmallVector<int64_t>> strides;
  SmallVector<int64_t> offsets;
  auto input = [&](loomrt::KernelOp kernel, unsigned i) -> unsigned {
    Value buffer = kernel.getIns()[i];
    SmallVector<int64_t> s = loomrt::inputStrides(kernel, i);
    int64_t offset = loomrt::inputOffset(kernel, i);
    for (auto [k, in] : llvm::enumerate(ins))
      if (in == buffer && strides[k] == s && offsets[k] == offset)
        return k;
    ins.push_back(buffer);
    strides.push_back(std::move(s));
    offsets.push_back(offset);
    return ins.size() - 1;
  };
  SmallVector<int64_t> consumerArg(consumer.getIns().size(), -1);
  SmallVector<int64_t> producerArg(producer.getIns().size());
  for (auto [j, in] : llvm::enumerate(consumer.getIns()))
    if (!llvm::is_contained(producer.getOuts(), in))
      consumerArg[j] = input(consumer, j);
  for (auto [i, in] : llvm::enumerate(producer.getIns()))
    producerArg[i] = input(producer, i);

  SmallVector<Value> outs(consumer.getOuts());
  SmallVector<unsigned> keptOuts;
  for (auto [o, out] : llvm::enumerate(producer.getOuts()))
    if (keptAfterMerge(out, producer, consumer)) {
      outs.push_back(out);
      keptOuts.push_back(o);
    }

  ArrayAttr strideAttr;
  DenseI64ArrayAttr offsetAttr;
  SmallVector<int64_t> dense = computeStrides(loopShape(consumer));
  bool offset = llvm::any_of(offsets, [](int64_t o) { return o != 0; });
  if (offset)
    offsetAttr = DenseI64ArrayAttr::get(ctx, offsets);
  if (offset || llvm::any_of(strides, [&](ArrayRef<int64_t> s) {
        return s != ArrayRef(dense);
      })) {
    SmallVector<Attribute> attrs;
    for (ArrayRef<int64_t> s : strides)
      attrs.push_back(DenseI64ArrayAttr::get(ctx, s));
    strideAttr = ArrayAttr::get(ctx, attrs);
  }
  Operation *at = consumer;
  if (place == Place::Producer) {
    // The consumer's outputs allocated after the producer come first.
    at = producer;
    for (Value out : consumer.getOuts())
      if (auto alloc = out.getDefiningOp<loomrt::AllocOp>();
          alloc && producer->isBeforeInBlock(alloc))
        alloc->moveBefore(producer);
  }
  OpBuilder builder(at);
  auto merged = loomrt::KernelOp::create(
      builder, consumer.getLoc(), ins, outs,
      builder.getStringAttr(producer.getOrigin() + "+" +
                            consumer.getOrigin()),
      strideAttr, offsetAttr);
  for (NamedAttribute attr : consumer->getDiscardableAttrs())
    merged->setAttr(attr.getName(), attr.getValue());

  Block *body = builder.createBlock(&merged.getBody());
  for (Value in : ins)
    body->addArgument(cast<MemRefType>(in.getType()).getElementType(),
                      merged.getLoc());
  builder.setInsertionPointToStart(body);
  // The producer's scalars first, then the consumer's, reading the
  // producer's yielded values where it read its outputs.
  Block &first = producer.getBody().front();
  IRMapping map;
  for (auto [i, arg] : llvm::enumerate(first.getArguments()))
    map.map(arg, body->getArgument(producerArg[i]));
  for (Operation &op : first.without_terminator())
    builder.clone(op, map);
  SmallVector<Value> produced;
  for (Value v : cast<loomrt::YieldOp>(first.getTerminator()).getValues())
    produced.push_back(map.lookupOrDefault(v));

  Block &second = consumer.getBody().front();
  for (auto [j, arg] : llvm::enumerate(second.getArguments())) {
    if (consumerArg[j] >= 0) {
      map.map(arg, body->getArgument(consumerArg[j]));
      continue;
    }
    auto it = llvm::find(producer.getOuts(), consumer.getIns()[j]);
    map.map(arg, produced[it - producer.getOuts().begin()]);
  }
  for (Operation &op : second.without_terminator())
    builder.clone(op, map);
  SmallVector<Value> yielded;
  for (Value v : cast<loomrt::YieldOp>(second.getTerminator()).getValues())
    yielded.push_back(map.lookupOrDefault(v));
  for (unsigned o : keptOuts)
    yielded.push_back(produced[o]);
  loomrt::YieldOp::create(builder, merged.getLoc(), yielded);

  SmallVector<Value> dropped;
  for (auto [o, out] : llvm::enumerate(producer.getOuts()))
    if (!llvm::is_contained(keptOuts, static_cast<unsigned>(o)))
      dropped.push_back(out);
  consumer.erase();
  producer.erase();
  for (Value out : dropped)
    if (out.use_empty())
      out.getDefiningOp()->erase();
}

struct MergeKernels
    : public mlir::loomrt::impl::LoomMergeKernelsBase<MergeKernels> {
  void runOnOperation() override {
    // Until no kernel merges: a merged kernel may merge again (AdamW's
    // moment updates, one after the other, into the parameter's).
    for (bool changed = true; changed;) {
      changed = false;
      SmallVector<loomrt::KernelOp> kernels;
      getOperation().walk(
          [&](loomrt::KernelOp kernel) { kernels.push_back(kernel); });
      llvm::SmallPtrSet<Operation *, 16> erased;
      for (loomrt::KernelOp producer : kernels) {
        if (erased.contains(producer))
          continue;
        if (auto [consumer, place] = mergeTarget(producer); consumer) {
          erased.insert(producer);
          erased.insert(consumer);
          merge(producer, consumer, place);
          changed = true;
        }
      }
    }
  }
};

} // namespace

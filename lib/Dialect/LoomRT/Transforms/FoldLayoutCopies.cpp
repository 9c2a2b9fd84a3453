//===- FoldLayoutCopies.cpp - Readers of a layout copy read its source ----===//
//
// Implements -loom-fold-layout-copies (see Passes.td for the contract): a
// copy that fills a buffer with a transpose, slice or broadcast of another
// goes when its readers, kernels and copies, can read the other buffer
// through composed strides and offsets.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/LoomRT/IR/LoomRTDialect.h"
#include "loom/Dialect/LoomRT/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace loomrt {
#define GEN_PASS_DEF_LOOMFOLDLAYOUTCOPIES
#include "loom/Dialect/LoomRT/Transforms/Passes.h.inc"
} // namespace loomrt
} // namespace mlir

using namespace mlir;

namespace {

/// A strided read: element `offset + sum(i_k * strides[k])` for each index
/// `i` of `loop`.
struct Read {
  SmallVector<int64_t> loop, strides;
  int64_t offset = 0;
};

/// `read`, of a buffer `copy` filled in the row-major order of its shape,
/// as a read of the copy's source; nullopt when an index it reads does not
/// map onto the copy's dimensions without a carry.
std::optional<Read> compose(const Read &read, loomrt::CopyOp copy) {
  ArrayRef<int64_t> shape = copy.getShape();
  ArrayRef<int64_t> sourceStrides = copy.getSourceStrides();
  SmallVector<int64_t> dense = computeStrides(shape);
  // The copy's index of the first element read, and the last index each
  // of its dimensions reaches.
  SmallVector<int64_t> last(shape.size());
  int64_t rest = read.offset;
  for (auto [m, stride] : llvm::enumerate(dense)) {
    last[m] = rest / stride;
    rest %= stride;
  }
  Read composed;
  composed.loop = read.loop;
  composed.offset = static_cast<int64_t>(copy.getSourceOffset());
  for (auto [m, index] : llvm::enumerate(last))
    composed.offset += index * sourceStrides[m];
  for (auto [size, stride] : llvm::zip(read.loop, read.strides)) {
    if (size == 1 || stride == 0) {
      composed.strides.push_back(0);
      continue;
    }
    // Row-major strides of dimensions longer than 1 differ: at most one
    // dimension steps by `stride`.
    auto dim = llvm::find_if(llvm::seq<size_t>(0, shape.size()), [&](size_t m) {
      return shape[m] > 1 && dense[m] == stride;
    });
    if (dim == llvm::seq<size_t>(0, shape.size()).end())
      return std::nullopt;
    last[*dim] += size - 1;
    composed.strides.push_back(sourceStrides[*dim]);
  }
  for (auto [index, size] : llvm::zip(last, shape))
    if (index >= size)
      return std::nullopt;
  return composed;
}

/// Whether `read` reads along its innermost dimension (of more than one
/// index) contiguously, or reads one element.
bool innermostContiguous(const Read &read) {
  for (size_t k = read.loop.size(); k-- > 0;)
    if (read.loop[k] > 1)
      return read.strides[k] <= 1;
  return true;
}

/// One use of the copy's buffer by a reader, with the read it makes.
struct Reader {
  OpOperand *use;
  Read read;
};

/// The read the use `use` makes, when it is a kernel's input or a copy's
/// source.
std::optional<Read> readOf(OpOperand &use) {
  Operation *owner = use.getOwner();
  unsigned index = use.getOperandNumber();
  if (auto kernel = dyn_cast<loomrt::KernelOp>(owner)) {
    if (index >= kernel.getIns().size())
      return std::nullopt;
    Read read;
    read.loop = llvm::to_vector(
        cast<MemRefType>(kernel.getOuts().front().getType()).getShape());
    read.strides = loomrt::inputStrides(kernel, index);
    read.offset = loomrt::inputOffset(kernel, index);
    return read;
  }
  if (auto copy = dyn_cast<loomrt::CopyOp>(owner)) {
    if (use.get() != copy.getSource() || copy.getSource() == copy.getTarget())
      return std::nullopt;
    return Read{llvm::to_vector(copy.getShape()),
                llvm::to_vector(copy.getSourceStrides()),
                static_cast<int64_t>(copy.getSourceOffset())};
  }
  return std::nullopt;
}

/// The readers of `copy`'s buffer when the copy folds (Passes.td) but for
/// the memory condition (extendsLargerSource), else nullopt.
std::optional<SmallVector<Reader>> foldableReaders(loomrt::CopyOp copy) {
  Value target = copy.getTarget();
  auto alloc = target.getDefiningOp<loomrt::AllocOp>();
  ArrayRef<int64_t> shape = copy.getShape();
  auto type = cast<MemRefType>(target.getType());
  auto sourceType = cast<MemRefType>(copy.getSource().getType());
  if (!alloc || copy.getTargetOffset() != 0 ||
      copy.getTargetStrides() != ArrayRef(computeStrides(shape)) ||
      computeProduct(shape) != type.getNumElements() ||
      llvm::is_contained(shape, 0) ||
      sourceType.getElementType() != type.getElementType() ||
      loomrt::rootBuffer(copy.getSource()) == target)
    return std::nullopt;
  SmallVector<Reader> readers;
  for (Value alias : loomrt::aliasesOf(target))
    for (OpOperand &use : alias.getUses()) {
      Operation *owner = use.getOwner();
      if (owner == copy || isa<loomrt::ViewOp>(owner))
        continue;
      // Any other use (a write: a kernel's output, a copy's target) is no
      // read that folds.
      std::optional<Read> read = readOf(use);
      if (!read || owner->getBlock() != copy->getBlock() ||
          !copy->isBeforeInBlock(owner))
        return std::nullopt;
      std::optional<Read> composed = compose(*read, copy);
      if (!composed)
        return std::nullopt;
      readers.push_back({&use, std::move(*composed)});
    }
  if (readers.empty())
    return std::nullopt;
  if (readers.size() > 1 &&
      llvm::any_of(readers, [](const Reader &r) {
        return !innermostContiguous(r.read);
      }))
    return std::nullopt;
  Value source = loomrt::rootBuffer(copy.getSource());
  for (const Reader &r : readers)
    if (loomrt::touchedBetween(copy, r.use->getOwner(), {source}))
      return std::nullopt;
  return readers;
}

/// Whether folding `copy` (its `readers` reading its source) keeps a source
/// larger than the copy's buffer live longer.
bool extendsLargerSource(loomrt::CopyOp copy, ArrayRef<Reader> readers) {
  Value source = loomrt::rootBuffer(copy.getSource());
  if (loomrt::bufferBytes(source.getType()) <=
      loomrt::bufferBytes(copy.getTarget().getType()))
    return false;
  return llvm::any_of(readers, [&](const Reader &r) {
    return !loomrt::livesPast(source, r.use->getOwner());
  });
}

/// Makes `reader` read `source` with its composed read.
void redirect(const Reader &reader, Value source) {
  Operation *owner = reader.use->getOwner();
  MLIRContext *ctx = owner->getContext();
  if (auto copy = dyn_cast<loomrt::CopyOp>(owner)) {
    copy.getSourceMutable().assign(source);
    copy.setSourceStrides(reader.read.strides);
    copy.setSourceOffset(reader.read.offset);
    return;
  }
  auto kernel = cast<loomrt::KernelOp>(owner);
  unsigned index = reader.use->getOperandNumber();
  SmallVector<Attribute> strides;
  SmallVector<int64_t> offsets;
  for (unsigned i = 0, e = kernel.getIns().size(); i < e; ++i) {
    bool folded = i == index;
    strides.push_back(DenseI64ArrayAttr::get(
        ctx, folded ? ArrayRef<int64_t>(reader.read.strides)
                    : ArrayRef<int64_t>(loomrt::inputStrides(kernel, i))));
    offsets.push_back(folded ? reader.read.offset
                             : loomrt::inputOffset(kernel, i));
  }
  kernel.getInsMutable()[index].assign(source);
  kernel.setInStridesAttr(ArrayAttr::get(ctx, strides));
  if (llvm::any_of(offsets, [](int64_t o) { return o != 0; }))
    kernel.setInOffsets(offsets);
  else
    kernel.removeInOffsetsAttr();
}

/// Makes `readers` read `copy`'s source; erases the copy (into `erased`)
/// and its buffer.
void apply(loomrt::CopyOp copy, ArrayRef<Reader> readers,
           llvm::SmallPtrSetImpl<Operation *> &erased) {
  Value source = copy.getSource();
  for (const Reader &reader : readers)
    redirect(reader, source);
  Value target = copy.getTarget();
  erased.insert(copy);
  copy.erase();
  // The buffer and its views, now unused.
  SmallVector<Value> aliases = loomrt::aliasesOf(target);
  for (Value alias : llvm::reverse(aliases))
    if (alias.use_empty())
      alias.getDefiningOp()->erase();
}

/// Folds `copy` when it folds; whether it did. A copy that would keep its
/// larger source live longer folds with the other copies of that source
/// (the pieces of a split) when together they free at least its bytes.
bool fold(loomrt::CopyOp copy, llvm::SmallPtrSetImpl<Operation *> &erased) {
  std::optional<SmallVector<Reader>> readers = foldableReaders(copy);
  if (!readers)
    return false;
  if (!extendsLargerSource(copy, *readers)) {
    apply(copy, *readers, erased);
    return true;
  }
  Value source = loomrt::rootBuffer(copy.getSource());
  SmallVector<loomrt::CopyOp> group;
  int64_t freed = 0;
  for (Value alias : loomrt::aliasesOf(source))
    for (Operation *user : alias.getUsers())
      if (auto sibling = dyn_cast<loomrt::CopyOp>(user);
          sibling && sibling.getSource() == alias &&
          foldableReaders(sibling)) {
        group.push_back(sibling);
        freed += loomrt::bufferBytes(sibling.getTarget().getType());
      }
  if (freed < loomrt::bufferBytes(source.getType()))
    return false;
  for (loomrt::CopyOp sibling : group)
    if (std::optional<SmallVector<Reader>> r = foldableReaders(sibling))
      apply(sibling, *r, erased);
  return true;
}

struct LoomFoldLayoutCopies
    : public loomrt::impl::LoomFoldLayoutCopiesBase<LoomFoldLayoutCopies> {
  void runOnOperation() override {
    getOperation().walk([](func::FuncOp func) {
      for (bool changed = true; changed;) {
        changed = false;
        SmallVector<loomrt::CopyOp> copies;
        func.walk([&](loomrt::CopyOp copy) { copies.push_back(copy); });
        // A fold may erase copies later in the list (a split's pieces).
        llvm::SmallPtrSet<Operation *, 8> erased;
        for (loomrt::CopyOp copy : copies)
          if (!erased.contains(copy))
            changed |= fold(copy, erased);
      }
    });
  }
};

} // namespace

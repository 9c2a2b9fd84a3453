//===- LoomRTOps.td - The runtime-level loomrt dialect -----*- tablegen -*-===//
//
// `loomrt` is what the emitters print: explicit buffers (memrefs), one op per
// kernel launch or runtime-library call, asynchronous communication handles.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOMRT_IR_LOOMRTOPS_TD
#define LOOM_DIALECT_LOOMRT_IR_LOOMRTOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"

def LoomRT_Dialect : Dialect {
  let name = "loomrt";
  let cppNamespace = "::mlir::loomrt";
  let summary = "Runtime-level ops: buffers, kernel launches, library calls, communication";
  let description = [{
    A training step after `convert-loom-to-loomrt`: every tensor lives in a
    buffer (a `memref` with the identity layout), and every op either
    launches one kernel the emitter generates (`kernel`, `reduce`, `copy`,
    `iota`) or calls one routine of the runtime library (`gemm`, `softmax`,
    `layer_norm`, `rms_norm`, `cross_entropy`, `gather`, `scatter_add`,
    communication). Ops write their results into their `outs` buffers
    (destination-passing style), so the order of ops is the order of
    execution and the emitter prints them one by one.

    Buffers are the function's arguments (inputs, then one per result of
    the original function), `alloc`ed intermediates (which
    `loom-memory-plan` places at offsets of one arena and frees after their
    last use), `view`s of other buffers, and read-only `constant`s.

    Each kernel op keeps the ops it came from in `origin` (e.g.
    `"add+gelu"`), which the emitter uses to name and comment the code.
  }];
  let useDefaultTypePrinterParser = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

class LoomRT_Op<string mnemonic, list<Trait> traits = []>
    : Op<LoomRT_Dialect, mnemonic, traits>;

def LoomRT_HandleType : TypeDef<LoomRT_Dialect, "Handle"> {
  let mnemonic = "handle";
  let summary = "An in-flight asynchronous communication";
  let description = [{
    Returned by the `*_start` ops and consumed by `wait`: between the two,
    the buffers involved must not be touched, and compute may overlap the
    transfer.
  }];
}

def LoomRT_Buffer : MemRefRankOf<[F32, F16, BF16, I64, I32, I1], [0, 1, 2, 3, 4, 5, 6, 7, 8]>;
def LoomRT_F32Buffer : MemRefOf<[F32]>;
def LoomRT_IndexBuffer : MemRefOf<[I64, I32]>;
// GEMM and softmax operands: f32, or bf16 under --precision bf16 (f32
// accumulation and statistics).
def LoomRT_GemmBuffer : MemRefOf<[F32, BF16]>;

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

def LoomRT_AllocOp : LoomRT_Op<"alloc", [MemoryEffects<[MemAlloc]>]> {
  let summary = "An intermediate buffer in the step's arena";
  let description = [{
    A buffer for one intermediate value. `category` says what it holds for
    the memory report (`activation`, `gradient`, `optimizer`, `workspace`).
    `loom-memory-plan` sets `offset`, its byte offset in the arena, and
    inserts the matching `dealloc` after its last use.

    ```mlir
    %0 = loomrt.alloc {category = "activation", offset = 256 : i64} : memref<4x8xf32>
    ```
  }];
  let arguments = (ins StrAttr:$category, OptionalAttr<I64Attr>:$offset);
  let results = (outs LoomRT_Buffer:$buffer);
  let assemblyFormat = "attr-dict `:` type($buffer)";
}

def LoomRT_DeallocOp : LoomRT_Op<"dealloc", [MemoryEffects<[MemFree]>]> {
  let summary = "The end of an intermediate buffer's life";
  let arguments = (ins LoomRT_Buffer:$buffer);
  let assemblyFormat = "$buffer attr-dict `:` type($buffer)";
}

def LoomRT_ViewOp : LoomRT_Op<"view", [Pure]> {
  let summary = "The same bytes with another shape (a reshape)";
  let description = [{
    `result` aliases `source`: same element type and element count, both
    row-major. A reshape never copies.
  }];
  let arguments = (ins LoomRT_Buffer:$source);
  let results = (outs LoomRT_Buffer:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `to` type($result)";
  let hasVerifier = 1;
}

def LoomRT_ConstantOp : LoomRT_Op<"constant", [Pure]> {
  let summary = "A read-only buffer with known contents";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs LoomRT_Buffer:$buffer);
  let assemblyFormat = "$value attr-dict `:` type($buffer)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Generated kernels
//===----------------------------------------------------------------------===//

def LoomRT_KernelOp : LoomRT_Op<"kernel", [
    AttrSizedOperandSegments, SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "A fused elementwise loop nest";
  let description = [{
    One loop over the elements of the `outs` buffers (all of one shape). The
    body receives one scalar per `ins` buffer and yields one scalar per
    `outs` buffer; it holds `arith` and `math` ops on scalars. An input is
    read at the loop index, or, where `in_strides` gives its strides (in
    elements, one per loop dimension, 0 for a broadcast dimension), at the
    sum of index times stride: a fused `broadcast` or `transpose`.
    `in_offsets` (with `in_strides`; one per input, in elements) starts an
    input's reads that far in: a fused `slice`. Every element read lies in
    its buffer.

    ```mlir
    loomrt.kernel ins(%a, %b : memref<4x8xf32>, memref<8xf32>)
        outs(%c : memref<4x8xf32>) {origin = "broadcast+add+gelu",
        in_strides = [array<i64: 8, 1>, array<i64: 0, 1>]} {
    ^bb0(%x: f32, %y: f32):
      %s = arith.addf %x, %y : f32
      loomrt.yield %s : f32
    }
    ```
  }];
  let arguments = (ins Arg<Variadic<LoomRT_Buffer>, "", [MemRead]>:$ins,
                       Arg<Variadic<LoomRT_Buffer>, "", [MemWrite]>:$outs,
                       StrAttr:$origin,
                       OptionalAttr<ArrayAttr>:$in_strides,
                       OptionalAttr<DenseI64ArrayAttr>:$in_offsets);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    (`ins` `(` $ins^ `:` type($ins) `)`)? `outs` `(` $outs `:` type($outs) `)`
    attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
}

def LoomRT_YieldOp : LoomRT_Op<"yield", [Pure, Terminator,
    ParentOneOf<["KernelOp", "ReduceOp"]>]> {
  let summary = "The scalars a kernel body writes, one per output (a "
                "reduce body: the element it folds)";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let builders = [OpBuilder<(ins), [{ /* empty */ }]>];
}

def LoomRT_ReduceKindAttr : I32EnumAttr<"ReduceKind", "reduction of a reduce op", [
    I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"mean", 1>,
    I32EnumAttrCase<"max", 2>]> {
  let cppNamespace = "::mlir::loomrt";
}

def LoomRT_ReduceOp : LoomRT_Op<"reduce"> {
  let summary = "A generated reduction loop nest (sum, mean or max over dims)";
  let description = [{
    `output` holds the elements reduced over `dims` (the kept dimensions in
    order). Sums accumulate in double and are rounded once, as `loom-run`
    does; `max` propagates NaN.

    Without a body the elements are those of the one input. With a body
    (the elementwise ops loom-fuse-elementwise fused into the reduction,
    e.g. a VJP's product before its sum), the inputs all have one shape,
    the body receives one scalar per input, read at the same index, and
    yields the element to fold (of the output's element type: the value
    the unfused producer would have stored), so nothing is written between
    the product and the sum.

    ```mlir
    loomrt.reduce sum [1] ins(%dy, %y : memref<4x8xf32>, memref<4x8xf32>)
        outs(%s : memref<4xf32>) attributes {origin = "mul+reduce_sum"} {
    ^bb0(%a: f32, %b: f32):
      %p = arith.mulf %a, %b : f32
      loomrt.yield %p : f32
    }
    ```
  }];
  let arguments = (ins Arg<Variadic<LoomRT_Buffer>, "", [MemRead]>:$ins,
                       Arg<LoomRT_Buffer, "", [MemWrite]>:$output,
                       LoomRT_ReduceKindAttr:$kind, DenseI64ArrayAttr:$dims,
                       StrAttr:$origin);
  let regions = (region AnyRegion:$body);
  let assemblyFormat = [{
    $kind $dims `ins` `(` $ins `:` type($ins) `)`
    `outs` `(` $output `:` type($output) `)` attr-dict-with-keyword
    ($body^)?
  }];
  let extraClassDeclaration = [{
    /// The reduced shape's buffer: the only input, or the first of the
    /// fused inputs (all of its shape).
    ::mlir::Value getInput() { return getIns().front(); }
    /// Whether a body computes the folded elements from the inputs.
    bool isFused() { return !getBody().empty(); }
  }];
  let hasVerifier = 1;
}

def LoomRT_CopyOp : LoomRT_Op<"copy"> {
  let summary = "A generated strided copy (transpose, slice, broadcast, concat)";
  let description = [{
    For every index `i` of `shape`:
    `target[target_offset + sum(i * target_strides)] =
     source[source_offset + sum(i * source_strides)]` (in elements). A
    stride of 0 in `source_strides` broadcasts.
  }];
  let arguments = (ins Arg<LoomRT_Buffer, "", [MemRead]>:$source, Arg<LoomRT_Buffer, "", [MemWrite]>:$target,
                       DenseI64ArrayAttr:$shape,
                       DenseI64ArrayAttr:$source_strides, I64Attr:$source_offset,
                       DenseI64ArrayAttr:$target_strides, I64Attr:$target_offset,
                       StrAttr:$origin);
  let assemblyFormat = [{
    `ins` `(` $source `:` type($source) `)` `outs` `(` $target `:` type($target) `)` attr-dict
  }];
}

def LoomRT_IotaOp : LoomRT_Op<"iota"> {
  let summary = "Fills a buffer with its index along `dim`";
  let arguments = (ins Arg<LoomRT_Buffer, "", [MemWrite]>:$output, I64Attr:$dim);
  let assemblyFormat = "$dim `outs` `(` $output `:` type($output) `)` attr-dict";
}

//===----------------------------------------------------------------------===//
// Runtime-library calls
//===----------------------------------------------------------------------===//

def LoomRT_GemmOp : LoomRT_Op<"gemm", [AttrSizedOperandSegments]> {
  let summary = "Batched matrix product through BLAS (cuBLAS on GPUs)";
  let description = [{
    For each of `batch` matrices: `c[b] (m x n) = op(a[b]) * op(b[b])`,
    row-major, `op(a)` m x k (stored k x m when `trans_a`), `op(b)` k x n
    (stored n x k when `trans_b`). `a` or `b` may be shared by all batches
    (`a_batched`/`b_batched` false).

    Strided form (`batch_outer`, `a_strides`, `b_strides` all present): the
    operands are read in place from larger tensors, as attention reads its
    heads out of [batch, seq, heads, dim] without copying them. The batch is
    `batch_outer` x (`batch` / `batch_outer`) matrices, and matrix (o, i) of
    `a` starts at element `o * a_strides[0] + i * a_strides[1]` with rows
    `a_strides[2]` apart (BLAS's leading dimension); likewise `b`. `c` is
    dense, as in the plain form; `a_batched`/`b_batched` are then unused.

    `a`, `b` and `c` share one element type: f32, or bf16 (the products
    accumulate in f32 and `c` is rounded once).

    With `bias` (an epilogue, `loom-fuse-gemm-bias`): `c[i][j] = (a b)[i][j]
    + bias[j]`, the bias added to every row as the product is written
    (cuBLASLt's bias epilogue on GPUs; BLAS with beta = 1 over rows of the
    bias on CPUs). Only the plain form of one matrix takes one; `bias` has
    `n` elements of `c`'s type. In bf16 the sum is formed in f32 and
    rounded once (oneDNN's matmul with its bias argument on CPUs).

    With `gelu_input` too (`loom-fuse-gemm-bias`: a tanh GELU that is the
    only kernel reading the biased product): `gelu_input[i][j] = (a b)[i][j]
    + bias[j]`, the pre-activation the backward pass reads, and `c[i][j] =
    0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))` of it (cuBLASLt's
    `CUBLASLT_EPILOGUE_GELU_AUX_BIAS` on GPUs; on CPUs the bias epilogue,
    then the activation in one pass). `gelu_input` has `c`'s type and is
    another buffer.

    With `dgelu_input` (`loom-fuse-gemm-bias`: a tanh `loom.gelu_grad` that
    is the only reader of the product): `c[i][j] = (a b)[i][j] *
    gelu'(dgelu_input[i][j])`, the backward pass's GELU gradient applied as
    the product is written (cuBLASLt's `CUBLASLT_EPILOGUE_DGELU`, the
    forward's `gelu_input` as its auxiliary input; on CPUs one pass after
    the product). Plain form of one f32 matrix, no bias; `dgelu_input` has
    `c`'s type.

    With `accumulate` (`loom-fuse-gemm-accumulate`: a sum of the product
    and a buffer that nothing reads afterwards): `c[i][j] += (a b)[i][j]`,
    the product added onto what `c` holds (BLAS and cuBLAS with
    beta = 1). Plain form of one f32 matrix, no other epilogue.
  }];
  let arguments = (ins Arg<LoomRT_GemmBuffer, "", [MemRead]>:$a, Arg<LoomRT_GemmBuffer, "", [MemRead]>:$b,
                       Arg<LoomRT_GemmBuffer, "", [MemRead, MemWrite]>:$c, I64Attr:$batch, I64Attr:$m,
                       I64Attr:$n, I64Attr:$k, BoolAttr:$trans_a,
                       BoolAttr:$trans_b, BoolAttr:$a_batched,
                       BoolAttr:$b_batched, StrAttr:$origin,
                       OptionalAttr<I64Attr>:$batch_outer,
                       OptionalAttr<DenseI64ArrayAttr>:$a_strides,
                       OptionalAttr<DenseI64ArrayAttr>:$b_strides,
                       Arg<Optional<LoomRT_GemmBuffer>, "", [MemRead]>:$bias,
                       Arg<Optional<LoomRT_F32Buffer>, "", [MemWrite]>:$gelu_input,
                       Arg<Optional<LoomRT_F32Buffer>, "", [MemRead]>:$dgelu_input,
                       UnitAttr:$accumulate);
  let assemblyFormat = [{
    `ins` `(` $a `,` $b `:` type($a) `,` type($b) `)`
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    `outs` `(` $c `:` type($c) `)` (`accumulate` $accumulate^)?
    (`gelu_input` `(` $gelu_input^ `:` type($gelu_input) `)`)?
    (`dgelu_input` `(` $dgelu_input^ `:` type($dgelu_input) `)`)? attr-dict
  }];
  let hasVerifier = 1;
}

def LoomRT_SoftmaxOp : LoomRT_Op<"softmax"> {
  let summary = "Softmax or log-softmax along `axis` (runtime library)";
  let description = [{
    `input` and `output` are f32, or both bf16 (`--precision bf16`: the
    statistics stay f32 inside the kernel and each result is rounded once).
  }];
  let arguments = (ins Arg<LoomRT_GemmBuffer, "", [MemRead]>:$input, Arg<LoomRT_GemmBuffer, "", [MemWrite]>:$output,
                       I64Attr:$axis, BoolAttr:$log, StrAttr:$origin);
  let assemblyFormat = [{
    $axis `ins` `(` $input `:` type($input) `)` `outs` `(` $output `:` type($output) `)` attr-dict
  }];
}

def LoomRT_LayerNormOp : LoomRT_Op<"layer_norm", [AttrSizedOperandSegments]> {
  let summary = "Layer or RMS normalisation over dims [axis, rank) (runtime library)";
  let description = [{
    Input, scale and bias are f32, and so are the statistics. The output is
    f32, or bf16: each f32 result rounded once, as a conversion after the
    norm would (`loom-fuse-norm-narrowing`).
  }];
  let arguments = (ins Arg<LoomRT_F32Buffer, "", [MemRead]>:$input,
                       Arg<Optional<LoomRT_F32Buffer>, "", [MemRead]>:$scale,
                       Arg<Optional<LoomRT_F32Buffer>, "", [MemRead]>:$bias,
                       Arg<LoomRT_GemmBuffer, "", [MemWrite]>:$output, I64Attr:$axis,
                       F64Attr:$epsilon, BoolAttr:$rms, StrAttr:$origin);
  let assemblyFormat = [{
    $axis `ins` `(` $input (`scale` $scale^)? (`bias` $bias^)? `:` type(operands) `)`
    `outs` `(` $output `)` attr-dict
  }];
}

def LoomRT_NormGradOp : LoomRT_Op<"norm_grad", [AttrSizedOperandSegments]> {
  let summary = "Gradients of a layer or RMS norm over dims [axis, rank) (runtime library)";
  let description = [{
    `loom.norm_grad`: from the norm's input and its result's cotangent, the
    input's gradient and the sums over the leading dimensions of
    `cotangent * xhat` (the scale's gradient) and of `cotangent` (a layer
    norm's bias's). The statistics are recomputed per row, as the forward
    norm computes them, in f32. The input, scale and gradients are f32; the
    cotangent is f32, or bf16 read widened (`loom-fuse-norm-grad`: the
    product that computes it under `--precision bf16`). With `residual`,
    the input gradient is written added onto it (`loom-fuse-norm-grad`: a
    residual stream's gradient, the sum of the norm's and the skip's).
  }];
  let arguments = (ins Arg<LoomRT_F32Buffer, "", [MemRead]>:$input,
                       Arg<LoomRT_GemmBuffer, "", [MemRead]>:$cotangent,
                       Arg<Optional<LoomRT_F32Buffer>, "", [MemRead]>:$scale,
                       Arg<Optional<LoomRT_F32Buffer>, "", [MemRead]>:$residual,
                       Arg<LoomRT_F32Buffer, "", [MemWrite]>:$input_grad,
                       Arg<LoomRT_F32Buffer, "", [MemWrite]>:$scale_grad,
                       Arg<LoomRT_F32Buffer, "", [MemWrite]>:$bias_grad,
                       I64Attr:$axis, F64Attr:$epsilon, BoolAttr:$rms,
                       StrAttr:$origin);
  let assemblyFormat = [{
    $axis `ins` `(` $input `,` $cotangent `:` type($input) `,`
    type($cotangent) `)` (`scale` `(` $scale^ `:` type($scale) `)`)?
    (`residual` `(` $residual^ `:` type($residual) `)`)?
    `outs` `(` $input_grad `,` $scale_grad `,` $bias_grad `:`
    type($input_grad) `,` type($scale_grad) `,` type($bias_grad) `)` attr-dict
  }];
  let hasVerifier = 1;
}

def LoomRT_CrossEntropyOp : LoomRT_Op<"cross_entropy"> {
  let summary = "Softmax cross-entropy of logits [n, c] and labels [n] (runtime library)";
  let description = [{
    With `probs` ([n, c], f32), also the softmax of every row of the logits,
    ignored samples' rows included: the same values as a `loomrt.softmax`
    of the logits (`loom-fuse-loss-softmax`: the loss's gradient reads them).
  }];
  let arguments = (ins Arg<LoomRT_F32Buffer, "", [MemRead]>:$logits, Arg<LoomRT_IndexBuffer, "", [MemRead]>:$labels,
                       Arg<LoomRT_F32Buffer, "", [MemWrite]>:$output,
                       Arg<Optional<LoomRT_F32Buffer>, "", [MemWrite]>:$probs,
                       StrAttr:$reduction, OptionalAttr<I64Attr>:$ignore_index,
                       StrAttr:$origin);
  let assemblyFormat = [{
    $reduction `ins` `(` $logits `,` $labels `:` type($logits) `,` type($labels) `)`
    `outs` `(` $output `:` type($output) `)`
    (`probs` `(` $probs^ `:` type($probs) `)`)? attr-dict
  }];
  let hasVerifier = 1;
}

def LoomRT_GatherOp : LoomRT_Op<"gather"> {
  let summary = "Rows of `data` along `axis` picked by `indices` (runtime library)";
  let arguments = (ins Arg<LoomRT_Buffer, "", [MemRead]>:$data, Arg<LoomRT_IndexBuffer, "", [MemRead]>:$indices,
                       Arg<LoomRT_Buffer, "", [MemWrite]>:$output, I64Attr:$axis, StrAttr:$origin);
  let assemblyFormat = [{
    $axis `ins` `(` $data `,` $indices `:` type($data) `,` type($indices) `)`
    `outs` `(` $output `:` type($output) `)` attr-dict
  }];
}

def LoomRT_ScatterAddOp : LoomRT_Op<"scatter_add"> {
  let summary = "`target` plus `updates` added at `indices` along `axis` (runtime library)";
  let arguments = (ins Arg<LoomRT_F32Buffer, "", [MemRead]>:$target, Arg<LoomRT_IndexBuffer, "", [MemRead]>:$indices,
                       Arg<LoomRT_F32Buffer, "", [MemRead]>:$updates, Arg<LoomRT_F32Buffer, "", [MemWrite]>:$output,
                       I64Attr:$axis, StrAttr:$origin);
  let assemblyFormat = [{
    $axis `ins` `(` $target `,` $indices `,` $updates `:` type($target) `,`
    type($indices) `,` type($updates) `)` `outs` `(` $output `:` type($output) `)` attr-dict
  }];
}

//===----------------------------------------------------------------------===//
// Asynchronous communication
//===----------------------------------------------------------------------===//

// A collective names the group it runs in as upstream's shard ops do: the
// module's device mesh `shard.grid @mesh(shape = DxPxT)` and one of its axes
// (dp = 0, pp = 1, tp = 2; loom/Support/Mesh.h). The emitter maps the axis
// to the runtime's communicator of that axis.
class LoomRT_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : LoomRT_Op<mnemonic, traits # [
        DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  code commonExtraClassDeclaration = [{
    /// The mesh axis of the group (grid_axes holds exactly one).
    ::loom::MeshAxis getMeshAxis() {
      return ::loom::kMeshAxes[getGridAxes().front()];
    }
  }];
  let extraClassDeclaration = commonExtraClassDeclaration;
}

def LoomRT_AllReduceStartOp : LoomRT_CollectiveOp<"all_reduce_start"> {
  let summary = "Starts an in-place all-reduce of `buffer` over a mesh axis";
  let description = [{
    Returns a handle; the reduced values are in `buffer` once `wait` on it
    returns. `reduction` is `sum`, `max`, `min` or `avg`; the group is the
    ranks that differ from this one only along `grid_axes` of `grid`.

    `row_sparse` (from `loom.row_sparse`, a data-parallel embedding
    gradient; `sum` only, rank >= 1): the same sum, exchanged by rows
    (dimension 0): each rank sends the indices and values of its rows
    that hold a nonzero, every rank adds all of them into a zeroed buffer
    in rank order (`rowSparseAllReduceStart`, docs/training.md).

    ```mlir
    %h = loomrt.all_reduce_start %buf on @mesh grid_axes = [2] {reduction = "sum"} : memref<4x8xf32>
    ```
  }];
  let arguments = (ins Arg<LoomRT_F32Buffer, "", [MemRead, MemWrite]>:$buffer, StrAttr:$reduction,
                       FlatSymbolRefAttr:$grid, DenseI16ArrayAttr:$grid_axes,
                       UnitAttr:$row_sparse);
  let results = (outs LoomRT_HandleType:$handle);
  let assemblyFormat = [{
    $buffer `on` $grid `grid_axes` `=` $grid_axes attr-dict `:` type($buffer)
  }];
  let hasVerifier = 1;
}

def LoomRT_SendStartOp : LoomRT_CollectiveOp<"send_start"> {
  let summary = "Starts sending `buffer` to a rank of a mesh axis";
  let description = [{
    Returns a handle; `buffer` must stay unchanged (and allocated) until
    `wait` on it returns. The group is the ranks along `grid_axes` of
    `grid` (as for `all_reduce_start`), `peer` the receiving rank's index in
    the group, `tag`
    matches the message with the peer's `recv_start` (unique per direction
    within a step). `convert-loom-to-loomrt` sends a copy of the value and
    waits at the end of the step; `loom-memory-plan` keeps a buffer live
    until the wait on every handle started on it.

    ```mlir
    %h = loomrt.send_start %buf on @mesh grid_axes = [1] {peer = 1 : i64, tag = 0 : i64} : memref<4x8xf32>
    loomrt.wait %h
    ```
  }];
  let arguments = (ins Arg<LoomRT_Buffer, "", [MemRead]>:$buffer, FlatSymbolRefAttr:$grid,
                       DenseI16ArrayAttr:$grid_axes, I64Attr:$peer,
                       I64Attr:$tag);
  let results = (outs LoomRT_HandleType:$handle);
  let assemblyFormat = [{
    $buffer `on` $grid `grid_axes` `=` $grid_axes attr-dict `:` type($buffer)
  }];
}

def LoomRT_RecvStartOp : LoomRT_CollectiveOp<"recv_start"> {
  let summary = "Starts receiving into `buffer` from a rank of a mesh axis";
  let description = [{
    Returns a handle; `buffer` holds the message once `wait` on it returns
    (`convert-loom-to-loomrt` waits right before the first use). The group,
    `peer` (the sender's index in the group) and `tag` as for
    `send_start`; the message must have exactly the buffer's size.

    ```mlir
    %h = loomrt.recv_start %buf on @mesh grid_axes = [1] {peer = 0 : i64, tag = 0 : i64} : memref<4x8xf32>
    ```
  }];
  let arguments = (ins Arg<LoomRT_Buffer, "", [MemWrite]>:$buffer, FlatSymbolRefAttr:$grid,
                       DenseI16ArrayAttr:$grid_axes, I64Attr:$peer,
                       I64Attr:$tag);
  let results = (outs LoomRT_HandleType:$handle);
  let assemblyFormat = [{
    $buffer `on` $grid `grid_axes` `=` $grid_axes attr-dict `:` type($buffer)
  }];
}

def LoomRT_GridIndexOp : LoomRT_CollectiveOp<"grid_index"> {
  let summary = "Writes the rank's index along a mesh axis into a 0-d i64 buffer";
  let description = [{
    The result is the calling rank's coordinate along `grid_axes` of `grid`
    (its index in that axis's group: the runtime's `groupRank`).

    ```mlir
    loomrt.grid_index on @mesh grid_axes = [2] outs(%r : memref<i64>)
    ```
  }];
  let arguments = (ins Arg<MemRefRankOf<[I64], [0]>, "", [MemWrite]>:$output,
                       FlatSymbolRefAttr:$grid, DenseI16ArrayAttr:$grid_axes);
  let assemblyFormat = [{
    `on` $grid `grid_axes` `=` $grid_axes `outs` `(` $output `:` type($output) `)` attr-dict
  }];
}

//===----------------------------------------------------------------------===//
// Swap (loom-swap)
//===----------------------------------------------------------------------===//

def LoomRT_SwapOutOp : LoomRT_Op<"swap_out"> {
  let summary = "Starts copying a device buffer to the host pool";
  let description = [{
    Asynchronous copy of `source` (an arena buffer) into `target` (a buffer
    of the host pool: `loomrt.alloc {category = "swap"}`), done by the
    runtime's copy thread; returns a handle. `source` must stay unchanged
    and allocated, and `target` unread, until the `wait` on the handle
    (`loom-memory-plan` keeps both live until then). Inserted by
    `loom-swap` after a buffer's last use before a long gap.

    ```mlir
    %h = loomrt.swap_out %act to %host : memref<4x8xf32>, memref<4x8xf32>
    loomrt.wait %h
    ```
  }];
  let arguments = (ins Arg<LoomRT_Buffer, "", [MemRead]>:$source, Arg<LoomRT_Buffer, "", [MemWrite]>:$target);
  let results = (outs LoomRT_HandleType:$handle);
  let assemblyFormat = [{
    $source `to` $target attr-dict `:` type($source) `,` type($target)
  }];
  let hasVerifier = 1;
}

def LoomRT_SwapInOp : LoomRT_Op<"swap_in"> {
  let summary = "Starts copying a host-pool buffer back to the device";
  let description = [{
    Asynchronous copy of `source` (a host-pool buffer written by a
    `swap_out` that was waited on) into `target`, a fresh arena buffer;
    returns a handle. The verifier checks that every other use of `target`
    (and of its views) comes after the `wait` on the handle, in the same
    block: a buffer prefetched too late cannot be read.

    ```mlir
    %b = loomrt.alloc {category = "activation"} : memref<4x8xf32>
    %h = loomrt.swap_in %host to %b : memref<4x8xf32>, memref<4x8xf32>
    loomrt.wait %h
    ```
  }];
  let arguments = (ins Arg<LoomRT_Buffer, "", [MemRead]>:$source, Arg<LoomRT_Buffer, "", [MemWrite]>:$target);
  let results = (outs LoomRT_HandleType:$handle);
  let assemblyFormat = [{
    $source `to` $target attr-dict `:` type($source) `,` type($target)
  }];
  let hasVerifier = 1;
}

def LoomRT_WaitOp : LoomRT_Op<"wait"> {
  let summary = "Completes an asynchronous communication or swap copy";
  let arguments = (ins LoomRT_HandleType:$handle);
  let assemblyFormat = "$handle attr-dict";
}

#endif // LOOM_DIALECT_LOOMRT_IR_LOOMRTOPS_TD

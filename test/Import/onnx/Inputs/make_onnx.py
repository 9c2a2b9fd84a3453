#!/usr/bin/env python3
"""Builds the small ONNX models of the importer tests.

    make_onnx.py NAME OUT.onnx        write model NAME to OUT.onnx
    make_onnx.py --list               list the names

Each model is built with the `onnx.helper` API (initializers with
`numpy_helper`), one per NAME, and checked with `onnx.checker` unless it is
meant to be malformed (the `bad_*` models). Node names are given explicitly so
that tests can check the diagnostics that name them.

Some names write something that is not a plain model: `external*` also write
the external-data file next to OUT, `empty`, `truncated` and `random_bytes`
write broken files.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper, numpy_helper

F32, F16, BF16, F64 = TP.FLOAT, TP.FLOAT16, TP.BFLOAT16, TP.DOUBLE
I64, I32, BOOL = TP.INT64, TP.INT32, TP.BOOL
INT64_MAX = 2**63 - 1

MODELS = {}


def model(check=True):
    """Registers `fn` (returning a ModelProto, or writing OUT itself when it
    takes the output path) under its name, less an `m_` prefix (which keeps
    Python builtins such as `range` unshadowed)."""

    def register(fn):
        MODELS[fn.__name__.removeprefix("m_")] = (fn, check)
        return fn

    return register


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def node(op, inputs, outputs, name=None, **attrs):
    return helper.make_node(op, inputs, outputs, name=name or outputs[0], **attrs)


def init(name, values, dtype=None):
    return numpy_helper.from_array(np.asarray(values, dtype=dtype), name)


def const(name, values, dtype=np.int64):
    """A Constant node producing `name` (value attribute)."""
    return node("Constant", [], [name], name=name,
                value=numpy_helper.from_array(np.asarray(values, dtype=dtype)))


def make(nodes, inputs, outputs, inits=(), opset=18, ir_version=None):
    graph = helper.make_graph(nodes, "test", inputs, outputs,
                              initializer=list(inits))
    m = helper.make_model(graph, producer_name="make_onnx",
                          opset_imports=[helper.make_opsetid("", opset)])
    if ir_version is not None:
        m.ir_version = ir_version
    return m


def arange(shape, dtype=np.float32, start=0.0):
    n = int(np.prod(shape))
    return (np.arange(n, dtype=np.float64) + start).reshape(shape).astype(dtype)


# ---------------------------------------------------------------------------
# Elementwise
# ---------------------------------------------------------------------------

UNARY = ["Neg", "Abs", "Exp", "Log", "Sqrt", "Tanh", "Sigmoid", "Erf", "Relu",
         "Reciprocal"]


@model()
def unary():
    nodes = [node(op, ["x"], [op.lower()]) for op in UNARY]
    outs = [vi(op.lower(), F32, [2, 3]) for op in UNARY]
    return make(nodes, [vi("x", F32, [2, 3])], outs)


@model()
def binary_broadcast():
    nodes = [
        node("Add", ["a", "b"], ["add_trailing"]),   # [2,3,4] + [4]
        node("Mul", ["a", "c"], ["mul_inner"]),      # [2,3,4] * [3,1]
        node("Sub", ["s", "a"], ["sub_scalar"]),     # [] - [2,3,4]
        node("Div", ["a", "e"], ["div_same_rank"]),  # [2,3,4] / [2,1,4]
        node("Add", ["p", "q"], ["add_both"]),       # [3,1] + [1,4]
        node("Mul", ["a", "a"], ["mul_same"]),
        node("Sub", ["ia", "ib"], ["sub_int"]),      # i64 [3] - i64 []
        node("Div", ["ia", "ia"], ["div_int"]),
    ]
    inputs = [vi("a", F32, [2, 3, 4]), vi("b", F32, [4]), vi("c", F32, [3, 1]),
              vi("s", F32, []), vi("e", F32, [2, 1, 4]), vi("p", F32, [3, 1]),
              vi("q", F32, [1, 4]), vi("ia", I64, [3]), vi("ib", I64, [])]
    outs = [vi(n.output[0], I64 if "int" in n.output[0] else F32, None)
            for n in nodes]
    return make(nodes, inputs, outs, opset=14)


@model()
def m_pow():
    nodes = [
        node("Pow", ["x", "y"], ["pow_tensor"]),
        const("two", 2, np.int64),
        node("Pow", ["x", "two"], ["pow_int"]),       # float base, int exponent
        const("half", [0.5], np.float32),
        node("Pow", ["x", "half"], ["pow_const"]),
    ]
    return make(nodes, [vi("x", F32, [2, 3]), vi("y", F32, [3])],
                [vi("pow_tensor", F32, [2, 3]), vi("pow_int", F32, [2, 3]),
                 vi("pow_const", F32, [2, 3])], opset=15)


@model()
def compare_where():
    nodes = [
        node("Equal", ["a", "b"], ["eq"]),
        node("Less", ["a", "b"], ["lt"]),
        node("LessOrEqual", ["a", "b"], ["le"]),
        node("Greater", ["b", "a"], ["gt"]),
        node("GreaterOrEqual", ["a", "b"], ["ge"]),
        node("Not", ["m"], ["not"]),
        node("Where", ["m", "a", "b"], ["where"]),   # b broadcasts
        const("zero", 0.0, np.float32),
        node("Where", ["lt", "a", "zero"], ["where_scalar"]),
    ]
    outs = [vi(n, BOOL, [2, 3]) for n in ["eq", "lt", "le", "gt", "ge", "not"]]
    outs += [vi("where", F32, [2, 3]), vi("where_scalar", F32, [2, 3])]
    return make(nodes, [vi("a", F32, [2, 3]), vi("b", F32, [3]),
                        vi("m", BOOL, [2, 3])], outs, opset=16)


@model()
def cast():
    nodes = [
        node("Cast", ["x"], ["to_i64"], to=I64),
        node("Cast", ["n"], ["to_f32"], to=F32),
        node("Cast", ["x"], ["to_f16"], to=F16),
        node("Cast", ["x"], ["to_bf16"], to=BF16),
        node("Cast", ["x"], ["to_bool"], to=BOOL),
        node("Cast", ["x"], ["same"], to=F32),
        node("Cast", ["n"], ["to_i32"], to=I32),
    ]
    outs = [vi("to_i64", I64, [2, 3]), vi("to_f32", F32, [2, 3]),
            vi("to_f16", F16, [2, 3]), vi("to_bf16", BF16, [2, 3]),
            vi("to_bool", BOOL, [2, 3]), vi("same", F32, [2, 3]),
            vi("to_i32", I32, [2, 3])]
    return make(nodes, [vi("x", F32, [2, 3]), vi("n", I64, [2, 3])], outs,
                opset=19)


@model()
def gelu():
    nodes = [node("Gelu", ["x"], ["default"]),
             node("Gelu", ["x"], ["none"], approximate="none"),
             node("Gelu", ["x"], ["tanh"], approximate="tanh")]
    return make(nodes, [vi("x", F32, [2, 3])],
                [vi(n, F32, [2, 3]) for n in ["default", "none", "tanh"]],
                opset=20)


@model()
def max_min():
    nodes = [node("Max", ["a", "b", "c"], ["max3"]),
             node("Min", ["a", "b"], ["min2"]),
             node("Max", ["a"], ["max1"])]
    return make(nodes, [vi("a", F32, [2, 3]), vi("b", F32, [3]),
                        vi("c", F32, [1, 3])],
                [vi(n, F32, [2, 3]) for n in ["max3", "min2", "max1"]],
                opset=13)


@model()
def identity_dropout():
    nodes = [
        node("Identity", ["x"], ["id"]),
        node("Dropout", ["id"], ["drop"]),
        const("ratio", 0.0, np.float32),
        const("training", False, np.bool_),
        node("Dropout", ["drop", "ratio", "training"], ["drop2", "mask"]),
        node("Relu", ["drop2"], ["y"]),
    ]
    return make(nodes, [vi("x", F32, [2, 3])], [vi("y", F32, [2, 3])],
                opset=13)


@model()
def dropout_training():
    """Dropout with ratio 0.1 in training mode: imported as the identity,
    with a warning."""
    nodes = [
        const("ratio", 0.1, np.float32),
        const("training", True, np.bool_),
        node("Dropout", ["x", "ratio", "training"], ["y"], name="drop"),
    ]
    return make(nodes, [vi("x", F32, [2, 3])], [vi("y", F32, [2, 3])])


# ---------------------------------------------------------------------------
# Contractions
# ---------------------------------------------------------------------------


@model()
def matmul():
    nodes = [
        node("MatMul", ["a", "b"], ["mm_2d"]),            # [4,8] x [8,5]
        node("MatMul", ["a3", "b"], ["mm_3d_2d"]),        # [2,4,8] x [8,5]
        node("MatMul", ["a4", "b3"], ["mm_batched"]),     # [2,3,4,8] x [3,8,5]
        node("MatMul", ["a4b", "b3"], ["mm_batched_both"]),  # [2,1,4,8] x [3,8,5]
        node("MatMul", ["b", "c"], ["mm_2d_3d"]),         # [8,5] x [2,5,6]
        node("MatMul", ["v", "b"], ["mm_vec_mat"]),       # [8] x [8,5]
        node("MatMul", ["a", "v"], ["mm_mat_vec"]),       # [4,8] x [8]
        node("MatMul", ["v", "v"], ["mm_dot"]),           # [8] x [8]
        node("MatMul", ["v", "b3"], ["mm_vec_batched"]),  # [8] x [3,8,5]
        node("MatMul", ["a3", "v"], ["mm_batched_vec"]),  # [2,4,8] x [8]
    ]
    inputs = [vi("a", F32, [4, 8]), vi("b", F32, [8, 5]),
              vi("a3", F32, [2, 4, 8]), vi("a4", F32, [2, 3, 4, 8]),
              vi("b3", F32, [3, 8, 5]), vi("a4b", F32, [2, 1, 4, 8]),
              vi("c", F32, [2, 5, 6]), vi("v", F32, [8])]
    return make(nodes, inputs, [vi(n.output[0], F32, None) for n in nodes],
                opset=21)


@model()
def gemm():
    nodes = [
        node("Gemm", ["a", "b"], ["nn"]),
        node("Gemm", ["at", "b"], ["tn"], transA=1),
        node("Gemm", ["a", "bt"], ["nt"], transB=1),
        node("Gemm", ["at", "bt", "c1"], ["tt_alpha_beta"], transA=1, transB=1,
             alpha=0.5, beta=2.0),
        node("Gemm", ["a", "b", "c2"], ["col_bias"]),
        node("Gemm", ["a", "b", "c0"], ["scalar_bias"], beta=0.25),
        node("Gemm", ["a", "b", "cf"], ["full_bias"]),
    ]
    inputs = [vi("a", F32, [4, 8]), vi("at", F32, [8, 4]),
              vi("b", F32, [8, 5]), vi("bt", F32, [5, 8]),
              vi("c1", F32, [5]), vi("c2", F32, [4, 1]), vi("c0", F32, []),
              vi("cf", F32, [4, 5])]
    return make(nodes, inputs, [vi(n.output[0], F32, [4, 5]) for n in nodes],
                opset=13)


# ---------------------------------------------------------------------------
# Shape ops
# ---------------------------------------------------------------------------


@model()
def reshape():
    nodes = [
        const("s1", [0, -1]), node("Reshape", ["x", "s1"], ["zero_minus1"]),
        const("s2", [-1, 0, 2]), node("Reshape", ["x", "s2"], ["minus1_zero"]),
        const("s3", [24]), node("Reshape", ["x", "s3"], ["flat"]),
        const("s4", [2, 3, 4]), node("Reshape", ["x", "s4"], ["same"]),
        const("s5", [4, 0, 2]), node("Reshape", ["x", "s5"], ["allowzero0"],
                                     allowzero=0),
    ]
    return make(nodes, [vi("x", F32, [2, 3, 4])],
                [vi(n, F32, None) for n in
                 ["zero_minus1", "minus1_zero", "flat", "same", "allowzero0"]],
                opset=14)


@model()
def transpose_flatten():
    nodes = [
        node("Transpose", ["x"], ["default_perm"]),
        node("Transpose", ["x"], ["perm"], perm=[0, 2, 1]),
        node("Flatten", ["x"], ["flat_default"]),
        node("Flatten", ["x"], ["flat0"], axis=0),
        node("Flatten", ["x"], ["flat_neg"], axis=-1),
        node("Flatten", ["x"], ["flat_rank"], axis=3),
    ]
    return make(nodes, [vi("x", F32, [2, 3, 4])],
                [vi(n.output[0], F32, None) for n in nodes], opset=13)


@model()
def expand_concat():
    nodes = [
        const("shape3", [2, 3, 4]), node("Expand", ["x", "shape3"], ["expand3"]),
        const("shape1", [1]), node("Expand", ["x", "shape1"], ["expand_noop"]),
        const("shape_wide", [4]), node("Expand", ["x", "shape_wide"], ["expand_wide"]),
        node("Concat", ["a", "b"], ["concat_last"], axis=-1),
        node("Concat", ["a", "a", "a"], ["concat0"], axis=0),
    ]
    return make(nodes, [vi("x", F32, [3, 1]), vi("a", F32, [2, 3]),
                        vi("b", F32, [2, 5])],
                [vi(n, F32, None) for n in
                 ["expand3", "expand_noop", "expand_wide", "concat_last",
                  "concat0"]], opset=13)


@model()
def m_slice():
    nodes = [
        # x[-3:-1]
        const("st1", [-3]), const("en1", [-1]), const("ax1", [0]),
        node("Slice", ["x", "st1", "en1", "ax1"], ["neg_start_end"]),
        # x[-100:6, 1::2] (axes out of order, start clamped, end = INT64_MAX)
        const("st2", [1, -100]), const("en2", [INT64_MAX, 6]),
        const("ax2", [1, 0]), const("sp2", [2, 1]),
        node("Slice", ["x", "st2", "en2", "ax2", "sp2"], ["steps"]),
        # no axes, no steps: every leading axis in order
        const("st3", [0]), const("en3", [10]),
        node("Slice", ["x", "st3", "en3"], ["default_axes"]),
        # start after end: empty
        const("st4", [5]), const("en4", [2]),
        node("Slice", ["x", "st4", "en4"], ["empty"]),
        # x[:, 2:-2:3] with axis -1
        const("st5", [2]), const("en5", [-2]), const("ax5", [-1]),
        const("sp5", [3]),
        node("Slice", ["x", "st5", "en5", "ax5", "sp5"], ["neg_axis_step"]),
    ]
    return make(nodes, [vi("x", F32, [10, 8])],
                [vi(n, F32, None) for n in
                 ["neg_start_end", "steps", "default_axes", "empty",
                  "neg_axis_step"]], opset=13)


def squeeze_nodes():
    return [
        const("sq_axes", [0, -2]),
        node("Squeeze", ["x", "sq_axes"], ["squeezed"]),
        node("Squeeze", ["x"], ["squeezed_all"]),
        const("unsq_axes", [0, -1]),
        node("Unsqueeze", ["squeezed", "unsq_axes"], ["unsqueezed"]),
        const("unsq_mid", [1]),
        node("Unsqueeze", ["squeezed", "unsq_mid"], ["unsqueezed_mid"]),
    ]


@model()
def squeeze13():
    return make(squeeze_nodes(), [vi("x", F32, [1, 3, 1, 4])],
                [vi(n, F32, None) for n in
                 ["squeezed", "squeezed_all", "unsqueezed", "unsqueezed_mid"]],
                opset=13)


@model()
def squeeze21():
    return make(squeeze_nodes(), [vi("x", F32, [1, 3, 1, 4])],
                [vi(n, F32, None) for n in
                 ["squeezed", "squeezed_all", "unsqueezed", "unsqueezed_mid"]],
                opset=21)


@model()
def split13():
    nodes = [
        const("sizes", [3, 7]),
        node("Split", ["x", "sizes"], ["s0", "s1"], name="split_sizes", axis=1),
        node("Split", ["x"], ["e0", "e1"], name="split_even", axis=-1),
    ]
    return make(nodes, [vi("x", F32, [2, 10])],
                [vi(n, F32, None) for n in ["s0", "s1", "e0", "e1"]],
                opset=13)


@model()
def split18():
    nodes = [
        node("Split", ["x"], ["n0", "n1", "n2"], name="split_uneven", axis=-1,
             num_outputs=3),
        node("Split", ["x"], ["r0", "r1"], name="split_rows", num_outputs=2),
        const("sizes", [6, 4]),
        node("Split", ["x", "sizes"], ["z0", "z1"], name="split_input", axis=1),
    ]
    return make(nodes, [vi("x", F32, [2, 10])],
                [vi(n, F32, None) for n in
                 ["n0", "n1", "n2", "r0", "r1", "z0", "z1"]], opset=18)


@model()
def gather():
    nodes = [
        node("Gather", ["table", "ids"], ["embed"]),
        const("last", -1),
        node("Gather", ["table", "last"], ["last_row"]),
        const("cols", [0, -2]),
        node("Gather", ["x", "cols"], ["cols_out"], axis=1),
        node("Gather", ["x", "ids32"], ["by_i32"], axis=-1),
    ]
    inits = [init("table", arange([10, 4]))]
    return make(nodes, [vi("ids", I64, [2, 3]), vi("x", F32, [3, 5]),
                        vi("ids32", I32, [2])],
                [vi("embed", F32, [2, 3, 4]), vi("last_row", F32, [4]),
                 vi("cols_out", F32, [3, 2]), vi("by_i32", F32, [3, 2])],
                inits, opset=13)


@model()
def m_shape():
    nodes = [
        node("Shape", ["x"], ["full"]),
        node("Shape", ["x"], ["middle"], start=1, end=-1),
        node("Shape", ["x"], ["tail"], start=-2),
        node("Shape", ["x"], ["clamped"], start=-10, end=10),
        node("Shape", ["x"], ["none"], start=3, end=1),
    ]
    return make(nodes, [vi("x", F32, [2, 3, 4, 5])],
                [vi(n.output[0], I64, None) for n in nodes], opset=15)


# ---------------------------------------------------------------------------
# Shape arithmetic evaluated at import time
# ---------------------------------------------------------------------------


@model()
def shape_chain():
    """PyTorch's `x.view(b, s, heads, -1)` and `y.view(-1, y.shape[-1])`."""
    nodes = [
        node("Shape", ["x"], ["shape"]),
        const("i0", 0), const("i1", 1), const("i2", 2),
        node("Gather", ["shape", "i0"], ["b"]),
        node("Gather", ["shape", "i1"], ["s"]),
        node("Gather", ["shape", "i2"], ["h"]),
        const("heads", 4),
        node("Div", ["h", "heads"], ["hd"]),
        const("ax0", [0]),
        node("Unsqueeze", ["b", "ax0"], ["b1"]),
        node("Unsqueeze", ["s", "ax0"], ["s1"]),
        node("Unsqueeze", ["hd", "ax0"], ["hd1"]),
        const("heads1", [4]),
        node("Concat", ["b1", "s1", "heads1", "hd1"], ["target"], axis=0),
        node("Reshape", ["x", "target"], ["y"]),
        # y.view(-1, y.shape[-1])
        node("Shape", ["y"], ["yshape"]),
        const("m1", [-1]), const("end", [INT64_MAX]),
        node("Slice", ["yshape", "m1", "end"], ["last"]),
        node("Concat", ["m1", "last"], ["target2"], axis=0),
        node("Reshape", ["y", "target2"], ["z"]),
        # torch's Where(Equal(shape, -1), ones, shape) around Expand
        node("Equal", ["target2", "m1"], ["is_m1"]),
        const("ones", [1, 1]),
        node("Where", ["is_m1", "ones", "target2"], ["expand_shape"]),
        node("Cast", ["expand_shape"], ["expand_shape64"], to=I64),
        node("Expand", ["bias", "expand_shape64"], ["bias_expanded"]),
        node("Add", ["z", "bias_expanded"], ["out"]),
    ]
    return make(nodes, [vi("x", F32, [2, 8, 32]), vi("bias", F32, [8])],
                [vi("y", F32, [2, 8, 4, 8]), vi("out", F32, [64, 8]),
                 vi("target", I64, [4]), vi("target2", I64, [2]),
                 vi("expand_shape64", I64, [2])])


@model()
def shape_fold():
    """Every op evaluated at import time, on constants; each result is a
    graph output (so it is materialised and can be checked)."""
    nodes = [
        const("v", [6, -7, 8]), const("w", [2, 2, -3]),
        node("Add", ["v", "w"], ["add"]),
        node("Sub", ["v", "w"], ["sub"]),
        node("Mul", ["v", "w"], ["mul"]),
        node("Div", ["v", "w"], ["div"]),            # truncates: 3, -3, -2
        node("Neg", ["v"], ["neg"]),
        node("Abs", ["v"], ["abs"]),
        node("Max", ["v", "w"], ["max"]),
        node("Min", ["v", "w"], ["min"]),
        node("Equal", ["v", "w"], ["eq"]),
        node("Less", ["v", "w"], ["lt"]),
        node("Greater", ["v", "w"], ["gt"]),
        node("LessOrEqual", ["v", "v"], ["le"]),
        node("GreaterOrEqual", ["w", "v"], ["ge"]),
        node("Not", ["lt"], ["not"]),
        node("Where", ["lt", "v", "w"], ["where"]),  # min again
        const("f", [0.0, 0.5, -2.75], np.float32),
        node("Cast", ["f"], ["f2i"], to=I64),        # truncates: 0, 0, -2
        node("Cast", ["f"], ["f2b"], to=BOOL),       # nonzero: F, T, T
        node("Cast", ["v"], ["i2f"], to=F32),
        const("m", [[1, 2, 3], [4, 5, 6]]),
        const("cols", [2, -3]),
        node("Gather", ["m", "cols"], ["gather"], axis=1),  # [[3,1],[6,4]]
        node("Concat", ["m", "m"], ["concat"], axis=-1),
        const("ax0", [0]),
        node("Unsqueeze", ["v", "ax0"], ["unsqueeze"]),
        node("Squeeze", ["unsqueeze", "ax0"], ["squeeze"]),
        const("shape_3_2", [3, -1]),
        node("Reshape", ["m", "shape_3_2"], ["reshape"]),
        const("s_start", [-3]), const("s_end", [INT64_MAX]), const("s_step", [2]),
        node("Slice", ["v", "s_start", "s_end", "ax0", "s_step"], ["slice"]),
        node("Identity", ["w"], ["identity"]),
        const("e_shape", [2, 3]),
        node("Expand", ["w", "e_shape"], ["expand"]),
    ]
    names = [n.output[0] for n in nodes if n.op_type != "Constant"]
    outputs = [vi(n, BOOL if n in ("eq", "lt", "gt", "le", "ge", "not", "f2b")
                  else F32 if n == "i2f" else I64, None) for n in names]
    return make(nodes, [], outputs)


@model()
def constant_of_shape():
    nodes = [
        node("Shape", ["x"], ["shape"]),
        node("ConstantOfShape", ["shape"], ["ones"],
             value=numpy_helper.from_array(np.array([1.0], np.float32))),
        node("Add", ["x", "ones"], ["plus_one"]),
        const("n", [3]),
        node("ConstantOfShape", ["n"], ["sevens"],
             value=numpy_helper.from_array(np.array([7], np.int64))),
        node("ConstantOfShape", ["n"], ["zeros"]),
        const("big", [1024, 2048]),
        node("ConstantOfShape", ["big"], ["big_fill"],
             value=numpy_helper.from_array(np.array([0.5], np.float32))),
    ]
    return make(nodes, [vi("x", F32, [2, 3])],
                [vi("plus_one", F32, [2, 3]), vi("sevens", I64, [3]),
                 vi("zeros", F32, [3]), vi("big_fill", F32, [1024, 2048])])


@model()
def m_range():
    nodes = [
        node("Shape", ["ids"], ["shape"]),
        const("one", 1), const("zero", 0),
        node("Gather", ["shape", "one"], ["seq"]),
        node("Range", ["zero", "seq", "one"], ["pos"]),
        node("Gather", ["wpe", "pos"], ["pos_emb"]),
        const("f0", 0.0, np.float32), const("f1", 1.0, np.float32),
        const("fd", 0.25, np.float32),
        node("Range", ["f0", "f1", "fd"], ["frange"]),
        const("down_start", 10), const("down_limit", 4), const("down_delta", -3),
        node("Range", ["down_start", "down_limit", "down_delta"], ["down"]),
    ]
    return make(nodes, [vi("ids", I64, [2, 6])],
                [vi("pos_emb", F32, [6, 4]), vi("frange", F32, [4]),
                 vi("down", I64, [2])],
                [init("wpe", arange([8, 4]))], opset=13)


@model()
def constants():
    nodes = [
        node("Constant", [], ["c_tensor"],
             value=numpy_helper.from_array(np.array([1.5, -2.0], np.float32))),
        node("Constant", [], ["c_float"], value_float=2.5),
        node("Constant", [], ["c_floats"], value_floats=[0.25, 0.5]),
        node("Constant", [], ["c_ints"], value_ints=[1, 2, 3]),
        node("Constant", [], ["c_int"], value_int=4),
        node("Add", ["x", "c_tensor"], ["a"]),
        node("Mul", ["a", "c_float"], ["b"]),
        node("Sub", ["b", "c_floats"], ["c"]),
        node("Add", ["n", "c_ints"], ["d"]),
        node("Mul", ["d", "c_int"], ["e"]),
    ]
    return make(nodes, [vi("x", F32, [3, 2]), vi("n", I64, [2, 3])],
                [vi("c", F32, [3, 2]), vi("e", I64, [2, 3]),
                 vi("c_ints", I64, [3])], opset=13)


@model()
def int_initializer_shape():
    nodes = [node("Reshape", ["x", "target"], ["y"]),
             node("Gather", ["y", "idx"], ["z"], axis=1),
             node("Mul", ["z", "scale"], ["out"])]
    inits = [init("target", [3, -1], np.int64),
             init("idx", [[0, 1], [3, -1]], np.int64),
             init("scale", 0.5, np.float32)]
    return make(nodes, [vi("x", F32, [2, 3, 4])],
                [vi("out", F32, [3, 2, 2])], inits)


# ---------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------


@model()
def reduce13():
    nodes = [
        const("ax1", [1]),
        node("ReduceSum", ["x", "ax1"], ["sum_keep"]),
        const("ax_neg", [-1, 0]),
        node("ReduceSum", ["x", "ax_neg"], ["sum_drop"], keepdims=0),
        node("ReduceSum", ["x"], ["sum_all"]),
        node("ReduceSum", ["x"], ["sum_noop"], noop_with_empty_axes=1),
        node("ReduceMean", ["x"], ["mean_attr"], axes=[-1], keepdims=0),
        node("ReduceMax", ["x"], ["max_attr"], axes=[1]),
        node("ReduceMean", ["x"], ["mean_all"], keepdims=0),
    ]
    return make(nodes, [vi("x", F32, [2, 3, 4])],
                [vi(n.output[0], F32, None) for n in nodes if n.op_type != "Constant"],
                opset=13)


@model()
def reduce18():
    nodes = [
        const("ax12", [1, 2]),
        node("ReduceMean", ["x", "ax12"], ["mean_input"], keepdims=0),
        const("ax_m2", [-2]),
        node("ReduceMax", ["x", "ax_m2"], ["max_input"]),
        node("ReduceMean", ["x"], ["mean_all"], keepdims=0),
        const("no_axes", np.zeros([0], np.int64)),
        node("ReduceMax", ["x", "no_axes"], ["max_noop"], noop_with_empty_axes=1),
        node("ReduceSum", ["x", "no_axes"], ["sum_empty_axes"], keepdims=0),
        node("ReduceSum", ["n", "ax_m2"], ["sum_int"], keepdims=0),
    ]
    return make(nodes, [vi("x", F32, [2, 3, 4]), vi("n", I64, [2, 3])],
                [vi(n.output[0], I64 if n.output[0] == "sum_int" else F32, None)
                 for n in nodes if n.op_type != "Constant"], opset=18)


# ---------------------------------------------------------------------------
# Losses
# ---------------------------------------------------------------------------


@model()
def sce_2d():
    nodes = [node("SoftmaxCrossEntropyLoss", ["scores", "labels"], ["loss"],
                  name="sce")]
    return make(nodes, [vi("scores", F32, [4, 10]), vi("labels", I64, [4])],
                [vi("loss", F32, [])], opset=13)


@model()
def sce_3d():
    nodes = [
        node("SoftmaxCrossEntropyLoss", ["scores", "labels"], ["sum"],
             name="sce_sum", reduction="sum", ignore_index=-1),
        node("SoftmaxCrossEntropyLoss", ["scores", "labels"], ["none"],
             name="sce_none", reduction="none"),
        node("SoftmaxCrossEntropyLoss", ["scores", "labels"], ["mean"],
             name="sce_mean", reduction="mean", ignore_index=3),
        node("SoftmaxCrossEntropyLoss", ["scores4", "labels4"], ["mean4"],
             name="sce_4d"),
    ]
    return make(nodes, [vi("scores", F32, [2, 5, 3]), vi("labels", I64, [2, 3]),
                        vi("scores4", F32, [2, 5, 3, 4]),
                        vi("labels4", I32, [2, 3, 4])],
                [vi("sum", F32, []), vi("none", F32, [2, 3]),
                 vi("mean", F32, []), vi("mean4", F32, [])])


@model()
def nll():
    nodes = [
        node("LogSoftmax", ["scores", ], ["logp"], axis=1),
        node("NegativeLogLikelihoodLoss", ["logp", "labels"], ["loss"],
             name="nll_mean"),
        node("LogSoftmax", ["scores3"], ["logp3"], axis=-2),
        node("NegativeLogLikelihoodLoss", ["logp3", "labels3"], ["loss3"],
             name="nll_none", reduction="none", ignore_index=0),
    ]
    return make(nodes, [vi("scores", F32, [4, 10]), vi("labels", I64, [4]),
                        vi("scores3", F32, [2, 5, 3]),
                        vi("labels3", I64, [2, 3])],
                [vi("loss", F32, []), vi("loss3", F32, [2, 3])], opset=13)


# ---------------------------------------------------------------------------
# Normalisation
# ---------------------------------------------------------------------------


@model()
def softmax():
    nodes = [
        node("Softmax", ["x"], ["sm_default"]),
        node("Softmax", ["x"], ["sm_neg"], axis=-2),
        node("Softmax", ["x"], ["sm0"], axis=0),
        node("LogSoftmax", ["x"], ["lsm_neg"], axis=-3),
        node("LogSoftmax", ["x"], ["lsm_default"]),
    ]
    return make(nodes, [vi("x", F32, [2, 3, 4])],
                [vi(n.output[0], F32, [2, 3, 4]) for n in nodes], opset=13)


@model()
def layer_norm():
    nodes = [
        node("LayerNormalization", ["x", "scale", "bias"], ["ln"]),
        node("LayerNormalization", ["x", "scale2"], ["ln_nobias"], axis=1,
             epsilon=1e-6),
        node("LayerNormalization", ["x", "scale", ""], ["ln_empty_bias"],
             axis=-1),
        node("LayerNormalization", ["x", "one"], ["ln_scalar_scale"]),
    ]
    inits = [init("scale", [1.0, 2.0, 3.0, 4.0], np.float32),
             init("bias", [0.5, 0.5, 0.5, 0.5], np.float32),
             init("scale2", arange([3, 4])), init("one", [1.0], np.float32)]
    return make(nodes, [vi("x", F32, [2, 3, 4])],
                [vi(n.output[0], F32, [2, 3, 4]) for n in nodes], inits,
                opset=17)


# ---------------------------------------------------------------------------
# Initializers and options
# ---------------------------------------------------------------------------


def bf16_tensor(name, values, shape):
    """A BFLOAT16 tensor in raw_data (values must be exact in bfloat16)."""
    bits = (np.asarray(values, np.float32).view(np.uint32) >> 16).astype("<u2")
    return helper.make_tensor(name, BF16, shape, bits.tobytes(), raw=True)


def initializer_graph():
    nodes = [
        node("MatMul", ["x", "w"], ["xw"]),
        node("Mul", ["xw", "s"], ["scaled"]),
        node("Add", ["scaled", "b"], ["y"]),
        node("Reshape", ["y", "shape"], ["flat"]),
        node("Cast", ["h16"], ["h32"], to=F32),
        node("Cast", ["e16"], ["e32"], to=F32),
        node("Add", ["h32", "e32"], ["he"]),
        node("Cast", ["hraw"], ["hraw32"], to=F32),
        node("Add", ["he", "hraw32"], ["he2"]),
        node("Where", ["mask", "y", "s"], ["masked"]),
        node("Add", ["masked", "old"], ["out"]),
    ]
    inits = [
        init("w", arange([3, 4]) / 4),                       # f32 param (raw)
        init("s", 0.5, np.float32),                          # rank 0: constant
        helper.make_tensor("b", F32, [4], [1.0, -1.0, 0.5, 2.0]),  # float_data
        helper.make_tensor("shape", I64, [1], [-1]),          # int64_data
        helper.make_tensor("h16", F16, [4], np.array([1.5, -2.0, 0.25, 8.0],
                                                     np.float16)),  # int32_data
        init("hraw", np.array([0.5, 1.0, 2.0, -4.0], np.float16)),  # f16 raw
        bf16_tensor("e16", [1.0, -2.5, 0.15625, 3.0], [4]),  # bf16 raw
        init("mask", [[True, False, True, False]] * 2, np.bool_),
        init("old", [0.25], np.float32),                     # listed as input
    ]
    inputs = [vi("x", F32, [2, 3]), vi("old", F32, [1])]
    return nodes, inputs, [vi("flat", F32, [8]), vi("he2", F32, [4]),
                           vi("out", F32, [2, 4])], inits


@model()
def initializers():
    nodes, inputs, outputs, inits = initializer_graph()
    return make(nodes, inputs, outputs, inits)


@model()
def external(out):
    nodes, inputs, outputs, inits = initializer_graph()
    m = make(nodes, inputs, outputs, inits)
    onnx.checker.check_model(m, full_check=True)
    data = out + ".data"
    if os.path.exists(data):  # onnx.save_model refuses to overwrite it
        os.remove(data)
    onnx.save_model(m, out, save_as_external_data=True,
                    all_tensors_to_one_file=True,
                    location=os.path.basename(out) + ".data",
                    size_threshold=0, convert_attribute=False)


@model(check=False)
def external_missing(out):
    external(out)
    os.remove(out + ".data")


@model(check=False)
def external_short(out):
    """The external data file ends before the last tensor."""
    external(out)
    with open(out + ".data", "r+b") as f:
        f.truncate(os.path.getsize(out + ".data") - 4)


def streamed_graph():
    """Initializers of 4 KiB and more (their raw data is written to the
    weights file straight from the model's bytes) beside small and typed
    ones (parsed as usual)."""
    rng = np.random.default_rng(7)
    nodes = [
        node("MatMul", ["x", "big"], ["xb"]),
        node("Cast", ["half"], ["half32"], to=F32),
        node("MatMul", ["xb", "typed"], ["xt"]),
        node("Add", ["xt", "small"], ["y"]),
        node("Gather", ["half32", "rows"], ["picked"], axis=0),
        node("ReduceSum", ["picked"], ["total"], keepdims=0),
    ]
    inits = [
        init("big", rng.standard_normal((64, 32)).astype(np.float32)),
        init("half", rng.standard_normal((64, 64)).astype(np.float16)),
        helper.make_tensor("typed", F32, [32, 40],
                           rng.standard_normal(32 * 40).astype(np.float32)),
        init("small", [0.5, -0.5, 1.0, 2.0] * 10, np.float32),
        init("rows", np.arange(1024) % 64, np.int64),  # 8 KiB constant
    ]
    return make(nodes, [vi("x", F32, [2, 64])],
                [vi("y", F32, [2, 40]), vi("total", F32, [])], inits)


@model()
def streamed():
    return streamed_graph()


@model(check=False)
def streamed_short():
    """'big' has 4 bytes of raw data fewer than its shape needs."""
    m = streamed_graph()
    big = m.graph.initializer[0]
    big.raw_data = big.raw_data[:-4]
    return m


@model(check=False)
def streamed_truncated(out):
    """The file ends inside the raw data of 'half'."""
    data = streamed_graph().SerializeToString()
    cut = data.index(numpy_helper.to_array(
        streamed_graph().graph.initializer[1]).tobytes()) + 100
    with open(out, "wb") as f:
        f.write(data[:cut])


@model()
def mlp_dynamic():
    """An MLP with a symbolic batch: fc1/fc2 weights and biases."""
    nodes = [
        node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h"], name="fc1",
             transB=1),
        node("Relu", ["h"], ["a"]),
        node("Gemm", ["a", "fc2.weight", "fc2.bias"], ["logits"], name="fc2",
             transB=1),
        node("SoftmaxCrossEntropyLoss", ["logits", "labels"], ["loss"],
             name="loss"),
    ]
    inits = [init("fc1.weight", arange([3, 4]) / 8),
             init("fc1.bias", [0.5, -0.5, 1.0], np.float32),
             init("fc2.weight", arange([2, 3], start=-3)),
             init("fc2.bias", [0.0, 1.0], np.float32)]
    return make(nodes, [vi("x", F32, ["batch", 4]),
                        vi("labels", I64, ["batch"])],
                [vi("loss", F32, [])], inits)


@model()
def batch_fixed_reshape():
    """A dynamic batch that a Reshape to a constant shape fixes at 2."""
    nodes = [const("shape", [2, 4]),
             node("Reshape", ["x", "shape"], ["y"], name="fix_batch"),
             node("Relu", ["y"], ["out"])]
    return make(nodes, [vi("x", F32, ["batch", 4])], [vi("out", F32, [2, 4])])


# ---------------------------------------------------------------------------
# Malformed models (not checked)
# ---------------------------------------------------------------------------


@model(check=False)
def empty(out):
    open(out, "wb").close()


@model(check=False)
def truncated(out):
    data = mlp_dynamic().SerializeToString()
    with open(out, "wb") as f:
        f.write(data[: len(data) // 2])


@model(check=False)
def random_bytes(out):
    rng = np.random.default_rng(1234)
    with open(out, "wb") as f:
        f.write(rng.integers(0, 256, 4096, dtype=np.uint8).tobytes())


@model(check=False)
def bad_unsupported():
    nodes = [
        node("Relu", ["x"], ["r"]),
        node("Conv", ["r", "k"], ["c1"], name="conv_first"),
        node("Conv", ["c1", "k"], ["c2"], name="conv_second"),
        node("LSTM", ["c2", "lw", "lr"], ["l"], name="lstm_first"),
        node("Foo", ["l"], ["y"], name="custom", domain="com.example"),
    ]
    return make(nodes, [vi("x", F32, [1, 1, 4, 4])], [vi("y", F32, None)],
                [init("k", np.ones([1, 1, 1, 1], np.float32)),
                 init("lw", np.ones([1, 4, 4], np.float32)),
                 init("lr", np.ones([1, 4, 1], np.float32))])


def relu_model(opset):
    return make([node("Relu", ["x"], ["y"])], [vi("x", F32, [2])],
                [vi("y", F32, [2])], opset=opset)


@model(check=False)
def bad_opset12():
    return relu_model(12)


@model(check=False)
def bad_opset22():
    return relu_model(22)


@model(check=False)
def bad_no_opset():
    m = relu_model(18)
    del m.opset_import[:]
    m.opset_import.append(helper.make_opsetid("com.example", 1))
    return m


@model(check=False)
def bad_short_raw():
    t = init("w", arange([3, 4]))
    t.raw_data = t.raw_data[:20]
    return make([node("Add", ["x", "w"], ["y"])], [vi("x", F32, [3, 4])],
                [vi("y", F32, [3, 4])], [t])


@model(check=False)
def bad_short_int_data():
    t = helper.make_tensor("shape", I64, [3], [2, 6, 1])
    del t.int64_data[2]
    return make([node("Reshape", ["x", "shape"], ["y"])],
                [vi("x", F32, [3, 4])], [vi("y", F32, None)], [t])


def raw_tensor(name, dtype, dims, raw):
    t = TP()
    t.name, t.data_type = name, dtype
    t.dims.extend(dims)
    t.raw_data = raw
    return t


@model(check=False)
def bad_huge_initializer():
    """Dims whose product overflows int64, with 8 bytes of data."""
    t = raw_tensor("shape", I64, [2**40, 2**40], b"\0" * 8)
    return make([node("Reshape", ["x", "shape"], ["y"])],
                [vi("x", F32, [3, 4])], [vi("y", F32, None)], [t])


@model(check=False)
def bad_huge_float_initializer():
    """A weight of 2^64 elements (stored in 16 bytes)."""
    t = raw_tensor("w", F32, [2**31, 2**31, 4], b"\0" * 16)
    return make([node("Add", ["x", "w"], ["y"])],
                [vi("x", F32, [4])], [vi("y", F32, None)], [t])


@model(check=False)
def bad_huge_constant():
    """A Constant of 2^40 int64 elements (stored in 8 bytes)."""
    nodes = [node("Constant", [], ["c"], name="huge",
                  value=raw_tensor("", I64, [2**40], b"\0" * 8)),
             node("Reshape", ["x", "c"], ["y"])]
    return make(nodes, [vi("x", F32, [3, 4])], [vi("y", F32, None)])


@model(check=False)
def bad_dynamic():
    return make([node("Relu", ["x"], ["y"])], [vi("x", F32, ["batch", 4])],
                [vi("y", F32, None)])


@model(check=False)
def bad_no_shape():
    x = helper.make_tensor_value_info("x", F32, None)
    return make([node("Relu", ["x"], ["y"])], [x], [vi("y", F32, None)])


@model(check=False)
def bad_float64_input():
    return make([node("Relu", ["x"], ["y"])], [vi("x", F64, [2])],
                [vi("y", F64, [2])])


@model(check=False)
def bad_float64_initializer():
    return make([node("Add", ["x", "w"], ["y"])], [vi("x", F32, [2])],
                [vi("y", F32, [2])], [init("w", [1.0, 2.0], np.float64)])


@model(check=False)
def bad_unsorted():
    nodes = [node("Add", ["x", "t"], ["y"], name="add_first"),
             node("Relu", ["x"], ["t"], name="relu_later")]
    return make(nodes, [vi("x", F32, [2])], [vi("y", F32, [2])])


@model(check=False)
def bad_missing_output():
    return make([node("Relu", ["x"], ["y"])], [vi("x", F32, [2])],
                [vi("nowhere", F32, [2])])


@model(check=False)
def bad_dropout_mask():
    nodes = [node("Dropout", ["x"], ["y", "mask"], name="drop"),
             node("Cast", ["mask"], ["m"], to=F32),
             node("Add", ["y", "m"], ["z"])]
    return make(nodes, [vi("x", F32, [2])], [vi("z", F32, [2])], opset=13)


@model(check=False)
def bad_nll():
    nodes = [node("NegativeLogLikelihoodLoss", ["x", "labels"], ["loss"],
                  name="nll")]
    return make(nodes, [vi("x", F32, [4, 10]), vi("labels", I64, [4])],
                [vi("loss", F32, [])], opset=13)


@model(check=False)
def bad_nll_axis():
    nodes = [node("LogSoftmax", ["x"], ["lp"], axis=-1),
             node("NegativeLogLikelihoodLoss", ["lp", "labels"], ["loss"],
                  name="nll")]
    return make(nodes, [vi("x", F32, [2, 5, 3]), vi("labels", I64, [2, 3])],
                [vi("loss", F32, [])], opset=13)


@model(check=False)
def bad_runtime_shape():
    nodes = [node("Reshape", ["x", "shape"], ["y"], name="reshape_dyn")]
    return make(nodes, [vi("x", F32, [2, 3]), vi("shape", I64, [2])],
                [vi("y", F32, None)], opset=13)


@model(check=False)
def bad_gather_index():
    nodes = [const("idx", [0, 7]),
             node("Gather", ["x", "idx"], ["y"], name="gather_oob")]
    return make(nodes, [vi("x", F32, [5, 2])], [vi("y", F32, None)])


@model(check=False)
def bad_slice_step():
    nodes = [const("st", [-1]), const("en", [-INT64_MAX]), const("sp", [-1]),
             const("ax", [0]),
             node("Slice", ["x", "st", "en", "ax", "sp"], ["y"], name="reverse")]
    return make(nodes, [vi("x", F32, [5])], [vi("y", F32, None)])


@model(check=False)
def bad_matmul():
    return make([node("MatMul", ["a", "b"], ["y"], name="mm")],
                [vi("a", F32, [4, 8]), vi("b", F32, [7, 5])],
                [vi("y", F32, None)])


@model(check=False)
def bad_matmul_batch():
    return make([node("MatMul", ["a", "b"], ["y"], name="mm")],
                [vi("a", F32, [2, 4, 8]), vi("b", F32, [3, 8, 5])],
                [vi("y", F32, None)])


@model(check=False)
def bad_gemm_c():
    return make([node("Gemm", ["a", "b", "c"], ["y"], name="gemm")],
                [vi("a", F32, [1, 8]), vi("b", F32, [8, 5]),
                 vi("c", F32, [3, 5])], [vi("y", F32, None)])


@model(check=False)
def bad_broadcast():
    return make([node("Add", ["a", "b"], ["y"], name="add")],
                [vi("a", F32, [2, 3]), vi("b", F32, [4])], [vi("y", F32, None)])


@model(check=False)
def bad_mixed_types():
    return make([node("Max", ["a", "b"], ["y"], name="max"),
                 node("Where", ["c", "a", "b"], ["z"], name="where")],
                [vi("a", F32, [2]), vi("b", I64, [2]), vi("c", BOOL, [2])],
                [vi("y", F32, None), vi("z", F32, None)])


@model(check=False)
def bad_transpose_perm():
    n = node("Transpose", ["x"], ["y"], name="tr")
    n.attribute.append(helper.make_attribute("perm", [],
                                             attr_type=onnx.AttributeProto.INTS))
    return make([n], [vi("x", F32, [2, 3])], [vi("y", F32, None)])


@model(check=False)
def bad_layer_norm_scale():
    return make([node("LayerNormalization", ["x", "scale"], ["y"], name="ln")],
                [vi("x", F32, [2, 3, 4]), vi("scale", F32, [5, 3, 4])],
                [vi("y", F32, None)])


@model(check=False)
def bad_constant_of_shape():
    nodes = [const("shape", [2, -3]),
             node("ConstantOfShape", ["shape"], ["y"], name="fill")]
    return make(nodes, [], [vi("y", F32, None)])


@model()
def range_large():
    """A range too long to evaluate at import time: start + delta * iota."""
    nodes = [const("start", 5), const("limit", 5 + 3 * 2**21), const("delta", 3),
             node("Range", ["start", "limit", "delta"], ["y"], name="range")]
    return make(nodes, [], [vi("y", I64, [2**21])])


@model(check=False)
def bad_range():
    nodes = [const("start", 0), const("limit", 10), const("delta", 0),
             node("Range", ["start", "limit", "delta"], ["y"], name="range")]
    return make(nodes, [], [vi("y", I64, None)])


@model(check=False)
def bad_split():
    nodes = [const("sizes", [3, 3]),
             node("Split", ["x", "sizes"], ["a", "b"], name="split")]
    return make(nodes, [vi("x", F32, [7])],
                [vi("a", F32, None), vi("b", F32, None)])


@model(check=False)
def bad_int_trainable():
    """An int64 initializer used as a shape; tests name it in --trainable."""
    return int_initializer_shape()


@model(check=False)
def bad_loss_labels():
    nodes = [node("SoftmaxCrossEntropyLoss", ["scores", "labels"], ["loss"],
                  name="sce")]
    return make(nodes, [vi("scores", F32, [4, 10]), vi("labels", F32, [4])],
                [vi("loss", F32, [])])


@model(check=False)
def bad_sce_weights():
    nodes = [node("SoftmaxCrossEntropyLoss", ["scores", "labels", "w"], ["loss"],
                  name="sce")]
    return make(nodes, [vi("scores", F32, [4, 10]), vi("labels", I64, [4]),
                        vi("w", F32, [7])], [vi("loss", F32, [])])


@model(check=False)
def bad_reshape_size():
    nodes = [const("shape", [5, -1]),
             node("Reshape", ["x", "shape"], ["y"], name="reshape")]
    return make(nodes, [vi("x", F32, [2, 3])], [vi("y", F32, None)])


@model(check=False)
def bad_axis():
    return make([node("Softmax", ["x"], ["y"], name="softmax", axis=3)],
                [vi("x", F32, [2, 3])], [vi("y", F32, None)])


@model(check=False)
def bad_cast_to():
    return make([node("Cast", ["x"], ["y"], name="cast", to=F64)],
                [vi("x", F32, [2])], [vi("y", F64, None)])


@model(check=False)
def bad_gelu_approx():
    return make([node("Gelu", ["x"], ["y"], name="gelu", approximate="fast")],
                [vi("x", F32, [2])], [vi("y", F32, None)], opset=20)


@model(check=False)
def bad_subgraph_input():
    """A node whose input is the empty string where one is required."""
    return make([node("Add", ["x", ""], ["y"], name="add")],
                [vi("x", F32, [2])], [vi("y", F32, None)])


@model(check=False)
def bad_concat():
    return make([node("Concat", ["a", "b"], ["y"], name="cat", axis=1)],
                [vi("a", F32, [2, 3]), vi("b", F32, [3, 3])],
                [vi("y", F32, None)])


@model(check=False)
def bad_matmul_types():
    return make([node("MatMul", ["a", "b"], ["y"], name="mm")],
                [vi("a", F32, [2, 3]), vi("b", F16, [3, 4])],
                [vi("y", F32, None)])


@model(check=False)
def bad_reduce_axes():
    nodes = [const("axes", [1, -1]),
             node("ReduceSum", ["x", "axes"], ["y"], name="sum")]
    return make(nodes, [vi("x", F32, [2, 3])], [vi("y", F32, None)])


@model(check=False)
def bad_softmax_int():
    return make([node("Softmax", ["x"], ["y"], name="softmax")],
                [vi("x", I64, [2, 3])], [vi("y", I64, None)])


@model(check=False)
def bad_declared_shape():
    """The model declares a wrong output shape (ONNX would too)."""
    return make([node("Transpose", ["x"], ["y"], name="tr")],
                [vi("x", F32, [2, 3])], [vi("y", F32, [2, 3])])


@model(check=False)
def bad_unnamed_node():
    return make([helper.make_node("Softmax", ["x"], ["probs"], axis=2)],
                [vi("x", F32, [2, 3])], [vi("probs", F32, None)])


@model(check=False)
def bad_duplicate_initializer():
    return make([node("Add", ["x", "w"], ["y"])], [vi("x", F32, [2])],
                [vi("y", F32, [2])],
                [init("w", [1.0, 2.0], np.float32),
                 init("w", [3.0, 4.0], np.float32)])


@model(check=False)
def bad_late():
    """Weights read, most nodes imported, the last node fails."""
    nodes = [node("MatMul", ["x", "w"], ["h"], name="mm"),
             node("Relu", ["h"], ["r"], name="relu"),
             node("Softmax", ["r"], ["y"], name="last", axis=5)]
    return make(nodes, [vi("x", F32, [2, 3])], [vi("y", F32, None)],
                [init("w", arange([3, 4]))])

# ---------------------------------------------------------------------------
# Ops of HuggingFace exports: trigonometry, logic, NaN/Inf tests, variadic
# sums, Mod, Pad, GatherElements, Trilu
# ---------------------------------------------------------------------------


@model()
def trig_logic():
    nodes = [
        node("Cos", ["x"], ["cos"]),
        node("Sin", ["x"], ["sin"]),
        node("And", ["a", "b"], ["and"]),            # [2,3] and [3]
        node("Or", ["a", "b"], ["or"]),
        node("Xor", ["a", "a"], ["xor"]),
        node("IsNaN", ["x"], ["isnan"]),
        node("IsInf", ["x"], ["isinf"]),
        node("IsInf", ["x"], ["isposinf"], detect_negative=0),
        node("IsInf", ["x"], ["isneginf"], detect_positive=0),
        node("IsInf", ["x"], ["isnoinf"], detect_negative=0, detect_positive=0),
    ]
    outs = [vi("cos", F32, [2, 3]), vi("sin", F32, [2, 3])]
    outs += [vi(n.output[0], BOOL, [2, 3]) for n in nodes[2:]]
    return make(nodes, [vi("x", F32, [2, 3]), vi("a", BOOL, [2, 3]),
                        vi("b", BOOL, [3])], outs, opset=20)


@model()
def sum_mean_mod():
    nodes = [
        node("Sum", ["x", "y", "z"], ["sum"]),
        node("Mean", ["x", "y"], ["mean"]),
        node("Sum", ["x"], ["sum1"]),
        node("Mod", ["i", "j"], ["mod"]),
        node("Mod", ["i", "j"], ["fmod"], fmod=1),
    ]
    outs = [vi("sum", F32, [2, 3]), vi("mean", F32, [2, 3]),
            vi("sum1", F32, [2, 3]), vi("mod", I64, [2, 3]),
            vi("fmod", I64, [2, 3])]
    return make(nodes, [vi("x", F32, [2, 3]), vi("y", F32, [3]),
                        vi("z", F32, [1, 3]), vi("i", I64, [2, 3]),
                        vi("j", I64, [3])], outs, opset=13)


@model()
def fold_hf_ops():
    """Every new op on known inputs: evaluated at import, one constant each."""
    nodes = [
        const("angles", [0.0, 1.0], np.float32),
        node("Cos", ["angles"], ["cos"]),
        node("Sin", ["angles"], ["sin"]),
        const("p", [True, False, True], np.bool_),
        const("q", [True, True, False], np.bool_),
        node("And", ["p", "q"], ["and"]),
        node("Or", ["p", "q"], ["or"]),
        node("Xor", ["p", "q"], ["xor"]),
        const("v", [1.0, np.nan, np.inf, -np.inf], np.float32),
        node("IsNaN", ["v"], ["isnan"]),
        node("IsInf", ["v"], ["isinf"], detect_negative=0),
        const("num", [7, -7, 7, -7]),
        const("den", [3, 3, -3, -3]),
        node("Mod", ["num", "den"], ["mod"]),
        node("Mod", ["num", "den"], ["fmod"], fmod=1),
        const("data", [[1, 2], [3, 4]]),
        const("idx", [[0, 0], [1, 0]]),
        node("GatherElements", ["data", "idx"], ["ge"], axis=1),
        const("pads", [1, 0, 0, 2]),
        node("Pad", ["data", "pads"], ["pad"], mode="reflect"),
        const("k", 0),
        node("Trilu", ["data", "k"], ["tril"], upper=0),
        const("axis", 1),
        node("CumSum", ["data", "axis"], ["cumsum"], reverse=1),
    ]
    outs = ["cos", "sin", "and", "or", "xor", "isnan", "isinf", "mod", "fmod",
            "ge", "pad", "tril", "cumsum"]
    return make(nodes, [], [vi(o, 0, None) for o in outs], opset=19)


@model()
def pad():
    nodes = [
        node("Pad", ["x", "pads"], ["constant"]),                   # zeros
        node("Pad", ["x", "pads", "value"], ["valued"]),
        node("Pad", ["x", "pads"], ["edge"], mode="edge"),
        node("Pad", ["x", "pads"], ["reflect"], mode="reflect"),
        node("Pad", ["x", "pads"], ["wrap"], mode="wrap"),
        node("Pad", ["x", "pads1", "", "axes"], ["last_axis"]),          # last axis
        node("Pad", ["x", "crop"], ["cropped"]),                    # negative
        node("Pad", ["x", "pads", "s"], ["runtime_value"]),
    ]
    inits = [init("pads", [1, 0, 0, 2], np.int64),     # [2,3] -> [3,5]
             init("value", 1.5, np.float32),
             init("pads1", [2, 1], np.int64),
             init("axes", [-1], np.int64),
             init("crop", [0, -1, 1, 0], np.int64)]    # [2,3] -> [3,2]
    outs = [vi(n, F32, [3, 5]) for n in ["constant", "valued", "edge",
                                          "reflect", "wrap"]]
    outs += [vi("last_axis", F32, [2, 6]), vi("cropped", F32, [3, 2]),
             vi("runtime_value", F32, [3, 5])]
    return make(nodes, [vi("x", F32, [2, 3]), vi("s", F32, [])], outs,
                inits, opset=19)


@model()
def gather_elements():
    nodes = [
        node("GatherElements", ["x", "idx"], ["known"], axis=1),
        node("GatherElements", ["x", "j"], ["runtime"], axis=0),
    ]
    inits = [init("idx", [[0, -1], [2, 0]], np.int64)]
    return make(nodes, [vi("x", F32, [2, 3]), vi("j", I32, [1, 3])],
                [vi("known", F32, [2, 2]), vi("runtime", F32, [1, 3])],
                inits, opset=13)


@model()
def scatter_nd():
    """Rows 2 and -3 (= 0) of a [3, 2] data: written, and added."""
    nodes = [
        node("ScatterND", ["x", "rows", "u"], ["written"]),
        node("ScatterND", ["x", "rows", "u"], ["added"], reduction="add"),
    ]
    inits = [init("rows", [[2], [-3]], np.int64)]
    return make(nodes, [vi("x", F32, [3, 2]), vi("u", F32, [2, 2])],
                [vi("written", F32, [3, 2]), vi("added", F32, [3, 2])],
                inits, opset=18)


@model(check=False)
def bad_scatter_nd_updates():
    nodes = [node("ScatterND", ["x", "rows", "u"], ["y"], name="snd")]
    inits = [init("rows", [[2], [0]], np.int64)]
    return make(nodes, [vi("x", F32, [3, 2]), vi("u", F32, [2, 3])],
                [vi("y", F32, [3, 2])], inits, opset=18)


@model(check=False)
def bad_scatter_nd_mul():
    # A product scatter of integers (the lowering multiplies float data).
    nodes = [node("ScatterND", ["x", "rows", "u"], ["y"], name="snd",
                  reduction="mul")]
    inits = [init("rows", [[2], [0]], np.int64)]
    return make(nodes, [vi("x", I64, [3, 2]), vi("u", I64, [2, 2])],
                [vi("y", I64, [3, 2])], inits, opset=18)


@model()
def trilu():
    nodes = [
        node("Trilu", ["x"], ["upper"]),
        node("Trilu", ["x", "k"], ["lower"], upper=0),
        node("Trilu", ["x", "far"], ["all"], upper=0),
    ]
    inits = [init("k", -1, np.int64), init("far", 10, np.int64)]
    return make(nodes, [vi("x", F32, [2, 3, 4])],
                [vi(n, F32, [2, 3, 4]) for n in ["upper", "lower", "all"]],
                inits, opset=14)


@model()
def cumsum():
    nodes = [
        node("CumSum", ["x", "axis"], ["inclusive"]),
        node("CumSum", ["x", "axis"], ["exclusive"], exclusive=1),
        node("CumSum", ["n", "first"], ["reverse"], reverse=1),
    ]
    inits = [init("axis", -1, np.int64), init("first", 0, np.int32)]
    return make(nodes, [vi("x", F32, [2, 5]), vi("n", I64, [3, 2])],
                [vi("inclusive", F32, [2, 5]), vi("exclusive", F32, [2, 5]),
                 vi("reverse", I64, [3, 2])], inits, opset=14)


@model(check=False)
def bad_pad_mode():
    return make([node("Pad", ["x", "pads"], ["y"], name="pad", mode="symmetric")],
                [vi("x", F32, [2, 3])], [vi("y", F32, None)],
                [init("pads", [1, 1, 1, 1], np.int64)], opset=19)


@model(check=False)
def bad_pad_pads():
    return make([node("Pad", ["x", "pads"], ["y"], name="pad")],
                [vi("x", F32, [2, 3])], [vi("y", F32, None)],
                [init("pads", [1, 1, 1], np.int64)], opset=19)


@model(check=False)
def bad_pad_runtime():
    return make([node("Pad", ["x", "p"], ["y"], name="pad")],
                [vi("x", F32, [2, 3]), vi("p", I64, [4])], [vi("y", F32, None)],
                opset=19)


@model(check=False)
def bad_and_float():
    return make([node("And", ["x", "x"], ["y"], name="and")],
                [vi("x", F32, [2, 3])], [vi("y", BOOL, None)], opset=13)


@model(check=False)
def bad_mod_float():
    return make([node("Mod", ["x", "x"], ["y"], name="mod", fmod=1)],
                [vi("x", F32, [2, 3])], [vi("y", F32, None)], opset=13)


@model(check=False)
def bad_gather_elements_rank():
    return make([node("GatherElements", ["x", "i"], ["y"], name="ge")],
                [vi("x", F32, [2, 3]), vi("i", I64, [3])], [vi("y", F32, None)],
                opset=13)


@model(check=False)
def bad_gather_elements_index():
    return make([node("GatherElements", ["x", "i"], ["y"], name="ge", axis=1)],
                [vi("x", F32, [2, 3])], [vi("y", F32, None)],
                [init("i", [[0, 3]], np.int64)], opset=13)


@model(check=False)
def bad_trilu_rank():
    return make([node("Trilu", ["x"], ["y"], name="tri")],
                [vi("x", F32, [3])], [vi("y", F32, None)], opset=14)


@model()
def float64_scale():
    """PyTorch's export of an attention scale: a float64 Constant, its Sqrt
    (and Pow, Reciprocal, Exp, Log) on it, then a Cast to
    float32 that multiplies the input: all folded at import."""
    nodes = [
        const("d", 16.0, np.float64),
        node("Sqrt", ["d"], ["s"]),
        node("Cast", ["s"], ["s32"], to=TP.FLOAT),
        node("Div", ["x", "s32"], ["scaled"]),
        const("two", 2.0, np.float64),
        node("Pow", ["d", "two"], ["p"]),
        node("Reciprocal", ["p"], ["r"]),
        node("Exp", ["two"], ["e"]),
        node("Log", ["e"], ["l"]),
        node("Sum", ["r", "l"], ["t"]),
        node("Cast", ["t"], ["t32"], to=TP.FLOAT),
        node("Mul", ["scaled", "t32"], ["y"]),
    ]
    return make(nodes, [vi("x", F32, [2, 3])], [vi("y", F32, [2, 3])])


@model(check=False)
def bad_float64_constant():
    """A float64 constant that a run-time op reads (ONNX's checker would
    reject the mixed types too)."""
    nodes = [
        const("c", [1.0, 2.0, 3.0], np.float64),
        node("Add", ["x", "c"], ["y"], name="add64"),
    ]
    return make(nodes, [vi("x", F32, [3])], [vi("y", F32, [3])])


@model()
def dynamo_ops():
    """What torch.onnx.export(dynamo=True) writes besides the usual ops:
    CastLike of a constant scalar and of a run-time value, and a
    SplitToSequence whose pieces SequenceAt reads (GPT-2's fused QKV):
    sizes given, equal pieces of a scalar size, and pieces of 1 without
    keepdims."""
    nodes = [
        const("half", 0.5, np.float64),
        node("CastLike", ["half", "x"], ["half32"]),
        node("Mul", ["x", "half32"], ["scaled"]),
        node("CastLike", ["i", "x"], ["i32f"]),
        node("SplitToSequence", ["scaled", "sizes"], ["seq"], axis=1),
        node("SequenceAt", ["seq", "one"], ["b"]),
        node("SequenceAt", ["seq", "minus1"], ["c"]),
        node("SplitToSequence", ["scaled", "two"], ["seq2"], axis=1),
        node("SequenceAt", ["seq2", "one"], ["d"]),
        node("SplitToSequence", ["scaled"], ["seq3"], axis=0, keepdims=0),
        node("SequenceAt", ["seq3", "one"], ["e"]),
        const("sizes", [1, 2, 3]),
        const("one", 1),
        const("minus1", -1),
        const("two", 2),
    ]
    nodes = nodes[-4:] + nodes[:-4]
    return make(nodes, [vi("x", F32, [2, 6]), vi("i", I64, [2, 6])],
                [vi("b", F32, [2, 2]), vi("c", F32, [2, 3]), vi("d", F32, [2, 2]),
                 vi("e", F32, [6]), vi("i32f", F32, [2, 6])])


@model(check=False)
def bad_sequence_use():
    """A sequence read by an op other than SequenceAt."""
    nodes = [
        node("SplitToSequence", ["x"], ["seq"], axis=0),
        node("Identity", ["seq"], ["y"], name="use_seq"),
    ]
    return make(nodes, [vi("x", F32, [2, 3])], [vi("y", F32, [2, 3])])


@model()
def buffer_initializer():
    """A float initializer that is a buffer (a rotary frequency table):
    with --constants it is a constant, not a weight."""
    nodes = [node("Mul", ["x", "inv_freq"], ["y"])]
    return make(nodes, [vi("x", F32, [2, 4])], [vi("y", F32, [2, 4])],
                inits=[init("inv_freq", [1.0, 0.5, 0.25, 0.125], np.float32)])


def main(argv):
    if len(argv) == 2 and argv[1] == "--list":
        print("\n".join(sorted(MODELS)))
        return 0
    if len(argv) != 3 or argv[1] not in MODELS:
        print(f"usage: {argv[0]} NAME OUT.onnx  (NAME from --list)",
              file=sys.stderr)
        return 2
    name, out = argv[1], argv[2]
    fn, check = MODELS[name]
    if fn.__code__.co_argcount == 1:
        fn(out)
        return 0
    m = fn()
    if check:
        # Fills in the output shapes left open (None) and checks the model,
        # including that the written output shapes agree with ONNX's.
        m = onnx.shape_inference.infer_shapes(m, check_type=True,
                                              strict_mode=True)
        onnx.checker.check_model(m, full_check=True)
    onnx.save_model(m, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

// Nodes the importer rejects: the diagnostic names the node and its op
// type (also when the loom op's own shape rule or verifier is what fails)
// and says what is wrong; the exit is non-zero and nothing crashes.
// REQUIRES: onnx

// RUN: %loompy %S/Inputs/make_onnx.py bad_axis %t.axis.onnx
// RUN: not loom-translate --import-onnx %t.axis.onnx -o - 2>&1 | FileCheck %s --check-prefix=AXIS --implicit-check-not=error:
// AXIS: axis.onnx:0:0: error: node 'softmax' (Softmax): axis 3 is out of range for rank 2

// RUN: %loompy %S/Inputs/make_onnx.py bad_broadcast %t.broadcast.onnx
// RUN: not loom-translate --import-onnx %t.broadcast.onnx -o - 2>&1 | FileCheck %s --check-prefix=BCAST --implicit-check-not=error:
// BCAST: broadcast.onnx:0:0: error: node 'add' (Add): operand shapes [2, 3] and [4] do not broadcast

// RUN: %loompy %S/Inputs/make_onnx.py bad_mixed_types %t.mixed_types.onnx
// RUN: not loom-translate --import-onnx %t.mixed_types.onnx -o - 2>&1 | FileCheck %s --check-prefix=MIXED --implicit-check-not=error:
// MIXED: mixed_types.onnx:0:0: error: node 'max' (Max): operand element types 'f32' and 'i64' differ; insert a Cast

// RUN: %loompy %S/Inputs/make_onnx.py bad_cast_to %t.cast_to.onnx
// RUN: not loom-translate --import-onnx %t.cast_to.onnx -o - 2>&1 | FileCheck %s --check-prefix=CAST --implicit-check-not=error:
// CAST: cast_to.onnx:0:0: error: node 'cast' (Cast): cast to float64 is not supported (Loom has float32, float16, bfloat16, int64, int32, bool)

// RUN: %loompy %S/Inputs/make_onnx.py bad_gelu_approx %t.gelu_approx.onnx
// RUN: not loom-translate --import-onnx %t.gelu_approx.onnx -o - 2>&1 | FileCheck %s --check-prefix=GELU --implicit-check-not=error:
// GELU: gelu_approx.onnx:0:0: error: node 'gelu' (Gelu): approximate = 'fast' is not one of 'none', 'tanh'

// RUN: %loompy %S/Inputs/make_onnx.py bad_dropout_mask %t.dropout_mask.onnx
// RUN: not loom-translate --import-onnx %t.dropout_mask.onnx -o - 2>&1 | FileCheck %s --check-prefix=DROPMASK --implicit-check-not=error:
// DROPMASK: dropout_mask.onnx:0:0: error: node 'drop' (Dropout): output 1 (the dropout mask) is used, which Loom does not support

// RUN: %loompy %S/Inputs/make_onnx.py bad_matmul %t.matmul.onnx
// RUN: not loom-translate --import-onnx %t.matmul.onnx -o - 2>&1 | FileCheck %s --check-prefix=MATMUL --implicit-check-not=error:
// MATMUL: matmul.onnx:0:0: error: node 'mm' (MatMul): contracting sizes differ: [4, 8] x [7, 5]

// RUN: %loompy %S/Inputs/make_onnx.py bad_matmul_batch %t.matmul_batch.onnx
// RUN: not loom-translate --import-onnx %t.matmul_batch.onnx -o - 2>&1 | FileCheck %s --check-prefix=MMBATCH --implicit-check-not=error:
// MMBATCH: matmul_batch.onnx:0:0: error: node 'mm' (MatMul): batch dimensions of [2, 4, 8] and [3, 8, 5] do not broadcast

// The loom op's own shape rule rejects it; the error still names the node.
// RUN: %loompy %S/Inputs/make_onnx.py bad_matmul_types %t.matmul_types.onnx
// RUN: not loom-translate --import-onnx %t.matmul_types.onnx -o - 2>&1 | FileCheck %s --check-prefix=MMTYPES --implicit-check-not=error:
// MMTYPES: matmul_types.onnx:0:0: error: node 'mm' (MatMul): 'loom.dot_general' op operand element types differ: 'f32' vs 'f16'

// C must broadcast one way, to the result [1, 5].
// RUN: %loompy %S/Inputs/make_onnx.py bad_gemm_c %t.gemm_c.onnx
// RUN: not loom-translate --import-onnx %t.gemm_c.onnx -o - 2>&1 | FileCheck %s --check-prefix=GEMMC --implicit-check-not=error:
// GEMMC: gemm_c.onnx:0:0: error: node 'gemm' (Gemm): C of shape [3, 5] does not broadcast to [1, 5]

// RUN: %loompy %S/Inputs/make_onnx.py bad_layer_norm_scale %t.layer_norm_scale.onnx
// RUN: not loom-translate --import-onnx %t.layer_norm_scale.onnx -o - 2>&1 | FileCheck %s --check-prefix=LNSCALE --implicit-check-not=error:
// LNSCALE: layer_norm_scale.onnx:0:0: error: node 'ln' (LayerNormalization): Scale of shape [5, 3, 4] does not broadcast to [4]

// The loom op's verifier rejects it; the error still names the node.
// RUN: %loompy %S/Inputs/make_onnx.py bad_softmax_int %t.softmax_int.onnx
// RUN: not loom-translate --import-onnx %t.softmax_int.onnx -o - 2>&1 | FileCheck %s --check-prefix=SMINT --implicit-check-not=error:
// SMINT: softmax_int.onnx:0:0: error: node 'softmax' (Softmax): 'loom.softmax' op operand #0 must be ranked tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<2x3xi64>'

// RUN: %loompy %S/Inputs/make_onnx.py bad_concat %t.concat.onnx
// RUN: not loom-translate --import-onnx %t.concat.onnx -o - 2>&1 | FileCheck %s --check-prefix=CONCAT --implicit-check-not=error:
// CONCAT: concat.onnx:0:0: error: node 'cat' (Concat): 'loom.concat' op input 1 has size 3 in dimension 0 where input 0 has 2; only dimension 1 may differ

// RUN: %loompy %S/Inputs/make_onnx.py bad_transpose_perm %t.transpose_perm.onnx
// RUN: not loom-translate --import-onnx %t.transpose_perm.onnx -o - 2>&1 | FileCheck %s --check-prefix=PERM --implicit-check-not=error:
// PERM: transpose_perm.onnx:0:0: error: node 'tr' (Transpose): perm [] is not a permutation of the 2 input dimensions

// RUN: %loompy %S/Inputs/make_onnx.py bad_reshape_size %t.reshape_size.onnx
// RUN: not loom-translate --import-onnx %t.reshape_size.onnx -o - 2>&1 | FileCheck %s --check-prefix=RESHAPE --implicit-check-not=error:
// RESHAPE: reshape_size.onnx:0:0: error: node 'reshape' (Reshape): cannot reshape [2, 3]: cannot infer the -1 in [5, -1] (6 elements)

// RUN: %loompy %S/Inputs/make_onnx.py bad_runtime_shape %t.runtime_shape.onnx
// RUN: not loom-translate --import-onnx %t.runtime_shape.onnx -o - 2>&1 | FileCheck %s --check-prefix=RTSHAPE --implicit-check-not=error:
// RTSHAPE: runtime_shape.onnx:0:0: error: node 'reshape_dyn' (Reshape): the target shape (input 1) must be known at import time (a constant or shape arithmetic on constants); it is computed at run time

// RUN: %loompy %S/Inputs/make_onnx.py bad_split %t.split.onnx
// RUN: not loom-translate --import-onnx %t.split.onnx -o - 2>&1 | FileCheck %s --check-prefix=SPLIT --implicit-check-not=error:
// SPLIT: split.onnx:0:0: error: node 'split' (Split): split sizes [3, 3] do not add up to 7, the size of dimension 0

// RUN: %loompy %S/Inputs/make_onnx.py bad_slice_step %t.slice_step.onnx
// RUN: not loom-translate --import-onnx %t.slice_step.onnx -o - 2>&1 | FileCheck %s --check-prefix=SLICE --implicit-check-not=error:
// SLICE: slice_step.onnx:0:0: error: node 'reverse' (Slice): step -1 on axis 0 is not supported (only positive steps)

// RUN: %loompy %S/Inputs/make_onnx.py bad_gather_index %t.gather_index.onnx
// RUN: not loom-translate --import-onnx %t.gather_index.onnx -o - 2>&1 | FileCheck %s --check-prefix=GATHER --implicit-check-not=error:
// GATHER: gather_index.onnx:0:0: error: node 'gather_oob' (Gather): index 7 is out of range for dimension 0 of size 5

// RUN: %loompy %S/Inputs/make_onnx.py bad_constant_of_shape %t.constant_of_shape.onnx
// RUN: not loom-translate --import-onnx %t.constant_of_shape.onnx -o - 2>&1 | FileCheck %s --check-prefix=FILL --implicit-check-not=error:
// FILL: constant_of_shape.onnx:0:0: error: node 'fill' (ConstantOfShape): the shape [2, -3] has a negative or too large size

// RUN: %loompy %S/Inputs/make_onnx.py bad_range %t.range.onnx
// RUN: not loom-translate --import-onnx %t.range.onnx -o - 2>&1 | FileCheck %s --check-prefix=RANGE --implicit-check-not=error:
// RANGE: range.onnx:0:0: error: node 'range' (Range): delta is 0

// axes 1 and -1 are the same dimension of a rank-2 input.
// RUN: %loompy %S/Inputs/make_onnx.py bad_reduce_axes %t.reduce_axes.onnx
// RUN: not loom-translate --import-onnx %t.reduce_axes.onnx -o - 2>&1 | FileCheck %s --check-prefix=REDUCE --implicit-check-not=error:
// REDUCE: reduce_axes.onnx:0:0: error: node 'sum' (ReduceSum): axes [1, -1] repeat dimension 1

// RUN: %loompy %S/Inputs/make_onnx.py bad_loss_labels %t.loss_labels.onnx
// RUN: not loom-translate --import-onnx %t.loss_labels.onnx -o - 2>&1 | FileCheck %s --check-prefix=LABELS --implicit-check-not=error:
// LABELS: loss_labels.onnx:0:0: error: node 'sce' (SoftmaxCrossEntropyLoss): labels must be int32 or int64, not 'f32'

// RUN: %loompy %S/Inputs/make_onnx.py bad_sce_weights %t.sce_weights.onnx
// RUN: not loom-translate --import-onnx %t.sce_weights.onnx -o - 2>&1 | FileCheck %s --check-prefix=SCEW --implicit-check-not=error:
// SCEW: sce_weights.onnx:0:0: error: node 'sce' (SoftmaxCrossEntropyLoss): class weights of type 'tensor<7xf32>' must be a vector of 10 'f32' (one per class)

// RUN: %loompy %S/Inputs/make_onnx.py bad_nll %t.nll.onnx
// RUN: not loom-translate --import-onnx %t.nll.onnx -o - 2>&1 | FileCheck %s --check-prefix=NLL --implicit-check-not=error:
// NLL: nll.onnx:0:0: error: node 'nll' (NegativeLogLikelihoodLoss): only NegativeLogLikelihoodLoss of a LogSoftmax output is supported (it becomes a cross-entropy over the LogSoftmax input)

// RUN: %loompy %S/Inputs/make_onnx.py bad_nll_axis %t.nll_axis.onnx
// RUN: not loom-translate --import-onnx %t.nll_axis.onnx -o - 2>&1 | FileCheck %s --check-prefix=NLLAXIS --implicit-check-not=error:
// NLLAXIS: nll_axis.onnx:0:0: error: node 'nll' (NegativeLogLikelihoodLoss): the LogSoftmax feeding this loss normalises axis 2, not the class axis 1

// A node without a name is named by its first output.
// RUN: %loompy %S/Inputs/make_onnx.py bad_unnamed_node %t.unnamed_node.onnx
// RUN: not loom-translate --import-onnx %t.unnamed_node.onnx -o - 2>&1 | FileCheck %s --check-prefix=UNNAMED --implicit-check-not=error:
// UNNAMED: unnamed_node.onnx:0:0: error: unnamed node producing 'probs' (Softmax): axis 2 is out of range for rank 2

// Ops of HuggingFace exports, malformed or beyond what Loom imports.
// RUN: %loompy %S/Inputs/make_onnx.py bad_pad_mode %t.pad_mode.onnx
// RUN: not loom-translate --import-onnx %t.pad_mode.onnx -o - 2>&1 | FileCheck %s --check-prefix=PADMODE --implicit-check-not=error:
// PADMODE: pad_mode.onnx:0:0: error: node 'pad' (Pad): mode 'symmetric' is not supported (Loom imports 'constant', 'edge', 'reflect', 'wrap')

// RUN: %loompy %S/Inputs/make_onnx.py bad_pad_pads %t.pad_pads.onnx
// RUN: not loom-translate --import-onnx %t.pad_pads.onnx -o - 2>&1 | FileCheck %s --check-prefix=PADPADS --implicit-check-not=error:
// PADPADS: pad_pads.onnx:0:0: error: node 'pad' (Pad): pads has 3 entries; 2 axes need 4

// RUN: %loompy %S/Inputs/make_onnx.py bad_pad_runtime %t.pad_runtime.onnx
// RUN: not loom-translate --import-onnx %t.pad_runtime.onnx -o - 2>&1 | FileCheck %s --check-prefix=PADRT --implicit-check-not=error:
// PADRT: pad_runtime.onnx:0:0: error: node 'pad' (Pad): pads (input 1) must be known at import time

// RUN: %loompy %S/Inputs/make_onnx.py bad_and_float %t.and_float.onnx
// RUN: not loom-translate --import-onnx %t.and_float.onnx -o - 2>&1 | FileCheck %s --check-prefix=ANDF --implicit-check-not=error:
// ANDF: and_float.onnx:0:0: error: node 'and' (And): the operands must be bool, not 'f32'

// RUN: %loompy %S/Inputs/make_onnx.py bad_mod_float %t.mod_float.onnx
// RUN: not loom-translate --import-onnx %t.mod_float.onnx -o - 2>&1 | FileCheck %s --check-prefix=MODF --implicit-check-not=error:
// MODF: mod_float.onnx:0:0: error: node 'mod' (Mod): Mod of floating-point operands ('f32') is not supported: Loom has no exact fmod

// RUN: %loompy %S/Inputs/make_onnx.py bad_gather_elements_rank %t.ge_rank.onnx
// RUN: not loom-translate --import-onnx %t.ge_rank.onnx -o - 2>&1 | FileCheck %s --check-prefix=GERANK --implicit-check-not=error:
// GERANK: ge_rank.onnx:0:0: error: node 'ge' (GatherElements): indices of shape [3] must have the rank of data, [2, 3] (at least 1)

// RUN: %loompy %S/Inputs/make_onnx.py bad_gather_elements_index %t.ge_index.onnx
// RUN: not loom-translate --import-onnx %t.ge_index.onnx -o - 2>&1 | FileCheck %s --check-prefix=GEINDEX --implicit-check-not=error:
// GEINDEX: ge_index.onnx:0:0: error: node 'ge' (GatherElements): index 3 is out of range for dimension 1 of size 3

// RUN: %loompy %S/Inputs/make_onnx.py bad_scatter_nd_updates %t.snd_updates.onnx
// RUN: not loom-translate --import-onnx %t.snd_updates.onnx -o - 2>&1 | FileCheck %s --check-prefix=SNDUPD --implicit-check-not=error:
// SNDUPD: snd_updates.onnx:0:0: error: node 'snd' (ScatterND): updates of type 'tensor<2x3xf32>' must be [2, 2] of 'f32' (the indices' shape without its last dimension, then the data dimensions they do not index)

// RUN: %loompy %S/Inputs/make_onnx.py bad_scatter_nd_mul %t.snd_mul.onnx
// RUN: not loom-translate --import-onnx %t.snd_mul.onnx -o - 2>&1 | FileCheck %s --check-prefix=SNDMUL --implicit-check-not=error:
// SNDMUL: snd_mul.onnx:0:0: error: node 'snd' (ScatterND): reduction 'mul' on 'i64' data is not supported (float data only)

// RUN: %loompy %S/Inputs/make_onnx.py bad_trilu_rank %t.trilu_rank.onnx
// RUN: not loom-translate --import-onnx %t.trilu_rank.onnx -o - 2>&1 | FileCheck %s --check-prefix=TRIRANK --implicit-check-not=error:
// TRIRANK: trilu_rank.onnx:0:0: error: node 'tri' (Trilu): the input must have rank 2 or more, not 1

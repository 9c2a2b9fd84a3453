// Missing, unknown and mismatched inputs, and malformed .npy and safetensors
// files: each error names the argument, its expected type and the fix.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: loom-run %s --entry make_inputs --output-dir %t
// RUN: %loompy %S/Inputs/write_safetensors.py %t/w.safetensors fc.weight:F32:3x2:1,0,0,1,1,1
// RUN: %loompy %S/Inputs/write_safetensors.py %t/w-i64.safetensors fc.weight:I64:3x2:1,0,0,1,1,1
// RUN: %loompy %S/Inputs/write_safetensors.py %t/w-shape.safetensors fc.weight:F32:2x3:1,0,0,1,1,1

// RUN: not loom-run %s --input y=%t/x.npy 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: loom-run: error: --input names 'y', which is no argument of @main (its arguments: x, fc.weight, labels)

// RUN: not loom-run %s --weights %t/w.safetensors --input labels=%t/labels.npy 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: loom-run: error: input 'x' (argument 0, tensor<2x3xf32>) has no value: give --input x=FILE.npy (or --random-inputs)

// RUN: not loom-run %s --input x=%t/x.npy --input labels=%t/labels.npy 2>&1 | FileCheck %s --check-prefix=NOWEIGHTS
// NOWEIGHTS: loom-run: error: parameter 'fc.weight' (argument 1, tensor<3x2xf32>) has no value: give --weights FILE.safetensors

// RUN: not loom-run %s --input x=%t/x_wrong.npy --input labels=%t/labels.npy --weights %t/w.safetensors 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SHAPE
// SHAPE: loom-run: error: input 'x' (argument 0, tensor<2x3xf32>) expects shape [2, 3], but '{{.*}}x_wrong.npy' has shape (3, 2)

// RUN: not loom-run %s --input x=%t/labels.npy --input labels=%t/labels.npy --weights %t/w.safetensors 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DTYPE
// DTYPE: loom-run: error: input 'x' (argument 0, tensor<2x3xf32>) expects element type f32, but '{{.*}}labels.npy' holds int64 ('<i8')

// bf16 data ('<V2') is taken as bf16 only where bf16 is expected.
// RUN: not loom-run %s --input x=%t/h.npy --input labels=%t/labels.npy --weights %t/w.safetensors 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OPAQUE
// OPAQUE: error: input 'x' (argument 0, tensor<2x3xf32>) expects element type f32, but '{{.*}}h.npy' holds 2-byte opaque (ml_dtypes bfloat16) ('<V2')

// RUN: not loom-run %s --input x=%t/x.npy --input labels=%t/labels.npy --weights %t/w-i64.safetensors 2>&1 \
// RUN:   | FileCheck %s --check-prefix=WDTYPE
// WDTYPE: loom-run: error: parameter 'fc.weight' (argument 1, tensor<3x2xf32>) expects element type f32, but tensor 'fc.weight' of '{{.*}}w-i64.safetensors' has dtype I64

// RUN: not loom-run %s --input x=%t/x.npy --input labels=%t/labels.npy --weights %t/w-shape.safetensors 2>&1 \
// RUN:   | FileCheck %s --check-prefix=WSHAPE
// WSHAPE: loom-run: error: parameter 'fc.weight' (argument 1, tensor<3x2xf32>) expects shape [3, 2], but tensor 'fc.weight' of '{{.*}}w-shape.safetensors' has shape (2, 3)

// RUN: printf 'not numpy at all' > %t/garbage.npy
// RUN: not loom-run %s --input x=%t/garbage.npy 2>&1 | FileCheck %s --check-prefix=GARBAGE
// GARBAGE: loom-run: error: input 'x' (argument 0, tensor<2x3xf32>): '{{.*}}garbage.npy': not a .npy file: it does not start with "\x93NUMPY"

// A header that ends early.
// RUN: printf '\223NUMPY\001\000\100\000{"descr": "<f4",' > %t/truncated.npy
// RUN: not loom-run %s --input x=%t/truncated.npy 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// TRUNCATED: error: input 'x' (argument 0, tensor<2x3xf32>): '{{.*}}truncated.npy': truncated .npy file: the header is 64 bytes but the file has only 16 after the prefix

// Too few data bytes for the shape.
// RUN: printf "\223NUMPY\001\000\074\000{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n1234" > %t/short.npy
// RUN: not loom-run %s --input x=%t/short.npy 2>&1 | FileCheck %s --check-prefix=SHORT
// SHORT: error: input 'x' (argument 0, tensor<2x3xf32>): '{{.*}}short.npy': truncated .npy file: shape (2, 3) of float32 needs 24 data bytes, the file has 4

// RUN: printf "\223NUMPY\001\000\073\000{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }\n" > %t/fortran.npy
// RUN: not loom-run %s --input x=%t/fortran.npy 2>&1 | FileCheck %s --check-prefix=FORTRAN
// FORTRAN: '{{.*}}fortran.npy': the array is in Fortran order; save it in C order (numpy.ascontiguousarray) first

// RUN: printf "\223NUMPY\001\000\074\000{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }\n" > %t/big-endian.npy
// RUN: not loom-run %s --input x=%t/big-endian.npy 2>&1 | FileCheck %s --check-prefix=ENDIAN
// ENDIAN: '{{.*}}big-endian.npy': dtype '>f4' is big-endian; save the array little-endian

// RUN: printf "\223NUMPY\001\000\074\000{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }\n" > %t/f64.npy
// RUN: not loom-run %s --input x=%t/f64.npy 2>&1 | FileCheck %s --check-prefix=F64
// F64: '{{.*}}f64.npy': dtype '<f8' is not supported (supported: '<f4' float32, '<f2' float16, '<i8' int64, '<i4' int32, '|b1' bool, '<V2' ml_dtypes bfloat16)

// RUN: printf "\223NUMPY\007\000\066\000" > %t/version.npy
// RUN: not loom-run %s --input x=%t/version.npy 2>&1 | FileCheck %s --check-prefix=VERSION
// VERSION: '{{.*}}version.npy': unsupported .npy format version 7.0 (Loom reads 1.0, 2.0 and 3.0)

// RUN: printf "\223NUMPY\001\000\074\000{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }\n" > %t/header.npy
// RUN: not loom-run %s --input x=%t/header.npy 2>&1 | FileCheck %s --check-prefix=HEADER
// HEADER: '{{.*}}header.npy': malformed .npy header at character 54: 'shape' must be a tuple of non-negative integers

// RUN: printf 'abc' > %t/garbage.safetensors
// RUN: not loom-run %s --input x=%t/x.npy --weights %t/garbage.safetensors 2>&1 | FileCheck %s --check-prefix=STGARBAGE
// STGARBAGE: loom-run: error: cannot read the weights: '{{.*}}garbage.safetensors': not a safetensors file: shorter than its 8-byte header length

// RUN: printf '\017\000\000\000\000\000\000\000{"a": [1, 2]}  ' > %t/bad-header.safetensors
// RUN: not loom-run %s --input x=%t/x.npy --weights %t/bad-header.safetensors 2>&1 | FileCheck %s --check-prefix=STHEADER
// STHEADER: loom-run: error: cannot read the weights: '{{.*}}bad-header.safetensors': malformed safetensors header at byte 6: tensor "a" must be an object

// RUN: not loom-run %s --input x=%t/x.npy --weights %t/missing.safetensors 2>&1 | FileCheck %s --check-prefix=STMISSING
// STMISSING: loom-run: error: cannot read the weights: cannot open '{{.*}}missing.safetensors'

// RUN: not loom-run %s --input x 2>&1 | FileCheck %s --check-prefix=SYNTAX
// SYNTAX: loom-run: error: invalid --input 'x': expected NAME=FILE.npy, e.g. --input x=x.npy

// RUN: not loom-run %s --input x=%t/x.npy --input x=%t/x.npy 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: loom-run: error: --input gives input 'x' (argument 0, tensor<2x3xf32>) twice

// RUN: not loom-run %s --entry nothing 2>&1 | FileCheck %s --check-prefix=ENTRY
// ENTRY: loom-run: error: --entry names @nothing, which is not a function of the module (its functions: @make_inputs, @main)

// RUN: not loom-run %s --seed 3 2>&1 | FileCheck %s --check-prefix=SEED
// SEED: loom-run: error: --seed is the seed of --random-inputs; add --random-inputs

func.func @make_inputs() -> (tensor<2x3xf32> {loom.name = "x"}, tensor<3x2xf32> {loom.name = "x_wrong"},
                             tensor<2xi64> {loom.name = "labels"}, tensor<2xbf16> {loom.name = "h"}) {
  %x = loom.constant dense<1.0> : tensor<2x3xf32>
  %x_wrong = loom.constant dense<1.0> : tensor<3x2xf32>
  %labels = loom.constant dense<[0, 1]> : tensor<2xi64>
  %h = loom.constant dense<1.0> : tensor<2xbf16>
  return %x, %x_wrong, %labels, %h : tensor<2x3xf32>, tensor<3x2xf32>, tensor<2xi64>, tensor<2xbf16>
}

func.func @main(%x: tensor<2x3xf32> {loom.name = "x"},
                %w: tensor<3x2xf32> {loom.name = "fc.weight", loom.param},
                %labels: tensor<2xi64> {loom.name = "labels"}) -> tensor<f32> {
  %logits = loom.dot_general %x, %w, contracting_dims = [1] x [0]
      : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %loss = loom.cross_entropy %logits, %labels : (tensor<2x2xf32>, tensor<2xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

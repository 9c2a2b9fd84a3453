// Arguments from .npy files and a safetensors weights file, results to .npy
// files; the .npy inputs are written by loom-run itself (@make_inputs).
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: loom-run %s --entry make_inputs --output-dir %t
// RUN: %loompy %S/Inputs/write_safetensors.py %t/w.safetensors \
// RUN:   fc.weight:F32:3x2:1,0,0,1,1,1 fc.bias:F32:2:0.5,-0.5 unused:I64::7
// RUN: loom-run %s --entry model --input x=%t/x.npy --input labels=%t/labels.npy \
// RUN:   --weights %t/w.safetensors --print --output-dir %t/out | FileCheck %s --check-prefix=MODEL
// `argN` names an argument too.
// RUN: loom-run %s --entry model --input arg0=%t/x.npy --input arg3=%t/labels.npy \
// RUN:   --weights %t/w.safetensors --print | FileCheck %s --check-prefix=MODEL
// The written results read back as the same values.
// RUN: loom-run %s --entry echo_f32 --input x=%t/out/logits.npy --print | FileCheck %s --check-prefix=BACK
// Every element type round-trips through .npy, bf16 as ml_dtypes' '<V2'.
// RUN: loom-run %s --entry echo_all --input h=%t/h.npy --input f=%t/f.npy --input i=%t/i.npy \
// RUN:   --input b=%t/b.npy --print | FileCheck %s --check-prefix=ALL
// Weights of other element types come from safetensors too.
// RUN: %loompy %S/Inputs/write_safetensors.py %t/all.safetensors \
// RUN:   h:BF16:2:1.5,-2 f:F16:2:0.25,3 i:I32:2:-7,9 b:BOOL:2:1,0
// RUN: loom-run %s --entry echo_all --weights %t/all.safetensors --print | FileCheck %s --check-prefix=ST

func.func @make_inputs() -> (tensor<2x3xf32> {loom.name = "x"}, tensor<2xi64> {loom.name = "labels"},
                             tensor<2xbf16> {loom.name = "h"}, tensor<2xf16> {loom.name = "f"},
                             tensor<2xi32> {loom.name = "i"}, tensor<2xi1> {loom.name = "b"}) {
  %x = loom.iota dim = 1 : tensor<2x3xf32>
  %r = loom.iota dim = 0 : tensor<2x3xf32>
  %three = loom.constant dense<3.0> : tensor<2x3xf32>
  %r3 = loom.mul %r, %three : tensor<2x3xf32>
  // [[0, 1, 2], [3, 4, 5]]
  %xs = loom.add %x, %r3 : tensor<2x3xf32>
  %labels = loom.constant dense<[0, 1]> : tensor<2xi64>
  %h = loom.constant dense<[1.5, -2.0]> : tensor<2xbf16>
  %f = loom.constant dense<[0.25, 3.0]> : tensor<2xf16>
  %i = loom.constant dense<[-7, 9]> : tensor<2xi32>
  %b = loom.constant dense<[true, false]> : tensor<2xi1>
  return %xs, %labels, %h, %f, %i, %b
      : tensor<2x3xf32>, tensor<2xi64>, tensor<2xbf16>, tensor<2xf16>, tensor<2xi32>, tensor<2xi1>
}

func.func @model(%x: tensor<2x3xf32> {loom.name = "x"},
                 %w: tensor<3x2xf32> {loom.name = "fc.weight", loom.param},
                 %b: tensor<2xf32> {loom.name = "fc.bias", loom.param},
                 %labels: tensor<2xi64> {loom.name = "labels"})
    -> (tensor<2x2xf32> {loom.name = "logits"}, tensor<f32> {loom.name = "loss"}) {
  %xw = loom.dot_general %x, %w, contracting_dims = [1] x [0]
      : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %bb = loom.broadcast %b, dims = [1] : tensor<2xf32> -> tensor<2x2xf32>
  %logits = loom.add %xw, %bb : tensor<2x2xf32>
  %loss = loom.cross_entropy %logits, %labels : (tensor<2x2xf32>, tensor<2xi64>) -> tensor<f32>
  return %logits, %loss : tensor<2x2xf32>, tensor<f32>
}
// x w = [[0 + 2, 1 + 2], [3 + 5, 4 + 5]] = [[2, 3], [8, 9]]; + [0.5, -0.5].
// MODEL:      logits : tensor<2x2xf32>
// MODEL-NEXT: {{\[\[}}2.5, 2.5],
// MODEL-NEXT:  [8.5, 8.5]]
// Equal logits in each row: each sample's loss is ln 2.
// MODEL:      loss : tensor<f32>
// MODEL-NEXT: 0.6931472

func.func @echo_f32(%x: tensor<2x2xf32> {loom.name = "x"}) -> tensor<2x2xf32> {
  return %x : tensor<2x2xf32>
}
// BACK:      result0 : tensor<2x2xf32>
// BACK-NEXT: {{\[\[}}2.5, 2.5],
// BACK-NEXT:  [8.5, 8.5]]

func.func @echo_all(%h: tensor<2xbf16> {loom.name = "h"}, %f: tensor<2xf16> {loom.name = "f"},
                    %i: tensor<2xi32> {loom.name = "i"}, %b: tensor<2xi1> {loom.name = "b"})
    -> (tensor<2xbf16>, tensor<2xf16>, tensor<2xi32>, tensor<2xi1>) {
  return %h, %f, %i, %b : tensor<2xbf16>, tensor<2xf16>, tensor<2xi32>, tensor<2xi1>
}
// ALL:      result0 : tensor<2xbf16>
// ALL-NEXT: [1.5, -2.]
// ALL-NEXT: result1 : tensor<2xf16>
// ALL-NEXT: [0.25, 3.]
// ALL-NEXT: result2 : tensor<2xi32>
// ALL-NEXT: [-7, 9]
// ALL-NEXT: result3 : tensor<2xi1>
// ALL-NEXT: [True, False]
// ST:      result0 : tensor<2xbf16>
// ST-NEXT: [1.5, -2.]
// ST-NEXT: result1 : tensor<2xf16>
// ST-NEXT: [0.25, 3.]
// ST-NEXT: result2 : tensor<2xi32>
// ST-NEXT: [-7, 9]
// ST-NEXT: result3 : tensor<2xi1>
// ST-NEXT: [True, False]

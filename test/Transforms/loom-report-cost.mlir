// RUN: loom-opt %s -loom-report-cost -o /dev/null | FileCheck %s
// RUN: loom-opt %s -loom-report-cost="output=%t.json" -o /dev/null && FileCheck %s < %t.json

// Expected figures, worked out by hand:
//   dot_general [4x8] x [8x2]: 2*4*2*8 = 128 flops; bytes 4*(32+16+8) = 224
//   broadcast:                  0 flops;          bytes 4*(2+8)      = 40
//   add [4x2]:                  8 flops;          bytes 4*3*8        = 96
//   relu [4x2]:                 8 flops;          bytes 4*2*8        = 64
//   total: 144 flops, 424 bytes; params: w (8*2 = 16) + b (2) = 18, 72 bytes.
// CHECK:      "functions": [
// CHECK:          "name": "linear",
// CHECK-NEXT:     "ops": 4,
// CHECK-NEXT:     "flops": 144,
// CHECK-NEXT:     "bytes": 424,
// CHECK-NEXT:     "params": 18,
// CHECK-NEXT:     "param_bytes": 72,
// CHECK-NEXT:     "unknown_cost_ops": 0
func.func @linear(%x: tensor<4x8xf32>, %w: tensor<8x2xf32> {loom.param},
                  %b: tensor<2xf32> {loom.param}) -> tensor<4x2xf32> {
  %0 = loom.dot_general %x, %w, contracting_dims = [1] x [0]
      : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %1 = loom.broadcast %b, dims = [1] : tensor<2xf32> -> tensor<4x2xf32>
  %2 = loom.add %0, %1 : tensor<4x2xf32>
  %3 = loom.relu %2 : tensor<4x2xf32>
  return %3 : tensor<4x2xf32>
}

// Dynamic shapes have no cost yet; they are counted, not guessed.
// CHECK:          "name": "dynamic",
// CHECK-NEXT:     "ops": 1,
// CHECK-NEXT:     "flops": 0,
// CHECK-NEXT:     "bytes": 0,
// CHECK-NEXT:     "params": 0,
// CHECK-NEXT:     "param_bytes": 0,
// CHECK-NEXT:     "unknown_cost_ops": 1
func.func @dynamic(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = loom.exp %x : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// scatter_add costs one add per update element (2*8*4 = 64 flops), not one
// per element of its (larger) result; bytes 4*(100*4 + 2*8*4 + 100*4) + 8*16
// = 3456 + 128 = 3584.
// CHECK:          "name": "scatter_add",
// CHECK-NEXT:     "ops": 1,
// CHECK-NEXT:     "flops": 64,
// CHECK-NEXT:     "bytes": 3584,
func.func @scatter_add(%t: tensor<100x4xf32>, %i: tensor<2x8xi64>, %u: tensor<2x8x4xf32>) -> tensor<100x4xf32> {
  %0 = loom.scatter_add %t[%i], %u, axis = 0 : (tensor<100x4xf32>, tensor<2x8xi64>, tensor<2x8x4xf32>) -> tensor<100x4xf32>
  return %0 : tensor<100x4xf32>
}

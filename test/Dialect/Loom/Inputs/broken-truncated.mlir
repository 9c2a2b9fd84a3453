// A function cut off in the middle of an op.
func.func @truncated(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = loom.add %x, %x : tensor<4xf32>
  %1 = loom.mul %0, %x : tensor<4x

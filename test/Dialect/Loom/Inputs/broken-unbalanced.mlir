// The region of @unbalanced is never closed.
func.func @unbalanced(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = loom.tanh %x : tensor<4xf32>
  return %0 : tensor<4xf32>

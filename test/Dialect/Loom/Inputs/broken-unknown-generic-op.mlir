// An op that the loom dialect does not define, in generic form.
func.func @unknown(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "loom.frobnicate"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

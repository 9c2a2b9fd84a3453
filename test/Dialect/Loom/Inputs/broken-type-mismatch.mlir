// %x is a tensor<3xf32>, but the use says tensor<4xf32>.
func.func @type_mismatch(%x: tensor<3xf32>) -> tensor<4xf32> {
  %0 = loom.exp %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

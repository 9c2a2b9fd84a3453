// The function body does not end with func.return.
func.func @no_terminator(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = loom.relu %x : tensor<4xf32>
}

// loom.add takes two operands; the custom syntax wants a comma and a second.
func.func @operand_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = loom.add %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

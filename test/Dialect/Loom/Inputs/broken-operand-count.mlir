// loom.add takes two operands.
func.func @operand_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = loom.neg %x : tensor<4xf32>
  %1 = "loom.add"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// A two-layer perceptron with a cross-entropy loss, as an importer produces
// it for a model exported with a symbolic batch size: every batch dimension
// is `?`. `make demo` binds the batch to 32 with
//   loom-opt --loom-shape-inference="arg-shapes=x=32x784,labels=32" --canonicalize
// and shows the refined graph.
func.func @main(%x: tensor<?x784xf32> {loom.name = "x"},
                %labels: tensor<?xi64> {loom.name = "labels"},
                %w1: tensor<784x256xf32> {loom.param, loom.name = "fc1.weight"},
                %b1: tensor<256xf32> {loom.param, loom.name = "fc1.bias"},
                %w2: tensor<256x10xf32> {loom.param, loom.name = "fc2.weight"},
                %b2: tensor<10xf32> {loom.param, loom.name = "fc2.bias"})
    -> (tensor<f32> {loom.name = "loss"}) {
  %h = loom.dot_general %x, %w1, contracting_dims = [1] x [0]
      : (tensor<?x784xf32>, tensor<784x256xf32>) -> tensor<?x256xf32>
  %bb1 = loom.broadcast %b1, dims = [1] : tensor<256xf32> -> tensor<?x256xf32>
  %h1 = loom.add %h, %bb1 : tensor<?x256xf32>
  %a1 = loom.relu %h1 : tensor<?x256xf32>
  // Dropout(p=0) exported as a multiplication by 1.0: canonicalize removes it.
  %one = loom.constant dense<1.0> : tensor<256xf32>
  %ones = loom.broadcast %one, dims = [1] : tensor<256xf32> -> tensor<?x256xf32>
  %d1 = loom.mul %a1, %ones : tensor<?x256xf32>
  %o = loom.dot_general %d1, %w2, contracting_dims = [1] x [0]
      : (tensor<?x256xf32>, tensor<256x10xf32>) -> tensor<?x10xf32>
  %bb2 = loom.broadcast %b2, dims = [1] : tensor<10xf32> -> tensor<?x10xf32>
  %logits = loom.add %o, %bb2 : tensor<?x10xf32>
  %loss = loom.cross_entropy %logits, %labels reduction = mean
      : (tensor<?x10xf32>, tensor<?xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// --arg-names=params.blocks.0.fc.b,params.blocks.0.fc.w,params.blocks.0.ln_1.b,params.blocks.0.ln_1.g,params.blocks.0.ln_2.b,params.blocks.0.ln_2.g,params.blocks.0.out.b,params.blocks.0.out.w,params.blocks.0.proj.b,params.blocks.0.proj.w,params.blocks.0.qkv.b,params.blocks.0.qkv.w,params.ln_f.b,params.ln_f.g,params.wpe,params.wte,ids,labels
module @jit_gpt attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<64xf32>, %arg1: tensor<16x64xf32>, %arg2: tensor<16xf32>, %arg3: tensor<16xf32>, %arg4: tensor<16xf32>, %arg5: tensor<16xf32>, %arg6: tensor<16xf32>, %arg7: tensor<64x16xf32>, %arg8: tensor<16xf32>, %arg9: tensor<16x16xf32>, %arg10: tensor<48xf32>, %arg11: tensor<16x48xf32>, %arg12: tensor<16xf32>, %arg13: tensor<16xf32>, %arg14: tensor<4x16xf32>, %arg15: tensor<10x16xf32>, %arg16: tensor<2x4xi32>, %arg17: tensor<2x4xi32>) -> (tensor<f32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<2x4xi32>
    %1 = stablehlo.compare LT, %arg16, %0, SIGNED : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi1>
    %c_0 = stablehlo.constant dense<10> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<2x4xi32>
    %3 = stablehlo.add %arg16, %2 : tensor<2x4xi32>
    %4 = stablehlo.select %1, %3, %arg16 : tensor<2x4xi1>, tensor<2x4xi32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<2x4xi32>) -> tensor<2x4x1xi32>
    %6 = "stablehlo.gather"(%arg15, %5) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 16>}> : (tensor<10x16xf32>, tensor<2x4x1xi32>) -> tensor<2x4x16xf32>
    %7 = stablehlo.broadcast_in_dim %arg14, dims = [1, 2] : (tensor<4x16xf32>) -> tensor<1x4x16xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1, 2] : (tensor<1x4x16xf32>) -> tensor<2x4x16xf32>
    %9 = stablehlo.add %6, %8 : tensor<2x4x16xf32>
    %c_1 = stablehlo.constant dense<true> : tensor<i1>
    %10 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i1>) -> tensor<4x4xi1>
    %11 = call @tril(%10) : (tensor<4x4xi1>) -> tensor<4x4xi1>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %12 = stablehlo.reduce(%9 init: %cst) applies stablehlo.add across dimensions = [2] : (tensor<2x4x16xf32>, tensor<f32>) -> tensor<2x4xf32>
    %13 = stablehlo.broadcast_in_dim %12, dims = [0, 1] : (tensor<2x4xf32>) -> tensor<2x4x1xf32>
    %cst_2 = stablehlo.constant dense<1.600000e+01> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<2x4x1xf32>
    %15 = stablehlo.divide %13, %14 : tensor<2x4x1xf32>
    %16 = stablehlo.broadcast_in_dim %15, dims = [0, 1, 2] : (tensor<2x4x1xf32>) -> tensor<2x4x16xf32>
    %17 = stablehlo.subtract %9, %16 : tensor<2x4x16xf32>
    %18 = stablehlo.multiply %17, %17 : tensor<2x4x16xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %19 = stablehlo.reduce(%18 init: %cst_3) applies stablehlo.add across dimensions = [2] : (tensor<2x4x16xf32>, tensor<f32>) -> tensor<2x4xf32>
    %20 = stablehlo.broadcast_in_dim %19, dims = [0, 1] : (tensor<2x4xf32>) -> tensor<2x4x1xf32>
    %cst_4 = stablehlo.constant dense<1.600000e+01> : tensor<f32>
    %21 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<2x4x1xf32>
    %22 = stablehlo.divide %20, %21 : tensor<2x4x1xf32>
    %23 = stablehlo.broadcast_in_dim %15, dims = [0, 1, 2] : (tensor<2x4x1xf32>) -> tensor<2x4x16xf32>
    %24 = stablehlo.subtract %9, %23 : tensor<2x4x16xf32>
    %cst_5 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %25 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<2x4x1xf32>
    %26 = stablehlo.add %22, %25 : tensor<2x4x1xf32>
    %27 = stablehlo.sqrt %26 : tensor<2x4x1xf32>
    %28 = stablehlo.broadcast_in_dim %27, dims = [0, 1, 2] : (tensor<2x4x1xf32>) -> tensor<2x4x16xf32>
    %29 = stablehlo.divide %24, %28 : tensor<2x4x16xf32>
    %30 = stablehlo.broadcast_in_dim %arg3, dims = [2] : (tensor<16xf32>) -> tensor<1x1x16xf32>
    %31 = stablehlo.broadcast_in_dim %30, dims = [0, 1, 2] : (tensor<1x1x16xf32>) -> tensor<2x4x16xf32>
    %32 = stablehlo.multiply %29, %31 : tensor<2x4x16xf32>
    %33 = stablehlo.broadcast_in_dim %arg2, dims = [2] : (tensor<16xf32>) -> tensor<1x1x16xf32>
    %34 = stablehlo.broadcast_in_dim %33, dims = [0, 1, 2] : (tensor<1x1x16xf32>) -> tensor<2x4x16xf32>
    %35 = stablehlo.add %32, %34 : tensor<2x4x16xf32>
    %36 = stablehlo.dot_general %35, %arg11, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x4x16xf32>, tensor<16x48xf32>) -> tensor<2x4x48xf32>
    %37 = stablehlo.broadcast_in_dim %arg10, dims = [2] : (tensor<48xf32>) -> tensor<1x1x48xf32>
    %38 = stablehlo.broadcast_in_dim %37, dims = [0, 1, 2] : (tensor<1x1x48xf32>) -> tensor<2x4x48xf32>
    %39 = stablehlo.add %36, %38 : tensor<2x4x48xf32>
    %40 = stablehlo.slice %39 [0:2, 0:4, 0:16] : (tensor<2x4x48xf32>) -> tensor<2x4x16xf32>
    %41 = stablehlo.slice %39 [0:2, 0:4, 16:32] : (tensor<2x4x48xf32>) -> tensor<2x4x16xf32>
    %42 = stablehlo.slice %39 [0:2, 0:4, 32:48] : (tensor<2x4x48xf32>) -> tensor<2x4x16xf32>
    %43 = stablehlo.reshape %40 : (tensor<2x4x16xf32>) -> tensor<2x4x4x4xf32>
    %44 = stablehlo.transpose %43, dims = [0, 2, 1, 3] : (tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
    %45 = stablehlo.reshape %41 : (tensor<2x4x16xf32>) -> tensor<2x4x4x4xf32>
    %46 = stablehlo.transpose %45, dims = [0, 2, 1, 3] : (tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
    %47 = stablehlo.reshape %42 : (tensor<2x4x16xf32>) -> tensor<2x4x4x4xf32>
    %48 = stablehlo.transpose %47, dims = [0, 2, 1, 3] : (tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
    %49 = stablehlo.transpose %46, dims = [0, 1, 3, 2] : (tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
    %50 = stablehlo.dot_general %44, %49, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
    %cst_6 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %51 = stablehlo.sqrt %cst_6 : tensor<f32>
    %52 = stablehlo.convert %51 : tensor<f32>
    %53 = stablehlo.broadcast_in_dim %52, dims = [] : (tensor<f32>) -> tensor<2x4x4x4xf32>
    %54 = stablehlo.divide %50, %53 : tensor<2x4x4x4xf32>
    %cst_7 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %55 = call @_where(%11, %54, %cst_7) : (tensor<4x4xi1>, tensor<2x4x4x4xf32>, tensor<f32>) -> tensor<2x4x4x4xf32>
    %cst_8 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %56 = stablehlo.reduce(%55 init: %cst_8) applies stablehlo.maximum across dimensions = [3] : (tensor<2x4x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
    %cst_9 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %57 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<2x4x4xf32>
    %58 = stablehlo.maximum %57, %56 : tensor<2x4x4xf32>
    %59 = stablehlo.broadcast_in_dim %58, dims = [0, 1, 2] : (tensor<2x4x4xf32>) -> tensor<2x4x4x1xf32>
    %60 = stablehlo.broadcast_in_dim %59, dims = [0, 1, 2, 3] : (tensor<2x4x4x1xf32>) -> tensor<2x4x4x4xf32>
    %61 = stablehlo.subtract %55, %60 : tensor<2x4x4x4xf32>
    %62 = stablehlo.exponential %61 : tensor<2x4x4x4xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %63 = stablehlo.reduce(%62 init: %cst_10) applies stablehlo.add across dimensions = [3] : (tensor<2x4x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
    %64 = stablehlo.broadcast_in_dim %63, dims = [0, 1, 2] : (tensor<2x4x4xf32>) -> tensor<2x4x4x1xf32>
    %65 = stablehlo.broadcast_in_dim %64, dims = [0, 1, 2, 3] : (tensor<2x4x4x1xf32>) -> tensor<2x4x4x4xf32>
    %66 = stablehlo.divide %62, %65 : tensor<2x4x4x4xf32>
    %67 = stablehlo.dot_general %66, %48, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
    %68 = stablehlo.transpose %67, dims = [0, 2, 1, 3] : (tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
    %69 = stablehlo.reshape %68 : (tensor<2x4x4x4xf32>) -> tensor<2x4x16xf32>
    %70 = stablehlo.dot_general %69, %arg9, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x4x16xf32>, tensor<16x16xf32>) -> tensor<2x4x16xf32>
    %71 = stablehlo.add %9, %70 : tensor<2x4x16xf32>
    %72 = stablehlo.broadcast_in_dim %arg8, dims = [2] : (tensor<16xf32>) -> tensor<1x1x16xf32>
    %73 = stablehlo.broadcast_in_dim %72, dims = [0, 1, 2] : (tensor<1x1x16xf32>) -> tensor<2x4x16xf32>
    %74 = stablehlo.add %71, %73 : tensor<2x4x16xf32>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %75 = stablehlo.reduce(%74 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<2x4x16xf32>, tensor<f32>) -> tensor<2x4xf32>
    %76 = stablehlo.broadcast_in_dim %75, dims = [0, 1] : (tensor<2x4xf32>) -> tensor<2x4x1xf32>
    %cst_12 = stablehlo.constant dense<1.600000e+01> : tensor<f32>
    %77 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<2x4x1xf32>
    %78 = stablehlo.divide %76, %77 : tensor<2x4x1xf32>
    %79 = stablehlo.broadcast_in_dim %78, dims = [0, 1, 2] : (tensor<2x4x1xf32>) -> tensor<2x4x16xf32>
    %80 = stablehlo.subtract %74, %79 : tensor<2x4x16xf32>
    %81 = stablehlo.multiply %80, %80 : tensor<2x4x16xf32>
    %cst_13 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %82 = stablehlo.reduce(%81 init: %cst_13) applies stablehlo.add across dimensions = [2] : (tensor<2x4x16xf32>, tensor<f32>) -> tensor<2x4xf32>
    %83 = stablehlo.broadcast_in_dim %82, dims = [0, 1] : (tensor<2x4xf32>) -> tensor<2x4x1xf32>
    %cst_14 = stablehlo.constant dense<1.600000e+01> : tensor<f32>
    %84 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f32>) -> tensor<2x4x1xf32>
    %85 = stablehlo.divide %83, %84 : tensor<2x4x1xf32>
    %86 = stablehlo.broadcast_in_dim %78, dims = [0, 1, 2] : (tensor<2x4x1xf32>) -> tensor<2x4x16xf32>
    %87 = stablehlo.subtract %74, %86 : tensor<2x4x16xf32>
    %cst_15 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %88 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f32>) -> tensor<2x4x1xf32>
    %89 = stablehlo.add %85, %88 : tensor<2x4x1xf32>
    %90 = stablehlo.sqrt %89 : tensor<2x4x1xf32>
    %91 = stablehlo.broadcast_in_dim %90, dims = [0, 1, 2] : (tensor<2x4x1xf32>) -> tensor<2x4x16xf32>
    %92 = stablehlo.divide %87, %91 : tensor<2x4x16xf32>
    %93 = stablehlo.broadcast_in_dim %arg5, dims = [2] : (tensor<16xf32>) -> tensor<1x1x16xf32>
    %94 = stablehlo.broadcast_in_dim %93, dims = [0, 1, 2] : (tensor<1x1x16xf32>) -> tensor<2x4x16xf32>
    %95 = stablehlo.multiply %92, %94 : tensor<2x4x16xf32>
    %96 = stablehlo.broadcast_in_dim %arg4, dims = [2] : (tensor<16xf32>) -> tensor<1x1x16xf32>
    %97 = stablehlo.broadcast_in_dim %96, dims = [0, 1, 2] : (tensor<1x1x16xf32>) -> tensor<2x4x16xf32>
    %98 = stablehlo.add %95, %97 : tensor<2x4x16xf32>
    %99 = stablehlo.dot_general %98, %arg1, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x4x16xf32>, tensor<16x64xf32>) -> tensor<2x4x64xf32>
    %100 = stablehlo.broadcast_in_dim %arg0, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %101 = stablehlo.broadcast_in_dim %100, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<2x4x64xf32>
    %102 = stablehlo.add %99, %101 : tensor<2x4x64xf32>
    %cst_16 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %103 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<2x4x64xf32>
    %104 = stablehlo.multiply %103, %102 : tensor<2x4x64xf32>
    %105 = stablehlo.negate %102 : tensor<2x4x64xf32>
    %cst_17 = stablehlo.constant dense<0.707106769> : tensor<f32>
    %106 = stablehlo.broadcast_in_dim %cst_17, dims = [] : (tensor<f32>) -> tensor<2x4x64xf32>
    %107 = stablehlo.multiply %105, %106 : tensor<2x4x64xf32>
    %108 = chlo.erfc %107 : tensor<2x4x64xf32> -> tensor<2x4x64xf32>
    %109 = stablehlo.multiply %104, %108 : tensor<2x4x64xf32>
    %110 = stablehlo.dot_general %109, %arg7, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x4x64xf32>, tensor<64x16xf32>) -> tensor<2x4x16xf32>
    %111 = stablehlo.add %74, %110 : tensor<2x4x16xf32>
    %112 = stablehlo.broadcast_in_dim %arg6, dims = [2] : (tensor<16xf32>) -> tensor<1x1x16xf32>
    %113 = stablehlo.broadcast_in_dim %112, dims = [0, 1, 2] : (tensor<1x1x16xf32>) -> tensor<2x4x16xf32>
    %114 = stablehlo.add %111, %113 : tensor<2x4x16xf32>
    %cst_18 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %115 = stablehlo.reduce(%114 init: %cst_18) applies stablehlo.add across dimensions = [2] : (tensor<2x4x16xf32>, tensor<f32>) -> tensor<2x4xf32>
    %116 = stablehlo.broadcast_in_dim %115, dims = [0, 1] : (tensor<2x4xf32>) -> tensor<2x4x1xf32>
    %cst_19 = stablehlo.constant dense<1.600000e+01> : tensor<f32>
    %117 = stablehlo.broadcast_in_dim %cst_19, dims = [] : (tensor<f32>) -> tensor<2x4x1xf32>
    %118 = stablehlo.divide %116, %117 : tensor<2x4x1xf32>
    %119 = stablehlo.broadcast_in_dim %118, dims = [0, 1, 2] : (tensor<2x4x1xf32>) -> tensor<2x4x16xf32>
    %120 = stablehlo.subtract %114, %119 : tensor<2x4x16xf32>
    %121 = stablehlo.multiply %120, %120 : tensor<2x4x16xf32>
    %cst_20 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %122 = stablehlo.reduce(%121 init: %cst_20) applies stablehlo.add across dimensions = [2] : (tensor<2x4x16xf32>, tensor<f32>) -> tensor<2x4xf32>
    %123 = stablehlo.broadcast_in_dim %122, dims = [0, 1] : (tensor<2x4xf32>) -> tensor<2x4x1xf32>
    %cst_21 = stablehlo.constant dense<1.600000e+01> : tensor<f32>
    %124 = stablehlo.broadcast_in_dim %cst_21, dims = [] : (tensor<f32>) -> tensor<2x4x1xf32>
    %125 = stablehlo.divide %123, %124 : tensor<2x4x1xf32>
    %126 = stablehlo.broadcast_in_dim %118, dims = [0, 1, 2] : (tensor<2x4x1xf32>) -> tensor<2x4x16xf32>
    %127 = stablehlo.subtract %114, %126 : tensor<2x4x16xf32>
    %cst_22 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %128 = stablehlo.broadcast_in_dim %cst_22, dims = [] : (tensor<f32>) -> tensor<2x4x1xf32>
    %129 = stablehlo.add %125, %128 : tensor<2x4x1xf32>
    %130 = stablehlo.sqrt %129 : tensor<2x4x1xf32>
    %131 = stablehlo.broadcast_in_dim %130, dims = [0, 1, 2] : (tensor<2x4x1xf32>) -> tensor<2x4x16xf32>
    %132 = stablehlo.divide %127, %131 : tensor<2x4x16xf32>
    %133 = stablehlo.broadcast_in_dim %arg13, dims = [2] : (tensor<16xf32>) -> tensor<1x1x16xf32>
    %134 = stablehlo.broadcast_in_dim %133, dims = [0, 1, 2] : (tensor<1x1x16xf32>) -> tensor<2x4x16xf32>
    %135 = stablehlo.multiply %132, %134 : tensor<2x4x16xf32>
    %136 = stablehlo.broadcast_in_dim %arg12, dims = [2] : (tensor<16xf32>) -> tensor<1x1x16xf32>
    %137 = stablehlo.broadcast_in_dim %136, dims = [0, 1, 2] : (tensor<1x1x16xf32>) -> tensor<2x4x16xf32>
    %138 = stablehlo.add %135, %137 : tensor<2x4x16xf32>
    %139 = stablehlo.transpose %arg15, dims = [1, 0] : (tensor<10x16xf32>) -> tensor<16x10xf32>
    %140 = stablehlo.dot_general %138, %139, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x4x16xf32>, tensor<16x10xf32>) -> tensor<2x4x10xf32>
    %141 = call @log_softmax(%140) : (tensor<2x4x10xf32>) -> tensor<2x4x10xf32>
    %142 = call @_one_hot(%arg17) : (tensor<2x4xi32>) -> tensor<2x4x10xf32>
    %143 = stablehlo.multiply %142, %141 : tensor<2x4x10xf32>
    %cst_23 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %144 = stablehlo.reduce(%143 init: %cst_23) applies stablehlo.add across dimensions = [2] : (tensor<2x4x10xf32>, tensor<f32>) -> tensor<2x4xf32>
    %cst_24 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %145 = stablehlo.reduce(%144 init: %cst_24) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x4xf32>, tensor<f32>) -> tensor<f32>
    %cst_25 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %146 = stablehlo.divide %145, %cst_25 : tensor<f32>
    %147 = stablehlo.negate %146 : tensor<f32>
    return %147 : tensor<f32>
  }
  func.func private @tril(%arg0: tensor<4x4xi1>) -> tensor<4x4xi1> {
    %0 = stablehlo.iota dim = 0 : tensor<4x4xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<4x4xi32>
    %2 = stablehlo.add %0, %1 : tensor<4x4xi32>
    %3 = stablehlo.iota dim = 1 : tensor<4x4xi32>
    %4 = stablehlo.compare GE, %2, %3, SIGNED : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi1>
    %c_0 = stablehlo.constant dense<false> : tensor<i1>
    %5 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i1>) -> tensor<4x4xi1>
    %6 = stablehlo.select %4, %arg0, %5 : tensor<4x4xi1>, tensor<4x4xi1>
    return %6 : tensor<4x4xi1>
  }
  func.func private @_where(%arg0: tensor<4x4xi1>, %arg1: tensor<2x4x4x4xf32>, %arg2: tensor<f32>) -> tensor<2x4x4x4xf32> {
    %0 = stablehlo.convert %arg2 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %arg0, dims = [2, 3] : (tensor<4x4xi1>) -> tensor<2x4x4x4xi1>
    %2 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<2x4x4x4xf32>
    %3 = stablehlo.select %1, %arg1, %2 : tensor<2x4x4x4xi1>, tensor<2x4x4x4xf32>
    return %3 : tensor<2x4x4x4xf32>
  }
  func.func private @log_softmax(%arg0: tensor<2x4x10xf32>) -> tensor<2x4x10xf32> {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [2] : (tensor<2x4x10xf32>, tensor<f32>) -> tensor<2x4xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2x4xf32>
    %2 = stablehlo.maximum %1, %0 : tensor<2x4xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0, 1] : (tensor<2x4xf32>) -> tensor<2x4x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<2x4x1xf32>) -> tensor<2x4x10xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<2x4x10xf32>
    %6 = stablehlo.exponential %5 : tensor<2x4x10xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_1) applies stablehlo.add across dimensions = [2] : (tensor<2x4x10xf32>, tensor<f32>) -> tensor<2x4xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<2x4xf32>) -> tensor<2x4x1xf32>
    %9 = stablehlo.log %8 : tensor<2x4x1xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1, 2] : (tensor<2x4x1xf32>) -> tensor<2x4x10xf32>
    %11 = stablehlo.subtract %5, %10 : tensor<2x4x10xf32>
    return %11 : tensor<2x4x10xf32>
  }
  func.func private @_one_hot(%arg0: tensor<2x4xi32>) -> tensor<2x4x10xf32> {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [0, 1] : (tensor<2x4xi32>) -> tensor<2x4x1xi32>
    %1 = stablehlo.iota dim = 2 : tensor<1x1x10xi32>
    %2 = stablehlo.broadcast_in_dim %0, dims = [0, 1, 2] : (tensor<2x4x1xi32>) -> tensor<2x4x10xi32>
    %3 = stablehlo.broadcast_in_dim %1, dims = [0, 1, 2] : (tensor<1x1x10xi32>) -> tensor<2x4x10xi32>
    %4 = stablehlo.compare EQ, %2, %3, SIGNED : (tensor<2x4x10xi32>, tensor<2x4x10xi32>) -> tensor<2x4x10xi1>
    %5 = stablehlo.convert %4 : (tensor<2x4x10xi1>) -> tensor<2x4x10xf32>
    return %5 : tensor<2x4x10xf32>
  }
}

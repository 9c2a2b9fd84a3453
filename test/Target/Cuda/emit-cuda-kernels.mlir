// Each generated loomrt op is a __global__ kernel with a grid-stride loop:
// reductions (one thread per output, the reduced dimensions a serial loop
// in the CPU's order; from 256 elements per output one block per output,
// a tree in shared memory, then warp shuffles), strided copies, iota, the rank's grid index;
// each compiles as host C++ against the emulation header.
// RUN: split-file %s %t
// RUN: loom-opt %t/reduce.mlir -loom-fuse-elementwise -convert-loom-to-loomrt -loom-memory-plan | loom-translate --emit-cuda - -o %t/reduce.cu
// RUN: FileCheck %s --check-prefix=REDUCE < %t/reduce.cu
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -DLOOM_CUDA_EMULATION -x c++ -I %loom_src/include %t/reduce.cu
// RUN: loom-opt %t/block.mlir -loom-fuse-elementwise -convert-loom-to-loomrt -loom-memory-plan | loom-translate --emit-cuda - -o %t/block.cu
// RUN: FileCheck %s --check-prefix=BLOCK < %t/block.cu
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -DLOOM_CUDA_EMULATION -x c++ -I %loom_src/include %t/block.cu
// RUN: loom-opt %t/copy.mlir -loom-fuse-elementwise -convert-loom-to-loomrt -loom-memory-plan | loom-translate --emit-cuda - -o %t/copy.cu
// RUN: FileCheck %s --check-prefix=COPY < %t/copy.cu
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -DLOOM_CUDA_EMULATION -x c++ -I %loom_src/include %t/copy.cu
// RUN: loom-opt %t/grid.mlir -loom-fuse-elementwise -convert-loom-to-loomrt -loom-memory-plan | loom-translate --emit-cuda - -o %t/grid.cu
// RUN: FileCheck %s --check-prefix=GRID < %t/grid.cu
// RUN: c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -DLOOM_CUDA_EMULATION -x c++ -I %loom_src/include %t/grid.cu

//--- reduce.mlir
// REDUCE: __global__ void [[K:k[0-9]+_reduce_sum]](const float *p0, float *p1) {
// REDUCE-NEXT: for (int64_t i = {{.*}}; i < 2;
// REDUCE-NEXT: i += {{.*}}) {
// REDUCE-NEXT: const int64_t k0 = i;
// REDUCE-NEXT: double acc = 0;
// REDUCE-NEXT: const int64_t base = k0;
// REDUCE-NEXT: for (int64_t r0 = 0; r0 < 3; ++r0) {
// REDUCE-NEXT: const double x = p0[base + r0 * 2];
// REDUCE-NEXT: acc += x;
// REDUCE-NEXT: }
// REDUCE-NEXT: p1[i] = static_cast<float>(acc);
// REDUCE: __global__ void {{k[0-9]+_reduce_max}}(
// REDUCE-NEXT: for (int64_t i = {{.*}}; i < 1;
// REDUCE: double acc = -HUGE_VAL;
// REDUCE: if (acc == acc && (x != x || x > acc)) acc = x;
// REDUCE: // reduce sum over [0] (reduce_sum) -> r0_s
// REDUCE-NEXT: LOOM_LAUNCH([[K]], 1, 32, stream, a0_x, r0_s);
func.func @main(%x: tensor<3x2xf32> {loom.name = "x"}) -> (tensor<2xf32> {loom.name = "s"}, tensor<f32> {loom.name = "m"}) {
  %s = loom.reduce_sum %x, dims = [0] : tensor<3x2xf32> -> tensor<2xf32>
  %m = loom.reduce_max %x, dims = [0, 1] : tensor<3x2xf32> -> tensor<f32>
  return %s, %m : tensor<2xf32>, tensor<f32>
}

//--- block.mlir
// 300 elements per output: one block of 256 threads per output, each
// folding a strided slice, then halvings in shared memory down to 32
// partials (128, 64, 32 threads) and 5 shuffles within the first warp.
// The max keeps NaN in the tree and the shuffles as in the slices.
// BLOCK: __global__ void [[S:k[0-9]+_reduce_sum_block]](const float *p0, float *p1) {
// BLOCK: __shared__ double partial[256];
// BLOCK-NEXT: const int64_t i = blockIdx.x;
// BLOCK-NEXT: const int64_t k0 = i;
// BLOCK-NEXT: const int64_t base = k0;
// BLOCK-NEXT: double acc = 0;
// BLOCK-NEXT: for (int64_t j = threadIdx.x; j < 300; j += blockDim.x) {
// BLOCK-NEXT: const int64_t r0 = j;
// BLOCK-NEXT: const double x = p0[base + r0 * 3];
// BLOCK-NEXT: acc += x;
// BLOCK-NEXT: }
// BLOCK-NEXT: partial[threadIdx.x] = acc;
// BLOCK-NEXT: __syncthreads();
// BLOCK-NEXT: for (unsigned half = blockDim.x / 2; half >= 32; half /= 2) {
// BLOCK-NEXT: if (threadIdx.x < half) {
// BLOCK-NEXT: const double x = partial[threadIdx.x + half];
// BLOCK-NEXT: partial[threadIdx.x] += x;
// BLOCK-NEXT: }
// BLOCK-NEXT: __syncthreads();
// BLOCK-NEXT: }
// BLOCK-NEXT: if (threadIdx.x < 32) {
// BLOCK-NEXT: double v = partial[threadIdx.x];
// BLOCK-NEXT: for (unsigned offset = 16; offset > 0; offset /= 2) {
// BLOCK-NEXT: const double x = __shfl_down_sync(0xffffffffu, v, offset);
// BLOCK-NEXT: v += x;
// BLOCK-NEXT: }
// BLOCK-NEXT: if (threadIdx.x == 0)
// BLOCK-NEXT: p1[i] = static_cast<float>(v);
// BLOCK: __global__ void [[M:k[0-9]+_reduce_max_block]](
// BLOCK: if (partial[threadIdx.x] == partial[threadIdx.x] && (x != x || x > partial[threadIdx.x])) partial[threadIdx.x] = x;
// BLOCK: if (v == v && (x != x || x > v)) v = x;
// BLOCK: reduce sum over [0] (reduce_sum) -> r0_s
// BLOCK-NEXT: LOOM_LAUNCH_SYNC([[S]], 3, 256, stream, a0_x, r0_s);
// BLOCK: reduce max over [0, 1] (reduce_max) -> r1_m
// BLOCK-NEXT: LOOM_LAUNCH_SYNC([[M]], 1, 256, stream, a0_x, r1_m);
func.func @main(%x: tensor<300x3xf32> {loom.name = "x"}) -> (tensor<3xf32> {loom.name = "s"}, tensor<f32> {loom.name = "m"}) {
  %s = loom.reduce_sum %x, dims = [0] : tensor<300x3xf32> -> tensor<3xf32>
  %m = loom.reduce_max %x, dims = [0, 1] : tensor<300x3xf32> -> tensor<f32>
  return %s, %m : tensor<3xf32>, tensor<f32>
}

//--- copy.mlir
// A transpose is a strided copy: both loop indices from the flat index.
// COPY: __global__ void [[K:k[0-9]+_copy]](const float *p0, float *p1) {
// COPY: const int64_t i0 = i / 2;
// COPY-NEXT: const int64_t i1 = i % 2;
// COPY-NEXT: p1[i0 * 2 + i1] = p0[i0 + i1 * 3];
// COPY: // copy (transpose) a0_x -> r0_t
// COPY-NEXT: LOOM_LAUNCH([[K]], 1, 32, stream, a0_x, r0_t);
func.func @main(%x: tensor<2x3xf32> {loom.name = "x"}) -> (tensor<3x2xf32> {loom.name = "t"}) {
  %t = loom.transpose %x, permutation = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  return %t : tensor<3x2xf32>
}

//--- grid.mlir
// The rank's index in its tensor-parallel group goes to device memory.
// GRID: const int64_t index = static_cast<int64_t>(groupRank(ctx, Group::Tp));
// GRID-NEXT: cuda::copyToDevice(ctx, {{t[0-9]+_[a-z_]+}}, &index, sizeof index);
shard.grid @mesh(shape = 1x1x2)
func.func @main(%x: tensor<4xf32> {loom.name = "x"}) -> (tensor<4xf32> {loom.name = "y"}) {
  %r = loom.grid_index on @mesh grid_axes = [2] : tensor<i64>
  %rf = loom.convert %r : tensor<i64> -> tensor<f32>
  %b = loom.broadcast %rf, dims = [] : tensor<f32> -> tensor<4xf32>
  %y = loom.add %x, %b : tensor<4xf32>
  return %y : tensor<4xf32>
}

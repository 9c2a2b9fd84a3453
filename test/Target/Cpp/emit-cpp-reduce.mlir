// Reductions that keep the innermost dimensions (bias gradients, a layer
// norm's weight gradient) read each reduced row's kept columns contiguously
// into a tile of at most 256 accumulators (512 from 2048 columns on), rows
// in the same order as the
// scalar nest (so results are the same bit for bit); a reduction over the
// innermost dimension keeps one accumulator per output, or, from 16
// elements, 8 lanes (element j into lane j % 8, the tail into lane 0)
// combined pairwise: a fixed order, vectorised.
// RUN: loom-opt %s -convert-loom-to-loomrt -loom-memory-plan | loom-translate --emit-cpp - -o %t.cpp
// RUN: FileCheck %s < %t.cpp
// RUN: c++ -std=c++17 -fsyntax-only -fopenmp -Wall -Wextra -Werror -I %loom_src/include %t.cpp

// Columns: 600 = 2 full tiles of 256 and one of 88; 8x16 rows; parallel over tiles.
// CHECK: static LOOM_KERNEL void [[BIAS:k[0-9]+_reduce_sum]]({{.*}}, const float *p0, float *p1) {
// CHECK-NEXT: #pragma omp parallel for
// CHECK-NEXT: for (int64_t k0 = 0; k0 < 3; ++k0) {
// CHECK-NEXT: const int64_t width = std::min<int64_t>(256, 600 - k0 * 256);
// CHECK-NEXT: double acc[256];
// CHECK-NEXT: for (int64_t c = 0; c < width; ++c) acc[c] = 0;
// CHECK-NEXT: const int64_t base = k0 * 256;
// CHECK-NEXT: for (int64_t r0 = 0; r0 < 8; ++r0) {
// CHECK-NEXT: for (int64_t r1 = 0; r1 < 16; ++r1) {
// CHECK-NEXT: for (int64_t c = 0; c < width; ++c) {
// CHECK-NEXT: const double x = {{.*}}[base + r0 * 9600 + r1 * 600 + c];
// CHECK-NEXT: acc[c] += x;
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: for (int64_t c = 0; c < width; ++c)
// CHECK-NEXT: p1[k0 * 256 + c] = static_cast<float>(acc[c]);
// CHECK-NEXT: }

// A kept outer dimension (3), a reduced middle one (5), 4 kept columns: mean.
// CHECK: static LOOM_KERNEL void [[MEAN:k[0-9]+_reduce_mean]]({{.*}}) {
// CHECK-NEXT: for (int64_t k0 = 0; k0 < 3; ++k0) {
// CHECK-NEXT: for (int64_t k1 = 0; k1 < 1; ++k1) {
// CHECK-NEXT: const int64_t width = 4;
// CHECK-NEXT: double acc[4];
// CHECK: const int64_t base = k0 * 20 + k1 * 4;
// CHECK-NEXT: for (int64_t r0 = 0; r0 < 5; ++r0) {
// CHECK-NEXT: for (int64_t c = 0; c < width; ++c) {
// CHECK-NEXT: const double x = {{.*}}[base + r0 * 4 + c];
// CHECK: p1[k0 * 4 + k1 * 4 + c] = static_cast<float>(acc[c] / 5.0);

// Max keeps NaN per column.
// CHECK-LABEL: static LOOM_KERNEL void {{k[0-9]+_reduce_max}}(
// CHECK: if (acc[c] == acc[c] && (x != x || x > acc[c])) acc[c] = x;

// The innermost dimension reduced: one accumulator per output.
// CHECK-LABEL: static LOOM_KERNEL void {{k[0-9]+_reduce_sum}}(
// CHECK-NOT: acc[
// CHECK: double acc = 0;

// Trailing dimensions of 44 elements: 8 lanes, 5 full rounds, a tail of 4.
// CHECK-LABEL: static LOOM_KERNEL void {{k[0-9]+_reduce_sum}}(
// CHECK: const int64_t base = k0 * 44;
// CHECK-NEXT: double lane[8];
// CHECK-NEXT: for (int64_t l = 0; l < 8; ++l) lane[l] = 0;
// CHECK-NEXT: for (int64_t j = 0; j < 40; j += 8) {
// CHECK-NEXT: for (int64_t l = 0; l < 8; ++l) {
// CHECK-NEXT: const double x = {{.*}}[base + j + l];
// CHECK-NEXT: lane[l] += x;
// CHECK: for (int64_t j = 40; j < 44; ++j) {
// CHECK-NEXT: const double x = {{.*}}[base + j];
// CHECK-NEXT: lane[0] += x;
// CHECK-NEXT: }
// CHECK-NEXT: lane[0] += lane[4];
// CHECK: lane[0] += lane[1];
// CHECK-NEXT: double acc = lane[0];
// The lanes of a max keep NaN when they combine.
// CHECK-LABEL: static LOOM_KERNEL void {{k[0-9]+_reduce_max}}(
// CHECK: if (lane[0] == lane[0] && (lane[4] != lane[4] || lane[4] > lane[0])) lane[0] = lane[4];
// 16 elements: two full rounds, no tail loop (GCC warned of undefined
// behaviour in the dead one).
// CHECK-LABEL: static LOOM_KERNEL void {{k[0-9]+_reduce_sum}}(
// CHECK: for (int64_t j = 0; j < 16; j += 8) {
// CHECK-NOT: ++j)
// CHECK: double acc = lane[0];

// 2048 columns: four tiles of 512.
// CHECK-LABEL: static LOOM_KERNEL void {{k[0-9]+_reduce_sum}}(
// CHECK: for (int64_t k0 = 0; k0 < 4; ++k0) {
// CHECK-NEXT: const int64_t width = 512;
// CHECK-NEXT: double acc[512];

// The step calls each on its buffers.
// CHECK-LABEL: void step(
// CHECK: // reduce sum over [0, 1] (reduce_sum) -> r0_b
// CHECK-NEXT: [[BIAS]](ctx, a0_x, r0_b);
// CHECK: // reduce mean over [1] (reduce_mean) -> r1_m
// CHECK-NEXT: [[MEAN]](ctx, a1_y, r1_m);
func.func @main(%x: tensor<8x16x600xf32> {loom.name = "x", loom.param},
                %y: tensor<3x5x4xf32> {loom.name = "y"},
                %z: tensor<3x2x22xf32> {loom.name = "z"},
                %w: tensor<3x16xf32> {loom.name = "w"},
                %v: tensor<2x2048xf32> {loom.name = "v", loom.param})
    -> (tensor<600xf32> {loom.name = "b"}, tensor<3x4xf32> {loom.name = "m"},
        tensor<5x4xf32> {loom.name = "mx"}, tensor<3x5xf32> {loom.name = "rows"},
        tensor<3xf32> {loom.name = "long"}, tensor<3x2xf32> {loom.name = "longmax"},
        tensor<3xf32> {loom.name = "even"},
        tensor<2048xf32> {loom.name = "wide"}) {
  %b = loom.reduce_sum %x, dims = [0, 1] : tensor<8x16x600xf32> -> tensor<600xf32>
  %m = loom.reduce_mean %y, dims = [1] : tensor<3x5x4xf32> -> tensor<3x4xf32>
  %mx = loom.reduce_max %y, dims = [0] : tensor<3x5x4xf32> -> tensor<5x4xf32>
  %rows = loom.reduce_sum %y, dims = [2] : tensor<3x5x4xf32> -> tensor<3x5xf32>
  %long = loom.reduce_sum %z, dims = [1, 2] : tensor<3x2x22xf32> -> tensor<3xf32>
  %longmax = loom.reduce_max %z, dims = [2] : tensor<3x2x22xf32> -> tensor<3x2xf32>
  %even = loom.reduce_sum %w, dims = [1] : tensor<3x16xf32> -> tensor<3xf32>
  %wide = loom.reduce_sum %v, dims = [0] : tensor<2x2048xf32> -> tensor<2048xf32>
  return %b, %m, %mx, %rows, %long, %longmax, %even, %wide : tensor<600xf32>, tensor<3x4xf32>, tensor<5x4xf32>, tensor<3x5xf32>, tensor<3xf32>, tensor<3x2xf32>, tensor<3xf32>, tensor<2048xf32>
}

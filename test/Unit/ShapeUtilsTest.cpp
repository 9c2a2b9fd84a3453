//===- ShapeUtilsTest.cpp - Shape arithmetic helpers ----------------------===//

#include "loom/Dialect/Loom/IR/ShapeUtils.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::loom;

namespace {
constexpr int64_t kDyn = ShapedType::kDynamic;

TEST(ShapeUtils, MeetTakesStaticSizes) {
  auto met = meetShapes({kDyn, 4, 5}, {3, kDyn, 5});
  ASSERT_TRUE(succeeded(met));
  EXPECT_EQ(SmallVector<int64_t>({3, 4, 5}), *met);
}

TEST(ShapeUtils, MeetRejectsConflicts) {
  EXPECT_TRUE(failed(meetShapes({3, 4}, {3, 5})));
  EXPECT_TRUE(failed(meetShapes({3}, {3, 1})));
}

TEST(ShapeUtils, MeetOfScalars) {
  auto met = meetShapes({}, {});
  ASSERT_TRUE(succeeded(met));
  EXPECT_TRUE(met->empty());
}

TEST(ShapeUtils, Refinement) {
  EXPECT_TRUE(isRefinementOf({8, 4}, {kDyn, 4}, /*strictly=*/true));
  EXPECT_FALSE(isRefinementOf({8, 4}, {8, 4}, /*strictly=*/true));
  EXPECT_TRUE(isRefinementOf({8, 4}, {8, 4}, /*strictly=*/false));
  // Losing information is not a refinement.
  EXPECT_FALSE(isRefinementOf({kDyn, 4}, {8, 4}, /*strictly=*/false));
  EXPECT_FALSE(isRefinementOf({9, 4}, {8, 4}, /*strictly=*/false));
}

TEST(ShapeUtils, FormatDims) {
  EXPECT_EQ("[2, ?, 7]", formatDims({2, kDyn, 7}));
  EXPECT_EQ("[]", formatDims({}));
}

TEST(ShapeUtils, ParseDims) {
  auto dims = parseDims("8x?x128");
  ASSERT_TRUE(succeeded(dims));
  EXPECT_EQ(SmallVector<int64_t>({8, kDyn, 128}), *dims);
  auto scalar = parseDims("");
  ASSERT_TRUE(succeeded(scalar));
  EXPECT_TRUE(scalar->empty());
  EXPECT_TRUE(failed(parseDims("8x")));
  EXPECT_TRUE(failed(parseDims("8x-1")));
  EXPECT_TRUE(failed(parseDims("eight")));
}
} // namespace

//===- OpBuildersTest.cpp - Building loom ops from C++ ---------------------===//
//
// Passes and importers build ops without spelling result types; these tests
// check the inferred types against shapes worked out by hand.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

class BuilderTest : public ::testing::Test {
protected:
  BuilderTest() : builder(&context), loc(builder.getUnknownLoc()) {
    context.loadDialect<loom::LoomDialect>();
    module = ModuleOp::create(loc);
    builder.setInsertionPointToEnd(module->getBody());
  }

  /// A value of the given type to feed ops (an iota, which any static tensor
  /// of a numeric element type can be).
  Value makeValue(ArrayRef<int64_t> shape, Type elementType) {
    return loom::IotaOp::create(builder, loc,
                                RankedTensorType::get(shape, elementType),
                                /*dim=*/0);
  }

  MLIRContext context;
  OpBuilder builder;
  Location loc;
  OwningOpRef<ModuleOp> module;
};

TEST_F(BuilderTest, DotGeneralInfersBatchThenFreeDims) {
  Type f32 = builder.getF32Type();
  Value lhs = makeValue({4, 2, 3}, f32); // [K=4, B=2, M=3]
  Value rhs = makeValue({2, 5, 4}, f32); // [B=2, N=5, K=4]
  auto dot = loom::DotGeneralOp::create(
      builder, loc, lhs, rhs, /*lhs_batching_dims=*/ArrayRef<int64_t>{1},
      /*rhs_batching_dims=*/ArrayRef<int64_t>{0},
      /*lhs_contracting_dims=*/ArrayRef<int64_t>{0},
      /*rhs_contracting_dims=*/ArrayRef<int64_t>{2});
  EXPECT_EQ(RankedTensorType::get({2, 3, 5}, f32), dot.getType());
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST_F(BuilderTest, ReduceKeepsOrDropsDims) {
  Type f32 = builder.getF32Type();
  Value x = makeValue({2, 3, 4}, f32);
  auto kept = loom::ReduceMeanOp::create(builder, loc, x,
                                         ArrayRef<int64_t>{0, 2},
                                         /*keepdims=*/true);
  auto dropped = loom::ReduceMaxOp::create(builder, loc, x,
                                           ArrayRef<int64_t>{0, 2},
                                           /*keepdims=*/false);
  EXPECT_EQ(RankedTensorType::get({1, 3, 1}, f32), kept.getType());
  EXPECT_EQ(RankedTensorType::get({3}, f32), dropped.getType());
}

TEST_F(BuilderTest, GatherEmbeddingShape) {
  Value table = makeValue({100, 16}, builder.getF32Type());
  Value ids = makeValue({2, 8}, builder.getI64Type());
  auto gather = loom::GatherOp::create(builder, loc, table, ids, /*axis=*/0);
  EXPECT_EQ(RankedTensorType::get({2, 8, 16}, builder.getF32Type()),
            gather.getType());
}

TEST_F(BuilderTest, SliceRoundsStridedSizesUp) {
  Value x = makeValue({10}, builder.getF32Type());
  auto slice = loom::SliceOp::create(builder, loc, x, ArrayRef<int64_t>{1},
                                     ArrayRef<int64_t>{8},
                                     ArrayRef<int64_t>{3});
  // Elements 1, 4, 7.
  EXPECT_EQ(RankedTensorType::get({3}, builder.getF32Type()), slice.getType());
}

TEST_F(BuilderTest, CrossEntropyReductions) {
  Type f32 = builder.getF32Type();
  Value logits = makeValue({4, 7, 10}, f32);
  Value labels = makeValue({4, 7}, builder.getI64Type());
  auto mean = loom::CrossEntropyOp::create(builder, loc, logits, labels,
                                           loom::LossReduction::mean,
                                           /*ignore_index=*/nullptr);
  auto none = loom::CrossEntropyOp::create(builder, loc, logits, labels,
                                           loom::LossReduction::none,
                                           builder.getI64IntegerAttr(-100));
  EXPECT_EQ(RankedTensorType::get({}, f32), mean.getType());
  EXPECT_EQ(RankedTensorType::get({4, 7}, f32), none.getType());
  EXPECT_TRUE(succeeded(verify(*module)));
}

} // namespace

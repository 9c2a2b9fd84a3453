//===- CostInterfaceTest.cpp - Flop and byte counts of loom ops -----------===//
//
// Expected figures are computed here from the textbook formulas (2*M*N*K for
// a product, element counts for the rest), not taken from the code under
// test.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

class CostTest : public ::testing::Test {
protected:
  CostTest() {
    context.loadDialect<loom::LoomDialect, func::FuncDialect>();
  }

  /// Parses `body` as the body of a function and returns its first op.
  Operation *parseFirstOp(StringRef signature, StringRef body) {
    std::string text = ("func.func @f(" + signature + ") {\n" + body +
                        "\n  return\n}\n")
                           .str();
    module = parseSourceString<ModuleOp>(text, &context);
    if (!module)
      return nullptr;
    auto func = *module->getOps<func::FuncOp>().begin();
    return &func.getBody().front().front();
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(CostTest, MatmulIsTwoMNK) {
  Operation *op = parseFirstOp(
      "%a: tensor<8x16xf32>, %b: tensor<16x4xf32>",
      "%c = loom.dot_general %a, %b, contracting_dims = [1] x [0] : "
      "(tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>");
  ASSERT_TRUE(op);
  auto cost = cast<loom::CostInterface>(op);
  EXPECT_EQ(2 * 8 * 4 * 16, cost.getFlopCount());
  EXPECT_EQ(4 * (8 * 16 + 16 * 4 + 8 * 4), cost.getBytesAccessed());
}

TEST_F(CostTest, BatchedMatmulCountsBatch) {
  Operation *op = parseFirstOp(
      "%q: tensor<2x3x5x7xbf16>, %k: tensor<2x3x11x7xbf16>",
      "%s = loom.dot_general %q, %k, batching_dims = [0, 1] x [0, 1], "
      "contracting_dims = [3] x [3] : (tensor<2x3x5x7xbf16>, "
      "tensor<2x3x11x7xbf16>) -> tensor<2x3x5x11xbf16>");
  ASSERT_TRUE(op);
  auto cost = cast<loom::CostInterface>(op);
  EXPECT_EQ(2 * (2 * 3) * 5 * 11 * 7, cost.getFlopCount());
  EXPECT_EQ(2 * (2 * 3 * 5 * 7 + 2 * 3 * 11 * 7 + 2 * 3 * 5 * 11),
            cost.getBytesAccessed());
}

TEST_F(CostTest, ElementwiseIsOnePerElement) {
  Operation *op = parseFirstOp("%a: tensor<3x5xf16>",
                               "%c = loom.add %a, %a : tensor<3x5xf16>");
  ASSERT_TRUE(op);
  auto cost = cast<loom::CostInterface>(op);
  EXPECT_EQ(15, cost.getFlopCount());
  EXPECT_EQ(3 * 15 * 2, cost.getBytesAccessed());
}

TEST_F(CostTest, DataMovementIsFree) {
  Operation *op = parseFirstOp(
      "%a: tensor<3x5xf32>",
      "%c = loom.transpose %a, permutation = [1, 0] : tensor<3x5xf32> -> "
      "tensor<5x3xf32>");
  ASSERT_TRUE(op);
  auto cost = cast<loom::CostInterface>(op);
  EXPECT_EQ(0, cost.getFlopCount());
  EXPECT_EQ(2 * 15 * 4, cost.getBytesAccessed());
}

TEST_F(CostTest, BoolsCountOneByte) {
  Operation *op = parseFirstOp(
      "%a: tensor<10xi64>",
      "%c = loom.compare lt, %a, %a : (tensor<10xi64>, tensor<10xi64>) -> "
      "tensor<10xi1>");
  ASSERT_TRUE(op);
  EXPECT_EQ(10 * 8 * 2 + 10, cast<loom::CostInterface>(op).getBytesAccessed());
}

TEST_F(CostTest, DynamicShapesHaveNoCost) {
  Operation *op = parseFirstOp("%a: tensor<?x5xf32>",
                               "%c = loom.exp %a : tensor<?x5xf32>");
  ASSERT_TRUE(op);
  auto cost = cast<loom::CostInterface>(op);
  EXPECT_EQ(std::nullopt, cost.getFlopCount());
  EXPECT_EQ(std::nullopt, cost.getBytesAccessed());
}

TEST_F(CostTest, ReductionReadsEveryInput) {
  Operation *op = parseFirstOp(
      "%a: tensor<6x7xf32>",
      "%c = loom.reduce_sum %a, dims = [1] : tensor<6x7xf32> -> tensor<6xf32>");
  ASSERT_TRUE(op);
  EXPECT_EQ(42, cast<loom::CostInterface>(op).getFlopCount());
}

} // namespace

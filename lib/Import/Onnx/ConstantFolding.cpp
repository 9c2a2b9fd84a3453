//===- ConstantFolding.cpp - Compile-time tensors of the ONNX importer ----===//
//
// ONNX models compute shapes at run time (Shape -> Gather -> Concat ->
// Reshape), while loom ops need static shapes. The importer therefore keeps
// the values it can know -- constants, initializers that are program
// constants, and shape arithmetic on them -- as ConstTensors beside the IR
// and evaluates that arithmetic itself, node by node, before any loom op
// exists: ONNX semantics (numpy broadcasting, Reshape's 0 and -1, negative
// Gather indices, Slice clamping, integer division truncating toward zero,
// int64 wrap-around) on doubles and int64s. Only a known tensor that a
// run-time op consumes is materialised, once, as a loom.constant.
//
// This is not a second copy of an evaluator that exists elsewhere, and it
// must stay in the importer:
//  * the loom ops' folders (LoomOps.cpp) fold only a few elementwise ops
//    (add, sub, mul, div, max, min, neg) on attributes, in the op's element
//    type, and splats through reshape/broadcast; there is no folding of
//    Gather, Concat, Slice, Cast or comparisons, nor of Where but for a
//    splat condition. Folding there would also need the ops -- and their
//    operands materialised as constants -- in the IR first, which changes
//    the imported IR;
//  * the reference interpreter (lib/Interpreter) runs loom IR, not ONNX
//    nodes, in each tensor's element type (floats would round to it at
//    every step instead of once), and links OpenBLAS, which the importer
//    and the fuzz target do not need;
//  * the importer must know the values while it imports the node that
//    needs them (a Reshape's target, a Slice's bounds), and report errors on
//    the ONNX node.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/ShapeUtils.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::onnx_import;

/// Index into `t` (numpy-broadcast to `shape`) of the element at flat
/// position `k` of `shape`.
static int64_t broadcastIndex(const ConstTensor &t, ArrayRef<int64_t> shape,
                              int64_t k) {
  SmallVector<int64_t> outStrides = computeStrides(shape);
  SmallVector<int64_t> inStrides = computeStrides(t.shape);
  int64_t offset = shape.size() - t.shape.size();
  int64_t index = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t coord = (k / outStrides[d]) % std::max<int64_t>(shape[d], 1);
    int64_t td = static_cast<int64_t>(d) - offset;
    if (td >= 0 && t.shape[td] != 1)
      index += coord * inStrides[td];
  }
  return index;
}

// Constants and shape arithmetic
//===----------------------------------------------------------------------===//

static LogicalResult importConstant(Importer &im, const onnx::NodeProto &node) {
  Location loc = im.nodeLoc(node);
  Type i64 = im.b.getI64Type(), f32 = im.b.getF32Type();
  ConstTensor c;
  if (const auto *a = im.attr(node, "value")) {
    FailureOr<ConstTensor> t = im.readConstTensor(a->t(), "its value", loc);
    if (failed(t))
      return failure();
    c = std::move(*t);
  } else if (const auto *a = im.attr(node, "value_float")) {
    c = ConstTensor::make(f32, {});
    c.f[0] = a->f();
  } else if (const auto *a = im.attr(node, "value_floats")) {
    c = ConstTensor::make(f32, {a->floats_size()});
    for (int k = 0; k < a->floats_size(); ++k)
      c.f[k] = a->floats(k);
  } else if (const auto *a = im.attr(node, "value_int")) {
    c = ConstTensor::make(i64, {});
    c.i[0] = a->i();
  } else if (const auto *a = im.attr(node, "value_ints")) {
    c = ConstTensor::make(i64, {a->ints_size()});
    for (int k = 0; k < a->ints_size(); ++k)
      c.i[k] = a->ints(k);
  } else {
    return im.nodeError(node)
           << "needs a value, value_float(s) or value_int(s) "
              "attribute (sparse and string constants are "
              "not supported)";
  }
  im.defineConst(node, 0, std::move(c));
  return success();
}

static LogicalResult importShape(Importer &im, const onnx::NodeProto &node) {
  // Only the shape matters: a known input is not materialised.
  SmallVector<int64_t> shape;
  if (const ConstTensor *c = im.constInput(node, 0)) {
    shape = c->shape;
  } else {
    FailureOr<Value> x = im.input(node, 0);
    if (failed(x))
      return failure();
    shape.assign(im.typeOf(*x).getShape().begin(),
                 im.typeOf(*x).getShape().end());
  }
  int64_t rank = shape.size();
  int64_t start = im.intAttr(node, "start", 0),
          end = im.intAttr(node, "end", rank);
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  ConstTensor c = ConstTensor::make(im.b.getI64Type(), {end - start});
  for (int64_t d = start; d < end; ++d)
    c.i[d - start] = shape[d];
  im.defineConst(node, 0, std::move(c));
  return success();
}

static LogicalResult importConstantOfShape(Importer &im,
                                           const onnx::NodeProto &node) {
  FailureOr<ConstTensor> shapeT = im.requireConst(node, 0, "the shape");
  if (failed(shapeT))
    return failure();
  std::string error;
  FailureOr<SmallVector<int64_t>> shape = shapeOperand(*shapeT, error);
  if (failed(shape))
    return im.nodeError(node) << error;
  ConstTensor value = ConstTensor::make(im.b.getF32Type(), {1});
  if (const auto *a = im.attr(node, "value")) {
    FailureOr<ConstTensor> t =
        im.readConstTensor(a->t(), "its value", im.nodeLoc(node));
    if (failed(t))
      return failure();
    if (t->size() != 1)
      return im.nodeError(node)
             << "value must hold one element, not " << t->size();
    value = std::move(*t);
  }
  if (*numElements(*shape) > kMaxFoldElements) {
    // Too large to evaluate (and never shape arithmetic): a splat constant.
    im.define(node, 0,
              im.splat(value.asDouble(0),
                       RankedTensorType::get(*shape, value.elementType),
                       im.nodeLoc(node)));
    return success();
  }
  ConstTensor c = ConstTensor::make(value.elementType, *shape);
  if (c.isFloat())
    std::fill(c.f.begin(), c.f.end(), value.f[0]);
  else
    std::fill(c.i.begin(), c.i.end(), value.i[0]);
  im.defineConst(node, 0, std::move(c));
  return success();
}

static LogicalResult importRange(Importer &im, const onnx::NodeProto &node) {
  FailureOr<ConstTensor> start = im.requireConst(node, 0, "start"),
                         limit = im.requireConst(node, 1, "limit"),
                         delta = im.requireConst(node, 2, "delta");
  if (failed(start) || failed(limit) || failed(delta))
    return failure();
  if (start->size() != 1 || limit->size() != 1 || delta->size() != 1)
    return im.nodeError(node) << "start, limit and delta must be scalars";
  Type type = start->elementType;
  int64_t n;
  if (start->isFloat()) {
    double s = start->f[0], l = limit->f[0], d = delta->f[0];
    double count = std::ceil((l - s) / d);
    if (d == 0 || !(count < 9.0e18))
      return im.nodeError(node) << "cannot count the elements of range(" << s
                                << ", " << l << ", " << d << ")";
    n = std::max<int64_t>(0, static_cast<int64_t>(count));
  } else {
    int64_t s = start->asInt(0), l = limit->asInt(0), d = delta->asInt(0);
    if (d == 0)
      return im.nodeError(node) << "delta is 0";
    // ceil((l - s) / d) without overflow: in 128 bits.
    __int128 span = static_cast<__int128>(l) - s;
    __int128 count = span / d + ((span % d != 0) && ((span > 0) == (d > 0)));
    n = count > 0 ? static_cast<int64_t>(count) : 0;
  }
  Location loc = im.nodeLoc(node);
  if (n > kMaxFoldElements) {
    // Too large to evaluate: start + delta * iota.
    if (!type.isInteger(64) && !type.isInteger(32) && !isa<FloatType>(type))
      return im.nodeError(node) << "range of " << n << " elements of " << type
                                << " is too large to evaluate at import time";
    auto t = RankedTensorType::get({n}, type);
    Value v = IotaOp::create(im.b, loc, t, 0);
    v = MulOp::create(im.b, loc, v, im.splat(delta->asDouble(0), t, loc));
    v = AddOp::create(im.b, loc, v, im.splat(start->asDouble(0), t, loc));
    im.define(node, 0, v);
    return success();
  }
  ConstTensor c = ConstTensor::make(type, {n});
  for (int64_t k = 0; k < n; ++k) {
    if (c.isFloat())
      c.f[k] = start->f[0] + k * delta->f[0];
    else
      c.i[k] = start->asInt(0) + k * delta->asInt(0);
  }
  im.defineConst(node, 0, std::move(c));
  return success();
}

std::optional<ConstTensor> onnx_import::castConstTensor(const ConstTensor &c,
                                                        Type to) {
  bool toFloat = isa<FloatType>(to), toBool = to.isInteger(1);
  if (!toFloat && !toBool && c.isFloat() &&
      llvm::any_of(c.f, [](double v) {
        return !(std::fabs(v) < 9.2e18); // NaN, inf or out of int64 range
      }))
    return std::nullopt;
  ConstTensor r = ConstTensor::make(to, c.shape);
  for (int64_t k = 0, e = c.size(); k < e; ++k) {
    if (toFloat)
      r.f[k] = c.asDouble(k);
    else if (toBool)
      r.i[k] = c.asDouble(k) != 0;
    else
      r.i[k] = c.isFloat() ? static_cast<int64_t>(c.f[k]) : c.i[k];
  }
  return r;
}

FailureOr<bool> onnx_import::tryFold(Importer &im,
                                     const onnx::NodeProto &node) {
  StringRef type = node.op_type();
  // Which ops fold when all their inputs are known.
  static const llvm::StringSet<> foldable = {
      "Add", "Sub", "Mul", "Div", "Equal", "Less", "Greater", "LessOrEqual",
      "GreaterOrEqual", "Not", "Where", "Cast", "Gather", "Concat",
      "Unsqueeze", "Squeeze", "Reshape", "Slice", "Identity", "Neg", "Max",
      "Min", "Expand", "Abs", "Cos", "Sin", "And", "Or", "Xor", "IsNaN",
      "IsInf", "Sum", "Mod", "Transpose", "Sqrt", "Reciprocal", "Exp", "Log",
      "Pow"};
  if (!foldable.contains(type))
    return false;
  SmallVector<const ConstTensor *> in;
  for (int k = 0; k < node.input_size(); ++k) {
    if (node.input(k).empty()) {
      in.push_back(nullptr);
      continue;
    }
    const ConstTensor *c = im.constInput(node, k);
    if (!c)
      return false;
    in.push_back(c);
  }
  if (in.empty() || !in[0])
    return false;
  static const llvm::StringSet<> binary = {
      "Add", "Sub", "Mul", "Div", "Max", "Min", "Equal", "Less", "Greater",
      "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Sum", "Mod"};
  // Malformed nodes (a missing operand, mixed types) go through the
  // handlers, which report them.
  if (binary.contains(type) &&
      (in.size() != 2 || !in[1] || in[0]->elementType != in[1]->elementType))
    return false;

  // Elementwise with numpy broadcasting.
  auto elementwise = [&](Type resultType,
                         std::function<double(double, double)> fd,
                         std::function<int64_t(int64_t, int64_t)> fi)
      -> FailureOr<bool> {
    FailureOr<SmallVector<int64_t>> shape =
        broadcastShapes(in[0]->shape, in.size() > 1 ? in[1]->shape
                                                    : in[0]->shape);
    if (failed(shape)) {
      im.nodeError(node) << "operand shapes " << formatDims(in[0]->shape)
                         << " and " << formatDims(in[1]->shape)
                         << " do not broadcast";
      return failure();
    }
    if (numElements(*shape).value_or(kMaxFoldElements + 1) > kMaxFoldElements)
      return false;
    ConstTensor c = ConstTensor::make(resultType, *shape);
    const ConstTensor &x = *in[0];
    const ConstTensor &y = in.size() > 1 ? *in[1] : *in[0];
    bool floatMath = x.isFloat() || y.isFloat();
    for (int64_t k = 0, e = c.size(); k < e; ++k) {
      int64_t ix = broadcastIndex(x, *shape, k);
      int64_t iy = broadcastIndex(y, *shape, k);
      if (floatMath) {
        double v = fd(x.asDouble(ix), y.asDouble(iy));
        if (c.isFloat())
          c.f[k] = v;
        else
          c.i[k] = static_cast<int64_t>(v);
      } else {
        int64_t v = fi(x.i[ix], y.i[iy]);
        if (c.isFloat())
          c.f[k] = static_cast<double>(v);
        else
          c.i[k] = v;
      }
    }
    im.defineConst(node, 0, std::move(c));
    return true;
  };
  Type i1 = im.b.getI1Type();
  Type et = in[0]->elementType;
  // Integer arithmetic wraps (two's complement) instead of overflowing.
  auto wrap = [](auto op) {
    return [op](int64_t a, int64_t b) {
      return static_cast<int64_t>(op(static_cast<uint64_t>(a),
                                     static_cast<uint64_t>(b)));
    };
  };
  if (type == "Add" || type == "Sum")
    return elementwise(et, std::plus<double>(), wrap(std::plus<uint64_t>()));
  if (type == "Sub")
    return elementwise(et, std::minus<double>(),
                       wrap(std::minus<uint64_t>()));
  if (type == "Mul")
    return elementwise(et, std::multiplies<double>(),
                       wrap(std::multiplies<uint64_t>()));
  if (type == "Div") {
    if (!in[1]->isFloat() &&
        (llvm::is_contained(in[1]->i, 0) || llvm::is_contained(in[1]->i, -1)))
      return false; // division by zero, or a possible INT64_MIN / -1
    return elementwise(et, std::divides<double>(), [](int64_t a, int64_t b) {
      // ONNX integer Div truncates toward zero.
      return a / b;
    });
  }
  if (type == "Max")
    return elementwise(et, [](double a, double b) { return std::max(a, b); },
                       [](int64_t a, int64_t b) { return std::max(a, b); });
  if (type == "Min")
    return elementwise(et, [](double a, double b) { return std::min(a, b); },
                       [](int64_t a, int64_t b) { return std::min(a, b); });
  if (type == "Neg")
    return elementwise(et, [](double a, double) { return -a; },
                       [](int64_t a, int64_t) {
                         return static_cast<int64_t>(-static_cast<uint64_t>(a));
                       });
  if (type == "Abs")
    return elementwise(et, [](double a, double) { return std::fabs(a); },
                       [](int64_t a, int64_t) {
                         return a < 0 ? static_cast<int64_t>(
                                            -static_cast<uint64_t>(a))
                                      : a;
                       });
  if (type == "Equal")
    return elementwise(i1, [](double a, double b) { return a == b; },
                       [](int64_t a, int64_t b) { return a == b; });
  if (type == "Less")
    return elementwise(i1, [](double a, double b) { return a < b; },
                       [](int64_t a, int64_t b) { return a < b; });
  if (type == "Greater")
    return elementwise(i1, [](double a, double b) { return a > b; },
                       [](int64_t a, int64_t b) { return a > b; });
  if (type == "LessOrEqual")
    return elementwise(i1, [](double a, double b) { return a <= b; },
                       [](int64_t a, int64_t b) { return a <= b; });
  if (type == "GreaterOrEqual")
    return elementwise(i1, [](double a, double b) { return a >= b; },
                       [](int64_t a, int64_t b) { return a >= b; });
  if (type == "Not")
    return elementwise(i1, [](double a, double) { return a == 0; },
                       [](int64_t a, int64_t) { return a == 0; });
  if (type == "And" || type == "Or" || type == "Xor") {
    if (!et.isInteger(1))
      return false; // the handler reports it
    auto logical = [type](int64_t a, int64_t b) -> int64_t {
      bool x = a != 0, y = b != 0;
      return type == "And" ? x && y : type == "Or" ? x || y : x != y;
    };
    return elementwise(
        i1, [](double, double) { return 0.0; }, logical);
  }
  if (type == "Cos" || type == "Sin") {
    if (!in[0]->isFloat())
      return false;
    bool cosine = type == "Cos";
    return elementwise(
        et,
        [cosine](double a, double) { return cosine ? std::cos(a) : std::sin(a); },
        [](int64_t a, int64_t) { return a; });
  }
  // Float math on known values (an attention scale's sqrt, often on a
  // float64 constant that a Cast then narrows).
  if (type == "Sqrt" || type == "Reciprocal" || type == "Exp" ||
      type == "Log") {
    if (!in[0]->isFloat())
      return false; // the handler reports it
    auto f = llvm::StringSwitch<double (*)(double)>(type)
                 .Case("Sqrt", [](double a) { return std::sqrt(a); })
                 .Case("Reciprocal", [](double a) { return 1.0 / a; })
                 .Case("Exp", [](double a) { return std::exp(a); })
                 .Default([](double a) { return std::log(a); });
    return elementwise(
        et, [f](double a, double) { return f(a); },
        [](int64_t a, int64_t) { return a; });
  }
  if (type == "Pow") {
    // A float base; the exponent may be of another type (ONNX allows it).
    if (in.size() != 2 || !in[1] || !in[0]->isFloat())
      return false;
    return elementwise(
        et, [](double a, double b) { return std::pow(a, b); },
        [](int64_t a, int64_t) { return a; });
  }
  if (type == "IsNaN" || type == "IsInf") {
    if (!in[0]->isFloat())
      return false;
    bool nan = type == "IsNaN";
    bool positive = im.intAttr(node, "detect_positive", 1) != 0;
    bool negative = im.intAttr(node, "detect_negative", 1) != 0;
    return elementwise(
        i1,
        [=](double a, double) -> double {
          if (nan)
            return std::isnan(a);
          return std::isinf(a) && (a > 0 ? positive : negative);
        },
        [](int64_t, int64_t) { return int64_t(0); });
  }
  if (type == "Mod") {
    // Integers only (the handler reports floats), no division by zero or
    // INT64_MIN % -1.
    if (in[0]->isFloat() || et.isInteger(1) ||
        llvm::is_contained(in[1]->i, 0) || llvm::is_contained(in[1]->i, -1))
      return false;
    bool fmod = im.intAttr(node, "fmod", 0) != 0;
    return elementwise(et, [](double a, double) { return a; },
                       [fmod](int64_t a, int64_t b) {
                         int64_t r = a % b;
                         if (!fmod && r != 0 && ((r < 0) != (b < 0)))
                           r += b;
                         return r;
                       });
  }
  if (type == "Identity") {
    im.defineConst(node, 0, *in[0]);
    return true;
  }
  if (type == "Cast") {
    Type to = convertConstElementType(im.intAttr(node, "to", 0), im.ctx);
    std::optional<ConstTensor> c = to ? castConstTensor(*in[0], to)
                                      : std::nullopt;
    if (!c)
      return false;
    im.defineConst(node, 0, std::move(*c));
    return true;
  }
  if (type == "Where") {
    if (in.size() != 3 || !in[1] || !in[2])
      return false;
    FailureOr<SmallVector<int64_t>> shape =
        broadcastShapes(in[0]->shape, in[1]->shape);
    if (succeeded(shape))
      shape = broadcastShapes(*shape, in[2]->shape);
    if (failed(shape) || in[1]->elementType != in[2]->elementType ||
        numElements(*shape).value_or(kMaxFoldElements + 1) > kMaxFoldElements)
      return false;
    ConstTensor c = ConstTensor::make(in[1]->elementType, *shape);
    for (int64_t k = 0, e = c.size(); k < e; ++k) {
      bool cond = in[0]->asInt(broadcastIndex(*in[0], *shape, k));
      const ConstTensor &src = cond ? *in[1] : *in[2];
      int64_t idx = broadcastIndex(src, *shape, k);
      if (c.isFloat())
        c.f[k] = src.asDouble(idx);
      else
        c.i[k] = src.asInt(idx);
    }
    im.defineConst(node, 0, std::move(c));
    return true;
  }
  // Shape-changing ops on known tensors: compute the new shape with the
  // same rules as for run-time values, then reuse the data (row-major order
  // is unchanged by Reshape/Unsqueeze/Squeeze; Expand broadcasts).
  auto reshaped = [&](ArrayRef<int64_t> shape) -> FailureOr<bool> {
    ConstTensor c = *in[0];
    c.shape.assign(shape.begin(), shape.end());
    im.defineConst(node, 0, std::move(c));
    return true;
  };
  if (type == "Reshape") {
    if (in.size() < 2 || !in[1])
      return false;
    std::string error;
    auto target = reshapeTarget(in[0]->shape, *in[1],
                                im.intAttr(node, "allowzero", 0), error);
    if (failed(target)) {
      im.nodeError(node) << "cannot reshape " << formatDims(in[0]->shape)
                         << ": " << error;
      return failure();
    }
    return reshaped(*target);
  }
  if (type == "Unsqueeze" || type == "Squeeze") {
    std::string error;
    FailureOr<SmallVector<int64_t>> shape =
        type == "Unsqueeze"
            ? (in.size() > 1 && in[1]
                   ? unsqueezedShape(in[0]->shape, *constAxes(in[1]), error)
                   : FailureOr<SmallVector<int64_t>>(failure()))
            : squeezedShape(in[0]->shape,
                            in.size() > 1 && in[1] ? constAxes(in[1])
                                                   : std::nullopt,
                            error);
    if (failed(shape)) {
      im.nodeError(node) << (error.empty() ? "axes input is missing" : error);
      return failure();
    }
    return reshaped(*shape);
  }
  if (type == "Expand") {
    if (in.size() < 2 || !in[1])
      return false;
    std::string error;
    FailureOr<SmallVector<int64_t>> target = shapeOperand(*in[1], error);
    if (failed(target))
      return false;
    FailureOr<SmallVector<int64_t>> shape =
        broadcastShapes(in[0]->shape, *target);
    if (failed(shape) ||
        numElements(*shape).value_or(kMaxFoldElements + 1) > kMaxFoldElements)
      return false;
    ConstTensor c = ConstTensor::make(et, *shape);
    for (int64_t k = 0, e = c.size(); k < e; ++k) {
      int64_t idx = broadcastIndex(*in[0], *shape, k);
      if (c.isFloat())
        c.f[k] = in[0]->f[idx];
      else
        c.i[k] = in[0]->i[idx];
    }
    im.defineConst(node, 0, std::move(c));
    return true;
  }
  if (type == "Concat") {
    int64_t rank = in[0]->shape.size();
    int64_t axis = im.intAttr(node, "axis", 0);
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank)
      return false;
    SmallVector<int64_t> shape(in[0]->shape);
    shape[axis] = 0;
    for (const ConstTensor *t : in) {
      if (!t || t->shape.size() != static_cast<size_t>(rank) ||
          t->elementType != et)
        return false;
      for (int64_t d = 0; d < rank; ++d)
        if (d != axis && t->shape[d] != shape[d])
          return false;
      shape[axis] += t->shape[axis];
    }
    ConstTensor c = ConstTensor::make(et, shape);
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d)
      outer *= shape[d];
    int64_t pos = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (const ConstTensor *t : in) {
        int64_t chunk = t->size() / std::max<int64_t>(outer, 1);
        for (int64_t k = 0; k < chunk; ++k, ++pos) {
          if (c.isFloat())
            c.f[pos] = t->asDouble(o * chunk + k);
          else
            c.i[pos] = t->asInt(o * chunk + k);
        }
      }
    im.defineConst(node, 0, std::move(c));
    return true;
  }
  if (type == "Gather") {
    if (in.size() < 2 || !in[1])
      return false;
    const ConstTensor &data = *in[0], &idx = *in[1];
    if (idx.isFloat() || idx.elementType.isInteger(1))
      return false;
    int64_t rank = data.shape.size();
    int64_t axis = im.intAttr(node, "axis", 0);
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank)
      return false;
    SmallVector<int64_t> shape(data.shape.begin(), data.shape.begin() + axis);
    shape.append(idx.shape.begin(), idx.shape.end());
    shape.append(data.shape.begin() + axis + 1, data.shape.end());
    if (numElements(shape).value_or(kMaxFoldElements + 1) > kMaxFoldElements)
      return false;
    ConstTensor c = ConstTensor::make(et, shape);
    int64_t outer = 1, inner = 1, size = data.shape[axis];
    for (int64_t d = 0; d < axis; ++d)
      outer *= data.shape[d];
    for (int64_t d = axis + 1; d < rank; ++d)
      inner *= data.shape[d];
    int64_t pos = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < idx.size(); ++j) {
        int64_t v = idx.asInt(j);
        if (v < 0)
          v += size;
        if (v < 0 || v >= size) {
          im.nodeError(node) << "index " << idx.asInt(j)
                             << " is out of range for size " << size;
          return failure();
        }
        for (int64_t k = 0; k < inner; ++k, ++pos) {
          int64_t src = (o * size + v) * inner + k;
          if (c.isFloat())
            c.f[pos] = data.f[src];
          else
            c.i[pos] = data.i[src];
        }
      }
    im.defineConst(node, 0, std::move(c));
    return true;
  }
  if (type == "Transpose") {
    // The exporters' pad lists go through [n, 2] -> transpose -> [2n].
    int64_t rank = in[0]->shape.size();
    SmallVector<int64_t> perm;
    if (std::optional<SmallVector<int64_t>> p = im.intsAttr(node, "perm"))
      perm = *p;
    else
      for (int64_t d = rank - 1; d >= 0; --d)
        perm.push_back(d);
    SmallVector<bool> used(rank, false);
    if (static_cast<int64_t>(perm.size()) != rank)
      return false;
    for (int64_t d : perm) {
      if (d < 0 || d >= rank || used[d])
        return false; // the handler reports it
      used[d] = true;
    }
    SmallVector<int64_t> shape;
    for (int64_t d : perm)
      shape.push_back(in[0]->shape[d]);
    ConstTensor c = ConstTensor::make(et, shape);
    SmallVector<int64_t> inStrides = computeStrides(in[0]->shape);
    SmallVector<int64_t> outStrides = computeStrides(shape);
    for (int64_t p = 0, e = c.size(); p < e; ++p) {
      int64_t src = 0;
      for (int64_t d = 0; d < rank; ++d)
        src += ((p / outStrides[d]) % shape[d]) * inStrides[perm[d]];
      if (c.isFloat())
        c.f[p] = in[0]->f[src];
      else
        c.i[p] = in[0]->i[src];
    }
    im.defineConst(node, 0, std::move(c));
    return true;
  }
  if (type == "Slice") {
    // Slices of known tensors (shape vectors; the pad lists that exporters
    // reshape to [n, 2] and reverse with step -1). Malformed ones go
    // through the value path, which reports them.
    if (in.size() < 3 || !in[1] || !in[2] || in[1]->isFloat() ||
        in[2]->isFloat() || in[1]->size() != in[2]->size())
      return false;
    int64_t rank = in[0]->shape.size();
    int64_t n = in[1]->size();
    if ((in.size() > 3 && in[3] && (in[3]->isFloat() || in[3]->size() != n)) ||
        (in.size() > 4 && in[4] && (in[4]->isFloat() || in[4]->size() != n)))
      return false;
    SmallVector<int64_t> start(rank, 0), step(rank, 1), shape(in[0]->shape);
    SmallVector<bool> seen(rank, false);
    for (int64_t k = 0; k < n; ++k) {
      int64_t axis = in.size() > 3 && in[3] ? in[3]->i[k] : k;
      if (axis < 0)
        axis += rank;
      if (axis < 0 || axis >= rank || seen[axis])
        return false;
      seen[axis] = true;
      int64_t size = in[0]->shape[axis];
      int64_t st = in.size() > 4 && in[4] ? in[4]->i[k] : 1;
      if (st == 0 || st == std::numeric_limits<int64_t>::min())
        return false;
      // ONNX clamps to [0, size] for positive steps; for negative ones
      // starts clamp to [0, size - 1] and ends to [-1, size - 1].
      auto clampIndex = [&](int64_t v, int64_t lo, int64_t hi) {
        if (v < 0)
          v += size;
        return std::clamp<int64_t>(v, lo, hi);
      };
      int64_t s = 0, count = 0;
      if (st > 0) {
        s = clampIndex(in[1]->i[k], 0, size);
        int64_t e = clampIndex(in[2]->i[k], 0, size);
        count = e > s ? 1 + (e - s - 1) / st : 0;
      } else if (size > 0) {
        s = clampIndex(in[1]->i[k], 0, size - 1);
        int64_t e = clampIndex(in[2]->i[k], -1, size - 1);
        count = s > e ? 1 + (s - e - 1) / -st : 0;
      }
      start[axis] = s;
      step[axis] = st;
      shape[axis] = count;
    }
    ConstTensor c = ConstTensor::make(et, shape);
    SmallVector<int64_t> inStrides = computeStrides(in[0]->shape);
    SmallVector<int64_t> outStrides = computeStrides(shape);
    for (int64_t p = 0, e = c.size(); p < e; ++p) {
      int64_t src = 0;
      for (int64_t d = 0; d < rank; ++d)
        src += (start[d] + ((p / outStrides[d]) % shape[d]) * step[d]) *
               inStrides[d];
      if (c.isFloat())
        c.f[p] = in[0]->f[src];
      else
        c.i[p] = in[0]->i[src];
    }
    im.defineConst(node, 0, std::move(c));
    return true;
  }
  return false;
}

/// Size(x): the number of elements, known from the static shape.
static LogicalResult importSize(Importer &im, const onnx::NodeProto &node) {
  int64_t count = 1;
  if (const ConstTensor *c = im.constInput(node, 0)) {
    count = c->size();
  } else {
    FailureOr<Value> x = im.input(node, 0);
    if (failed(x))
      return failure();
    for (int64_t d : im.typeOf(*x).getShape())
      count *= d;
  }
  ConstTensor c = ConstTensor::make(im.b.getI64Type(), {});
  c.i[0] = count;
  im.defineConst(node, 0, std::move(c));
  return success();
}

/// The graph attribute `name` (then_branch, else_branch) of an If node,
/// checked to give the node's outputs.
static FailureOr<const onnx::GraphProto *>
branchOf(Importer &im, const onnx::NodeProto &node, StringRef name) {
  for (const auto &attr : node.attribute())
    if (attr.name() == name && attr.has_g()) {
      if (attr.g().output_size() != node.output_size())
        return im.nodeError(node)
               << name << " has " << attr.g().output_size()
               << " outputs, the node " << node.output_size();
      return &attr.g();
    }
  return im.nodeError(node) << "has no " << name << " graph";
}

/// Output `k` of the imported `branch` as a run-time value (a known one
/// materialized).
static FailureOr<Value> branchValue(Importer &im, const onnx::NodeProto &node,
                                    const onnx::GraphProto &branch,
                                    StringRef name, int k) {
  const std::string &out = branch.output(k).name();
  if (const ConstTensor *c = im.constValue(out)) {
    if (failed(im.checkMaterializable(*c, out, node.name())))
      return failure();
    return im.materialize(*c, im.nodeLoc(node));
  }
  if (Value v = im.valueOf(out))
    return v;
  return im.nodeError(node) << name << " output '" << out
                            << "' is not produced by the branch";
}

/// If(cond). On a condition known at import time (exporters test shapes,
/// e.g. TorchScript's scatter_reduce asks whether the data is a scalar)
/// the taken branch's nodes are imported in place and its outputs become
/// the node's; the other branch is never read. On a condition computed
/// from the data both branches are imported and each output is a
/// loom.select between them (both branches compute; the gradient flows
/// into the one taken), so the branches must give outputs of one type.
static LogicalResult importIf(Importer &im, const onnx::NodeProto &node) {
  if (const ConstTensor *cond = im.constInput(node, 0)) {
    if (cond->size() != 1)
      return im.nodeError(node) << "the condition must be a single value, "
                                   "got "
                                << cond->size();
    StringRef taken = cond->asInt(0) ? "then_branch" : "else_branch";
    FailureOr<const onnx::GraphProto *> branch = branchOf(im, node, taken);
    if (failed(branch) || failed(im.importSubgraph(**branch)))
      return failure();
    for (auto [k, out] : llvm::enumerate((*branch)->output())) {
      if (const ConstTensor *c = im.constValue(out.name())) {
        im.defineConst(node, k, *c);
        continue;
      }
      FailureOr<Value> v = branchValue(im, node, **branch, taken, k);
      if (failed(v))
        return failure();
      im.define(node, k, *v);
    }
    return success();
  }
  FailureOr<Value> cond = im.input(node, 0);
  if (failed(cond))
    return failure();
  RankedTensorType condType = im.typeOf(*cond);
  if (!condType.getElementType().isInteger(1) ||
      condType.getNumElements() != 1)
    return im.nodeError(node) << "the condition must be one bool, got "
                              << condType;
  FailureOr<const onnx::GraphProto *> thenGraph =
      branchOf(im, node, "then_branch");
  FailureOr<const onnx::GraphProto *> elseGraph =
      branchOf(im, node, "else_branch");
  if (failed(thenGraph) || failed(elseGraph) ||
      failed(im.importSubgraph(**thenGraph)) ||
      failed(im.importSubgraph(**elseGraph)))
    return failure();
  Location loc = im.nodeLoc(node);
  Value scalar = im.reshape(*cond, {}, loc);
  for (int k = 0; k < node.output_size(); ++k) {
    FailureOr<Value> t = branchValue(im, node, **thenGraph, "then_branch", k);
    FailureOr<Value> e = branchValue(im, node, **elseGraph, "else_branch", k);
    if (failed(t) || failed(e))
      return failure();
    if (t->getType() != e->getType())
      return im.nodeError(node)
             << "output " << k << ": the branches give " << t->getType()
             << " and " << e->getType()
             << "; an If on a condition computed from the data needs "
                "branches of one type (both are computed)";
    RankedTensorType type = im.typeOf(*t);
    Value pred = im.broadcastTo(
        scalar, type.getShape(), loc);
    im.define(node, k, SelectOp::create(im.b, loc, pred, *t, *e));
  }
  return success();
}

void onnx_import::registerConstantHandlers(HandlerRegistry &registry) {
  registry.add({
      {"Constant", importConstant},
      {"Shape", importShape},
      {"Size", importSize},
      {"If", importIf},
      {"ConstantOfShape", importConstantOfShape},
      {"Range", importRange},
  });
}

//===- NormKernels.cpp - softmax, layer/RMS norm, cross-entropy -----------===//

#include "Kernels.h"

#include <cmath>
#include <limits>

namespace mlir {
namespace loom {
namespace interp {

namespace {

/// The number of elements of a shape.
int64_t product(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

std::string requireFloat(const Tensor &x, const char *what) {
  if (x.isFloat())
    return "";
  return std::string("expects a floating-point ") + what + ", got " +
         getKindName(x.kind);
}

/// Checks an optional scale/bias against the normalised dimensions.
std::string checkAffine(const Tensor &x, const Tensor *affine, int64_t axis,
                        const char *what) {
  if (!affine)
    return "";
  ArrayRef<int64_t> normalized = ArrayRef<int64_t>(x.shape).drop_front(axis);
  if (affine->kind != x.kind || ArrayRef<int64_t>(affine->shape) != normalized)
    return std::string(what) + " " + affine->typeString() +
           " does not match the normalised dimensions " +
           formatShape(normalized) + " of the input " + x.typeString();
  return "";
}

/// What layer_norm and rms_norm check: a float input, an axis in
/// [0, rank], and affine operands shaped like the normalised dimensions.
std::string checkNormOperands(const Tensor &x, int64_t axis,
                              const Tensor *scale, const Tensor *bias) {
  if (std::string err = requireFloat(x, "input"); !err.empty())
    return err;
  if (axis < 0 || axis > x.rank())
    return "axis " + std::to_string(axis) + " is out of range for rank " +
           std::to_string(x.rank());
  if (std::string err = checkAffine(x, scale, axis, "scale"); !err.empty())
    return err;
  return checkAffine(x, bias, axis, "bias");
}

} // namespace

std::string softmax(const Tensor &x, int64_t axis, bool log, Tensor &out) {
  if (std::string err = requireFloat(x, "operand"); !err.empty())
    return err;
  if (std::string err = checkDim(axis, x.rank(), "axis"); !err.empty())
    return err;
  out = Tensor::zeros(x.kind, x.shape);
  ArrayRef<int64_t> shape = x.shape;
  int64_t outer = product(shape.take_front(axis));
  int64_t n = shape[axis];
  int64_t inner = product(shape.drop_front(axis + 1));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      int64_t base = o * n * inner + i;
      double max = -std::numeric_limits<double>::infinity();
      bool nan = false;
      for (int64_t j = 0; j < n; ++j) {
        double v = x.floats[base + j * inner];
        nan |= std::isnan(v);
        max = v > max ? v : max;
      }
      if (nan)
        max = std::numeric_limits<double>::quiet_NaN();
      double sum = 0.0;
      for (int64_t j = 0; j < n; ++j)
        sum += std::exp(x.floats[base + j * inner] - max);
      double logSum = std::log(sum);
      for (int64_t j = 0; j < n; ++j) {
        double v = x.floats[base + j * inner] - max;
        out.floats[base + j * inner] =
            roundTo(x.kind, log ? v - logSum : std::exp(v) / sum);
      }
    }
  }
  return "";
}

std::string layerNorm(const Tensor &x, const Tensor *scale, const Tensor *bias,
                      int64_t axis, double epsilon, Tensor &out) {
  if (std::string err = checkNormOperands(x, axis, scale, bias); !err.empty())
    return err;
  out = Tensor::zeros(x.kind, x.shape);
  int64_t n = product(ArrayRef<int64_t>(x.shape).drop_front(axis));
  int64_t rows = n ? x.size() / n : 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = x.floats.data() + r * n;
    double sum = 0.0;
    for (int64_t j = 0; j < n; ++j)
      sum += row[j];
    double mean = sum / n;
    double squares = 0.0;
    for (int64_t j = 0; j < n; ++j)
      squares += (row[j] - mean) * (row[j] - mean);
    double rstd = 1.0 / std::sqrt(squares / n + epsilon);
    for (int64_t j = 0; j < n; ++j) {
      double y = (row[j] - mean) * rstd;
      if (scale)
        y *= scale->floats[j];
      if (bias)
        y += bias->floats[j];
      out.floats[r * n + j] = roundTo(x.kind, y);
    }
  }
  return "";
}

std::string rmsNorm(const Tensor &x, const Tensor *scale, int64_t axis,
                    double epsilon, Tensor &out) {
  if (std::string err = checkNormOperands(x, axis, scale, nullptr);
      !err.empty())
    return err;
  out = Tensor::zeros(x.kind, x.shape);
  int64_t n = product(ArrayRef<int64_t>(x.shape).drop_front(axis));
  int64_t rows = n ? x.size() / n : 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = x.floats.data() + r * n;
    double squares = 0.0;
    for (int64_t j = 0; j < n; ++j)
      squares += static_cast<double>(row[j]) * row[j];
    double rms = 1.0 / std::sqrt(squares / n + epsilon);
    for (int64_t j = 0; j < n; ++j) {
      double y = row[j] * rms;
      if (scale)
        y *= scale->floats[j];
      out.floats[r * n + j] = roundTo(x.kind, y);
    }
  }
  return "";
}

std::string normGrad(const Tensor &x, const Tensor &g, const Tensor *scale,
                     int64_t axis, double epsilon, bool rms,
                     SmallVectorImpl<Tensor> &results) {
  if (std::string err = checkNormOperands(x, axis, scale, nullptr);
      !err.empty())
    return err;
  if (g.kind != x.kind || g.shape != x.shape)
    return "cotangent " + g.typeString() + " does not match the input " +
           x.typeString();
  SmallVector<int64_t> normalized(ArrayRef<int64_t>(x.shape).drop_front(axis));
  Tensor dx = Tensor::zeros(x.kind, x.shape);
  Tensor dscale = Tensor::zeros(x.kind, normalized);
  Tensor dbias = Tensor::zeros(x.kind, normalized);
  int64_t n = product(normalized);
  int64_t rows = n ? x.size() / n : 0;
  std::vector<double> xhat(n), gh(n), scaleSum(n, 0.0), biasSum(n, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = x.floats.data() + r * n;
    const float *grow = g.floats.data() + r * n;
    double mean = 0.0;
    if (!rms) {
      for (int64_t j = 0; j < n; ++j)
        mean += row[j];
      mean /= n;
    }
    double squares = 0.0;
    for (int64_t j = 0; j < n; ++j)
      squares += (row[j] - mean) * (row[j] - mean);
    double rstd = 1.0 / std::sqrt(squares / n + epsilon);
    double ghMean = 0.0, ghXhatMean = 0.0;
    for (int64_t j = 0; j < n; ++j) {
      xhat[j] = (row[j] - mean) * rstd;
      gh[j] = scale ? grow[j] * static_cast<double>(scale->floats[j])
                    : grow[j];
      ghMean += gh[j];
      ghXhatMean += gh[j] * xhat[j];
      scaleSum[j] += grow[j] * xhat[j];
      biasSum[j] += grow[j];
    }
    ghMean = rms ? 0.0 : ghMean / n;
    ghXhatMean /= n;
    for (int64_t j = 0; j < n; ++j)
      dx.floats[r * n + j] =
          roundTo(x.kind, rstd * (gh[j] - ghMean - xhat[j] * ghXhatMean));
  }
  for (int64_t j = 0; j < n; ++j) {
    dscale.floats[j] = roundTo(x.kind, scaleSum[j]);
    dbias.floats[j] = roundTo(x.kind, biasSum[j]);
  }
  results.push_back(std::move(dx));
  results.push_back(std::move(dscale));
  results.push_back(std::move(dbias));
  return "";
}

std::string crossEntropy(const Tensor &logits, const Tensor &labels,
                         LossKind reduction, std::optional<int64_t> ignoreIndex,
                         Tensor &out) {
  if (std::string err = requireFloat(logits, "logits"); !err.empty())
    return err;
  if (labels.isFloat() || labels.kind == ElementKind::I1)
    return std::string("expects integer labels, got ") +
           getKindName(labels.kind);
  if (logits.rank() < 1)
    return "logits need a class dimension (rank >= 1)";
  ArrayRef<int64_t> leading = ArrayRef<int64_t>(logits.shape).drop_back();
  if (ArrayRef<int64_t>(labels.shape) != leading)
    return "labels of shape " + formatShape(labels.shape) +
           " must have the shape of the logits without their class "
           "dimension, " +
           formatShape(leading);
  int64_t classes = logits.shape.back();
  int64_t samples = labels.size();
  std::vector<double> losses(samples, 0.0);
  int64_t counted = 0;
  for (int64_t s = 0; s < samples; ++s) {
    int64_t label = labels.ints[s];
    if (ignoreIndex && label == *ignoreIndex)
      continue;
    if (label < 0 || label >= classes)
      return "label " + std::to_string(label) + " of sample " +
             std::to_string(s) + " is out of range [0, " +
             std::to_string(classes) + ")" +
             (ignoreIndex ? " and is not the ignore_index " +
                                std::to_string(*ignoreIndex)
                          : std::string());
    const float *row = logits.floats.data() + s * classes;
    double max = -std::numeric_limits<double>::infinity();
    bool nan = false;
    for (int64_t c = 0; c < classes; ++c) {
      nan |= std::isnan(row[c]);
      max = row[c] > max ? row[c] : max;
    }
    if (nan)
      max = std::numeric_limits<double>::quiet_NaN();
    double sum = 0.0;
    for (int64_t c = 0; c < classes; ++c)
      sum += std::exp(row[c] - max);
    losses[s] = max + std::log(sum) - row[label];
    ++counted;
  }
  if (reduction == LossKind::None) {
    out = Tensor::zeros(logits.kind, leading);
    for (int64_t s = 0; s < samples; ++s)
      out.floats[s] = roundTo(logits.kind, losses[s]);
    return "";
  }
  double total = 0.0;
  for (double l : losses)
    total += l;
  out = Tensor::zeros(logits.kind, {});
  // Mean over no counted sample is 0/0 = NaN, as in PyTorch.
  out.floats[0] = roundTo(logits.kind, reduction == LossKind::Mean
                                           ? total / static_cast<double>(counted)
                                           : total);
  return "";
}

} // namespace interp
} // namespace loom
} // namespace mlir

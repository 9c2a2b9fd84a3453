//===- Print.cpp - Printing tensors like NumPy ----------------------------===//

#include "loom/Interpreter/Print.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace mlir {
namespace loom {
namespace interp {

std::string formatFloat(float value, ElementKind kind) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  // The fewest significant digits that read back as `value`.
  char buffer[32];
  for (int digits = 1; digits <= 9; ++digits) {
    std::snprintf(buffer, sizeof(buffer), "%.*e", digits - 1,
                  static_cast<double>(value));
    if (roundTo(kind, std::strtod(buffer, nullptr)) == value)
      break;
  }
  double magnitude = std::fabs(static_cast<double>(value));
  if (magnitude != 0.0 && (magnitude < 1e-4 || magnitude >= 1e16))
    return buffer; // Scientific, like NumPy: "1e-05", "1.5e+20".

  // Positional, like NumPy: "10.", "0.001", "-2.5".
  std::string text(buffer);
  size_t e = text.find('e');
  int exponent = std::atoi(text.c_str() + e + 1);
  std::string sign = text[0] == '-' ? "-" : "";
  std::string significand;
  for (char c : text.substr(0, e))
    if (c >= '0' && c <= '9')
      significand += c;
  if (exponent < 0)
    return sign + "0." + std::string(-exponent - 1, '0') + significand;
  size_t integerDigits = static_cast<size_t>(exponent) + 1;
  if (significand.size() < integerDigits)
    significand.append(integerDigits - significand.size(), '0');
  return sign + significand.substr(0, integerDigits) + "." +
         significand.substr(integerDigits);
}

namespace {

constexpr int64_t kEdgeItems = 3;

class Printer {
public:
  Printer(llvm::raw_ostream &os, const Tensor &t, bool summarize)
      : os(os), t(t), summarize(summarize), strides(computeStrides(t.shape)) {}

  void print() {
    if (t.rank() == 0)
      element(0);
    else
      array(0, 0);
  }

private:
  void element(int64_t i) {
    if (t.isFloat())
      os << formatFloat(t.floats[i], t.kind);
    else if (t.kind == ElementKind::I1)
      os << (t.ints[i] ? "True" : "False");
    else
      os << t.ints[i];
  }

  void array(int64_t dim, int64_t offset) {
    os << '[';
    int64_t size = t.shape[dim];
    bool last = dim + 1 == t.rank();
    // Between sub-arrays: a newline per remaining dimension, then indent.
    std::string separator =
        last ? ", "
             : "," + std::string(t.rank() - dim - 1, '\n') +
                   std::string(dim + 1, ' ');
    bool elide = summarize && size > 2 * kEdgeItems;
    for (int64_t i = 0; i < size; ++i) {
      if (elide && i == kEdgeItems) {
        os << "..." << separator;
        i = size - kEdgeItems;
      }
      if (last)
        element(offset + i * strides[dim]);
      else
        array(dim + 1, offset + i * strides[dim]);
      if (i + 1 < size)
        os << separator;
    }
    os << ']';
  }

  llvm::raw_ostream &os;
  const Tensor &t;
  bool summarize;
  SmallVector<int64_t> strides;
};

} // namespace

void printTensor(llvm::raw_ostream &os, const Tensor &tensor,
                 int64_t threshold) {
  Printer(os, tensor, tensor.size() > threshold).print();
  os << '\n';
}

} // namespace interp
} // namespace loom
} // namespace mlir

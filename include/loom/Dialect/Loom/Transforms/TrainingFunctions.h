//===- TrainingFunctions.h - Names of the training functions ----*- C++ -*-===//
//
// The one place that says how the functions of a training step are named
// (docs/training.md): a model's forward function @F becomes
//
//   @F_grad             loom-autodiff: loss and gradients
//   @F_stage<k>         loom-pipeline-split: stage k's part of @F
//   @F_stage<k>_grad    loom-pipeline-schedule: stage k's program
//   @G_step             loom-optimizer, for a gradient function @G_grad
//   @F_stage<k>_vjp     loom-pipeline-schedule (internal, removed again)
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_TRANSFORMS_TRAININGFUNCTIONS_H
#define LOOM_DIALECT_LOOM_TRANSFORMS_TRAININGFUNCTIONS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir {
namespace loom {
namespace names {

constexpr llvm::StringLiteral kGradSuffix = "_grad";
constexpr llvm::StringLiteral kStepSuffix = "_step";
constexpr llvm::StringLiteral kVjpSuffix = "_vjp";

/// @F -> @F_grad.
inline std::string gradFunction(llvm::StringRef forward) {
  return (forward + kGradSuffix).str();
}
/// @F, k -> @F_stage<k>.
inline std::string stageFunction(llvm::StringRef forward, int64_t stage) {
  return (forward + "_stage" + llvm::Twine(stage)).str();
}
/// @F, k -> @F_stage<k>_grad.
inline std::string stageGradFunction(llvm::StringRef forward, int64_t stage) {
  return gradFunction(stageFunction(forward, stage));
}
/// @F_stage<k> -> @F_stage<k>_vjp.
inline std::string vjpFunction(llvm::StringRef stage) {
  return (stage + kVjpSuffix).str();
}
/// Whether `name` names a gradient function (@G_grad).
inline bool isGradFunction(llvm::StringRef name) {
  return name.size() > kGradSuffix.size() && name.ends_with(kGradSuffix);
}
/// @G_grad -> @G; std::nullopt for a name that is not a gradient function's.
inline std::optional<llvm::StringRef> forwardOf(llvm::StringRef grad) {
  if (!isGradFunction(grad))
    return std::nullopt;
  return grad.drop_back(kGradSuffix.size());
}
/// @G_grad -> @G_step (the optimizer's step); std::nullopt for a name that
/// is not a gradient function's.
inline std::optional<std::string> stepFunction(llvm::StringRef grad) {
  std::optional<llvm::StringRef> forward = forwardOf(grad);
  if (!forward)
    return std::nullopt;
  return (*forward + kStepSuffix).str();
}
/// Whether `name` names a training step (@G_step).
inline bool isStepFunction(llvm::StringRef name) {
  return name.size() > kStepSuffix.size() && name.ends_with(kStepSuffix);
}

} // namespace names
} // namespace loom
} // namespace mlir

#endif // LOOM_DIALECT_LOOM_TRANSFORMS_TRAININGFUNCTIONS_H

//===- TrainingEnums.cpp - Choices of a training step ---------------------===//

#include "loom/Dialect/Loom/Transforms/TrainingEnums.h"

#include "loom/Dialect/Loom/Transforms/TrainingEnums.cpp.inc"

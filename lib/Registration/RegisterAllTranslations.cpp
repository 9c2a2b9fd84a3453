//===- RegisterAllTranslations.cpp - loom-translate's translations --------===//

#include "loom/InitAllTranslations.h"

#include "loom/Import/Onnx.h"
#include "loom/Import/StableHLO.h"
#include "loom/Target/Cpp/EmitCpp.h"
#include "loom/Target/Cuda/EmitCuda.h"

void mlir::loom::registerAllTranslations() {
  registerOnnxTranslation();
  registerStableHLOTranslation();
  registerToCppTranslation();
  registerToCudaTranslation();
}

//===- Model.cpp - Import a model file of any supported kind --------------===//

#include "loom/Import/Model.h"

#include "loom/Import/Onnx.h"
#include "loom/Import/StableHLO.h"
#include "loom/Dialect/Loom/IR/LoomDialect.h"

#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

OwningOpRef<ModuleOp> mlir::loom::importModel(llvm::StringRef path,
                                              const ModelImportOptions &options,
                                              MLIRContext *context,
                                              llvm::SourceMgr &sourceMgr,
                                              llvm::StringRef tool) {
  auto error = [&](const llvm::Twine &message) {
    llvm::errs() << tool << ": error: " << message << "\n";
    return nullptr;
  };
  std::string message;
  std::unique_ptr<llvm::MemoryBuffer> input = openInputFile(path, &message);
  if (!input)
    return error(message);
  if (path.ends_with(".onnx")) {
    if (options.hasWeightsFile)
      return error("--weights is for .mlir models; an ONNX model carries its "
                   "weights");
    OnnxImportOptions onnx;
    onnx.weightsOut = options.weightsOut;
    onnx.trainable = options.trainable;
    onnx.frozen = options.frozen;
    onnx.modelDir = llvm::sys::path::parent_path(path).str();
    onnx.modelFile = path.str();
    onnx.batch = options.batch;
    llvm::StringRef bytes = input->getBuffer();
    sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
    return importOnnx(bytes, path, onnx, context);
  }
  if (!options.trainable.empty() || !options.frozen.empty())
    return error("--trainable/--frozen are for ONNX models; mark parameters "
                 "of a .mlir model with loom.param (or loom-translate "
                 "--trainable)");
  bool isStableHLO = input->getBuffer().contains("stablehlo.");
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  if (isStableHLO)
    return importStableHLO(sourceMgr, context, options.batch, options.dims);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, context);
  if (module && options.batch > 0)
    bindLoomBatch(*module, options.batch);
  return module;
}

void mlir::loom::bindLoomBatch(ModuleOp module, int64_t batch) {
  func::FuncOp entry = findEntryFunction(module);
  if (!entry || entry.isExternal())
    return;
  SmallVector<Type> inputs(entry.getArgumentTypes());
  for (auto [i, input] : llvm::enumerate(inputs)) {
    auto type = dyn_cast<RankedTensorType>(input);
    if (!type || type.getRank() == 0 || !type.isDynamicDim(0) ||
        entry.getArgAttr(i, LoomDialect::getParamAttrName()))
      continue;
    SmallVector<int64_t> shape(type.getShape());
    shape[0] = batch;
    input = RankedTensorType::get(shape, type.getElementType(),
                                  type.getEncoding());
    entry.getArgument(i).setType(input);
  }
  entry.setFunctionType(FunctionType::get(module.getContext(), inputs,
                                          entry.getResultTypes()));
}

func::FuncOp mlir::loom::findEntryFunction(ModuleOp module) {
  func::FuncOp entry;
  for (func::FuncOp f : module.getOps<func::FuncOp>())
    if (f.isPublic() && (!entry || f.getName() == "main"))
      entry = f;
  return entry;
}

//===- TrainingEnums.td - Choices of a training step -------*- tablegen -*-===//
//
// The enumerated choices of a training step, shared by the passes' options
// (as cl::values), the typed TrainingOptions of lib/Pipelines and the plan
// JSON (through the generated stringify/symbolize functions).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_TRANSFORMS_TRAININGENUMS_TD
#define LOOM_DIALECT_LOOM_TRANSFORMS_TRAININGENUMS_TD

include "mlir/IR/EnumAttr.td"

def Loom_OptimizerKind : I32EnumAttr<"OptimizerKind",
    "the optimizer of a training step (torch.optim's formulas)", [
      I32EnumAttrCase<"sgd", 0>, I32EnumAttrCase<"adam", 1>,
      I32EnumAttrCase<"adamw", 2>]> {
  let cppNamespace = "::mlir::loom";
  let genSpecializedAttr = 0;
}

def Loom_LrSchedule : I32EnumAttr<"LrSchedule",
    "the learning-rate schedule", [
      I32EnumAttrCase<"constant", 0>, I32EnumAttrCase<"warmup", 1>,
      I32EnumAttrCase<"cosine", 2>]> {
  let cppNamespace = "::mlir::loom";
  let genSpecializedAttr = 0;
}

def Loom_PipelineSchedule : I32EnumAttr<"PipelineScheduleKind",
    "the order of micro-batches on the pipeline stages", [
      I32EnumAttrCase<"OneFOneB", 0, "1f1b">,
      I32EnumAttrCase<"GPipe", 1, "gpipe">]> {
  let cppNamespace = "::mlir::loom";
  let genSpecializedAttr = 0;
}

def Loom_Target : I32EnumAttr<"Target", "the device the program runs on", [
      I32EnumAttrCase<"cpu", 0>, I32EnumAttrCase<"cuda", 1>]> {
  let cppNamespace = "::mlir::loom";
  let genSpecializedAttr = 0;
}

def Loom_Precision : I32EnumAttr<"Precision",
    "the arithmetic of the training step", [
      I32EnumAttrCase<"f32", 0>, I32EnumAttrCase<"bf16", 1>]> {
  let cppNamespace = "::mlir::loom";
  let genSpecializedAttr = 0;
}

def Loom_RecomputePolicy : I32EnumAttr<"RecomputePolicy",
    "which forward activations the backward pass recomputes", [
      I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"full", 1>,
      I32EnumAttrCase<"selective", 2>,
      I32EnumAttrCase<"CommFree", 3, "comm-free">,
      I32EnumAttrCase<"automatic", 4, "auto">]> {
  let cppNamespace = "::mlir::loom";
  let genSpecializedAttr = 0;
}

def Loom_SwapPolicy : I32EnumAttr<"SwapPolicy",
    "where activations are offloaded when a stage runs out of memory", [
      I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"host", 1>,
      I32EnumAttrCase<"peer", 2>, I32EnumAttrCase<"automatic", 3, "auto">,
      I32EnumAttrCase<"balance", 4>]> {
  let cppNamespace = "::mlir::loom";
  let genSpecializedAttr = 0;
}

def Loom_Switch : I32EnumAttr<"Switch", "an on/off/auto choice", [
      I32EnumAttrCase<"off", 0>, I32EnumAttrCase<"on", 1>,
      I32EnumAttrCase<"automatic", 2, "auto">]> {
  let cppNamespace = "::mlir::loom";
  let genSpecializedAttr = 0;
}

#endif // LOOM_DIALECT_LOOM_TRANSFORMS_TRAININGENUMS_TD

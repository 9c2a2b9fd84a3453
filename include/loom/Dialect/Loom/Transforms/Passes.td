//===- Passes.td - Passes over the loom dialect ------------*- tablegen -*-===//

#ifndef LOOM_DIALECT_LOOM_TRANSFORMS_PASSES_TD
#define LOOM_DIALECT_LOOM_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def LoomShapeInference : Pass<"loom-shape-inference", "ModuleOp"> {
  let summary = "Refine tensor shapes through functions and calls";
  let description = [{
    Replaces every result type that is less precise than the type its op
    infers (a `?` where the operands determine the size) by the inferred
    type, in program order, then refines function result types from their
    `func.return` operands and call results from their callees, until
    nothing changes.

    `arg-shapes` first binds dynamic dimensions of function arguments, e.g.
    `arg-shapes=x=8x784,labels=8`. An argument is named by its `loom.name`
    attribute or as `argN`; the shape must be compatible with the declared
    type. This is how a model imported with a symbolic batch size is
    specialised.

    Ops that state their result type (`reshape`, `broadcast`, `convert`,
    `iota`) are refined from the other side: where an op requires one shape
    for all its operands and results (elementwise ops), every value involved
    takes the most precise of their shapes, so `broadcast %b : tensor<256xf32>
    -> tensor<?x256xf32>` feeding an add with a `tensor<32x256xf32>` operand
    becomes `-> tensor<32x256xf32>`. Function arguments change only through
    `arg-shapes`. A refinement that contradicts a declared type is an error
    at that op. Sweeps repeat until nothing changes. Example:

    ```mlir
    %0 = "loom.dot_general"(%a, %b) <{lhs_contracting_dims = array<i64: 1>,
         rhs_contracting_dims = array<i64: 0>}>
         : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<?x?xf32>
    ```
    becomes `... -> tensor<8x4xf32>`.
  }];
  let options = [
    ListOption<"argShapes", "arg-shapes", "std::string",
               "Bind function argument shapes: NAME=DxDx... (NAME is the "
               "argument's loom.name or argN)">,
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "Apply arg-shapes to this function only (default: every "
           "function that has a matching argument)">,
  ];
}

def LoomReportCost : Pass<"loom-report-cost", "ModuleOp"> {
  let summary = "Print each function's flops, bytes and parameter count as JSON";
  let description = [{
    Sums `CostInterface` over every op of each function and counts the
    elements of its `loom.param` arguments, then prints one JSON object to
    stdout (or to `output`):

    ```json
    {"functions": [{"name": "main", "ops": 12, "flops": 1234,
      "bytes": 5678, "params": 910, "param_bytes": 3640,
      "unknown_cost_ops": 0} ]}
    ```

    Ops whose cost depends on a dynamic shape are counted in
    `unknown_cost_ops`. The IR is not changed.
  }];
  let options = [
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "Where to write the JSON report (- for stdout)">,
  ];
}

#endif // LOOM_DIALECT_LOOM_TRANSFORMS_PASSES_TD

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

def LoomAutodiff : Pass<"loom-autodiff", "ModuleOp"> {
  let summary = "Build the gradient function @F_grad of a loss function @F";
  let description = [{
    Reverse-mode differentiation of `@F` (`function`) with respect to every
    float argument marked `loom.param` and every argument named in `wrt`
    (by `loom.name` or as `argN`). Adds `@F_grad`, right after `@F`, with
    `@F`'s arguments and argument attributes and the results

    ```
    (loss {loom.name = "loss"},
     d loss / d p_i {loom.name = "grad.<name of p_i>", loom.grad_of = i}, ...)
    ```

    one gradient per differentiated argument, in argument order (`<name>`
    is the argument's `loom.name`, else `argN`). `@F` is left unchanged.

    The loss is the result of `@F` named `loss` (by `loom.name`), or its
    only result when `loss` is empty; it must be a rank-0 float tensor.
    The body of `@F_grad` is the forward ops of `@F` that the loss needs, in
    their order, then the backward ops: each op's vector-Jacobian product
    comes from its `VJPInterface`, visited in reverse order; a value used
    several times gets the sum of its cotangents (`loom.add`, in use order).
    The output is deterministic.

    Gradients flow only into operands the op reports as differentiable
    (`VJPInterface::isOperandDifferentiable`: integer and boolean values
    carry none). It is an error, at the op, naming it and the parameter,
    when a parameter reaches the loss only through such operands (e.g.
    through a `compare`, a float-to-integer `convert` or `gather` indices).
    A parameter that does not reach the loss gets a zero gradient and a
    warning. Every op between the parameters and the loss must implement
    `VJPInterface` and have static shapes (run `loom-shape-inference`
    first); `func.call` is rejected (run `inline` first).

    ```mlir
    func.func @main(%w: tensor<4xf32> {loom.param, loom.name = "w"},
                    %x: tensor<4xf32>) -> tensor<f32> {
      %0 = loom.mul %w, %x : tensor<4xf32>
      %1 = loom.reduce_sum %0, dims = [0] : tensor<4xf32> -> tensor<f32>
      return %1 : tensor<f32>
    }
    ```
    gets `@main_grad(...) -> (tensor<f32> {loom.name = "loss"},
    tensor<4xf32> {loom.name = "grad.w", loom.grad_of = 0 : i64})`.
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect",
                           "::mlir::func::FuncDialect"];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"main\"",
           "The function to differentiate">,
    Option<"loss", "loss", "std::string", /*default=*/"\"\"",
           "The loom.name of the loss result (default: the only result)">,
    ListOption<"wrt", "wrt", "std::string",
               "More arguments to differentiate with respect to, by "
               "loom.name or argN (loom.param arguments always are)">,
  ];
}

#endif // LOOM_DIALECT_LOOM_TRANSFORMS_PASSES_TD

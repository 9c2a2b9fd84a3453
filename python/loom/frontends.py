"""Importing PyTorch modules and JAX functions into Loom.

Both go through the exchange formats and `loom-translate`:

* `from_torch`: PyTorch's ONNX exporter (the TorchScript path, with constant
  folding off and training mode on, so parameters stay named initializers
  and are not folded into constants; or the dynamo path, unoptimised), then
  `loom-translate --import-onnx`; HuggingFace models are taken as they are
  (inputs by keyword, the output's `.loss`);
* `from_jax`: `jax.jit(fn).lower(...)` to StableHLO text, then
  `loom-translate --import-stablehlo`.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ._tools import run_tool
from .module import Module


def _workdir(workdir: str | os.PathLike | None) -> Path:
    path = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="loom-"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def _list_flag(flag: str, names: Sequence[str] | str | None) -> list[str]:
    if not names:
        return []
    if isinstance(names, str):
        names = [names]
    return [f"--{flag}={','.join(names)}"]


def _batch_of(leaves) -> int | None:
    """Dimension 0 of the first input that has one: the example batch."""
    return next((int(x.shape[0]) for x in leaves if len(getattr(x, "shape", ())) >= 1),
                None)


def _resized(x, batch: int, rows: int):
    """`x` with `rows` rows (the example's repeated, or the first ones) when
    its dimension 0 is the example `batch`; any other input as it is."""
    import numpy as np
    if len(getattr(x, "shape", ())) < 1 or x.shape[0] != batch:
        return x
    index = np.arange(rows) % batch
    try:
        import torch
        if isinstance(x, torch.Tensor):
            return x[torch.as_tensor(index)]
    except ImportError:
        pass
    return np.asarray(x)[index]


def from_torch(module, example_args: Sequence[Any] | Mapping[str, Any] | None = None, *,
               loss: Callable | None = None,
               loss_args: Sequence[Any] = (), input_names: Sequence[str] | None = None,
               trainable: Sequence[str] | None = None, frozen: Sequence[str] | None = None,
               opset: int = 18, exporter: str | None = None,
               workdir: str | os.PathLike | None = None) -> Module:
    """Imports a `torch.nn.Module` whose forward pass (with `loss`) gives the loss.

    `module` may also be a `torch.export.ExportedProgram` (what
    `torch.export.export(model, args, kwargs)` returns): its module is
    imported through the dynamo exporter, with the program's example inputs
    unless `example_args` are given, and the parameters keep the original
    model's names.

    * `example_args`: the forward pass's inputs; their shapes and dtypes
      become the model's static input types. A mapping passes them by
      keyword and names the inputs after its keys; this is how a
      HuggingFace model is imported as it is:

          loom.from_torch(GPT2LMHeadModel(config),
                          {"input_ids": ids, "labels": labels})

      The loss is then the output's `loss` (a `ModelOutput`, a dict, or
      the output itself when it is a scalar tensor). Parameters keep the
      model's own names (`transformer.h.0.attn.c_attn.weight`). A model
      whose scaled-dot-product attention the exporter cannot convert
      (grouped-query `enable_gqa`) is exported with its eager attention,
      the same computation, with a warning.
    * `loss`: when given, the imported function is
      `loss(module(*example_args), *loss_args)`; otherwise `module` must
      return the loss itself.
    * `input_names`: names of the function arguments (default: the forward
      signature's parameter names, then `target0`, ... for `loss_args`).
    * `trainable` / `frozen`: parameter names or regexes (default: every
      floating-point parameter is trained; the module's buffers that the
      exporter writes as initializers, such as rotary frequency tables,
      are imported as constants: `loom-translate --constants`).
    * `exporter`: "torchscript" (`torch.onnx.export(dynamo=False)`, the
      default for modules) or "dynamo" (`dynamo=True`, PyTorch's default
      exporter since 2.9, through `torch.export`; needs the `onnxscript`
      package; the default and only choice for an `ExportedProgram`).
    * `workdir`: where `model.onnx`, `model.mlir` and `model.safetensors`
      go (default: a new temporary directory).

    The module's batch is the example's (dimension 0 of the first input);
    `Module.compile(micro_batch=b)` exports again with the inputs of that
    batch resized to b rows (not for an `ExportedProgram`, whose shapes
    are fixed).

    Raises `loom.LoomError` with the importer's diagnostics on failure.
    """
    import torch

    retrace_args = dict(module=module, example_args=example_args, loss=loss,
                        loss_args=loss_args, input_names=input_names,
                        trainable=trainable, frozen=frozen, opset=opset,
                        exporter=exporter)
    if isinstance(module, torch.export.ExportedProgram):
        retrace_args = None
        if exporter not in (None, "dynamo"):
            raise ValueError("an ExportedProgram is imported through the dynamo "
                             f"exporter, not {exporter!r}")
        exporter = "dynamo"
        if example_args is None:
            args, kwargs = module.example_inputs or ((), {})
            if args and kwargs:
                raise ValueError("the ExportedProgram's example inputs mix "
                                 "positional and keyword arguments: pass "
                                 "example_args")
            example_args = dict(kwargs) if kwargs else tuple(args)
        module = module.module()
    if example_args is None:
        raise ValueError("example_args are needed (only an ExportedProgram "
                         "brings its own)")
    exporter = exporter or "torchscript"
    keywords = None
    if isinstance(example_args, Mapping):
        if loss is not None or loss_args:
            raise ValueError("keyword example inputs take the loss from the "
                             "model's output: pass no loss or loss_args")
        keywords = list(example_args)
        if input_names is None:
            input_names = keywords
        example_args = tuple(example_args.values())
    example_args = tuple(example_args)
    loss_args = tuple(loss_args)
    if keywords is not None:
        model = _KeywordLoss(module, keywords)
    else:
        model = module if loss is None else _WithLoss(module, loss, len(example_args))
    if input_names is None:
        input_names = _forward_arg_names(module, len(example_args))
        input_names += [f"target{i}" for i in range(len(loss_args))]
    input_names = list(input_names)
    if len(input_names) != len(example_args) + len(loss_args):
        raise ValueError(f"input_names has {len(input_names)} names for "
                         f"{len(example_args) + len(loss_args)} inputs")

    _warn_padding_rows(module)
    out = _workdir(workdir)
    onnx_path = out / "model.onnx"
    if exporter not in ("torchscript", "dynamo"):
        raise ValueError(f"exporter must be 'torchscript' or 'dynamo', got {exporter!r}")

    def export():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if exporter == "dynamo":
                # No graph optimisation: it could fold parameters into
                # constants; the importer folds what is constant itself.
                torch.onnx.export(model, example_args + loss_args, str(onnx_path),
                                  input_names=input_names, output_names=["loss"],
                                  dynamo=True, opset_version=opset, optimize=False,
                                  external_data=False, verbose=False)
                return
            torch.onnx.export(model, example_args + loss_args, str(onnx_path),
                              input_names=input_names, output_names=["loss"],
                              dynamo=False, opset_version=opset, export_params=True,
                              do_constant_folding=False,
                              training=torch.onnx.TrainingMode.TRAINING)
    try:
        export()
    except AssertionError as e:
        # The TorchScript exporter converts scaled_dot_product_attention
        # without grouped-query heads only; HuggingFace models compute the
        # same attention eagerly (repeat_kv, matmul, softmax) on request.
        if (exporter != "torchscript" or "enable_gqa" not in str(e)
                or not hasattr(module, "set_attn_implementation")):
            raise
        previous = getattr(module.config, "_attn_implementation", None)
        warnings.warn(f"{type(module).__name__}: the ONNX exporter cannot convert "
                      "grouped-query scaled_dot_product_attention; exporting the "
                      "model's eager attention (the same computation) instead",
                      stacklevel=2)
        module.set_attn_implementation("eager")
        try:
            export()
        finally:
            if previous:
                module.set_attn_implementation(previous)
    # Buffers (rotary tables, masks) and tensors the loss captures (class
    # weights) are not parameters: the exporters may write them as
    # initializers, which Loom would otherwise train; they are program
    # constants.
    buffers = _constant_initializers(module, onnx_path, trainable)
    mlir_path = out / "model.mlir"
    # With locations: the ONNX node names reach diagnostics and the compute
    # spans of `train --trace`.
    run_tool("loom-translate", ["--import-onnx", onnx_path, "-o", mlir_path,
                                "--mlir-print-debuginfo",
                                *_list_flag("trainable", trainable),
                                *_list_flag("frozen", frozen),
                                *_list_flag("constants", buffers)])
    result = Module(mlir_path.read_text(), out / "model.safetensors")
    result.batch = _batch_of(example_args + loss_args)
    if retrace_args is not None and result.batch is not None:
        def retrace(rows, r=retrace_args, batch=result.batch):
            args = r["example_args"]
            if isinstance(args, Mapping):
                args = {k: _resized(v, batch, rows) for k, v in args.items()}
            else:
                args = tuple(_resized(a, batch, rows) for a in args)
            return from_torch(**{**r, "example_args": args,
                                 "loss_args": tuple(_resized(a, batch, rows)
                                                    for a in r["loss_args"])},
                              workdir=out / f"batch{rows}")
        result._retrace = retrace
    return result


def _constant_initializers(module, onnx_path, trainable) -> list[str]:
    """The floating-point initializers of the export that are not
    parameters of `module` (its buffers, tensors a loss function captures,
    which the dynamo exporter lifts as `lifted_tensor_N`); none when the
    user chose the trainable set."""
    if trainable:
        return []
    import onnx
    from onnx import TensorProto
    floats = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16,
              TensorProto.DOUBLE}
    graph = onnx.load(str(onnx_path), load_external_data=False).graph
    params = {name for name, _ in module.named_parameters(remove_duplicate=False)}
    return sorted(init.name for init in graph.initializer
                  if init.data_type in floats and init.name not in params)


def _warn_padding_rows(module) -> None:
    """ONNX has no `padding_idx`: an exported embedding's padding row gets
    a gradient (and moves) wherever the ids hold it, where PyTorch keeps it
    fixed. Say so for each such table."""
    import torch
    for name, child in module.named_modules():
        if isinstance(child, torch.nn.Embedding) and child.padding_idx is not None:
            warnings.warn(f"{name or type(module).__name__}: nn.Embedding(padding_idx="
                          f"{child.padding_idx}) does not survive the ONNX export: Loom "
                          f"trains that row when the ids contain {child.padding_idx} "
                          "(PyTorch keeps it fixed); mask those positions out of the "
                          "data or the loss", stacklevel=3)


def _forward_arg_names(module, count: int) -> list[str]:
    try:
        params = list(inspect.signature(module.forward).parameters)
    except (TypeError, ValueError):
        params = []
    names = [p for p in params if p not in ("self",)][:count]
    names += [f"input{i}" for i in range(len(names), count)]
    return names


def _make_with_loss():
    import torch

    class WithLoss(torch.nn.Module):
        """`loss(module(*inputs), *targets)` as one module for the exporter.

        It registers the wrapped module's own children, parameters and
        buffers under their own names (the same objects, not copies), so
        exported initializers keep the names of `module.named_parameters()`.
        """

        def __init__(self, module, loss, num_inputs):
            super().__init__()
            for name, child in module.named_children():
                self.add_module(name, child)
            for name, p in module.named_parameters(recurse=False):
                self.register_parameter(name, p)
            for name, b in module.named_buffers(recurse=False):
                self.register_buffer(name, b)
            object.__setattr__(self, "_inner", module)
            self._loss = loss
            self._num_inputs = num_inputs

        def forward(self, *args):
            with self._direct_state_shared():
                out = self._inner(*args[:self._num_inputs])
            return self._loss(out, *args[self._num_inputs:])

        @contextlib.contextmanager
        def _direct_state_shared(self):
            """While the wrapped module runs, its own (non-child) parameters
            and buffers are looked up in this module's dictionaries, which
            hold the same tensors under the same names: torch.export swaps
            the tensors of the module it exports for traced ones there, and
            would otherwise see the wrapped module's originals as constants
            (`lifted_tensor_0`, losing the names)."""
            inner = self._inner
            saved = inner.__dict__["_parameters"], inner.__dict__["_buffers"]
            inner.__dict__["_parameters"] = self._parameters
            inner.__dict__["_buffers"] = self._buffers
            try:
                yield
            finally:
                inner.__dict__["_parameters"], inner.__dict__["_buffers"] = saved

    return WithLoss


def _WithLoss(module, loss, num_inputs):
    return _make_with_loss()(module, loss, num_inputs)


def _loss_of(output):
    """The loss in a model's output: `output.loss` (HuggingFace's
    ModelOutput), `output["loss"]`, or the output itself."""
    loss = getattr(output, "loss", None)
    if loss is None and isinstance(output, Mapping):
        loss = output.get("loss")
    if loss is None:
        loss = output
    if not hasattr(loss, "dim") or loss.dim() != 0:
        raise ValueError("the model's output has no scalar loss: call it with "
                         "its labels (e.g. {'input_ids': ..., 'labels': ...}) "
                         "or pass loss=")
    return loss


def _KeywordLoss(module, keywords):
    """`_loss_of(module(**dict(zip(keywords, inputs))))` as one module whose
    parameters keep the module's own names (see _make_with_loss)."""
    WithLoss = _make_with_loss()

    class KeywordLoss(WithLoss):
        def forward(self, *args):
            with self._direct_state_shared():
                return _loss_of(self._inner(**dict(zip(self._keywords, args))))

    wrapped = KeywordLoss(module, None, len(keywords))
    wrapped._keywords = list(keywords)
    return wrapped


def from_jax(fn: Callable, *example_args, params: Sequence[int] = (),
             arg_names: Sequence[str] | None = None,
             workdir: str | os.PathLike | None = None) -> Module:
    """Imports a JAX function: `jax.jit(fn).lower(*example_args)` as
    StableHLO text, then `loom-translate --import-stablehlo`.

    `fn` may also be a `jax.export.Exported` (or its `serialize()`d bytes),
    e.g. one exported with a symbolic batch (`jax.export.symbolic_shape`):
    it is lowered at the example arguments' shapes and its shapes refined
    by JAX (its shape assertions checked), so a shape-polymorphic export
    imports at any batch.

    * `example_args`: pytrees of arrays; every leaf becomes one function
      argument named after its path (`params.w1`, `x`, ...; Flax linen's
      `params.params.Dense_0.kernel`, an nnx.State's `state.fc1.kernel`).
    * `params`: positions of the arguments that hold trainable parameters;
      their leaves become `loom.param` arguments, and their values (the
      example's) are written to `workdir/model.safetensors` under the same
      names: the module's weights.
    * `arg_names`: names of the positional arguments (default: `fn`'s
      parameter names; `arg0`, `arg1`, ... where it has none, as an
      `Exported`).

    The module's batch is dimension 0 of the first leaf of the other
    arguments; `Module.compile(micro_batch=b)` traces again with the leaves
    of that batch resized to b rows.

    Raises `loom.LoomError` with the importer's diagnostics on failure.
    """
    import jax
    import numpy as np

    if isinstance(fn, (bytes, bytearray)):
        fn = jax.export.deserialize(bytearray(fn))
    exported = isinstance(fn, jax.export.Exported)
    names = []
    param_names = []
    weights = {}
    sig = (list(arg_names) if arg_names is not None
           else _positional_names(fn, len(example_args)))
    if len(sig) != len(example_args):
        raise ValueError(f"arg_names has {len(sig)} names for "
                         f"{len(example_args)} arguments")
    for i, arg in enumerate(example_args):
        leaves, _ = jax.tree_util.tree_flatten_with_path(arg)
        for path, leaf in leaves:
            name = sig[i] + "".join(_path_part(k) for k in _variable_path(path))
            names.append(name)
            if i in params:
                param_names.append(name)
                weights[name] = np.ascontiguousarray(np.asarray(leaf))
    # keep_unused: one StableHLO argument per leaf, even if fn ignores it.
    if exported:
        text = _refined_stablehlo(jax.jit(fn.call, keep_unused=True)
                                  .lower(*example_args))
    else:
        text = jax.jit(fn, keep_unused=True).lower(*example_args).as_text()
    out = _workdir(workdir)
    src = out / "model.stablehlo.mlir"
    src.write_text(text)
    mlir_path = out / "model.mlir"
    args = ["--import-stablehlo", src, "-o", mlir_path,
            f"--arg-names={','.join(names)}"]
    if param_names:
        args.append(f"--trainable={','.join(param_names)}")
    run_tool("loom-translate", args)
    if weights:
        from safetensors.numpy import save_file
        save_file(weights, str(out / "model.safetensors"))
    result = Module(mlir_path.read_text(),
                    out / "model.safetensors" if weights else None)
    data = [a for i, a in enumerate(example_args) if i not in params]
    result.batch = _batch_of(jax.tree_util.tree_leaves(data))
    if result.batch is not None:
        def retrace(rows, batch=result.batch):
            resized = [a if i in params else jax.tree_util.tree_map(
                lambda leaf: _resized(leaf, batch, rows), a)
                for i, a in enumerate(example_args)]
            return from_jax(fn, *resized, params=params, arg_names=sig,
                            workdir=out / f"batch{rows}")
        result._retrace = retrace
    return result


def _refined_stablehlo(lowered) -> str:
    """The StableHLO text of a lowered call of an `Exported`, its symbolic
    shapes refined to the call's static ones by JAX's own shape refinement
    (the step XLA runs before compiling such a module)."""
    try:
        from jax._src.interpreters.mlir import refine_polymorphic_shapes
    except ImportError as e:  # a JAX without it
        raise ValueError("this JAX has no shape refinement for exported "
                         "modules (jax._src.interpreters.mlir."
                         "refine_polymorphic_shapes); export the function "
                         "without symbolic shapes or pass the function "
                         "itself") from e
    return str(refine_polymorphic_shapes(lowered.compiler_ir("stablehlo")))


def _positional_names(fn: Callable, count: int) -> list[str]:
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        params = []
    params = params[:count]
    return params + [f"arg{i}" for i in range(len(params), count)]


def _variable_path(path):
    """A leaf's path without the `.value` that an nnx.Variable (Param) in an
    nnx.State adds: `state.fc1.kernel`, as the module names the parameter."""
    if path and getattr(path[-1], "name", None) == "value" and not hasattr(path[-1], "key"):
        return path[:-1]
    return path


def _path_part(key) -> str:
    for attr in ("key", "name", "idx"):
        if hasattr(key, attr):
            return f".{getattr(key, attr)}"
    return f".{key}"

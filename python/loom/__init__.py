"""Loom's Python frontend: import PyTorch and JAX models into Loom.

    import loom
    m = loom.from_torch(model, (x,), loss=F.cross_entropy, loss_args=(labels,))
    print(m.ir)                      # loom-dialect IR
    m = m.run_pass("--loom-shape-inference --canonicalize")
    m.save("model.mlir")             # and model.safetensors beside it

The package is pure Python over the built tools (see `loom._tools`).
"""

__version__ = "0.1.0"

from ._tools import LoomError, LoomWarning, find_tool
from .frontends import from_jax, from_torch
from .module import Module
from .training import Program, mpirun_command

__all__ = ["LoomError", "LoomWarning", "Module", "Program", "find_tool", "from_jax", "from_torch",
           "mpirun_command"]

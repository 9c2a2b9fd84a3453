# -*- Python -*-
# lit configuration of Loom's FileCheck suite.

import os
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "Loom"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.loom_obj_root, "test")
# Unit/ holds GoogleTest sources, python/ pytest files, bench/ benchmarks:
# other runners run those (see utils/run-tests.py).
config.excludes = ["Unit", "python", "bench", "CMakeLists.txt", "lit.cfg.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%loom_src", config.loom_src_root))

# make test-asan's build (utils/test-asan.sh): tests that cannot run under
# AddressSanitizer say `UNSUPPORTED: asan`.
if "-fsanitize=address" in getattr(config, "loom_cxx_flags", ""):
    config.available_features.add("asan")

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tools = [ToolSubst("loom-opt", unresolved="fatal"),
         ToolSubst("loom-translate", unresolved="fatal"),
         ToolSubst("loom-run", unresolved="fatal"),
         ToolSubst("loomc", unresolved="fatal")]
# The libFuzzer targets exist when clang++-22 was found at configure time.
if os.path.exists(os.path.join(config.loom_tools_dir, "loom-fuzz-onnx")):
    config.available_features.add("fuzzer")
    tools.append(ToolSubst("loom-fuzz-onnx", unresolved="fatal"))
    tools.append(ToolSubst("loom-fuzz-stablehlo", unresolved="fatal"))
llvm_config.add_tool_substitutions(tools, [config.loom_tools_dir])

# Tests that build their inputs with Python packages (onnx, torch, jax) use
# the project's environment; features say which packages are there.
import subprocess
venv_python = os.path.join(config.loom_src_root, ".venv", "bin", "python")
python = venv_python if os.path.exists(venv_python) else sys.executable
config.substitutions.append(("%loompy", python))
for module in ["onnx", "torch", "jax"]:
    if subprocess.call([python, "-c", f"import {module}"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0:
        config.available_features.add(module)
# Third-party conformance data lives beside the checkout (../shared, as on
# CI); tests that read it require the feature.
conformance = os.path.join(os.path.dirname(config.loom_src_root), "shared",
                           "conformance")
config.substitutions.append(("%conformance", conformance))
if os.path.isdir(conformance):
    config.available_features.add("conformance")

"""Finding and running Loom's command-line tools.

The frontend is pure Python over the built tools (`loom-translate`,
`loom-opt`). They are looked up, in order, in `$LOOM_BIN`, in
`$LOOM_BUILD_DIR/bin`, in the `build/bin` of the source tree this package
lives in (an editable install or a checkout), and on `$PATH`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Sequence


class LoomWarning(UserWarning):
    """A warning a Loom tool printed (e.g. loomc's about a large parameter
    that tensor parallelism left replicated)."""


class LoomError(RuntimeError):
    """A Loom tool failed; `diagnostics` holds what it printed."""

    def __init__(self, tool: str, diagnostics: str, returncode: int):
        self.tool = tool
        self.diagnostics = diagnostics.strip()
        self.returncode = returncode
        super().__init__(f"{tool} failed (exit {returncode}):\n{self.diagnostics}")


def _candidate_dirs() -> list[Path]:
    dirs = []
    if os.environ.get("LOOM_BIN"):
        dirs.append(Path(os.environ["LOOM_BIN"]))
    if os.environ.get("LOOM_BUILD_DIR"):
        dirs.append(Path(os.environ["LOOM_BUILD_DIR"]) / "bin")
    # python/loom/_tools.py -> repository root
    dirs.append(Path(__file__).resolve().parents[2] / "build" / "bin")
    return dirs


def find_tool(name: str) -> str:
    """The path of the Loom tool `name`; raises LoomError when missing."""
    for d in _candidate_dirs():
        if (d / name).is_file() and os.access(d / name, os.X_OK):
            return str(d / name)
    found = shutil.which(name)
    if found:
        return found
    searched = ", ".join(str(d) for d in _candidate_dirs())
    raise LoomError(name, f"cannot find {name} (searched {searched} and $PATH); "
                    "build Loom with `make build` or set LOOM_BIN", 127)


def run_tool(name: str, args: Sequence[str], input: str | None = None) -> str:
    """Runs a Loom tool and returns its stdout; raises LoomError with the
    diagnostics on failure."""
    proc = subprocess.run([find_tool(name), *map(str, args)], input=input,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise LoomError(name, proc.stderr or proc.stdout, proc.returncode)
    return proc.stdout

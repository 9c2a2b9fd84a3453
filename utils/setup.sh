#!/usr/bin/env bash
# One-step, idempotent setup: Debian packages, the Python environment (.venv)
# and the CMake/Ninja build. Each step is skipped when already done, so
# `make test` and `make demo` can run it every time.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${LOOM_BUILD_DIR:-$ROOT/build}"
VENV="$ROOT/.venv"
LLVM_PREFIX=/usr/lib/llvm-22
JOBS="${LOOM_JOBS:-2}"

say() { printf '[setup] %s\n' "$*" >&2; }

# --- 1. Debian packages --------------------------------------------------------
# Everything the build, the tests and the demo use. Keep this list complete:
# CI runs on a fresh machine with nothing pre-installed.
PACKAGES=(
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools  # LLVM/MLIR, FileCheck, lit
  cmake ninja-build ccache g++ make                        # build
  libgtest-dev                                             # C++ unit tests
  libdnnl-dev                                              # GEMM of the CPU runtime (cmake/LoomCpu.cmake)
  libopenblas-dev libopenblas0-openmp                      # GEMM of loom-run; the runtime's fallback
  openmpi-bin libopenmpi-dev                               # the runtime's communication (MPI)
  procps                                                   # pgrep: the killed-rank test
  iproute2 util-linux                                      # ip netns, tc, unshare: python -m loom.vcluster
  slurmctld slurmd slurm-client munge                      # srun: the one-machine Slurm test
  libonnx-dev libprotobuf-dev                              # ONNX importer
  libonnx-testdata                                         # ONNX backend node tests
  clang-22 libclang-rt-22-dev libomp-22-dev                # libFuzzer target; make test-asan (clang OpenMP)
  python3 python3-venv                                     # lit, the venv
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  say "installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# --- 2. Python environment -------------------------------------------------------
REQS="$ROOT/utils/requirements.txt"
STAMP="$VENV/.requirements.sha256"
want="$(sha256sum "$REQS" | cut -d' ' -f1)"
if [ ! -x "$VENV/bin/python" ]; then
  say "creating the Python environment in .venv"
  python3 -m venv "$VENV"
fi
if [ "$(cat "$STAMP" 2>/dev/null)" != "$want" ]; then
  say "installing Python packages from utils/requirements.txt"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$REQS"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e "$ROOT/python"
  echo "$want" > "$STAMP"
fi

# --- 3. Configure and build --------------------------------------------------------
if [ ! -f "$BUILD/build.ninja" ]; then
  say "configuring $BUILD"
  cmake -G Ninja -S "$ROOT" -B "$BUILD" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit" >"$BUILD.configure.log" 2>&1 || {
      cat "$BUILD.configure.log" >&2; exit 1; }
fi
say "building (ninja -j$JOBS)"
ninja -C "$BUILD" -j "$JOBS" all loom-doc

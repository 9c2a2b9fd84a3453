#!/usr/bin/env bash
# make test-asan: Loom built with clang-22's AddressSanitizer and
# UndefinedBehaviorSanitizer in build-asan/ (the tools, the runtime, the unit
# tests) and run:
#   1. the GoogleTest suites (compiler units and runtime);
#   2. the whole lit suite, with the sanitized loom-opt, loom-translate,
#      loom-run and loomc (leak checking on);
#   3. the hand-written MPI steps of test/Runtime on 1 and 2 ranks (progress
#      thread, --trace, --comm-stats, checkpoints, --resume=latest-valid);
#   4. a few small training runs compiled by the sanitized loomc, whose
#      emitted programs are built with the same sanitizers (LOOM_PROGRAM_FLAGS)
#      against the sanitized runtime: 1 rank, and dp, tp and pp under mpirun.
# Any sanitizer report fails the run (-fno-sanitize-recover, halt_on_error).
# Not part of `make test` (a clang build of the whole tree, about 30 minutes
# on two cores the first time; ccache makes later runs incremental).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build-asan"
PY="$ROOT/.venv/bin/python"
say() { printf '[test-asan] %s\n' "$*" >&2; }

"$ROOT/utils/setup.sh" >/dev/null   # packages (clang-22, libomp-22-dev), the venv

SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
# -O1 with line tables: readable reports at a fraction of -O2 -g's build time.
say "configuring $BUILD (clang-22, $SAN)"
cmake -G Ninja -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
  -DCMAKE_C_FLAGS="$SAN" -DCMAKE_CXX_FLAGS="$SAN" \
  -DCMAKE_C_FLAGS_RELEASE="-O1 -gline-tables-only" \
  -DCMAKE_CXX_FLAGS_RELEASE="-O1 -gline-tables-only" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DLOOM_PROGRAM_FLAGS="$SAN -O1" \
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit >"$BUILD.configure.log" 2>&1 || {
    cat "$BUILD.configure.log" >&2; exit 1; }
say "building (ninja -j${LOOM_JOBS:-2})"
ninja -C "$BUILD" -j "${LOOM_JOBS:-2}" all \
  test/Runtime/loom-test-comm-step test/Runtime/loom-test-linear-step

# Emitted programs are built by mpicxx (at -O1: -O3 with the sanitizers
# takes minutes per generated step): make it clang, whose sanitizer and
# OpenMP runtimes the sanitized LoomRuntime was built with.
export OMPI_CXX=clang++-22
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Leaks are checked in the compiler tools (lit). The MPI programs run without:
# Open MPI's own allocations at exit are not ours.
export LSAN_OPTIONS="suppressions=$ROOT/utils/lsan.supp:print_suppressions=0"
# allow_user_poisoning=0: LLVM's headers poison and unpoison their allocators'
# memory by hand when compiled with ASan, and Loom's sanitized code shares
# those inline functions with the uninstrumented libMLIR/libLLVM, so one side
# poisons what the other then uses (false use-after-poison reports). ASan's
# own checks of every access are unaffected.
ASAN_BASE=abort_on_error=1:allow_user_poisoning=0
export ASAN_OPTIONS=detect_leaks=1:$ASAN_BASE

say "1/4 unit tests"
"$BUILD/bin/LoomUnitTests" --gtest_brief=1
ASAN_OPTIONS=detect_leaks=0:$ASAN_BASE "$BUILD/bin/LoomRuntimeTests" --gtest_brief=1

say "2/4 the lit suite with the sanitized tools"
/usr/lib/llvm-22/bin/lit -s "$BUILD/test"

export ASAN_OPTIONS=detect_leaks=0:$ASAN_BASE
say "3/4 the runtime's MPI steps on 1 and 2 ranks"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$PY" - "$work" <<'PY'
import sys, numpy as np
from pathlib import Path
from safetensors.numpy import save_file
w = Path(sys.argv[1]); (w / "data").mkdir()
rng = np.random.default_rng(0)
x = rng.standard_normal((20, 4)).astype(np.float32)
np.save(w / "data" / "x.npy", x)
np.save(w / "data" / "y.npy", (x @ np.ones((4, 1), np.float32)).astype(np.float32))
save_file({"w": np.zeros((4, 1), np.float32), "b": np.zeros((1,), np.float32)},
          str(w / "weights.safetensors"))
PY
mpi=(mpirun --oversubscribe -x ASAN_OPTIONS -x UBSAN_OPTIONS)
[ "$(id -u)" -eq 0 ] && mpi+=(--allow-run-as-root)
for n in 1 2; do
  "${mpi[@]}" -np "$n" "$BUILD/test/Runtime/loom-test-comm-step" --data "$work/data" \
    --steps 2 --quiet --trace "$work/trace.json" --comm-stats "$work/stats.json"
  rm -rf "$work/ck"
  "${mpi[@]}" -np "$n" "$BUILD/test/Runtime/loom-test-linear-step" --data "$work/data" \
    --weights "$work/weights.safetensors" --steps 6 --checkpoint-dir "$work/ck" \
    --checkpoint-every 3 --log "$work/loss.csv" --quiet
  "${mpi[@]}" -np "$n" "$BUILD/test/Runtime/loom-test-linear-step" --data "$work/data" \
    --steps 9 --checkpoint-dir "$work/ck" --resume=latest-valid --log "$work/loss.csv" --quiet
done

say "4/4 training runs compiled by the sanitized loomc (1 rank; dp, tp, pp on MPI)"
# The parity tests themselves: PyTorch's losses are the reference, so a
# sanitizer run that computes something else fails here too.
LOOM_BUILD_DIR="$BUILD" PYTHONPATH="$ROOT/python" "$PY" -m pytest -q -p no:cacheprovider \
  "$ROOT/test/python/test_training.py::test_pytorch_training_parity" \
  "$ROOT/test/python/test_dp_tp_parallel.py::test_dp_tp_matches_single_device_and_pytorch" \
  "$ROOT/test/python/test_pipeline_parallel.py::test_pipeline_matches_single_device_and_pytorch[pp=2-4-1f1b]"
echo "test-asan: clean under ASan + UBSan (unit tests, lit suite, runtime steps on 1 and 2 ranks, compiled training runs)"

#!/usr/bin/env bash
# make test-asan: the runtime (lib/Runtime), its GoogleTest suite and the
# hand-written MPI steps of test/Runtime built with clang-22's AddressSanitizer
# and UndefinedBehaviorSanitizer in build-asan/, then run: the unit tests, and
# the Comm API check (progress thread, --trace, --comm-stats) and the linear
# step (training, checkpoints, resume) on 1 and 2 MPI ranks. Any report fails.
# Not part of `make test`. Not yet covered: the compiler tools, the lit suite
# and loomc-emitted programs.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build-asan"
"$ROOT/utils/setup.sh" >/dev/null   # packages and the venv
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -G Ninja -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit >"$BUILD.configure.log" 2>&1 || {
      cat "$BUILD.configure.log" >&2; exit 1; }
fi
ninja -C "$BUILD" -j "${LOOM_JOBS:-2}" bin/LoomRuntimeTests \
  test/Runtime/loom-test-comm-step test/Runtime/loom-test-linear-step
# Leak checking stays off: MPI's own allocations at exit are not ours.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
"$BUILD/bin/LoomRuntimeTests" --gtest_brief=1
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$ROOT/.venv/bin/python" - "$work" <<'PY'
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
echo "test-asan: the runtime is clean under ASan + UBSan (unit tests, 1 and 2 ranks)"

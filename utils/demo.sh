#!/usr/bin/env bash
# `make demo`: the bundled examples.
#  T. examples/train_gpt.py: the main job. A small GPT-style character model
#     from PyTorch, compiled by loomc into OUT/train for the mesh dp=2, tp=2,
#     pp=2 (4 micro-batches, 1F1B) and trained by mpirun -np 8 on a
#     generated corpus; the loss falls (DEMO_MESH, DEMO_MICROBATCHES and
#     DEMO_STEPS change the run);
#  0. examples/torch_mlp.py: a PyTorch MLP imported (loom.from_torch) and run
#     by loom-run, with PyTorch's loss beside Loom's;
#  1. examples/mlp.mlir, imported with a symbolic batch, specialised to a
#     batch of 32 by loom-shape-inference and cleaned up by canonicalize;
#  2. a GPT-2-small-shaped forward graph with loss, generated, verified and
#     costed (flops, bytes, parameters) by loom-report-cost.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${LOOM_BUILD_DIR:-$ROOT/build}"
OPT="$BUILD/bin/loom-opt"
PY="$ROOT/.venv/bin/python"
OUT="$BUILD/demo"
mkdir -p "$OUT"

banner() { printf '\n==== %s ====\n' "$*"; }

banner "training a small GPT from PyTorch with loomc on 8 ranks: dp=2, tp=2, pp=2 (examples/train_gpt.py)"
"$PY" "$ROOT/examples/train_gpt.py" "$OUT/train-gpt" --steps "${DEMO_STEPS:-300}" \
  --mesh "${DEMO_MESH:-dp=2,tp=2,pp=2}" --microbatches "${DEMO_MICROBATCHES:-4}"

banner "0. a PyTorch MLP through loom.from_torch and loom-run (examples/torch_mlp.py)"
"$PY" "$ROOT/examples/torch_mlp.py" "$OUT/torch"

banner "1. examples/mlp.mlir as imported (batch dimension '?')"
cat "$ROOT/examples/mlp.mlir"

PIPELINE='--loom-shape-inference=arg-shapes=x=32x784,labels=32 --canonicalize'
banner "after: loom-opt $PIPELINE"
"$OPT" "$ROOT/examples/mlp.mlir" --loom-shape-inference="arg-shapes=x=32x784,labels=32" \
  --canonicalize -o "$OUT/mlp.static.mlir"
cat "$OUT/mlp.static.mlir"

banner "cost of one forward pass of the MLP (loom-report-cost)"
"$OPT" "$OUT/mlp.static.mlir" --loom-report-cost -o /dev/null

banner "2. GPT-2 small (12 layers, hidden 768, 12 heads, seq 1024, vocab 50257), batch 8"
"$PY" -m loom.models.gpt --preset gpt2-small --batch 8 -o "$OUT/gpt2-small.mlir"
printf 'generated %s: %s lines\n' "$OUT/gpt2-small.mlir" "$(wc -l < "$OUT/gpt2-small.mlir")"
echo "the first transformer layer, as generated:"
grep -m 10 -E 'loom\.(layer_norm|dot_general|split|softmax)' "$OUT/gpt2-small.mlir" | cut -c1-160
start=$(date +%s.%N)
"$OPT" "$OUT/gpt2-small.mlir" --loom-shape-inference --canonicalize \
  --loom-report-cost="output=$OUT/gpt2-small.cost.json" -o "$OUT/gpt2-small.opt.mlir"
end=$(date +%s.%N)
"$PY" - "$OUT/gpt2-small.cost.json" "$start" "$end" <<'PYEOF'
import json, sys
f = json.load(open(sys.argv[1]))["functions"][0]
print(f"verified, shape-inferred and canonicalized in {float(sys.argv[3]) - float(sys.argv[2]):.2f} s")
print(f"ops: {f['ops']}   parameters: {f['params']:,} ({f['param_bytes'] / 2**20:.1f} MiB)")
print(f"forward flops per step: {f['flops'] / 1e12:.2f} TFLOP   bytes moved: {f['bytes'] / 2**30:.2f} GiB")
PYEOF
echo
echo "Outputs are in $OUT. Parallel training: loomc --mesh dp=D,tp=T,pp=P"
echo "--microbatches M, then mpirun -np D*T*P OUT/train (README.md)."

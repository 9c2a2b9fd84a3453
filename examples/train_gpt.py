"""Train a small GPT-style character model with Loom, from PyTorch.

    python examples/train_gpt.py OUTDIR [--steps N] [--batch B]
        [--mesh dp=D,tp=T,pp=P] [--microbatches M]

1. builds a 2-layer GPT (hidden 64, 4 heads, context 32) in PyTorch and a
   character corpus (generated: simple English sentences);
2. imports it with loom.from_torch (ONNX export -> loom dialect + weights);
3. compiles the training step with Module.compile (loomc: autodiff, AdamW,
   memory plan, C++, build of OUTDIR/train) for the mesh: with
   dp=D,tp=T,pp=P and M micro-batches the model is imported with the
   micro-batch size B / (D*M), its attention and MLP blocks are cut over
   T ranks, its ops over P pipeline stages (1F1B), and each step trains on
   B rows;
4. runs OUTDIR/train (under mpirun -np D*T*P when that is more than one)
   on the corpus and prints the loss as it falls.
"""

import argparse
import math
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import loom


class Block(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(hidden)
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)
        self.ln_2 = nn.LayerNorm(hidden)
        self.fc = nn.Linear(hidden, 4 * hidden)
        self.out = nn.Linear(4 * hidden, hidden)

    def forward(self, x, mask):
        b, s, h = x.shape
        hd = h // self.heads
        q, k, v = self.qkv(self.ln_1(x)).split(h, dim=2)
        q, k, v = (t.view(b, s, self.heads, hd).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-2, -1) / math.sqrt(hd)).masked_fill(mask, float("-inf"))
        x = x + self.proj((scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, h))
        return x + self.out(F.gelu(self.fc(self.ln_2(x)), approximate="tanh"))


class TinyGPT(nn.Module):
    def __init__(self, vocab, seq=32, hidden=64, heads=4, layers=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(seq, hidden)
        self.blocks = nn.ModuleList(Block(hidden, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, vocab, bias=False)
        self.register_buffer("mask", torch.triu(torch.ones(seq, seq, dtype=torch.bool), 1),
                             persistent=False)

    def forward(self, ids, labels):
        x = self.tok(ids) + self.pos(torch.arange(ids.shape[1]))
        for block in self.blocks:
            x = block(x, self.mask)
        logits = self.head(self.ln_f(x))
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))


def corpus(n_sentences=4000, seed=0):
    rng = random.Random(seed)
    subjects = ["the cat", "a dog", "my friend", "the loom", "every bird", "our teacher"]
    verbs = ["sees", "likes", "weaves", "finds", "follows", "paints"]
    objects = ["the moon", "a red thread", "the river", "small stones", "the garden"]
    return " ".join(f"{rng.choice(subjects)} {rng.choice(verbs)} {rng.choice(objects)}."
                    for _ in range(n_sentences))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch", type=int, default=8,
                        help="rows per step over all ranks (default 8)")
    parser.add_argument("--mesh", default="dp=1,tp=1,pp=1",
                        help="device mesh dp=D,tp=T,pp=P (default one device)")
    parser.add_argument("--microbatches", type=int, default=1,
                        help="micro-batches per step and data-parallel rank")
    args = parser.parse_args()
    mesh = dict(dp=1, tp=1, pp=1)
    for part in args.mesh.split(","):
        key, _, value = part.partition("=")
        if key not in mesh or not value.isdigit() or int(value) < 1:
            parser.error(f"--mesh: '{part}' is not dp=D, tp=T or pp=P")
        mesh[key] = int(value)
    per_step = mesh["dp"] * args.microbatches
    if args.microbatches < 1 or args.batch % per_step:
        parser.error(f"--batch {args.batch} must be a multiple of dp x microbatches "
                     f"= {per_step}")
    micro = args.batch // per_step
    ranks = mesh["dp"] * mesh["tp"] * mesh["pp"]
    out = args.outdir
    out.mkdir(parents=True, exist_ok=True)

    text = corpus()
    chars = sorted(set(text))
    codes = np.array([chars.index(c) for c in text], dtype=np.int64)
    seq = 32
    windows = (len(codes) - 1) // seq
    ids = codes[: windows * seq].reshape(windows, seq)
    labels = codes[1: windows * seq + 1].reshape(windows, seq)
    data = out / "data"
    data.mkdir(exist_ok=True)
    np.save(data / "ids.npy", ids)
    np.save(data / "labels.npy", labels)
    print(f"corpus: {len(text):,} characters, vocabulary {len(chars)}, "
          f"{windows} windows of {seq}")

    torch.manual_seed(0)
    model = TinyGPT(len(chars), seq=seq)
    params = sum(p.numel() for p in model.parameters())
    example = (torch.from_numpy(ids[:micro]), torch.from_numpy(labels[:micro]))
    m = loom.from_torch(model, example, input_names=["ids", "labels"], workdir=out / "import")
    print(f"imported TinyGPT ({params:,} parameters) with loom.from_torch "
          f"(batch {micro})")
    program = m.compile(optimizer="adamw", lr=3e-3, weight_decay=0.01, outdir=out / "build",
                        mesh=args.mesh, microbatches=args.microbatches)
    print(f"compiled with loomc into {program.outdir} (step.cpp, memory.json, "
          f"plan.json, train) for the mesh {args.mesh}, {args.microbatches} "
          f"micro-batch(es) of {micro}")

    log = out / "loss.csv"
    print(f"training {args.steps} steps, batch {args.batch} on {ranks} rank(s) "
          "(progress on stderr):")
    cmd = [str(program.executable), "--data", str(data), "--steps", str(args.steps),
           "--log", str(log)]
    if ranks > 1:
        cmd = loom.mpirun_command(ranks) + cmd
        print("  " + " ".join(cmd))
    subprocess.run(cmd, check=True)
    losses = [float(line.split(",")[1]) for line in log.read_text().splitlines()[1:]]
    for s in range(0, len(losses), max(1, len(losses) // 10)):
        print(f"  step {s:4d}  loss {losses[s]:.4f}")
    print(f"  step {len(losses) - 1:4d}  loss {losses[-1]:.4f}")
    first = sum(losses[:10]) / 10
    last = sum(losses[-10:]) / 10
    print(f"mean loss of the first 10 steps {first:.3f} -> last 10 steps {last:.3f}")
    if not last < first:
        sys.exit("error: the loss did not fall")


if __name__ == "__main__":
    main()

"""Models of bench/train_step_vs_pytorch.py that the tests do not use.

A LLaMA-style decoder, each module returning its loss like
test/python/models/torch_models.py's GPT: RMSNorm before attention and the
MLP, rotary position embeddings (cos/sin tables computed once, so the
exported graph holds constants, no trigonometric ops), causal attention
without biases, a SwiGLU MLP, untied output head.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, hidden, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden))

    def forward(self, x):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class LlamaBlock(nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.heads = heads
        self.attn_norm = RMSNorm(hidden)
        self.wq = nn.Linear(hidden, hidden, bias=False)
        self.wk = nn.Linear(hidden, hidden, bias=False)
        self.wv = nn.Linear(hidden, hidden, bias=False)
        self.wo = nn.Linear(hidden, hidden, bias=False)
        self.mlp_norm = RMSNorm(hidden)
        self.gate = nn.Linear(hidden, ffn, bias=False)
        self.up = nn.Linear(hidden, ffn, bias=False)
        self.down = nn.Linear(ffn, hidden, bias=False)

    def forward(self, x, mask, cos, sin):
        b, s, h = x.shape
        hd = h // self.heads
        y = self.attn_norm(x)
        q = self.wq(y).view(b, s, self.heads, hd).transpose(1, 2)
        k = self.wk(y).view(b, s, self.heads, hd).transpose(1, 2)
        v = self.wv(y).view(b, s, self.heads, hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        scores = q @ k.transpose(-2, -1) / math.sqrt(hd)
        scores = scores.masked_fill(mask, float("-inf"))
        ctx = (scores.softmax(dim=-1) @ v).transpose(1, 2).reshape(b, s, h)
        x = x + self.wo(ctx)
        y = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(y)) * self.up(y))


class Llama(nn.Module):
    def __init__(self, vocab=50, seq=8, hidden=32, heads=4, layers=2):
        super().__init__()
        hd = hidden // heads
        # SwiGLU width: 8/3 of hidden, rounded up to a multiple of 32.
        ffn = 32 * math.ceil(8 * hidden / 3 / 32)
        self.embed = nn.Embedding(vocab, hidden)
        self.blocks = nn.ModuleList(LlamaBlock(hidden, heads, ffn) for _ in range(layers))
        self.norm = RMSNorm(hidden)
        self.head = nn.Linear(hidden, vocab, bias=False)
        inv = 1.0 / (10000.0 ** (torch.arange(0, hd, 2).float() / hd))
        angles = torch.outer(torch.arange(seq).float(), inv)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)
        self.register_buffer(
            "causal", torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1),
            persistent=False)

    def forward(self, ids, labels):
        s = ids.shape[1]
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x, self.causal[:s, :s], self.cos[:s], self.sin[:s])
        logits = self.head(self.norm(x))
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))

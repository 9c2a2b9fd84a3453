"""MLP, GPT-2-style and LLaMA-style models in PyTorch, each returning its loss.

The forward graphs are what Loom imports: ONNX exports of these modules must
give the same loss as PyTorch itself.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, d_in=16, d_hidden=32, n_classes=10):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, n_classes)

    def forward(self, x, labels):
        logits = self.fc2(torch.relu(self.fc1(x)))
        return F.cross_entropy(logits, labels)


class Block(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(hidden)
        self.attn_qkv = nn.Linear(hidden, 3 * hidden)
        self.attn_proj = nn.Linear(hidden, hidden)
        self.ln_2 = nn.LayerNorm(hidden)
        self.fc = nn.Linear(hidden, 4 * hidden)
        self.proj = nn.Linear(4 * hidden, hidden)

    def forward(self, x, mask):
        b, s, h = x.shape
        hd = h // self.heads
        q, k, v = self.attn_qkv(self.ln_1(x)).split(h, dim=2)
        q = q.view(b, s, self.heads, hd).transpose(1, 2)
        k = k.view(b, s, self.heads, hd).transpose(1, 2)
        v = v.view(b, s, self.heads, hd).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(hd)
        scores = scores.masked_fill(mask, float("-inf"))
        ctx = (scores.softmax(dim=-1) @ v).transpose(1, 2).reshape(b, s, h)
        x = x + self.attn_proj(ctx)
        return x + self.proj(F.gelu(self.fc(self.ln_2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, vocab=50, seq=8, hidden=32, heads=4, layers=2):
        super().__init__()
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(seq, hidden)
        self.blocks = nn.ModuleList(Block(hidden, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden)
        self.register_buffer(
            "causal", torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1),
            persistent=False)

    def forward(self, ids, labels):
        s = ids.shape[1]
        pos = torch.arange(s, device=ids.device)
        x = self.wte(ids) + self.wpe(pos)
        for block in self.blocks:
            x = block(x, self.causal[:s, :s])
        logits = self.ln_f(x) @ self.wte.weight.t()
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))


# A LLaMA-style decoder: RMSNorm before attention and the MLP, rotary
# position embeddings (cos/sin tables computed once, so the exported graph
# holds constants, no trigonometric ops), causal attention without biases, a
# SwiGLU MLP, untied output head.
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


def mlp_example(batch=4, seed=0):
    torch.manual_seed(seed)
    model = MLP()
    x = torch.randn(batch, 16)
    labels = torch.randint(0, 10, (batch,))
    return model, (x, labels)


def gpt_example(batch=2, seq=8, vocab=50, seed=0):
    torch.manual_seed(seed)
    model = GPT(vocab=vocab, seq=seq)
    ids = torch.randint(0, vocab, (batch, seq))
    labels = torch.randint(0, vocab, (batch, seq))
    return model, (ids, labels)


def llama_example(batch=2, seq=8, vocab=50, seed=0):
    torch.manual_seed(seed)
    model = Llama(vocab=vocab, seq=seq)
    ids = torch.randint(0, vocab, (batch, seq))
    labels = torch.randint(0, vocab, (batch, seq))
    return model, (ids, labels)

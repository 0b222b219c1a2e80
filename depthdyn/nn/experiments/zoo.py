"""Small models as users write them, with random weights, to exercise :func:`~depthdyn.nn.inspect`.

They are not depthdyn blocks: plain ``torch.nn`` code in the layouts of common libraries, so
that the analysis is tried on what it will meet.

* :class:`ResidualMLP`: a user's own ``ModuleList`` of pre-norm residual MLP blocks (``layers``).
* :class:`GPT2Style`: a GPT-2-style causal decoder (``transformer.h``, learned positions,
  LayerNorm, causal softmax attention, GELU MLP).
* :class:`LlamaStyle`: a LLaMA-style decoder (``model.layers``): an RMSNorm that computes in
  float32 whatever the model's dtype (as LLaMA's does), rotary position embeddings handed to
  every layer as ``position_embeddings=(cos, sin)``, an additive causal mask handed to every
  layer as ``attention_mask=``, SiLU-gated MLP.
"""

from __future__ import annotations

import math

import torch
from torch import nn

__all__ = ["ResidualMLP", "GPT2Style", "LlamaStyle", "RMSNorm"]


class _PreNormMLP(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x):
        return x + self.mlp(self.norm(x))


class ResidualMLP(nn.Module):
    """``x -> head(layers(x))`` with ``layers`` an ``nn.ModuleList`` of ``x + MLP(LN(x))``."""

    def __init__(self, dim: int = 16, depth: int = 4, hidden: int | None = None, out: int = 1):
        super().__init__()
        self.layers = nn.ModuleList(_PreNormMLP(dim, hidden or 4 * dim) for _ in range(depth))
        self.head = nn.Linear(dim, out)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def _causal_scores(q, k, mask=None):
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if mask is None:
        T = q.shape[-2]
        mask = torch.full((T, T), float("-inf"), dtype=s.dtype, device=s.device).triu(1)
    return torch.softmax(s + mask, dim=-1)


class _GPT2Block(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.ln_1, self.ln_2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.c_attn, self.c_proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.mlp = nn.Sequential(
            nn.Linear(dim, 4 * dim), nn.GELU(approximate="tanh"), nn.Linear(4 * dim, dim)
        )

    def forward(self, hidden_states):
        B, T, D = hidden_states.shape
        q, k, v = self.c_attn(self.ln_1(hidden_states)).split(D, dim=-1)
        q, k, v = (t.reshape(B, T, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        a = (_causal_scores(q, k) @ v).transpose(1, 2).reshape(B, T, D)
        hidden_states = hidden_states + self.c_proj(a)
        return (hidden_states + self.mlp(self.ln_2(hidden_states)),)  # a tuple, as GPT-2's blocks


class GPT2Style(nn.Module):
    """GPT-2-style decoder: ``input_ids (B, T) -> logits (B, T, vocab)``; layers at ``transformer.h``."""

    def __init__(self, dim: int = 16, depth: int = 2, heads: int = 2, vocab: int = 50, context: int = 64):
        super().__init__()
        self.transformer = nn.Module()
        self.transformer.wte = nn.Embedding(vocab, dim)
        self.transformer.wpe = nn.Embedding(context, dim)
        self.transformer.h = nn.ModuleList(_GPT2Block(dim, heads) for _ in range(depth))
        self.transformer.ln_f = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids):
        pos = torch.arange(input_ids.shape[1], device=input_ids.device)
        h = self.transformer.wte(input_ids) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            h = block(h)[0]
        return self.lm_head(self.transformer.ln_f(h))


class RMSNorm(nn.Module):
    """LLaMA's RMSNorm: computed in float32 and cast back, whatever the input's dtype."""

    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        h = x.to(torch.float32)
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * h.to(x.dtype)


def _rotate(x, cos, sin):
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


class _LlamaLayer(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.input_layernorm, self.post_attention_layernorm = RMSNorm(dim), RMSNorm(dim)
        self.q, self.k, self.v, self.o = (nn.Linear(dim, dim, bias=False) for _ in range(4))
        self.gate, self.up = nn.Linear(dim, 2 * dim, bias=False), nn.Linear(dim, 2 * dim, bias=False)
        self.down = nn.Linear(2 * dim, dim, bias=False)

    def forward(self, hidden_states, attention_mask=None, position_embeddings=None):
        B, T, D = hidden_states.shape
        h = self.input_layernorm(hidden_states)
        q, k, v = (p(h).reshape(B, T, self.heads, -1).transpose(1, 2) for p in (self.q, self.k, self.v))
        cos, sin = position_embeddings
        q, k = _rotate(q, cos, sin), _rotate(k, cos, sin)
        s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        if attention_mask is not None:
            s = s + attention_mask
        a = (torch.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(B, T, D)
        hidden_states = hidden_states + self.o(a)
        h = self.post_attention_layernorm(hidden_states)
        return hidden_states + self.down(nn.functional.silu(self.gate(h)) * self.up(h))


class LlamaStyle(nn.Module):
    """LLaMA-style decoder: ``input_ids (B, T) -> logits``; layers at ``model.layers``, called with
    ``attention_mask=`` (additive, causal) and ``position_embeddings=(cos, sin)``."""

    def __init__(self, dim: int = 16, depth: int = 2, heads: int = 2, vocab: int = 50):
        super().__init__()
        self.heads = heads
        self.model = nn.Module()
        self.model.embed_tokens = nn.Embedding(vocab, dim)
        self.model.layers = nn.ModuleList(_LlamaLayer(dim, heads) for _ in range(depth))
        self.model.norm = RMSNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids):
        T = input_ids.shape[1]
        h = self.model.embed_tokens(input_ids)
        hd = h.shape[-1] // self.heads
        freq = 1.0 / (10000 ** (torch.arange(0, hd, 2, dtype=torch.float64, device=h.device) / hd))
        ang = torch.arange(T, dtype=torch.float64, device=h.device)[:, None] * freq
        ang = torch.cat((ang, ang), dim=-1)
        pe = (ang.cos().to(h.dtype), ang.sin().to(h.dtype))
        mask = torch.full((T, T), float("-inf"), dtype=h.dtype, device=h.device).triu(1)
        for layer in self.model.layers:
            h = layer(h, attention_mask=mask, position_embeddings=pe)
        return self.lm_head(self.model.norm(h))

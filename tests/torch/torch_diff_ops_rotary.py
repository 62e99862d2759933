"""The rotary family's ops (core/ops/rotary.hpp) in the PyTorch differential test, one line
per op as in torch_diff_ops.py (torch_diff_ops_rotary.cpp has the nbx calls). PyTorch has no
rotary op: the answer is written here from torch ops (vLLM's reference, x1·cos − x2·sin,
x2·cos + x1·sin, on the rows the positions pick of the cache), computed in float32 for
float16/bfloat16 (upcast) and rounded once, as nbx. `rotary_embedding_` rotates q and k in
place through their views (never expanded ones: they cannot be written); a position past the
cache is an IndexError in PyTorch and a DeviceFault in nbx (refused alike).
"""
import math

import torch

from torch_diff_compare import Tol
from torch_diff_gen import FLOATS
from torch_diff_ops import op

WRITABLE_VIEWS = ["contiguous", "contiguous", "transposed", "permuted", "sliced", "narrowed"]


def gen_rotary(g):
    tokens = [g.int(0 if g.chance(0.05) else 1, 6) for _ in range(g.int(1, 2))]
    hq, hk, rd = g.int(1, 4), g.int(1, 3), 2 * g.int(1, 8)
    d = rd + g.pick([0, 0, 2, 3, 6])
    dtype, positions = g.pick(FLOATS), g.int(1, 40)
    q = g.tensor(tokens + [hq, d], dtype, "moderate", view=g.pick(WRITABLE_VIEWS))
    k = g.tensor(tokens + [hk, d], dtype, "moderate", view=g.pick(WRITABLE_VIEWS))
    n = math.prod(tokens)
    pos = [g.int(0, positions - 1) for _ in range(n)]
    if n and g.chance(0.05): pos[g.int(0, n - 1)] = positions  # one past the cache: a fault
    p = g.tensor(tokens, g.pick(["int32", "int64"]), values=pos + [0] * 8)
    cache = g.tensor([positions, rd], g.pick([dtype, "float32"]), "unit",
                     view=g.pick(["contiguous", "contiguous", "transposed", "sliced"]))
    return [q, k, p, cache], {"rotary_dim": rd, "style": g.pick(["neox", "gptj"])}


def rotate(x, cos, sin, rd, style):
    """x [..., H, D]; cos, sin [..., rd / 2] (the token dims)."""
    c, s = cos.unsqueeze(-2), sin.unsqueeze(-2)
    half = rd // 2
    if style == "neox":
        x1, x2 = x[..., :half], x[..., half:rd]
        rotated = torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], -1)
    else:
        x1, x2 = x[..., 0:rd:2], x[..., 1:rd:2]
        rotated = torch.stack([x1 * c - x2 * s, x2 * c + x1 * s], -1).flatten(-2)
    return torch.cat([rotated, x[..., rd:]], -1)


def torch_rotary(x, a):
    q, k, pos, cache = x
    rd = a["rotary_dim"]
    row = cache[pos.long()].to(q.dtype)  # IndexError for a position past the cache
    cos, sin = row[..., :rd // 2], row[..., rd // 2:rd]
    return rotate(q, cos, sin, rd, a["style"]), rotate(k, cos, sin, rd, a["style"])


def rotary_scale(ctx):
    """Each output is x1·c − x2·s with |c|, |s| <= 1: two roundings of products up to the
    largest |q| or |k|."""
    finite = [t.double().abs()[torch.isfinite(t.double())] for t in ctx.x[:2]]
    finite = [f for f in finite if f.numel()]
    return max(float(f.max()) for f in finite) if finite else 0.0


op("rotary_embedding", gen_rotary, torch_rotary, Tol(2, rotary_scale), 40)
op("rotary_embedding_", gen_rotary, torch_rotary, Tol(2, rotary_scale), 40)

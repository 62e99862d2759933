"""scaled_dot_product_attention (core/ops/attention.hpp) in the PyTorch differential test, one
line as in torch_diff_ops.py (torch_diff_ops_attention.cpp has the nbx call). PyTorch 1.13 has
no public F.scaled_dot_product_attention, so its answer is the definition PyTorch's math path
(>= 2.5) computes, from its own ops in float64: softmax(q @ k^T * scale + mask) @ v, a bool
mask as -inf where false, causal top-left (tril of ones(L, S)) or bottom-right (causal_lower_
right: tril with diagonal S - L), k and v repeat_interleaved for enable_gqa, and a row whose
scores are all -inf giving zeros (its _safe_softmax). Half types are computed in float32 and
rounded once (op's upcast), as the math path does.
"""
import math

import torch

from torch_diff_compare import Tol, growth
from torch_diff_gen import FLOATS, S
from torch_diff_ops import op

MASKS = ["none", "none", "bool", "additive", "causal", "causal_lower_right"]


def gen_sdpa(g):
    d = g.pick(FLOATS)
    b = [g.int(1, 2)] if g.chance(0.7) else []
    hk = g.pick([1, 2])
    gqa = g.chance(0.35)
    hq = hk * (g.pick([2, 4]) if gqa else 1)
    n_q, n_kv = g.pick([0, 1, 3, 9, 17]) if g.chance(0.9) else 0, g.pick([1, 2, 5, 9, 20])
    if g.chance(0.05): n_kv = 0
    E, Ev = g.pick([1, 4, 8, 16]), g.pick([1, 3, 8])
    heads = g.chance(0.8) or gqa
    q_shape = b + ([hq] if heads else []) + [n_q, E]
    kv = b + ([hk] if heads else [])
    x = [g.tensor(q_shape, d, "unit"), g.tensor(kv + [n_kv, E], d, "unit"),
         g.tensor(kv + [n_kv, Ev], d, "unit")]
    mask = g.pick(MASKS)
    if mask in ("bool", "additive"):
        # Broadcast shapes: [L, S], [S], [.., H or 1, L or 1, S].
        m = g.pick([[n_q, n_kv], [n_kv], b + [hq if g.chance(0.5) else 1, n_q if g.chance(0.7) else 1, n_kv]])
        x.append(g.tensor(m, "bool" if mask == "bool" else d,
                          "mixed" if mask == "bool" else "unit"))
        if mask == "additive" and x[-1].build("cpu").numel() and g.chance(0.7):
            x[-1] = masked_additive(g, m, d)
    scale = g.pick([None, None, 0.5, 1.3])
    return x, {"mask": mask, "gqa": gqa, "scale": None if scale is None else S(scale)}


def masked_additive(g, shape, d):
    """An additive mask with about a quarter of its entries -inf (whole rows now and then)."""
    n = math.prod(shape)
    vals = [(-math.inf if g.chance(0.25) else g.pick([-1.0, -0.5, 0.0, 0.25, 1.0])) for _ in range(n)]
    return g.tensor(shape, d, view="contiguous", values=vals)


def expanded_kv(q, k, v, a):
    if a["gqa"] and q.dim() >= 3:
        k = k.repeat_interleave(q.shape[-3] // k.shape[-3], -3)
        v = v.repeat_interleave(q.shape[-3] // v.shape[-3], -3)
    return k, v


def scores_of(x, a):
    q, k, v = x[:3]
    k, v = expanded_kv(q, k, v, a)
    L, S = q.shape[-2], k.shape[-2]
    scale = a["scale"] if a["scale"] is not None else 1 / math.sqrt(q.shape[-1])
    s = (q @ k.transpose(-1, -2)) * scale
    if a["mask"] == "bool":
        s = s.masked_fill(~x[3], -math.inf)
    elif a["mask"] == "additive":
        s = s + x[3]
    elif a["mask"].startswith("causal"):
        diagonal = S - L if a["mask"] == "causal_lower_right" else 0
        keep = torch.ones(L, S, dtype=torch.bool, device=s.device).tril(diagonal)
        s = s.masked_fill(~keep, -math.inf)
    return s, v


def torch_sdpa(x, a):
    s, v = scores_of(x, a)
    p = torch.softmax(s, -1)
    p = torch.where(s.eq(-math.inf).all(-1, keepdim=True), torch.zeros_like(p), p)
    return p @ v


def attention_magnitude(ctx):
    """The largest |score| a row adds (scaled |q|·|k|) beside 1, times the largest |v| a
    column averages: the exponentials' and the weighted sum's rounding grow with both."""
    x = [t.double().abs() if t.dtype != torch.bool else t for t in ctx.x]
    q, k, v = x[:3]
    k, v = expanded_kv(q, k, v, ctx.a)
    out_shape = ctx.e.shape
    if k.shape[-2] == 0 or q.shape[-2] == 0: return torch.ones(out_shape, dtype=torch.float64)
    scale = ctx.a["scale"] if ctx.a["scale"] is not None else 1 / math.sqrt(q.shape[-1])
    s = ((q @ k.transpose(-1, -2)) * scale).amax(-1, keepdim=True)
    if ctx.a["mask"] == "additive":
        s = s + x[3].nan_to_num(posinf=0.0, neginf=0.0).amax(-1, keepdim=True)
    vm = v.amax(-2, keepdim=True)
    return ((1 + s) * vm).expand(out_shape) * growth(ctx)


op("scaled_dot_product_attention", gen_sdpa, torch_sdpa, Tol(8, attention_magnitude), 60)

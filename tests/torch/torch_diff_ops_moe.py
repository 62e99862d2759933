"""The MoE ops (core/ops/moe.hpp) in the PyTorch differential test, one line per op as in
torch_diff_ops.py (torch_diff_ops_moe.cpp has the nbx calls). PyTorch has no grouped GEMM nor
fused_moe: the answers are written here from torch ops — fused_moe as Mixtral's reference loop
over experts (bench/torch_transformer.py's moe_loop: softmax in float32, topk, renormalise,
then per expert the routed tokens through SwiGLU and back, index_add'ed with their weights;
w13 = cat(w1, w3)), products in float64 after the routing (float16/bfloat16 cases are upcast
and rounded once). Router logits are distinct multiples of 1/8 in a row, so no two experts
tie and every library routes alike. Offsets that do not partition the rows, and expert ids
out of range, are an IndexError here and a DeviceFault in nbx (refused alike).
"""
import torch
import torch.nn.functional as F

from torch_diff_compare import EPS, Tol, abs_problem
from torch_diff_ops import op

# Their expert ids may be out of range (a refusal case): an index that PyTorch's CUDA gather
# asserts on, which leaves the CUDA context unusable — their answers come from the CPU
# (torch_diff.py's CPU_ONLY; seen on the H100, 2026-12-07).
CPU_ONLY = {"moe_permute", "moe_combine"}

MOE_FLOATS = ["float16", "bfloat16", "float32"]  # fused_moe's dtypes (nbx refuses float64)


def distinct_logits(g, tokens, experts):
    """Each row a sample of distinct multiples of 1/8 in [-4, 4): exact in every float dtype."""
    values = []
    for _ in range(tokens): values += [k / 8 for k in g.r.sample(range(-32, 32), experts)]
    return values + [0.0] * 8


def counts(g, experts, rows_max):
    return [0 if g.chance(0.25) else g.int(1, rows_max) for _ in range(experts)]


def offsets_of(cs):
    out = [0]
    for c in cs: out.append(out[-1] + c)
    return out


# ---- grouped_matmul(a [R, K], b [E, N, K] or [E, K, N], offsets [E + 1])
def gen_grouped(g):
    e, n, k = g.int(1, 6), g.int(1, 40), g.int(1, 40)
    cs = counts(g, e, 20)
    offs = offsets_of(cs)
    if g.chance(0.08) and e > 1:  # a decreasing entry: a fault
        i = g.int(1, e - 1)
        offs[i] = offs[i + 1] + 1
    rows = sum(cs)
    dtype, layout = g.pick(MOE_FLOATS), g.pick(["nk", "kn"])
    a = g.tensor([rows, k], dtype, "unit", view=g.pick(["contiguous", "contiguous", "sliced"]))
    shape = [e, n, k] if layout == "nk" else [e, k, n]
    b = g.tensor(shape, dtype, "unit", view=g.pick(["contiguous", "contiguous", "transposed"]))
    o = g.tensor([e + 1], g.pick(["int32", "int64"]), values=offs + [0] * 8, view="contiguous")
    return [a, b, o], {"layout": layout}


def check_offsets(offs, rows):
    o = offs.long().tolist()
    if o[0] != 0 or o[-1] != rows or any(y < x for x, y in zip(o, o[1:])):
        raise IndexError(f"group offsets {o} do not partition {rows} rows")
    return o


def torch_grouped(x, a):
    m, w, offs = x
    o = check_offsets(offs, m.shape[0])
    out = torch.zeros(m.shape[0], w.shape[1] if a["layout"] == "nk" else w.shape[2],
                      dtype=torch.float64)
    for e in range(w.shape[0]):
        we = w[e].double()
        out[o[e]:o[e + 1]] = m[o[e]:o[e + 1]].double() @ (we.t() if a["layout"] == "nk" else we)
    return out.to(m.dtype)


# ---- moe_route(router_logits [T, E], top_k, renormalize)
def gen_route(g):
    t, e = g.int(0 if g.chance(0.05) else 1, 30), g.int(1, 9)
    x = g.tensor([t, e], g.pick(MOE_FLOATS), values=distinct_logits(g, t, e), view="contiguous")
    return [x], {"top_k": g.int(1, e), "renormalize": g.chance(0.7)}


def torch_route(x, a):
    probs = torch.softmax(x[0].float(), dim=-1)
    w, ids = torch.topk(probs, a["top_k"], dim=-1)
    if a["renormalize"]: w = w / w.sum(-1, keepdim=True)
    return w, ids.int()


# ---- moe_permute(expert_ids [T, k], num_experts)
def gen_permute(g):
    t, k, e = g.int(0 if g.chance(0.05) else 1, 30), g.int(1, 3), g.int(1, 9)
    ids = [g.int(0, e - 1) for _ in range(t * k)]
    if ids and g.chance(0.08): ids[g.int(0, len(ids) - 1)] = e  # out of range: a fault
    x = g.tensor([t, k], g.pick(["int32", "int64"]), values=ids + [0] * 8)
    return [x], {"num_experts": e}


def torch_permute(x, a):
    flat, e = x[0].flatten().long(), a["num_experts"]
    if flat.numel() and (flat.min() < 0 or flat.max() >= e):
        raise IndexError("an expert id is out of range")
    order = torch.sort(flat, stable=True).indices
    offsets = torch.cat([torch.zeros(1, dtype=torch.long),
                         torch.bincount(flat, minlength=e).cumsum(0)])
    inverse = torch.empty_like(order)
    inverse[order] = torch.arange(order.numel())
    return order, offsets, inverse


# ---- moe_combine(expert_out [T·k, D], weights [T, k], inverse [T·k])
def gen_combine(g):
    t, k, d = g.int(0 if g.chance(0.05) else 1, 20), g.int(1, 3), g.int(1, 40)
    dtype = g.pick(MOE_FLOATS)
    y = g.tensor([t * k, d], dtype, "unit")
    w = g.tensor([t, k], g.pick([dtype, "float32"]), "unit")
    perm = list(range(t * k))
    g.r.shuffle(perm)
    inv = g.tensor([t * k], "int64", values=perm + [0] * 8, view="contiguous")
    return [y, w, inv], {}


def torch_combine(x, a):
    y, w, inv = x
    t, k = w.shape
    rows = y[inv.long()].double().reshape(t, k, y.shape[1])
    return (rows * w.double().unsqueeze(-1)).sum(1).to(y.dtype)


# ---- fused_moe(hidden [T, D], router_logits [T, E], w13 [E, 2F, D], w2 [E, D, F], top_k)
def gen_fused(g):
    t, d, f, e = g.int(0 if g.chance(0.05) else 1, 30), g.int(1, 40), g.int(1, 24), g.int(1, 8)
    dtype = g.pick(MOE_FLOATS)
    h = g.tensor([t, d], dtype, "unit")
    logits = g.tensor([t, e], g.pick([dtype, "float32"]), values=distinct_logits(g, t, e),
                      view="contiguous")
    w13 = g.tensor([e, 2 * f, d], dtype, "unit", view=g.pick(["contiguous", "contiguous", "sliced"]))
    w2 = g.tensor([e, d, f], dtype, "unit")
    return [h, logits, w13, w2], {"top_k": g.int(1, min(e, 2)), "renormalize": g.chance(0.8)}


def moe_loop(x, logits, w13, w2, topk, renormalize, magnitudes=False):
    """Mixtral's reference loop (bench/torch_transformer.py), in float64 after the routing;
    with `magnitudes`, every term's magnitude instead (the tolerance's scale)."""
    probs = torch.softmax(logits.float(), dim=-1)
    weights, experts = torch.topk(probs, topk, dim=-1)
    if renormalize: weights = weights / weights.sum(-1, keepdim=True)
    weights = weights.to(x.dtype).double()
    ffn = w13.shape[1] // 2
    out = torch.zeros(x.shape, dtype=torch.float64, device=x.device)
    for e in range(w13.shape[0]):
        token, slot = torch.where(experts == e)
        if token.numel() == 0: continue
        h = x[token].double()
        w1, w3, w_2 = w13[e, :ffn].double(), w13[e, ffn:].double(), w2[e].double()
        if magnitudes:
            h, w1, w3, w_2 = h.abs(), w1.abs(), w3.abs(), w_2.abs()
            y = ((h @ w1.t()) * (h @ w3.t())) @ w_2.t()
        else:
            y = (F.silu(h @ w1.t()) * (h @ w3.t())) @ w_2.t()
        out.index_add_(0, token, y * weights[token, slot, None].abs())
    return out


def torch_fused(x, a):
    return moe_loop(*x, a["top_k"], a["renormalize"]).to(x[0].dtype)


def fused_scale(ctx):
    """nbx rounds the first GEMM, the SwiGLU product and the second GEMM to the dtype (PyTorch
    here does not): each rounding is an error of the dtype's epsilon on terms of at most
    (|h|·|w1|)(|h|·|w3|)·|w2|, expressed in units of float32's epsilon (the compare's compute
    epsilon), three times."""
    h, logits, w13, w2 = ctx.x
    m = moe_loop(h, logits, w13, w2, ctx.a["top_k"], ctx.a["renormalize"], magnitudes=True)
    out_eps = EPS[h.dtype] if h.dtype in (torch.float16, torch.bfloat16) else EPS[torch.float32]
    return 3 * m * (out_eps / EPS[torch.float32]) * (1 + h.shape[1] ** 0.5)


op("grouped_matmul", gen_grouped, torch_grouped, Tol(2, abs_problem), 40)
op("moe_route", gen_route, torch_route, Tol(8), 30)
op("moe_permute", gen_permute, torch_permute, Tol(0), 30)
op("moe_combine", gen_combine, torch_combine, Tol(2, abs_problem), 30)
op("fused_moe", gen_fused, torch_fused, Tol(2, fused_scale), 40)

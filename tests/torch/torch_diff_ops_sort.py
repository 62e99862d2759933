"""The sort family's ops (core/ops/sort.hpp) in the PyTorch differential test, one line per op
as in torch_diff_ops.py (torch_diff_ops_sort.cpp has the nbx calls). Values come from
PyTorch's own op and are exact. nbx sorts stably everywhere; PyTorch promises an order of
equal elements only with stable=True, so sort/argsort are compared with stable=True, and the
indices of topk, kthvalue, median and nanmedian — unspecified among equal values in PyTorch —
are the ones PyTorch's stable sort puts at the selected position (for median of a row with a
NaN: its first NaN, as PyTorch's). Inputs are drawn with many ties (halves, ±0, NaN, ±inf).
"""
import torch

from torch_diff_compare import EXACT, Tol, largest_input
from torch_diff_gen import ALL, FLOATS, S
from torch_diff_ops import op


def size_along(x, dim):
    """The size of operand x (a TensorIn) along dim; 1 for a 0-d one."""
    shape = list(x.build("cpu").shape)
    return shape[dim] if shape else 1


def sort_gen(g, dtypes=ALL, keepdim=False):
    s = g.big_shape() if g.chance(0.05) else g.shape()
    rank = len(s)
    attrs = {"dim": g.int(-max(rank, 1), max(rank, 1) - 1), "descending": g.chance(0.5)}
    if keepdim: attrs["keepdim"] = g.chance(0.5)
    return [g.tensor(s, g.pick(dtypes), "ties")], attrs


def stable(t, dim, descending=False):
    return torch.sort(t, dim=dim, descending=descending, stable=True)


def with_stable_indices(values, t, dim, position, keepdim):
    """PyTorch's values, with the index its stable sort has at `position` (a tensor of row
    positions, dim kept as 1) of each row."""
    order = stable(t, dim).indices
    idx = torch.gather(order, dim, position) if t.dim() else order.reshape(())
    return values, idx if keepdim or t.dim() == 0 else idx.squeeze(dim)


def row_positions(t, dim, fn):
    """fn(n, nans) → a position per row (dim kept as 1)."""
    n = t.shape[dim] if t.dim() else 1
    rows = t if t.dim() else t.reshape(1)
    nans = rows.isnan().sum(dim if t.dim() else 0, keepdim=True) if rows.is_floating_point() \
        else torch.zeros_like(rows.select(dim if t.dim() else 0, 0)).unsqueeze(dim if t.dim() else 0).long()
    return fn(n, nans)


def torch_topk(x, a):
    t, dim, k = x[0], a["dim"], a["k"]
    v = torch.topk(t, k, dim=dim, largest=a["largest"]).values
    order = stable(t, dim, descending=a["largest"]).indices
    return v, order.narrow(dim, 0, k) if t.dim() else order


def gen_topk(g):
    x, a = sort_gen(g)
    n = size_along(x[0], a["dim"])
    a = {"dim": a["dim"], "largest": a["descending"], "k": g.int(0, n) if g.chance(0.95) else n + 1}
    return x, a


def gen_kthvalue(g):
    x, a = sort_gen(g, keepdim=True)
    n = size_along(x[0], a["dim"])
    a["k"] = g.int(1, n) if n > 0 and g.chance(0.95) else g.pick([0, n + 1])
    del a["descending"]
    return x, a


def torch_kthvalue(x, a):
    t, dim, k, keepdim = x[0], a["dim"], a["k"], a["keepdim"]
    v = torch.kthvalue(t, k, dim=dim, keepdim=keepdim).values
    pos = torch.full_like(row_positions(t, dim, lambda n, nans: nans), k - 1)
    return with_stable_indices(v, t, dim, pos, keepdim)


def gen_median(g):
    x, a = sort_gen(g, keepdim=True)
    del a["descending"]
    return x, a


def torch_median(nan):
    def call(x, a):
        # contiguous(): 1.13's CPU median reads the wrong elements along an expanded
        # (stride-0) dim (README: 1.13 vs 2.x).
        t, dim, keepdim = x[0].contiguous(), a["dim"], a["keepdim"]
        f = torch.nanmedian if nan else torch.median
        v = f(t, dim=dim, keepdim=keepdim).values
        def pos(n, nans):
            if nan: return torch.where(n - nans > 0, (n - nans - 1) // 2, torch.zeros_like(nans))
            return torch.where(nans > 0, n - nans, torch.full_like(nans, (n - 1) // 2))
        return with_stable_indices(v, t, dim, row_positions(t, dim, pos), keepdim)
    return call


def gen_quantile(g):
    s = g.shape(max_numel=300)
    rank = len(s)
    d = g.pick(FLOATS_32_64)
    x = [g.tensor(s, d, "ties")]
    a = {"dim": g.int(-max(rank, 1), max(rank, 1) - 1) if g.chance(0.7) else None,
         "keepdim": g.chance(0.5),
         "interpolation": g.pick(["linear", "lower", "higher", "midpoint", "nearest"])}
    if g.chance(0.5):
        a["q"] = S(g.pick([0.0, 0.25, 0.5, 0.9, 1.0, 0.3, 0.77]) if g.chance(0.95) else 1.5)
    else:
        a["qs"] = [g.pick([0.0, 0.1, 0.5, 0.75, 1.0, 0.33]) for _ in range(g.int(1, 4))]
    return x, a


FLOATS_32_64 = ["float32", "float64"]


def torch_quantile(nan):
    def call(x, a):
        t = x[0]
        q = a["q"] if "q" in a else torch.tensor(a["qs"], dtype=t.dtype, device=t.device)
        f = torch.nanquantile if nan else torch.quantile
        return f(t, q, dim=a["dim"], keepdim=a["keepdim"], interpolation=a["interpolation"])
    return call


# lerp's rounding, relative to the endpoints (they may cancel): 2 ulps of the largest |x|.
INTERPOLATED = Tol(2, largest_input)

op("sort", sort_gen, lambda x, a: stable(x[0], a["dim"], a["descending"]), EXACT, 40)
op("argsort", sort_gen, lambda x, a: stable(x[0], a["dim"], a["descending"]).indices, EXACT, 25)
op("msort", lambda g: ([g.tensor(g.shape(min_rank=1), g.pick(ALL), "ties")], {}),
   lambda x, a: stable(x[0], 0).values, EXACT, 15)
op("topk", gen_topk, torch_topk, EXACT, 30)
op("kthvalue", gen_kthvalue, torch_kthvalue, EXACT, 25)
op("median_dim", gen_median, torch_median(False), EXACT, 25)
op("nanmedian_dim", gen_median, torch_median(True), EXACT, 25)
op("median_all", lambda g: ([g.tensor(g.shape(), g.pick(FLOATS), "ties")], {}),
   lambda x, a: torch.median(x[0]), EXACT, 15)
op("nanmedian_all", lambda g: ([g.tensor(g.shape(), g.pick(FLOATS), "ties")], {}),
   lambda x, a: torch.nanmedian(x[0]), EXACT, 15)
op("quantile", gen_quantile, torch_quantile(False), INTERPOLATED, 30)
op("nanquantile", gen_quantile, torch_quantile(True), INTERPOLATED, 30)


def gen_mode(g):
    x, a = sort_gen(g, keepdim=True)
    del a["descending"]
    return x, a


def torch_mode(x, a):
    """PyTorch's mode value; its index (the last occurrence of the value) recomputed from the
    stable sort, as nbx's rule names it — PyTorch's CUDA returns any occurrence."""
    t, dim, keepdim = x[0].contiguous(), a["dim"], a["keepdim"]
    v = torch.mode(t, dim=dim, keepdim=keepdim).values
    rows = t if t.dim() else t.reshape(1)
    d = dim % rows.dim() if t.dim() else 0
    sv, si = stable(rows, d)
    vk = v if keepdim or t.dim() == 0 else v.unsqueeze(d)
    vk = vk.reshape([1] * rows.dim()) if t.dim() == 0 else vk
    # the last sorted position holding the mode value
    hit = (sv == vk) | (sv.isnan() & vk.isnan() if sv.is_floating_point() else sv != sv)
    n = rows.shape[d]
    pos = torch.where(hit, torch.arange(n, device=t.device).view([-1 if k == d else 1
                      for k in range(rows.dim())]), torch.full_like(si, -1)).amax(d, keepdim=True)
    idx = torch.gather(si, d, pos)
    if t.dim() == 0: return v, idx.reshape(())
    return v, idx if keepdim else idx.squeeze(d)


def gen_unique(g):
    s = g.shape(max_numel=400)
    return [g.tensor(s, g.pick(ALL), "ties_no_nan")], {}


def torch_unique(x, a):
    """float16/bfloat16 through float32: 1.13's CPU has no float16 unique and its bfloat16 one
    tells -0 from +0 (README: 1.13 vs 2.x)."""
    t = x[0]
    half = t.dtype in (torch.float16, torch.bfloat16)
    v, inv, cnt = torch.unique(t.float() if half else t, sorted=True, return_inverse=True,
                               return_counts=True)
    return (v.to(t.dtype) if half else v), inv, cnt


op("mode", gen_mode, torch_mode, EXACT, 25)
op("unique", gen_unique, torch_unique, EXACT, 25)

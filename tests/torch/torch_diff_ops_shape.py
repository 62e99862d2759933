"""The shape ops (core/ops/shape.hpp) in the PyTorch differential test, one line per op as in
torch_diff_ops.py (torch_diff_ops_shape.cpp has the nbx calls). They move elements, so every
comparison is exact but trace's (a sum). A list input (cat, stack, meshgrid) is the case's
operands, their count in the attr "n"; a list output (split, chunk, meshgrid) is the outputs.

Where PyTorch has no kernel for a dtype (reflect/replicate/circular padding of bool or integer
tensors on 1.13's CPU), nbx's answer is compared with PyTorch's padding of the element
indices (float64, exact), gathered from the input: the same PyTorch rule, every dtype.
"""
import math

import torch
import torch.nn.functional as F

from torch_diff_compare import EXACT
from torch_diff_gen import ALL, S
from torch_diff_ops import SUM, op
from torch_diff_ops_inplace import out_form, with_out


def dim_of(g, rank, extra=0):
    r = max(rank + extra, 1)
    return g.int(-r, r - 1)


def mostly_same_dtype(g, d):
    return d if g.chance(0.8) else g.pick(ALL)


# ---- joining and splitting ----
def gen_cat(g):
    rank = g.int(1, 4)
    base = g.shape(rank=rank, max_numel=120)
    dim = dim_of(g, rank)
    d = g.pick(ALL)
    xs = []
    for _ in range(g.int(1, 4)):
        s = list(base)
        s[dim] = g.pick([0, 1, 2, 3, 5])
        if g.chance(0.05): s[(dim + 1) % rank] += 1  # sizes differ: refused alike
        if g.chance(0.08): s = [0]  # the legacy empty input, skipped
        xs.append(g.tensor(s, mostly_same_dtype(g, d)))
    return xs, {"n": len(xs), "dim": dim}


def gen_stack(g):
    s = g.shape(max_rank=3, max_numel=120)
    d = g.pick(ALL)
    xs = [g.tensor(s, mostly_same_dtype(g, d)) for _ in range(g.int(1, 4))]
    return xs, {"n": len(xs), "dim": dim_of(g, len(s), 1)}


def cat_call(x, a, out=None):
    return torch.cat(list(x), a["dim"], out=out) if out is not None else torch.cat(list(x), a["dim"])


def stack_call(x, a, out=None):
    return torch.stack(list(x), a["dim"], out=out) if out is not None else \
        torch.stack(list(x), a["dim"])


def gen_split(g):
    s = g.shape(min_rank=1, max_numel=200)
    dim = dim_of(g, len(s))
    n = s[dim]
    if g.chance(0.5):
        return [g.tensor(s, g.pick(ALL))], {"dim": dim, "size": g.int(0, n + 2), "sizes": None}
    sizes, left = [], n
    while left > 0:
        k = g.int(0, left)
        sizes.append(k)
        left -= k
    if g.chance(0.1): sizes.append(1)  # the sum is wrong: refused alike
    return [g.tensor(s, g.pick(ALL))], {"dim": dim, "size": None, "sizes": sizes}


def split_call(x, a):
    return tuple(torch.split(x[0], a["size"] if a["sizes"] is None else a["sizes"], a["dim"]))


def gen_chunk(g):
    s = g.shape(min_rank=1, max_numel=200)
    return [g.tensor(s, g.pick(ALL))], {"chunks": g.int(0 if g.chance(0.05) else 1, 7),
                                        "dim": dim_of(g, len(s))}


def gen_meshgrid(g):
    d = g.pick(ALL)
    xs = [g.tensor(g.pick([[], [g.int(0, 5)]]), d) for _ in range(g.int(1, 3))]
    return xs, {"n": len(xs), "indexing": g.pick(["ij", "xy"])}


op("cat", gen_cat, cat_call, EXACT, 40)
op("cat_out", with_out(gen_cat, cat_call), out_form(cat_call), EXACT, 25)
op("stack", gen_stack, stack_call, EXACT, 30)
op("stack_out", with_out(gen_stack, stack_call), out_form(stack_call), EXACT, 20)
op("split", gen_split, split_call, EXACT, 30)
op("chunk", gen_chunk, lambda x, a: tuple(torch.chunk(x[0], a["chunks"], a["dim"])), EXACT, 30)
op("meshgrid", gen_meshgrid,
   lambda x, a: tuple(torch.meshgrid(*x, indexing=a["indexing"])), EXACT, 24)


# ---- repeating ----
def gen_repeat(g):
    s = g.shape(max_rank=3, max_numel=60)
    reps = [g.int(0, 3) for _ in range(max(len(s), 1) + g.int(0, 2))]
    return [g.tensor(s, g.pick(ALL))], {"repeats": reps}


def gen_tile(g):
    s = g.shape(max_rank=3, max_numel=60)
    return [g.tensor(s, g.pick(ALL))], {"dims": [g.int(0, 3) for _ in range(g.int(0, 4))]}


def gen_repeat_interleave(g):
    s = g.shape(min_rank=1, max_rank=3, max_numel=60)
    dim = dim_of(g, len(s)) if g.chance(0.7) else None
    n = s[dim] if dim is not None else math.prod(s)
    if g.chance(0.5):
        return [g.tensor(s, g.pick(ALL))], {"repeats": g.int(-1 if g.chance(0.05) else 0, 3),
                                            "dim": dim}
    count = 1 if g.chance(0.3) else n
    reps = g.tensor([count] if g.chance(0.8) else [], "int64",
                    values=[g.int(0, 3) for _ in range(count)], view="contiguous")
    if count == 1 and g.chance(0.5): reps = g.tensor([], "int64", values=[g.int(0, 3)])
    return [g.tensor(s, g.pick(ALL)), reps], {"repeats": None, "dim": dim}


def repeat_interleave_call(x, a):
    reps = x[1] if a["repeats"] is None else a["repeats"]
    return torch.repeat_interleave(x[0], reps, dim=a["dim"])


op("repeat", gen_repeat, lambda x, a: x[0].repeat(*a["repeats"]), EXACT, 30)
op("tile", gen_tile, lambda x, a: torch.tile(x[0], a["dims"]), EXACT, 24)
op("repeat_interleave", gen_repeat_interleave, repeat_interleave_call, EXACT, 30)


# ---- reordering ----
def some_dims(g, rank):
    dims = [d for d in range(max(rank, 1)) if g.chance(0.5)]
    dims = [d - max(rank, 1) if g.chance(0.3) else d for d in dims]
    if dims and g.chance(0.05): dims.append(dims[0])  # named twice: refused alike
    return dims


def gen_flip(g):
    s = g.shape()
    return [g.tensor(s, g.pick(ALL))], {"dims": some_dims(g, len(s))}


def gen_roll(g):
    s = g.shape()
    if g.chance(0.3):
        return [g.tensor(s, g.pick(ALL))], {"shifts": [g.int(-9, 9)], "dims": []}
    dims = [dim_of(g, len(s)) for _ in range(g.int(1, 3))]
    return [g.tensor(s, g.pick(ALL))], {"shifts": [g.int(-9, 9) for _ in dims], "dims": dims}


def gen_rot90(g):
    s = g.shape(min_rank=2)
    d0 = dim_of(g, len(s))
    d1 = dim_of(g, len(s))
    if d0 % len(s) == d1 % len(s) and g.chance(0.8): d1 = (d0 + 1) % len(s)
    return [g.tensor(s, g.pick(ALL))], {"k": g.int(-5, 5), "dims": [d0, d1]}


def gen_pixel_shuffle(g):
    r = g.int(1, 3)
    batch = [g.pick([1, 2, 3]) for _ in range(g.int(0, 2))]
    c = g.int(0, 2) * r * r + (1 if g.chance(0.05) else 0)
    return [g.tensor(batch + [c, g.int(1, 4), g.int(1, 4)], g.pick(ALL))], {"factor": r}


def gen_pixel_unshuffle(g):
    r = g.int(1, 3)
    batch = [g.pick([1, 2, 3]) for _ in range(g.int(0, 2))]
    h, w = g.int(0, 3) * r, g.int(1, 3) * r + (1 if g.chance(0.05) else 0)
    return [g.tensor(batch + [g.int(1, 3), h, w], g.pick(ALL))], {"factor": r}


op("flip", gen_flip, lambda x, a: torch.flip(x[0], a["dims"]), EXACT, 30)
op("roll", gen_roll,
   lambda x, a: torch.roll(x[0], a["shifts"], a["dims"]) if a["dims"] else
   torch.roll(x[0], a["shifts"]), EXACT, 30)
op("rot90", gen_rot90, lambda x, a: torch.rot90(x[0], a["k"], a["dims"]), EXACT, 30)
def pixel(f, up):
    """2.x's pixel_(un)shuffle; 1.13 returns an empty input unchanged (2.x reshapes it)."""
    def call(x, a):
        t, r = x[0], a["factor"]
        out = f(t, r)
        if t.numel() or t.dim() < 3: return out
        c, h, w = t.shape[-3:]
        tail = [c // (r * r), h * r, w * r] if up else [c * r * r, h // r, w // r]
        return torch.empty(list(t.shape[:-3]) + tail, dtype=t.dtype)
    return call


op("pixel_shuffle", gen_pixel_shuffle, pixel(F.pixel_shuffle, True), EXACT, 24)
op("pixel_unshuffle", gen_pixel_unshuffle, pixel(F.pixel_unshuffle, False), EXACT, 24)


# ---- diagonals and windows ----
def two_dims(g, rank):
    d1 = dim_of(g, rank)
    d2 = dim_of(g, rank)
    if d1 % rank == d2 % rank and g.chance(0.8): d2 = (d1 + 1) % rank
    return d1, d2


def gen_diagonal(g):
    s = g.shape(min_rank=2)
    d1, d2 = two_dims(g, len(s))
    return [g.tensor(s, g.pick(ALL))], {"offset": g.int(-4, 4), "dim1": d1, "dim2": d2}


def gen_diag_embed(g):
    s = g.shape(min_rank=1, max_rank=3, max_numel=100)
    d1, d2 = two_dims(g, len(s) + 1)
    return [g.tensor(s, g.pick(ALL))], {"offset": g.int(-3, 3), "dim1": d1, "dim2": d2}


def gen_trace(g):
    s = g.shape(rank=2) if g.chance(0.95) else g.shape(rank=g.pick([1, 3]))
    return [g.tensor(s, g.pick(ALL))], {}


def gen_narrow_copy(g):
    s = g.shape(min_rank=1)
    dim = dim_of(g, len(s))
    n = s[dim]
    start = g.int(-n, n) if n else 0
    length = g.int(0, n - (start % n if n and start < 0 else start) + (1 if g.chance(0.05) else 0))
    return [g.tensor(s, g.pick(ALL))], {"dim": dim, "start": start, "length": max(length, 0)}


def gen_unfold(g):
    s = g.shape(max_rank=3)
    dim = dim_of(g, len(s))
    n = s[dim] if s else 1
    return [g.tensor(s, g.pick(ALL))], {"dim": dim, "size": g.int(0, n + (1 if g.chance(0.05) else 0)),
                                        "step": g.int(1, 3)}


def gen_triangle(g):
    return [], {"row": g.int(-1 if g.chance(0.03) else 0, 9), "col": g.int(0, 9),
                "offset": g.int(-10, 10)}


op("diagonal", gen_diagonal,
   lambda x, a: torch.diagonal(x[0], a["offset"], a["dim1"], a["dim2"]), EXACT, 30)
op("diag_embed", gen_diag_embed,
   lambda x, a: torch.diag_embed(x[0], a["offset"], a["dim1"], a["dim2"]), EXACT, 30)
def trace_call(x, a):
    """torch.trace; a bool matrix as PyTorch's CUDA trace computes it (diagonal().sum(), int64):
    the CPU kernel has no bool dispatch."""
    t = x[0]
    if t.dtype == torch.bool and t.dim() == 2: return t.diagonal().sum()
    return torch.trace(t)


op("trace", gen_trace, trace_call, SUM, 30)
def narrow_copy_call(x, a):
    """2.x's narrow_copy, narrow().clone(): 1.13's CPU kernel copies some transposed inputs
    wrongly (int8 [1, 33, 8, 2] transposed, dim 3: most elements differ)."""
    torch.narrow_copy(x[0], a["dim"], a["start"], a["length"])  # its argument checks
    return x[0].narrow(a["dim"], a["start"], a["length"]).clone()


op("narrow_copy", gen_narrow_copy, narrow_copy_call, EXACT, 24)
op("unfold", gen_unfold, lambda x, a: x[0].unfold(a["dim"], a["size"], a["step"]), EXACT, 30)
op("tril_indices", gen_triangle, lambda x, a: torch.tril_indices(a["row"], a["col"], a["offset"]),
   EXACT, 20)
op("triu_indices", gen_triangle, lambda x, a: torch.triu_indices(a["row"], a["col"], a["offset"]),
   EXACT, 20)


# ---- padding ----
def gen_pad(g):
    mode = g.pick(["constant", "constant", "reflect", "replicate", "circular"])
    d = g.pick(ALL)
    if mode == "constant":
        s = g.shape(min_rank=1, max_rank=4, max_numel=200)
        pads = [g.int(-2, 3) for _ in range(2 * g.int(1, len(s)))]
        value = {"bool": g.chance(0.5)}.get(d, g.int(-3, 3) if "int" in d else g.pick([2.5, -1.0]))
        return [g.tensor(s, d)], {"mode": mode, "pads": pads, "value": S(value)}
    k = g.int(1, 3)
    s = [g.int(0 if g.chance(0.1) else 1, 3)] * (g.int(0, 1)) + \
        [g.int(1, 4) for _ in range(k + 1)]
    pads = []
    for i in range(k):
        n = s[len(s) - 1 - i]
        top = n - 1 if mode == "reflect" else n
        pair = [g.int(-1, top + (1 if g.chance(0.05) else 0)) for _ in range(2)]
        kept = n - sum(max(-p, 0) for p in pair)
        if mode == "circular" and max(pair) > kept:  # nbx refuses wrapping past the crop
            pair = [max(p, 0) for p in pair]
        pads += pair
    return [g.tensor(s, d)], {"mode": mode, "pads": pads, "value": S(0)}


def circular_2x(t, pads):
    """PyTorch 2.x's _pad_circular: crop by the negative pads, then wrap around what is left
    (1.13 takes only batched inputs and reads uninitialised memory for negative pads)."""
    for i in range(len(pads) // 2):
        d, left, right = t.dim() - 1 - i, pads[2 * i], pads[2 * i + 1]
        n = t.shape[d]
        if n + left + right < 0 or left > n or right > n:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        t = t.narrow(d, max(-left, 0), n - max(-left, 0) - max(-right, 0))
        parts = [t.narrow(d, t.shape[d] - left, left)] if left > 0 else []
        parts += [t] + ([t.narrow(d, 0, right)] if right > 0 else [])
        t = torch.cat(parts, d)
    return t


def pad_call(x, a):
    t, pads = x[0], a["pads"]
    if a["mode"] == "constant":
        try:
            return F.pad(t, pads, "constant", a["value"])
        except RuntimeError as e:  # 2.x takes a size-0 result; 1.13 refuses it
            if "negative output size" not in str(e): raise
            shape = list(t.shape)
            for i in range(len(pads) // 2):
                shape[-1 - i] += pads[2 * i] + pads[2 * i + 1]
            if min(shape) < 0: raise
            return torch.empty(shape, dtype=t.dtype)
    if a["mode"] == "circular":
        k = len(pads) // 2
        if not (1 <= k <= 3 and t.dim() in (k + 1, k + 2)):
            raise NotImplementedError("Only 2D, 3D, 4D, 5D padding with non-constant padding")
        return circular_2x(t, pads)
    try:
        return F.pad(t, pads, a["mode"], a["value"])
    except RuntimeError as e:
        if "not implemented for" not in str(e): raise
    # No kernel for this dtype: PyTorch's padding of the element indices, gathered (exact).
    idx = torch.arange(t.numel(), dtype=torch.float64).reshape(t.shape)
    where = F.pad(idx, pads, a["mode"]).long()
    return t.flatten()[where.flatten()].reshape(where.shape)


op("pad", gen_pad, pad_call, EXACT, 60)

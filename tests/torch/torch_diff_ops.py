"""The op table of the PyTorch differential test: one line per op.

    op(name, generator, torch_call, tolerance, count)

`name` is the runner's op name (torch_diff_ops.cpp has the nbx call under the same name);
`generator(g)` draws (inputs, attrs) from a torch_diff_gen.Gen; `torch_call(x, a)` computes
PyTorch's answer from the built inputs `x` (tensors, Python scalars or None) and the attrs
`a`; `tolerance` is a torch_diff_compare.Tol. A new elementwise op is one line in each table.
"""
import math

import numpy
import torch
import torch.nn.functional as F

from torch_diff_compare import (EXACT, Tol, abs_problem, abs_problem_of, alpha_magnitude,
                                arg_magnitude, bounds, erfinv_problem, gamma_problem,
                                largest_input, lerp_problem, log_magnitude, moments_problem,
                                norm_problem, operand_magnitude, row_magnitude,
                                softmax_magnitude, tensors, unit_magnitude)
from torch_diff_gen import ALL, DTYPES, FLOATS, INTS, NUMERIC, S, TensorIn

OPS = {}


def op(name, generator, torch_call, tol=EXACT, count=24, upcast=None):
    """`upcast`: compute float16/bfloat16 cases in float32 and round once (default: for every
    op with a tolerance; not for ops with dtype-dependent constants, rms_norm's eps)."""
    OPS[name] = (generator, torch_call, tol, count, tol.ulps > 0 if upcast is None else upcast)


def dt(name):
    return None if name is None else DTYPES[name]


def dims_or_none(a):
    return a["dims"] if a["dims"] else None


def wrapped(s, other, floating=False):
    """A Python scalar as the 0-d tensor PyTorch would promote it to against `other`, for
    the torch functions that take no Python scalar (maximum, atan2, logical_and …): nbx takes
    a host scalar for every operand (README: extensions). `floating`: the op computes in
    floating point, so an integer scalar keeps its value (atan2(uint8, -7) reads -7.0)."""
    if not isinstance(s, (bool, int, float)): return s
    if floating and not other.is_floating_point() and not isinstance(s, bool):
        return torch.tensor(float(s), dtype=torch.get_default_dtype(), device=other.device)
    if other.dim() == 0: return torch.tensor(s).to(torch.result_type(other, s)).to(other.device)
    elif isinstance(s, bool): dtype = torch.bool
    elif isinstance(s, int): dtype = torch.int64  # cast by the op, not here (atan2 of uint8)
    else: dtype = torch.float64 if other.is_floating_point() else torch.get_default_dtype()
    return torch.tensor(s, dtype=dtype, device=other.device)


def both_tensors(f, floating=False):
    def call(x, a):
        p, q = x
        return f(wrapped(p, q, floating), wrapped(q, p, floating))
    return call


def with_alpha(f):
    def call(x, a):
        p, q = x
        return f(p if isinstance(p, torch.Tensor) else wrapped(p, q), q, alpha=a["alpha"])
    return call


def reflected(f, rf):
    """f(tensor, scalar-or-tensor); a scalar first operand through Python's reflected
    operator (rf), so PyTorch sees a Python number exactly as nbx sees a host scalar."""
    def call(x, a):
        p, q = x
        return rf(q, p) if not isinstance(p, torch.Tensor) else f(p, q)
    return call


def torch_remainder(x, a):
    """PyTorch 2.x's floating remainder, fmod(a, b) moved to b's sign (1.13 computes
    a - b * floor(a / b), NaN for a subnormal b: README, 1.13 vs 2.x)."""
    out = reflected(torch.remainder, lambda t, s: s % t)(x, a)
    if not out.is_floating_point(): return out
    # in float64 through numpy (libm's exact fmod: 1.13's returns NaN for a subnormal b)
    p, q = (torch.as_tensor(v).to(out.dtype).double().cpu().numpy() for v in x)
    with numpy.errstate(invalid="ignore"):  # fmod(inf, b) is NaN, as it should be
        m = torch.from_numpy(numpy.asarray(numpy.fmod(p, q)))
    q = torch.from_numpy(numpy.asarray(q))
    return torch.where((m != 0) & ((q < 0) != (m < 0)), m + q, m).to(out.dtype).expand(
        out.shape).to(out.device)


def torch_lerp(x, a):
    """PyTorch 2.x's lerp: start + w (end - start) where |w| < 0.5, else end - (end - start)
    (1 - w) (1.13 tests w < 0.5, so w <= -0.5 takes the first form: README)."""
    out = torch.lerp(*x)
    s, e, w = (v.to(out.dtype) if isinstance(v, torch.Tensor) else v for v in x)
    w = torch.as_tensor(w, dtype=out.dtype, device=out.device)
    return torch.where(w.abs() < 0.5, s + w * (e - s), e - (e - s) * (1 - w)).expand(out.shape)


def torch_linspace(x, a):
    """PyTorch 2.x's linspace (1.13 rounds integer steps differently: README): integer
    dtypes take start and end converted to the dtype, a float64 step, and truncate
    start + i * step (the first half) or end - (steps - 1 - i) * step (the second)."""
    dtype, steps = dt(a["dtype"]), a["steps"]
    if dtype.is_floating_point or steps < 2:
        return torch.linspace(a["start"], a["end"], steps, dtype=dtype)
    start = torch.tensor(int(a["start"])).to(dtype).item()
    end = torch.tensor(int(a["end"])).to(dtype).item()
    step = (float(end) - float(start)) / (steps - 1)
    i = torch.arange(steps, dtype=torch.float64)
    vals = torch.where(i < steps // 2, start + step * i, end - step * (steps - 1 - i))
    return vals.to(torch.int64).to(dtype)


# ---- generators ----
def unary(dtypes=ALL, profile="mixed", attrs=lambda g: {}):
    def gen(g):
        shape = g.big_shape() if g.chance(0.04) else g.shape()
        return [g.tensor(shape, g.pick(dtypes), profile)], attrs(g)
    return gen


def operand_pair(g, dtypes, profile_a, profile_b, scalars=True):
    """Two broadcasting operands, one of them a host scalar at times."""
    da = g.pick(dtypes)
    db = da if g.chance(0.5) else g.pick(dtypes)
    sa, sb = g.broadcast_pair()
    a = g.tensor(sa, da, profile_a)
    b = g.tensor(sb, db, profile_b(db) if callable(profile_b) else profile_b)
    if scalars and g.chance(0.25):
        kind = g.pick(["bool", "int", "int", "float", "float"])
        pb = profile_b(db) if callable(profile_b) else profile_b
        if g.chance(0.7): b = g.scalar(kind, pb if pb in ("positive", "shift") else "mixed")
        else: a = g.scalar(kind)
    return [a, b]


def binary(dtypes=ALL, profile_a="mixed", profile_b="mixed", scalars=True, attrs=lambda g: {}):
    def gen(g):
        return operand_pair(g, dtypes, profile_a, profile_b, scalars), attrs(g)
    return gen


def int_divisor(dtype):
    return "positive" if dtype in INTS and dtype != "bool" else "mixed"


def alpha(g):
    return {"alpha": S(g.pick([1, 1, 2, -3, 0.5, True]))}


def gen_where(g):
    s1, s2 = g.broadcast_pair()
    s0 = g.pick([s1, s2, [1] * len(s1)])
    d1 = g.pick(ALL)
    d2 = d1 if g.chance(0.6) else g.pick(ALL)
    b = g.tensor(s2, d2) if g.chance(0.8) else g.scalar(g.pick(["int", "float", "bool"]))
    return [g.tensor(s0, "bool"), g.tensor(s1, d1), b], {}


def gen_masked_fill(g):
    s = g.shape()
    mask_shape = [1 if g.chance(0.3) else d for d in s][g.int(0, len(s)) if s else 0:]
    x = g.tensor(s, g.pick(ALL))
    if g.chance(0.8): value = g.scalar(g.pick(["int", "float", "bool"]))
    else: value = g.tensor([], g.pick(ALL))
    return [x, g.tensor(mask_shape, "bool"), value], {}


def gen_clamp(g):
    s = g.shape()
    d = g.pick(ALL)
    def bound():
        if g.chance(0.5): return g.scalar(g.pick(["int", "float", "bool"]))
        bs = [1 if g.chance(0.3) else k for k in s]
        return g.tensor(bs, d if g.chance(0.7) else g.pick(ALL))
    lo, hi = bound(), bound()
    which = g.pick(["both", "min", "max"])
    return [g.tensor(s, d), lo if which != "max" else None, hi if which != "min" else None], {}


def torch_clamp(x, a):
    t, lo, hi = x
    if isinstance(lo, torch.Tensor) or isinstance(hi, torch.Tensor):
        lo = None if lo is None else wrapped(lo, t)
        hi = None if hi is None else wrapped(hi, t)
    return torch.clamp(t, lo, hi)


def same_dtype_operands(n, dtypes, profiles=None):
    def gen(g, extra=lambda g: {}):
        d = g.pick(dtypes)
        s = g.shape()
        outs = []
        for i in range(n):
            di = d if g.chance(0.85) else g.pick(dtypes)
            si = [1 if g.chance(0.25) else k for k in s]
            outs.append(g.tensor(si, di, profiles[i] if profiles else "mixed"))
        return outs
    return gen


def gen_lerp(g):
    x = same_dtype_operands(2, FLOATS + ["int32"])(g)
    w = g.tensor([1 if g.chance(0.3) else k for k in x[0].base.shape], x[0].dtype, "unit") \
        if g.chance(0.5) else g.pick([0.25, 0.5, 0.75, 1.5, -0.5])
    return x + [w], {}


def gen_addc(g):
    return same_dtype_operands(3, NUMERIC, ["mixed", "mixed", "positive"])(g), \
        {"value": S(g.pick([1, 2, -1, 0.5, -0.25]))}


def gen_cast(g):
    src, dst = g.pick(ALL), g.pick(ALL)
    s = g.shape()
    if src in FLOATS and dst in INTS:
        # float → integer is defined only inside the target's range (README).
        lo, hi = torch.iinfo(DTYPES[dst]).min, torch.iinfo(DTYPES[dst]).max
        lo, hi = max(lo, -60000), min(hi, 60000)
        vals = [g.r.uniform(lo * 0.9, hi * 0.9) for _ in range(2 * math.prod(s) + 8)]
        return [g.tensor(s, src, values=vals)], {"dtype": dst}
    return [g.tensor(s, src)], {"dtype": dst}


def gen_reshape(g):
    s = g.shape(min_rank=1)
    n = math.prod(s)
    target = g.pick([[n], [-1], [1, n], [n, 1]] + ([[2, n // 2]] if n % 2 == 0 else []))
    return [g.tensor(s, g.pick(ALL))], {"shape": target}


def requested_dtype(g, input_dtype):
    """A `dtype=` for sum, cumsum …: any, but no integer for a floating input (the cast
    first would be undefined past the integer's range: README)."""
    return g.pick(FLOATS + ["bool"] if input_dtype in FLOATS else ALL)


def reduce_gen(dtypes=ALL, typed=False, extra=lambda g, rank: {}, profile="mixed"):
    def gen(g):
        s = g.big_shape() if g.chance(0.05) else g.shape()
        rank = len(s)
        dims = [d for d in range(rank) if g.chance(0.5)]
        dims = [d - rank if g.chance(0.3) else d for d in dims]
        attrs = {"dims": dims, "keepdim": g.chance(0.5)}
        d = g.pick(dtypes)
        if typed and g.chance(0.3): attrs["dtype"] = requested_dtype(g, d)
        attrs.update(extra(g, rank))
        return [g.tensor(s, d, profile)], attrs
    return gen


def dim_gen(dtypes=ALL, keepdim=True, typed=False, optional=False, profile="mixed"):
    def gen(g):
        s = g.big_shape() if g.chance(0.05) else g.shape()
        rank = len(s)
        d = g.int(-max(rank, 1), max(rank, 1) - 1)
        attrs = {"dim": None if optional and g.chance(0.3) else d}
        if keepdim: attrs["keepdim"] = g.chance(0.5)
        d = g.pick(dtypes)
        if typed: attrs["dtype"] = requested_dtype(g, d) if g.chance(0.3) else None
        return [g.tensor(s, d, profile)], attrs
    return gen


def one_dim_at_a_time(f, typed=False):
    """any, all, prod over a dim list, one dim at a time: PyTorch's prod takes one dim, and
    1.13's any/all take one (2.2+ a list: README, 1.13 vs 2.x)."""
    def call(x, a):
        t, dims = x[0], a["dims"]
        kw = {"dtype": dt(a.get("dtype"))} if typed else {}
        if not dims:
            out = f(t, **kw)
            return out.reshape([1] * t.dim()) if a["keepdim"] else out
        for d in sorted({d % max(t.dim(), 1) for d in dims}, reverse=True):
            t = f(t, d, keepdim=a["keepdim"], **kw)
        return t
    return call


def lse(x, a):
    t = x[0]
    if not t.is_floating_point(): t = t.to(torch.float32)  # 2.x: integers as float32
    dims = a["dims"] or list(range(t.dim()))
    if t.dim() == 0: return torch.logsumexp(t, 0, keepdim=a["keepdim"])
    return torch.logsumexp(t, dims, keepdim=a["keepdim"])


def var_like(f):
    return lambda x, a: f(x[0], dim=dims_or_none(a), correction=a["correction"],
                          keepdim=a["keepdim"])


def gen_softmax(g):
    s = g.big_shape() if g.chance(0.15) else g.shape(min_rank=1)
    rank = len(s)
    dtype = g.pick(FLOATS + ["int32"])
    attrs = {"dim": g.int(-rank, rank - 1), "dtype": g.pick(FLOATS) if g.chance(0.2) else None}
    return [g.tensor(s, dtype)], attrs


def gen_masked_softmax(g):
    s = g.big_shape() if g.chance(0.1) else g.shape(min_rank=1)
    rank = len(s)
    mask = g.tensor([1 if g.chance(0.3) else k for k in s], "bool") if g.chance(0.7) else None
    return [g.tensor(s, g.pick(FLOATS)), mask], {
        "dim": g.int(-rank, rank - 1), "scale": S(g.pick([1.0, 0.125, 2.0])), "log": g.chance(0.3)}


def gen_tempered_softmax(g):
    s = g.big_shape() if g.chance(0.15) else g.shape(min_rank=1)
    rank = len(s)
    # "moderate": no near-max values, which x / T overflows in PyTorch's float32 (NaN rows)
    # and not in the host's float64 (README: a float64 reference).
    return [g.tensor(s, g.pick(FLOATS), "moderate")], {
        "dim": g.int(-rank, rank - 1), "temperature": S(g.pick([0.7, 2.0, 0.25, 1.3]))}


def torch_masked_softmax(x, a):
    t, mask = x
    compute = torch.float32 if t.dtype in (torch.float16, torch.bfloat16) else t.dtype
    y = t.to(compute) * a["scale"]
    if mask is not None: y = y.masked_fill(mask, -math.inf)
    out = torch.log_softmax(y, a["dim"]) if a["log"] else torch.softmax(y, a["dim"])
    if mask is not None:  # excluded elements and fully masked rows: 0 (log: -inf)
        dead = torch.broadcast_to(mask, y.shape).all(dim=a["dim"], keepdim=True)
        out = out.masked_fill(dead | mask, -math.inf if a["log"] else 0.0)
    return out.to(t.dtype)


def gen_norm_layer(g, with_bias=True):
    s = g.big_shape() if g.chance(0.1) else g.shape(min_rank=1, zero_size=0.02)
    k = g.int(1, min(len(s), 2))
    ns = s[-k:]
    d = g.pick(FLOATS + ["int32"])
    # Finite weights: PyTorch folds them into scale * x + shift, where an infinite weight
    # gives inf - inf (NaN) and the direct formula an infinity.
    w = g.tensor(ns, d, "normal") if g.chance(0.7) else None
    b = g.tensor(ns, d, "normal") if with_bias and g.chance(0.7) else None
    return [g.tensor(s, d, "moderate"), w, b], {"normalized_shape": ns}


def gen_layer_norm(g):
    x, attrs = gen_norm_layer(g)
    attrs["eps"] = S(g.pick([1e-5, 1e-3, 0.1]))
    return x, attrs


def gen_rms_norm(g):
    x, attrs = gen_norm_layer(g, with_bias=False)
    attrs["eps"] = S(g.pick([1e-6, 1e-3])) if g.chance(0.6) else None
    return x[:2], attrs


def torch_rms_norm(x, a):
    t, w = x
    eps = a["eps"] if a["eps"] is not None else torch.finfo(t.dtype).eps
    if hasattr(F, "rms_norm"): return F.rms_norm(t, a["normalized_shape"], w, eps)
    # PyTorch 2.4+'s composite rms_norm, for 1.13 (README: 1.13 vs 2.x): float32 for halves.
    compute = torch.float32 if t.dtype in (torch.float16, torch.bfloat16) else t.dtype
    dims = list(range(-len(a["normalized_shape"]), 0))
    y = t.to(compute)
    y = y * torch.rsqrt(y.pow(2).mean(dims, keepdim=True) + eps)
    if w is not None: y = y * w.to(compute)
    return y.to(t.dtype)


def gen_group_norm(g):
    n, c = g.pick([1, 2, 3]), g.pick([2, 4, 6, 8])
    s = [n, c] + g.shape(max_rank=2, max_numel=64, zero_size=0)
    d = g.pick(FLOATS)
    groups = g.pick([q for q in (1, 2, c, 3) if q <= c])
    w = g.tensor([c], d, "normal") if g.chance(0.7) else None
    b = g.tensor([c], d, "normal") if g.chance(0.7) else None
    return [g.tensor(s, d, "moderate"), w, b], {"num_groups": groups, "eps": S(1e-5)}


def gen_batch_norm(g):
    c = g.pick([1, 3, 4])
    s = [g.pick([1, 2, 5]), c] + g.shape(max_rank=2, max_numel=64, zero_size=0)
    d = g.pick(FLOATS)
    return [g.tensor(s, d, "moderate"), g.tensor([c], d, "moderate" if g.chance(0.2) else "normal"),
            g.tensor([c], d, "positive"),
            g.tensor([c], d, "normal") if g.chance(0.7) else None,
            g.tensor([c], d, "normal") if g.chance(0.7) else None], {"eps": S(g.pick([1e-5, 0.1]))}


def mat_dtype(g):
    return g.pick(FLOATS * 2 + INTS + ["bool"])


def value_profile(d):
    return "small" if d in INTS else ("mixed" if d == "bool" else "normal")


def mat(g, shape, d):
    # Floats with NaN/inf now and then; integers small (products wrap alike, but stay
    # readable).
    return g.tensor(shape, d, "mixed" if d in FLOATS and g.chance(0.1) else value_profile(d))


def mk(g):
    return g.pick([1, 2, 3, 5, 8, 16, 17, 33]), g.pick([1, 2, 4, 7, 16, 31]), \
        g.pick([1, 3, 8, 16, 19, 40])


def gen_matmul(g):
    d = mat_dtype(g)
    m, k, n = mk(g)
    batch_a = [1 if g.chance(0.3) else g.pick([2, 3]) for _ in range(g.int(0, 2))]
    batch_b = [1 if g.chance(0.3) else q for q in batch_a][g.int(0, len(batch_a)):]
    form = g.pick(["vv", "mv", "vm", "mm", "batched"])
    sa = {"vv": [k], "mv": [m, k], "vm": [k], "mm": [m, k], "batched": batch_a + [m, k]}[form]
    sb = {"vv": [k], "mv": [k], "vm": [k, n], "mm": [k, n], "batched": batch_b + [k, n]}[form]
    return [mat(g, sa, d), mat(g, sb, d if g.chance(0.9) else mat_dtype(g))], {}


def gen_fixed_product(shapes, scaled=False):
    def gen(g):
        d = mat_dtype(g)
        m, k, n = mk(g)
        b = g.pick([1, 2, 3])
        dims = {"m": m, "k": k, "n": n, "b": b}
        xs = [mat(g, [dims[c] for c in spec], d) for spec in shapes]
        attrs = {}
        if scaled:
            ints = d in INTS or d == "bool"
            attrs = {"beta": S(g.pick([1, 0, 2, -1] if ints else [1.0, 0.0, 0.5, -2.0])),
                     "alpha": S(g.pick([1, 3, -1] if ints else [1.0, 0.25, -1.5]))}
            # the addend broadcasts to the product's shape
            full = xs[0].base.shape
            xs[0] = mat(g, [1 if g.chance(0.3) else q for q in full], d)
        return xs, attrs
    return gen


def gen_linear(g):
    d = g.pick(FLOATS)
    m, k, n = mk(g)
    lead = g.shape(max_rank=2, max_numel=16, zero_size=0.05)
    w = mat(g, g.pick([[n, k], [k]]), d)
    bias = mat(g, [n] if len(w.base.shape) == 2 else [], d) if g.chance(0.6) else None
    return [mat(g, lead + [k], d), w, bias], {}


def torch_linear(x, a):
    t, w, b = x
    if w.dim() == 1:  # PyTorch 1.13's F.linear takes a 2-d weight only (2.x: 1-d too)
        out = torch.matmul(t, w)
        return out + b if b is not None else out
    return F.linear(t, w, b)


def gen_full(g):
    d = g.pick(ALL)
    return [], {"shape": g.shape(), "dtype": d, "value": S(g.scalar(g.pick(["int", "float", "bool"])))}


def gen_creation_shape(g):
    return [], {"shape": g.shape(), "dtype": g.pick(ALL)}


def gen_arange(g):
    d = g.pick(NUMERIC)
    if g.chance(0.5):
        start, end, step = g.int(-20, 20), g.int(-40, 40), g.pick([1, 2, 3, -1, -4])
    else:
        start, end = g.r.uniform(-10, 10), g.r.uniform(-10, 10)
        step = g.pick([0.5, 0.3, -0.25, 1.7, 2.0])
    if (end - start) * step < 0: end = start + 17 * step
    return [], {"start": S(start), "end": S(end), "step": S(step), "dtype": d}


def torch_arange(x, a):
    """PyTorch's arange. An integer dtype truncates the step first; 2.11's CPU then divides by
    it before checking it (SIGFPE for step 0.5 into int64): its refusal raised here, as 1.13
    raises it."""
    dtype = dt(a["dtype"])
    if not dtype.is_floating_point and int(a["step"]) == 0:
        raise RuntimeError("step must be nonzero")
    return torch.arange(a["start"], a["end"], a["step"], dtype=dtype)


def gen_linspace(g):
    d = g.pick(NUMERIC)
    if g.chance(0.5): start, end = g.int(-30, 30), g.int(-30, 30)
    else: start, end = g.r.uniform(-5, 5), g.r.uniform(-5, 5)
    if d == "uint8" and isinstance(start, float): start, end = abs(start), abs(end)
    return [], {"start": S(start), "end": S(end), "steps": g.pick([0, 1, 2, 3, 7, 50, 101]),
                "dtype": d}


def gen_full_like(g):
    return [g.tensor(g.shape(), g.pick(ALL))], {"value": S(g.scalar(g.pick(["int", "float"])))}


def gen_tri(g):
    s = g.shape(min_rank=2) if g.chance(0.9) else g.shape(max_rank=1)
    return [g.tensor(s, g.pick(ALL))], {"diagonal": g.int(-3, 3)}


def index_tensor(g, shape, bound, negative=False):
    d = g.pick(["int64", "int64", "int32"])
    lo = -bound if negative else 0
    if bound == 0:
        vals = [0] * math.prod(shape)
    else:
        vals = [g.int(lo, bound - 1) for _ in range(max(math.prod(shape), 1))]
    if vals and g.chance(0.05): vals[g.int(0, len(vals) - 1)] = g.pick([bound, -bound - 1, 10**6])
    return g.tensor(shape, d, values=vals, view=g.pick(["contiguous", "sliced", "transposed"]))


def gen_index_select(g):
    s = g.shape(zero_size=0.02)
    rank = len(s)
    dim = g.int(-max(rank, 1), max(rank, 1) - 1)
    size = s[dim] if rank else 1
    if rank == 0:  # one in-range index: PyTorch 1.13 corrupts its heap on more (2.x refuses)
        return [g.tensor(s, g.pick(ALL)), g.tensor(g.pick([[1], []]), "int64", values=[0])], \
            {"dim": dim}
    idx_shape = g.pick([[g.int(0, 9)], [g.int(0, 9)], []])
    return [g.tensor(s, g.pick(ALL)), index_tensor(g, idx_shape, size)], {"dim": dim}


def gen_gather(g):
    s = g.shape(min_rank=1, zero_size=0.02)
    rank = len(s)
    dim = g.int(-rank, rank - 1)
    idx_shape = [g.int(0, q) if i != dim % rank else g.int(0, 6) for i, q in enumerate(s)]
    return [g.tensor(s, g.pick(ALL)), index_tensor(g, idx_shape, s[dim])], {"dim": dim}


def gen_take_along_dim(g):
    s = g.shape(min_rank=1, zero_size=0.02)
    rank = len(s)
    if g.chance(0.25):
        return [g.tensor(s, g.pick(ALL)), index_tensor(g, [g.int(0, 7)], math.prod(s))], \
            {"dim": None}
    dim = g.int(-rank, rank - 1)
    idx_shape = [1 if g.chance(0.3) else q for q in s]
    idx_shape[dim] = g.int(0, 5)
    return [g.tensor(s, g.pick(ALL)), index_tensor(g, idx_shape, s[dim])], {"dim": dim}


def gen_embedding(g):
    rows, width = g.pick([1, 5, 17, 100]), g.pick([1, 3, 8, 64])
    idx = index_tensor(g, g.shape(max_rank=2, max_numel=40), rows)
    pad = g.int(-rows, rows - 1) if g.chance(0.3) else None
    return [idx, g.tensor([rows, width], g.pick(FLOATS + INTS))], {"padding_idx": pad}


def gen_take(g):
    s = g.shape(zero_size=0.02)
    n = math.prod(s)
    return [g.tensor(s, g.pick(ALL)), index_tensor(g, g.shape(max_rank=2, max_numel=30), n,
                                                   negative=True)], {}


def long_index(f):
    """PyTorch's gather, take and take_along_dim take int64 indices only; nbx takes int32 as
    well (README: extensions), so the reference reads int32 indices as int64."""
    def call(x, a):
        return f(x[0], x[1].long(), a)
    return call


def gen_logit(g):
    x, _ = unary(profile="unit")(g)
    return x, {"eps": S(g.pick([1e-6, 0.01, 0.25])) if g.chance(0.4) else None}


def gen_isclose(g):
    # x[1] broadcasts to x[0]'s shape, never beyond: PyTorch's equal_nan path ands the NaN
    # masks in place into self's shape (2.x too), so it refuses a larger other.
    d = g.pick(ALL)
    s = g.shape()
    x = [g.tensor(s, d), g.tensor([1 if g.chance(0.25) else k for k in s], d)]
    d = x[0].base.dtype
    if g.chance(0.5):  # near x[0], so that "close" is not always false
        base = x[0].base.clone()
        if d.is_floating_point:
            wiggle = 1 + 1e-4 * torch.randn(base.shape, generator=g.tg, dtype=torch.float64)
            base = (base.double() * wiggle).to(d)
        x[1] = TensorIn(base, x[0].views)
    else:
        x[1] = TensorIn(x[1].base.to(d), x[1].views)  # PyTorch's isclose takes one dtype
    return x, {"rtol": S(g.pick([1e-5, 1e-3, 0.0, 0.1])), "atol": S(g.pick([1e-8, 0.0, 0.5])),
               "equal_nan": g.chance(0.5)}


def gen_clamp_one(g):
    s = g.shape()
    d = g.pick(ALL)
    if g.chance(0.5): bound = g.scalar(g.pick(["int", "float", "bool"]))
    else: bound = g.tensor([1 if g.chance(0.3) else k for k in s], d if g.chance(0.7) else g.pick(ALL))
    return [g.tensor(s, d), bound], {}


def torch_log1p(x, a):
    """2.x's log1p: 1.13's float64 kernel overflows for x past ~8.9e307 (1 + x first)."""
    out = torch.log1p(x[0])
    if out.dtype == torch.float64:
        big = torch.isinf(out) & torch.isfinite(x[0])
        out = torch.where(big, torch.log(x[0].double()), out)
    return out


def torch_eye(x, a):
    """2.x's eye; 1.13's CPU has no bfloat16 eye (ones and zeros: made in float32, exact)."""
    dtype, m = dt(a["dtype"]), a["n"] if a["m"] is None else a["m"]
    if dtype == torch.bfloat16: return torch.eye(a["n"], m).to(dtype)
    return torch.eye(a["n"], m, dtype=dtype)


def gen_aminmax(g):
    x, a = dim_gen(optional=True)(g)
    return x, a


def gen_like(g):
    d = g.pick(ALL)
    return [g.tensor(g.shape(), g.pick(ALL))], {"dtype": d if g.chance(0.5) else None}


def gen_full_like_typed(g):
    x, a = gen_like(g)
    a["value"] = S(g.scalar(g.pick(["int", "float", "bool"])))
    return x, a


def gen_eye(g):
    n = g.pick([0, 1, 2, 3, 5, 17, 64])
    m = g.pick([None, 0, 1, 4, 33])
    return [], {"n": n, "m": m, "dtype": g.pick(ALL)}


def torch_aminmax(x, a):
    """(min, max) as 2.x's aminmax meta function shapes them: without a dim and with keepdim
    every dim kept as 1 (1.13 keeps none), and a 0-d input stays 0-d over dim 0 (1.13: [1])."""
    t, dim = x[0], a["dim"]
    if dim is None:
        lo, hi = torch.aminmax(t)
        if a["keepdim"]: lo, hi = (v.reshape([1] * t.dim()) for v in (lo, hi))
        return lo, hi
    lo, hi = torch.aminmax(t, dim=dim, keepdim=a["keepdim"])
    return (lo.reshape([]), hi.reshape([])) if t.dim() == 0 else (lo, hi)


def var_mean_call(x, a):
    return torch.var_mean(x[0], dim=dims_or_none(a), correction=a["correction"],
                          keepdim=a["keepdim"])


def std_mean_call(x, a):
    return torch.std_mean(x[0], dim=dims_or_none(a), correction=a["correction"],
                          keepdim=a["keepdim"])


def correction(g, rank):
    return {"correction": S(g.pick([1, 0, 2]))}



# ---- tolerances ----
T1 = Tol(1)  # one rounding: add, mul, div …
T2 = Tol(2)  # a libm function or two roundings
T4 = Tol(4)  # transcendental compositions (gelu, mish …)
SUM = Tol(2, abs_problem)  # accumulations: sum, matmul …, scaled by the |x| problem

# ---- unary elementwise ----
op("neg", unary(NUMERIC + ["bool"]), lambda x, a: torch.neg(x[0]))
op("abs", unary(), lambda x, a: torch.abs(x[0]))
op("exp", unary(), lambda x, a: torch.exp(x[0]), Tol(2, log_magnitude))
op("exp2", unary(), lambda x, a: torch.exp2(x[0]), Tol(2, log_magnitude))
op("log", unary(), lambda x, a: torch.log(x[0]), T2)
op("log2", unary(), lambda x, a: torch.log2(x[0]), T2)
op("sqrt", unary(), lambda x, a: torch.sqrt(x[0]), T1)
op("rsqrt", unary(), lambda x, a: torch.rsqrt(x[0]), T2)
op("reciprocal", unary(), lambda x, a: torch.reciprocal(x[0]), T1)
op("sin", unary(), lambda x, a: torch.sin(x[0]), Tol(2, arg_magnitude))
op("cos", unary(), lambda x, a: torch.cos(x[0]), Tol(2, arg_magnitude))
op("tan", unary(), lambda x, a: torch.tan(x[0]), Tol(2, arg_magnitude))
# tanh: 4, two approximations compared (NVIDIA's Vulkan tanh and PyTorch's CUDA tanhf are
# each within 2 ulps; they were 3 apart on the H200).
op("tanh", unary(), lambda x, a: torch.tanh(x[0]), T4)
op("sigmoid", unary(), lambda x, a: torch.sigmoid(x[0]), T2)
op("erf", unary(), lambda x, a: torch.erf(x[0]), T2)
op("relu", unary(), lambda x, a: torch.relu(x[0]))
op("silu", unary(), lambda x, a: F.silu(x[0]), T2)
op("mish", unary(), lambda x, a: F.mish(x[0]), T4)
op("selu", unary(), lambda x, a: torch.selu(x[0]), Tol(2, alpha_magnitude))
op("hardsigmoid", unary(), lambda x, a: F.hardsigmoid(x[0]), T1)
op("hardswish", unary(), lambda x, a: F.hardswish(x[0]), T2)
op("floor", unary(), lambda x, a: torch.floor(x[0]))
op("ceil", unary(), lambda x, a: torch.ceil(x[0]))
op("round", unary(), lambda x, a: torch.round(x[0]))
op("trunc", unary(), lambda x, a: torch.trunc(x[0]))
op("isnan", unary(), lambda x, a: torch.isnan(x[0]))
op("isinf", unary(), lambda x, a: torch.isinf(x[0]))
op("isfinite", unary(), lambda x, a: torch.isfinite(x[0]))
op("logical_not", unary(), lambda x, a: torch.logical_not(x[0]))
op("bitwise_not", unary(), lambda x, a: torch.bitwise_not(x[0]))
op("gelu", unary(attrs=lambda g: {"approximate": g.pick(["none", "tanh"])}),
   lambda x, a: F.gelu(x[0], approximate=a["approximate"]), Tol(4, arg_magnitude))
op("softplus", unary(attrs=lambda g: {"beta": S(g.pick([1.0, 2.0, 0.5])),
                                      "threshold": S(g.pick([20.0, 5.0]))}),
   lambda x, a: F.softplus(x[0], a["beta"], a["threshold"]), T4)
op("leaky_relu", unary(attrs=lambda g: {"negative_slope": S(g.pick([0.01, 0.2, 1.5]))}),
   lambda x, a: F.leaky_relu(x[0], a["negative_slope"]), T1)
op("elu", unary(attrs=lambda g: {"alpha": S(g.pick([1.0, 0.5, 2.0]))}),
   lambda x, a: F.elu(x[0], a["alpha"]), Tol(2, alpha_magnitude))
op("celu", unary(attrs=lambda g: {"alpha": S(g.pick([1.0, 0.5, 2.0]))}),
   lambda x, a: F.celu(x[0], a["alpha"]), Tol(2, alpha_magnitude))
op("nan_to_num", unary(attrs=lambda g: {"nan": S(g.pick([0.0, 1.5])),
                                        "posinf": S(100.0) if g.chance(0.5) else None,
                                        "neginf": S(-7.0) if g.chance(0.5) else None}),
   lambda x, a: torch.nan_to_num(x[0], a["nan"], a["posinf"], a["neginf"]))


# ---- issue 13: GLU and friends ----
def gen_gated(any_dim):
    """One fused input: its split dim (the last, or any for glu) doubled to be even, odd at
    times (refused alike); integers at times (refused alike)."""
    def gen(g):
        s = g.shape(min_rank=1, max_numel=300)
        dim = g.int(-len(s), len(s) - 1) if any_dim else -1
        if g.chance(0.9): s[dim] *= 2
        dtype = g.pick(FLOATS * 4 + ["int32"])
        return [g.tensor(s, dtype)], {"dim": dim}
    return gen


def halves(t, dim):
    """a, b: the halves of t along dim; RuntimeError for an odd size, as F.glu raises (x[..., :d]
    and x[..., d:] of a size-1 dim would broadcast instead)."""
    n = t.shape[dim]
    if n % 2: raise RuntimeError(f"halving dimension must be even, but it is size {n}")
    return t.narrow(dim, 0, n // 2), t.narrow(dim, n // 2, n // 2)


def gated_problem(ctx):
    """|a| |b|: gelu(a) = a (1 + erf(a / sqrt 2)) / 2 cancels for a < 0 (gelu's arg_magnitude),
    and the product scales that absolute error by |b|."""
    a, b = halves(tensors(ctx)[0].double().abs(), -1)
    return a * b


def torch_threshold(x, a):
    """F.threshold with both scalars in x's dtype, as PyTorch's CUDA kernel (and 1.13's CPU
    one for bfloat16) converts them: 1.13's CPU has no float16 kernel, so float16 runs in
    float32 on the scalars rounded to float16 (torch.full refuses what overflows it, as
    PyTorch's conversion does)."""
    t, th, v = x[0], a["threshold"], a["value"]
    if t.dtype != torch.float16: return F.threshold(t, th, v)
    th, v = (torch.full([], s, dtype=torch.float16).item() for s in (th, v))
    return F.threshold(t.float(), th, v).half()


op("glu", gen_gated(True), lambda x, a: F.glu(x[0], a["dim"]), T4)
op("silu_and_mul", gen_gated(False), lambda x, a: F.silu(halves(x[0], -1)[0]) * halves(x[0], -1)[1],
   T4)
op("gelu_and_mul", gen_gated(False),
   lambda x, a: F.gelu(halves(x[0], -1)[0]) * halves(x[0], -1)[1], Tol(4, gated_problem))
op("gelu_tanh_and_mul", gen_gated(False),
   lambda x, a: F.gelu(halves(x[0], -1)[0], approximate="tanh") * halves(x[0], -1)[1],
   Tol(4, gated_problem))
op("log_sigmoid", unary(FLOATS * 4 + ["int64"]), lambda x, a: F.logsigmoid(x[0]), T4)
op("threshold", unary(ALL, attrs=lambda g: {
    "threshold": S(g.pick([0, 2, -1, 0.5, 0.1, -2.5, 1e-3, 300])),
    "value": S(g.pick([0, -1, 7, 0.25, -1.5, 1e5, float("inf")]))}), torch_threshold, EXACT, 40)

# ---- binary elementwise ----
op("add", binary(attrs=alpha), with_alpha(torch.add), SUM, 40)
op("sub", binary(attrs=alpha), with_alpha(torch.sub), Tol(2, abs_problem_of(with_alpha(torch.add))),
   40)
op("mul", binary(), reflected(torch.mul, lambda t, s: s * t), T1, 40)
op("div", binary(), reflected(torch.div, lambda t, s: s / t), T1, 40)
op("floor_divide", binary(NUMERIC, "small", int_divisor),
   reflected(torch.floor_divide, lambda t, s: s // t), T1, 40)
op("remainder", binary(NUMERIC, "small", int_divisor), torch_remainder, Tol(1, arg_magnitude), 40)
op("pow", binary(profile_b=lambda d: "nonneg" if d in INTS else "mixed"),
   reflected(torch.pow, lambda t, s: s ** t), Tol(2, log_magnitude), 40)
op("maximum", binary(), both_tensors(torch.maximum), EXACT, 40)
op("minimum", binary(), both_tensors(torch.minimum), EXACT, 40)
op("atan2", binary(), both_tensors(torch.atan2, floating=True), T2, 40)
op("bitwise_and", binary(), reflected(torch.bitwise_and, lambda t, s: s & t), EXACT, 30)
op("bitwise_or", binary(), reflected(torch.bitwise_or, lambda t, s: s | t), EXACT, 30)
op("bitwise_xor", binary(), reflected(torch.bitwise_xor, lambda t, s: s ^ t), EXACT, 30)
op("bitwise_left_shift", binary(INTS, "mixed", lambda d: "shift"),
   reflected(torch.bitwise_left_shift, lambda t, s: s << t), EXACT, 30)
op("bitwise_right_shift", binary(INTS, "mixed", lambda d: "shift"),
   reflected(torch.bitwise_right_shift, lambda t, s: s >> t), EXACT, 30)
op("logical_and", binary(), both_tensors(torch.logical_and), EXACT, 30)
op("logical_or", binary(), both_tensors(torch.logical_or), EXACT, 30)
op("logical_xor", binary(), both_tensors(torch.logical_xor), EXACT, 30)
op("eq", binary(), reflected(torch.eq, lambda t, s: t == s), EXACT, 30)
op("ne", binary(), reflected(torch.ne, lambda t, s: t != s), EXACT, 30)
op("lt", binary(), reflected(torch.lt, lambda t, s: t > s), EXACT, 30)
op("le", binary(), reflected(torch.le, lambda t, s: t >= s), EXACT, 30)
op("gt", binary(), reflected(torch.gt, lambda t, s: t < s), EXACT, 30)
op("ge", binary(), reflected(torch.ge, lambda t, s: t <= s), EXACT, 30)

# ---- ternary elementwise ----
op("where", gen_where, lambda x, a: torch.where(x[0], x[1], wrapped(x[2], x[1])), EXACT, 40)
op("masked_fill", gen_masked_fill, lambda x, a: torch.masked_fill(*x), EXACT, 40)
op("clamp", gen_clamp, torch_clamp, EXACT, 40)
op("lerp", gen_lerp, torch_lerp, Tol(2, lerp_problem), 30)
op("addcmul", gen_addc, lambda x, a: torch.addcmul(*x, value=a["value"]), SUM, 30)
op("addcdiv", gen_addc, lambda x, a: torch.addcdiv(*x, value=a["value"]), SUM, 30)

# ---- casts, copies and views ----
op("cast", gen_cast, lambda x, a: x[0].to(dt(a["dtype"])), EXACT, 150)
op("to", gen_cast, lambda x, a: x[0].to(dt(a["dtype"])), EXACT, 30)
op("copy", unary(), lambda x, a: x[0].clone(), EXACT, 20)
op("contiguous", unary(), lambda x, a: x[0].contiguous(), EXACT, 20)
op("reshape", gen_reshape, lambda x, a: x[0].reshape(a["shape"]), EXACT, 20)
op("flatten", unary(), lambda x, a: x[0].flatten(), EXACT, 20)

# ---- reductions ----
op("sum", reduce_gen(typed=True), lambda x, a: torch.sum(
    x[0], dim=dims_or_none(a), keepdim=a["keepdim"], dtype=dt(a.get("dtype"))), SUM, 40)
op("prod", reduce_gen(typed=True, profile="unit"), one_dim_at_a_time(torch.prod, typed=True),
   Tol(4, abs_problem), 30)
op("mean", reduce_gen(typed=True), lambda x, a: torch.mean(
    x[0], dim=dims_or_none(a), keepdim=a["keepdim"], dtype=dt(a.get("dtype"))), SUM, 40)
op("amax", reduce_gen(), lambda x, a: torch.amax(x[0], a["dims"], a["keepdim"]), EXACT, 30)
op("amin", reduce_gen(), lambda x, a: torch.amin(x[0], a["dims"], a["keepdim"]), EXACT, 30)
op("logsumexp", reduce_gen(), lse, Tol(4, row_magnitude), 30)
op("any", reduce_gen(), one_dim_at_a_time(torch.any), EXACT, 30)
op("all", reduce_gen(), one_dim_at_a_time(torch.all), EXACT, 30)
op("max_dim", dim_gen(), lambda x, a: torch.max(x[0], a["dim"], a["keepdim"]), EXACT, 30)
op("min_dim", dim_gen(), lambda x, a: torch.min(x[0], a["dim"], a["keepdim"]), EXACT, 30)
op("argmax", dim_gen(optional=True), lambda x, a: torch.argmax(x[0], a["dim"], a["keepdim"]),
   EXACT, 30)
op("argmin", dim_gen(optional=True), lambda x, a: torch.argmin(x[0], a["dim"], a["keepdim"]),
   EXACT, 30)
op("var", reduce_gen(profile="moderate", extra=lambda g, r: {"correction": S(g.pick([1, 0, 2]))}),
   var_like(torch.var), Tol(8, abs_problem), 30)
op("std", reduce_gen(profile="moderate", extra=lambda g, r: {"correction": S(g.pick([1, 0, 2]))}),
   var_like(torch.std), Tol(8, abs_problem), 30)
op("norm", reduce_gen(profile="moderate", extra=lambda g, r: {"p": S(g.pick([2.0, 1.0, 0.0, math.inf, -math.inf,
                                                         3.0, 0.5]))}),
   lambda x, a: torch.linalg.vector_norm(x[0], a["p"], dims_or_none(a), a["keepdim"]),
   Tol(8), 30)
op("count_nonzero", reduce_gen(), lambda x, a: torch.count_nonzero(x[0], a["dims"] or None),
   EXACT, 20)

# ---- scans ----
op("cumsum", dim_gen(keepdim=False, typed=True),
   lambda x, a: torch.cumsum(x[0], a["dim"], dtype=dt(a["dtype"])), SUM, 30)
op("cumprod", dim_gen(keepdim=False, typed=True, profile="unit"),
   lambda x, a: torch.cumprod(x[0], a["dim"], dtype=dt(a["dtype"])), Tol(4, abs_problem), 30)
op("cummax", dim_gen(keepdim=False), lambda x, a: torch.cummax(x[0], a["dim"]), EXACT, 25)
op("cummin", dim_gen(keepdim=False), lambda x, a: torch.cummin(x[0], a["dim"]), EXACT, 25)

# ---- softmax family ----
op("softmax", gen_softmax, lambda x, a: torch.softmax(x[0], a["dim"], dtype=dt(a["dtype"])),
   Tol(4, softmax_magnitude), 30)
op("log_softmax", gen_softmax,
   lambda x, a: torch.log_softmax(x[0], a["dim"], dtype=dt(a["dtype"])),
   Tol(4, row_magnitude), 30)
op("scaled_masked_softmax", gen_masked_softmax, torch_masked_softmax,
   Tol(4, row_magnitude), 30)
op("softmax_with_temperature", gen_tempered_softmax,
   lambda x, a: torch.softmax(x[0] / a["temperature"], a["dim"]),
   Tol(4, lambda ctx: ctx.e.abs() * largest_input(ctx) / ctx.a["temperature"]), 30)

# ---- normalizations ----
op("layer_norm", gen_layer_norm,
   lambda x, a: F.layer_norm(x[0], a["normalized_shape"], x[1], x[2], a["eps"]),
   Tol(8, norm_problem), 30)
op("rms_norm", gen_rms_norm, torch_rms_norm, Tol(8, norm_problem), 30, upcast=False)
op("group_norm", gen_group_norm,
   lambda x, a: torch.group_norm(x[0], a["num_groups"], x[1], x[2], a["eps"]),
   Tol(8, norm_problem), 25)
op("batch_norm", gen_batch_norm,
   lambda x, a: F.batch_norm(x[0], x[1], x[2], x[3], x[4], False, 0.0, a["eps"]),
   Tol(8, norm_problem), 25)

# ---- matrix products ----
op("matmul", gen_matmul, lambda x, a: torch.matmul(*x), SUM, 40)
op("mm", gen_fixed_product(["mk", "kn"]), lambda x, a: torch.mm(*x), SUM)
op("mv", gen_fixed_product(["mk", "k"]), lambda x, a: torch.mv(*x), SUM)
op("bmm", gen_fixed_product(["bmk", "bkn"]), lambda x, a: torch.bmm(*x), SUM)
op("dot", gen_fixed_product(["k", "k"]), lambda x, a: torch.dot(*x), SUM)
op("addmm", gen_fixed_product(["mn", "mk", "kn"], True),
   lambda x, a: torch.addmm(*x, beta=a["beta"], alpha=a["alpha"]), SUM)
op("baddbmm", gen_fixed_product(["bmn", "bmk", "bkn"], True),
   lambda x, a: torch.baddbmm(*x, beta=a["beta"], alpha=a["alpha"]), SUM)
op("addmv", gen_fixed_product(["m", "mk", "k"], True),
   lambda x, a: torch.addmv(*x, beta=a["beta"], alpha=a["alpha"]), SUM)
op("addr", gen_fixed_product(["mn", "m", "n"], True),
   lambda x, a: torch.addr(*x, beta=a["beta"], alpha=a["alpha"]), SUM)
op("linear", gen_linear, torch_linear, SUM)

# ---- creation ----
op("full", gen_full, lambda x, a: torch.full(a["shape"], a["value"], dtype=dt(a["dtype"])))
op("zeros", gen_creation_shape, lambda x, a: torch.zeros(a["shape"], dtype=dt(a["dtype"])), count=10)
op("ones", gen_creation_shape, lambda x, a: torch.ones(a["shape"], dtype=dt(a["dtype"])), count=10)
op("arange", gen_arange, torch_arange, Tol(2, bounds), 40)
op("linspace", gen_linspace, torch_linspace, Tol(2, bounds), 40)
op("full_like", gen_full_like, lambda x, a: torch.full_like(x[0], a["value"]))
op("triu", gen_tri, lambda x, a: torch.triu(x[0], a["diagonal"]))
op("tril", gen_tri, lambda x, a: torch.tril(x[0], a["diagonal"]))

# ---- index reads ----
op("index_select", gen_index_select,
   lambda x, a: torch.index_select(x[0], a["dim"], x[1]), EXACT, 30)
op("gather", gen_gather, long_index(lambda t, i, a: torch.gather(t, a["dim"], i)), EXACT, 30)
op("take_along_dim", gen_take_along_dim,
   long_index(lambda t, i, a: torch.take_along_dim(t, i, a["dim"]) if a["dim"] is not None
              else torch.take_along_dim(t.reshape(-1), i.reshape(-1), 0)), EXACT, 30)
op("embedding", gen_embedding, lambda x, a: F.embedding(x[0], x[1], a["padding_idx"]), EXACT, 30)
op("take", gen_take, long_index(lambda t, i, a: torch.take(t, i)), EXACT, 30)

# ---- issue 11: the everyday unary ops ----
op("log1p", unary(), torch_log1p, T2)
op("expm1", unary(), lambda x, a: torch.expm1(x[0]), T2)
op("log10", unary(), lambda x, a: torch.log10(x[0]), T2)
op("sign", unary(), lambda x, a: torch.sign(x[0]))
op("sgn", unary(), lambda x, a: torch.sgn(x[0]))
op("signbit", unary(), lambda x, a: torch.signbit(x[0]))
op("asin", unary(), lambda x, a: torch.asin(x[0]), T2)
op("acos", unary(), lambda x, a: torch.acos(x[0]), T2)
op("atan", unary(), lambda x, a: torch.atan(x[0]), T2)
op("sinh", unary(), lambda x, a: torch.sinh(x[0]), Tol(2, log_magnitude))
op("cosh", unary(), lambda x, a: torch.cosh(x[0]), Tol(2, log_magnitude))
op("asinh", unary(), lambda x, a: torch.asinh(x[0]), T2)
op("acosh", unary(), lambda x, a: torch.acosh(x[0]), T2)
op("atanh", unary(), lambda x, a: torch.atanh(x[0]), T2)
op("erfc", unary(), lambda x, a: torch.erfc(x[0]), T4)
op("erfinv", unary(profile="unit"), lambda x, a: torch.erfinv(x[0]), Tol(4, erfinv_problem))
op("lgamma", unary(), lambda x, a: torch.lgamma(x[0]), Tol(4, gamma_problem(0)))
op("digamma", unary(), lambda x, a: torch.digamma(x[0]), Tol(4, gamma_problem(1)))
op("square", unary(), lambda x, a: torch.square(x[0]), T1)
op("frac", unary(), lambda x, a: torch.frac(x[0]))
op("deg2rad", unary(), lambda x, a: torch.deg2rad(x[0]), T2)
op("rad2deg", unary(), lambda x, a: torch.rad2deg(x[0]), T2)
op("logit", gen_logit, lambda x, a: torch.logit(x[0], a["eps"]), Tol(4, unit_magnitude))
op("sinc", unary(), lambda x, a: torch.sinc(x[0]), Tol(4, arg_magnitude))
op("isposinf", unary(), lambda x, a: torch.isposinf(x[0]))
op("isneginf", unary(), lambda x, a: torch.isneginf(x[0]))

# ---- issue 11: the everyday binary ops ----
op("fmod", binary(NUMERIC, "small", int_divisor), both_tensors(torch.fmod),
   Tol(1, arg_magnitude), 30)
op("hypot", binary(FLOATS), both_tensors(torch.hypot), T2, 30)
op("copysign", binary(), both_tensors(torch.copysign, floating=True), EXACT, 30)
op("logaddexp", binary(FLOATS), both_tensors(torch.logaddexp), Tol(2, operand_magnitude), 30)
op("logaddexp2", binary(FLOATS), both_tensors(torch.logaddexp2), Tol(2, operand_magnitude), 30)
op("xlogy", binary(), both_tensors(torch.xlogy, floating=True), T2, 30)
op("nextafter", binary(["float32", "float64"]), both_tensors(torch.nextafter), EXACT, 30)
op("float_power", binary(profile_b=lambda d: "nonneg" if d in INTS else "mixed"),
   both_tensors(torch.float_power), Tol(2, log_magnitude), 30)
op("isclose", gen_isclose, lambda x, a: torch.isclose(x[0], x[1], a["rtol"], a["atol"],
                                                      a["equal_nan"]), EXACT, 30)
op("allclose", gen_isclose, lambda x, a: torch.tensor(torch.allclose(
    x[0], x[1], a["rtol"], a["atol"], a["equal_nan"])), EXACT, 20)
op("clamp_min", gen_clamp_one, lambda x, a: torch.clamp_min(x[0], x[1]), EXACT, 30)
op("clamp_max", gen_clamp_one, lambda x, a: torch.clamp_max(x[0], x[1]), EXACT, 30)

# ---- issue 11: reductions and scans ----
op("max_all", unary(), lambda x, a: torch.max(x[0]), EXACT, 20)
op("min_all", unary(), lambda x, a: torch.min(x[0]), EXACT, 20)
op("aminmax", gen_aminmax, torch_aminmax, EXACT, 30)
op("nansum", reduce_gen(typed=True), lambda x, a: torch.nansum(
    x[0], dim=dims_or_none(a), keepdim=a["keepdim"], dtype=dt(a.get("dtype"))), SUM, 30)
op("nanmean", reduce_gen(typed=True), lambda x, a: torch.nanmean(
    x[0], dim=dims_or_none(a), keepdim=a["keepdim"], dtype=dt(a.get("dtype"))), SUM, 30)
op("var_mean", reduce_gen(profile="moderate", extra=correction), var_mean_call,
   Tol(8, moments_problem(False)), 30)
op("std_mean", reduce_gen(profile="moderate", extra=correction), std_mean_call,
   Tol(8, moments_problem(True)), 30)
op("logcumsumexp", dim_gen(keepdim=False), lambda x, a: torch.logcumsumexp(x[0], a["dim"]),
   Tol(4, row_magnitude), 30)

# ---- issue 11: creation ----
op("zeros_like", gen_like, lambda x, a: torch.zeros_like(x[0], dtype=dt(a["dtype"])), count=15)
op("ones_like", gen_like, lambda x, a: torch.ones_like(x[0], dtype=dt(a["dtype"])), count=15)
op("full_like_typed", gen_full_like_typed,
   lambda x, a: torch.full_like(x[0], a["value"], dtype=dt(a["dtype"])), count=20)
op("eye", gen_eye, torch_eye, count=15)

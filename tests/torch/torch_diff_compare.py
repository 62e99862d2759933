"""Comparing nbx's outputs with PyTorch's: the tolerance table and the element check.

Integer, bool and index outputs are exact; so are float outputs of ops whose tolerance is
EXACT (NaN equals NaN; the sign of zero is not compared). Any other float output element
passes when

    |nbx - torch| <= ulps * (eps(out) * |torch| + eps(compute) * scale) + ulps * sub(out)

with eps the dtype's machine epsilon (one table below), compute = float32 for float16 and
bfloat16 outputs (both libraries compute them in float32) and the output dtype otherwise,
sub the smallest subnormal (so a result flushed to zero fails), and `scale` the op's
conditioning (0 for a correctly rounded op): the |x| problem of a sum or product, the
argument of sin, the row's magnitude of a softmax. NaN and ±inf must sit in the same places.
"""
import math

import torch

EPS = {torch.float16: 2.0 ** -10, torch.bfloat16: 2.0 ** -7, torch.float32: 2.0 ** -23,
       torch.float64: 2.0 ** -52}
FLOAT64_MIN_ULPS = 8
SUBNORMAL = {torch.float16: 2.0 ** -24, torch.bfloat16: 2.0 ** -133, torch.float32: 2.0 ** -149,
             torch.float64: 5e-324}


class Tol:
    def __init__(self, ulps, scale=None):
        self.ulps, self.scale = ulps, scale


EXACT = Tol(0)


class Ctx:
    """What a scale function sees: the op's torch call, its inputs and attrs, and PyTorch's
    answer (float64)."""

    def __init__(self, call, x, a, expected):
        self.call, self.x, self.a, self.e = call, x, a, expected


def tensors(ctx):
    return [t for t in ctx.x if isinstance(t, torch.Tensor)]


def growth(ctx):
    """log2 of the longest accumulation: a tree or cascade sum's error grows so."""
    biggest = max([t.numel() for t in tensors(ctx)] + [1])
    return math.log2(biggest / max(ctx.e.numel(), 1) + biggest ** 0.5 + 1) + 1


def magnitude(v):
    if isinstance(v, torch.Tensor):
        return v.double().abs() if v.dtype != torch.bool else v.double()
    if isinstance(v, (int, float)) and not isinstance(v, bool): return abs(float(v))
    return v


def abs_problem_of(call=None):
    """The op (or `call`, e.g. add for sub) on |inputs| and |scalars| in float64: the
    magnitude of every term a sum, product or matrix product adds, times the accumulation's
    growth."""
    def scale(ctx):
        attrs = {k: magnitude(v) if k in ("alpha", "beta", "value", "start", "step") else v
                 for k, v in ctx.a.items()}
        if attrs.get("dtype") is not None: attrs["dtype"] = "float64"
        try:
            out = (call or ctx.call)([magnitude(v) for v in ctx.x], attrs)
        except (RuntimeError, TypeError, ValueError):
            return by_output_magnitude(ctx) * growth(ctx)
        out = out[0] if isinstance(out, tuple) else out
        return out.double().abs() * growth(ctx)
    return scale


abs_problem = abs_problem_of()


def lerp_problem(ctx):
    """start + weight * (end - start): |start| + |weight| (|end| + |start|)."""
    s, e, w = (magnitude(v) for v in ctx.x)
    return s + w * (e + s)


def largest_input(ctx):
    finite = [t.double().abs()[torch.isfinite(t.double())] for t in tensors(ctx)]
    finite = [f for f in finite if f.numel()]
    return max(float(f.max()) for f in finite) if finite else 0.0


def arg_magnitude(ctx):
    """|x| where x broadcasts to the output (sin, cos, tan, remainder: the error of the
    argument's reduction grows with |x|), else the largest |x|."""
    x = tensors(ctx)[0].double().abs()
    try:
        return torch.broadcast_to(x, ctx.e.shape)
    except RuntimeError:
        return largest_input(ctx)


def log_magnitude(ctx):
    """|y ln y|: exp, exp2 and pow carry the argument's rounding into the exponent."""
    return ctx.e.abs() * ctx.e.abs().log().abs()


def row_magnitude(ctx):
    """The largest |x|: log_softmax and logsumexp subtract the row's maximum."""
    return largest_input(ctx) * abs(ctx.a.get("scale", 1.0))


def softmax_magnitude(ctx):
    return ctx.e.abs() * row_magnitude(ctx)


def bounds(ctx):
    """|start| + |end|: arange and linspace values are start + i * step."""
    return abs(ctx.a["start"]) + abs(ctx.a["end"])


def alpha_magnitude(ctx):
    """|alpha|: PyTorch's elu family computes alpha * (exp(x) - 1), an absolute error of
    eps * |alpha| near 0 (selu: alpha * scale = 1.7581)."""
    return abs(ctx.a.get("alpha", 1.7580993408473766))


def channel_view(v, x):
    """A per-channel vector [C] shaped to broadcast against x [N, C, *]."""
    return v.double().abs().reshape([1, -1] + [1] * (x.dim() - 2))


def norm_problem(ctx):
    """(max |x| of the row) / sqrt(var + eps) * |weight| + |bias|: the magnitude every
    output of a normalization carries (a row of equal values included)."""
    x, a = ctx.x[0].double(), ctx.a
    w = ctx.x[1] if len(ctx.x) > 1 else None
    b = ctx.x[2] if len(ctx.x) > 2 else None
    if "normalized_shape" in a or "num_groups" in a:
        rows = x.reshape(list(x.shape[:2]) + [-1]).reshape(x.shape[0], a["num_groups"], -1) \
            if "num_groups" in a else x
        dims = [-1] if "num_groups" in a else list(range(-len(a["normalized_shape"]), 0))
        eps = a.get("eps") if a.get("eps") is not None else EPS[ctx.x[0].dtype]
        mean = 0.0 if "eps" in a and "num_groups" not in a and len(ctx.x) == 2 else \
            rows.mean(dims, keepdim=True)
        spread = ((rows - mean) ** 2).mean(dims, keepdim=True) + eps
        scale = (rows.abs().amax(dims, keepdim=True) / spread.sqrt()).expand(rows.shape)
        scale = scale.reshape(x.shape)
        if "num_groups" in a:
            if w is not None: scale = scale * channel_view(w, x)
            return scale + (channel_view(b, x) if b is not None else 0.0)
    else:  # batch_norm: x, running mean, running var, weight, bias
        rm, rv, w, b = ctx.x[1], ctx.x[2], ctx.x[3], ctx.x[4]
        scale = (x.abs() + channel_view(rm, x)) / (channel_view(rv, x) + a["eps"]).sqrt()
        if w is not None: scale = scale * channel_view(w, x)
        return scale + (channel_view(b, x) if b is not None else 0.0)
    if w is not None: scale = scale * w.double().abs()
    return scale + (b.double().abs() if b is not None else 0.0)


def by_output_magnitude(ctx):
    """The largest finite |output|: normalizations, where every element carries the row's
    statistics."""
    finite = ctx.e[torch.isfinite(ctx.e)].abs()
    return float(finite.max()) if finite.numel() else 0.0


def first_difference(actual, expected, tol, ctx, alternative=None):
    """None when `actual` matches `expected` (same shape and dtype already checked), else a
    sentence naming the first differing element and both values. With an `alternative`
    answer (the flushed-subnormal one) each element may match either."""
    if actual.numel() == 0: return None
    bad, a, e, allowed = differing(actual, expected, tol, ctx)
    if alternative is not None:
        bad = bad & differing(actual, alternative, tol, Ctx(ctx.call, ctx.x, ctx.a, alternative))[0]
    return describe(bad, a, e, allowed)


def differing(actual, expected, tol, ctx):
    """(mask of the elements outside the tolerance, actual and expected in float64 or int64,
    the allowed difference or None)."""
    out_dtype = expected.dtype
    if not out_dtype.is_floating_point or tol.ulps == 0:
        if out_dtype.is_floating_point:
            a, e = actual.double(), expected.double()
            bad = ~((a == e) | (torch.isnan(a) & torch.isnan(e)))
        else:
            a, e = actual.long(), expected.long()
            bad = a != e
        return bad, a, e, None
    a, e = actual.double(), expected.double()
    nan_a, nan_e = torch.isnan(a), torch.isnan(e)
    inf_a, inf_e = torch.isinf(a), torch.isinf(e)
    bad = (nan_a != nan_e) | (inf_a != inf_e) | (inf_e & (a != e))
    finite = torch.isfinite(e) & torch.isfinite(a)
    scale = 0.0
    if tol.scale is not None:
        ctx.e = e
        scale = tol.scale(ctx)
        if isinstance(scale, torch.Tensor):
            scale = torch.where(torch.isfinite(scale), scale, torch.zeros_like(scale))
        elif not math.isfinite(scale):
            scale = 0.0
    compute = torch.float32 if out_dtype in (torch.float16, torch.bfloat16) else out_dtype
    ulps = tol.ulps
    if out_dtype == torch.float64:
        # Vulkan's float64 functions are written from + and * (GLSL has none): within ~1e-15
        # relative (tests/unit/test_vk_accuracy.cpp), a few ulps where libm gives one.
        ulps = max(ulps, FLOAT64_MIN_ULPS)
    try:
        allowed = ulps * (EPS[out_dtype] * e.abs() + EPS[compute] * scale
                              + SUBNORMAL[out_dtype])
    except RuntimeError:  # a scale that does not broadcast: the largest |output| instead
        scale = by_output_magnitude(ctx)
        allowed = ulps * (EPS[out_dtype] * e.abs() + EPS[compute] * scale
                              + SUBNORMAL[out_dtype])
    bad |= finite & ((a - e).abs() > allowed)
    return bad, a, e, allowed


def describe(bad, a, e, allowed):
    if not bool(bad.any()): return None
    flat = int(torch.nonzero(bad.flatten())[0])
    index, rest = [], flat
    for size in reversed(bad.shape):
        index.insert(0, rest % size)
        rest //= size
    where = "[" + ", ".join(str(i) for i in index) + "]"
    va, ve = a.flatten()[flat].item(), e.flatten()[flat].item()
    msg = f"{int(bad.sum())} of {bad.numel()} elements differ; first at {where}: nbx {va!r}, " \
          f"torch {ve!r}"
    if allowed is not None:
        tol = allowed.flatten()[flat].item() if isinstance(allowed, torch.Tensor) else allowed
        msg += f" (allowed {tol:.3g})"
    return msg


def operand_magnitude(ctx):
    """max |operand| per output element (logaddexp: max(a, b) + a term in [0, 1]; fmod,
    hypot): the absolute error of a sum whose terms are that large."""
    mags = [magnitude(v) for v in ctx.x if isinstance(v, (torch.Tensor, int, float))]
    out = torch.zeros(ctx.e.shape, dtype=torch.float64)
    for m in mags:
        m = torch.as_tensor(m, dtype=torch.float64)
        out = torch.maximum(out, torch.broadcast_to(torch.where(torch.isfinite(m), m, 0.0),
                                                    ctx.e.shape))
    return out


def moments_problem(root):
    """var_mean / std_mean: both outputs share one scale, the row's mean of x² (the
    variance's terms; its square root for std) plus its mean |x| (the mean's), times the
    accumulation's growth."""
    def scale(ctx):
        x, a = ctx.x[0].double(), ctx.a
        if x.dim() == 0: return float(x.abs()) + float(x * x)
        dims = a["dims"] or list(range(x.dim()))
        sq = (x * x).mean(dims, keepdim=a["keepdim"])
        return ((sq.sqrt() if root else sq) + x.abs().mean(dims, keepdim=a["keepdim"])) * \
            growth(ctx)
    return scale


def unit_magnitude(ctx):
    """1: an absolute error of eps (logit: log of a ratio near 1, where PyTorch's direct
    log(x / (1 - x)) is itself off by eps)."""
    return 1.0


def erfinv_problem(ctx):
    """|x erfinv'(x)| = |x| sqrt(pi)/2 exp(erfinv(x)^2): erfinv's condition near ±1."""
    x = torch.broadcast_to(ctx.x[0].double(), ctx.e.shape)
    return x.abs() * 0.88622692545275801 * torch.exp(ctx.e.double() ** 2)


def gamma_problem(order):
    """|x polygamma(order + 1, x)|: the condition of lgamma (order 0, through digamma) and
    digamma (order 1, through trigamma) near their roots and poles."""
    def scale(ctx):
        x = torch.broadcast_to(ctx.x[0].double(), ctx.e.shape)
        d = torch.digamma(x) if order == 0 else torch.polygamma(1, x)
        return (x * d).abs()
    return scale

"""The losses (core/ops/loss.hpp) in the PyTorch differential test, one line per op as in
torch_diff_ops.py (torch_diff_ops_loss.cpp has the nbx calls): cross_entropy (class indices
with weights, ignore_index and label smoothing; class probabilities), nll_loss, mse_loss,
l1_loss, smooth_l1_loss, binary_cross_entropy_with_logits, kl_div, every reduction.

Operands carry the general values (NaN, ±inf, ±0, subnormals) on every view; targets are
class indices in [0, C) with some ignore_index entries and, rarely, one out of range (both
sides refuse: PyTorch's IndexError, nbx's DeviceFault from gather). Extensions: int32 class
indices (read as int64 by the reference, as gather's). A float16 operand never meets another
floating dtype here: 1.13's CPU lacks several float16 loss kernels, and the driver rounds an
answer computed through float32 back to the one half dtype of the inputs, which would be wrong
where PyTorch promotes float16 with float32 to float32.

binary_cross_entropy_with_logits is PyTorch 2.x's composite (log_sigmoid of the input, then
(1 − y)·x − log σ(x)·(1 + (p − 1)·y)); 1.13 computes a different, half-rounded, formula.

Tolerances: 4 ulps of each term's magnitude summed as the reduction sums (the terms of a
cross entropy are w·(|x| + |logsumexp|) per class taken; a mean over class targets divides by
Σ w[t]), times the accumulation's growth; where the result is wider than an operand, in that
operand's precision (PyTorch computes its log_softmax, log_sigmoid, xlogy in its dtype).
"""
import torch
import torch.nn.functional as F

from torch_diff_compare import EPS, Tol, growth
from torch_diff_gen import FLOATS, NUMERIC, S
from torch_diff_ops import op

REDUCTIONS = ["none", "mean", "sum"]


def dtype_pair(g, refuse=0.05):
    """The input's dtype and another floating one for the target/weights (float16 alone)."""
    d = g.pick(NUMERIC) if g.chance(refuse) else g.pick(FLOATS)
    if d == "float16" or g.chance(0.7) or d not in FLOATS: return d, d
    return d, g.pick(["bfloat16", "float32", "float64"])


def finite_abs(t):
    t = t.double().abs()
    return torch.where(torch.isfinite(t), t, torch.zeros_like(t))


def compute(dtype):
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def narrowest(ctx, out):
    """eps of the narrowest floating operand of another dtype than the result (`out`) over
    the result's compute eps: PyTorch keeps that operand's own intermediates (log_softmax,
    log_sigmoid, xlogy) in its dtype, rounded to it. 1 when every operand has out's dtype."""
    if not out.is_floating_point: return 1.0
    eps = [EPS[v.dtype] for v in ctx.x
           if isinstance(v, torch.Tensor) and v.is_floating_point() and v.dtype != out]
    return max(eps + [EPS[compute(out)]]) / EPS[compute(out)]


def reduce_like(v, reduction, denominator=None):
    if reduction == "none": return v
    if reduction == "sum": return v.sum()
    return v.sum() / (denominator if denominator is not None else max(v.numel(), 1))


def capped(scale):
    """A magnitude past float64's range (terms near its largest value, cancelling in an
    order-dependent way) stays the largest finite value, so any finite answer passes there:
    PyTorch's own is one order's."""
    big = torch.finfo(torch.float64).max
    return torch.nan_to_num(torch.as_tensor(scale, dtype=torch.float64), nan=big, posinf=big)


# ---- cross_entropy, nll_loss ----
def gen_class(logits):
    def gen(g):
        rank = g.pick([1, 2, 2, 2, 3, 4])
        classes = 1031 if g.chance(0.04) else g.pick([1, 2, 3, 5, 8, 33])
        batch = g.pick([0] if g.chance(0.05) else [1, 2, 4, 7])
        extra = [g.pick([1, 2, 3, 5]) for _ in range(max(rank - 2, 0))]
        shape = [classes] if rank == 1 else [batch, classes] + extra
        tshape = [] if rank == 1 else [batch] + extra
        d, other = dtype_pair(g)
        reduction = g.pick(REDUCTIONS)
        smoothing = 0.0
        if logits and g.chance(0.4): smoothing = g.pick([0.1, 0.25, 0.5, 1.0])
        if logits and g.chance(0.02): smoothing = 1.5  # refused alike
        # Smoothing's lse·Σw − Σ w·x overflows for |x| near the dtype's largest value, where
        # PyTorch's Σ w·log_softmax does not (loss.hpp): no near-max logits with smoothing.
        x = g.tensor(shape, d, "moderate" if smoothing else "mixed")
        weight = g.tensor([classes], d, "positive") if g.chance(0.4) else None
        if logits and rank > 1 and g.chance(0.3):  # class probabilities: a target like x
            target = g.tensor(shape, other, "positive")
            if weight is not None and g.chance(0.3): weight = g.tensor([classes], other, "positive")
            return [x, target, weight], {"ignore_index": -100, "reduction": reduction,
                                         "label_smoothing": S(smoothing)}
        ignore = g.pick([-100, -100, 0, 2, 7])
        tdtype = g.pick(["int64"] * 6 + ["int32", "uint8"])
        if tdtype == "uint8" and ignore < 0: tdtype = "int64"  # (uint8 with rank > 2: refused)
        n = 1
        for s in tshape: n *= s
        values = [ignore if g.chance(0.2) else g.int(0, classes - 1) for _ in range(max(n, 1))]
        if n and g.chance(0.04): values[g.int(0, n - 1)] = g.pick([classes, -1])  # refused
        target = g.tensor(tshape, tdtype, values=values)
        return [x, target, weight], {"ignore_index": ignore, "reduction": reduction,
                                     "label_smoothing": S(smoothing)}
    return gen


def class_call(logits):
    def call(x, a):
        inp, target, weight = x
        if target.dtype == torch.int32: target = target.long()  # extension: int32 indices
        # PyTorch's weighted smoothing gathers the weights with the target itself, which its
        # gather refuses for uint8 ("Expected dtype int64 for index"): an artefact; nbx
        # computes it as for int64.
        if target.dtype == torch.uint8 and weight is not None and a["label_smoothing"] > 0 \
                and inp.dim() <= 2:
            target = target.long()
        if logits:
            return F.cross_entropy(inp, target, weight=weight, ignore_index=a["ignore_index"],
                                   reduction=a["reduction"], label_smoothing=a["label_smoothing"])
        return F.nll_loss(inp, target, weight=weight, ignore_index=a["ignore_index"],
                          reduction=a["reduction"])
    return call


def class_problem(ctx):
    """Σ over the classes each element takes of w·y·(|x| + |logsumexp(x)|): the magnitude of
    every term the loss adds."""
    inp, target, weight = ctx.x
    x = inp.double()
    cdim = 0 if x.dim() == 1 else 1
    classes = x.shape[cdim]
    w = finite_abs(weight) if weight is not None else torch.ones(classes, dtype=torch.float64)
    w = w.reshape([classes] + [1] * (x.dim() - cdim - 1))
    logits = ctx.call is CROSS_ENTROPY
    lse = finite_abs(torch.logsumexp(x, cdim, keepdim=True)) if logits and classes else 0.0
    term = finite_abs(x) + lse
    eps = ctx.a.get("label_smoothing", 0.0)
    if target.is_floating_point():
        out = torch.promote_types(inp.dtype, target.dtype)
        if weight is not None: out = torch.promote_types(out, weight.dtype)
        y = finite_abs(target.double() * (1 - eps) + eps / classes)
        return capped(reduce_like((y * w * term).sum(cdim), ctx.a["reduction"],
                                  x.numel() // classes if classes else 1) * growth(ctx) *
                      narrowest(ctx, out))
    t = target.long()
    kept = t != ctx.a["ignore_index"]
    safe = torch.where(kept, t, torch.zeros_like(t)).clamp(0, max(classes - 1, 0)).unsqueeze(cdim)
    picked = (torch.gather(term * w, cdim, safe) if classes else torch.zeros(safe.shape)).squeeze(cdim)
    per = picked * (1 - eps)
    if eps > 0: per = per + eps / max(classes, 1) * (term * w).sum(cdim)
    per = torch.where(kept, per, torch.zeros_like(per))
    w_t = torch.gather(w.reshape(-1), 0, safe.reshape(-1)).reshape(kept.shape) if classes else \
        torch.zeros(kept.shape, dtype=torch.float64)
    den = float(torch.where(kept, w_t, torch.zeros_like(w_t)).sum())
    return capped(reduce_like(per, ctx.a["reduction"], den if den > 0 else 1.0) * growth(ctx))


CROSS_ENTROPY = class_call(True)
op("cross_entropy", gen_class(True), CROSS_ENTROPY, Tol(4, class_problem), 60)
op("nll_loss", gen_class(False), class_call(False), Tol(4, class_problem), 40)


# ---- mse_loss, l1_loss, smooth_l1_loss, kl_div ----
def gen_pair(attrs=lambda g: {}, refuse=0.1):
    """Two operands that broadcast, without near-max values: a mean of terms near float32's
    largest overflows in PyTorch's float32 sum and not in nbx's host reduction (the reduce
    family's accumulation, not the loss; var and norm are drawn so too)."""
    def gen(g):
        d, other = dtype_pair(g, refuse)
        a, b = g.broadcast_pair() if g.chance(0.3) else [g.shape()] * 2
        if g.chance(0.05): b = a[:-1] + [a[-1] + 1] if a else [2]  # does not broadcast
        big = g.big_shape() if g.chance(0.04) else None
        return [g.tensor(big or a, d, "moderate"), g.tensor(big or b, other, "moderate")], \
            dict({"reduction": g.pick(REDUCTIONS)}, **attrs(g))
    return gen


def pointwise_problem(terms, result=lambda x: torch.promote_types(x[0].dtype, x[1].dtype)):
    """Σ |term| as the reduction adds them, from the terms' magnitudes in float64."""
    def scale(ctx):
        x, y = (v.double() for v in ctx.x[:2])
        v = finite_abs(terms(x, y, ctx))
        factor = growth(ctx) * narrowest(ctx, result(ctx.x))
        if ctx.a["reduction"] == "batchmean":
            return capped(v.sum() / (x.shape[0] if x.dim() and x.shape[0] else 1) * factor)
        return capped(reduce_like(v, ctx.a["reduction"]) * factor)
    return scale


def squared(x, y, ctx):
    return (x - y) ** 2


def absolute(x, y, ctx):
    return (x - y).abs()


def kl_terms(x, y, ctx):
    if ctx.a["log_target"]: return y.exp() * (y.abs() + x.abs())
    return (torch.xlogy(y, y)).abs() + (y * x).abs()


op("mse_loss", gen_pair(), lambda x, a: F.mse_loss(x[0], x[1], reduction=a["reduction"]),
   Tol(4, pointwise_problem(squared)), 40)
op("l1_loss", gen_pair(), lambda x, a: F.l1_loss(x[0], x[1], reduction=a["reduction"]),
   Tol(4, pointwise_problem(absolute)), 40)
op("smooth_l1_loss",
   gen_pair(lambda g: {"beta": S(g.pick([1.0, 0.5, 0.0, 2.0, 1e-3, -1.0 if g.chance(0.1) else 1.0]))}),
   lambda x, a: F.smooth_l1_loss(x[0], x[1], reduction=a["reduction"], beta=a["beta"]),
   Tol(4, pointwise_problem(absolute)), 40)
op("kl_div",
   gen_pair(lambda g: {"reduction": g.pick(REDUCTIONS + ["batchmean"]),
                       "log_target": g.chance(0.4)}),
   lambda x, a: F.kl_div(x[0], x[1], reduction=a["reduction"], log_target=a["log_target"]),
   Tol(4, pointwise_problem(kl_terms)), 40)


# ---- binary_cross_entropy_with_logits ----
def gen_bce(g):
    d, other = dtype_pair(g)
    s = g.big_shape() if g.chance(0.04) else g.shape()
    target_shape = s if g.chance(0.95) else s + [2]  # refused alike
    weight = pos_weight = None
    if g.chance(0.4):
        w = [1 if g.chance(0.4) else k for k in s]
        weight = g.tensor(w[g.int(0, len(w)):] if g.chance(0.3) else w, other, "positive")
    if g.chance(0.4) and s:
        pos_weight = g.tensor([s[-1] if g.chance(0.9) else s[-1] + 1], other, "positive")
    profile = g.pick(["moderate", "unit"])  # no near-max values: gen_pair says why
    return [g.tensor(s, d, "moderate"), g.tensor(target_shape, other, profile), weight,
            pos_weight], \
        {"reduction": g.pick(REDUCTIONS)}


def bce_terms(x, y, ctx):
    """|(1 − y)·x| + |(1 + (p − 1)·y)·softplus(−x)|, times |w|."""
    weight, pos_weight = ctx.x[2], ctx.x[3]
    lw = 1 + ((pos_weight.double() - 1) * y) if pos_weight is not None else torch.ones_like(y)
    sp = torch.clamp(-x, min=0) + torch.log1p(torch.exp(-x.abs()))
    out = ((1 - y) * x).abs() + (lw * sp).abs()
    return out * weight.double().abs() if weight is not None else out


def torch_bce(x, a):
    """PyTorch 2.x's composite (1.13's differs): log_sigmoid(x) in x's dtype, scaled in place
    by 1 + (p − 1)·y, then (1 − y)·x minus it and times the weight, in place in 1 − y."""
    inp, target, weight, pos_weight = x
    if target.shape != inp.shape:  # F's check
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({inp.shape})")
    log_sigmoid = F.logsigmoid(inp)
    if pos_weight is not None: log_sigmoid.mul_((pos_weight - 1).mul(target).add_(1))
    loss = (1 - target).mul_(inp).sub_(log_sigmoid)
    if weight is not None: loss.mul_(weight)
    if a["reduction"] == "none": return loss
    return loss.sum() if a["reduction"] == "sum" else loss.mean()


op("binary_cross_entropy_with_logits", gen_bce, torch_bce,
   Tol(4, pointwise_problem(bce_terms, lambda x: x[1].dtype)), 40)

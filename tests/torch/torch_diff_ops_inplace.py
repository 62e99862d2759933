"""The in-place (op_) and out= forms in the PyTorch differential test, one line per form as
in torch_diff_ops.py (torch_diff_ops_inplace.cpp has the nbx calls).

In-place: `self` is any view the generator draws (sliced, transposed, expanded — which both
libraries refuse to write), the other operands broadcast to it or do not (refused alike), and
the result dtype must cast to self's (PyTorch's can_cast). out=: `out` has the result's shape,
is contiguous or a transposed view of a tensor of 7s (an element left unwritten shows), and
has the result's dtype or another one (cast, or refused as PyTorch refuses).
"""
import torch

from torch_diff_compare import Tol
from torch_diff_gen import ALL, FLOATS, NAMES, NUMERIC, S, TensorIn, plain
from torch_diff_ops import SUM, dims_or_none, dt, gen_matmul, op, reduce_gen, wrapped

T1, T2 = Tol(1), Tol(2)
HALVES = (torch.float16, torch.bfloat16)


def gen_self_and_other(dtypes=ALL, other=True, attrs=lambda g: {}):
    def gen(g):
        s = g.shape()
        d = g.pick(dtypes)
        x = [g.tensor(s, d)]
        if other:
            if g.chance(0.25): x.append(g.scalar(g.pick(["bool", "int", "float"])))
            else:
                part = [1 if g.chance(0.3) else k for k in s]
                if g.chance(0.1): part = [2] + part  # larger than self: refused alike
                x.append(g.tensor(part[g.int(0, len(part)) if g.chance(0.2) else 0:],
                                  d if g.chance(0.6) else g.pick(dtypes)))
        return x, attrs(g)
    return gen


def in_place(method, with_alpha=False):
    """x[0].method(*others) in place; the answer is x[0] afterwards."""
    def call(x, a):
        self_, rest = x[0], list(x[1:])
        kw = {"alpha": a["alpha"]} if with_alpha else {}
        if method in ("copysign_", "hypot_", "atan2_"):
            rest = [wrapped(v, self_) for v in rest]
        getattr(self_, method)(*rest, **kw)
        return self_
    return call


def alpha(g):
    return {"alpha": S(g.pick([1, 2, -3, 0.5]))}


op("add_", gen_self_and_other(attrs=alpha), in_place("add_", True), SUM, 30)
op("sub_", gen_self_and_other(NUMERIC, attrs=alpha), in_place("sub_", True), SUM, 30)
op("mul_", gen_self_and_other(), in_place("mul_"), T1, 30)
op("div_", gen_self_and_other(), in_place("div_"), T1, 30)
op("clamp_min_", gen_self_and_other(NUMERIC), in_place("clamp_min_"), T1, 20)
op("copysign_", gen_self_and_other(FLOATS), in_place("copysign_"), T1, 20)
op("exp_", gen_self_and_other(other=False), in_place("exp_"), T2, 20)
op("neg_", gen_self_and_other(NUMERIC, other=False), in_place("neg_"), T1, 20)
op("sigmoid_", gen_self_and_other(other=False), in_place("sigmoid_"), T2, 20)


# ---- out= ----
def with_out(gen, call):
    """gen's case plus out's shape (the result's, from PyTorch on the CPU), dtype and layout."""
    def out_gen(g):
        x, a = gen(g)
        built = [v.build("cpu") if hasattr(v, "build") else v for v in x]
        values = plain(a)
        shape, dtype = [2], torch.float32  # PyTorch refuses the case itself: any out
        halves = [v.dtype for v in built if isinstance(v, torch.Tensor) and v.dtype in HALVES]
        for upcast in (False, True):  # 1.13's CPU lacks many half kernels
            try:
                r = call([v.float() if upcast and isinstance(v, torch.Tensor) and v.dtype in
                          HALVES else v for v in built], values, None)
                shape, dtype = list(r.shape), r.dtype
                if upcast and dtype == torch.float32 and len(set(halves)) == 1: dtype = halves[0]
                break
            except Exception:  # noqa: BLE001
                continue
        # Another dtype now and then (cast, or refused by can_cast), but no integer out for a
        # floating result: a float → integer cast is defined only inside the range (README).
        others = FLOATS + ["bool"] if dtype.is_floating_point else ALL
        a = dict(a, out_shape=shape, out_dtype=NAMES[dtype] if g.chance(0.7) else g.pick(others),
                 out_layout="transposed" if len(shape) >= 2 and g.chance(0.4) else "contiguous")
        return x, a
    return out_gen


def make_out(a, device):
    shape, dtype = a["out_shape"], dt(a["out_dtype"])
    if a["out_layout"] == "transposed":
        return torch.full(shape[::-1], 7, dtype=dtype, device=device).permute(
            *reversed(range(len(shape))))
    return torch.full(shape, 7, dtype=dtype, device=device)


def out_form(call):
    def torch_call(x, a):
        dev = next((v.device for v in x if isinstance(v, torch.Tensor)), "cpu")
        out = make_out(a, dev)
        call(x, a, out)
        return out
    return torch_call


def add_call(x, a, out):
    return torch.add(x[0], wrapped(x[1], x[0]), alpha=a["alpha"], out=out)


def exp_call(x, a, out):
    return torch.exp(x[0], out=out)


def sum_call(x, a, out):
    return torch.sum(x[0], dim=dims_or_none(a), keepdim=a["keepdim"], out=out)


def matmul_call(x, a, out):
    return torch.matmul(x[0], x[1], out=out)


op("add_out", with_out(gen_self_and_other(attrs=alpha), add_call), out_form(add_call), SUM, 30)
op("exp_out", with_out(gen_self_and_other(other=False), exp_call), out_form(exp_call), T2, 20)
op("sum_out", with_out(reduce_gen(), sum_call), out_form(sum_call), SUM, 30)
def gen_matmul_no_halves(g):
    """gen_matmul's operands, half ones as float32: the driver computes half cases in float32,
    where a half out= would meet float32 operands (refused: matmul takes out's dtype exactly)."""
    x, a = gen_matmul(g)
    return [TensorIn(v.base.float(), v.views) if v.base.dtype in HALVES else v for v in x], a


op("matmul_out", with_out(gen_matmul_no_halves, matmul_call), out_form(matmul_call), SUM, 20)

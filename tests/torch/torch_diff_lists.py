"""The lists of the PyTorch differential test (README.md says what each means). Each entry
names what it matches and why it is there; the driver reports entries that matched nothing,
so the lists stay true.
"""

import torch

from torch_diff_gen import TensorIn

# ---- capability-driven widenings: nbx's result dtype may be wider than PyTorch's ----
# (ops, torch dtype, nbx dtype, applies(device header), reason)
WIDENINGS = [
    ({"matmul", "mm", "mv", "bmm", "dot", "addmm", "baddbmm", "addmv", "addr", "linear"},
     "float16", "float32", lambda dev: dev.get("bf16") != "native",
     "a float16 product on a device without native bf16 returns float32 (overflow guard, "
     "core/ops/linalg.hpp)"),
]

# ---- documented refusals: nbx refuses where PyTorch computes ----
# (ops or None for any, error type, words in the message, reason[, applies(case)])
DOCUMENTED_REFUSALS = [
    ({"embedding"}, "Unsupported", "max_norm",
     "max_norm renormalises the weight in place; nbx never writes its inputs"),
    ({"cumsum", "cumprod"}, "InvalidArgument", "cannot produce bool",
     "PyTorch has no bool scan kernel; it answers only for 0-d inputs, which it copies"),
    (None, "InvalidArgument", "is not defined for",
     "a dtype PyTorch refuses, which it accepts on zero-size inputs only (no kernel runs)",
     lambda case: any(isinstance(v, TensorIn) and v.base.numel() == 0 for v in case["inputs"])),
    ({"div"}, None, "exact below 2^24",
     "integer true division without fp64 widens through float32, exact only below 2^24"),
    ({"logcumsumexp"}, "InvalidArgument", "is not defined for",
     "logcumsumexp of integers and bool is refused (PyTorch has no such kernel; its CUDA "
     "answers for 0-d inputs only, which it copies)",
     lambda case: case["inputs"][0].base.dim() == 0),
    ({"add_out", "add_"}, "InvalidArgument", "alpha must be an integer",
     "a floating alpha with integer operands is refused whatever out's dtype, as PyTorch's "
     "CPU refuses it (its CUDA computes into a floating out)"),
    ({"abs"}, "InvalidArgument", "not defined for bool",
     "abs of bool is refused, as PyTorch's CPU refuses it (its CUDA kernel computes it)"),
    ({"addcmul"}, "InvalidArgument", "without overflow",
     "a value that does not fit the integer dtype is refused, as PyTorch's CPU refuses it (its "
     "CUDA kernel converts it unchecked)"),
    ({"addmm", "baddbmm", "addmv"}, "InvalidArgument", "does not broadcast",
     "an input that does not broadcast to the product is refused even with beta = 0, as "
     "PyTorch's CPU (2.11's CUDA addmm skips the check when beta is 0)"),
    ({"index_put"}, "InvalidArgument", "only supports boolean masks",
     "one value put through a single uint8 mask is refused, as PyTorch 2.x refuses it (it "
     "dispatches to masked_fill_); 1.13 accepted it with a deprecation warning"),
    ({"floor_divide", "remainder"}, "DeviceFault", "division by zero",
     "integer division by zero faults on every nbx device (PyTorch raises on the CPU only; "
     "on CUDA it returns undefined values)"),
]

# ---- known differences: real nbx bugs found by this test, waiting for a fix ----
# A failure that matches an entry counts as "known", not as a failure; remove the entry
# with the fix. (op, devices ("*" = all), matches(case), what differs: the report's words)
KNOWN_DIFFERENCES = [
]

# The sort family's ops (torch_diff_ops_sort.py), for entries that hold for all of them.
SORTED_OPS = frozenset({"sort", "argsort", "msort", "topk", "kthvalue", "median_dim",
                        "nanmedian_dim", "median_all", "nanmedian_all"})

# The deterministic (sorted) scatters' accumulating ops (torch_diff_ops_index_write.py).
DETERMINISTIC_SUMS = frozenset({"scatter_add_det", "scatter_reduce_sum_det",
                                "scatter_reduce_prod_det", "scatter_reduce_arg_det"})

# ---- deliberate differences: PyTorch's answer is an artefact nbx does not copy ----
# (op, devices, matches(case), what differs and why)
DELIBERATE_DIFFERENCES = [
    ("nll_loss", ("cuda:0",),
     lambda c: c["inputs"][0].build("cpu").dim() == 1 and c["attrs"].get("reduction") == "mean"
     and int(c["inputs"][1].build("cpu").item()) == c["attrs"].get("ignore_index"),
     "nll_loss of one unbatched sample whose target is ignore_index, mean: 2.11's CUDA gives 0; "
     "nbx gives NaN (0/0), as PyTorch's CPU and its documentation's sum of weights (H100, "
     "2026-12-07)"),
    ("mode", "*", lambda c: has_nan(c),
     "mode of a row with a NaN counts each NaN alone (NaN != NaN); PyTorch's CPU kernel sorts "
     "with operator< (undefined with NaN): [1, nan, nan, 2] gave 1, [nan, nan, -1, 3] gave nan"),
    (SORTED_OPS, "*", lambda c: bfloat16_negative_nan(c),
     "a bfloat16 NaN with its sign bit set (0xffff) sorts last, as every NaN (PyTorch's CPU, "
     "its documentation); 2.11's CUDA sort orders bfloat16 by raw bits and puts it first"),
    ("topk", "*", lambda c: c["inputs"][0].build("cpu").dim() == 0 and c["attrs"]["k"] == 0,
     "topk of a 0-d tensor with k = 0: 2.11's CUDA returns an uninitialised 0-d tensor; nbx "
     "returns the element, as PyTorch's CPU"),
    ("pad", "*", lambda c: c["attrs"]["mode"] == "replicate" and min(c["attrs"]["pads"]) < 0,
     "replicate padding that also crops (a negative pad): 2.11's CUDA kernel fails to launch "
     "(CUDA error: invalid argument); nbx pads as PyTorch's CPU"),
    ("hardswish", "*", lambda c: True,
     "hardswish(x) for |x| past max/6 is x; PyTorch computes x * 6 / 6 in the dtype and "
     "gives inf"),
    ("var_mean", "*", lambda c: has_infinity(c),
     "the mean of a row with an infinity is mean's (inf); PyTorch's Welford update gives "
     "inf - inf = NaN there (its torch.mean gives inf)"),
    ("std_mean", "*", lambda c: has_infinity(c), "as var_mean"),
    ("rms_norm", "*", lambda c: has_infinity(c),
     "a row with an infinity gives x · rsqrt(inf) = 0 at its finite elements, as PyTorch's "
     "CPU; 2.11's fused CUDA kernel gives NaN for the whole row"),
    ("gelu", "*", lambda c: has_infinity(c),
     "gelu(inf) is inf, as PyTorch's CUDA; 2.11's CPU float16 kernel gives NaN"),
    ("mode", "*", lambda c: mode_ties(c, (torch.int8, torch.int16)),
     "a row whose highest count several values share: nbx returns the smallest of them, as "
     "PyTorch's CPU; 2.11's CUDA kernel returns another for int8/int16 (PyTorch documents no "
     "rule for ties)"),
    (DETERMINISTIC_SUMS, "*", lambda c: half_with_duplicates(c),
     "float16/bfloat16 sums and products over duplicate indices in deterministic mode: nbx "
     "folds them in index order rounding in the dtype at every step, as PyTorch's CPU; "
     "2.11's CUDA kernels round otherwise (results 1 ulp apart)"),
    ("take_along_dim", "*", lambda c: out_of_range_index(c),
     "an out-of-range index faults on every nbx device; 2.11's CPU take_along_dim returned "
     "values for index -34 of a dim of 33 (no bounds check on its path)"),
    (frozenset({"gelu_and_mul", "gelu_tanh_and_mul"}), "*", lambda c: gelu_cancels(c),
     "nbx's gelu factor is 0.5 a erfc(-a / sqrt 2) (a / (1 + e^-2u)), accurate where PyTorch's "
     "1 + erf (1 + tanh) cancels to 0 for a < -5.5 (float32; -8.3 in float64): next to an "
     "infinite second half nbx gives ±inf where PyTorch gives NaN, next to a huge one the "
     "product where PyTorch gives 0"),
]


def mode_ties(case, dtypes):
    """A row of mode's input (of one of `dtypes`) in which several values share the highest
    count."""
    t = case["inputs"][0].build("cpu")
    if t.dim() == 0 or t.dtype not in dtypes or t.numel() == 0:
        return False
    rows = t.movedim(case["attrs"]["dim"] % t.dim(), -1).reshape(-1, t.shape[case["attrs"]["dim"]])
    for r in rows:
        _, counts = torch.unique(r, return_counts=True)
        if int((counts == counts.max()).sum()) > 1:
            return True
    return False


def half_with_duplicates(case):
    """A float16/bfloat16 scatter whose index holds some destination twice."""
    tensors = [v for v in case["inputs"] if isinstance(v, TensorIn)]
    if tensors[0].base.dtype not in (torch.float16, torch.bfloat16):
        return False
    index = [v.base for v in tensors if not v.base.is_floating_point()]
    return bool(index) and index[0].numel() > index[0].unique().numel()


def out_of_range_index(case):
    t, i = case["inputs"][0], case["inputs"][1]
    dim = case["attrs"].get("dim")
    size = t.base.numel() if dim is None else t.build("cpu").shape[dim]
    idx = i.base
    return bool(((idx < -size) | (idx >= size)).any()) if idx.numel() else False


def bfloat16_negative_nan(case):
    """A bfloat16 operand holding a NaN with its sign bit set."""
    return any(isinstance(v, TensorIn) and v.base.dtype == torch.bfloat16 and
               bool((v.base.isnan() & (v.base.view(torch.int16) < 0)).any())
               for v in case["inputs"])


def has_nan(case):
    return any(isinstance(v, TensorIn) and v.base.is_floating_point() and
               bool(v.base.isnan().any()) for v in case["inputs"])


def has_infinity(case):
    return any(isinstance(v, TensorIn) and v.base.is_floating_point() and
               bool(v.base.isinf().any()) for v in case["inputs"])


def gelu_cancels(case):
    """An input whose first half holds a < -5 next to a second half b for which |a b| is not
    finite (b infinite, or huge)."""
    x = case["inputs"][0].build("cpu").double()
    n = x.shape[-1] // 2
    a, b = x[..., :n], x[..., n:]
    return bool(((a < -5) & ~torch.isfinite(a.abs() * b.abs())).any())

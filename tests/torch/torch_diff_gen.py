"""Seeded random operands for the PyTorch differential test, and the manifest the C++ runner
reads (README.md).

Everything is drawn from Python's own `random.Random` (seeded by a string, so a case does not
move when an op is added elsewhere in the table) and only then turned into torch tensors, so a
seed gives the same cases under every torch version.
"""
import json
import math
import random

import torch

DTYPES = {
    "bool": torch.bool, "uint8": torch.uint8, "int8": torch.int8, "int16": torch.int16,
    "int32": torch.int32, "int64": torch.int64, "float16": torch.float16,
    "bfloat16": torch.bfloat16, "float32": torch.float32, "float64": torch.float64,
}
NAMES = {v: k for k, v in DTYPES.items()}
FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]
ALL = ["bool"] + INTS + FLOATS
NUMERIC = INTS + FLOATS  # no bool


class S:
    """A host scalar attribute (alpha, value, start …): sent as {"kind", "value"} text."""

    def __init__(self, value):
        self.value = value


def plain(attrs):
    """The attrs with each S as its value (what PyTorch's calls and the reports take)."""
    return {k: v.value if isinstance(v, S) else v for k, v in attrs.items()}


class TensorIn:
    """An operand: a contiguous base tensor and the views that make it what the op reads."""

    def __init__(self, base, views=()):
        self.base, self.views = base, list(views)

    def build(self, device):
        t = self.base.to(device, copy=True)  # a fresh copy: in-place forms write into it
        for v in self.views:
            kind, args = v[0], v[1:]
            if kind == "transpose": t = t.transpose(*args)
            elif kind == "permute": t = t.permute(*args[0])
            elif kind == "slice":
                d, start, end, step = args
                t = t[(slice(None),) * d + (slice(start, end, step),)]
            elif kind == "narrow": t = t.narrow(*args)
            elif kind == "expand": t = t.expand(*args[0])
            elif kind == "unsqueeze": t = t.unsqueeze(*args)
            elif kind == "squeeze": t = t.squeeze(*args)
            elif kind == "view": t = t.view(*args[0])
            else: raise ValueError(kind)
        return t

    @property
    def dtype(self):
        return NAMES[self.base.dtype]


def scalar_json(v):
    if isinstance(v, bool): return {"kind": "bool", "value": str(v)}
    if isinstance(v, int): return {"kind": "int", "value": str(v)}
    return {"kind": "float", "value": repr(float(v))}


def limits(dtype):
    if dtype == "bool": return 0, 1
    if dtype in INTS:
        info = torch.iinfo(DTYPES[dtype])
        return info.min, info.max
    info = torch.finfo(DTYPES[dtype])
    return info.min, info.max


def subnormal(dtype):
    """The smallest positive subnormal of a floating dtype."""
    return {"float16": 2.0 ** -24, "bfloat16": 2.0 ** -133, "float32": 2.0 ** -149,
            "float64": 5e-324}[dtype]


class Gen:
    """The random choices of one case."""

    def __init__(self, seed):
        self.r = random.Random(seed)
        self.tg = torch.Generator().manual_seed(self.r.getrandbits(63))

    def pick(self, seq):
        return self.r.choice(list(seq))

    def chance(self, p):
        return self.r.random() < p

    def int(self, lo, hi):
        return self.r.randint(lo, hi)

    # ---- shapes ----
    def shape(self, rank=None, max_numel=600, min_rank=0, max_rank=4, zero_size=0.05):
        if rank is None: rank = self.int(min_rank, max_rank)
        while True:
            s = [self.pick([1, 2, 3, 4, 5, 7, 8, 13, 16, 33]) for _ in range(rank)]
            if rank and self.chance(zero_size): s[self.int(0, rank - 1)] = 0
            if math.prod(s) <= max_numel: return s

    def big_shape(self, rank=2):
        """A larger row set (the kernels' multi-tile and looped paths): a few thousand
        elements, kept few because llvmpipe is slow."""
        rows = self.pick([1, 3, 8])
        last = self.pick([513, 1031, 2050, 4099])
        return ([rows] * (rank - 1)) + [last]

    def broadcast_pair(self, max_numel=600):
        """Two shapes that broadcast: sizes dropped to 1 or leading dims dropped."""
        out = self.shape(max_numel=max_numel)
        def part():
            s = [1 if self.chance(0.3) else d for d in out]
            return s[self.int(0, len(s)):] if s and self.chance(0.2) else s
        return part(), part()

    # ---- values ----
    def values(self, n, dtype, profile="mixed"):
        """n values of `dtype` as a float64 or int64 torch vector (bulk values come from
        torch's CPU generator, seeded from this case's seed: fast, and the same for one
        torch version)."""
        tg, r = self.tg, self.r
        if dtype == "bool":
            return torch.rand(n, generator=tg) < 0.5
        if dtype in INTS:
            lo, hi = limits(dtype)
            def uniform(a, b):
                return torch.randint(a, b + 1 if b < 2 ** 63 - 1 else b, (n,), generator=tg)
            if profile == "mixed" and r.random() < 0.25: profile = "full"
            if profile == "full":
                edges = torch.tensor([lo, hi, 0, -1 if lo < 0 else 1, lo + 1, hi - 1])
                pick = edges[torch.randint(0, len(edges), (n,), generator=tg)]
                return torch.where(torch.rand(n, generator=tg) < 0.2, pick, uniform(lo, hi))
            if profile == "positive": return uniform(1, min(hi, 9))
            if profile == "nonneg": return uniform(0, min(hi, 9))
            if profile == "shift": return uniform(0, 7)
            return uniform(max(lo, -9), min(hi, 9))
        # floating
        scale = r.choice([1.0, 1.0, 1.0, 0.01, 30.0])
        vals = torch.randn(n, generator=tg, dtype=torch.float64) * scale
        if profile == "positive": vals = vals.abs() + 1e-3
        if profile == "unit": vals = vals.tanh()
        if profile in ("ties", "ties_no_nan"):  # sorts: halves in about ±4, ±0, specials
            vals = (vals.clamp(-4, 4) * 2).round() / 2
            if profile == "ties_no_nan":  # 1.13's CPU unique miscounts NaNs (README)
                return vals
            profile = "mixed"
        if profile in ("mixed", "moderate") and r.random() < 0.5:
            # "moderate": no near-max values, for ops that square (var, norms), where
            # PyTorch's float32 intermediate overflows and the host's float64 does not.
            tiny, big = subnormal(dtype), limits(dtype)[1] if profile == "mixed" else 1e4
            specials = torch.tensor([math.nan, math.inf, -math.inf, 0.0, -0.0, tiny, -tiny,
                                     7 * tiny, big / 2, -big / 2, 1.0, -1.0, 0.5],
                                    dtype=torch.float64)
            p = r.choice([0.05, 0.2])
            pick = specials[torch.randint(0, len(specials), (n,), generator=tg)]
            vals = torch.where(torch.rand(n, generator=tg) < p, pick, vals)
        return vals

    def tensor(self, shape, dtype, profile="mixed", view=None, values=None):
        """An operand of logical `shape`, as a view of a base of another shape when the view
        recipe picked (or given: "contiguous", "transposed", "sliced", "expanded", …) says so."""
        n = math.prod(shape)
        kinds = ["contiguous"] * 4 + ["transposed", "permuted", "sliced", "expanded", "narrowed"]
        view = view or self.pick(kinds)
        base_shape, views = list(shape), []
        rank = len(shape)
        if view == "transposed" and rank >= 2:
            i, j = self.r.sample(range(rank), 2)
            base_shape[i], base_shape[j] = shape[j], shape[i]
            views = [["transpose", i, j]]
        elif view == "permuted" and rank >= 2:
            q = list(range(rank))
            self.r.shuffle(q)
            base_shape = [0] * rank
            for k in range(rank): base_shape[q[k]] = shape[k]
            views = [["permute", q]]
        elif view == "sliced" and rank >= 1:
            d, step, start = self.int(0, rank - 1), self.pick([1, 2, 3]), self.int(0, 2)
            base_shape[d] = start + max(shape[d] - 1, 0) * step + 1 + self.int(0, 2)
            end = start + shape[d] * step if shape[d] else start
            views = [["slice", d, start, end, step]]
        elif view == "expanded" and rank >= 1 and n > 0:
            base_shape = [1 if self.chance(0.5) else s for s in shape]
            views = [["expand", list(shape)]]
        elif view == "narrowed" and rank >= 1:
            extra = self.int(1, 3)
            start = self.int(0, extra)
            base_shape[0] = shape[0] + extra
            views = [["narrow", 0, start, shape[0]]]
        m = math.prod(base_shape)
        if values is None:
            values = self.values(m, dtype, profile)
        else:
            values = list(values) + [values[-1] if values else 0] * max(0, m - len(values))
            values = torch.tensor(values[:m], dtype=torch.float64 if dtype in FLOATS else None)
        return TensorIn(to_tensor(values, base_shape, dtype), views)

    def scalar(self, kind, profile="mixed"):
        if kind == "bool": return self.chance(0.5)
        if kind == "int":
            if profile == "positive": return self.int(1, 9)
            if profile == "shift": return self.int(0, 7)  # a wider shift is undefined
            return self.int(-9, 9) if self.chance(0.85) else self.pick([-200, 300, 2 ** 40])
        if profile == "positive": return self.pick([0.5, 1.5, 3.25, 1e-3])
        return self.pick([2.5, -1.25, 0.5, 1e-3, -30.0, 1e4, math.nan, math.inf, -math.inf, 0.0])


def to_tensor(values, shape, dtype):
    """Float values rounded to `dtype`, integers wrapped to it (two's complement)."""
    return values.to(DTYPES[dtype]).reshape(shape)


def raw_bytes(t):
    """The base tensor's bytes, row-major and little-endian."""
    t = t.contiguous()
    if t.dtype in (torch.float16, torch.bfloat16): t = t.view(torch.int16)
    if t.dtype == torch.bool: t = t.view(torch.uint8)
    return t.numpy().tobytes()


def write_manifest(cases, directory):
    """cases.json + inputs.bin for the runner; returns the manifest path."""
    blob = bytearray()
    out = []
    for c in cases:
        slots = []
        for x in c["inputs"]:
            if x is None:
                slots.append(None)
            elif isinstance(x, TensorIn):
                data = raw_bytes(x.base)
                slots.append({"dtype": x.dtype, "shape": list(x.base.shape),
                              "offset": len(blob), "views": x.views})
                blob += data
                blob += b"\0" * (-len(blob) % 8)
            else:
                slots.append({"scalar": scalar_json(x)})
        attrs = {k: scalar_json(v.value) if isinstance(v, S) else v
                 for k, v in c["attrs"].items()}
        out.append({"id": c["id"], "op": c["op"], "inputs": slots, "attrs": attrs})
    with open(f"{directory}/inputs.bin", "wb") as f:
        f.write(blob)
    path = f"{directory}/cases.json"
    with open(path, "w") as f:
        json.dump({"version": 1, "blob": "inputs.bin", "cases": out}, f)
    return path

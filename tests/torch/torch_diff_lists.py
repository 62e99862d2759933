"""The lists of the PyTorch differential test (README.md says what each means). Each entry
names what it matches and why it is there; the driver reports entries that matched nothing,
so the lists stay true.
"""

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
    ({"floor_divide", "remainder"}, "DeviceFault", "division by zero",
     "integer division by zero faults on every nbx device (PyTorch raises on the CPU only; "
     "on CUDA it returns undefined values)"),
]

# ---- known differences: real nbx bugs found by this test, waiting for a fix ----
# A failure that matches an entry counts as "known", not as a failure; remove the entry
# with the fix. (op, devices ("*" = all), matches(case), what differs: the report's words)
KNOWN_DIFFERENCES = [
    ("add", "*", lambda c: attr(c, "alpha") is True,
     "a bool alpha with non-bool operands is accepted; PyTorch refuses it (\"Boolean alpha "
     "only supported for Boolean results\")"),
    ("sub", "*", lambda c: attr(c, "alpha") is True, "as add: a bool alpha is accepted"),
    ("clamp", "*", lambda c: any(not isinstance(v, TensorIn) and v is not None
                                 for v in c["inputs"][1:]),
     "a scalar bound outside the tensor's integer range (clamp(int8, -200)) is accepted; "
     "PyTorch refuses it (\"value cannot be converted to type int8_t without overflow\")"),
    ("addcmul", "*", lambda c: True,
     "a value that does not fit the integer dtype (addcmul(uint8…, value=-0.25)) is "
     "accepted; PyTorch refuses it"),
    ("argmax", "*", lambda c: attr(c, "dim") is None and attr(c, "keepdim"),
     "argmax(x, dim=None, keepdim=True) is 0-d; PyTorch keeps every dim as 1 ([1, 1])"),
    ("argmin", "*", lambda c: attr(c, "dim") is None and attr(c, "keepdim"), "as argmax"),
    ("addr", "*", lambda c: all(v.dtype == "bool" for v in c["inputs"]),
     "addr of bool tensors is refused; PyTorch computes it (beta*input or alpha*outer as "
     "logical or/and)"),
    ("arange", "*", lambda c: attr(c, "dtype") != "int64" and isinstance(attr(c, "start"), float),
     "arange with float bounds into an integer dtype other than int64 truncates the bounds "
     "first (arange(6.82, 35.72, 1.7, int16): 29 elements); PyTorch does so for int64 only "
     "and otherwise takes ceil((end - start) / step) elements of start + i * trunc(step) (17)"),
    ("hardswish", "*", lambda c: True,
     "hardswish(x) for |x| past max/6 is x; PyTorch computes x * 6 / 6 and gives inf"),
    ("masked_fill", ("vulkan:0",), lambda c: isinstance(c["inputs"][2], TensorIn),
     "a 0-d tensor value that does not fit x's dtype (uint8 x, float64 value 7e38) is "
     "accepted on Vulkan; the host refuses it, as PyTorch does"),
    # Vulkan float64 accuracy (issue 11, defect 8's family), llvmpipe:
    ("tanh", ("vulkan:0",), lambda c: c["inputs"][0].dtype == "float64",
     "float64 tanh 6 ulps off near 0.118"),
    ("mish", ("vulkan:0",), lambda c: c["inputs"][0].dtype == "float64",
     "float64 mish 4.3 ulps off at -0.295"),
    ("pow", ("vulkan:0",), lambda c: "float64" in [getattr(v, "dtype", "") for v in c["inputs"]],
     "float64 pow(-11.04…, uint8) 9 ulps off: integer powers not by repeated multiplication"),
]


def attr(case, name):
    v = case["attrs"].get(name)
    return v.value if hasattr(v, "value") else v

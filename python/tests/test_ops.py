"""nbx.ops: every op of the catalog is there; a sample computes what PyTorch computes on each
device; results structs are named tuples; errors arrive as the matching exception types."""
import numpy as np
import pytest

import nbxtensor as nbx


def test_every_catalog_op_is_in_nbx_ops():
    names = nbx.op_names()
    assert len(names) > 200
    missing = [n for n in names if not hasattr(nbx.ops, n)]
    assert missing == []


def test_in_place_and_out_forms_are_bound():
    x = nbx.tensor([1.0, -2.0, 3.0])
    assert nbx.ops.abs_(x) is not None and x.tolist() == [1.0, 2.0, 3.0]
    out = nbx.zeros(3)
    nbx.ops.mul_out(out, x, 2)
    assert out.tolist() == [2.0, 4.0, 6.0]
    total = nbx.zeros(())
    nbx.ops.sum_out(total, x)
    assert total.item() == 6.0


def as_torch(torch, t):
    return torch.from_numpy(t.to(nbx.float64).numpy(force=True))


def test_sample_against_torch(torch, device):
    rng = np.random.default_rng(7)
    a_np = rng.standard_normal((5, 7)).astype(np.float32)
    b_np = rng.standard_normal((7, 3)).astype(np.float32)
    a, b = nbx.tensor(a_np, device=device), nbx.tensor(b_np, device=device)
    ta, tb = torch.from_numpy(a_np).double(), torch.from_numpy(b_np).double()
    cases = [
        (nbx.ops.add(a, 2.5, alpha=2), ta + 5.0),
        (nbx.ops.gelu(a, approximate="tanh"), torch.nn.functional.gelu(ta, approximate="tanh")),
        (nbx.ops.softmax(a, 1), torch.softmax(ta, 1)),
        (nbx.ops.matmul(a, b), ta @ tb),
        (nbx.ops.sum(a, [0], keepdim=True), ta.sum(0, keepdim=True)),
        (nbx.ops.mean(a, 1), ta.mean(1)),
        (nbx.ops.cumsum(a, 1), ta.cumsum(1)),
        (nbx.ops.layer_norm(a, [7]), torch.nn.functional.layer_norm(ta, [7])),
        (nbx.ops.cat([a, a], 0), torch.cat([ta, ta], 0)),
        (nbx.ops.pad(a, [1, 2], "reflect"), torch.nn.functional.pad(ta[None], [1, 2], "reflect")[0]),
        ((a * 2 - 1) / 3, (ta * 2 - 1) / 3),
        (a @ b, ta @ tb),
    ]
    for got, want in cases:
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(as_torch(torch, got).numpy(), want.numpy(), rtol=2e-5, atol=2e-5)


def test_result_structs_are_named_tuples(device):
    x = nbx.tensor([[3.0, 1.0, 2.0], [0.5, 9.0, -1.0]], device=device)
    top = nbx.ops.topk(x, 2)
    assert top.values.tolist() == [[3.0, 2.0], [9.0, 0.5]]
    values, indices = top
    assert indices.dtype == nbx.int64 and indices.tolist() == [[0, 2], [1, 0]]
    u = nbx.ops.unique(nbx.tensor([3, 1, 3], device=device))
    assert u.values.tolist() == [1, 3] and u.inverse is None and u.counts is None
    mn, mx = nbx.ops.aminmax(x)
    assert (mn.item(), mx.item()) == (-1.0, 9.0)


def test_errors_are_typed_exceptions(device):
    x = nbx.ones(2, 3, device=device)
    with pytest.raises(nbx.InvalidArgument) as e:
        nbx.ops.add(x, nbx.ones(4, device=device))
    assert isinstance(e.value, ValueError) and isinstance(e.value, nbx.Error)
    assert e.value.op == "add" and "[4]" in str(e.value)
    weight = nbx.ones(4, 2, device=device)
    with pytest.raises(nbx.DeviceFault) as e:
        nbx.ops.embedding(nbx.tensor([1, 4], device=device), weight).tolist()
    assert isinstance(e.value, IndexError)
    assert (e.value.index, e.value.bound) == (4, 4)
    with pytest.raises(nbx.InvalidArgument, match="approximate"):
        nbx.ops.gelu(x, approximate="fast")
    with pytest.raises(nbx.Unavailable) as e:
        nbx.open("hip:7")
    assert e.value.backend == "hip"
    with pytest.raises(TypeError):
        nbx.ops.add(x, "two")


def test_caps_and_explain_are_dicts(device):
    caps = nbx.caps(device)
    assert caps["device"].startswith(str(device))
    assert caps["capabilities"]["fp64"]["source"]
    declared = nbx.caps(arch="vulkan/generic")
    assert declared["capabilities"]["fp64"]["value"] is False
    plan = nbx.explain("softmax", "float16", [4, 1000], device=device)
    assert plan["schema"] == "nbx.explain/1" and plan["op"] == "softmax"
    assert plan["refused"] is False and plan["output"].startswith("float16")
    refused = nbx.explain("add", ["float64", "float64"], [[8], [8]], arch="vulkan/generic")
    assert refused["refused"] is True and refused["capability"] == "fp64"
    with pytest.raises(nbx.InvalidArgument):
        nbx.explain("frobnicate", "float32", [4])


def test_event_times_work(device):
    start, end = nbx.Event(device), nbx.Event(device)
    x = nbx.ones(128, 128, device=device)
    try:
        start.record()
    except nbx.Unsupported as e:
        assert e.capability == "timestamps"
        return
    for _ in range(3):
        x = x @ x / 128
    end.record()
    ms = start.elapsed_ms(end)
    assert 0 < ms < 60000 and end.recorded
    with pytest.raises(nbx.InvalidArgument):
        nbx.Event(device).elapsed_ms(end)

"""nbx.Tensor from Python: creation as torch.tensor, properties, views, indexing, operators,
conversions to NumPy and lists, the printer against PyTorch's repr."""
import numpy as np
import pytest

import nbxtensor as nbx


def test_creation_follows_torch_tensor(device):
    assert nbx.tensor([1.5, 2.0]).dtype == nbx.float32  # Python floats: the default float
    assert nbx.tensor([1, 2]).dtype == nbx.int64
    assert nbx.tensor([True]).dtype == nbx.bool
    assert nbx.tensor(np.zeros(2, dtype=np.float64)).dtype == nbx.float64  # arrays keep theirs
    t = nbx.tensor([[1, 2, 3], [4, 5, 6]], dtype="float16", device=device)
    assert (t.shape, t.dtype, t.device, t.ndim, t.numel()) == ((2, 3), nbx.float16, device, 2, 6)
    assert str(t.device) == str(device) and t.stride() == (3, 1) and t.is_contiguous()
    assert nbx.zeros(2, 3, device=device).tolist() == [[0.0] * 3] * 2
    assert nbx.full((2,), 7).dtype == nbx.int64
    assert nbx.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert nbx.arange(0, 1, 0.25, device=device).tolist() == [0.0, 0.25, 0.5, 0.75]
    with pytest.raises(TypeError):
        nbx.tensor(np.zeros(2, dtype=np.complex64))


def test_views_and_indexing(device):
    t = nbx.arange(24, device=device).reshape(2, 3, 4)
    assert t[1].tolist() == [[12, 13, 14, 15], [16, 17, 18, 19], [20, 21, 22, 23]]
    assert t[:, 1:3, ::2].shape == (2, 2, 2)
    assert t[..., -1].tolist() == [[3, 7, 11], [15, 19, 23]]
    assert t[None, 0].shape == (1, 3, 4)
    assert t.permute(2, 0, 1).shape == (4, 2, 3)
    assert t.transpose(0, 2).stride() == (1, 4, 12)
    assert t.view(6, 4)[5, 3].item() == 23
    with pytest.raises(IndexError):
        t[2]
    with pytest.raises(ValueError):
        t[::-1]
    assert [row.tolist() for row in nbx.tensor([[1, 2], [3, 4]])] == [[1, 2], [3, 4]]
    x = nbx.zeros(3, 4, device=device)
    x[1] = 5.0
    x[:, 0] = nbx.tensor([1.0, 2.0, 3.0], device=device)
    assert x.tolist() == [[1, 0, 0, 0], [2, 5, 5, 5], [3, 0, 0, 0]]
    mask = nbx.tensor([True, False, True], device=device)
    assert nbx.tensor([1, 2, 3], device=device)[mask].tolist() == [1, 3]
    assert t.reshape(6, 4)[nbx.tensor([5, 0], device=device)][:, 0].tolist() == [20, 0]


def test_operators_promote_as_pytorch(device):
    i = nbx.tensor([1, 2, 3], dtype=nbx.int32, device=device)
    assert (i + 1).dtype == nbx.int32
    assert (i / 2).dtype == nbx.float32 and (i / 2).tolist() == [0.5, 1.0, 1.5]
    assert (1 - i).tolist() == [0, -1, -2]
    assert (i * 2.5).dtype == nbx.float32
    assert (i == 2).tolist() == [False, True, False]
    assert (-i).tolist() == [-1, -2, -3] and (~nbx.tensor([True, False])).tolist() == [False, True]
    assert (i ** 2).tolist() == [1, 4, 9] and (i % 2).tolist() == [1, 0, 1]
    x = nbx.ones(2, device=device)
    x += 1
    assert x.tolist() == [2.0, 2.0]
    assert bool(nbx.tensor([1]))
    with pytest.raises(ValueError):
        bool(nbx.tensor([1, 2]))
    assert float(nbx.tensor(2.5)) == 2.5 and len(i) == 3


def test_numpy_and_conversions(device):
    t = nbx.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    if device.type == "host":
        a = t.numpy()
        a[0, 0] = 10.0  # shared, as torch's .numpy()
        assert t[0, 0].item() == 10.0
    else:
        with pytest.raises(TypeError, match="cpu"):
            t.numpy()
    assert t.numpy(force=True).sum() > 0
    assert t.cpu().device == nbx.host() and t.to("float64").dtype == nbx.float64
    first = 10 if device.type == "host" else 1
    assert t.to(nbx.host()).to(nbx.int32).tolist() == [[first, 2], [3, 4]]
    assert nbx.tensor([1.0], dtype=nbx.bfloat16).tolist() == [1.0]


@pytest.mark.parametrize("make", [
    lambda torch: torch.tensor([1.5, -2.25, 3.0]),
    lambda torch: torch.tensor([[1, 2], [300, -4]]),
    lambda torch: torch.tensor([1e-5, 1.0]),
    lambda torch: torch.tensor([True, False]),
    lambda torch: torch.tensor([1.0, 2.0], dtype=torch.float16),
    lambda torch: torch.tensor([0.1, 1e9], dtype=torch.float64),
    lambda torch: torch.zeros(0, 3, dtype=torch.int32),
    lambda torch: torch.zeros(0),
    lambda torch: torch.tensor(3.5),
    lambda torch: torch.tensor(-7, dtype=torch.int16),
    lambda torch: torch.tensor([float("nan"), 1.0, float("inf"), -float("inf")]),
    lambda torch: torch.arange(2000.0).reshape(40, 50),
    lambda torch: torch.arange(3000, dtype=torch.int32).reshape(10, 15, 20) - 1500,
    lambda torch: torch.linspace(-3, 3, 1500).reshape(3, 500),
    lambda torch: torch.randn(7, 9, generator=torch.Generator().manual_seed(3)) * 100,
    lambda torch: torch.randn(4, 1, 3, generator=torch.Generator().manual_seed(4)),
    lambda torch: torch.arange(12.0).reshape(3, 4).t(),
])
def test_repr_is_pytorch_repr(torch, make):
    x = make(torch)
    t = nbx.from_numpy(x.numpy()) if x.numel() else nbx.tensor(x.numpy())
    assert repr(t) == repr(x).replace("torch.", "nbx.")


def test_repr_names_the_device(device):
    t = nbx.tensor([1.0, 2.0], device=device)
    suffix = "" if device.type == "host" else f", device='{device}'"
    assert repr(t) == f"tensor([1., 2.]{suffix})"

"""DLPack both ways with PyTorch and NumPy: no copy (the same data pointer), strides and
offsets, dtypes (bfloat16, bool where the consumer has it), writes seen both ways, the
deleter contract (each side keeps the other's memory alive), Vulkan refused by name."""
import gc

import numpy as np
import pytest

import nbxtensor as nbx
from conftest import torch_device

DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "uint8", "int16", "int32", "int64"]


def torch_has_dlpack_bool(torch):
    try:
        torch.utils.dlpack.to_dlpack(torch.zeros(1, dtype=torch.bool))
        return True
    except (RuntimeError, TypeError, BufferError):
        return False  # PyTorch 1.13: "Bool type is not supported by dlpack"


def shared_device(torch, device):
    dev = torch_device(torch, device)
    if dev is None:
        if device.type == "vulkan":
            pytest.skip("Vulkan memory is not shared (test_vulkan_refused covers it)")
        pytest.skip(f"PyTorch has no {device.type} here")
    return dev


@pytest.mark.parametrize("dtype", DTYPES)
def test_nbx_to_torch_shares_memory(torch, device, dtype):
    dev = shared_device(torch, device)
    t = nbx.ops.sub(nbx.arange(0, 24, device=device), 11).to(dtype).reshape(4, 6)
    view = t.slice(1, 2, 6).transpose(0, 1)  # offset 2, strides (1, 6)
    x = torch.from_dlpack(view)
    assert x.device == dev
    assert x.data_ptr() == view.data_ptr()
    assert tuple(x.shape) == view.shape and tuple(x.stride()) == view.stride()
    assert str(x.dtype) == "torch." + dtype
    expected = torch.arange(24, dtype=torch.int64).sub(11).to(getattr(torch, dtype)).reshape(4, 6)
    assert torch.equal(x.cpu(), expected[:, 2:6].t())
    x.fill_(7)  # PyTorch's write lands in nbx's memory
    assert nbx.ops.sum(t.to(nbx.float64)).item() == pytest.approx(
        expected.double().sum().item() - expected[:, 2:6].double().sum().item() + 7 * 16)


@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_to_nbx_shares_memory(torch, device, dtype):
    dev = shared_device(torch, device)
    base = torch.arange(60, device=dev).sub(30).to(getattr(torch, dtype)).reshape(6, 10)
    x = base[1:5, 3:9:2]  # offset 13, strides (10, 2)
    t = nbx.from_dlpack(x)
    assert t.device == device
    assert t.data_ptr() == x.data_ptr()
    assert t.shape == (4, 3) and t.stride() == (10, 2)
    assert np.array_equal(t.to(nbx.float64).numpy(force=True), x.double().cpu().numpy())
    t.fill_(3)  # nbx's write lands in PyTorch's memory
    assert bool((base[1:5, 3:9:2] == 3).all())
    assert base[0, 0].item() == torch.tensor(-30).to(base.dtype).item()  # outside: untouched


def test_round_trip_torch_nbx_torch_keeps_one_memory(torch, device):
    dev = shared_device(torch, device)
    x = torch.linspace(-1, 1, 12, device=dev).reshape(3, 4)
    y = torch.from_dlpack(nbx.from_dlpack(x))
    assert y.data_ptr() == x.data_ptr()
    y[1, 1] = 100.0
    assert x[1, 1].item() == 100.0


def test_the_exporter_outlives_its_handles(torch, device):
    """Each side's deleter holds the other's memory: dropping the producer's last handle
    leaves the consumer's view valid (and never a double free)."""
    dev = shared_device(torch, device)
    x = torch.arange(1000, dtype=torch.float32, device=dev) * 0.5
    t = nbx.from_dlpack(x)
    del x
    gc.collect()
    torch.empty(1000, device=dev).fill_(-1)  # a reused block would show these
    assert nbx.ops.sum(t).item() == pytest.approx(0.5 * 999 * 1000 / 2)
    u = nbx.tensor(list(range(10)), dtype=nbx.float32, device=device)
    y = torch.from_dlpack(u)
    del u
    gc.collect()
    assert y.sum().item() == 45.0


def test_bool(torch, device):
    dev = shared_device(torch, device)
    t = nbx.tensor([True, False, True], device=device)
    if not torch_has_dlpack_bool(torch):
        with pytest.raises((RuntimeError, TypeError, BufferError)):
            torch.from_dlpack(t)
        return  # PyTorch 1.13 has no DLPack bool; 2.x reads kDLBool
    x = torch.from_dlpack(t)
    assert x.dtype == torch.bool and x.data_ptr() == t.data_ptr()
    assert x.cpu().tolist() == [True, False, True]
    back = nbx.from_dlpack(torch.tensor([False, True], device=dev))
    assert back.dtype == nbx.bool and back.tolist() == [False, True]


def test_capsules_are_read_once(torch):
    capsule = nbx.to_dlpack(nbx.tensor([1.0, 2.0]))
    t = torch.utils.dlpack.from_dlpack(capsule)
    assert t.tolist() == [1.0, 2.0]
    with pytest.raises(Exception):
        torch.utils.dlpack.from_dlpack(capsule)
    own = torch.utils.dlpack.to_dlpack(torch.ones(3))
    assert nbx.from_dlpack(own).tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(nbx.InvalidArgument, match="consumed already"):
        nbx.from_dlpack(own)
    del capsule, own  # an unconsumed capsule frees its tensor; a consumed one nothing
    gc.collect()


def test_dlpack_protocol_arguments():
    t = nbx.tensor([[1, 2], [3, 4]], dtype=nbx.int32)
    assert t.__dlpack_device__() == (1, 0)  # kDLCPU
    with pytest.raises(BufferError):
        t.__dlpack__(dl_device=(2, 0))
    copied = nbx.from_dlpack(t.__dlpack__(copy=True))
    assert copied.data_ptr() != t.data_ptr() and copied.tolist() == [[1, 2], [3, 4]]
    same = nbx.from_dlpack(t.__dlpack__(max_version=(1, 0), stream=None))
    assert same.data_ptr() == t.data_ptr()


def test_numpy_both_ways():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)[:, 1::2]
    t = nbx.from_numpy(a)
    assert t.data_ptr() == a.ctypes.data and t.stride() == (6, 2)
    t.fill_(5)
    assert (a == 5).all()
    flags = nbx.from_numpy(np.array([True, False]))
    assert flags.dtype == nbx.bool and flags.tolist() == [True, False]
    b = np.from_dlpack(nbx.tensor([1.5, 2.5]))
    assert b.dtype == np.float32 and b.tolist() == [1.5, 2.5]
    v = nbx.tensor([[1, 2, 3]], dtype=nbx.int16)
    assert v.numpy().ctypes.data == v.data_ptr()
    with pytest.raises(TypeError):
        nbx.from_numpy(np.zeros(2, dtype=np.uint16))
    with pytest.raises(ValueError, match="negative"):
        nbx.from_numpy(np.arange(4.0)[::-1])


def test_vulkan_refused():
    try:
        gpu = nbx.open("vulkan:0")
    except nbx.Unavailable:
        pytest.skip("no vulkan:0")
    t = nbx.tensor([1.0, 2.0], device=gpu)
    assert t.__dlpack_device__() == (7, 0)  # kDLVulkan
    with pytest.raises(nbx.Unsupported) as e:
        t.__dlpack__()
    assert e.value.capability == "dlpack" and isinstance(e.value, NotImplementedError)

"""Shared fixtures: the devices the tests run on, and PyTorch when it imports.

NBX_PY_DEVICES (comma-separated, e.g. "cuda:0") picks the devices; by default every one that
opens of host, vulkan:0, cuda:0, hip:0.
"""
import os

import pytest

import nbxtensor as nbx


def _devices():
    names = os.environ.get("NBX_PY_DEVICES", "host,vulkan:0,cuda:0,hip:0").split(",")
    present = []
    for name in names:
        try:
            present.append(nbx.open(name))
        except nbx.Unavailable:
            if os.environ.get("NBX_PY_DEVICES"):
                raise  # a device asked for by name must open
    return present


DEVICES = _devices()


@pytest.fixture(params=DEVICES, ids=[str(d) for d in DEVICES])
def device(request):
    return request.param


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def torch_device(torch, device):
    """PyTorch's device for an nbx device that shares memory with it (host, cuda)."""
    if device.type == "host":
        return torch.device("cpu")
    if device.type in ("cuda", "hip") and torch.cuda.is_available():
        return torch.device("cuda", device.index)
    return None

""".npy and .npz with NumPy itself: nbx reads what numpy.save, savez and savez_compressed
write, and NumPy reads what nbx writes, every dtype both have, from any device."""
import numpy as np
import pytest

import nbxtensor as nbx

NUMPY_DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "float16", "float32", "float64"]


def sample(dtype, shape=(3, 5)):
    values = np.arange(np.prod(shape)).reshape(shape) * 37 % 101 - 50
    return values.astype(dtype)


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_npy_both_ways(tmp_path, device, dtype):
    a = sample(dtype)
    np.save(tmp_path / "a.npy", a)
    t = nbx.load_npy(str(tmp_path / "a.npy"), device=device)
    assert t.device == device and t.dtype == nbx.dtype(dtype)
    assert np.array_equal(t.numpy(force=True), a)
    nbx.save_npy(str(tmp_path / "b.npy"), t.transpose(0, 1))
    assert np.array_equal(np.load(tmp_path / "b.npy"), a.T)


def test_npy_bytes_are_numpys(tmp_path):
    for a in (sample("float32", (2, 3)), sample("uint8", (5,)), np.array(2.5), sample("bool", (0, 4))):
        np.save(tmp_path / "np.npy", a)
        nbx.save_npy(str(tmp_path / "nbx.npy"), nbx.tensor(a))
        assert (tmp_path / "nbx.npy").read_bytes() == (tmp_path / "np.npy").read_bytes()


def test_npy_orders_and_byte_orders(tmp_path):
    a = np.asfortranarray(sample("float32", (4, 6)))
    np.save(tmp_path / "f.npy", a)
    assert np.array_equal(nbx.load_npy(str(tmp_path / "f.npy")).numpy(), a)
    b = sample(">i4", (2, 3))
    np.save(tmp_path / "be.npy", b)
    assert nbx.load_npy(str(tmp_path / "be.npy")).tolist() == b.tolist()
    np.save(tmp_path / "c.npy", np.zeros(2, dtype=np.complex64))
    with pytest.raises(nbx.InvalidArgument, match="c8"):
        nbx.load_npy(str(tmp_path / "c.npy"))


@pytest.mark.parametrize("compressed", [False, True])
def test_npz_from_numpy(tmp_path, compressed):
    arrays = {d: sample(d, (7, 11)) for d in NUMPY_DTYPES}
    arrays["big"] = np.random.default_rng(5).standard_normal((64, 300)).astype(np.float32)
    (np.savez_compressed if compressed else np.savez)(tmp_path / "z.npz", **arrays)
    loaded = nbx.load_npz(str(tmp_path / "z.npz"))
    assert list(loaded) == list(arrays)
    for name, a in arrays.items():
        assert np.array_equal(loaded[name].numpy(), a), name


def test_npz_to_numpy(tmp_path, device):
    w = nbx.tensor(sample("float32", (4, 4)), device=device)
    m = nbx.tensor([True, False, True], device=device)
    nbx.save_npz(str(tmp_path / "o.npz"), weights=w, mask=m)
    with np.load(tmp_path / "o.npz") as z:
        assert z.files == ["weights", "mask"]
        assert np.array_equal(z["weights"], sample("float32", (4, 4)))
        assert z["mask"].tolist() == [True, False, True]

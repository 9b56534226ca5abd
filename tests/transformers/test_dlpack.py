"""The DLPack hand-off: GPU features taken by another framework without a copy.

With ``device='gpu'`` and ``return_gpu_arrays=True``, ``LMUFeatures``,
``LMUPooledFeatures`` and their streams return CuPy arrays that PyTorch
(``torch.from_dlpack``), JAX (``jax.dlpack.from_dlpack``) and CuPy take without a copy:
C-contiguous (JAX copies or refuses other layouts), exposing ``__dlpack__``. The tests run
on the NumPy stand-in for CuPy, whose arrays are NumPy's with NumPy's ``__dlpack__`` (on
the CPU), or with ``LMU_SK_TEST_GPU=cupy`` on real CuPy; either way the consumer must read
the features' own memory: the same address, and a write through it seen in the features.
"""

from __future__ import annotations

import numpy as np
import pytest
from fake_cupy import REAL_GPU, clear_caches, install

from lmu_sk import LMUFeatures, LMUPooledFeatures
from lmu_sk._device import to_numpy

pytestmark = pytest.mark.gpu


@pytest.fixture
def gpu(monkeypatch):
    yield install(monkeypatch, as_gpu=True)
    clear_caches()


def address(a) -> int:
    """Address of the first element of a NumPy or CUDA array."""
    interface = getattr(a, "__cuda_array_interface__", None) or a.__array_interface__
    return interface["data"][0]


def sequences(n_channels: int, ragged: bool, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((6, 25, n_channels)).astype(np.float32)
    return [X[i, : 10 + 3 * i] for i in range(len(X))] if ragged else X


def assert_handed_off(gpu, F) -> None:
    """``F`` is a C-contiguous device array that DLPack hands over without a copy."""
    assert type(F) is gpu.ndarray
    assert F.flags.c_contiguous
    assert hasattr(F, "__dlpack__") and hasattr(F, "__dlpack_device__")
    taken = gpu.from_dlpack(F)
    assert address(taken) == address(F) and taken.shape == F.shape


@pytest.mark.parametrize("output", ["final", "sequence", "mean", "max"])
@pytest.mark.parametrize("n_channels", [1, 3])
@pytest.mark.parametrize("ragged", [False, True], ids=["equal", "ragged"])
def test_features_are_contiguous_device_arrays_dlpack_takes(gpu, output, n_channels, ragged):
    X = sequences(n_channels, ragged)
    params = dict(order=5, output=output, dtype="float32")
    F = LMUFeatures(**params, device="gpu", return_gpu_arrays=True).fit(X).transform(X)
    expected = LMUFeatures(**params, device="cpu").fit(X).transform(X)
    if isinstance(expected, list):  # 'sequence' of sequences of different lengths
        assert isinstance(F, list) and len(F) == len(expected)
    else:
        F, expected = [F], [expected]
    for got, want in zip(F, expected, strict=True):
        assert_handed_off(gpu, got)
        # float32 GPU and CPU routes: rounding only (see tests/engine/test_contract.py)
        np.testing.assert_allclose(to_numpy(got), want, rtol=0, atol=1e-4 * np.abs(want).max())


def test_pooled_features_and_streams_hand_off_too(gpu):
    X = sequences(2, ragged=False, seed=1)
    pooled = LMUPooledFeatures(thetas=[4, 20], device="gpu", return_gpu_arrays=True).fit(X)
    assert_handed_off(gpu, pooled.transform(X))
    assert_handed_off(gpu, pooled.stream(len(X)).update(X).transform())
    features = LMUFeatures(order=5, device="gpu", return_gpu_arrays=True).fit(X)
    assert_handed_off(gpu, features.stream(len(X)).update(X).transform())


def test_torch_reads_and_writes_the_features_memory(gpu):
    torch = pytest.importorskip("torch")
    X = sequences(2, ragged=False, seed=2)
    F = LMUFeatures(order=5, device="gpu", return_gpu_arrays=True).fit(X).transform(X)
    tensor = torch.from_dlpack(F)
    assert tensor.data_ptr() == address(F) and tuple(tensor.shape) == F.shape
    assert tensor.device.type == ("cuda" if REAL_GPU else "cpu")
    tensor[0, 0] = 123.0  # a write through the tensor lands in the features
    assert float(to_numpy(F)[0, 0]) == 123.0


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["LMUFeatures", "LMUPooledFeatures"])
def test_gpu_arrays_refuse_a_dataframe_container_clearly(fake_gpu, name):
    import lmu_sk

    X = np.random.default_rng(0).standard_normal((8, 20))
    transformer = getattr(lmu_sk, name)(device="gpu", return_gpu_arrays=True)
    transformer.set_output(transform="pandas")
    with pytest.raises(ValueError, match="return_gpu_arrays=False for a DataFrame"):
        transformer.fit_transform(X)
    transformer.set_output(transform="default").fit(X)
    with pytest.raises(ValueError, match="return_gpu_arrays=False for a DataFrame"):
        transformer.set_output(transform="pandas").transform(X)
    # on the host (return_gpu_arrays=False) the DataFrame is made
    transformer.set_params(return_gpu_arrays=False)
    assert type(transformer.transform(X)).__name__ == "DataFrame"

"""The float32 rounding guard of the standardization applies to features on the GPU too."""

import numpy as np
import pytest
from fake_cupy import install

from lmu_sk import LMUClassifier


@pytest.mark.parametrize("head", ["ridge", "dense"])
def test_rounding_guard_on_device_features(monkeypatch, head):
    """Features on a GPU (CuPy arrays, not np.ndarray) skipped the guard that scales a
    column whose float32 spread is rounding as constant (a constant channel: a dense
    head's accuracy 0.86 -> 0.20 without it); the lenient stand-in, an ndarray, ran it and
    mixed host and device rows, which the strict stand-in refuses as CuPy does."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 30, 2))
    X[:, :, 1] = 1.0  # a constant channel: its states' spread is their float32 rounding
    y = np.arange(40) % 2
    options = (
        dict(order=4, theta=10.0, head=head, max_iter=3)
        if head == "dense"
        else dict(order=4, theta=10.0, head=head)
    )
    cpu = LMUClassifier(device="cpu", **options).fit(X, y)
    install(monkeypatch, as_gpu=True)
    gpu = LMUClassifier(device="gpu", **options).fit(X, y)
    assert isinstance(gpu.feature_scale_, np.ndarray)
    np.testing.assert_array_equal(gpu.feature_scale_ == 1.0, cpu.feature_scale_ == 1.0)

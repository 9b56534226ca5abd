"""Bad input found by an audit: each gets a clear error, not a crash or wrong numbers."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lmu_sk import LMUFeatures
from lmu_sk.datasets import mackey_glass

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def X():
    return np.random.default_rng(0).random((4, 10))


def test_tiny_theta_is_an_error_not_nan_features(X):
    with pytest.raises(ValueError, match="theta=1e-40 is too small"):
        LMUFeatures(theta=1e-40).fit(X)


@pytest.mark.parametrize("max_memory", [float("inf"), float("nan")])
def test_infinite_memory_budget_is_a_value_error(X, max_memory):
    with pytest.raises(ValueError, match="max_memory must be a positive, finite"):
        LMUFeatures(max_memory=max_memory).fit(X)


def test_parameters_set_after_fit_are_validated(X):
    features = LMUFeatures(order=4).fit(X)
    features.set_params(method="gem")
    with pytest.raises(ValueError, match="Unknown method 'gem'"):
        features.transform(X)


def test_mackey_glass_needs_a_whole_number_of_samples():
    with pytest.raises(TypeError, match="n_samples must be an integer"):
        mackey_glass(10.5)


def test_mackey_glass_refuses_unbounded_work():
    with pytest.raises(ValueError, match="integration steps"):
        mackey_glass(100, dt=1e-7)


def test_mackey_glass_estimates_memory_before_allocating():
    with pytest.raises(ValueError, match="Mackey-Glass series"):
        mackey_glass(10**13, dt=1.0, tau=17.0, sample_interval=1.0, discard=0.0)


def test_head_trains_where_numba_cannot_cache():
    # Numba finds no cache folder (read-only site-packages, no writable home): emulated
    # by removing every cache locator before the optimizers compile.
    script = """
import numba.core.caching as caching
impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl")
impl._locator_classes = []
import numpy as np
from lmu_sk.neural.optimizers import _fused_kernels
assert _fused_kernels() is not None
from lmu_sk import DenseHeadClassifier
X = np.random.default_rng(0).standard_normal((50, 4)); y = (X[:, 0] > 0).astype(int)
print(DenseHeadClassifier(max_iter=3).fit(X, y).score(X, y))
"""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "ignore"}
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    assert result.returncode == 0, result.stderr[-2000:]

"""Shared test settings and fixtures.

The tests follow the package's layers, from the bottom up: ``dn/`` (the continuous and
discretized system, the reference recurrence), ``engine/`` (the algebra on every back-end,
its contract test, the compiled kernels), ``neural/`` (networks, optimizers, the epoch
loop), ``heads/`` (dense and ridge heads), ``transformers/`` (``LMUFeatures``,
``LMUPooledFeatures``), ``models/`` (the composites, their streams, persistence, aeon),
``dask_arrays/`` and ``cli/``. Tests of the package as a whole (README, documentation,
examples, packaging, typing, reliability across layers) stay here. Helpers shared across
folders: ``fake_cupy`` (a NumPy stand-in for CuPy), ``pooled_oracle`` and ``strategies``
(hypothesis strategies).

Tests of the GPU paths carry the mark ``gpu``. They run on the stand-in and Numba's CUDA
simulator; with ``LMU_SK_TEST_GPU=cupy`` on real CuPy and Numba-CUDA instead
(``LMU_SK_TEST_GPU=cupy python -m pytest -m gpu``, as ``benchmarks/gpu_check.py`` runs
them), which then must see a GPU.
"""

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "lmu_sk",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)
settings.load_profile("lmu_sk")

GPU_TEST_MODES = ("", "cupy")


def pytest_configure(config):
    mode = os.environ.get("LMU_SK_TEST_GPU", "")
    if mode not in GPU_TEST_MODES:
        raise pytest.UsageError(
            f"LMU_SK_TEST_GPU={mode!r}: use 'cupy' (real CuPy and Numba-CUDA) or leave it "
            "unset (the NumPy stand-in and the CUDA simulator)."
        )
    if mode == "cupy":
        from lmu_sk._device import _import_cupy_with_gpu

        cupy, reason = _import_cupy_with_gpu()
        if cupy is None:
            raise pytest.UsageError(f"LMU_SK_TEST_GPU=cupy, but {reason}.")
        if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
            raise pytest.UsageError("LMU_SK_TEST_GPU=cupy runs without the CUDA simulator.")
        from numba import cuda

        if not cuda.is_available():
            raise pytest.UsageError("LMU_SK_TEST_GPU=cupy, but numba.cuda sees no GPU.")


@pytest.fixture
def fake_gpu(monkeypatch):
    """The NumPy stand-in for CuPy installed as the GPU (or real CuPy where
    ``LMU_SK_TEST_GPU=cupy``), its caches cleared after the test."""
    from fake_cupy import clear_caches, install

    yield install(monkeypatch, as_gpu=True)
    clear_caches()


@pytest.fixture
def make_sequences():
    """Factory of random sequences in a dtype: ``make(n_samples, n_steps, n_channels,
    dtype, ragged, seed)`` gives an array ``(n_samples, n_steps, n_channels)`` or, with
    ``ragged``, a list of ``(n_steps_i, n_channels)`` arrays of lengths from ``n_steps``
    down to 1, shuffled (all different when ``n_samples <= n_steps``)."""

    def make(n_samples=4, n_steps=30, n_channels=2, dtype=np.float64, ragged=False, seed=0):
        rng = np.random.default_rng(seed)
        if not ragged:
            return rng.standard_normal((n_samples, n_steps, n_channels)).astype(dtype)
        lengths = rng.permutation(np.linspace(n_steps, 1, n_samples).round().astype(int))
        return [rng.standard_normal((n, n_channels)).astype(dtype) for n in lengths]

    return make

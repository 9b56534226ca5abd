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


def _share_the_cores_among_workers():
    """Under pytest-xdist (``-n auto``), BLAS and OpenMP get ``cores // workers`` threads
    in each worker, as in scikit-learn's own tests: every worker starting a thread per core
    oversubscribes the cores, and BLAS's waiting threads spin (the suite took 1.4x as long
    on 2 cores). The compiled kernels keep Numba's threads (every core: their parallel
    loops stay tested on several threads; limiting them too was no faster). Tests of
    ``n_jobs`` and of BLAS's threads take the fixture ``several_threads``; subprocesses
    inherit the BLAS and OpenMP limits through the environment."""
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if workers is None:
        return
    threads = str(max(1, (os.cpu_count() or 1) // int(workers)))
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, threads)  # libraries loaded from now on
    import scipy.linalg  # noqa: F401  (SciPy's own BLAS, loaded now to be limited)
    from threadpoolctl import threadpool_limits

    threadpool_limits(int(threads))  # those loaded already (NumPy's BLAS)


def pytest_configure(config):
    _share_the_cores_among_workers()
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
def several_threads():
    """Every core for BLAS and the compiled kernels (Numba) during the test, and at least
    two where the library allows them: what a test of ``n_jobs`` or of threads compares
    with, which the share of the cores that pytest-xdist's workers get may leave at one
    (Numba's threads stay at most ``NUMBA_NUM_THREADS``, one on a one-core machine)."""
    import numba
    from threadpoolctl import threadpool_limits

    threads = max(2, os.cpu_count() or 1)
    before = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        with threadpool_limits(threads):
            yield threads
    finally:
        numba.set_num_threads(before)


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

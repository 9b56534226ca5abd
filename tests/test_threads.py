"""``n_jobs``: the threads of the compiled kernels (Numba) and of BLAS during a call.

The estimators set both for the duration of ``fit``, ``transform`` and the predictions
and restore them afterwards; ``None`` leaves the libraries' own settings. The results do
not depend on the number of threads beyond rounding: the comparisons below allow 1e-10 of
the outputs' scale in float64 (sums split over threads add in another order; measured
differences are ~1e-15).
"""

import numba
import numpy as np
import pytest
from threadpoolctl import threadpool_info

from lmu_sk import LMUClassifier, LMUFeatures, LMUPooledFeatures, LMURegressor
from lmu_sk import ridge as ridge_module
from lmu_sk._threads import check_n_jobs, thread_limit

# every core, at least two, whatever share of them pytest-xdist's workers get: n_jobs=1
# must change something
pytestmark = pytest.mark.usefixtures("several_threads")


def _blas_threads() -> set[int]:
    return {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 24))
    return X, (X[:, -5:].sum(axis=1) > 0).astype(int)


def test_check_n_jobs():
    assert check_n_jobs(None) is None
    assert check_n_jobs(3) == 3
    assert check_n_jobs(np.int64(2)) == 2
    assert check_n_jobs(-1) >= 1 and check_n_jobs(-1000) == 1
    with pytest.raises(ValueError, match="n_jobs=0"):
        check_n_jobs(0)
    for bad in (1.5, "2", True):
        with pytest.raises(TypeError, match="n_jobs must be None"):
            check_n_jobs(bad)


def test_thread_limit_sets_and_restores_both_pools():
    numba_before, blas_before = numba.get_num_threads(), _blas_threads()
    with thread_limit(1):
        assert numba.get_num_threads() == 1
        assert _blas_threads() == {1}
    assert numba.get_num_threads() == numba_before and _blas_threads() == blas_before
    with thread_limit(None):  # the libraries' settings, untouched
        assert numba.get_num_threads() == numba_before and _blas_threads() == blas_before


def test_calls_on_other_threads_leave_blas_to_the_main_thread():
    """BLAS's threads are process-wide: two calls overlapping in threads (a grid search on
    joblib's threading backend) each restored what it found, and BLAS stayed at the main
    thread's limit for good (1 thread after the search). Only the main thread sets it."""
    import threading

    from joblib import parallel_backend
    from sklearn.model_selection import GridSearchCV

    (before,) = _blas_threads()
    limit = before + 1
    entered, release = threading.Event(), threading.Event()
    seen = {}

    def other_thread_call():
        with thread_limit(limit + 1):
            seen["inside"] = _blas_threads()
            entered.set()
            release.wait(timeout=30)

    with thread_limit(limit):
        worker = threading.Thread(target=other_thread_call)
        worker.start()
        assert entered.wait(timeout=30)
        assert seen["inside"] == {limit} == _blas_threads()  # the main thread's limit
    release.set()
    worker.join(timeout=30)
    assert _blas_threads() == {before}
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((36, 30)), np.arange(36) % 3
    with parallel_backend("threading", n_jobs=2):
        GridSearchCV(LMUClassifier(n_jobs=1), {"order": [2, 3]}, cv=3).fit(X, y)
    assert _blas_threads() == {before}


@pytest.mark.parametrize("estimator", ["classifier", "regressor"])
def test_estimators_run_with_n_jobs_threads_and_restore_them(data, estimator, monkeypatch):
    """The ridge head's eigendecomposition (BLAS) and the pooled kernel (Numba) run under
    ``n_jobs=1``; afterwards the settings are back; the model equals the default's."""
    X, y = data
    seen = []
    eigh = np.linalg.eigh

    def recording_eigh(a):
        seen.append((numba.get_num_threads(), _blas_threads()))
        return eigh(a)

    monkeypatch.setattr(ridge_module.np.linalg, "eigh", recording_eigh)
    make = LMUClassifier if estimator == "classifier" else LMURegressor
    target = y if estimator == "classifier" else X[:, -5:].sum(axis=1)
    numba_before, blas_before = numba.get_num_threads(), _blas_threads()
    one = make(n_jobs=1, device="cpu").fit(X, target)
    # one eigendecomposition per candidate of the classifier's window weights
    n_calls = len(seen)
    assert n_calls == (2 if estimator == "classifier" else 1)
    assert seen == [(1, {1})] * n_calls
    assert numba.get_num_threads() == numba_before and _blas_threads() == blas_before
    default = make(device="cpu").fit(X, target)
    assert seen[n_calls:] == [(numba_before, blas_before)] * n_calls
    scale = np.abs(default.predict(X).astype(float)).max()
    # the ridge head's Gram matrix of float32 products (gram_dtype=float32 for the
    # standardized features) is summed by BLAS in an order that depends on its threads:
    # ~1e-7 of the scale apart (float64's products: ~1e-15)
    np.testing.assert_allclose(one.predict(X), default.predict(X), atol=2e-6 * scale, rtol=0)
    with pytest.raises(ValueError, match="n_jobs=0"):
        make(n_jobs=0).fit(X, target)


@pytest.mark.parametrize("make", [LMUFeatures, LMUPooledFeatures])
def test_transformers_take_n_jobs(data, make, monkeypatch):
    X, _ = data
    from lmu_sk import engine

    name = "features" if make is LMUFeatures else "pooled_features"
    compute = getattr(engine, name)
    seen = []

    def recording(*args, **kwargs):
        seen.append(numba.get_num_threads())
        return compute(*args, **kwargs)

    monkeypatch.setattr(engine, name, recording)
    params = {"order": 4, "device": "cpu"}
    one = make(**params, n_jobs=1).fit(X)
    F1 = one.transform(X)
    assert seen == [1]
    Fd = make(**params).fit_transform(X)
    np.testing.assert_allclose(F1, Fd, atol=1e-10 * np.abs(Fd).max(), rtol=0)
    assert make(n_jobs=2).get_params()["n_jobs"] == 2  # stored as given


@pytest.mark.parametrize("locked", [False, True])
def test_parallel_section_limits_threads_and_restores_them_even_on_errors(locked, monkeypatch):
    """``parallel_section(k)`` runs Numba at most ``k`` threads inside and restores the
    caller's count after, on an error too; under the lock (the workqueue layer) the lock
    is released after either, so the next section does not wait forever."""
    from lmu_sk.kernels import _threading

    monkeypatch.setattr(_threading, "needs_lock", lambda: locked)
    before = numba.get_num_threads()
    with _threading.parallel_section(1):
        assert numba.get_num_threads() == 1
        assert _threading._LOCK.locked() == locked
    assert numba.get_num_threads() == before and not _threading._LOCK.locked()
    with pytest.raises(KeyError), _threading.parallel_section(1):
        raise KeyError("inside")
    assert numba.get_num_threads() == before and not _threading._LOCK.locked()
    with _threading.parallel_section(before + 1):  # more than there are: unchanged
        assert numba.get_num_threads() == before
    with _threading.parallel_section():
        assert numba.get_num_threads() == before


def test_the_pooled_kernel_of_one_series_runs_on_one_thread(monkeypatch):
    """Waking a second thread for each window's kernel cost a one-series prediction
    8.7 ms against 1.1 ms on one thread; a batch of 500 series still takes them all."""
    import lmu_sk.engine.run as run
    from lmu_sk import LMUPooledFeatures

    asked = []
    kernel = run.cpu.pooled_features

    def recording(*args, threads=None, **kwargs):
        asked.append(threads)
        return kernel(*args, threads=threads, **kwargs)

    X = np.random.default_rng(0).standard_normal((500, 300))
    features = LMUPooledFeatures().fit(X[:50])
    monkeypatch.setattr(run.cpu, "pooled_features", recording)
    features.transform(X[:1])
    assert asked and set(asked) == {1}
    asked.clear()
    features.transform(X)
    assert None in asked  # the long windows of 500 series: every thread


def _predict_in_child(model, X):
    return model.predict(X)


def test_a_process_forked_after_gnu_openmp_refuses_the_kernels_clearly(data):
    """Numba terminated a process forked after its kernels ran on GNU OpenMP at its first
    kernel, and a multiprocessing pool (Linux's default 'fork') waited for it forever; the
    kernels now raise a RuntimeError there that names the ways through."""
    import multiprocessing
    import warnings

    from lmu_sk.kernels import _threading

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork on this platform")
    X, y = data
    model = LMUClassifier(device="cpu").fit(X, y)
    if not _threading._uses_gnu_openmp():
        pytest.skip(f"the kernels ran on {numba.threading_layer()!r}, not GNU OpenMP")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # (fork of a threaded process)
        with multiprocessing.get_context("fork").Pool(1) as pool:
            result = pool.apply_async(_predict_in_child, (model, X[:3]))
            with pytest.raises(RuntimeError, match=r"was forked.*get_context\('spawn'\)"):
                result.get(timeout=60)

"""Bad input found by an audit: each gets a clear error, not a crash or wrong numbers."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lmu_sk import LMUFeatures, LMUPooledFeatures
from lmu_sk.datasets import mackey_glass
from lmu_sk.dn import EulerInstabilityWarning, discrete_system, impulse_response

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def X():
    return np.random.default_rng(0).random((4, 10))


def test_tiny_theta_gives_the_limit_features_not_nan(X):
    # theta -> 0 forgets all but the last step: the final state is Bbar * u[-1], with
    # Bbar the limit -A1^-1 B1 (tests/dn/test_dn.py); float64 rounding of that solve.
    from lmu_sk.dn import continuous_system

    F = LMUFeatures(order=8, theta=1e-40, dtype="float64").fit_transform(X)
    A1, B1 = continuous_system(8, 1.0)
    expected = X[:, -1:] * -np.linalg.solve(A1, B1)
    np.testing.assert_allclose(F, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("max_memory", [float("inf"), float("nan")])
def test_infinite_memory_budget_is_a_value_error(X, max_memory):
    with pytest.raises(ValueError, match="max_memory must be a finite number of bytes"):
        LMUFeatures(max_memory=max_memory).fit(X)


def test_parameters_set_after_fit_are_validated(X):
    features = LMUFeatures(order=4).fit(X)
    features.set_params(method="gem")
    with pytest.raises(ValueError, match=r"'method' parameter of LMUFeatures .* Got 'gem'"):
        features.transform(X)


def test_mackey_glass_needs_a_whole_number_of_samples():
    with pytest.raises(TypeError, match="n_samples must be an integer"):
        mackey_glass(10.5)


def test_mackey_glass_refuses_unbounded_work():
    with pytest.raises(ValueError, match="integration steps"):
        mackey_glass(100, dt=1e-7)


def test_mackey_glass_estimates_memory_before_allocating():
    with pytest.raises(ValueError, match="integration steps"):
        mackey_glass(10**13, dt=1.0, tau=17.0, sample_interval=1.0, discard=0.0)


# Every module of the package imported with Numba's cache locators removed; then each
# compiled kernel found (the module-level dispatchers, the optimizers' fused loops too) is
# listed with whether it caches on disk, and one of them compiles and runs.
_NO_CACHE_SCRIPT = """
import importlib, json, pkgutil, sys
import numba
import numba.core.caching as caching
from numba.core.registry import CPUDispatcher
impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl")
impl._locator_classes = []
try:
    numba.njit(cache=True)(lambda x: x)
except RuntimeError:
    pass
else:
    raise AssertionError("Numba still finds a cache folder: the emulation does not hold")
import numpy as np
import lmu_sk
for info in pkgutil.walk_packages(lmu_sk.__path__, "lmu_sk."):
    if info.name.rsplit(".", 1)[-1] != "__main__":
        try:
            importlib.import_module(info.name)
        except ImportError:  # an optional dependency (aeon, matplotlib, dask) is missing
            pass
        except RuntimeError as error:  # aeon's own kernels ask for the cache: not ours
            if "no locator available" not in str(error) or "/lmu_sk/" in str(error):
                raise
kernels = {}
for name, module in list(sys.modules.items()):
    if name.startswith("lmu_sk"):
        for attr, value in vars(module).items():
            if isinstance(value, CPUDispatcher):
                kernels[f"{name}.{attr}"] = value
from lmu_sk import DenseHeadClassifier
X = np.random.default_rng(0).standard_normal((50, 4)); y = (X[:, 0] > 0).astype(int)
score = DenseHeadClassifier(max_iter=3).fit(X, y).score(X, y)
print(json.dumps({
    "caching": {name: not isinstance(k._cache, caching.NullCache) for name, k in kernels.items()},
    "score": score,
}))
"""


def test_kernels_run_where_numba_cannot_cache():
    # Numba finds no cache folder (read-only site-packages, no writable home): emulated by
    # removing every cache locator before the package is imported. Whether a kernel falls
    # back to compiling without the cache is decided when it is decorated (njit_cached),
    # so every kernel is checked to have been decorated without the cache, and one (the
    # dense head's Adam loop) is compiled and run; compiling the others without the cache
    # is the same compilation as with it.
    import json

    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "ignore"}
    result = subprocess.run(
        [sys.executable, "-c", _NO_CACHE_SCRIPT],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout.splitlines()[-1])
    caching = report["caching"]
    # the engine's CPU kernels and both optimizer loops were found
    loops = {"lmu_sk.kernels.optimizers.adam_segment", "lmu_sk.kernels.optimizers.sgd_segment"}
    assert loops <= set(caching), sorted(caching)
    assert "lmu_sk.kernels.cpu._recurrence" in caching, sorted(caching)
    assert not any(caching.values()), caching
    assert 0.0 <= report["score"] <= 1.0


CAST_OVERFLOW = r"beyond the largest float32 \(3.4e\+38\): converting X to float32 overflows"


@pytest.mark.parametrize("call", ["fit", "fit_transform", "transform", "ragged"])
def test_float64_input_beyond_float32_names_the_overflow(X, call):
    # finite float64 values above 3.4e38 become inf when cast to float32: that is an
    # overflow of the dtype asked for, not NaN or infinity in the input
    big = X * 1e39
    est = LMUFeatures(order=4, dtype="float32", device="cpu")
    with pytest.raises(ValueError, match=CAST_OVERFLOW) as info:
        if call == "transform":
            est.fit(X).transform(big)
        elif call == "ragged":
            est.fit_transform([big[0], big[1, :7]])
        else:
            getattr(est, call)(big)
    assert (
        "Rescale the input (e.g. sklearn.preprocessing.StandardScaler), or use dtype='float64'"
        in str(info.value)
    )
    assert "NaN" not in str(info.value)


def test_pooled_float64_input_beyond_float32_names_the_overflow(X):
    """The pooled features read float64 input at its precision: what is refused is the
    states beyond float32's range that their thresholds would compare."""
    with pytest.raises(ValueError, match=r"states beyond the largest float32 \(3.4e\+38\)"):
        LMUPooledFeatures(order=2, thetas=[5], dtype="float32", device="cpu").fit(X * 1e39)


@pytest.mark.parametrize("pooled", [False, True])
def test_features_overflowing_an_unstable_euler_system_name_the_instability(pooled):
    """An Euler-discretized system that grows without bound (warned at fit) overflows
    float64 on long enough input: the error names that cause and its fix, not the
    rescaling that cannot help (the input is standard normal). The pooled features see
    it in their training states, the thresholds' source."""
    X = np.random.default_rng(0).standard_normal((4, 2000))
    if pooled:
        est = LMUPooledFeatures(order=8, thetas=[2.0], stride=1, discretizer="euler")
    else:
        est = LMUFeatures(order=64, theta=10.0, discretizer="euler")
    with pytest.warns(EulerInstabilityWarning):
        with np.errstate(over="ignore", invalid="ignore"):
            with pytest.raises(ValueError, match="is unstable") as info:
                est.fit_transform(X)
    message = str(info.value)
    assert "discretizer='zoh'" in message
    assert "Rescale" not in message and "rescale" not in message


def test_features_overflowing_float32_name_the_overflow():
    # float32 input within range whose DN state 1 exceeds it: the input has the signs of
    # that state's weights, which sum to 1.41 in magnitude, so the state is 1.41 * 3e38
    Abar, Bbar = discrete_system(4, 10.0, "zoh")
    weights = impulse_response(Abar, Bbar, 10)[::-1, 1]
    X = (3e38 * np.sign(weights))[None].astype(np.float32)
    assert np.isfinite(X).all()
    with np.errstate(over="ignore", invalid="ignore"):
        with pytest.raises(ValueError, match="input X is finite but its Delay Network") as info:
            LMUFeatures(order=4, theta=10.0, device="cpu").fit_transform(X)
    message = str(info.value)
    assert "overflow float32 (largest 3.4e+38)" in message
    assert "Use dtype='float64', or rescale the input" in message
    # in float64 the same input is fine
    F = LMUFeatures(order=4, theta=10.0, dtype="float64", device="cpu").fit_transform(X)
    assert np.isfinite(F).all() and np.abs(F).max() > 3.4e38


def test_nan_input_is_still_reported_as_nan(X):
    bad = X.copy()
    bad[1, 3] = np.nan
    est = LMUFeatures(order=4, dtype="float32", device="cpu").fit(X)
    with pytest.raises(ValueError, match="Input X contains NaN or infinity"):
        est.transform(bad)


_THREADS_SCRIPT = """
import threading
import numba
import numpy as np
from lmu_sk import LMUFeatures, LMUPooledFeatures

X = np.random.default_rng(0).standard_normal((32, 300, 2))
features = {
    output: LMUFeatures(order=12, output=output, method="recurrence", device="cpu").fit(X)
    for output in ("final", "sequence", "mean", "max")
}
pooled = LMUPooledFeatures(order=4, thetas=[10, 100], device="cpu").fit(X)
jobs = [est.transform for est in features.values()] + [pooled.transform] * 4
expected = [job(X) for job in jobs]
assert numba.threading_layer() == "workqueue", numba.threading_layer()

barrier = threading.Barrier(len(jobs))
results = [[] for _ in jobs]

def work(i):
    barrier.wait()
    for _ in range(5):
        results[i].append(jobs[i](X))

threads = [threading.Thread(target=work, args=(i,)) for i in range(len(jobs))]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
for want, got in zip(expected, results):
    assert len(got) == 5
    for result in got:
        np.testing.assert_array_equal(result, want)
print("ok")
"""


def test_parallel_kernels_from_threads_under_the_workqueue_layer():
    # Numba's workqueue layer aborts the process ("Concurrent access has been detected")
    # when two threads launch parallel kernels at once: the launches must be serialised.
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "PYTHONWARNINGS": "ignore",
        "NUMBA_THREADING_LAYER": "workqueue",
    }
    result = subprocess.run(
        [sys.executable, "-c", _THREADS_SCRIPT],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "ok"


@pytest.mark.gpu
def test_device_input_beyond_float32_names_the_overflow(X, monkeypatch):
    # CuPy casts without floating-point flags: the check compares finiteness before and
    # after the cast (run on the NumPy stand-in for CuPy)
    from fake_cupy import clear_caches, install

    fake = install(monkeypatch, as_gpu=True)
    try:
        est = LMUFeatures(order=4, dtype="float32", device="gpu")
        with np.errstate(over="ignore"), pytest.raises(ValueError, match=CAST_OVERFLOW):
            est.fit(fake.asarray(X * 1e39))
        bad = fake.asarray(np.where(np.arange(10) == 3, np.nan, X))
        with pytest.raises(ValueError, match="contains NaN or infinity"):
            est.fit(bad)
    finally:
        clear_caches()


def test_a_budget_error_writes_need_and_budget_apart():
    """Both rounded to one decimal, a shortfall read "would need 1.0 MB but only 1.0 MB
    is available": as many more decimals as they need to differ."""
    from lmu_sk._memory import MemoryBudgetError, check_fits, format_bytes_apart

    assert format_bytes_apart(2.5e9, 1e9) == ("2.5 GB", "1.0 GB")
    assert format_bytes_apart(1_004_000, 1_000_000) == ("1.004 MB", "1.000 MB")
    with pytest.raises(MemoryBudgetError, match=r"would need 1\.04 MB but only 1\.00 MB"):
        check_fits(1_040_000, "A table", "Use less.", budget=1_000_000)

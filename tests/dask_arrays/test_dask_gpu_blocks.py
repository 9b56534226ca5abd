"""Dask arrays on the GPU paths, on the strict CuPy stand-in: CuPy-backed blocks through
the fits that gather rows or targets, and GPU features (CuPy blocks) through scaling."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from sklearn.exceptions import ConvergenceWarning  # noqa: E402

from lmu_sk import LMUClassifier, LMUFeatures, LMUPooledFeatures, LMURegressor  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.fixture
def gpu(monkeypatch):
    fake_cupy = pytest.importorskip("fake_cupy")
    xp = fake_cupy.install(monkeypatch, as_gpu=True)
    with dask.config.set(scheduler="synchronous"), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        yield xp
    fake_cupy.clear_caches()


def data(n=60, n_steps=24):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, n_steps))
    return X, (X[:, -5:].sum(axis=1) > 0).astype(int)


def on_device(xp, a, rows=20):
    return da.from_array(xp.asarray(a), chunks=(rows, *a.shape[1:]), asarray=False)


@pytest.mark.parametrize("device", ["gpu", "cpu"])
def test_pooled_features_fit_on_cupy_blocks(gpu, device):
    X, _ = data()
    fitted = LMUPooledFeatures(device=device).fit(on_device(gpu, X))
    expected = LMUPooledFeatures(device="cpu").fit(X).transform(X)
    got = fitted.transform(on_device(gpu, X)).compute()
    assert type(got) is np.ndarray
    np.testing.assert_allclose(got, expected, atol=1e-5)


@pytest.mark.parametrize("estimator", [LMUClassifier, LMURegressor])
def test_default_models_on_cupy_blocks_and_targets(gpu, estimator):
    X, y = data()
    target = y if estimator is LMUClassifier else X[:, -5:].sum(axis=1)
    model = estimator(device="gpu").fit(on_device(gpu, X), on_device(gpu, target))
    reference = estimator(device="cpu").fit(X, target)
    # the features agree to their float32 sums' rounding (above), which moves the float32
    # rounding of the ridge head's Gram products (gram_dtype=float32 for standardized
    # features): the predictions to a few 1e-6 of their scale
    np.testing.assert_allclose(
        model.predict(on_device(gpu, X)).compute(), reference.predict(X), rtol=2e-5, atol=1e-9
    )


def test_screened_channels_on_cupy_blocks(gpu):
    X, y = data()
    X3 = np.stack([X, X[:, ::-1]], axis=2)
    model = LMUClassifier(device="gpu", channels=1).fit(on_device(gpu, X3), y)
    assert model.predict(on_device(gpu, X3)).compute().shape == (60,)


def test_streamed_dense_head_takes_cupy_targets(gpu):
    X, y = data()
    with dask.config.set({"lmu_sk.gather_limit": 1000}):
        LMUClassifier(device="gpu", head="dense", max_iter=2).fit(
            on_device(gpu, X), on_device(gpu, y)
        )
    LMUClassifier(device="gpu", head="dense").partial_fit(
        on_device(gpu, X), on_device(gpu, y), classes=[0, 1]
    )


@pytest.mark.parametrize("X_on", ["numpy", "dask"])
def test_dask_validation_set_is_scaled_block_by_block_on_the_gpu(gpu, X_on):
    X, y = data()
    Xd = X if X_on == "numpy" else da.from_array(X, chunks=20)
    model = LMUClassifier(device="gpu", head="dense", early_stopping=True, max_iter=3)
    model.fit(Xd, y, X_val=da.from_array(X, chunks=20), y_val=y)
    assert model.predict(X).shape == (60,)


def test_gpu_features_of_numpy_blocks_have_cupy_meta(gpu):
    X, _ = data()
    F = LMUFeatures(order=4, device="gpu", return_gpu_arrays=True).fit_transform(
        da.from_array(X, chunks=20)
    )
    assert type(F._meta) is type(F.blocks[0].compute()) is gpu.ndarray

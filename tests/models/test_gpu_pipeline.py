"""The estimators' GPU paths end to end, on a NumPy stand-in for CuPy (``fake_cupy``), or
on real CuPy with ``LMU_SK_TEST_GPU=cupy``.

What is checked here, without a GPU: that the features of ``LMUClassifier`` and
``LMURegressor`` stay on the device between the DN precomputation and the head's training
(no device-to-host copy of a feature matrix), that the GPU paths give the numbers of the
CPU paths, that CuPy inputs are validated on the device, and that a model fitted on the
GPU predicts on a machine without one. On real CuPy the copies to the host cannot be
observed, and the rest is checked. The numerics of the CuPy kernels themselves are
tested in ``tests/engine/test_gpu_kernels.py``.

Tolerance: everything runs in float64, where the GPU and CPU routes differ only by the
order of the sums (``~1e-15`` relative per feature); 20 epochs of Adam amplify that by far
less than the ``1e-9`` the comparisons allow. The same holds between cuBLAS and the CPU's
BLAS on a real GPU: both compute float64 sums, in different orders.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from fake_cupy import FakeDeviceArray, uninstall

from lmu_sk import DenseHeadClassifier, DenseHeadRegressor, LMUClassifier, LMURegressor
from lmu_sk.head import _BaseDenseHead

pytestmark = pytest.mark.gpu

ORDER = 12


@pytest.fixture
def head_inputs(monkeypatch):
    """Types of the feature matrices the heads are trained on (X, then X_val if given)."""
    seen = []
    fit = _BaseDenseHead._fit

    def recording_fit(self, X, y, incremental=False, validation_data=None, **kwargs):
        seen.append(type(X))
        if validation_data is not None:
            seen.append(type(validation_data[0]))
        return fit(self, X, y, incremental=incremental, validation_data=validation_data, **kwargs)

    monkeypatch.setattr(_BaseDenseHead, "_fit", recording_fit)
    return seen


def sequences(n=90, n_steps=30, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, n_steps))
    y = (X[:, :10].sum(axis=1) > 0).astype(int) + (X[:, -5:].sum(axis=1) > 1)
    return X, y


def copied_feature_matrices(n_rows: tuple[int, ...]) -> list:
    """Device-to-host copies of matrices with ``ORDER`` columns and one of ``n_rows`` rows
    (none observed on real CuPy)."""
    return [
        s for s in FakeDeviceArray.transfers if len(s) == 2 and s[1] == ORDER and s[0] in n_rows
    ]


PARAMS = dict(
    head="dense",
    order=ORDER,
    theta=20.0,
    hidden_layer_sizes=(16,),
    max_iter=20,
    learning_rate_init=1e-2,
    random_state=0,
    dtype="float64",
)


@pytest.mark.parametrize("scale_features", [True, False])
def test_classifier_features_stay_on_the_device(fake_gpu, head_inputs, scale_features):
    X, y = sequences()
    X_val, y_val = sequences(n=40, seed=1)
    options = dict(PARAMS, scale_features=scale_features, early_stopping=True)
    gpu = LMUClassifier(**options, device="gpu").fit(X, y, X_val=X_val, y_val=y_val)
    assert head_inputs == [fake_gpu.ndarray, fake_gpu.ndarray]
    assert copied_feature_matrices((90, 40)) == []
    proba = gpu.predict_proba(X_val)
    assert type(proba) is np.ndarray and copied_feature_matrices((40,)) == []

    cpu = LMUClassifier(**options, device="cpu").fit(X, y, X_val=X_val, y_val=y_val)
    assert gpu.n_iter_ == cpu.n_iter_
    np.testing.assert_allclose(proba, cpu.predict_proba(X_val), rtol=0, atol=1e-9)
    if scale_features:
        assert type(gpu.feature_mean_) is np.ndarray
        np.testing.assert_allclose(gpu.feature_scale_, cpu.feature_scale_, rtol=1e-12)


def test_validation_split_is_drawn_on_the_device(fake_gpu, head_inputs):
    X, y = sequences()
    options = dict(PARAMS, early_stopping=True, validation_fraction=0.2)
    gpu = LMUClassifier(**options, device="gpu").fit(X, y)
    assert head_inputs == [fake_gpu.ndarray]
    assert copied_feature_matrices((90, 72, 18)) == []
    cpu = LMUClassifier(**options, device="cpu").fit(X, y)
    assert gpu.validation_scores_ == cpu.validation_scores_


def test_per_step_regression_stays_on_the_device(fake_gpu, head_inputs):
    X, _ = sequences(n=20)
    y = np.roll(X, 3, axis=1)  # the input three steps ago, at every step
    options = dict(PARAMS, feature_output="sequence", max_iter=10)
    gpu = LMURegressor(**options, device="auto").fit(X, y)
    assert head_inputs == [fake_gpu.ndarray]
    assert copied_feature_matrices((20 * 30,)) == []
    cpu = LMURegressor(**options, device="cpu").fit(X, y)
    prediction = gpu.predict(X)
    assert prediction.shape == (20, 30)
    np.testing.assert_allclose(prediction, cpu.predict(X), rtol=0, atol=1e-9)


def test_device_input_to_the_estimators(fake_gpu):
    X, y = sequences()
    X_dev = fake_gpu.asarray(X)
    gpu = LMUClassifier(**PARAMS, device="auto").fit(X_dev, y)
    cpu = LMUClassifier(**PARAMS, device="cpu").fit(X, y)
    np.testing.assert_allclose(gpu.predict_proba(X_dev), cpu.predict_proba(X), atol=1e-9)
    # a CPU estimator given device input brings it to the host once and works there
    on_cpu = LMUClassifier(**PARAMS, device="cpu").fit(X_dev, y)
    np.testing.assert_array_equal(on_cpu.predict(X_dev), cpu.predict(X))


def test_fitted_on_the_gpu_predicts_without_one(fake_gpu, monkeypatch):
    X, y = sequences()
    gpu = LMUClassifier(**PARAMS, device="gpu").fit(X, y)
    expected = gpu.predict_proba(X)
    assert all(type(c) is np.ndarray for c in gpu.coefs_)
    blob = pickle.dumps(gpu)
    uninstall(monkeypatch)  # no GPU from here on
    loaded = pickle.loads(blob)
    np.testing.assert_allclose(loaded.predict_proba(X), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("head_class", [DenseHeadClassifier, DenseHeadRegressor])
def test_heads_validate_device_input_on_the_device(fake_gpu, head_class):
    rng = np.random.default_rng(0)
    F = rng.standard_normal((60, 5))
    y = (F[:, 0] > 0).astype(int)
    head = head_class(hidden_layer_sizes=(8,), max_iter=5, random_state=0, device="gpu")
    head.fit(fake_gpu.asarray(F), y)
    assert head.n_features_in_ == 5 and not hasattr(head, "feature_names_in_")
    assert copied_feature_matrices((60,)) == []
    bad = F.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        head.fit(fake_gpu.asarray(bad), y)
    with pytest.raises(ValueError, match="Input X contains NaN"):
        head.predict(fake_gpu.asarray(bad))
    with pytest.raises(ValueError, match=r"X has 4 features, but .* expecting 5"):
        head.predict(fake_gpu.asarray(F[:, :4]))
    with pytest.raises(ValueError, match=r"shape \(n_samples, n_features\)"):
        head.fit(fake_gpu.asarray(F[:, :, None]), y)
    with pytest.raises(TypeError, match="real numbers"):
        head.fit(fake_gpu.asarray(F.astype(complex)), y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        head.fit(fake_gpu.asarray(F), y[:-1])
    with pytest.raises(ValueError, match="X_val contains NaN"):
        head.set_params(early_stopping=True).fit(
            fake_gpu.asarray(F), y, X_val=fake_gpu.asarray(bad), y_val=y
        )


def test_a_dense_head_fits_on_cupy_input_in_float32(fake_gpu):
    """The rounding measure of float32 features takes its sample rows of a CuPy X on the
    device (NumPy's asarray of a CuPy array raises), and a CuPy y is read on the host."""
    X, y = sequences()
    model = LMUClassifier(order=ORDER, head="dense", max_iter=3, device="gpu", dtype="float32")
    model.fit(fake_gpu.asarray(X.astype(np.float32)), fake_gpu.asarray(y))
    assert model.predict(fake_gpu.asarray(X)).shape == (len(X),)

"""Inputs of extreme scales and pandas' layouts through the composites: the feature
standardization of features beyond 1e154, 'sequence' regression of nested DataFrames and
Series, channels-last sequences of different lengths given with ``channels_first=True``."""

import numpy as np
import pandas as pd
import pytest

from lmu_sk import LMUClassifier, LMUFeatures, LMURegressor
from lmu_sk.estimators import _weighted_moments


@pytest.mark.parametrize("scale", [1e-300, 1e160, 1e300])
def test_the_model_of_scaled_sequences_is_the_models(scale):
    """Features beyond 1e154 overflowed their squares in the standardization: an
    infinite scale, every standardized feature 0, the class prior predicted for all.
    In float64 the model does not depend on the input's scale (to 1e-12: rounding)."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((12, 20))
    y = np.arange(12) % 2
    params = dict(order=4, dtype="float64", feature_output="final")
    base = LMUClassifier(**params).fit(X, y)
    scaled = LMUClassifier(**params).fit(X * scale, y)
    assert np.all(np.isfinite(scaled.feature_scale_))
    np.testing.assert_allclose(
        scaled.predict_proba(X * scale), base.predict_proba(X), rtol=0, atol=1e-12
    )


def test_weighted_moments_are_numpys():
    rng = np.random.default_rng(2)
    F = rng.standard_normal((1000, 7)) * np.array([1e-200, 1e-3, 1, 1e3, 1e150, 1e200, 0])
    w = rng.uniform(0, 2, 1000)
    mean, std = _weighted_moments(F, w)
    expected = np.average(F, axis=0, weights=w)
    np.testing.assert_allclose(mean, expected, rtol=1e-12, atol=0)
    # each column's own unit: neither its squares' overflow nor their underflow
    unit = np.where(np.abs(F).max(axis=0) > 0, np.abs(F).max(axis=0), 1.0)
    centered = (F - expected) / unit
    spread = np.sqrt(np.average(centered**2, axis=0, weights=w)) * unit
    np.testing.assert_allclose(std, spread, rtol=1e-12)
    assert std[-1] == 0.0


@pytest.mark.parametrize("n_channels", [1, 2])
def test_sequence_regression_predicts_pandas_layouts_as_arrays(n_channels):
    """'sequence' predictions were reshaped by np.shape of the raw input: a nested
    DataFrame's (its channels read as steps) and a Series' (refused as 1-D)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((8, 10, n_channels))
    model = LMURegressor(order=4, feature_output="sequence", max_iter=5, random_state=0)
    model.fit(X, np.cumsum(X[..., 0], axis=1))
    expected = model.predict(X)
    nested = pd.DataFrame({f"c{k}": [pd.Series(x[:, k]) for x in X] for k in range(n_channels)})
    np.testing.assert_array_equal(model.predict(nested), expected)
    targets = np.cumsum(X[..., 0], axis=1)
    assert model.score(nested, targets) == model.score(X, targets)
    if n_channels == 1:
        np.testing.assert_array_equal(model.predict(pd.Series(list(X[..., 0]))), expected)


def test_channels_last_sequences_of_different_lengths_given_channels_first_are_named():
    """They were refused with the advice to pass channels_first=True, already set."""
    rng = np.random.default_rng(0)
    X = [rng.standard_normal((k, 3)) for k in range(5, 11)]
    with pytest.raises(ValueError, match="pass channels_first=False"):
        LMUClassifier(order=4, channels_first=True).fit(X, np.arange(6) % 2)
    with pytest.raises(ValueError, match="pass channels_first=False"):
        LMUFeatures(order=4, channels_first=True).fit(X)
    # (n_channels, n_steps_i), as aeon gives them: read
    swapped = [x.T for x in X]
    assert LMUFeatures(order=4, channels_first=True).fit_transform(swapped).shape == (6, 12)


def test_pooled_models_do_not_advise_float64_for_input_beyond_float32():
    """The pooled features compare their states with float32 thresholds whatever their
    dtype: dtype='float64' refuses the same input, and the advice said to use it. (They
    read the input at its own precision: the refusal is of the states it would give.)"""
    from lmu_sk import LMUPooledFeatures

    rng = np.random.default_rng(0)
    X = rng.standard_normal((12, 30))
    model = LMUClassifier(order=4).fit(X, np.arange(12) % 2)
    big = X.copy()
    big[0, 3] = 1e39
    for call in (model.predict, LMUPooledFeatures(order=4, dtype="float32").fit(X).transform):
        with pytest.raises(ValueError, match=r"float32 thresholds .*whatever its dtype") as info:
            call(big)
        assert "or use dtype='float64'" not in str(info.value)
    with pytest.raises(ValueError, match="not dtype='float64'"):
        model.stream(1).update(np.array([1e39]))
    # the Delay Network's own features: a wider dtype does take it
    with pytest.raises(ValueError, match="or use dtype='float64'"):
        LMUFeatures(order=4, dtype="float32").fit(X).transform(big)


def test_the_refusal_of_large_input_names_the_channels_sums_it_measured():
    """With channel sums (2 to 4 channels, the default) the windows also read sums of
    channels, and the refusal measured those: 'X holds values up to 2e+38' of an input of
    1e38. It names what it measured, for the batch transform and the stream alike."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((12, 20, 2))
    model = LMUClassifier(order=4).fit(X, np.arange(12) % 2)
    big = np.full((1, 5, 2), 1e38)
    with pytest.raises(ValueError, match=r"^X's channels and their sums hold values up to 2e\+38"):
        model.predict(big)
    with pytest.raises(ValueError, match=r"^U's channels and their sums hold values up to 2e\+38"):
        model.stream(1).update(big)
    one = LMUClassifier(order=4).fit(X[:, :, 0], np.arange(12) % 2)
    with pytest.raises(ValueError, match=r"^X holds values up to 1e\+38"):
        one.predict(big[:, :, 0])


@pytest.mark.parametrize("scale", [1e-300, 1e160])
def test_dask_block_by_block_standardization_of_extreme_scales(scale):
    """The dask path's column moments (the dense head trained block by block) overflowed
    the same way: an infinite scale for features beyond 1e154."""
    dask = pytest.importorskip("dask")
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(1)
    X = rng.standard_normal((12, 20))
    y = np.arange(12) % 2
    params = dict(order=4, dtype="float64", feature_output="final", head="dense")
    params.update(random_state=0, max_iter=20)
    with dask.config.set({"lmu_sk.gather_limit": 1}), np.errstate(all="ignore"):
        base = LMUClassifier(**params).fit(da.from_array(X, chunks=6), y)
        scaled = LMUClassifier(**params).fit(da.from_array(X * scale, chunks=6), y)
    np.testing.assert_allclose(scaled.feature_scale_ / scale, base.feature_scale_, rtol=1e-12)
    np.testing.assert_allclose(
        scaled.predict_proba(X * scale), base.predict_proba(X), rtol=0, atol=1e-12
    )


@pytest.mark.parametrize("X", [np.empty((0, 30)), [], np.empty((0, 30, 2))])
def test_no_sequences_are_refused_in_the_estimators_own_name(X):
    """An empty X was refused by scikit-learn's check in the name of LMUPooledFeatures,
    which the user never built; the composites name themselves, at fit and predict."""
    from lmu_sk import LMURegressor

    for estimator in (LMUClassifier(order=4), LMURegressor(order=4)):
        name = type(estimator).__name__
        with pytest.raises(ValueError, match=rf"^{name} got X with no sequences .*fit needs"):
            estimator.fit(X, [])
    model = LMUClassifier(order=4).fit(
        np.random.default_rng(0).random((10, 30)), np.arange(10) % 2
    )
    if np.ndim(X) == 2:
        with pytest.raises(ValueError, match=r"^LMUClassifier got X with no sequences .*predict"):
            model.predict(X)


def test_pooled_features_refuse_targets_of_another_length_whatever_the_channels():
    """y screens channels only beyond 16 of them; with fewer a y of the wrong length was
    taken silently (a mistake in the pipeline that only wide data revealed)."""
    from lmu_sk import LMUPooledFeatures

    X = np.random.default_rng(0).random((10, 30))
    with pytest.raises(
        ValueError, match=r"one target .* per sequence: 10 sequences, y of shape \(7,\)"
    ):
        LMUPooledFeatures(order=4).fit(X, np.arange(7))
    LMUPooledFeatures(order=4).fit(X, np.arange(10))  # the right length, and no y, pass
    LMUPooledFeatures(order=4).fit(X)

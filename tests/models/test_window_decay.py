"""The classifier's ridge head chooses how much the longer windows are down-weighted."""

import numpy as np
import pytest
from test_tsc_defaults import shapes

import lmu_sk.estimators as estimators
from lmu_sk import LMUClassifier, LMUPooledFeatures, LMURegressor
from lmu_sk.ridge import RidgeHeadClassifier


def test_the_weights_fall_with_the_windows_log_length():
    features = LMUPooledFeatures(thetas=[4, 16, 64], order=3, n_biases=4).fit(shapes()[0])
    weights = estimators._window_decay_weights(features, (0.0, 2.0))
    offsets = features.spec_.window_offsets()
    assert weights.shape == (2, features.n_features_out_)
    np.testing.assert_array_equal(weights[0], 1.0)
    for w, expected in enumerate([1.0, 0.5, 0.25]):  # 2 ** (-2 * r), r = 0, 1/2, 1
        np.testing.assert_allclose(weights[1, offsets[w] : offsets[w + 1]], expected)
    # windows of one length, or a single decay: nothing to choose
    one = LMUPooledFeatures(thetas=[8, 8], order=3, n_biases=4).fit(shapes()[0])
    assert estimators._window_decay_weights(one, (0.0, 2.0)) is None
    assert estimators._window_decay_weights(features, (0.0,)) is None


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_the_choice_is_the_ridge_heads_on_the_standardized_features(kernel):
    """The composite's head is the ridge head given the decays' candidates on its own
    standardized features: the same choice, penalty and coefficients."""
    X, y = shapes()
    clf = LMUClassifier(device="cpu", kernel=kernel).fit(X, y)
    candidates = estimators._window_decay_weights(clf.features_, estimators._WINDOW_DECAYS)
    assert any((clf.head_.feature_weights_ == c).all() for c in candidates)
    # the float64 features the composite's ridge head takes
    F = clf.features_._transform(X, False, dtype=np.float64)
    F = (F - clf.feature_mean_) / clf.feature_scale_
    # (the composite's standardized features take float32's Gram products: so here)
    alone = RidgeHeadClassifier(kernel=kernel).fit(
        F, y, feature_weights=candidates, gram_dtype=np.float32
    )
    np.testing.assert_array_equal(alone.feature_weights_, clf.head_.feature_weights_)
    assert alone.alpha_ == clf.alpha_
    # float64 on both sides, the features' rounding apart: 1e-8 of the coefficients' scale
    name = "coef_" if kernel == "linear" else "dual_coef_"
    ours, theirs = getattr(clf.head_, name), getattr(alone, name)
    np.testing.assert_allclose(ours, theirs, atol=1e-8 * np.abs(theirs).max())


def test_many_sequences_and_the_regressor_keep_unweighted_features(monkeypatch):
    X, y = shapes()
    monkeypatch.setattr(estimators, "_WINDOW_DECAY_MAX_SAMPLES", len(y) - 1)
    assert LMUClassifier(device="cpu").fit(X, y).head_.feature_weights_ is None
    assert LMURegressor(device="cpu").fit(X, y.astype(float)).head_.feature_weights_ is None


def _drifts(kind: str, seed: int):
    """Two classes of 40 series of 300 steps: 'local', a fast oscillation of one of two
    frequencies under a large random walk (the short windows see it, the long ones
    mostly the walk); 'trend', noise about a slow trend up or down (the long windows')."""
    rng = np.random.default_rng(seed)
    n, steps = 40, 300
    t = np.arange(steps)
    y = np.arange(n) % 2
    if kind == "local":
        X = np.cumsum(rng.standard_normal((n, steps)), axis=1) * 0.5
        X += 0.5 * np.sin(t[None, :] * np.where(y[:, None] == 1, 1.0, 2.0))
    else:
        slope = np.where(y[:, None] == 1, 1.0, -1.0) * rng.uniform(0.002, 0.006, (n, 1))
        X = rng.standard_normal((n, steps)) + slope * t[None, :]
    return X, y


@pytest.mark.parametrize("seed", [0, 1])
def test_leave_one_out_down_weights_the_long_windows_where_the_class_is_local(seed):
    """The decay follows the data: chosen for a local signal, not for a trend."""
    local = LMUClassifier(device="cpu").fit(*_drifts("local", seed))
    assert local.head_.feature_weights_.min() == 2.0 ** -estimators._WINDOW_DECAYS[-1]
    trend = LMUClassifier(device="cpu").fit(*_drifts("trend", seed))
    np.testing.assert_array_equal(trend.head_.feature_weights_, 1.0)

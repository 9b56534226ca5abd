"""Ridge heads against scikit-learn's RidgeClassifierCV / RidgeCV; compliance; bad input.

Both solve the same least-squares problems in float64 through different factorizations, so
coefficients, intercepts, chosen penalties and leave-one-out scores agree to 1e-6 (far
above the ~1e-12 rounding of well-conditioned problems, far below any change of alpha).
"""

import numpy as np
import pytest
from fake_cupy import clear_caches, install
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import RidgeClassifierCV, RidgeCV
from sklearn.utils.estimator_checks import parametrize_with_checks

from lmu_sk.ridge import RidgeHeadClassifier, RidgeHeadRegressor

ALPHAS = np.logspace(-2, 3, 11)


@st.composite
def problems(draw):
    n_samples = draw(st.integers(6, 60))
    n_features = draw(st.integers(1, 80))
    n_classes = draw(st.integers(2, 5))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    X = rng.standard_normal((n_samples, n_features)) * rng.uniform(0.5, 3, n_features)
    y = np.arange(n_samples) % n_classes
    rng.shuffle(y)
    return X, y, draw(st.booleans())


@settings(max_examples=40, deadline=None)
@given(problems())
def test_classifier_matches_ridge_classifier_cv(problem):
    X, y, fit_intercept = problem
    ours = RidgeHeadClassifier(alphas=ALPHAS, fit_intercept=fit_intercept).fit(X, y)
    theirs = RidgeClassifierCV(alphas=ALPHAS, fit_intercept=fit_intercept).fit(X, y)
    assert ours.alpha_ == theirs.alpha_
    np.testing.assert_allclose(ours.best_score_, theirs.best_score_, rtol=1e-6)
    # scikit-learn flattens the coefficients of one feature and two classes, and keeps a
    # scalar zero intercept without fit_intercept
    np.testing.assert_allclose(ours.coef_, np.reshape(theirs.coef_, ours.coef_.shape), atol=1e-6)
    expected = np.broadcast_to(theirs.intercept_, np.shape(ours.intercept_))
    np.testing.assert_allclose(ours.intercept_, expected, atol=1e-6)
    np.testing.assert_allclose(ours.decision_function(X), theirs.decision_function(X), atol=1e-6)


@settings(max_examples=40, deadline=None)
@given(problems(), st.sampled_from([0, 2, 3]))
def test_regressor_matches_ridge_cv(problem, n_targets):
    """One target as y of shape (n,), or several (a column y is flattened with a warning)."""
    X, _, fit_intercept = problem
    rng = np.random.default_rng(len(X))
    y = X @ rng.standard_normal((X.shape[1], max(n_targets, 1))) + rng.standard_normal(
        (len(X), max(n_targets, 1))
    )
    y = y[:, 0] if n_targets == 0 else y
    ours = RidgeHeadRegressor(alphas=ALPHAS, fit_intercept=fit_intercept).fit(X, y)
    theirs = RidgeCV(alphas=ALPHAS, fit_intercept=fit_intercept).fit(X, y)
    assert ours.alpha_ == theirs.alpha_
    np.testing.assert_allclose(ours.best_score_, theirs.best_score_, rtol=1e-6)
    np.testing.assert_allclose(ours.coef_, np.reshape(theirs.coef_, ours.coef_.shape), atol=1e-6)
    expected = np.broadcast_to(theirs.intercept_, np.shape(ours.intercept_))
    np.testing.assert_allclose(ours.intercept_, expected, atol=1e-6)
    predicted = ours.predict(X)
    expected = np.reshape(theirs.predict(X), predicted.shape)
    np.testing.assert_allclose(predicted, expected, atol=1e-6)


def test_device_features_on_the_stand_in(monkeypatch):
    fake = install(monkeypatch, as_gpu=True)
    try:
        rng = np.random.default_rng(0)
        X, y = rng.standard_normal((30, 50)), np.arange(30) % 3
        on_device = RidgeHeadClassifier(alphas=ALPHAS).fit(fake.asarray(X), y)
        on_host = RidgeHeadClassifier(alphas=ALPHAS).fit(X, y)
        np.testing.assert_allclose(on_device.coef_, on_host.coef_, atol=1e-10)
        np.testing.assert_array_equal(on_device.predict(fake.asarray(X)), on_host.predict(X))
    finally:
        clear_caches()


@parametrize_with_checks([RidgeHeadClassifier(), RidgeHeadRegressor()])
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize(
    ("y", "match"),
    [
        ([0, 0, 0, 0], "only one class"),
        ([0, 1, 2, 3], "single training sample"),
    ],
)
def test_classifier_bad_targets(y, match):
    with pytest.raises(ValueError, match=match):
        RidgeHeadClassifier().fit(np.eye(4), y)


@pytest.mark.parametrize("alphas", [[], [1.0, 0.0], [-1.0], [np.inf]])
def test_bad_alphas(alphas):
    with pytest.raises(ValueError, match="alphas"):
        RidgeHeadRegressor(alphas=alphas).fit(np.eye(4), np.arange(4.0))

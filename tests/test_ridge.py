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
        # host weights with device features: moved to the device, same solution
        w = rng.uniform(0.0, 2.0, 30)
        on_device = RidgeHeadClassifier(alphas=ALPHAS).fit(fake.asarray(X), y, sample_weight=w)
        on_host = RidgeHeadClassifier(alphas=ALPHAS).fit(X, y, sample_weight=w)
        np.testing.assert_allclose(on_device.coef_, on_host.coef_, atol=1e-10)
    finally:
        clear_caches()


# Leave-one-out leaves out one copy of a repeated row at a time, so the penalty chosen on
# repeated rows differs from the one chosen with integer weights; RidgeCV's own
# leave-one-out does the same (scikit-learn runs this check on it with explicit CV splits).
# With a single penalty the two agree: test_weights_equal_repeated_rows_for_one_alpha.
LOO_WEIGHT_CHECK = {
    "check_sample_weight_equivalence_on_dense_data": "leave-one-out is not repetition-invariant"
}


@parametrize_with_checks(
    [RidgeHeadClassifier(), RidgeHeadRegressor()],
    expected_failed_checks=lambda est: LOO_WEIGHT_CHECK,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@settings(max_examples=30, deadline=None)
@given(problems(), st.sampled_from([0, 2]), st.booleans())
def test_weighted_fits_match_scikit_learn(problem, n_targets, with_zeros):
    """Sample weights as RidgeCV / RidgeClassifierCV take them (rows scaled by sqrt(w)),
    zero weights included; float64 on both sides, so the same 1e-6 as above."""
    X, y, fit_intercept = problem
    rng = np.random.default_rng(len(X) + X.shape[1])
    w = rng.uniform(0.2, 3.0, len(X))
    if with_zeros:
        w[rng.choice(len(X), len(X) // 4, replace=False)] = 0.0
    ours = RidgeHeadClassifier(alphas=ALPHAS, fit_intercept=fit_intercept)
    ours.fit(X, y, sample_weight=w)
    theirs = RidgeClassifierCV(alphas=ALPHAS, fit_intercept=fit_intercept)
    theirs.fit(X, y, sample_weight=w)
    assert ours.alpha_ == theirs.alpha_
    np.testing.assert_allclose(ours.best_score_, theirs.best_score_, rtol=1e-6)
    np.testing.assert_allclose(ours.coef_, np.reshape(theirs.coef_, ours.coef_.shape), atol=1e-6)
    np.testing.assert_allclose(ours.decision_function(X), theirs.decision_function(X), atol=1e-6)
    target = X @ rng.standard_normal((X.shape[1], max(n_targets, 1))) + rng.standard_normal(
        (len(X), max(n_targets, 1))
    )
    target = target[:, 0] if n_targets == 0 else target
    ours = RidgeHeadRegressor(alphas=ALPHAS, fit_intercept=fit_intercept)
    ours.fit(X, target, sample_weight=w)
    theirs = RidgeCV(alphas=ALPHAS, fit_intercept=fit_intercept).fit(X, target, sample_weight=w)
    assert ours.alpha_ == theirs.alpha_
    np.testing.assert_allclose(ours.best_score_, theirs.best_score_, rtol=1e-6)
    np.testing.assert_allclose(ours.coef_, np.reshape(theirs.coef_, ours.coef_.shape), atol=1e-6)
    predicted = ours.predict(X)
    expected = np.reshape(theirs.predict(X), predicted.shape)
    np.testing.assert_allclose(predicted, expected, atol=1e-6)


@pytest.mark.parametrize("Head", [RidgeHeadClassifier, RidgeHeadRegressor])
def test_weights_equal_repeated_rows_for_one_alpha(Head):
    """With one penalty there is nothing to choose: integer weights give the fit on
    repeated rows and a zero weight drops the row (float64 solves of the same normal
    equations through different factorizations: 1e-8)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 6))
    y = np.arange(20) % 3 if Head is RidgeHeadClassifier else rng.standard_normal(20)
    w = rng.integers(0, 4, 20)
    w[:3] = (0, 1, 2)  # a zero weight, and every class kept
    weighted = Head(alphas=[1.0]).fit(X, y, sample_weight=w)
    repeated = Head(alphas=[1.0]).fit(X.repeat(w, axis=0), y.repeat(w))
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(weighted.intercept_, repeated.intercept_, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize(
    ("weights", "match"),
    [
        (np.ones(3), "3 weights but X has 4 samples"),
        (np.ones((4, 1)), "1-D"),
        ([1.0, -1.0, 1.0, 1.0], "non-negative"),
        ([1.0, np.nan, 1.0, 1.0], "NaN"),
        (np.zeros(4), "non-zero"),
        (["a", "b", "c", "d"], "numbers"),
    ],
)
def test_bad_sample_weight(weights, match):
    with pytest.raises(ValueError, match=match):
        RidgeHeadRegressor().fit(np.eye(4), np.arange(4.0), sample_weight=weights)


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

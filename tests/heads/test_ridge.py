"""Ridge heads against scikit-learn's RidgeClassifierCV / RidgeCV; probabilities calibrated
on the leave-one-out decision values; class weights; one sample per class; compliance; bad
input.

Both solve the same least-squares problems in float64 through different factorizations, so
coefficients, intercepts, chosen penalties and leave-one-out scores agree to 1e-6 (far
above the ~1e-12 rounding of well-conditioned problems, far below any change of alpha).
"""

import logging

import numpy as np
import pytest
import scipy.special
from fake_cupy import clear_caches, install
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import RidgeClassifierCV, RidgeCV
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.estimator_checks import parametrize_with_checks

from lmu_sk._memory import MemoryBudgetError
from lmu_sk.ridge import (
    SINGLE_SAMPLE_RELATIVE_ALPHA,
    RidgeHeadClassifier,
    RidgeHeadRegressor,
    _fit_inverse_temperature,
    _logits,
)

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
    ours = RidgeHeadRegressor(alphas=ALPHAS, fit_intercept=fit_intercept, clip_margin=None)
    ours.fit(X, y)
    theirs = RidgeCV(alphas=ALPHAS, fit_intercept=fit_intercept).fit(X, y)
    assert ours.alpha_ == theirs.alpha_
    np.testing.assert_allclose(ours.best_score_, theirs.best_score_, rtol=1e-6)
    np.testing.assert_allclose(ours.coef_, np.reshape(theirs.coef_, ours.coef_.shape), atol=1e-6)
    expected = np.broadcast_to(theirs.intercept_, np.shape(ours.intercept_))
    np.testing.assert_allclose(ours.intercept_, expected, atol=1e-6)
    predicted = ours.predict(X)
    expected = np.reshape(theirs.predict(X), predicted.shape)
    np.testing.assert_allclose(predicted, expected, atol=1e-6)


@pytest.mark.gpu
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
    ours = RidgeHeadRegressor(alphas=ALPHAS, fit_intercept=fit_intercept, clip_margin=None)
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
        (np.ones(4) * (1 + 2j), "real numbers"),  # cast, the imaginary parts were dropped
        (1 + 2j, "real numbers"),
    ],
)
def test_bad_sample_weight(weights, match):
    with pytest.raises(ValueError, match=match):
        RidgeHeadRegressor().fit(np.eye(4), np.arange(4.0), sample_weight=weights)


def test_classifier_needs_two_classes():
    with pytest.raises(ValueError, match="only one class"):
        RidgeHeadClassifier().fit(np.eye(4), [0, 0, 0, 0])


@pytest.mark.parametrize("alphas", [[], [1.0, 0.0], [-1.0], [np.inf]])
def test_bad_alphas(alphas):
    with pytest.raises(ValueError, match="alphas"):
        RidgeHeadRegressor(alphas=alphas).fit(np.eye(4), np.arange(4.0))


# ---------------------------------------------------------------- probabilities


def separated(n_per_class=15, n_classes=3, n_features=20, noise=1.0, seed=0):
    """Gaussian classes around random centres: separable at low noise, mixed at high."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((n_classes, n_features)) * 2.0
    y = np.repeat(np.arange(n_classes), n_per_class)
    X = centres[y] + noise * rng.standard_normal((len(y), n_features))
    return X, y


@settings(max_examples=40, deadline=None)
@given(problems(), st.sampled_from([None, "balanced"]))
def test_probabilities_sum_to_one_and_agree_with_predict(problem, class_weight):
    """Rows of non-negative probabilities summing to one (float64 softmax: 1e-12), the
    most probable class is the predicted one, and the log probabilities are their logs."""
    X, y, fit_intercept = problem
    clf = RidgeHeadClassifier(alphas=ALPHAS, fit_intercept=fit_intercept)
    clf.set_params(class_weight=class_weight).fit(X, y)
    rng = np.random.default_rng(len(X))
    X_new = np.vstack([X, rng.standard_normal((7, X.shape[1])) * 3.0])
    proba = clf.predict_proba(X_new)
    assert proba.shape == (len(X_new), len(clf.classes_))
    assert (proba >= 0).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(clf.classes_[proba.argmax(axis=1)], clf.predict(X_new))
    log_proba = clf.predict_log_proba(X_new)
    np.testing.assert_allclose(np.exp(log_proba), proba, rtol=1e-10, atol=1e-300)
    assert np.isfinite(log_proba).all()
    assert clf.temperature_ > 0 and np.isfinite(clf.temperature_)


def test_binary_probability_is_the_logistic_of_the_decision():
    X, y = separated(n_classes=2, noise=2.5)
    clf = RidgeHeadClassifier().fit(X, y)
    decision = clf.decision_function(X)
    expected = 1.0 / (1.0 + np.exp(-decision / clf.temperature_))
    np.testing.assert_allclose(clf.predict_proba(X)[:, 1], expected, rtol=1e-12)
    assert clf.loo_decision_.shape == (len(X),)


@pytest.mark.parametrize("n_classes", [2, 4])
@pytest.mark.parametrize("weighted", [False, True])
def test_loo_decision_values_are_exact(n_classes, weighted):
    """Refitting without each sample at the chosen penalty gives the stored leave-one-out
    decision values (both solve the same float64 normal equations: 1e-8)."""
    X, y = separated(n_per_class=6, n_classes=n_classes, n_features=9, noise=2.0)
    w = np.random.default_rng(1).uniform(0.5, 2.0, len(y)) if weighted else None
    clf = RidgeHeadClassifier(alphas=[0.3, 3.0, 30.0]).fit(X, y, sample_weight=w)
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        refit = RidgeHeadClassifier(alphas=[clf.alpha_])
        refit.fit(X[keep], y[keep], sample_weight=None if w is None else w[keep])
        np.testing.assert_allclose(
            refit.decision_function(X[i : i + 1])[0], clf.loo_decision_[i], atol=1e-8
        )


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("weighted", [False, True])
def test_loo_errors_near_interpolation_equal_refits(seed, weighted):
    """With 100x more features than samples and a small penalty the fit nearly
    interpolates: 1 - leverage is ~1e-7, and the rounding of the null directions'
    eigenvalues (~eps * max s^2) once moved the leave-one-out errors by 1e-4 and changed
    the chosen penalty between LAPACK builds. Against refits without each sample, solved
    directly in float64 (1e-6: the refits' own conditioning, ~1e-9 here)."""
    rng = np.random.default_rng(seed)
    n, p, alpha = 30, 3000, 1e-2
    X = rng.standard_normal((n, p)) * 3.0
    y = X[:, :5].sum(axis=1) + rng.standard_normal(n)
    w = rng.uniform(0.2, 3.0, n) if weighted else np.ones(n)
    head = RidgeHeadRegressor(alphas=[alpha]).fit(X, y, sample_weight=w if weighted else None)
    errors = []
    for i in range(n):
        keep = np.arange(n) != i
        x_mean = w[keep] @ X[keep] / w[keep].sum()
        y_mean = w[keep] @ y[keep] / w[keep].sum()
        root = np.sqrt(w[keep])
        A = (X[keep] - x_mean) * root[:, None]
        dual = np.linalg.solve(A @ A.T + alpha * np.eye(n - 1), (y[keep] - y_mean) * root)
        residual = y[i] - (X[i] - x_mean) @ (A.T @ dual) - y_mean
        errors.append(w[i] * residual**2)
    np.testing.assert_allclose(head.cv_errors_[0], np.mean(errors), rtol=1e-6)


@pytest.mark.parametrize("n_classes", [2, 3, 6])
@pytest.mark.parametrize("noise", [0.7, 2.0, 4.0])
def test_the_temperature_minimises_the_smoothed_loo_log_loss(n_classes, noise):
    """The fitted scale is the minimum of the convex smoothed-target loss: no better at
    temperature 1 or 1 % either side; and the hard-label leave-one-out log loss improves
    over temperature 1."""
    X, y = separated(n_classes=n_classes, noise=noise, seed=n_classes)
    clf = RidgeHeadClassifier().fit(X, y)
    logits = _logits(clf.loo_decision_)
    on_true = (len(y) + 1.0) / (len(y) + 2.0)
    targets = np.full((len(y), n_classes), (1 - on_true) / (n_classes - 1))
    targets[np.arange(len(y)), y] = on_true

    def smoothed(scale):
        return -np.mean((targets * scipy.special.log_softmax(scale * logits, axis=1)).sum(1))

    def hard(scale):
        return -np.mean(scipy.special.log_softmax(scale * logits, axis=1)[np.arange(len(y)), y])

    scale = 1.0 / clf.temperature_
    for other in (1.0, scale * 1.01, scale * 0.99):
        assert smoothed(scale) <= smoothed(other) + 1e-12
    np.testing.assert_allclose(clf.loo_log_loss_, hard(scale), rtol=1e-10)
    assert clf.loo_log_loss_ < hard(1.0)


def test_separable_loo_decisions_keep_a_finite_temperature():
    """Smoothed targets: perfectly separated classes still get probabilities below one,
    so one mistake later costs a finite log loss."""
    X, y = separated(noise=0.05)
    clf = RidgeHeadClassifier().fit(X, y)
    assert np.isfinite(clf.temperature_) and clf.temperature_ > 0
    proba = clf.predict_proba(X)
    assert proba.max() < 1.0 - 1e-6
    assert proba.min() > 0.0


def test_uninformative_decisions_give_near_uniform_probabilities():
    """Pure-noise features: the leave-one-out decisions carry nothing, the temperature is
    large and the probabilities stay near 1 / n_classes, while still ranked as predict."""
    rng = np.random.default_rng(3)
    X, y = rng.standard_normal((60, 40)), np.arange(60) % 3
    clf = RidgeHeadClassifier().fit(X, y)
    proba = clf.predict_proba(rng.standard_normal((20, 40)))
    assert np.abs(proba - 1 / 3).max() < 0.15
    assert clf.loo_log_loss_ <= np.log(3) + 0.05


def test_calibration_lowers_the_held_out_log_loss():
    """On held-out data from the same noisy classes the leave-one-out temperature gives a
    lower log loss than the raw one-vs-rest scores at temperature 1."""
    X, y = separated(n_per_class=20, n_classes=4, n_features=60, noise=3.0, seed=5)
    X_test, y_test = separated(n_per_class=200, n_classes=4, n_features=60, noise=3.0, seed=5)
    clf = RidgeHeadClassifier().fit(X, y)

    def log_loss(proba):
        return -np.mean(np.log(proba[np.arange(len(y_test)), y_test]))

    ours = log_loss(clf.predict_proba(X_test))
    at_one = log_loss(scipy.special.softmax(clf.decision_function(X_test), axis=1))
    assert ours < at_one - 0.05


def test_non_finite_loo_values_are_left_out_of_the_temperature():
    """A leverage within rounding of one makes a leave-one-out value infinite: that row
    takes no part, and the scale is the one fitted on the others (same bisection: 1e-9)."""
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((30, 3)) + 2.0 * np.eye(3)[np.arange(30) % 3]
    indices = np.arange(30) % 3
    spoiled = logits.copy()
    spoiled[4] = [np.inf, -np.inf, np.nan]
    weights = np.ones(30)
    weights[4] = 0.0
    expected = _fit_inverse_temperature(logits, indices, weights)
    got = _fit_inverse_temperature(spoiled, indices, None)
    np.testing.assert_allclose(got, expected, rtol=1e-9)
    assert np.isfinite(got).all()


def test_inverse_temperature_of_tied_logits():
    """Logits equal across classes carry no information: scale 1, uniform probabilities."""
    scale, loss = _fit_inverse_temperature(np.zeros((5, 3)), np.arange(5) % 3, None)
    assert scale == 1.0
    np.testing.assert_allclose(loss, np.log(3))


@pytest.mark.gpu
def test_probabilities_on_the_stand_in(monkeypatch):
    fake = install(monkeypatch, as_gpu=True)
    try:
        X, y = separated(noise=2.0)
        on_device = RidgeHeadClassifier(alphas=ALPHAS).fit(fake.asarray(X), y)
        on_host = RidgeHeadClassifier(alphas=ALPHAS).fit(X, y)
        np.testing.assert_allclose(on_device.loo_decision_, on_host.loo_decision_, atol=1e-10)
        np.testing.assert_allclose(on_device.temperature_, on_host.temperature_, rtol=1e-8)
        np.testing.assert_allclose(
            on_device.predict_proba(fake.asarray(X)), on_host.predict_proba(X), atol=1e-10
        )
    finally:
        clear_caches()


# ---------------------------------------------------------------- class weights


@settings(max_examples=30, deadline=None)
@given(problems(), st.integers(0, 2**16), st.booleans())
def test_class_weight_matches_ridge_classifier_cv(problem, seed, with_sample_weight):
    """'balanced' and dicts (with a class left out: weight 1) as RidgeClassifierCV takes
    them, alone and times sample weights; float64 on both sides: 1e-6 as above."""
    X, y, fit_intercept = problem
    rng = np.random.default_rng(seed)
    labels = np.unique(y)
    as_dict = {label: float(rng.uniform(0.2, 3.0)) for label in labels[:-1]}
    w = rng.uniform(0.2, 3.0, len(y)) if with_sample_weight else None
    for class_weight in ("balanced", as_dict):
        ours = RidgeHeadClassifier(
            alphas=ALPHAS, fit_intercept=fit_intercept, class_weight=class_weight
        ).fit(X, y, sample_weight=w)
        theirs = RidgeClassifierCV(
            alphas=ALPHAS, fit_intercept=fit_intercept, class_weight=class_weight
        ).fit(X, y, sample_weight=w)
        assert ours.alpha_ == theirs.alpha_
        np.testing.assert_allclose(
            ours.coef_, np.reshape(theirs.coef_, ours.coef_.shape), atol=1e-6
        )
        np.testing.assert_allclose(
            ours.decision_function(X), theirs.decision_function(X), atol=1e-6
        )


@pytest.mark.parametrize("class_weight", ["balanced", {0: 3.0, 2: 0.5}])
def test_class_weight_equals_its_sample_weights(class_weight):
    """The same fit, penalty, leave-one-out decisions and temperature as the sample weights
    class_weight stands for (the same computation: 1e-12)."""
    X, y = separated(n_per_class=10, noise=2.0)
    X, y = X[:-6], y[:-6]  # unbalanced
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    by_class = RidgeHeadClassifier(class_weight=class_weight).fit(X, y, sample_weight=w)
    equivalent = compute_sample_weight(class_weight, y) * w
    by_sample = RidgeHeadClassifier().fit(X, y, sample_weight=equivalent)
    assert by_class.alpha_ == by_sample.alpha_
    np.testing.assert_allclose(by_class.coef_, by_sample.coef_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(by_class.loo_decision_, by_sample.loo_decision_, atol=1e-12)
    np.testing.assert_allclose(by_class.temperature_, by_sample.temperature_, rtol=1e-12)
    assert by_class.class_weight == class_weight  # stored as given


def test_balanced_weights_raise_the_recall_of_a_rare_class():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 1, (90, 5)), rng.normal(0.8, 1, (10, 5))])
    y = np.r_[np.zeros(90, int), np.ones(10, int)]
    X_test = np.vstack([rng.normal(0, 1, (900, 5)), rng.normal(0.8, 1, (100, 5))])
    y_test = np.r_[np.zeros(900, int), np.ones(100, int)]
    plain = RidgeHeadClassifier().fit(X, y).predict(X_test)
    balanced = RidgeHeadClassifier(class_weight="balanced").fit(X, y).predict(X_test)
    assert (balanced[y_test == 1] == 1).mean() > (plain[y_test == 1] == 1).mean() + 0.2


@pytest.mark.parametrize(
    ("class_weight", "match"),
    [
        ("bal", "class_weight must be None, 'balanced' or a dict"),
        (3.0, "class_weight must be None, 'balanced' or a dict"),
        ({0: -1.0}, "finite, non-negative"),
        ({0: np.nan}, "finite, non-negative"),
        ({0: "heavy"}, "finite, non-negative"),
        ({0: 0.0, 1: 0.0}, "zero weight"),
    ],
)
def test_bad_class_weight(class_weight, match):
    with pytest.raises(ValueError, match=match):
        RidgeHeadClassifier(class_weight=class_weight).fit(np.eye(4), [0, 0, 1, 1])


# ---------------------------------------------------------------- one sample per class


def test_one_sample_per_class_fits_and_logs_the_penalty(caplog):
    """Leave-one-out cannot choose when every class has one sample: the penalty is the
    documented fraction of the mean squared singular value of the centered features,
    logged at INFO; the model recognises its own training samples and noisy copies."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((6, 40))
    y = np.array(["a", "b", "c", "d", "e", "f"])
    with caplog.at_level(logging.INFO, logger="lmu_sk"):
        clf = RidgeHeadClassifier(alphas=[1e-3]).fit(X, y)
    messages = [r.getMessage() for r in caplog.records if r.name == "lmu_sk.ridge"]
    assert any("single training sample" in m for m in messages)
    Xc = X - X.mean(axis=0)
    s2 = np.linalg.eigvalsh(Xc @ Xc.T)
    s2 = s2[s2 > s2.max() * 1e-12]
    np.testing.assert_allclose(clf.alpha_, SINGLE_SAMPLE_RELATIVE_ALPHA * s2.mean(), rtol=1e-10)
    assert clf.cv_errors_.shape == (1,)
    np.testing.assert_array_equal(clf.predict(X), y)
    noisy = X + 0.3 * rng.standard_normal(X.shape)
    np.testing.assert_array_equal(clf.predict(noisy), y)
    proba = clf.predict_proba(noisy)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(clf.classes_[proba.argmax(axis=1)], clf.predict(noisy))
    # no leave-one-out evidence of reliability: near-uniform probabilities
    assert np.abs(proba - 1 / 6).max() < 0.01


def test_two_classes_of_one_sample_each():
    clf = RidgeHeadClassifier().fit([[0.0, 1.0], [1.0, 0.0]], [0, 1])
    np.testing.assert_array_equal(clf.predict([[0.1, 0.9], [0.9, 0.2]]), [0, 1])
    assert clf.predict_proba([[0.1, 0.9]]).shape == (1, 2)


def test_a_class_of_one_sample_beside_larger_ones_keeps_leave_one_out():
    X, y = separated(n_per_class=5, noise=1.0)
    X, y = X[:11], y[:11]  # class 2 has one sample
    clf = RidgeHeadClassifier(alphas=ALPHAS).fit(X, y)
    theirs = RidgeClassifierCV(alphas=ALPHAS).fit(X, y)
    assert clf.alpha_ == theirs.alpha_
    assert clf.cv_errors_.shape == (len(ALPHAS),)


# ---------------------------------------------------------------- regression guard


def nearly_constant_feature(seed=0):
    """The extrapolation of ridge on standardized pooled features: a feature that is zero on
    every training row but one (a pool that is one-signed in training) has a tiny scale,
    and a new row where it is large gets a standardized value of millions."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((40, 5))
    y = X @ rng.standard_normal(5) + 0.1 * rng.standard_normal(40)
    rare = np.zeros(40)
    rare[7] = 1e-4
    X = np.column_stack([X, rare])
    mean, scale = X.mean(axis=0), X.std(axis=0)
    X_new = np.column_stack([rng.standard_normal((10, 5)), np.full(10, 500.0)])
    return (X - mean) / scale, y, (X_new - mean) / scale


def test_clip_margin_bounds_the_extrapolation():
    Z, y, Z_new = nearly_constant_feature()
    free = RidgeHeadRegressor(clip_margin=None).fit(Z, y)
    guarded = RidgeHeadRegressor().fit(Z, y)
    span = y.max() - y.min()
    assert np.abs(free.predict(Z_new)).max() > 100 * span  # the failure the guard is for
    predicted = guarded.predict(Z_new)
    assert (predicted >= y.min() - 0.1 * span).all() and (predicted <= y.max() + 0.1 * span).all()
    np.testing.assert_array_equal(guarded.target_range_, [[y.min()], [y.max()]])
    # predictions inside the widened range are the unclipped ones
    inside = free.predict(Z)
    keep = (inside > y.min() - 0.1 * span) & (inside < y.max() + 0.1 * span)
    assert keep.mean() > 0.9
    np.testing.assert_array_equal(guarded.predict(Z)[keep], inside[keep])


def test_clip_margin_per_target_and_weights():
    """Each target has its own range; rows of zero weight do not widen it."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((30, 4))
    Y = np.column_stack([X[:, 0], 100.0 + 10.0 * X[:, 1]])
    w = np.ones(30)
    w[0] = 0.0
    Y[0] = [1e6, -1e6]  # ignored: zero weight
    reg = RidgeHeadRegressor(clip_margin=0.0).fit(X, Y, sample_weight=w)
    np.testing.assert_allclose(reg.target_range_, [Y[1:].min(axis=0), Y[1:].max(axis=0)])
    predicted = reg.predict(50.0 * rng.standard_normal((20, 4)))
    assert predicted.shape == (20, 2)
    assert (predicted >= reg.target_range_[0]).all() and (predicted <= reg.target_range_[1]).all()


@pytest.mark.parametrize("margin", [-0.1, np.inf, np.nan, "wide", True])
def test_bad_clip_margin(margin):
    with pytest.raises(ValueError, match="clip_margin"):
        RidgeHeadRegressor(clip_margin=margin).fit(np.eye(4), np.arange(4.0))


@pytest.mark.parametrize("Head", [RidgeHeadClassifier, RidgeHeadRegressor])
def test_a_folded_standardization_decides_as_standardized_features(Head):
    """The head with the standardization in its coefficients gives, on raw features, the
    decisions of the head on standardized ones (1e-10 of the decisions' scale: the fold
    adds rounding of at most FOLD_MAX_RATIO * eps); past that ratio it declines."""
    rng = np.random.default_rng(0)
    F = rng.standard_normal((50, 7)) * rng.uniform(0.01, 5, 7) + rng.uniform(-30, 30, 7)
    y = np.arange(50) % 3
    mean, scale = F.mean(axis=0), F.std(axis=0)
    head = Head().fit((F - mean) / scale, y)
    folded = head._standardization_folded(mean, scale)
    method = "decision_function" if Head is RidgeHeadClassifier else "predict"
    expected = getattr(head, method)((F - mean) / scale)
    got = getattr(folded, method)(F)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-10 * np.abs(expected).max())
    assert head.coef_ is not folded.coef_ and head.intercept_ is not folded.intercept_
    too_far = mean.copy()
    too_far[3] = 2e4 * scale[3]
    assert head._standardization_folded(too_far, scale) is None


@pytest.mark.parametrize("weighted", [False, True])
def test_the_gram_of_uncentered_features_gives_the_centered_fit(monkeypatch, weighted):
    """Centering the Gram matrix instead of the features (no centered copy) gives the same
    penalty, errors, coefficients and leave-one-out values: rounding grows by at most the
    means' share of the energy, here forced to be taken whatever it is (1e-8 relative of
    well-conditioned float64 solves)."""
    import lmu_sk._gram as gram_module

    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 120)) + rng.uniform(-0.5, 0.5, 120)  # means 1/3 of spread
    y = np.arange(40) % 3
    w = rng.uniform(0.2, 2.0, 40) if weighted else None
    fits = []
    for share in (np.inf, 0.0):  # always from the Gram; never (the centered copy)
        monkeypatch.setattr(gram_module, "GRAM_MEAN_ENERGY", share)
        fits.append(RidgeHeadClassifier(alphas=ALPHAS).fit(X, y, sample_weight=w))
    gram, copy = fits
    assert gram.alpha_ == copy.alpha_
    for name in ("cv_errors_", "coef_", "intercept_", "loo_decision_"):
        np.testing.assert_allclose(getattr(gram, name), getattr(copy, name), rtol=1e-8, atol=1e-10)


# ---------------------------------------------------------------------------- audit 4
@pytest.mark.parametrize("scale", [1e300, 1e-300, 3.0])
def test_the_penalty_choice_does_not_depend_on_the_targets_scale(scale):
    """N5: targets x 1e300 made every leave-one-out error infinite (x 1e-300: zero), so the
    first penalty won and predictions were off by 128 %. The path runs on targets divided
    by a power of two: the same penalty, errors and predictions scaled exactly (relative
    1e-12 allows the rescaling of errors by ``scale**2`` and the predictions' sums)."""
    rng = np.random.default_rng(0)
    F = rng.standard_normal((60, 25))
    t = F[:, :3].sum(axis=1) + 2.0 * rng.standard_normal(60)  # noisy: a large penalty wins
    plain = RidgeHeadRegressor().fit(F, t)
    assert plain.alpha_ >= 10.0
    with np.errstate(all="raise"):  # N12: no RuntimeWarning of NumPy's either
        scaled = RidgeHeadRegressor().fit(F, t * scale)
        predicted = scaled.predict(F)
    assert scaled.alpha_ == plain.alpha_
    np.testing.assert_allclose(predicted / scale, plain.predict(F), rtol=1e-12, atol=0)
    # the errors in the targets' units: 1e600 and 1e-600 are beyond float64 (inf and 0)
    if scale == 3.0:
        np.testing.assert_allclose(scaled.cv_errors_ / 9.0, plain.cv_errors_, rtol=1e-12)
    else:
        assert (scaled.cv_errors_ == (np.inf if scale > 1 else 0.0)).all()


def test_the_default_regressors_penalty_does_not_depend_on_the_targets_scale():
    """N5 through LMURegressor(): the same penalty and predictions for y and y * 1e300."""
    from lmu_sk import LMURegressor

    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 30))
    y = X[:, -5:].sum(axis=1) + rng.standard_normal(40)
    plain = LMURegressor(device="cpu").fit(X, y)
    with np.errstate(all="raise"):
        huge = LMURegressor(device="cpu").fit(X, y * 1e300)
        predicted = huge.predict(X) / 1e300
    assert huge.alpha_ == plain.alpha_
    np.testing.assert_allclose(predicted, plain.predict(X), rtol=1e-12, atol=0)


@pytest.mark.parametrize("shape", [(20, 50), (50, 20), (20, 20)])
def test_a_tiny_penalty_gives_the_interpolant_without_warnings(shape):
    """N12: alphas=[1e-300] leaked NumPy's divide-by-zero warnings and, with more features
    than samples, coefficients of 1e269 (the rounding of the null directions divided by
    the penalty). Now the minimum-norm interpolant: the fit of alpha 1e-8 to 1e-6
    (relative: the difference of the two penalties' fits is ~1e-8)."""
    rng = np.random.default_rng(1)
    F = rng.standard_normal(shape)
    t = F[:, 0] + 0.1 * rng.standard_normal(shape[0])
    with np.errstate(all="raise"):
        tiny = RidgeHeadRegressor(alphas=[1e-300], clip_margin=None).fit(F, t)
        tiny.predict(F)
        RidgeHeadClassifier(alphas=[1e-300]).fit(F, t > 0).predict_proba(F)
    reference = RidgeHeadRegressor(alphas=[1e-8], clip_margin=None).fit(F, t)
    scale = np.abs(reference.coef_).max()
    np.testing.assert_allclose(tiny.coef_, reference.coef_, atol=1e-6 * scale, rtol=0)


def test_a_changed_clip_margin_applies_at_the_next_fit():
    """N8: set_params(clip_margin=-1) after fit made every prediction the smallest target;
    a parameter changed after fit takes effect at refit (where it is checked)."""
    rng = np.random.default_rng(2)
    F = rng.standard_normal((40, 5))
    head = RidgeHeadRegressor().fit(F, F[:, 0])
    before = head.predict(F)
    assert head.clip_margin_ == 0.1
    head.set_params(clip_margin=-1)
    np.testing.assert_array_equal(head.predict(F), before)
    with pytest.raises(ValueError, match="clip_margin must be None"):
        head.fit(F, F[:, 0])
    head.set_params(clip_margin=None).fit(F, F[:, 0])
    assert head.clip_margin_ is None


def test_huge_sample_weights_fit_or_say_why():
    """N7: weights of 1e300 ended in a ZeroDivisionError. They fit (the penalty is then
    negligible against the weighted squares); weights whose products with the squared
    features overflow, or whose sum does, get a message naming sample_weight. No NumPy
    warning either way."""
    from lmu_sk import LMUClassifier

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 30))
    y = (X[:, -5:].sum(axis=1) > 0).astype(int)
    for kernel in ("linear", "rbf"):
        with np.errstate(all="raise"):
            model = LMUClassifier(device="cpu", kernel=kernel)
            model.fit(X, y, sample_weight=np.full(40, 1e300))
            proba = model.predict_proba(X)
        assert np.isfinite(model.head_.temperature_) and np.allclose(proba.sum(axis=1), 1.0)
        assert model.score(X, y) == 1.0
    with np.errstate(all="raise"):
        with pytest.raises(ValueError, match="weighted features overflow float64"):
            LMUClassifier(device="cpu", kernel="linear").fit(
                X, y, sample_weight=np.full(40, 1e305)
            )
        # the Gaussian kernel's values are at most 1: its weighted matrix holds 1e305
        model = LMUClassifier(device="cpu", kernel="rbf")
        assert model.fit(X, y, sample_weight=np.full(40, 1e305)).score(X, y) == 1.0
        for kernel in ("linear", "rbf"):
            with pytest.raises(ValueError, match="sample_weight sums beyond the largest float64"):
                LMUClassifier(device="cpu", kernel=kernel).fit(
                    X, y, sample_weight=np.full(40, 1e308)
                )
    with pytest.raises(ValueError, match="Gram matrix of the features overflows"):
        RidgeHeadRegressor().fit(X[:10] * 1e160, y[:10])  # the Gram of 10 x 30 features


@pytest.mark.parametrize(
    "class_weight",
    [{0: np.nan, 1: 1}, {0: np.inf, 1: 1}, {0: -1, 1: 1}, {0: "a", 1: 1}, {0: True, 1: 1}],
)
@pytest.mark.parametrize("head", ["ridge", "dense"])
def test_the_composites_bad_class_weight_gets_the_ridge_heads_message(class_weight, head):
    """N6: LMUClassifier(class_weight={0: nan, 1: 1}) said "Input X contains NaN" (and
    inf, all zero, -1, 'a' other borrowed messages; a bool was accepted): the ridge head's
    own message now, whatever the head."""
    from lmu_sk import LMUClassifier

    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 12))
    y = np.arange(20) % 2
    with pytest.raises(ValueError, match="class_weight must map labels to finite, non-neg"):
        LMUClassifier(class_weight=class_weight, head=head, device="cpu").fit(X, y)
    with pytest.raises(ValueError, match="leave every sample a zero weight"):
        LMUClassifier(class_weight={0: 0, 1: 0}, head=head, device="cpu").fit(X, y)


@pytest.mark.parametrize("weighted", [False, True])
def test_more_samples_than_features_by_blocks_of_rows_match_scikit_learn(monkeypatch, weighted):
    """The primal route (the features' Gram matrix, samples projected block by block) with
    blocks of 7 rows gives scikit-learn's fit, penalty and leave-one-out error."""
    import lmu_sk._gram as gram_module

    monkeypatch.setattr(gram_module, "BLOCK_BYTES", 8 * 12 * 7)
    rng = np.random.default_rng(5)
    X = rng.standard_normal((500, 12)) * rng.uniform(0.5, 3, 12)
    y = (X[:, 0] + X[:, 3] + rng.standard_normal(500)).round().clip(-2, 2).astype(int)
    weights = rng.uniform(0.2, 3.0, 500) if weighted else None
    ours = RidgeHeadClassifier(alphas=ALPHAS).fit(X, y, sample_weight=weights)
    theirs = RidgeClassifierCV(alphas=ALPHAS).fit(X, y, sample_weight=weights)
    assert ours.alpha_ == theirs.alpha_
    # float64 Gram of 500 rows: agreement to ~1e-12 of the scale; 1e-8 leaves room
    np.testing.assert_allclose(ours.best_score_, theirs.best_score_, rtol=1e-8)
    np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=1e-8)
    np.testing.assert_allclose(ours.decision_function(X), theirs.decision_function(X), atol=1e-8)


@pytest.mark.parametrize("n_features", [50, 300])
@pytest.mark.parametrize("weighted", [False, True])
def test_beyond_the_exact_size_the_penalty_comes_from_evenly_spaced_rows(
    monkeypatch, n_features, weighted
):
    """With more samples and features than EXACT_LOO_MAX (here 40): the penalty is
    RidgeClassifierCV's on 40 evenly spaced rows, the model RidgeClassifier's at that
    penalty on every row (solved in the samples' space for 300 features, in the
    features' space for 50), the probabilities calibrated on those rows."""
    from sklearn.linear_model import RidgeClassifier

    import lmu_sk.ridge as ridge

    monkeypatch.setattr(ridge, "EXACT_LOO_MAX", 40)
    rng = np.random.default_rng(7)
    X = rng.standard_normal((200, n_features))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + rng.standard_normal(200) > 0, "a", "b")
    y[::7] = "c"
    weights = rng.uniform(0.2, 3.0, 200) if weighted else None
    ours = RidgeHeadClassifier(alphas=ALPHAS).fit(X, y, sample_weight=weights)
    rows = np.linspace(0, 199, 40).round().astype(int)
    subset = RidgeClassifierCV(alphas=ALPHAS).fit(
        X[rows], y[rows], sample_weight=None if weights is None else weights[rows]
    )
    assert ours.alpha_ == subset.alpha_
    np.testing.assert_array_equal(ours.loo_rows_, rows)
    assert ours.loo_decision_.shape == (40, 3)
    full = RidgeClassifier(alpha=ours.alpha_).fit(X, y, sample_weight=weights)
    # one float64 linear system of at most 300 unknowns: ~1e-12 of the scale, 1e-8 allowed
    np.testing.assert_allclose(ours.coef_, full.coef_, atol=1e-8)
    np.testing.assert_allclose(ours.intercept_, full.intercept_, atol=1e-8)
    proba = ours.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert (ours.classes_[proba.argmax(axis=1)] == ours.predict(X)).all()
    assert 0 < ours.temperature_ < np.inf


@pytest.mark.parametrize("candidates", [False, True])
def test_beyond_the_exact_size_one_gram_matrix_serves_both_steps(monkeypatch, capsys, candidates):
    """Beyond EXACT_LOO_MAX (here 40) with fewer samples than features, the Gram matrix of
    every row is formed once (per candidate of the feature weights): the rows' leave-one-out
    reads a block of it, the solve at the chosen penalty the whole (no second pass over the
    features); the model is the one formed without the shortcut, to rounding (float64,
    matrices of 120 x 300 summed in another order: 1e-9 allowed)."""
    import lmu_sk.ridge as ridge

    monkeypatch.setattr(ridge, "EXACT_LOO_MAX", 40)
    rng = np.random.default_rng(3)
    X = rng.standard_normal((120, 300))
    y = (X[:, 0] - X[:, 1] + rng.standard_normal(120) > 0).astype(int)
    weights = None
    if candidates:  # two candidates constant over two runs of columns
        weights = np.ones((2, 300))
        weights[1, 150:] = 0.5
    ours = RidgeHeadClassifier(alphas=ALPHAS, verbose=2).fit(X, y, feature_weights=weights)
    log = capsys.readouterr().err
    assert log.count("Gram matrix of 120 x 300 features") == 1, log
    assert "Gram matrix of 40 x" not in log, log
    rows = np.linspace(0, 119, 40).round().astype(int)
    subset = ridge._exact_ridge_path(
        X[rows], np.where(y[rows, None] == 1, 1.0, -1.0), np.asarray(ALPHAS), True, None,
        weights=ridge._check_feature_weights(weights, 300),
    )  # fmt: skip
    assert ours.alpha_ == subset.alphas[subset.best]
    column_weight = None if weights is None else weights[subset.candidate]
    coef, intercept = ridge._solve_at(
        X, np.where(y[:, None] == 1, 1.0, -1.0), ours.alpha_, True, None,
        column_weight=column_weight,
    )  # fmt: skip
    np.testing.assert_allclose(ours.coef_, coef, rtol=0, atol=1e-9)
    np.testing.assert_allclose(ours.intercept_, intercept, rtol=0, atol=1e-9)


def test_one_vs_rest_targets_beyond_memory_are_refused_first(monkeypatch):
    """A label per sample (100 000 classes) made a (100 000, 100 000) target matrix with no
    estimate: a raw MemoryError of 74.5 GiB."""
    import lmu_sk._memory as memory

    # 8 GB available, whatever the host has (160 GB and 400 GB hosts would allocate)
    monkeypatch.setattr(memory, "available_memory", lambda **kwargs: 8 * 10**9)
    X = np.random.default_rng(0).standard_normal((100_000, 3))
    with pytest.raises(MemoryBudgetError, match="one-vs-rest targets of 100000 samples"):
        RidgeHeadClassifier().fit(X, np.arange(100_000))


def test_predictions_beyond_memory_are_refused_first(monkeypatch):
    """The scores of every row and class were made with no estimate: 1 000 000 rows of
    4 000 classes died with a raw MemoryError of 29.8 GiB (predict's labels included)."""
    import lmu_sk._memory as memory

    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((60, 4)), np.arange(60) % 3
    head = RidgeHeadClassifier().fit(X, y)
    monkeypatch.setattr(memory, "available_memory", lambda **kwargs: 10_000)
    for method in (head.predict, head.predict_proba, head.decision_function):
        with pytest.raises(MemoryBudgetError, match="decision values of 1000 samples"):
            method(rng.standard_normal((1000, 4)))
    assert head.predict(X[:10]).shape == (10,)  # 10 x 3 scores fit

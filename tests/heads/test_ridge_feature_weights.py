"""Candidate feature weights of the ridge heads, chosen with the penalty by leave-one-out.

A candidate ``w`` is the fit on ``X * w``: against scikit-learn's RidgeClassifierCV / RidgeCV
on the weighted features (whose coefficients, times ``w``, are the head's on ``X``), and
the choice among candidates against separate fits. Both solve float64 least squares through
different factorizations, so results agree to 1e-8 of the scale (rounding ~1e-12 on these
well-conditioned problems, far below any change of the chosen penalty).
"""

import numpy as np
import pytest
from fake_cupy import clear_caches, install
from sklearn.linear_model import RidgeClassifier, RidgeClassifierCV, RidgeCV

import lmu_sk.ridge as ridge
from lmu_sk.ridge import RidgeHeadClassifier, RidgeHeadRegressor

ALPHAS = np.logspace(-2, 3, 11)
TOL = 1e-8


def _problem(n_samples: int, n_features: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, n_features)) * rng.uniform(0.5, 3, n_features)
    signal = X[:, 0] - X[:, n_features // 2] + 0.5 * rng.standard_normal(n_samples)
    y = np.digitize(signal, np.quantile(signal, [1 / 3, 2 / 3]))
    return X, y, rng


def _run_weights(n_features: int, values) -> np.ndarray:
    """Weights constant over len(values) runs of adjacent columns (as per block of features)."""
    return np.repeat(values, np.diff(np.linspace(0, n_features, len(values) + 1).astype(int)))


@pytest.mark.parametrize(
    ("n_samples", "n_features"), [(30, 80), (200, 12)], ids=["dual", "primal"]
)
@pytest.mark.parametrize("runs", ["few", "many"])
@pytest.mark.parametrize("weighted", [False, True])
def test_one_candidate_is_the_fit_on_the_weighted_features(n_samples, n_features, runs, weighted):
    """Few runs share one pass of Gram matrices; more than _MAX_WEIGHT_RUNS (every column its
    own weight) form each candidate's on its own: both give RidgeClassifierCV on X * w."""
    X, y, rng = _problem(n_samples, n_features)
    if runs == "few":
        w = _run_weights(n_features, [1.0, 0.5, 0.25, 0.0])
    else:
        w = rng.uniform(0.1, 2.0, n_features)
    sample_weight = rng.uniform(0.2, 3.0, n_samples) if weighted else None
    ours = RidgeHeadClassifier(alphas=ALPHAS).fit(
        X, y, sample_weight=sample_weight, feature_weights=w
    )
    theirs = RidgeClassifierCV(alphas=ALPHAS).fit(X * w, y, sample_weight=sample_weight)
    assert ours.alpha_ == theirs.alpha_
    np.testing.assert_allclose(ours.best_score_, theirs.best_score_, rtol=TOL)
    np.testing.assert_allclose(ours.coef_, theirs.coef_ * w, atol=TOL)
    np.testing.assert_allclose(
        ours.decision_function(X), theirs.decision_function(X * w), atol=TOL
    )
    np.testing.assert_array_equal(ours.feature_weights_, w)
    # a zero weight leaves its feature out
    assert not ours.coef_[:, w == 0].any()


@pytest.mark.parametrize(
    ("n_samples", "n_features"), [(40, 90), (150, 16)], ids=["dual", "primal"]
)
def test_leave_one_out_chooses_the_candidate_of_least_error(n_samples, n_features):
    """Several candidates: the fit equals the separate fit of the candidate whose best
    leave-one-out error is least (the first of equal errors), penalty and probabilities
    included."""
    X, y, _ = _problem(n_samples, n_features, seed=3)
    # the second candidate keeps only the features that carry the signal: it must win
    informative = np.zeros(n_features)
    informative[[0, n_features // 2]] = 1.0
    candidates = np.stack(
        [
            np.ones(n_features),
            informative,
            _run_weights(n_features, [1.0, 0.2]),
            np.ones(n_features),  # equal to the first: never chosen over it
        ]
    )
    ours = RidgeHeadClassifier(alphas=ALPHAS).fit(X, y, feature_weights=candidates)
    alone = [RidgeHeadClassifier(alphas=ALPHAS).fit(X, y, feature_weights=w) for w in candidates]
    scores = [head.best_score_ for head in alone]
    chosen = int(np.argmax(scores))
    assert chosen == 1
    np.testing.assert_array_equal(ours.feature_weights_, candidates[chosen])
    assert ours.alpha_ == alone[chosen].alpha_
    np.testing.assert_allclose(ours.cv_errors_, alone[chosen].cv_errors_, rtol=TOL)
    np.testing.assert_allclose(ours.coef_, alone[chosen].coef_, atol=TOL)
    np.testing.assert_allclose(ours.loo_decision_, alone[chosen].loo_decision_, atol=TOL)
    np.testing.assert_allclose(ours.temperature_, alone[chosen].temperature_, rtol=1e-6)
    # ties go to the first candidate
    tied = RidgeHeadClassifier(alphas=ALPHAS).fit(X, y, feature_weights=candidates[[3, 0]])
    np.testing.assert_array_equal(tied.feature_weights_, candidates[3])


@pytest.mark.parametrize("n_features", [50, 300])
def test_beyond_the_exact_size_the_chosen_candidate_is_solved_on_every_row(
    monkeypatch, n_features
):
    """Past EXACT_LOO_MAX (here 40) the candidate and penalty are chosen on evenly spaced
    rows, the model solved at them on every row (in the samples' space for 300 features,
    the features' for 50): RidgeClassifier on X * w at that penalty."""
    monkeypatch.setattr(ridge, "EXACT_LOO_MAX", 40)
    X, y, _ = _problem(200, n_features, seed=7)
    candidates = np.stack([np.ones(n_features), _run_weights(n_features, [1.0, 0.5, 0.3])])
    ours = RidgeHeadClassifier(alphas=ALPHAS).fit(X, y, feature_weights=candidates)
    rows = np.linspace(0, 199, 40).round().astype(int)
    subset = [RidgeClassifierCV(alphas=ALPHAS).fit(X[rows] * w, y[rows]) for w in candidates]
    chosen = int(np.argmax([head.best_score_ for head in subset]))
    np.testing.assert_array_equal(ours.feature_weights_, candidates[chosen])
    assert ours.alpha_ == subset[chosen].alpha_
    w = candidates[chosen]
    full = RidgeClassifier(alpha=ours.alpha_).fit(X * w, y)
    np.testing.assert_allclose(ours.coef_, full.coef_ * w, atol=TOL)
    np.testing.assert_allclose(ours.intercept_, full.intercept_, atol=TOL)


def test_the_regressor_takes_feature_weights():
    X, _, rng = _problem(60, 40)
    y = X[:, 0] - 2 * X[:, 5] + 0.1 * rng.standard_normal(60)
    w = _run_weights(40, [2.0, 1.0, 0.5])
    ours = RidgeHeadRegressor(alphas=ALPHAS, clip_margin=None).fit(X, y, feature_weights=w)
    theirs = RidgeCV(alphas=ALPHAS).fit(X * w, y)
    assert ours.alpha_ == theirs.alpha_
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X * w), atol=TOL)


def test_one_sample_per_class_uses_the_first_candidate():
    """Leave-one-out cannot choose when every class has one sample: the first candidate."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((5, 30))
    candidates = np.stack([_run_weights(30, [1.0, 0.1]), np.ones(30)])
    clf = RidgeHeadClassifier().fit(X, list("abcde"), feature_weights=candidates)
    np.testing.assert_array_equal(clf.feature_weights_, candidates[0])
    np.testing.assert_array_equal(clf.predict(X), list("abcde"))


def test_without_feature_weights_none_is_recorded():
    X, y, _ = _problem(30, 10)
    assert RidgeHeadClassifier().fit(X, y).feature_weights_ is None


def test_feature_weights_on_the_stand_in(monkeypatch):
    """Device features with host candidates: the same choice and coefficients."""
    fake = install(monkeypatch, as_gpu=True)
    try:
        X, y, _ = _problem(30, 50)
        candidates = np.stack([np.ones(50), _run_weights(50, [1.0, 0.4])])
        on_device = RidgeHeadClassifier(alphas=ALPHAS).fit(
            fake.asarray(X), y, feature_weights=candidates
        )
        on_host = RidgeHeadClassifier(alphas=ALPHAS).fit(X, y, feature_weights=candidates)
        np.testing.assert_array_equal(on_device.feature_weights_, on_host.feature_weights_)
        np.testing.assert_allclose(on_device.coef_, on_host.coef_, atol=1e-10)
    finally:
        clear_caches()


@pytest.mark.parametrize(
    ("feature_weights", "match"),
    [
        (np.ones(9), "shape"),
        (np.ones((2, 11)), "shape"),
        (np.ones((0, 10)), "shape"),
        (np.full(10, -1.0), ">= 0"),
        (np.full(10, np.nan), "finite"),
        (np.zeros(10), "nonzero"),
    ],
)
def test_bad_feature_weights(feature_weights, match):
    X, y, _ = _problem(20, 10)
    with pytest.raises(ValueError, match=match):
        RidgeHeadClassifier().fit(X, y, feature_weights=feature_weights)

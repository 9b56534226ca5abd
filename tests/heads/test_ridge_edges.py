"""Ridge heads at their edges: a refused refit keeps the model, rows of zero weight count as
left out, huge offsets, weights and decision values, and ``ridge_loo``'s own checks."""

import warnings

import numpy as np
import pytest
from sklearn.linear_model import RidgeClassifierCV

import lmu_sk.ridge as ridge
from lmu_sk.ridge import RidgeHeadClassifier, RidgeHeadRegressor, _solve_positive, ridge_loo

ALPHAS = np.logspace(-2, 3, 11)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_a_refused_refit_keeps_the_fitted_classifier(kernel):
    """A refit refused after the labels were read (here for its feature weights) leaves
    the old model and its classes: not the old model's decisions under the new labels."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((12, 3))
    head = RidgeHeadClassifier(kernel=kernel).fit(X, np.array(list("abc" * 4)))
    before = head.predict_proba(X)
    with pytest.raises(ValueError, match="feature_weights"):
        head.fit(X, np.array(list("xy" * 6)), feature_weights=[1.0, 2.0])
    assert list(head.classes_) == ["a", "b", "c"]
    np.testing.assert_array_equal(head.predict_proba(X), before)


def test_a_refused_refit_keeps_the_fitted_regressor():
    rng = np.random.default_rng(1)
    X, y = rng.standard_normal((12, 3)), rng.standard_normal(12)
    head = RidgeHeadRegressor().fit(X, y)
    before = head.predict(X)
    with pytest.raises(ValueError, match="alphas"):
        head.set_params(alphas=[0.0]).fit(X[:, :2], y)
    assert head.n_features_in_ == 3
    np.testing.assert_array_equal(head.predict(X), before)


def test_rows_of_zero_weight_count_as_left_out_for_one_sample_per_class():
    """Three classes of one sample each, and a fourth row of weight 0 (or of a class
    weighted 0): the one-sample-per-class penalty, as without the row."""
    rng = np.random.default_rng(2)
    X, y = rng.standard_normal((4, 6)), np.array(["a", "b", "c", "a"])
    alone = RidgeHeadClassifier().fit(X[:3], y[:3])
    weighted = RidgeHeadClassifier().fit(X, y, sample_weight=[1.0, 1.0, 1.0, 0.0])
    assert weighted.alpha_ == alone.alpha_
    np.testing.assert_allclose(weighted.coef_, alone.coef_, atol=1e-12)
    np.testing.assert_allclose(weighted.predict_proba(X), alone.predict_proba(X), atol=1e-12)


def test_rows_of_zero_weight_do_not_count_towards_the_gaussian_kernel(monkeypatch):
    """kernel='auto' counts the rows of positive weight against its samples per class."""
    monkeypatch.setattr(ridge, "AUTO_KERNEL_MIN_PER_CLASS", 4)
    rng = np.random.default_rng(3)
    X, y = rng.standard_normal((12, 3)), np.arange(12) % 2
    assert RidgeHeadClassifier(kernel="auto").fit(X, y).kernel_ == "rbf"
    weights = np.where(np.arange(12) < 6, 1.0, 0.0)  # 3 rows of each class count
    assert RidgeHeadClassifier(kernel="auto").fit(X, y, sample_weight=weights).kernel_ == "linear"


@pytest.mark.parametrize("Head", [RidgeHeadClassifier, RidgeHeadRegressor])
def test_the_gaussian_kernel_ignores_a_common_offset_of_the_features(Head):
    """Distances do not change with a common offset of the features: the model of rows
    shifted by 1e8 predicts as the model of the rows themselves. Float64 features at 1e8
    hold their values to ~1e-8, so the decisions agree to 1e-6 (without centering the kept
    rows the distances lost all their digits: 0.975 -> 0.65 training accuracy)."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((40, 5))
    y = X[:, 0] + X[:, 1] ** 2 > 0.5
    y = y.astype(int) if Head is RidgeHeadClassifier else X[:, 0] + X[:, 1] ** 2
    plain = Head(kernel="rbf").fit(X, y)
    shifted = Head(kernel="rbf").fit(X + 1e8, y)
    assert shifted.alpha_ == plain.alpha_
    decide = "decision_function" if Head is RidgeHeadClassifier else "predict"
    np.testing.assert_allclose(
        getattr(shifted, decide)(X + 1e8), getattr(plain, decide)(X), rtol=0, atol=1e-6
    )


def test_beyond_the_exact_size_the_penalty_rows_have_positive_weights(monkeypatch):
    """Beyond EXACT_LOO_MAX (here 20) the penalty comes from evenly spaced rows of positive
    weight: where every other row weighs 0, those of the others, as RidgeClassifierCV
    chooses on them (the even rows alone used to give NaN means, refused as an overflow)."""
    monkeypatch.setattr(ridge, "EXACT_LOO_MAX", 20)
    rng = np.random.default_rng(5)
    X = rng.standard_normal((80, 30))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(80) > 0, "a", "b")
    weights = np.tile([0.0, 1.0], 40)
    head = RidgeHeadClassifier(alphas=ALPHAS).fit(X, y, sample_weight=weights)
    counted = np.flatnonzero(weights > 0)
    rows = counted[np.linspace(0, len(counted) - 1, 20).round().astype(int)]
    np.testing.assert_array_equal(head.loo_rows_, rows)
    assert head.alpha_ == RidgeClassifierCV(alphas=ALPHAS).fit(X[rows], y[rows]).alpha_
    assert np.isfinite(head.coef_).all()


def test_huge_features_are_blamed_not_weights_of_one():
    rng = np.random.default_rng(6)
    X, y = rng.standard_normal((20, 4)) * 1e200, rng.standard_normal(20)
    with pytest.raises(ValueError, match="features are too large") as error:
        RidgeHeadRegressor().fit(X, y, sample_weight=np.ones(20))
    assert "sample_weight" not in str(error.value)
    with pytest.raises(ValueError, match="Divide sample_weight"):
        RidgeHeadRegressor().fit(X / 1e100, y, sample_weight=np.full(20, 1e200))
    RidgeHeadRegressor().fit(X / 1e100, y)  # the features alone fit


@pytest.mark.parametrize("shape", [(10, 4), (4, 10)])
def test_feature_weights_whose_squares_overflow_are_refused(shape):
    """Weights beyond float64's largest square root are refused (they gave NaN
    coefficients, silently, or a bare OverflowError); weights below fit, and predict
    finite values, with either model."""
    rng = np.random.default_rng(7)
    X, y = rng.standard_normal(shape), rng.standard_normal(shape[0])
    weights = [1e155] + [1.0] * (shape[1] - 1)
    with pytest.raises(ValueError, match="feature_weights must be at most"):
        RidgeHeadRegressor().fit(X, y, feature_weights=weights)
    weights[0] = 1e150
    for kernel in ("linear", "rbf"):
        head = RidgeHeadRegressor(kernel=kernel).fit(X, y, feature_weights=weights)
        assert np.isfinite(head.predict(rng.standard_normal((3, shape[1])))).all()


@pytest.mark.parametrize("feature_weights", [[[1.0, 2.0, 3.0], [1.0, 2.0]], ["a", "b", "c"]])
def test_unreadable_feature_weights_are_named(feature_weights):
    X, y = np.random.default_rng(8).standard_normal((8, 3)), np.arange(8) % 2
    with pytest.raises(ValueError, match="feature_weights must be numbers"):
        RidgeHeadClassifier().fit(X, y, feature_weights=feature_weights)


def test_a_huge_distance_gives_a_kernel_value_of_zero_not_nan():
    """A new row so far from the kept ones that its squared distance overflows float64
    (here through a feature weight of 1e153, within the limit, and a first feature of
    +-200) has kernel values 0 (it gave inf - inf: NaN predictions); the training rows
    keep theirs."""
    rng = np.random.default_rng(9)
    X, y = rng.standard_normal((4, 10)), rng.standard_normal(4)
    head = RidgeHeadRegressor(kernel="rbf").fit(X, y, feature_weights=[1e153] + [1.0] * 9)
    new = rng.standard_normal((6, 10))
    new[:, 0] = np.tile([200.0, -200.0], 3)
    np.testing.assert_allclose(head.predict(new), head.intercept_)
    assert np.isfinite(head.predict(X)).all()


@pytest.mark.parametrize("n_classes", [2, 3])
def test_probabilities_of_huge_decision_values_sum_to_one(n_classes):
    """A decision value that overflows when divided by the temperature (below 1 on
    separable data) gives its class probability 1, not NaN."""
    rng = np.random.default_rng(10)
    X = rng.standard_normal((30, 3))
    y = np.digitize(X[:, 0], np.quantile(X[:, 0], np.arange(1, n_classes) / n_classes))
    head = RidgeHeadClassifier().fit(X, y)
    assert head.temperature_ < 1
    huge = np.array([[1e308, 0.0, 0.0], [-1e308, 0.0, 0.0]])
    proba = head.predict_proba(huge)
    assert np.isfinite(proba).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(
        proba.argmax(axis=1), np.searchsorted(head.classes_, head.predict(huge))
    )
    assert not np.isnan(head.predict_log_proba(huge)).any()


def test_class_weight_as_an_array_is_named():
    with pytest.raises(ValueError, match="class_weight must be None, 'balanced' or a dict"):
        RidgeHeadClassifier(class_weight=np.array([1.0, 2.0])).fit(np.eye(4), [0, 0, 1, 1])


def test_ridge_loo_checks_its_input():
    """``ridge_loo`` refuses what the heads refuse, and takes one target as 1-D."""
    rng = np.random.default_rng(11)
    X, y = rng.standard_normal((10, 3)), rng.standard_normal(10)
    with pytest.raises(ValueError, match="alphas must be"):
        ridge_loo(X, y[:, None], [-1.0, 1.0])
    with pytest.raises(ValueError, match="one row of targets per sample"):
        ridge_loo(X, y[:5], [1.0])
    with pytest.raises(ValueError, match="at least two samples"):
        ridge_loo(X[:1], y[:1], [1.0])
    with pytest.raises(ValueError, match="sample_weight"):
        ridge_loo(X, y, [1.0], sample_weight=-np.ones(10))
    with pytest.raises(TypeError, match="fit_intercept"):
        ridge_loo(X, y, [1.0], fit_intercept="yes")
    coef, intercept, best, errors = ridge_loo(X.tolist(), y, [0.1, 1.0])
    columns = ridge_loo(X, y[:, None], [0.1, 1.0])
    assert coef.shape == (1, 3) and errors.shape == (2,)
    np.testing.assert_array_equal(coef, columns[0])
    np.testing.assert_array_equal(intercept, columns[1])
    assert best == columns[2]


def test_a_penalized_gram_matrix_is_solved_by_cholesky_or_else_lu():
    """Cholesky's solution where the penalized Gram matrix is positive definite; LU's
    where rounding left it indefinite (1e-10: both backward stable, condition ~1e3)."""
    rng = np.random.default_rng(0)
    A = rng.standard_normal((30, 30))
    B = rng.standard_normal((30, 2))
    positive = A @ A.T + 0.1 * np.eye(30)
    np.testing.assert_allclose(
        _solve_positive(positive, B, np), np.linalg.solve(positive, B), rtol=1e-10
    )
    indefinite = positive.copy()
    indefinite[0, 0] = -1.0
    np.testing.assert_allclose(
        _solve_positive(indefinite, B, np), np.linalg.solve(indefinite, B), rtol=1e-10
    )


def test_a_singular_system_on_a_gpu_raises_as_on_the_host():
    """CuPy's solve returns NaN for a singular matrix where NumPy's raises: the GPU path
    raised nothing and gave NaN coefficients (the module's solve as CuPy's, here)."""
    from types import SimpleNamespace

    def nan_solve(A, B):
        return np.full(np.shape(B), np.nan)

    gpu_like = SimpleNamespace(linalg=SimpleNamespace(solve=nan_solve), isfinite=np.isfinite)
    with pytest.raises(np.linalg.LinAlgError, match="Singular"):
        _solve_positive(np.zeros((3, 3)), np.ones((3, 1)), gpu_like)


def test_an_ill_conditioned_solve_on_every_row_warns_of_nothing():
    """The solve at the chosen penalty on every row (beyond EXACT_LOO_MAX samples and
    features) of rank-deficient features and a tiny penalty: a fit, without the
    conditioning warning LU never gave."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((1100, 300)) @ rng.standard_normal((300, 1010))
    y = X[:, :3].sum(axis=1) + rng.standard_normal(1100)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        head = RidgeHeadRegressor(alphas=[1e-9]).fit(X, y)
    assert np.all(np.isfinite(head.coef_))


@pytest.mark.parametrize(("spread", "rtol"), [(4, 1e-6), (6, 1e-3)])
def test_columns_of_very_different_scales_with_more_samples_than_features(spread, rtol):
    """With more samples than features the coefficients were Xc^T U of the feature Gram
    matrix's eigenvectors, whose small directions' rounding that divides by their
    singular values: columns of scales 1e-4 .. 1e4 gave a training R^2 of -0.97
    (scikit-learn's 0.80), predictions wrong by 1.7x their scale. They now come from the
    eigenvectors themselves. Tolerance: the eigenvectors' rounding, eps * max(s^2) /
    alpha relative (max(s^2) = 50 * 10^(2 spread): 1e-7 and 1e-3)."""
    from sklearn.linear_model import Ridge

    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 8)) * np.logspace(-spread, spread, 8)
    y = X @ rng.normal(size=8) / np.logspace(-spread, spread, 8).max()
    ours = RidgeHeadRegressor(alphas=[1.0], clip_margin=None).fit(X, y).predict(X)
    exact = Ridge(alpha=1.0, solver="svd").fit(X, y).predict(X)
    np.testing.assert_allclose(ours, exact, rtol=0, atol=rtol * np.abs(exact).max())
    labels = (y > np.median(y)).astype(int)
    alphas = np.logspace(-3, 3, 7)
    head = RidgeHeadClassifier(alphas=alphas).fit(X, labels)
    reference = RidgeClassifierCV(alphas=alphas).fit(X, labels)
    assert head.alpha_ == reference.alpha_
    np.testing.assert_array_equal(head.predict(X), reference.predict(X))


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_one_row_of_weight_is_a_model_of_its_class(kernel):
    """A single row of positive weight (the rest 0): its centered features are zero, so
    the penalty's scale had no nonzero eigenvalue to come from (a raw 'zero-size array to
    reduction operation maximum' for the linear model); every prediction is its class."""
    from lmu_sk.ridge import RidgeHeadClassifier

    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((10, 3)), np.arange(10) % 2
    weight = np.zeros(10)
    weight[1] = 1.0
    head = RidgeHeadClassifier(kernel=kernel).fit(X, y, sample_weight=weight)
    np.testing.assert_array_equal(head.predict(X), np.ones(10, dtype=int))
    assert np.all(head.predict_proba(X)[:, 1] > 0.5)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("shape", [(30, 6), (10, 40)])
def test_a_huge_constant_column_changes_nothing(kernel, shape):
    """Centered, a constant column is zero. Its rounded mean (30 * 1e30 / 30 is not 1e30)
    left it a constant of its last bit, ~1e14, whose energy swamped the other columns':
    every coefficient ~1e-50, or 0 with fewer samples than features."""
    from lmu_sk.ridge import RidgeHeadClassifier, RidgeHeadRegressor

    rng = np.random.default_rng(3)
    X = rng.normal(size=shape)
    y = X[:, 0] + 0.1 * rng.normal(size=shape[0])
    with_column = np.c_[X, np.full(shape[0], 1e30)]
    for head, target in ((RidgeHeadRegressor, y), (RidgeHeadClassifier, y > 0)):
        plain = head(alphas=[1.0, 10.0], kernel=kernel).fit(X, target)
        wide = head(alphas=[1.0, 10.0], kernel=kernel).fit(with_column, target)
        # float64 on both sides, the same factorization but for an exact zero column
        np.testing.assert_allclose(
            wide.decision_function(with_column) if hasattr(wide, "classes_") else
            wide.predict(with_column),
            plain.decision_function(X) if hasattr(plain, "classes_") else plain.predict(X),
            rtol=1e-9, atol=1e-12,
        )  # fmt: skip


def test_the_centered_products_shortcut_agrees_with_the_centered_copy():
    """``X^T B - mean sum(B)`` (no copy of the features) for columns whose mean is within
    SHORTCUT_MEAN_RATIO of their spread, the centered columns for the others: every column
    as the centered copy's product to the shortcut's rounding (``|mean| / spread`` times
    eps of the product's scale, here at most 1e3 * eps), a constant column's exactly 0."""
    from lmu_sk import _gram

    rng = np.random.default_rng(5)
    X = rng.standard_normal((40, 12))
    X[:, 1] += 1e3  # within the ratio: the shortcut
    X[:, 2] = X[:, 2] * 1e-9 + 5.0  # a mean 1e9 times the spread: centered
    X[:, 3] = 1e30 / 3  # constant: centered, exactly zero
    X[:, 4] = 0.0
    B = rng.standard_normal((40, 3))
    mean, spread = _gram.column_statistics(X, None, np)
    fast = _gram.centered_product(X, mean, B, np, spread)
    exact = _gram.centered_product(X, mean, B, np)
    assert np.all(fast[3] == 0) and np.all(fast[4] == 0)
    scale = np.abs(X - mean).max(axis=0)[:, None] * np.abs(B).sum(axis=0)[None, :]
    assert np.all(np.abs(fast - exact) <= 1e3 * np.finfo(float).eps * scale)


def test_rows_of_zero_weight_do_not_hide_a_constant_column():
    """A column constant over the rows that count (weight > 0) is centered to exactly zero
    whatever the rows of zero weight hold: they count for nothing. Its spread was taken
    over every row, so a zero-weight row that differed sent the huge constant through
    ``X^T B - mean sum(B)``: a coefficient of 7e12, predictions off by 2 (the targets'
    scale 1). Zero weights must equal dropping the rows (scikit-learn's rule)."""
    from sklearn.linear_model import Ridge

    from lmu_sk.ridge import RidgeHeadRegressor

    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 60))
    X[:, 0] = 1e30 / 3
    y = X[:, 1] + 0.1 * rng.standard_normal(30)
    w = np.ones(30)
    w[:3], X[:3, 0] = 0.0, 0.0
    head = RidgeHeadRegressor(alphas=[1.0]).fit(X, y, sample_weight=w)
    reference = Ridge(alpha=1.0).fit(X[3:, 1:], y[3:])
    assert head.coef_[0] == 0.0
    np.testing.assert_allclose(head.coef_[1:], reference.coef_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(head.predict(X[3:]), reference.predict(X[3:, 1:]), atol=1e-12)


def test_column_statistics_over_the_weighted_rows_by_blocks(monkeypatch):
    """Means, spreads and constant columns over the rows of positive weight, taken by
    blocks of rows (here 3) where some weights are zero: as over those rows alone."""
    from lmu_sk import _gram

    monkeypatch.setattr(_gram, "BLOCK_BYTES", 8 * 6 * 3)
    rng = np.random.default_rng(2)
    X = rng.standard_normal((20, 6))
    w = rng.uniform(0.5, 2.0, 20)
    w[[0, 7, 8, 19]] = 0.0
    X[:, 2] = 1e30 / 3
    X[[0, 8], 2] = -5.0  # differs only on rows of zero weight: constant where it counts
    mean, spread = _gram.column_statistics(X, w, np)
    kept = w > 0
    alone_mean, alone_spread = _gram.column_statistics(X[kept], w[kept], np)
    np.testing.assert_array_equal(spread, alone_spread)
    np.testing.assert_allclose(mean, alone_mean, rtol=1e-15)
    assert mean[2] == 1e30 / 3 and spread[2] == 0.0

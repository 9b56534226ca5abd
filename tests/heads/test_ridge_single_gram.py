"""The ridge heads' Gram matrices of float32's products (``fit(..., gram_dtype=float32)``,
the LMU estimators' for their standardized features) against float64's.

The features are rounded to float32 (a relative 6e-8) and their products summed in float32
over blocks of 4 096 columns: the Gram matrix moves by about 1e-7 of its scale, the
coefficients of these well-conditioned problems (standardized columns, more features than
samples, no direction below 1e-4 of the trace) by 1e-5 of theirs at most, far below a change
of the chosen penalty. The intercept's direction, which that rounding would leave an
eigenvalue near 1e-7 of the trace instead of 0, is projected out exactly.
"""

import numpy as np
import pytest

import lmu_sk.ridge as ridge
from lmu_sk import LMUClassifier, LMURegressor
from lmu_sk.ridge import RidgeHeadClassifier, RidgeHeadRegressor

ALPHAS = np.logspace(-3, 5, 17)
COEF_TOL = 1e-5  # of the coefficients' largest magnitude (see the module docstring)


def _standardized(n_samples: int, n_features: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    latent = rng.standard_normal((n_samples, 8))
    X = latent @ rng.standard_normal((8, n_features)) + rng.standard_normal(
        (n_samples, n_features)
    )
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    signal = latent[:, 0] - latent[:, 1] + 0.3 * rng.standard_normal(n_samples)
    return X, signal, rng


def _assert_same_model(single, double):
    assert single.alpha_ == double.alpha_
    np.testing.assert_allclose(
        single.coef_, double.coef_, rtol=0, atol=COEF_TOL * np.abs(double.coef_).max()
    )
    np.testing.assert_allclose(
        single.cv_errors_, double.cv_errors_, rtol=1e-4, atol=1e-9 * double.cv_errors_.max()
    )


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("candidates", [False, True])
def test_single_precision_products_give_the_same_classifier(weighted, candidates):
    X, signal, rng = _standardized(90, 2500)
    y = np.digitize(signal, np.quantile(signal, [1 / 3, 2 / 3]))
    weight = rng.uniform(0.2, 3.0, len(y)) if weighted else None
    # two candidates constant over runs of columns (the composites' window decays), or none
    runs = np.repeat(np.arange(5), 500)
    weights = np.stack([np.ones(2500), 2.0**-runs]) if candidates else None
    fitted = {
        dtype: RidgeHeadClassifier(alphas=ALPHAS).fit(
            X, y, sample_weight=weight, feature_weights=weights, gram_dtype=dtype
        )
        for dtype in (None, np.float32)
    }
    _assert_same_model(fitted[np.float32], fitted[None])
    np.testing.assert_allclose(
        fitted[np.float32].predict_proba(X), fitted[None].predict_proba(X), atol=1e-5
    )


def test_single_precision_products_give_the_same_regressor_beyond_the_exact_path(monkeypatch):
    """Beyond EXACT_LOO_MAX rows (here lowered to 60 of 150) the penalty is chosen on evenly
    spaced rows (a block of the float32 Gram matrix, centered on its own) and the model
    solved on every row from the whole matrix: both centered exactly."""
    monkeypatch.setattr(ridge, "EXACT_LOO_MAX", 60)
    X, signal, _ = _standardized(150, 1800, seed=1)
    fitted = {
        dtype: RidgeHeadRegressor(alphas=ALPHAS).fit(X, 10.0 + signal, gram_dtype=dtype)
        for dtype in (None, "float32")
    }
    _assert_same_model(fitted["float32"], fitted[None])
    np.testing.assert_allclose(fitted["float32"].intercept_, fitted[None].intercept_, rtol=1e-7)


def test_the_intercept_stays_a_null_direction_beside_duplicate_rows():
    """Centering leaves the Gram matrix the intercept's exact null direction, which
    float32's rounding lifts to ~1e-7 of the trace: counted as a direction of the fit it
    changes the leave-one-out errors (its leverage counted twice) and the penalty chosen.
    Projected out, the errors are float64's. (Duplicated rows, the other null directions,
    give bit-identical float32 products: their differences stay null.)"""
    X, signal, _ = _standardized(60, 3000, seed=2)
    X = np.concatenate([X, X[:20]])
    y = np.concatenate([signal, signal[:20]]) > 0
    fitted = {
        dtype: RidgeHeadClassifier(alphas=ALPHAS).fit(X, y, gram_dtype=dtype)
        for dtype in (None, np.float32)
    }
    _assert_same_model(fitted[np.float32], fitted[None])


def test_near_duplicate_rows_keep_their_directions():
    """Series recorded twice, with noise of 1e-3 of their scale, differ by directions of
    ~1e-8 of the Gram matrix's trace, 10 times float32's rounding of it (its spectral
    norm): a floor of float32's eps times the trace zeroed them, and changed the model."""
    X, signal, rng = _standardized(60, 3000, seed=4)
    again = X[:30] * (1 + 1e-3 * rng.standard_normal((30, X.shape[1])))
    X = np.concatenate([X, again])
    y = np.concatenate([signal, signal[:30]]) > 0
    fitted = {
        dtype: RidgeHeadClassifier(alphas=ALPHAS).fit(X, y, gram_dtype=dtype)
        for dtype in (None, np.float32)
    }
    single, double = fitted[np.float32], fitted[None]
    assert single.alpha_ == double.alpha_
    # (those directions' eigenvalues move by ~10 %: the smallest penalties' errors by ~0.1 %)
    np.testing.assert_allclose(single.cv_errors_, double.cv_errors_, rtol=3e-3)
    # directions 10 times above the rounding: their coefficients move by a few 1e-5 of
    # the coefficients' scale, the decisions by less
    decision = double.decision_function(X)
    np.testing.assert_allclose(
        single.decision_function(X), decision, rtol=0, atol=1e-4 * np.abs(decision).max()
    )


@pytest.mark.parametrize("gram_dtype", ["float16", np.int32, "double precision", 3])
def test_an_unknown_gram_dtype_is_refused(gram_dtype):
    X, signal, _ = _standardized(20, 50)
    with pytest.raises(ValueError, match="gram_dtype must be None or float64"):
        RidgeHeadRegressor().fit(X, signal, gram_dtype=gram_dtype)


@pytest.mark.parametrize("where", ["features", "sample_weight", "feature_weights"])
@pytest.mark.parametrize("scale", [2.0**60, 2.0**-66])
def test_values_beyond_float32_products_take_float64_s(where, scale):
    """Values whose float32 products would overflow (or all fall below float32's normal
    range: every product 0) take float64's products, wherever the scale comes from: the
    features, the sample weights (their square roots scale the centered copy of features
    whose means carry their energy) or per-column feature weights (too many runs to share
    one Gram pass). They were refused as overflowing float64, or gave wrong or zero
    coefficients silently."""
    X, signal, rng = _standardized(40, 300)
    fit, alphas = {}, ALPHAS
    if where == "features":
        X = X * scale
    elif where == "sample_weight":
        X = X + 100.0
        fit["sample_weight"] = np.full(len(X), scale**2) * rng.uniform(0.5, 2.0, len(X))
        alphas = ALPHAS * scale**2
    else:
        fit["feature_weights"] = scale * rng.uniform(0.5, 2.0, X.shape[1])
        alphas = ALPHAS * scale**2
    fitted = {
        dtype: RidgeHeadRegressor(alphas=alphas).fit(X, signal, gram_dtype=dtype, **fit)
        for dtype in (None, np.float32)
    }
    # float64's products on both sides (the intercept's projection's rounding apart)
    coef = fitted[None].coef_
    assert fitted[np.float32].alpha_ == fitted[None].alpha_
    np.testing.assert_allclose(
        fitted[np.float32].coef_, coef, rtol=0, atol=1e-9 * np.abs(coef).max()
    )


@pytest.mark.parametrize("scale_features", [True, False])
@pytest.mark.parametrize("estimator", [LMUClassifier, LMURegressor])
def test_the_composites_ask_for_single_precision_for_standardized_features_only(
    monkeypatch, estimator, scale_features
):
    asked = []
    for head in (RidgeHeadClassifier, RidgeHeadRegressor):
        fit = head.fit

        def spy(self, *args, _fit=fit, **kwargs):
            asked.append(kwargs.get("gram_dtype"))
            return _fit(self, *args, **kwargs)

        monkeypatch.setattr(head, "fit", spy)
    X, signal, _ = _standardized(40, 30, seed=3)
    y = signal > 0 if estimator is LMUClassifier else signal
    estimator(order=4, scale_features=scale_features).fit(X, y)
    assert asked == [np.float32 if scale_features else None]


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("candidates", [False, True])
def test_single_precision_products_give_the_same_gaussian_kernel_model(
    monkeypatch, weighted, candidates
):
    """With ``kernel='rbf'`` the Gram matrix the distances come from takes float32's
    products too: the squared distances move by ~1e-7 of the rows' squared norms, the
    kernel's values (``exp(-d / (3 median))``, ``d / median`` of order 1) by as much, and the
    dual coefficients of these problems (penalties of 1e-3 and more on kernel matrices of
    eigenvalues up to ``n``) by 1e-5 of their scale at most; the penalty is the same.
    Predictions take float64's products whatever ``gram_dtype`` is."""
    asked = []
    products = ridge._gram.products

    def spy(X, xp, single=False, w2=None):
        asked.append(single)
        return products(X, xp, single, w2)

    monkeypatch.setattr(ridge._gram, "products", spy)
    X, signal, rng = _standardized(90, 2500, seed=5)
    y = np.digitize(signal, np.quantile(signal, [1 / 3, 2 / 3]))
    weight = rng.uniform(0.2, 3.0, len(y)) if weighted else None
    runs = np.repeat(np.arange(5), 500)
    weights = np.stack([np.ones(2500), 2.0**-runs]) if candidates else None
    fitted = {}
    for dtype in (None, np.float32):
        asked.clear()
        fitted[dtype] = RidgeHeadClassifier(alphas=ALPHAS, kernel="rbf").fit(
            X, y, sample_weight=weight, feature_weights=weights, gram_dtype=dtype
        )
        assert asked and set(asked) == {dtype is not None}
    single, double = fitted[np.float32], fitted[None]
    assert single.alpha_ == double.alpha_
    np.testing.assert_allclose(single.gamma_, double.gamma_, rtol=1e-6)
    np.testing.assert_allclose(
        single.dual_coef_,
        double.dual_coef_,
        rtol=0,
        atol=COEF_TOL * np.abs(double.dual_coef_).max(),
    )
    X_new = _standardized(30, 2500, seed=6)[0]
    decision = double.decision_function(X_new)
    np.testing.assert_allclose(
        single.decision_function(X_new), decision, rtol=0, atol=COEF_TOL * np.abs(decision).max()
    )


@pytest.mark.parametrize("noise", [1e-1, 1e-2, 1e-3])
def test_a_tight_cluster_takes_float64_s_products_for_the_kernel(noise):
    """Three quarters of the rows in a cluster of ``noise`` (relative to the features'
    spread): the median distance is ``noise^2 / 0.375`` of the rows' squared norm, and
    float32's rounding of the distances (~1e-7 of those norms) moved the kernel: 1e-3 of
    the predictions at noise 1e-2, another penalty and 10 % at 1e-3. Below
    KERNEL_SINGLE_MIN_MEDIAN the distances take float64's products: the same model."""
    rng = np.random.default_rng(2)
    cluster = np.arange(80) % 4 != 0
    X = np.where(cluster[:, None], -1.0, 1.0) * np.ones((80, 400))
    X = X + noise * rng.standard_normal((80, 400))
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    y = X[:, :5].sum(axis=1)
    fitted = {
        dtype: RidgeHeadRegressor(kernel="rbf").fit(X, y, gram_dtype=dtype)
        for dtype in (None, np.float32)
    }
    assert fitted[np.float32].alpha_ == fitted[None].alpha_
    assert fitted[np.float32].gamma_ == fitted[None].gamma_
    np.testing.assert_allclose(
        fitted[np.float32].predict(X), fitted[None].predict(X), rtol=1e-12, atol=1e-12
    )

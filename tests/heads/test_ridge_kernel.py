"""The ridge heads' Gaussian kernel (``kernel='rbf'``) against a direct solve of kernel
ridge regression with an unpenalized intercept, and its leave-one-out values against refits
without each sample.

The direct solve is independent of the heads' centering in the kernel's feature space: the
stationarity conditions of ``sum_i w_i (y_i - K_i c - b)^2 + alpha c^T K c`` in ``c`` and
``b``, one ``(n + 1)``-square system. Both are float64 solves of systems whose condition
numbers stay below ~1e6 for the penalties used here, so they agree to 1e-7 (relative to
the targets' scale); a wrong centering, weight or sign is off by O(1).
"""

import copy
import pickle

import numpy as np
import pytest
from fake_cupy import clear_caches, install
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import cdist, pdist
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

import lmu_sk._gaussian_kernel as gaussian
import lmu_sk.ridge as ridge
from lmu_sk.ridge import RidgeHeadClassifier, RidgeHeadRegressor

ALPHAS = np.logspace(-2, 2, 9)


def gamma_of(X, width):
    return 1.0 / (width * np.median(pdist(X, "sqeuclidean")))


def direct_fit(X, y, gamma, alpha, w=None, fit_intercept=True):
    """Coefficients ``c`` and intercept ``b`` of kernel ridge, from its stationarity
    conditions: ``(W K + alpha I) c + W 1 b = W y`` and ``1^T W (y - K c - 1 b) = 0``."""
    n = len(X)
    w = np.ones(n) if w is None else w
    K = np.exp(-gamma * cdist(X, X, "sqeuclidean"))
    Y = y.reshape(n, -1)
    if not fit_intercept:
        return np.linalg.solve(w[:, None] * K + alpha * np.eye(n), w[:, None] * Y), 0.0
    A = np.zeros((n + 1, n + 1))
    A[:n, :n] = w[:, None] * K + alpha * np.eye(n)
    A[:n, n] = w
    A[n, :n] = w @ K
    A[n, n] = w.sum()
    rhs = np.vstack([w[:, None] * Y, (w @ Y)[None, :]])
    solution = np.linalg.solve(A, rhs)
    return solution[:n], solution[n]


def direct_predict(X, c, b, gamma, X_new):
    return np.exp(-gamma * cdist(X_new, X, "sqeuclidean")) @ c + b


@st.composite
def problems(draw):
    n_samples = draw(st.integers(5, 40))
    n_features = draw(st.integers(1, 30))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    X = rng.standard_normal((n_samples, n_features)) * rng.uniform(0.5, 3, n_features)
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(n_samples)
    w = rng.uniform(0.2, 3.0, n_samples) if draw(st.booleans()) else None
    return X, y, w, draw(st.booleans()), draw(st.sampled_from([0.5, 3.0, 20.0]))


@settings(max_examples=40, deadline=None)
@given(problems())
def test_the_fit_is_the_direct_kernel_ridge_solution(problem):
    X, y, w, fit_intercept, width = problem
    head = RidgeHeadRegressor(
        alphas=ALPHAS, fit_intercept=fit_intercept, clip_margin=None, kernel="rbf", width=width
    ).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(head.gamma_, gamma_of(X, width), rtol=1e-10)
    c, b = direct_fit(X, y, head.gamma_, head.alpha_, w, fit_intercept)
    X_new = np.vstack([X, X[:3] + 0.3])
    expected = direct_predict(X, c, b, head.gamma_, X_new)[:, 0]
    np.testing.assert_allclose(head.predict(X_new), expected, atol=1e-7)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_leave_one_out_errors_equal_refits(weighted, fit_intercept):
    """Every penalty's mean squared leave-one-out residual (weighted as the linear head's)
    against direct refits without each sample, the kernel's gamma held at the fit's."""
    rng = np.random.default_rng(3)
    n = 25
    X = rng.standard_normal((n, 4))
    y = np.cos(X[:, 1]) + X[:, 0] + 0.2 * rng.standard_normal(n)
    w = rng.uniform(0.3, 2.0, n) if weighted else np.ones(n)
    head = RidgeHeadRegressor(alphas=ALPHAS, fit_intercept=fit_intercept, kernel="rbf")
    head.fit(X, y, sample_weight=w if weighted else None)
    for alpha, error in zip(ALPHAS, head.cv_errors_, strict=True):
        errors = []
        for i in range(n):
            keep = np.arange(n) != i
            c, b = direct_fit(X[keep], y[keep], head.gamma_, alpha, w[keep], fit_intercept)
            residual = y[i] - direct_predict(X[keep], c, b, head.gamma_, X[i : i + 1])[0, 0]
            errors.append(w[i] * residual**2)
        np.testing.assert_allclose(error, np.mean(errors), rtol=1e-7)


@pytest.mark.parametrize("n_classes", [2, 4])
def test_classifier_loo_decisions_equal_refits(n_classes):
    rng = np.random.default_rng(n_classes)
    n = 8 * n_classes
    y = np.arange(n) % n_classes
    X = rng.standard_normal((n, 6)) + y[:, None] * 0.8
    clf = RidgeHeadClassifier(alphas=ALPHAS, kernel="rbf").fit(X, y)
    Y = -np.ones((n, n_classes))
    Y[np.arange(n), y] = 1.0
    Y = Y[:, -1:] if n_classes == 2 else Y
    for i in range(n):
        keep = np.arange(n) != i
        c, b = direct_fit(X[keep], Y[keep], clf.gamma_, clf.alpha_)
        decision = direct_predict(X[keep], c, b, clf.gamma_, X[i : i + 1])[0]
        np.testing.assert_allclose(np.ravel(clf.loo_decision_[i]), decision, atol=1e-7)


def test_a_candidate_of_feature_weights_is_the_kernel_of_the_weighted_features():
    """The chosen candidate's model is the one fitted on ``X * w`` (its gamma too), and
    predicts from the unweighted features."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 8))
    y = np.arange(30) % 3
    X[:, :2] += y[:, None]
    weights = np.ones((3, 8))
    weights[1, 2:] = 0.2
    weights[2, :2] = 0.1
    clf = RidgeHeadClassifier(alphas=ALPHAS, kernel="rbf").fit(X, y, feature_weights=weights)
    w = clf.feature_weights_
    alone = RidgeHeadClassifier(alphas=ALPHAS, kernel="rbf").fit(X * w, y)
    assert clf.alpha_ == alone.alpha_
    np.testing.assert_allclose(clf.gamma_, alone.gamma_, rtol=1e-12)
    X_new = rng.standard_normal((7, 8))
    np.testing.assert_allclose(
        clf.decision_function(X_new), alone.decision_function(X_new * w), atol=1e-9
    )
    # and the candidate chosen is the one of least leave-one-out error
    errors = [
        RidgeHeadClassifier(alphas=ALPHAS, kernel="rbf").fit(X * row, y).cv_errors_.min()
        for row in weights
    ]
    np.testing.assert_array_equal(w, weights[int(np.argmin(errors))])


@pytest.mark.parametrize("Head", [RidgeHeadClassifier, RidgeHeadRegressor])
@pytest.mark.parametrize("weighted", [False, True])
def test_a_kernel_head_folds_the_standardization_into_its_rows(Head, weighted):
    """The Gaussian kernel's model on raw features, the standardization folded into the
    rows it compares (``F * w / scale - (c + mean * w / scale)``), decides as on the
    standardized features: within 1e-10 of the decisions' scale (the fold adds rounding
    of at most FOLD_MAX_RATIO * eps to the rows, far below the kernel's sensitivity);
    the fitted head itself is unchanged, and past the ratio it declines."""
    rng = np.random.default_rng(1)
    F = rng.standard_normal((40, 6)) * rng.uniform(0.01, 5, 6) + rng.uniform(-30, 30, 6)
    y = np.arange(40) % 3 if Head is RidgeHeadClassifier else rng.standard_normal(40)
    mean, scale = F.mean(axis=0), F.std(axis=0)
    weights = np.array([[1.0] * 6, [1.0, 1.0, 0.5, 0.5, 0.25, 0.25]]) if weighted else None
    head = Head(kernel="rbf").fit((F - mean) / scale, y, feature_weights=weights)
    fitted = (copy.deepcopy(head.feature_weights_), head.X_fit_offset_.copy())
    folded = head._standardization_folded(mean, scale)
    method = "decision_function" if Head is RidgeHeadClassifier else "predict"
    expected = getattr(head, method)((F - mean) / scale)
    got = getattr(folded, method)(F)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-10 * np.abs(expected).max())
    if weighted:
        np.testing.assert_array_equal(head.feature_weights_, fitted[0])
    else:
        assert head.feature_weights_ is None
    np.testing.assert_array_equal(head.X_fit_offset_, fitted[1])
    assert not hasattr(head, "coef_")
    too_far = mean.copy()
    too_far[3] = 2e4 * scale[3]
    assert head._standardization_folded(too_far, scale) is None


def test_a_refit_with_another_kernel_drops_the_previous_model():
    rng = np.random.default_rng(2)
    X, y = rng.standard_normal((20, 5)), rng.standard_normal(20)
    head = RidgeHeadRegressor(kernel="rbf").fit(X, y)
    assert head.dual_coef_.shape == (1, 20) and head.X_fit_.shape == (20, 5)
    head.set_params(kernel="linear").fit(X, y)
    assert head.coef_.shape == (5,)
    assert not any(hasattr(head, name) for name in ("dual_coef_", "X_fit_", "gamma_"))
    head.set_params(kernel="rbf").fit(X, y)
    assert not hasattr(head, "coef_")


def test_a_saved_kernel_head_predicts_the_same_and_must_hold_its_rows():
    rng = np.random.default_rng(4)
    X, y = rng.standard_normal((20, 5)), np.arange(20) % 3
    head = RidgeHeadClassifier(kernel="rbf").fit(X, y)
    loaded = pickle.loads(pickle.dumps(head))
    np.testing.assert_array_equal(loaded.predict_proba(X), head.predict_proba(X))
    state = head.__getstate__()
    del state["X_fit_"]
    with pytest.raises(pickle.UnpicklingError, match="X_fit_"):
        RidgeHeadClassifier().__setstate__(state)


def test_predictions_by_blocks_of_rows_equal_those_row_by_row(monkeypatch):
    """The kernel's values are made a block of rows at a time (a few MB, whatever the
    number of rows predicted): blocks of 3 rows give the one-row answers (float64 products
    of one row: 1e-12)."""
    rng = np.random.default_rng(5)
    X, y = rng.standard_normal((25, 6)), np.arange(25) % 3
    weights = rng.uniform(0.5, 1.5, (2, 6))
    clf = RidgeHeadClassifier(kernel="rbf").fit(X, y, feature_weights=weights)
    X_new = rng.standard_normal((10, 6))
    one_by_one = np.vstack([clf.decision_function(X_new[i : i + 1]) for i in range(10)])
    monkeypatch.setattr(gaussian, "_BLOCK_BYTES", 8 * 25 * 3)  # 3 rows of 25 values
    blocks = list(gaussian.cross_kernel_blocks(X_new, clf.X_fit_, clf.gamma_, np))
    assert [rows.stop - rows.start for rows, _ in blocks] == [3, 3, 3, 1]
    np.testing.assert_allclose(clf.decision_function(X_new), one_by_one, rtol=0, atol=1e-12)


@pytest.mark.gpu
def test_device_features_on_the_stand_in(monkeypatch):
    fake = install(monkeypatch, as_gpu=True)
    try:
        rng = np.random.default_rng(0)
        X, y = rng.standard_normal((30, 12)), np.arange(30) % 3
        w = rng.uniform(0.5, 2.0, 30)
        on_device = RidgeHeadClassifier(alphas=ALPHAS, kernel="rbf")
        on_device.fit(fake.asarray(X), y, sample_weight=w)
        on_host = RidgeHeadClassifier(alphas=ALPHAS, kernel="rbf").fit(X, y, sample_weight=w)
        assert on_device.alpha_ == on_host.alpha_
        np.testing.assert_allclose(on_device.dual_coef_, on_host.dual_coef_, atol=1e-10)
        np.testing.assert_allclose(
            on_device.predict_proba(fake.asarray(X)), on_host.predict_proba(X), atol=1e-10
        )
    finally:
        clear_caches()


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"kernel": "poly"}, "kernel must be one of"),
        ({"kernel": None}, "kernel must be one of"),
        ({"kernel": "rbf", "width": 0.0}, "width must be a finite number > 0"),
        ({"kernel": "rbf", "width": np.nan}, "width must be a finite number > 0"),
        ({"kernel": "rbf", "width": "3"}, "width must be a finite number > 0"),
    ],
)
@pytest.mark.parametrize("Head", [RidgeHeadClassifier, RidgeHeadRegressor])
def test_bad_kernel_parameters(Head, params, match):
    X, y = np.random.default_rng(0).standard_normal((10, 3)), np.arange(10) % 2
    with pytest.raises(ValueError, match=match):
        Head(**params).fit(X, y)


def test_more_samples_than_the_exact_size_are_refused_with_the_fix(monkeypatch):
    monkeypatch.setattr(ridge, "KERNEL_MAX_SAMPLES", 15)
    X, y = np.random.default_rng(0).standard_normal((20, 3)), np.arange(20) % 2
    match = r"at most 15 training rows; got 20 \(with a sequence output .*\)\. Use kernel=.linear."
    with pytest.raises(ValueError, match=match):
        RidgeHeadClassifier(kernel="rbf").fit(X, y)


@pytest.mark.parametrize(
    ("n_samples", "n_classes", "exact_max", "auto_max", "expected"),
    [
        (30, 3, 3000, 400, "rbf"),  # 10 per class: the kernel
        (29, 3, 3000, 400, "linear"),  # fewer
        (40, 2, 3000, 400, "rbf"),
        (40, 2, 39, 400, "linear"),  # more than the exact size: linear, no error
        (40, 2, 3000, 39, "linear"),  # more than 'auto' takes the kernel for
        (40, 2, 3000, 40, "rbf"),
    ],
)
def test_auto_takes_the_kernel_where_every_class_has_neighbours(
    monkeypatch, n_samples, n_classes, exact_max, auto_max, expected
):
    monkeypatch.setattr(ridge, "KERNEL_MAX_SAMPLES", exact_max)
    monkeypatch.setattr(ridge, "AUTO_KERNEL_MAX_SAMPLES", auto_max)
    rng = np.random.default_rng(7)
    X, y = rng.standard_normal((n_samples, 6)), np.arange(n_samples) % n_classes
    auto = RidgeHeadClassifier(kernel="auto").fit(X, y)
    assert auto.kernel_ == expected
    assert ridge.AUTO_KERNEL_MIN_PER_CLASS == 10
    # the same model as asking for it
    same = RidgeHeadClassifier(kernel=expected).fit(X, y)
    assert same.kernel_ == expected
    X_new = rng.standard_normal((5, 6))
    np.testing.assert_array_equal(auto.decision_function(X_new), same.decision_function(X_new))
    assert auto.get_params()["kernel"] == "auto"  # stored as given


def test_auto_is_the_classifiers_alone():
    X, y = np.random.default_rng(0).standard_normal((10, 3)), np.arange(10.0)
    with pytest.raises(ValueError, match=r"kernel must be one of \('linear', 'rbf'\)"):
        RidgeHeadRegressor(kernel="auto").fit(X, y)


def test_the_composite_passes_auto_to_its_ridge_head():
    from lmu_sk import LMUClassifier, LMURegressor

    rng = np.random.default_rng(8)
    X, y = rng.standard_normal((40, 30)), np.arange(40) % 2
    model = LMUClassifier(kernel="auto", order=4, device="cpu").fit(X, y)
    assert model.head_.kernel == "auto" and model.head_.kernel_ == "rbf"
    with pytest.raises(ValueError, match="kernel"):
        LMURegressor(kernel="auto", device="cpu").fit(X, y.astype(float))


# see test_ridge.py: leave-one-out is not repetition-invariant
LOO_WEIGHT_CHECK = {
    "check_sample_weight_equivalence_on_dense_data": "leave-one-out is not repetition-invariant"
}


@parametrize_with_checks(
    [RidgeHeadClassifier(kernel="rbf"), RidgeHeadRegressor(kernel="rbf")],
    expected_failed_checks=lambda est: LOO_WEIGHT_CHECK,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_verbose_names_the_kernels_steps(capsys):
    rng = np.random.default_rng(6)
    X, y = rng.standard_normal((20, 5)), np.arange(20) % 2
    RidgeHeadClassifier(kernel="rbf", verbose=1).fit(X, y, feature_weights=np.ones((2, 5)))
    err = capsys.readouterr().err
    assert err.count("Gaussian kernel of the 20 samples") == 2  # one per candidate
    assert "eigendecomposition of the 20 x 20 kernel matrix" in err
    RidgeHeadClassifier(verbose=1).fit(rng.standard_normal((20, 30)), y)  # the dual path
    assert "eigendecomposition of the 20 x 20 Gram matrix" in capsys.readouterr().err


@pytest.mark.parametrize("scale, width", [(1e-155, 3.0), (1.0, 1e-310), (1e-170, 3.0)])
def test_a_kernel_beyond_float64_is_refused_naming_the_scale(scale, width):
    """Features so small that the median squared distance is subnormal (gamma infinite:
    a NaN model), a subnormal width (a LinAlgError), or distances that all underflow to
    zero although the rows differ (a constant model, silently): each a ValueError that
    says to scale the features."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 5)) * scale
    with pytest.raises(ValueError, match="Scale the features"):
        RidgeHeadRegressor(kernel="rbf", width=width).fit(X, rng.standard_normal(40))


def test_a_kernel_without_intercept_ignores_an_offset_of_the_features():
    """The Gaussian kernel depends on distances only: without an intercept too, an offset
    of 1e7 on every feature leaves the decisions (1e-8 of their scale: the offset's
    rounding, 1e7 * eps, relative to unit distances; it was 2e-3, the distances formed
    from the uncentered Gram matrix)."""
    rng = np.random.default_rng(0)
    X, Xn, y = rng.standard_normal((40, 5)), rng.standard_normal((7, 5)), np.arange(40) % 3
    head = RidgeHeadClassifier(kernel="rbf", fit_intercept=False)
    expected = head.fit(X, y).decision_function(Xn)
    got = clone(head).fit(X + 1e7, y).decision_function(Xn + 1e7)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-8 * np.abs(expected).max())


def test_a_kernel_on_mostly_equal_rows_does_not_depend_on_the_features_scale():
    """More than half the pairs of training rows equal (a median distance of zero): the
    width is relative to the median of the nonzero distances, so the model is the same at
    any scale of the features (it fell back to 1 / width in the features' units)."""
    rng = np.random.default_rng(0)
    X = np.vstack([np.zeros((30, 4)), rng.standard_normal((10, 4))])
    y = np.r_[np.zeros(30, int), np.arange(10) % 2 + 1]
    Z = rng.standard_normal((5, 4))
    decisions = [
        RidgeHeadClassifier(kernel="rbf").fit(X * s, y).decision_function(Z * s)
        for s in (1e-3, 1.0, 1e3)
    ]
    for other in decisions[1:]:
        np.testing.assert_allclose(other, decisions[0], rtol=1e-9, atol=1e-12)


def test_a_candidate_weighting_only_equal_columns_is_not_refused_as_underflow():
    """A feature weight of zero on the column where the rows differ makes that
    candidate's distances all zero: a constant kernel that leave-one-out passes over, not
    an underflow (the check looked at the unweighted rows and refused the fit)."""
    rng = np.random.default_rng(0)
    X = np.column_stack([np.ones(30), rng.normal(size=30)])
    y = (X[:, 1] > 0).astype(int)
    head = RidgeHeadClassifier(kernel="rbf").fit(X, y, feature_weights=[[1.0, 0.0], [1.0, 1.0]])
    np.testing.assert_array_equal(head.feature_weights_, [1.0, 1.0])


@pytest.mark.parametrize(
    ("scale", "width", "fix"), [(1e10, 1e300, "smaller width"), (1.0, 1e-310, "larger width")]
)
def test_the_width_advice_points_the_right_way(scale, width, fix):
    """width times the median distance beyond float64's largest number needs a smaller
    width (the message said larger); below its smallest, a larger one."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 3)) * scale
    with pytest.raises(ValueError, match=fix):
        RidgeHeadRegressor(kernel="rbf", width=width).fit(X, rng.standard_normal(20))


def test_a_subnormal_width_on_equal_rows_is_refused():
    """Equal rows (every distance zero) took gamma = 1 / width unchecked: a subnormal width
    gave a raw LinAlgError."""
    with pytest.raises(ValueError, match="larger width"):
        RidgeHeadClassifier(kernel="rbf", width=1e-310).fit(np.ones((10, 2)), np.arange(10) % 2)


@pytest.mark.parametrize("head", [RidgeHeadRegressor, RidgeHeadClassifier])
def test_rows_of_zero_weight_are_no_rows_of_the_gaussian_kernel(head):
    """Rows of weight 0 set the kernel's width (the median distance between training
    rows), its penalty's scale and the rows kept to predict: a per-step model's padded
    steps (NaN targets, weight 0) changed its predictions by 0.12 with the padding's
    value. The model is that of the weighted rows alone (to float64 rounding of the same
    sums: 1e-12 relative)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 5))
    y = X[:, 0] + 0.1 * rng.standard_normal(60)
    if head is RidgeHeadClassifier:
        y = (y > 0).astype(int)
    weight = np.where(np.arange(60) % 3 == 0, 0.0, 1.0)
    noisy = X.copy()
    noisy[weight == 0] = 50 * rng.standard_normal((20, 5))  # far from the rest
    kept = weight > 0
    with_zeros = head(kernel="rbf").fit(noisy, y, sample_weight=weight)
    alone = head(kernel="rbf").fit(X[kept], y[kept])
    assert with_zeros.gamma_ == pytest.approx(alone.gamma_, rel=1e-12)
    assert with_zeros.alpha_ == alone.alpha_
    assert with_zeros.X_fit_.shape[0] == kept.sum()
    X_new = rng.standard_normal((10, 5))
    method = "decision_function" if head is RidgeHeadClassifier else "predict"
    np.testing.assert_allclose(
        getattr(with_zeros, method)(X_new), getattr(alone, method)(X_new), rtol=1e-12, atol=1e-12
    )


def test_the_kernel_classifier_s_leave_one_out_rows_name_the_rows_of_weight():
    """Rows of zero weight left out of the Gaussian kernel: its leave-one-out decisions
    are those of the rows kept, and ``loo_rows_`` says which (it said all: the early
    classifier's checkpoints met a shape mismatch)."""
    from lmu_sk import LMUClassifier
    from lmu_sk.early import LMUEarlyClassifier

    rng = np.random.default_rng(0)
    y = np.arange(40) % 2
    weight = np.ones(40)
    weight[:4] = 0.0
    head = RidgeHeadClassifier(kernel="rbf").fit(
        rng.standard_normal((40, 3)), y, sample_weight=weight
    )
    np.testing.assert_array_equal(head.loo_rows_, np.arange(4, 40))
    assert len(head.loo_decision_) == 36
    X = rng.standard_normal((40, 30, 1))
    X[y == 1] += 0.5
    for kernel in ("rbf", "auto"):
        model = LMUClassifier(head="ridge", kernel=kernel, order=4)
        LMUEarlyClassifier(model, checkpoints=4).fit(X, y, sample_weight=weight)


@pytest.mark.parametrize("weighted", [False, True])
def test_the_kept_rows_are_the_weighted_rows_less_one_offset(monkeypatch, weighted):
    """The kernel model keeps ``X * w - c`` (made in one pass by small blocks of rows; the
    offset ``c`` from a sample of the rows): every difference between two rows is the
    weighted features' own to float64's rounding (the distances do not depend on ``c``),
    ``c`` is near the mean, and a constant column, however large, is centered to exactly 0
    (a rounded mean would leave a constant whose energy swamps the other columns)."""
    monkeypatch.setattr(gaussian, "_CACHED_BYTES", 8 * 64 * 7)  # blocks of 7 rows
    monkeypatch.setattr(gaussian, "_OFFSET_ROWS", 16)
    rng = np.random.default_rng(3)
    X = rng.standard_normal((50, 64)) + 3.0
    X[:, 5] = 1e30 / 3
    w = rng.uniform(0.5, 2.0, 64) if weighted else None
    head = RidgeHeadRegressor(kernel="rbf").fit(X, X[:, 0], feature_weights=w)
    weighted_X = X if w is None else X * w
    # (a - c) + c: rounded twice, by eps of the column's magnitude
    eps = np.finfo(np.float64).eps
    error = np.abs(head.X_fit_ + head.X_fit_offset_ - weighted_X)
    assert np.all(error <= 2 * eps * np.abs(weighted_X).max(axis=0))
    assert np.all(head.X_fit_[:, 5] == 0)
    columns = np.arange(64) != 5
    spread = weighted_X[:, columns].std(axis=0)
    assert np.all(np.abs(head.X_fit_[:, columns].mean(axis=0)) < spread)
    np.testing.assert_allclose(
        cdist(head.X_fit_[:, columns], head.X_fit_[:, columns], "sqeuclidean"),
        cdist(weighted_X[:, columns], weighted_X[:, columns], "sqeuclidean"),
        rtol=1e-12,
    )


def test_float32_rows_near_their_largest_value_keep_a_finite_offset():
    """The kept rows' offset is the sampled rows' mean in float64: in float32, a column of
    values near float32's largest (2e38 to 3e38) summed to infinity, and the kept rows
    and every prediction were not finite."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 5)).astype(np.float32)
    X[:, 0] = (rng.uniform(2.0, 3.0, 40) * 1e38).astype(np.float32)
    y = X[:, 1].astype(float)
    head = RidgeHeadRegressor(kernel="rbf").fit(X, y)
    assert np.all(np.isfinite(head.X_fit_offset_)) and np.all(np.isfinite(head.X_fit_))
    twin = RidgeHeadRegressor(kernel="rbf").fit(X.astype(np.float64), y)
    np.testing.assert_allclose(head.predict(X), twin.predict(X), rtol=1e-12, atol=1e-12)

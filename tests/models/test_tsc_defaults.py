"""LMUClassifier's defaults for small time-series sets: ridge on pooled multi-scale features."""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import lmu_sk.estimators as estimators
import lmu_sk.ridge as ridge
from lmu_sk import LMUClassifier, LMUPooledFeatures, LMURegressor
from lmu_sk.ridge import RidgeHeadClassifier, RidgeHeadRegressor

LENGTH_CHECKS = {
    "check_n_features_in_after_fitting": "sequences of any length can be predicted",
    "check_classifiers_train": "sequences of any length can be predicted",
    "check_regressors_train": "sequences of any length can be predicted",
    "check_non_transformer_estimators_n_iter": "max_iter is the dense head's; ridge has none",
    "check_class_weight_classifiers": (
        "its 3-class blobs are 2-step sequences: the ridge on their pooled features, weighted "
        "1000:1e-4, predicts class 0 for 84 % of the test rows, under the check's 87 % (the "
        "Gaussian kernel's model passes)"
    ),
    "check_sample_weight_equivalence_on_dense_data": (
        "leave-one-out alpha (as RidgeCV's) and the pooled thresholds are not invariant "
        "to repeating rows"
    ),
}


def shapes(n_per_class=20, n_steps=60, seed=0):
    """Three classes: a bump early, a bump late, a step; with noise and random shifts."""
    rng = np.random.default_rng(seed)
    t = np.arange(n_steps)
    X, y = [], []
    for label in range(3):
        for _ in range(n_per_class):
            shift = rng.integers(-5, 6)
            if label == 0:
                x = np.exp(-(((t - 15 - shift) / 4.0) ** 2))
            elif label == 1:
                x = np.exp(-(((t - 45 - shift) / 4.0) ** 2))
            else:
                x = (t > 30 + shift).astype(float)
            X.append(x + 0.2 * rng.standard_normal(n_steps))
            y.append(label)
    return np.asarray(X), np.asarray(y)


def _expected_failures(estimator) -> dict:
    if estimator.kernel != "linear":  # the check's blobs: 'auto' takes the Gaussian kernel
        return {k: v for k, v in LENGTH_CHECKS.items() if k != "check_class_weight_classifiers"}
    return LENGTH_CHECKS


@parametrize_with_checks(
    [
        LMUClassifier(order=4, device="cpu"),
        LMUClassifier(order=4, device="cpu", kernel="linear"),
        LMURegressor(head="ridge", order=4, device="cpu"),
        LMUClassifier(order=4, device="cpu", kernel="rbf"),
        LMURegressor(head="ridge", order=4, device="cpu", kernel="rbf"),
    ],
    expected_failed_checks=_expected_failures,
)
def test_sklearn_compatible_with_the_ridge_head(estimator, check):
    check(estimator)


def test_defaults_choose_ridge_on_pooled_features_and_learn():
    X, y = shapes()
    X_test, y_test = shapes(seed=1)
    clf = LMUClassifier(device="cpu").fit(X, y)
    assert clf.head_kind_ == "ridge"
    assert isinstance(clf.head_, RidgeHeadClassifier)
    assert isinstance(clf.features_, LMUPooledFeatures)
    assert clf.alpha_ == clf.head_.alpha_
    # the same methods whatever the head: probabilities from the calibrated ridge
    assert hasattr(clf, "predict_proba") and hasattr(clf, "decision_function")
    proba = clf.predict_proba(X_test)
    np.testing.assert_array_equal(clf.classes_[proba.argmax(axis=1)], clf.predict(X_test))
    assert clf.score(X_test, y_test) > 0.9


def test_kernel_rbf_makes_the_ridge_head_the_gaussian_kernels(monkeypatch):
    """kernel='rbf': the composites' ridge head is kernel ridge with the Gaussian kernel, on
    the same standardized features (and the classifier's window-decay candidates). The
    classifier's default ('auto') takes it where the classes average 10 training
    sequences or more (here 20), with the same features; the regressor's stays linear."""
    X, y = shapes()
    X_test, y_test = shapes(seed=1)
    clf = LMUClassifier(device="cpu", kernel="rbf").fit(X, y)
    assert clf.head_.kernel == "rbf" and clf.head_.gamma_ > 0
    assert clf.head_.X_fit_.shape == (len(y), clf.features_.n_features_out_)
    assert clf.score(X_test, y_test) > 0.9
    proba = clf.predict_proba(X_test)
    np.testing.assert_array_equal(clf.classes_[proba.argmax(axis=1)], clf.predict(X_test))
    # the same head, fitted alone on the composite's standardized features
    F = clf.features_._transform(X, False, dtype=np.float64) - clf.feature_mean_
    F /= clf.feature_scale_
    weights = estimators._window_decay_weights(clf.features_, estimators._WINDOW_DECAYS)
    alone = RidgeHeadClassifier(kernel="rbf").fit(F, y, feature_weights=weights)
    F_test = clf.features_._transform(X_test, False, dtype=np.float64) - clf.feature_mean_
    F_test /= clf.feature_scale_
    np.testing.assert_allclose(
        clf.decision_function(X_test), alone.decision_function(F_test), atol=1e-8
    )
    reg = LMURegressor(device="cpu", kernel="rbf").fit(X, y.astype(float))
    assert reg.head_.kernel == "rbf" and not hasattr(reg.head_, "coef_")
    default = LMUClassifier(device="cpu").fit(X, y)
    assert default.head_.kernel == "auto" and default.head_.kernel_ == "rbf"
    assert default.features_.n_biases == clf.features_.n_biases == 12
    np.testing.assert_array_equal(default.decision_function(X_test), clf.decision_function(X_test))
    default = LMURegressor(device="cpu").fit(X, y)
    assert default.head_.kernel == "linear" and hasattr(default.head_, "coef_")
    # beyond the exact leave-one-out size: the ridge head's error, with the fix
    monkeypatch.setattr(ridge, "KERNEL_MAX_SAMPLES", len(y) - 1)
    with pytest.raises(ValueError, match="at most 59 training rows; got 60"):
        LMUClassifier(device="cpu", kernel="rbf").fit(X, y)


def test_paper_setting_is_one_parameter_away():
    X, y = shapes(n_per_class=10)
    clf = LMUClassifier(head="dense", max_iter=5, device="cpu").fit(X, y)
    assert clf.head_kind_ == "dense" and clf.features_.output == "final"
    assert clf.predict_proba(X).shape == (30, 3)


def test_ridge_head_on_unequal_lengths_and_channels():
    rng = np.random.default_rng(0)
    X = [rng.standard_normal((n, 2)) + (i % 2) for i, n in enumerate(range(20, 50))]
    y = np.arange(30) % 2
    clf = LMUClassifier(theta=[5, 20], device="cpu").fit(X, y)
    assert clf.score(X, y) == 1.0
    reg = LMURegressor(head="ridge", order=3, device="cpu").fit(X, y.astype(float))
    assert isinstance(reg.head_, RidgeHeadRegressor)


def test_partial_fit_needs_the_dense_head_and_says_so():
    """partial_fit on a fresh default model trained the dense head where fit trains the
    ridge head, and after a default fit it was missing with a bare AttributeError. It is
    now there with head='dense' only, and elsewhere its absence says what to use."""
    X, y = shapes(n_per_class=5)
    clf = LMUClassifier(head="dense", device="cpu").partial_fit(X, y, classes=[0, 1, 2])
    assert clf.head_kind_ == "dense"
    for model in (
        LMUClassifier(),
        LMUClassifier(head="ridge"),
        LMUClassifier(device="cpu").fit(X, y),
        LMURegressor(),
        LMURegressor(device="cpu").fit(X, y.astype(float)),
    ):
        assert not hasattr(model, "partial_fit")
        with pytest.raises(AttributeError, match=r"Use fit, or set head='dense'") as info:
            model.partial_fit(X, y)
        assert f"{type(model).__name__} has no partial_fit with head=" in str(info.value)
    # fitted with the ridge head, then switched to the dense one: fit first
    switched = LMUClassifier(device="cpu").fit(X, y).set_params(head="dense")
    with pytest.raises(AttributeError, match=r"call fit \(now with head='dense'\) first"):
        switched.partial_fit(X, y)
    switched.fit(X, y).partial_fit(X, y)
    assert switched.head_kind_ == "dense"


@pytest.mark.parametrize(
    ("params", "y", "error", "match"),
    [
        ({"head": "svm"}, None, ValueError, "Unknown head"),
        ({"theta": [10, 0]}, None, ValueError, r"theta must be positive.*\[10, 0\]"),
        ({"theta": -1.0}, None, ValueError, "theta must be positive"),
        ({"feature_output": "median"}, None, ValueError, "Unknown feature_output"),
        ({"alphas": [0.0]}, None, ValueError, "alphas"),
        ({"kernel": "poly"}, None, ValueError, "'kernel' parameter of LMUClassifier"),
        ({"kernel": "poly", "head": "dense"}, None, ValueError, "'kernel' parameter"),
        # checked in the composite's name whatever the head and features use (they named
        # LMUPooledFeatures / LMUFeatures, or passed unchecked where unused)
        ({"discretizer": "bad"}, None, ValueError, "'discretizer' parameter of LMUClassifier"),
        (
            {"discretizer": "bad", "head": "dense"},
            None,
            ValueError,
            "'discretizer' parameter of LMUClassifier",
        ),
        (
            {"feature_output": "final", "channel_sums": "x"},
            None,
            ValueError,
            "'channel_sums' parameter of LMUClassifier",
        ),
        ({"channels": 0}, None, ValueError, "'channels' parameter of LMUClassifier"),
        ({"head": "dense", "alphas": [-1.0]}, None, ValueError, "alphas must be"),
        ({"dtype": np.float16}, None, ValueError, "'dtype' parameter of LMUClassifier"),
        ({}, np.zeros(30), ValueError, "only one class"),
    ],
)
def test_bad_input(params, y, error, match):
    X, y_ok = shapes(n_per_class=10)
    with pytest.raises(error, match=match):
        LMUClassifier(device="cpu", **params).fit(X, y_ok if y is None else y)


def test_validation_data_is_for_the_dense_head():
    X, y = shapes(n_per_class=5)
    with pytest.raises(ValueError, match="early stopping"):
        LMUClassifier(device="cpu").fit(X, y, X_val=X, y_val=y)


def test_pooled_quantile_count_zero_is_an_error():
    with pytest.raises(ValueError, match="n_biases"):
        LMUPooledFeatures(n_biases=0).fit(np.zeros((3, 10)))


@pytest.mark.gpu
def test_gpu_path_on_the_stand_in(monkeypatch):
    """Pooled features by block matrix products and the ridge head on 'device' arrays."""
    from fake_cupy import clear_caches, install

    X, y = shapes(n_per_class=8)
    cpu = LMUClassifier(dtype="float64", device="cpu").fit(X, y)
    install(monkeypatch, as_gpu=True)
    try:
        gpu = LMUClassifier(dtype="float64", device="gpu").fit(X, y)
        assert gpu.features_.device == "auto"
        # a state within rounding of a threshold may count on one route and not the other,
        # so the two models are close, not equal
        assert np.mean(gpu.predict(X) == cpu.predict(X)) >= 0.95
    finally:
        clear_caches()


@pytest.mark.parametrize("Model", [LMUClassifier, LMURegressor])
def test_the_default_head_and_thresholds_by_training_size(monkeypatch, Model):
    """head='auto': ridge on pooled features with 16 thresholds (the classifier's 12
    where its head takes the Gaussian kernel: here 20 training sequences per class), with
    4 beyond _MANY_SAMPLES sequences, the dense head on final states beyond
    _RIDGE_MAX_SAMPLES (both made small here)."""
    import lmu_sk.estimators as estimators

    monkeypatch.setattr(estimators, "_MANY_SAMPLES", 40)
    monkeypatch.setattr(estimators, "_RIDGE_MAX_SAMPLES", 70)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 30))
    y = (X[:, -5:].sum(axis=1) > 0).astype(int)
    kinds = []
    for n in (40, 60, 80):
        model = Model(max_iter=5).fit(X[:n], y[:n])
        features = model.features_
        thresholds = getattr(features, "n_biases", None)
        kinds.append((model.head_kind_, type(features).__name__, thresholds))
    assert kinds == [
        ("ridge", "LMUPooledFeatures", 12 if Model is LMUClassifier else 16),
        ("ridge", "LMUPooledFeatures", 4),
        ("dense", "LMUFeatures", None),
    ]


@pytest.mark.parametrize(
    ("n_per_class", "zero_weights", "kernel", "expected"),
    [
        (10, 0, "auto", "rbf"),
        (9, 0, "auto", "linear"),  # fewer than 10 per class
        (10, 1, "auto", "linear"),  # a sequence of zero weight counts as left out
        (134, 0, "auto", "linear"),  # more than 400 sequences (AUTO_KERNEL_MAX_SAMPLES)
        (9, 0, "rbf", "rbf"),
        (10, 0, "linear", "linear"),
    ],
)
def test_the_thresholds_follow_the_kernel_the_head_fits(
    n_per_class, zero_weights, kernel, expected
):
    """The pooled features take 12 thresholds where the classifier's ridge head fits the
    Gaussian kernel, 16 for the linear model: the composite decides before the features
    exist, by the head's own rule, which the head applies again to its targets."""
    X, y = shapes(n_per_class=n_per_class, n_steps=30)
    weights = np.ones(len(y))
    weights[:zero_weights] = 0.0
    model = LMUClassifier(device="cpu", kernel=kernel).fit(X, y, sample_weight=weights)
    assert model.head_.kernel_ == expected
    assert model.features_.n_biases == (12 if expected == "rbf" else 16)


def test_labels_that_are_no_classes_get_the_heads_message_under_auto():
    """The composite reads the labels for 'auto''s rule before the head does: labels that
    are no classes (None among strings) get scikit-learn's message, as with
    kernel='linear', not a TypeError from sorting them."""
    X = np.random.default_rng(0).standard_normal((40, 30))
    y = np.array([None] * 20 + ["b"] * 20, dtype=object)
    for kernel in ("auto", "linear"):
        with pytest.raises(ValueError, match="Unknown label type"):
            LMUClassifier(kernel=kernel, device="cpu").fit(X, y)

"""Tests of the dense-head estimators."""

from __future__ import annotations

import importlib.util
import math
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_digits, make_classification
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.model_selection import train_test_split
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import parametrize_with_checks

from lmu_sk import LMUClassifier
from lmu_sk.head import DenseHeadClassifier, DenseHeadRegressor, TrainingDivergedError

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


# scikit-learn compares weighted and repeated fits to rtol 1e-7; in float32 the two
# summation orders drift apart by ~1e-4 over 200 Adam epochs. The same check passes in
# float64 (tests/heads/test_mlp_parity.py runs it), which shows the weighting itself is exact.
FLOAT32_WEIGHT_CHECK = {
    "check_sample_weight_equivalence_on_dense_data": "float32 rounding; passes in float64"
}


@parametrize_with_checks(
    [DenseHeadClassifier(), DenseHeadRegressor()],
    expected_failed_checks=lambda est: FLOAT32_WEIGHT_CHECK,
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


# ---------------------------------------------------------------------------- data
@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    return train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)


def _smooth_regression(n=600, n_outputs=1, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 3))
    Y = np.column_stack(
        [np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2] + 0.3 * k * X[:, 1] for k in range(n_outputs)]
    )
    return X, (Y[:, 0] if n_outputs == 1 else Y)


def _blobs(n=300, n_classes=3, seed=0):
    return make_classification(
        n_samples=n, n_features=8, n_informative=5, n_classes=n_classes, random_state=seed
    )


# ---------------------------------------------------------------------------- learning
def test_classifier_learns_digits(digits):
    X_tr, X_te, y_tr, y_te = digits
    clf = DenseHeadClassifier(hidden_layer_sizes=(64,), max_iter=60, random_state=0)
    clf.fit(X_tr, y_tr)
    assert clf.score(X_te, y_te) > 0.9
    assert clf.out_activation_ == "softmax" and clf.n_outputs_ == 10
    assert clf.coefs_[0].dtype == np.float32 and isinstance(clf.coefs_[0], np.ndarray)
    assert clf.loss_curve_[-1] < clf.loss_curve_[0]
    assert clf.validation_scores_ is None and clf.best_validation_score_ is None
    assert clf.best_loss_ == min(clf.loss_curve_) and clf.loss_ == clf.loss_curve_[-1]
    assert clf.n_iter_ == len(clf.loss_curve_) and clf.t_ == clf.n_iter_ * len(X_tr)
    proba = clf.predict_proba(X_te)
    assert proba.dtype == np.float64 and proba.shape == (len(X_te), 10)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(X_te)), proba, rtol=1e-6)


@pytest.mark.parametrize("activation", ["relu", "tanh", "logistic"])
def test_regressor_fits_smooth_function(activation):
    X, y = _smooth_regression()
    reg = DenseHeadRegressor(
        hidden_layer_sizes=(64, 64),
        activation=activation,
        learning_rate_init=1e-2,
        max_iter=150,
        random_state=0,
    )
    reg.fit(X[:500], y[:500])
    assert reg.score(X[500:], y[500:]) > 0.9
    assert reg.predict(X).shape == (600,) and reg.predict(X).dtype == np.float64


def test_multi_output_regression():
    X, Y = _smooth_regression(n_outputs=3)
    reg = DenseHeadRegressor(
        hidden_layer_sizes=(64,), learning_rate_init=1e-2, max_iter=150, random_state=0
    )
    reg.fit(X[:500], Y[:500])
    assert reg.n_outputs_ == 3 and reg.predict(X).shape == (600, 3)
    assert reg.score(X[500:], Y[500:]) > 0.9


def test_float64_and_sgd_and_dropout():
    X, y = _blobs()
    for params in (
        {"dtype": "float64"},
        {"solver": "sgd", "learning_rate_init": 0.05},
        {"solver": "sgd", "nesterovs_momentum": False, "learning_rate_init": 0.05},
        {"dropout": 0.3},
        {"input_dropout": 0.3},
        {"hidden_layer_sizes": (), "learning_rate_init": 0.05},
        {"hidden_layer_sizes": (16, 16, 16), "activation": "tanh"},
        {"learning_rate": "plateau"},
    ):
        clf = DenseHeadClassifier(max_iter=100, random_state=0, **params).fit(X, y)
        assert clf.score(X, y) > 0.8, params
    assert DenseHeadClassifier(dtype="float64", max_iter=5).fit(X, y).coefs_[0].dtype == (
        np.float64
    )


def test_dropout_only_in_training():
    X, y = _blobs()
    clf = DenseHeadClassifier(dropout=0.5, max_iter=20, random_state=0).fit(X, y)
    np.testing.assert_array_equal(clf.predict_proba(X), clf.predict_proba(X))


def test_binary_and_string_labels():
    X, y = _blobs(n_classes=2)
    labels = np.array(["no", "yes"])[y]
    clf = DenseHeadClassifier(max_iter=100, random_state=0).fit(X, labels)
    assert clf.out_activation_ == "logistic" and clf.n_outputs_ == 1
    assert list(clf.classes_) == ["no", "yes"]
    pred = clf.predict(X)
    assert pred.dtype == labels.dtype and set(pred) <= {"no", "yes"}
    assert clf.score(X, labels) > 0.85
    proba = clf.predict_proba(X)
    assert proba.shape == (len(X), 2)
    np.testing.assert_array_equal(clf.classes_[proba.argmax(axis=1)], pred)


def test_multiclass_string_labels():
    X, y = _blobs(n_classes=4, n=400)
    labels = np.array(["ant", "bee", "cat", "dog"], dtype=object)[y]
    clf = DenseHeadClassifier(max_iter=100, random_state=0).fit(X, labels)
    assert clf.n_outputs_ == 4 and set(clf.predict(X)) <= set(labels)
    assert clf.score(X, labels) > 0.8


def test_multilabel():
    X, y = _blobs(n_classes=3)
    Y = np.column_stack([y == 0, y == 1, y >= 1]).astype(int)
    clf = DenseHeadClassifier(max_iter=100, random_state=0).fit(X, Y)
    assert clf.out_activation_ == "logistic" and clf.predict(X).shape == Y.shape
    assert clf.score(X, Y) > 0.7


# ---------------------------------------------------------------------------- behaviour
def test_early_stopping_keeps_best_weights(monkeypatch):
    import lmu_sk.head

    # record the validation rows the estimator draws
    split = {}

    def recording_split(*args, **kwargs):
        out = train_test_split(*args, **kwargs)
        split["rows"] = out[1]
        return out

    monkeypatch.setattr(lmu_sk.head, "train_test_split", recording_split)
    X, y = _blobs(n=400)
    clf = DenseHeadClassifier(
        early_stopping=True,
        n_iter_no_change=3,
        tol=0.0,
        learning_rate_init=1e-2,
        max_iter=200,
        random_state=0,
    ).fit(X, y)
    assert clf.best_loss_ is None
    assert len(clf.validation_scores_) == clf.n_iter_ < 200
    assert clf.best_validation_score_ == max(clf.validation_scores_)
    # the stratified split keeps the class proportions
    X_val, y_val = X[split["rows"]], y[split["rows"]]
    assert len(y_val) == 40 and np.bincount(y_val).min() >= 13
    # the returned weights are those of the best epoch, not of the last one
    assert clf.validation_scores_[-1] < clf.best_validation_score_
    assert clf.score(X_val, y_val) == clf.best_validation_score_


def test_input_dropout_is_reproducible_and_changes_training():
    X, y = _blobs()
    params = dict(max_iter=10, dropout=0.2, random_state=3)
    a = DenseHeadClassifier(input_dropout=0.3, **params).fit(X, y)
    b = DenseHeadClassifier(input_dropout=0.3, **params).fit(X, y)
    plain = DenseHeadClassifier(**params).fit(X, y)
    np.testing.assert_array_equal(a.coefs_[0], b.coefs_[0])
    assert not np.allclose(a.coefs_[0], plain.coefs_[0])
    # masked inputs make training harder, not prediction: the loss is the training loss
    assert a.loss_ > plain.loss_
    with pytest.raises(ValueError, match="input_dropout"):
        DenseHeadClassifier(input_dropout=1.0).fit(X, y)


def test_reproducible_with_random_state():
    X, y = _blobs()
    a = DenseHeadClassifier(max_iter=10, dropout=0.2, random_state=3).fit(X, y)
    b = DenseHeadClassifier(max_iter=10, dropout=0.2, random_state=3).fit(X, y)
    c = DenseHeadClassifier(max_iter=10, dropout=0.2, random_state=4).fit(X, y)
    for wa, wb in zip(a.coefs_ + a.intercepts_, b.coefs_ + b.intercepts_, strict=True):
        np.testing.assert_array_equal(wa, wb)
    assert a.loss_curve_ == b.loss_curve_
    assert not np.array_equal(a.coefs_[0], c.coefs_[0])


def test_pickle_round_trip():
    X, y = _blobs()
    clf = DenseHeadClassifier(max_iter=10, random_state=0).fit(X, y)
    clone = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(clone.predict_proba(X), clf.predict_proba(X))
    np.testing.assert_array_equal(clone.predict(X), clf.predict(X))
    # the optimizer state travels too: continuing both gives the same weights
    clf.partial_fit(X, y)
    clone.partial_fit(X, y)
    np.testing.assert_array_equal(clone.coefs_[0], clf.coefs_[0])


@pytest.mark.parametrize("Est", [DenseHeadClassifier, DenseHeadRegressor])
def test_set_params_after_fit_leaves_the_fitted_model_alone(Est):
    X, y = _blobs()
    est = Est(hidden_layer_sizes=(8,), activation="relu", max_iter=10, random_state=0)
    est.fit(X, y)
    before = est.predict(X)
    assert est.activation_ == "relu"
    # every parameter that shapes the network, valid and invalid values alike: the fitted
    # model predicts as fitted (bit for bit) until the next fit
    for changes in (
        {"activation": "tanh"},
        {"activation": "bogus"},
        {"hidden_layer_sizes": (3, 5), "dropout": 0.9, "input_dropout": 0.5},
        {"hidden_layer_sizes": "bogus", "dtype": "bogus", "alpha": -1.0},
    ):
        est.set_params(**changes)
        np.testing.assert_array_equal(est.predict(X), before)
        if Est is DenseHeadClassifier:
            proba = est.predict_proba(X)
            np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    # the next fit validates and uses the new values
    with pytest.raises(ValueError, match="activation"):
        est.set_params(activation="bogus", hidden_layer_sizes=(8,), dtype="float32").fit(X, y)
    est.set_params(activation="tanh", dropout=0.0, input_dropout=0.0, alpha=1e-4).fit(X, y)
    assert est.activation_ == "tanh"


def test_partial_fit_classifier():
    X, y = _blobs()
    clf = DenseHeadClassifier(random_state=0)
    with pytest.raises(ValueError, match="classes"):
        clf.partial_fit(X, y)
    clf.partial_fit(X[:150], y[:150], classes=[0, 1, 2])
    for _ in range(30):
        clf.partial_fit(X, y)
    # as MLPClassifier: n_iter_ counts the epochs of the last call, t_ every sample seen
    assert clf.n_iter_ == 1 and clf.t_ == 150 + 30 * len(X) and len(clf.loss_curve_) == 31
    assert clf.score(X, y) > 0.8
    with pytest.raises(ValueError, match=r"not in `self\.classes_`"):
        clf.partial_fit(X, y + 5)


def test_partial_fit_single_class_batch_after_classes_given():
    X, y = _blobs()
    clf = DenseHeadClassifier(random_state=0)
    clf.partial_fit(X[y == 0], y[y == 0], classes=np.array([0, 1, 2]))
    assert clf.predict_proba(X).shape == (len(X), 3)


def test_partial_fit_refuses_weights_given_in_mlpclassifiers_order():
    """``MLPClassifier.partial_fit(X, y, sample_weight)``'s third argument is ``classes``
    here: 0/1 weights with 0/1 labels were taken as the classes and the batch trained
    unweighted, silently."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 4))
    y = (X[:, 0] > 0).astype(int)
    w = (X[:, 1] > 0).astype(float)
    clf = DenseHeadClassifier((5,), random_state=0).partial_fit(X, y, classes=[0, 1])
    with pytest.raises(TypeError, match="sample_weight=w"):
        clf.partial_fit(X, y, w)
    with pytest.raises(TypeError, match="sample_weight=w"):
        LMUClassifier(order=4, head="dense").partial_fit(X, y, w)
    clf.partial_fit(X[:2], np.array([0, 1]), [0, 1])  # two rows, both classes: classes


def test_partial_fit_after_a_dtype_change_keeps_the_optimizer_in_the_new_dtype():
    """The network continued in float64 while Adam's moments stayed float32 (updates at
    float32's precision, silently)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 4))
    reg = DenseHeadRegressor((5,), random_state=0).partial_fit(X, X[:, 0])
    assert reg._optimizer._m[0].dtype == np.float32
    reg.set_params(dtype="float64").partial_fit(X, X[:, 0])
    assert reg.coefs_[0].dtype == np.float64
    assert {a.dtype for name in ("_m", "_v") for a in getattr(reg._optimizer, name)} == {
        np.dtype(np.float64)
    }


def test_partial_fit_takes_float_labels_given_as_classes_y():
    """``classes=y`` (float labels, repeated) is classes, as scikit-learn takes it: the
    refusal of weights passed as ``classes`` took it for weights."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 4))
    y = (X[:, 0] > 0).astype(float)
    DenseHeadClassifier((5,), random_state=0, max_iter=2).partial_fit(X, y, classes=y)
    LMUClassifier(order=4, head="dense", max_iter=2).partial_fit(X, y, classes=y)


def test_partial_fit_regressor_matches_fit_epochs():
    X, y = _smooth_regression(n=200)
    a = DenseHeadRegressor(max_iter=3, random_state=0, shuffle=False)
    with pytest.warns(ConvergenceWarning):
        a.fit(X, y)
    b = DenseHeadRegressor(random_state=0, shuffle=False)
    for _ in range(3):
        b.partial_fit(X, y)
    np.testing.assert_allclose(a.coefs_[0], b.coefs_[0], rtol=1e-6)
    assert a.loss_curve_ == pytest.approx(b.loss_curve_, rel=1e-6)


def test_plateau_schedule_in_fit_and_partial_fit():
    X, y = _smooth_regression(n=100)
    # with a huge tol no epoch improves: constant stops after 1 + 2 epochs, plateau
    # divides the rate at epochs 3, 5, 7 (1e-3 -> 1e-6) and stops at epoch 9
    params = dict(tol=1e9, n_iter_no_change=1, max_iter=50, random_state=0)
    assert DenseHeadRegressor(**params).fit(X, y).n_iter_ == 3
    assert DenseHeadRegressor(learning_rate="plateau", **params).fit(X, y).n_iter_ == 9
    reg = DenseHeadRegressor(learning_rate="plateau", **params)
    for _ in range(5):
        reg.partial_fit(X, y)
    assert reg._optimizer.learning_rate == pytest.approx(1e-5)


def test_cosine_schedule_runs_max_iter_epochs_without_warning():
    X, y = _smooth_regression(n=100)
    # no epoch improves (tol=1e9), yet 'cosine' runs all its epochs and does not warn
    params = dict(tol=1e9, n_iter_no_change=1, max_iter=6, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        reg = DenseHeadRegressor(learning_rate="cosine", **params).fit(X, y)
    assert reg.n_iter_ == 6
    # the last (6th) epoch's rate, kept past the schedule's end
    last = 0.001 * (1 + math.cos(math.pi * 5 / 6)) / 2
    assert reg._optimizer.learning_rate == pytest.approx(last, rel=1e-12)
    clf = DenseHeadClassifier(learning_rate="cosine", early_stopping=True, **params)
    clf.fit(*_blobs())
    assert clf.n_iter_ == 6 and len(clf.validation_scores_) == 6
    # partial_fit has no planned length: the rate stays at learning_rate_init
    reg = DenseHeadRegressor(learning_rate="cosine", learning_rate_init=0.01, random_state=0)
    for _ in range(3):
        reg.partial_fit(X, y)
    assert reg._optimizer.learning_rate == 0.01


def test_fit_hook_for_composite_estimators():
    X, y = _blobs()
    clf = DenseHeadClassifier(max_iter=5, random_state=0)
    assert clf._fit(X, y) is clf
    ref = DenseHeadClassifier(max_iter=5, random_state=0).fit(X, y)
    np.testing.assert_array_equal(clf.predict_proba(X), ref.predict_proba(X))
    clf._fit(X, y, incremental=True)
    assert clf.n_iter_ == 1 and len(clf.loss_curve_) == 6


def test_warm_start_continues():
    X, y = _blobs()
    clf = DenseHeadClassifier(max_iter=5, warm_start=True, random_state=0).fit(X, y)
    first = clf.coefs_[0].copy()
    curve = list(clf.loss_curve_)
    clf.fit(X, y)
    # as MLPClassifier: n_iter_ counts this call's epochs, loss_curve_ and t_ carry over
    assert clf.n_iter_ == 5 and len(clf.loss_curve_) == 10 and clf.loss_curve_[:5] == curve
    assert clf.t_ == 10 * len(X)
    assert clf.loss_curve_[5] < curve[0]  # did not start from scratch
    cold = DenseHeadClassifier(max_iter=5, random_state=0).fit(X, y)
    np.testing.assert_array_equal(cold.coefs_[0], first)
    with pytest.raises(ValueError, match="same classes"):
        clf.fit(X[y < 2], y[y < 2])
    clf.set_params(hidden_layer_sizes=(7,))
    with pytest.raises(ValueError, match="warm_start=False"):
        clf.fit(X, y)


def test_no_warm_start_refits_from_scratch():
    X, y = _blobs()
    clf = DenseHeadClassifier(max_iter=5, random_state=0)
    clf.fit(X, y)
    w = clf.coefs_[0].copy()
    clf.fit(X, y)
    np.testing.assert_array_equal(clf.coefs_[0], w)
    assert clf.n_iter_ == 5


def test_a_divergence_with_a_finite_loss_says_the_weights_broke():
    """A learning rate of 1e300 leaves the epoch's loss finite (each batch's is of the
    weights before its update) and the weights not: the message quoted the finite loss as
    the divergence."""
    X = np.random.default_rng(0).normal(size=(60, 4))
    with pytest.raises(TrainingDivergedError, match=r"updates made the weights non-finite"):
        DenseHeadRegressor(learning_rate_init=1e300).fit(X, X[:, 0])


def test_divergence_gives_clear_error_and_no_nan_model():
    X, y = _smooth_regression(n=200)
    reg = DenseHeadRegressor(solver="sgd", learning_rate_init=1e4, max_iter=50, random_state=0)
    with pytest.raises(ValueError, match="Lower learning_rate_init") as info:
        reg.fit(X * 100, y * 100)
    assert isinstance(info.value, TrainingDivergedError)
    with pytest.raises(NotFittedError):
        reg.predict(X)
    # a fitted model keeps its previous, finite weights
    reg.set_params(learning_rate_init=1e-3, solver="adam", max_iter=5).fit(X, y)
    before = reg.predict(X)
    reg.set_params(learning_rate_init=1e4, solver="sgd", warm_start=True)
    # from trained weights the explosion is first reported as it happens, then it stops
    with pytest.warns(UserWarning, match="loss exploded"):
        with pytest.raises(TrainingDivergedError):
            reg.fit(X * 100, y * 100)
    np.testing.assert_array_equal(reg.predict(X), before)


def test_verbose_prints_one_line_per_epoch(capsys):
    X, y = _blobs()
    DenseHeadClassifier(max_iter=3, verbose=True, early_stopping=True, random_state=0).fit(X, y)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("Epoch")]
    assert len(lines) == 3
    assert "loss = " in lines[0] and "validation score = " in lines[0] and "s" in lines[0]


# ---------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("Est", [DenseHeadClassifier, DenseHeadRegressor])
def test_bad_input(Est):
    X, y = _blobs()
    est = Est(max_iter=5)
    with pytest.raises(NotFittedError):
        est.predict(X)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        est.fit(X, y[:-1])
    for bad in (np.nan, np.inf):
        Xb = X.copy()
        Xb[3, 2] = bad
        with pytest.raises(ValueError, match=r"NaN|infinity"):
            est.fit(Xb, y)
    yb = y.astype(float)
    yb[0] = np.nan
    with pytest.raises(ValueError):
        est.fit(X, yb)
    est.fit(X, y)
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :3])
    with pytest.raises(ValueError):
        Est(activation="softplus").fit(X, y)
    with pytest.raises(ValueError):
        Est(hidden_layer_sizes=(10, 0)).fit(X, y)
    with pytest.raises(ValueError):
        Est(dtype="float16").fit(X, y)
    with pytest.raises(ValueError, match="learning_rate"):
        Est(learning_rate="cyclic").fit(X, y)
    with pytest.raises(ValueError, match="power_t"):
        Est(power_t=-0.5).fit(X, y)


def test_single_class_is_rejected():
    X, _ = _blobs()
    with pytest.raises(ValueError, match="at least two classes"):
        DenseHeadClassifier().fit(X, np.zeros(len(X)))
    with pytest.raises(ValueError, match="at least two classes"):
        DenseHeadClassifier().partial_fit(X, np.zeros(len(X)), classes=[0])


def test_estimators_run_on_another_array_module(monkeypatch):
    # a module that forwards to NumPy but is not NumPy takes the code paths CuPy would
    import types

    fake = types.ModuleType("numpy_lookalike")
    fake.__dict__.update({k: v for k, v in np.__dict__.items() if not k.startswith("__")})
    X, y = _blobs()
    params = dict(max_iter=30, dropout=0.2, learning_rate_init=1e-2, random_state=0)
    monkeypatch.setattr(DenseHeadClassifier, "_array_module", lambda self, training=True: fake)
    clf = DenseHeadClassifier(early_stopping=True, **params).fit(X, y)
    clf.set_params(early_stopping=False).partial_fit(X, y)
    assert type(clf.coefs_[0]) is np.ndarray and clf.predict_proba(X).shape == (300, 3)
    assert clf.score(X, y) > 0.8 and np.isfinite(clf.loss_curve_).all()
    assert pickle.loads(pickle.dumps(clf)).predict(X).shape == (300,)


def test_device_helpers():
    from lmu_sk._device import get_array_module, to_numpy

    assert get_array_module("cpu") is np
    a = np.arange(3)
    assert to_numpy(a) is a
    np.testing.assert_array_equal(to_numpy([1, 2]), [1, 2])
    with pytest.raises(ValueError, match="device must be one of"):
        get_array_module("tpu")


@pytest.mark.skipif(importlib.util.find_spec("cupy") is not None, reason="CuPy is installed")
def test_gpu_device_without_cupy_is_a_clear_error():
    X, y = _blobs()
    with pytest.raises(ValueError, match=r"pip install \"\.\[gpu-cuda12\]\""):
        DenseHeadClassifier(device="gpu").fit(X, y)
    clf = DenseHeadClassifier(device="auto", max_iter=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, y)
    assert isinstance(clf.predict_proba(X), np.ndarray)


@pytest.mark.parametrize("Est", [DenseHeadClassifier, DenseHeadRegressor])
def test_a_network_too_large_for_memory_is_refused_before_allocating(Est, monkeypatch):
    """Training arrays beyond the memory available raise a ``MemoryBudgetError`` naming
    ``hidden_layer_sizes`` (NumPy's bare ``MemoryError``, or swapping, before); nothing of
    the network is made."""
    import lmu_sk.head as head_module
    from lmu_sk._memory import MemoryBudgetError

    def no_network(*args, **kwargs):
        raise AssertionError("the network was made")

    X, y = np.random.default_rng(0).standard_normal((20, 6)), np.arange(20) % 2
    monkeypatch.setattr(head_module, "DenseNetwork", no_network)
    # 1e7 x 1e5 weights: 4 TB of float32 parameters alone
    model = Est(hidden_layer_sizes=(10**7, 10**5), max_iter=1)
    with pytest.raises(MemoryBudgetError, match="hidden_layer_sizes") as info:
        model.fit(X, y)
    n_params = 6 * 10**7 + 10**7 * 10**5 + 10**5 + 10**7 + 10**5 + 1
    assert f"({n_params:,} parameters)" in str(info.value) and "TB" in str(info.value)
    assert not hasattr(model, "coefs_")


def test_a_network_that_fits_is_not_refused(monkeypatch):
    """The estimate counts what training holds (parameters times five, a batch's
    activations times five): a network just within the memory left trains."""
    import lmu_sk.head as head_module

    X, y = np.random.default_rng(0).standard_normal((20, 6)), np.arange(20) % 2
    sizes = [6, 50, 1]
    n_params = 6 * 50 + 50 + 50 + 1
    need = 4 * (5 * n_params + 5 * 20 * sum(sizes))
    monkeypatch.setattr(head_module, "free_device_memory", lambda xp: need)
    DenseHeadClassifier(hidden_layer_sizes=(50,), max_iter=2).fit(X, y)
    monkeypatch.setattr(head_module, "free_device_memory", lambda xp: need - 1)
    with pytest.raises(ValueError, match="hidden_layer_sizes"):
        DenseHeadClassifier(hidden_layer_sizes=(50,), max_iter=2).fit(X, y)


def test_a_batch_too_large_for_memory_is_named(monkeypatch):
    """The refusal named hidden_layer_sizes where a batch's activations took nearly all of
    the memory (a batch of 200 000 rows against 20 MB of parameters)."""
    import lmu_sk.head as head_module

    X, y = np.random.default_rng(0).standard_normal((300, 6)), np.arange(300) % 2
    monkeypatch.setattr(head_module, "free_device_memory", lambda xp: 10_000)
    with pytest.raises(ValueError, match=r"smaller batch_size \(now 300 rows"):
        DenseHeadClassifier(hidden_layer_sizes=(5,), batch_size=300, max_iter=1).fit(X, y)


@pytest.mark.parametrize("weights", [np.full(120, 1e-300), np.r_[1e300, np.ones(119)]])
def test_weights_beyond_the_training_dtype_are_refused_clearly(weights):
    """Weights of 1e-300 underflow to zero in float32 (1e300 overflows): the loss was NaN,
    reported as a divergence that blamed the learning rate and the features' scale. The
    error names sample_weight, the range and the fixes."""
    X, y = make_classification(n_samples=120, n_features=8, random_state=0)
    with pytest.raises(ValueError, match=r"sample_weight holds values .*float32.*Rescale"):
        DenseHeadClassifier(max_iter=2).fit(X, y, sample_weight=weights)
    # float64 holds them: the advice works (without the L2 penalty, which weights of 1e-300
    # make 1e296 times alpha: Adam's squared gradients would overflow, refused below)
    DenseHeadClassifier(max_iter=2, dtype="float64", alpha=0.0).fit(X, y, sample_weight=weights)


def test_an_optimizer_whose_moments_overflow_is_refused_not_left_stalled():
    """Weights of 1e-30 make the L2 penalty's gradient (alpha / total weight) about 1e23:
    its square overflows float32 in Adam's second moment, whose steps are then zero, and
    training went on without moving (the same loss every epoch, no message). Now an error
    says so; float64 holds the squares and trains."""
    X, y = make_classification(n_samples=200, n_features=5, random_state=0)
    weights = np.full(200, 1e-30)
    head = DenseHeadClassifier(hidden_layer_sizes=(8,), max_iter=5, random_state=0)
    with pytest.raises(TrainingDivergedError, match=r"moments overflowed float32.*float64"):
        head.fit(X, y, sample_weight=weights)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fitted = clone(head).set_params(dtype="float64").fit(X, y, sample_weight=weights)
    assert fitted.loss_curve_[-1] < fitted.loss_curve_[0]


def test_a_refused_refit_keeps_the_fitted_classes_and_weights():
    """A refit that diverged (or was refused) left the new classes_ and n_features_in_
    in front of the old weights: the old network's outputs were predicted under the new
    labels, silently, or every prediction was refused. The head keeps the state it had."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 4))
    y = (X[:, 0] > 0).astype(int)
    params = dict(hidden_layer_sizes=(5,), max_iter=5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = DenseHeadClassifier(**params).fit(X, y)
    before = clf.predict(X)
    with pytest.raises(ValueError, match="diverged"):
        clf.set_params(alpha=1e300).fit(X, np.array(["cat", "dog"])[y])
    with pytest.raises(ValueError, match=r"one class|only one class|2 classes|single class"):
        clf.set_params(alpha=1e-4).fit(rng.standard_normal((10, 7)), np.zeros(10))
    np.testing.assert_array_equal(clf.classes_, [0, 1])
    assert clf.n_features_in_ == 4
    np.testing.assert_array_equal(clf.predict(X), before)


def test_a_refused_first_partial_fit_leaves_the_classes_open():
    """A first partial_fit refused for its classes left them set: the corrected call was
    refused as naming other classes than the refused one."""
    X = np.random.default_rng(0).standard_normal((30, 4))
    y = np.arange(30) % 3
    clf = DenseHeadClassifier(hidden_layer_sizes=(5,), random_state=0)
    with pytest.raises(ValueError, match="classes"):
        clf.partial_fit(X, y, classes=[0, 1])
    assert not hasattr(clf, "classes_")
    clf.partial_fit(X, y, classes=[0, 1, 2])
    np.testing.assert_array_equal(clf.classes_, [0, 1, 2])


def test_partial_fit_after_a_cosine_fit_still_trains():
    """After a fit with learning_rate='cosine' the rate was set to 0 for an epoch past the
    schedule's end: every partial_fit after it left the weights as they were, silently.
    It continues at the last epoch's rate."""
    X, y = _blobs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = DenseHeadClassifier(
            hidden_layer_sizes=(5,), learning_rate="cosine", max_iter=5, random_state=0
        ).fit(X, y)
    last = 0.001 * (1 + math.cos(math.pi * 4 / 5)) / 2
    assert clf._optimizer.learning_rate == pytest.approx(last, rel=1e-12)
    before = [w.copy() for w in clf.coefs_]
    clf.partial_fit(X, y)
    assert not all(np.array_equal(a, b) for a, b in zip(before, clf.coefs_, strict=True))


def test_validation_data_and_fraction_are_refused_naming_them():
    """y_val with other outputs than y trained a whole epoch, then failed in r2_score's
    words; one row of X_val gave NaN validation scores, silently; a validation_fraction
    that leaves no training row was refused in train_test_split's words (test_size)."""
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((30, 4)), rng.standard_normal(30)
    reg = DenseHeadRegressor(hidden_layer_sizes=(3,), early_stopping=True, max_iter=3)
    with pytest.raises(ValueError, match=r"y_val has 2 output\(s\) but y has 1"):
        reg.fit(X, y, X_val=X[:3], y_val=np.c_[y[:3], y[:3]])
    with pytest.raises(ValueError, match=r"X_val has 1 row\(s\)"):
        reg.fit(X, y, X_val=X[:1], y_val=y[:1])
    with pytest.raises(ValueError, match=r"validation_fraction=0\.99 of 30 rows leaves no row"):
        reg.set_params(validation_fraction=0.99).fit(X, y)


def test_weights_whose_sum_passes_float32_are_refused_naming_them():
    """Each weight of 1e37 is within float32, their sum of 3e38 (and the weighted losses)
    is not: the loss came out ~0 (training stopped early) or NaN, reported as a
    divergence blaming the learning rate."""
    rng = np.random.default_rng(0)
    X, y = 0.1 * rng.standard_normal((30, 4)), 0.1 * rng.standard_normal(30)
    with pytest.raises(
        ValueError, match=r"heaviest batch summing to 3e\+38.*a batch's sum at most"
    ):
        DenseHeadRegressor(max_iter=5, batch_size=30).fit(X, y, sample_weight=np.full(30, 1e37))
    small = DenseHeadRegressor(max_iter=2, batch_size=30, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        small.fit(X, y, sample_weight=np.full(30, 1e30))
    assert np.isfinite(small.loss_curve_).all() and small.loss_curve_[0] > 1e-4


def test_warm_start_refuses_another_kind_of_classification_target():
    """A network trained on an indicator matrix (several labels per sample) was trained on
    one-hot labels by a warm fit, silently: predict then gave indicator rows."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((30, 4))
    head = DenseHeadClassifier(
        hidden_layer_sizes=(5,), max_iter=2, random_state=0, warm_start=True
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        head.fit(X, (rng.random((30, 3)) > 0.5).astype(int))
        with pytest.raises(ValueError, match="several labels per sample"):
            head.fit(X, rng.integers(0, 3, 30))
        assert head.predict(X).shape == (30, 3)
        with pytest.raises(ValueError, match="partial_fit continues a network"):
            head.partial_fit(X, rng.integers(0, 3, 30))


def test_several_multiclass_labels_per_sample_are_refused_naming_what_fits_them():
    """Several labels per sample of more than two values (multiclass-multioutput) reached
    scikit-learn's label binarizer, whose message named none of the ways to fit them, and
    the ridge head's advice (head='dense') led there."""

    rng = np.random.default_rng(7)
    X = rng.standard_normal((24, 30))
    Y = np.c_[np.arange(24) % 2, np.arange(24) % 3]
    with pytest.raises(ValueError, match=r"^DenseHeadClassifier .*MultiOutputClassifier"):
        DenseHeadClassifier(max_iter=2).fit(X, Y)
    with pytest.raises(ValueError, match=r"^LMUClassifier .*MultiOutputClassifier"):
        LMUClassifier(order=4, head="dense", device="cpu").fit(X, Y)
    with pytest.raises(ValueError, match=r"indicator matrix of 0 and 1.*MultiOutputClassifier"):
        LMUClassifier(order=4, head="ridge", device="cpu").fit(X, Y)
    with pytest.raises(ValueError, match=r"^LMUClassifier .*MultiOutputClassifier"):
        LMUClassifier(order=4, head="dense", device="cpu").partial_fit(X, Y)
    # an indicator matrix is what the dense head takes
    indicator = np.c_[np.arange(24) % 2, (np.arange(24) // 2) % 2]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = LMUClassifier(order=4, head="dense", max_iter=2, device="cpu").fit(X, indicator)
    assert model.predict(X).shape == (24, 2)


def test_an_epsilon_below_float32s_range_does_not_give_nan_weights():
    """Adam's epsilon of 1e-50 rounds to 0 in float32, and a feature of zero gradient then
    divided 0 by 0: NaN weights, reported as a divergence. It is kept at float32's
    smallest normal number."""
    rng = np.random.default_rng(2)
    X, y = rng.standard_normal((30, 4)), rng.standard_normal(30)
    X[:, 3] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        head = DenseHeadRegressor(epsilon=1e-50, alpha=0.0, max_iter=2, random_state=0).fit(X, y)
    assert np.isfinite(head.loss_curve_).all()
    assert all(np.isfinite(c).all() for c in head.coefs_)


def test_the_weights_bound_is_a_batchs_not_the_whole_sets():
    """A batch's loss divides by its own total weight: 2 000 rows of weight 1e30 (2e33 in
    all, batches of 200 at 2e32) train as unweighted ones do (they were refused for the
    sum of every row, which fit refused and partial_fit in parts accepted)."""
    rng = np.random.RandomState(0)
    X = rng.randn(2000, 5)
    y = X @ rng.randn(5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        weighted = DenseHeadRegressor(max_iter=5, random_state=0).fit(
            X, y, sample_weight=np.full(2000, 1e30)
        )
        plain = DenseHeadRegressor(max_iter=5, random_state=0).fit(X, y)
    np.testing.assert_allclose(
        weighted.predict(X[:50]), plain.predict(X[:50]), rtol=1e-4, atol=1e-4
    )


@pytest.mark.parametrize("Head", [DenseHeadClassifier, DenseHeadRegressor])
def test_weights_passed_in_scikit_learns_position_are_named(Head):
    """``fit(X, y, w)`` (scikit-learn's order) gave w as X_val: "Pass both X_val and
    y_val", or, through partial_fit, weights taken for classes."""
    rng = np.random.default_rng(3)
    X, y = rng.standard_normal((20, 3)), np.arange(20) % 2
    weights = rng.uniform(0.5, 2.0, 20)
    for given in (weights, list(weights)):
        with pytest.raises(TypeError, match=r"sample_weight=w"):
            Head(max_iter=2).fit(X, y, given)
    with pytest.raises(ValueError, match="Pass both X_val and y_val"):
        Head(max_iter=2, early_stopping=True).fit(X, y, X[:5])


def test_a_learning_curve_of_a_model_without_epochs_says_to_pass_x_and_y():
    pytest.importorskip("matplotlib")
    from lmu_sk import LMURegressor
    from lmu_sk.plotting import plot_learning_curve

    rng = np.random.default_rng(4)
    X = rng.standard_normal((30, 12))
    model = LMURegressor(order=4).fit(X, X[:, -3:].sum(axis=1))
    with pytest.raises(TypeError, match="pass X and y"):
        plot_learning_curve(model)


def test_partial_fit_refuses_early_stopping_as_scikit_learn_does():
    """partial_fit trains one epoch with nothing held out: with early_stopping=True it ran
    without it and reset the fitted validation scores to None. Now it is refused, as
    MLPClassifier refuses it, leaving the fitted model as it was."""
    X, y = make_classification(n_samples=200, n_features=5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        head = DenseHeadClassifier(early_stopping=True, max_iter=5, random_state=0).fit(X, y)
    scores = list(head.validation_scores_)
    with pytest.raises(ValueError, match="partial_fit does not support early_stopping=True"):
        head.partial_fit(X, y)
    assert head.validation_scores_ == scores
    with pytest.raises(ValueError, match="early_stopping"):
        DenseHeadClassifier(early_stopping=True).partial_fit(X, y, classes=[0, 1])


@pytest.mark.parametrize("sizes", [[0], {3}, {3: 1}, (4, -1), (True,)])
def test_hidden_layer_sizes_are_checked_naming_the_estimator(sizes):
    """A set or mapping has no order of layers; zero, negative or boolean sizes are not
    layers: each an InvalidParameterError naming the estimator."""
    X, y = make_classification(n_samples=40, n_features=5, random_state=0)
    with pytest.raises(InvalidParameterError, match="'hidden_layer_sizes' parameter of Dense"):
        DenseHeadClassifier(hidden_layer_sizes=sizes, max_iter=2).fit(X, y)


def test_the_dtype_message_names_what_the_heads_accept():
    """The heads take 'float32' or 'float64': the message offered None, which they refuse
    (the transformers' check, where None keeps the input's dtype)."""
    X, y = make_classification(n_samples=40, n_features=5, random_state=0)
    with pytest.raises(InvalidParameterError, match="must be 'float32' or 'float64'") as error:
        DenseHeadClassifier(dtype=np.float16, max_iter=2).fit(X, y)
    assert "None" not in str(error.value)


def test_a_divergence_of_weights_that_had_already_exploded_says_so():
    """partial_fit after an epoch whose loss exploded (the weights kept) diverges whatever
    the learning rate: the message said to lower learning_rate_init, already lowered. Now
    it says the weights had diverged and to train from fresh ones."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 5))
    y = X @ np.arange(5.0)
    head = DenseHeadRegressor(
        hidden_layer_sizes=(8,), random_state=0, solver="sgd", learning_rate_init=0.5
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(TrainingDivergedError):
            for _ in range(10):
                head.partial_fit(X, y)
    head.set_params(learning_rate_init=1e-3)
    with pytest.raises(TrainingDivergedError, match=r"had already diverged.*fresh weights"):
        head.partial_fit(X, y)


def test_log_probabilities_come_from_the_logits():
    """A confident binary head: 1 - p rounded the small probability to 0, its logarithm
    -inf; from the logits it is finite, and exp of it is predict_proba (1e-15)."""
    X, y = make_classification(n_samples=200, n_features=5, random_state=0)
    head = DenseHeadClassifier(
        hidden_layer_sizes=(), max_iter=300, learning_rate_init=1.0, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        head.fit(X * 100, y)
    log_proba = head.predict_log_proba(X * 100)
    assert np.isfinite(log_proba).all() and log_proba.min() < -40
    np.testing.assert_allclose(np.exp(log_proba), head.predict_proba(X * 100), atol=1e-15)
    multi = DenseHeadClassifier(hidden_layer_sizes=(4,), max_iter=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        multi.fit(X, np.arange(200) % 3)
    np.testing.assert_allclose(
        np.exp(multi.predict_log_proba(X)), multi.predict_proba(X), atol=1e-15
    )


def test_one_hot_targets_beyond_memory_are_refused_first(monkeypatch):
    """60 000 classes of 60 000 samples: scikit-learn's binarizer made a 26.8 GiB matrix
    with no estimate first (a raw MemoryError)."""
    import lmu_sk._memory as memory

    # 8 GB available, whatever the host has (160 GB and 400 GB hosts would allocate)
    monkeypatch.setattr(memory, "available_memory", lambda **kwargs: 8 * 10**9)
    X = np.random.default_rng(0).standard_normal((100_000, 3))
    with pytest.raises(ValueError, match="one-hot targets of 100000 samples and 100000"):
        DenseHeadClassifier((4,), max_iter=1).fit(X, np.arange(100_000))


def test_outputs_beyond_memory_are_refused_first(monkeypatch):
    """The network's outputs of every row were made with no estimate (a raw MemoryError
    for many rows of many classes, predict's labels included)."""
    import lmu_sk._memory as memory

    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((60, 4)), np.arange(60) % 3
    head = DenseHeadClassifier((4,), max_iter=2).fit(X, y)
    monkeypatch.setattr(memory, "available_memory", lambda **kwargs: 10_000)
    for method in (head.predict, head.predict_proba):
        with pytest.raises(ValueError, match="outputs of 1000 samples for 3 outputs"):
            method(rng.standard_normal((1000, 4)))
    assert head.predict(X[:10]).shape == (10,)


@pytest.mark.parametrize("scale", [1e39, 1e-46])
@pytest.mark.parametrize("head", [DenseHeadClassifier, DenseHeadRegressor])
def test_values_beyond_float32_are_refused_by_name(head, scale):
    """Cast to the default float32, 1e39 became infinity (a 'diverged' fit blaming the
    learning rate) and 1e-46 zeros (a model of nothing, accepted silently)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 4))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="float32") as raised:
        head(max_iter=3).fit(X * scale, y)
    assert "dtype='float64'" in str(raised.value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        head(max_iter=3, dtype="float64").fit(X * scale, y)  # float64 takes them


def test_a_fortran_ordered_x_is_cast_once():
    """The range-checked cast keeps a C-contiguous result for a Fortran-ordered X (it kept
    the Fortran order, which the training loop then copied a second time: twice X's
    memory at the peak)."""
    from lmu_sk._input import cast_checked

    X = np.asfortranarray(np.random.default_rng(0).normal(size=(50, 7)))
    cast = cast_checked(X, np.float32)
    assert cast.flags.c_contiguous
    np.testing.assert_array_equal(cast, X.astype(np.float32))

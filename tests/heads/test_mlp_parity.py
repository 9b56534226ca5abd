"""Parity with scikit-learn's MLPClassifier / MLPRegressor where users trip over differences.

1. ``sample_weight`` in the dense heads, the ridge heads and the LMU composites;
2. the learning-rate schedules 'adaptive' and 'invscaling' (and ``power_t``);
3. ``warm_start`` / ``partial_fit`` bookkeeping (``n_iter_``, ``t_``, ``loss_curve_``, the
   optimizer, the no-improvement counter), side by side with ``MLPClassifier``;
4. parameter errors that name the composite the user built;
5. ``feature_names_in_`` of the composites for DataFrame input;
6. NaN in ``y_val`` and exploding losses.

Tolerances. Weighted and repeated-row training take the same steps and differ only in the
order of the batch sums: 1e-16 relative per operation in float64, 6e-8 in float32; over
the few epochs run here that grows to ~1e-15 and ~4e-7 (measured), well within the
``1e-10`` (float64) and ``1e-5`` (float32) asserted. Ridge fits against scikit-learn's are
float64 solves through different factorizations: 1e-6, as in ``test_ridge.py``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import sklearn
from sklearn.datasets import load_digits, make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import RidgeClassifierCV, RidgeCV
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier, MLPRegressor
from sklearn.utils.estimator_checks import check_sample_weight_equivalence_on_dense_data

import lmu_sk.head
from lmu_sk import DenseHeadClassifier, DenseHeadRegressor, LMUClassifier, LMURegressor
from lmu_sk.head import TrainingDivergedError
from lmu_sk.neural.network import DenseNetwork

RTOL = {"float64": 1e-10, "float32": 1e-5}
ALPHAS = np.logspace(-2, 3, 11)
SMALL_LMU = dict(order=6, hidden_layer_sizes=(8,), device="cpu", random_state=0)

quiet = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _blobs(n=60, n_classes=3, seed=0):
    return make_classification(
        n_samples=n, n_features=6, n_informative=4, n_classes=n_classes, random_state=seed
    )


def _weights(n, seed=0):
    w = np.random.default_rng(seed).integers(0, 4, n)
    w[:3] = (0, 1, 3)  # a zero weight for sure
    return w


def _sequences(n=40, n_steps=12, seed=0):
    rng = np.random.default_rng(seed)
    X = np.cumsum(rng.standard_normal((n, n_steps)), axis=1) / 3
    y = (X[:, -4:].mean(axis=1) > 0).astype(int) + (X[:, 0] > 0.5)
    return X, y


def _all_weights(est):
    return est.coefs_ + est.intercepts_


def _assert_same_weights(a, b, rtol):
    for p, q in zip(_all_weights(a), _all_weights(b), strict=True):
        np.testing.assert_allclose(p, q, rtol=rtol, atol=rtol / 10)


# ---------------------------------------------------------------------------- 1. weights
@quiet
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("Head", [DenseHeadClassifier, DenseHeadRegressor])
def test_integer_weights_train_as_repeated_rows(Head, dtype):
    X, y = _blobs()
    y = y if Head is DenseHeadClassifier else y + X[:, 0]
    w = _weights(len(X))
    # one full batch, no shuffling, an L2 penalty (divided by the total weight)
    params = dict(hidden_layer_sizes=(8,), max_iter=6, shuffle=False, random_state=0)
    params.update(dtype=dtype, alpha=0.1, learning_rate_init=0.01)
    weighted = Head(batch_size=len(X), **params).fit(X, y, sample_weight=w)
    repeated = Head(batch_size=int(w.sum()), **params).fit(X.repeat(w, axis=0), y.repeat(w))
    _assert_same_weights(weighted, repeated, RTOL[dtype])
    assert weighted.loss_curve_ == pytest.approx(repeated.loss_curve_, rel=RTOL[dtype])
    # partial_fit takes weights too
    weighted.partial_fit(X, y, sample_weight=w)
    repeated.partial_fit(X.repeat(w, axis=0), y.repeat(w))
    _assert_same_weights(weighted, repeated, RTOL[dtype])


@quiet
@pytest.mark.parametrize("Head", [DenseHeadClassifier, DenseHeadRegressor])
def test_zero_weight_equals_dropping_the_row(Head):
    X, y = _blobs()
    y = y if Head is DenseHeadClassifier else y + X[:, 0]
    w = np.ones(len(X))
    w[::4] = 0.0
    keep = w > 0
    params = dict(hidden_layer_sizes=(8,), max_iter=6, shuffle=False, random_state=0)
    params.update(dtype="float64", batch_size=len(X), alpha=0.1)
    weighted = Head(**params).fit(X, y, sample_weight=w)
    dropped = Head(**{**params, "batch_size": int(keep.sum())}).fit(X[keep], y[keep])
    _assert_same_weights(weighted, dropped, RTOL["float64"])
    # the weights matter: without them the fit differs
    plain = Head(**params).fit(X, y)
    assert abs(plain.loss_curve_[0] / weighted.loss_curve_[0] - 1) > 1e-3


@quiet
@pytest.mark.parametrize(
    "estimator",
    [
        DenseHeadClassifier(dtype="float64"),
        DenseHeadRegressor(dtype="float64"),
        LMUClassifier(head="dense", dtype="float64", **SMALL_LMU),
        LMURegressor(head="dense", dtype="float64", **SMALL_LMU),
    ],
    ids=lambda est: type(est).__name__,
)
def test_scikit_learn_weight_equivalence_check_in_float64(estimator):
    """scikit-learn's own check (shuffled weighted rows against repeated ones, rtol 1e-7)
    passes in float64; in float32 it is an expected failure of rounding alone."""
    check_sample_weight_equivalence_on_dense_data(type(estimator).__name__, estimator)


@pytest.mark.skipif(
    tuple(int(p) for p in sklearn.__version__.split(".")[:2]) < (1, 7),
    reason="MLP takes sample_weight from scikit-learn 1.7",
)
@pytest.mark.parametrize(
    ("Mlp", "loss", "n_outputs"),
    [
        (MLPRegressor, "squared_error", 1),
        (MLPRegressor, "squared_error", 3),  # (summed over the outputs, the loss was 3x)
        (MLPClassifier, "log_loss", 3),
    ],
)
def test_weighted_loss_and_gradient_are_mlps(Mlp, loss, n_outputs):
    """The weighted loss, its L2 term (divided by the total weight) and the gradients are
    those of scikit-learn's MLP backpropagation for the same weights (float64: 1e-12)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((9, 4))
    w = rng.uniform(0.0, 3.0, 9)
    net = DenseNetwork([4, 5, n_outputs], "tanh", loss, alpha=0.3, dtype=np.float64)
    net.initialize(rng)
    if loss == "log_loss":
        Y = np.eye(3)[np.arange(9) % 3]
        y_fit = np.arange(9) % 3
    else:
        Y = rng.standard_normal((9, n_outputs))
        y_fit = Y[:, 0] if n_outputs == 1 else Y
    mlp = Mlp(hidden_layer_sizes=(5,), activation="tanh", alpha=0.3, max_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        mlp.fit(X, y_fit)
    mlp.coefs_ = [c.copy() for c in net.coefs]
    mlp.intercepts_ = [b.copy() for b in net.intercepts]
    n_layers = len(mlp.coefs_) + 1
    activations = [X] + [None] * (n_layers - 1)
    deltas = [None] * (n_layers - 1)
    coef_grads = [np.empty_like(c) for c in mlp.coefs_]
    intercept_grads = [np.empty_like(b) for b in mlp.intercepts_]
    theirs, coef_grads, intercept_grads = mlp._backprop(
        X, Y, w, activations, deltas, coef_grads, intercept_grads
    )
    ours = float(net.loss_and_gradients(X, Y, sample_weight=w, reported=True))
    assert ours == pytest.approx(theirs, rel=1e-12)
    for mine, expected in zip(
        net.coef_grads + net.intercept_grads, coef_grads + intercept_grads, strict=True
    ):
        np.testing.assert_allclose(mine, expected, rtol=1e-12, atol=1e-14)


@quiet
def test_early_stopping_split_keeps_the_weights(monkeypatch):
    """The held-out rows keep their weights and score a weighted accuracy (as MLP does)."""
    split = {}

    def recording_split(*args, **kwargs):
        out = train_test_split(*args, **kwargs)
        split["rows"] = out[1]
        return out

    monkeypatch.setattr(lmu_sk.head, "train_test_split", recording_split)
    X, y = _blobs(n=300, seed=1)
    w = np.random.default_rng(1).uniform(0.0, 5.0, len(X))
    clf = DenseHeadClassifier(
        hidden_layer_sizes=(4,), early_stopping=True, max_iter=8, random_state=0
    ).fit(X, y, sample_weight=w)
    rows = split["rows"]
    weighted = clf.score(X[rows], y[rows], sample_weight=w[rows])
    assert clf.best_validation_score_ == pytest.approx(weighted, abs=1e-12)
    # a weak model, so that the weighted and unweighted accuracies differ
    assert abs(clf.score(X[rows], y[rows]) - weighted) > 1e-3


@quiet
@pytest.mark.parametrize("Model", [LMUClassifier, LMURegressor])
def test_composite_integer_weights_train_as_repeated_sequences(Model):
    """End to end: the feature scaling is weighted too, so repeating sequences and giving
    them integer weights train the same model."""
    X, y = _sequences()
    y = y if Model is LMUClassifier else X[:, -3:].sum(axis=1)
    w = _weights(len(X))
    params = dict(head="dense", dtype="float64", max_iter=6, shuffle=False, **SMALL_LMU)
    weighted = Model(batch_size=len(X), **params).fit(X, y, sample_weight=w)
    repeated = Model(batch_size=int(w.sum()), **params)
    repeated.fit(X.repeat(w, axis=0), y.repeat(w))
    np.testing.assert_allclose(weighted.feature_mean_, repeated.feature_mean_, rtol=1e-12)
    np.testing.assert_allclose(weighted.feature_scale_, repeated.feature_scale_, rtol=1e-12)
    _assert_same_weights(weighted.head_, repeated.head_, RTOL["float64"])


@quiet
def test_per_step_regression_repeats_a_sequence_weight_for_every_step():
    X, _ = _sequences(n=20, n_steps=10)
    y = np.cumsum(X, axis=1) / 4
    w = _weights(len(X))
    params = dict(head="dense", feature_output="sequence", dtype="float64", max_iter=4)
    params.update(shuffle=False, **SMALL_LMU)
    weighted = LMURegressor(batch_size=10 * len(X), **params).fit(X, y, sample_weight=w)
    repeated = LMURegressor(batch_size=10 * int(w.sum()), **params)
    repeated.fit(X.repeat(w, axis=0), y.repeat(w, axis=0))
    _assert_same_weights(weighted.head_, repeated.head_, RTOL["float64"])
    assert weighted.predict(X).shape == (20, 10)


def test_composite_ridge_head_takes_weights_as_ridge_classifier_cv():
    X, y = _sequences(n=60)
    w = np.random.default_rng(2).uniform(0.0, 3.0, len(X))
    model = LMUClassifier(
        head="ridge", alphas=ALPHAS, dtype="float64", order=6, device="cpu", kernel="linear"
    )
    model.fit(X, y, sample_weight=w)
    F = model._transform(X)  # the scaled training features
    reference = RidgeClassifierCV(alphas=ALPHAS).fit(F, y, sample_weight=w)
    assert model.alpha_ == reference.alpha_
    np.testing.assert_allclose(
        model.decision_function(X), reference.decision_function(F), atol=1e-6
    )
    # a zero weight drops the sequence from the ridge solve (the pooled thresholds aside,
    # 'final' features have no fitted state): with one penalty, as dropping it
    keep = np.ones(len(X), bool)
    keep[:7] = False
    one = dict(head="ridge", alphas=[1.0], feature_output="final", order=6, dtype="float64") | {
        "kernel": "linear"
    }
    zero = LMURegressor(device="cpu", **one).fit(X, X[:, -1], sample_weight=keep * 1.0)
    dropped = LMURegressor(device="cpu", **one).fit(X[keep], X[keep, -1])
    np.testing.assert_allclose(zero.predict(X), dropped.predict(X), rtol=1e-8, atol=1e-10)
    ridge = RidgeCV(alphas=[1.0]).fit(dropped._transform(X[keep]), X[keep, -1])
    np.testing.assert_allclose(dropped.head_.coef_, ridge.coef_, atol=1e-6)


@pytest.mark.parametrize(
    "make",
    [
        lambda: DenseHeadClassifier(max_iter=2),
        lambda: DenseHeadRegressor(max_iter=2),
        lambda: LMUClassifier(head="dense", max_iter=2, **SMALL_LMU),
        lambda: LMURegressor(head="ridge", device="cpu", order=4),
    ],
)
@pytest.mark.parametrize(
    ("weights", "match"),
    [
        (np.ones(39), "39 weights but X has 40 samples"),
        (np.ones((40, 2)), "1-D"),
        (-np.ones(40), "non-negative"),
        (np.r_[np.nan, np.ones(39)], "NaN"),
        (np.zeros(40), "at least one non-zero weight"),
    ],
)
def test_bad_sample_weight_is_a_clear_error(make, weights, match):
    X, y = _sequences(n=40)
    with pytest.raises(ValueError, match=match):
        make().fit(X, y, sample_weight=weights)


def test_dask_input_refuses_weights_with_the_fix():
    da = pytest.importorskip("dask.array")
    X, y = _sequences()
    with pytest.raises(ValueError, match=r"X\.compute\(\)"):
        LMUClassifier(head="dense", **SMALL_LMU).fit(
            da.from_array(X, chunks=20), y, sample_weight=np.ones(len(X))
        )


@pytest.mark.gpu
@quiet
def test_weights_on_the_gpu_path(monkeypatch):
    """Weights move to the device with the targets (fake CuPy; float64 as CPU to 1e-9)."""
    from fake_cupy import clear_caches, install

    X, y = _blobs()
    w = _weights(len(X)) * 1.0
    params = dict(hidden_layer_sizes=(8,), max_iter=5, random_state=0, dtype="float64")
    cpu = DenseHeadClassifier(**params).fit(X, y, sample_weight=w)
    Xs, ys = _sequences()
    ws = _weights(len(Xs)) * 1.0
    lmu = dict(head="dense", dtype="float64", max_iter=5, **SMALL_LMU)
    lmu_cpu = LMUClassifier(**lmu).fit(Xs, ys, sample_weight=ws)
    install(monkeypatch, as_gpu=True)
    try:
        gpu = DenseHeadClassifier(device="gpu", **params).fit(X, y, sample_weight=w)
        # the composite's weighted feature scaling runs on the device features
        lmu_gpu = LMUClassifier(**{**lmu, "device": "gpu"}).fit(Xs, ys, sample_weight=ws)
    finally:
        clear_caches()
    _assert_same_weights(gpu, cpu, 1e-9)
    np.testing.assert_allclose(lmu_gpu.feature_scale_, lmu_cpu.feature_scale_, rtol=1e-9)
    _assert_same_weights(lmu_gpu.head_, lmu_cpu.head_, 1e-9)


# ---------------------------------------------------------------------------- 2. schedules
def _mlp_and_head(learning_rate, n_iter_no_change=2, tol=1e9, solver="sgd", **extra):
    # tol=1e9: no epoch after the first ever improves, so the plateaus fall on fixed epochs
    # whatever the (different) initial weights of the two implementations
    params = dict(
        hidden_layer_sizes=(5,), solver=solver, learning_rate=learning_rate, tol=tol,
        learning_rate_init=0.1, n_iter_no_change=n_iter_no_change, random_state=0,
        max_iter=200, **extra,
    )  # fmt: skip
    return MLPClassifier(**params), DenseHeadClassifier(**params)


@pytest.mark.parametrize("learning_rate", ["adaptive", "invscaling", "constant"])
def test_learning_rate_trajectory_matches_mlp(learning_rate):
    X, y = _blobs(n=50)
    mlp, head = _mlp_and_head(learning_rate, power_t=0.3)
    mlp_rates, head_rates = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for _ in range(25):
            mlp.partial_fit(X, y, classes=[0, 1, 2])
            head.partial_fit(X, y, classes=[0, 1, 2])
            mlp_rates.append(mlp._optimizer.learning_rate)
            head_rates.append(head._optimizer.learning_rate)
    np.testing.assert_allclose(head_rates, mlp_rates, rtol=1e-12)
    if learning_rate == "adaptive":
        # the count exceeds n_iter_no_change=2 at epoch 4, then every 3rd epoch: / 5
        assert head_rates[:8] == pytest.approx([0.1, 0.1, 0.1, 0.02, 0.02, 0.02, 0.004, 0.004])
    if learning_rate == "invscaling":  # lr_init / (t + 1) ** power_t after every epoch
        t = 50 * np.arange(1, 26)
        np.testing.assert_allclose(head_rates, 0.1 / (t + 1) ** 0.3, rtol=1e-12)


def test_adaptive_fit_stops_where_mlp_stops():
    X, y = _blobs(n=50)
    mlp, head = _mlp_and_head("adaptive")
    mlp.fit(X, y)
    head.fit(X, y)
    # plateaus at epochs 4, 7, ..., 25 divide 0.1 by 5 eight times (2.56e-7 <= 1e-6), and
    # the one at epoch 28 stops
    assert head.n_iter_ == mlp.n_iter_ == 28
    assert head._optimizer.learning_rate == pytest.approx(mlp._optimizer.learning_rate)


@quiet
def test_schedules_apply_to_adam_and_reach_the_composite_heads():
    X, y = _blobs(n=50)
    head = DenseHeadClassifier(
        solver="adam", learning_rate="invscaling", power_t=0.25, max_iter=3, random_state=0
    ).fit(X, y)
    assert head._optimizer.learning_rate == pytest.approx(1e-3 / (3 * 50 + 1) ** 0.25)
    Xs, ys = _sequences()
    model = LMUClassifier(
        head="dense", learning_rate="invscaling", power_t=0.25, max_iter=3, **SMALL_LMU
    ).fit(Xs, ys)
    assert model.head_.power_t == 0.25
    assert model.head_._optimizer.learning_rate == pytest.approx(1e-3 / (3 * 40 + 1) ** 0.25)


# ---------------------------------------------------------------------------- 3. warm_start
def _bookkeeping(model, calls, X, y):
    """(n_iter_, t_, len(loss_curve_), optimizer kept?) after each call of ``calls``."""
    out, optimizer = [], None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for call in calls:
            if call == "cold":
                model.set_params(warm_start=False)
                model.fit(X, y)
            elif call == "fit":
                model.fit(X, y)
            else:
                model.partial_fit(X, y, classes=[0, 1, 2])
            head = getattr(model, "head_", model)
            kept = head._optimizer is optimizer
            optimizer = head._optimizer
            out.append((model.n_iter_, model.t_, len(model.loss_curve_), kept))
    return out


@pytest.mark.parametrize("tol", [1e-4, 10.0])
@pytest.mark.parametrize("composite", [False, True])
def test_warm_start_and_partial_fit_bookkeeping_match_mlp(composite, tol):
    """n_iter_ counts the last call's epochs, t_ and loss_curve_ carry over, fit starts a
    fresh optimizer and partial_fit continues it; with tol=10 no epoch improves and the
    carried no-improvement count stops a warm fit after one epoch, as in MLP."""
    calls = ["fit", "fit", "partial", "partial", "cold", "partial", "fit"]
    params = dict(max_iter=7, tol=tol, n_iter_no_change=3, warm_start=True, random_state=0)
    if composite:
        X, y = _sequences()
        model = LMUClassifier(head="dense", **{**SMALL_LMU, **params})
    else:
        X, y = _blobs(n=40)
        model = DenseHeadClassifier(hidden_layer_sizes=(8,), **params)
    mlp = MLPClassifier(hidden_layer_sizes=(8,), **params)
    expected = _bookkeeping(mlp, calls, X, y)
    assert _bookkeeping(model, calls, X, y) == expected


# ---------------------------------------------------------------------------- 4. errors
BAD_PARAMETERS = [
    ("alpha", -1.0),
    ("learning_rate_init", 0.0),
    ("learning_rate", "cyclic"),
    ("power_t", -0.5),
    ("solver", "lbfgs"),
    ("dropout", 1.0),
    ("batch_size", 0),
    ("momentum", 2.0),
    ("max_iter", 0),
    ("early_stopping", "yes"),
    ("dtype", "float16"),
    ("device", "tpu"),
    ("scale_features", "yes"),
]


@pytest.mark.parametrize(("name", "value"), BAD_PARAMETERS)
@pytest.mark.parametrize("head", ["dense", "ridge"])
@pytest.mark.parametrize("Model", [LMUClassifier, LMURegressor])
def test_parameter_errors_name_the_composite(Model, head, name, value):
    X, y = _sequences(n=20)
    model = Model(head=head, **{name: value})
    expected = rf"The '{name}' parameter of {Model.__name__} must be"
    with pytest.raises(ValueError, match=expected) as info:
        model.fit(X, y)
    assert "DenseHead" not in str(info.value)
    if head == "dense":
        with pytest.raises(ValueError, match=expected):
            model.partial_fit(X, y, **({"classes": [0, 1, 2]} if Model is LMUClassifier else {}))


# ---------------------------------------------------------------------------- 5. names
@quiet
@pytest.mark.parametrize("head", ["dense", "ridge"])
@pytest.mark.parametrize("Model", [LMUClassifier, LMURegressor])
def test_feature_names_of_dataframes(Model, head):
    pd = pytest.importorskip("pandas")
    X, y = _sequences()
    columns = [f"t{i}" for i in range(X.shape[1])]
    frame = pd.DataFrame(X, columns=columns)
    model = Model(head=head, max_iter=5, **SMALL_LMU).fit(frame, y)
    assert model.feature_names_in_.dtype == object
    np.testing.assert_array_equal(model.feature_names_in_, columns)
    assert model.n_features_in_ == X.shape[1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        expected = model.predict(frame)
    # a plain array warns once, naming the composite (not the feature transformer too)
    with pytest.warns(UserWarning, match=f"valid feature names, but {Model.__name__}") as rec:
        np.testing.assert_array_equal(model.predict(X), expected)
    assert sum("feature names" in str(w.message) for w in rec) == 1
    with pytest.raises(ValueError, match="feature names should match"):
        model.predict(frame.rename(columns={"t3": "other"}))
    # fitted on an array: no names, and a DataFrame warns
    plain = Model(head=head, max_iter=5, **SMALL_LMU).fit(X, y)
    assert not hasattr(plain, "feature_names_in_")
    with pytest.warns(UserWarning, match="fitted without feature names"):
        plain.predict(frame)
    # sequences of different lengths still fit, without names
    ragged = [X[i, : 8 + i % 4] for i in range(len(X))]
    assert not hasattr(
        Model(head=head, max_iter=5, **SMALL_LMU).fit(ragged, y), "feature_names_in_"
    )


@quiet
def test_feature_names_from_the_first_partial_fit():
    pd = pytest.importorskip("pandas")
    X, y = _sequences()
    frame = pd.DataFrame(X, columns=[f"t{i}" for i in range(X.shape[1])])
    model = LMUClassifier(head="dense", **SMALL_LMU).partial_fit(frame, y, classes=[0, 1, 2])
    assert list(model.feature_names_in_) == list(frame.columns)
    with pytest.raises(ValueError, match="feature names should match"):
        model.partial_fit(frame.add_prefix("x"), y)


# ---------------------------------------------------------------------------- 6. reliability
@pytest.mark.parametrize("Head", [DenseHeadClassifier, DenseHeadRegressor])
def test_nan_in_y_val_names_y_val(Head):
    X, y = _blobs()
    y_val = y[:10].astype(float)
    y_val[3] = np.nan
    with pytest.raises(ValueError, match="y_val"):
        Head(early_stopping=True, max_iter=3).fit(X, y, X_val=X[:10], y_val=y_val)


def test_nan_in_y_val_of_a_composite_names_y_val():
    X, _ = _sequences()
    y = X[:, -1]
    with pytest.raises(ValueError, match="y_val"):
        LMURegressor(head="dense", early_stopping=True, **SMALL_LMU).fit(
            X, y, X_val=X[:5], y_val=np.r_[np.nan, y[1:5]]
        )


@quiet
def test_a_multi_output_regressor_stops_at_mlps_epoch():
    """From the same weights the two train alike, but the loss that tol compares was
    summed over the outputs (MLPRegressor averages it): 99 epochs against 71, predictions
    0.37 apart. Tolerance: float64 rounding over the epochs (1e-9)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 6))
    y = X @ rng.standard_normal(6)
    Y = np.c_[y, y, y, y] * 0.1
    common = dict(
        hidden_layer_sizes=(7,), random_state=0, batch_size=50, shuffle=False, tol=1e-3,
        learning_rate_init=0.01,
    )  # fmt: skip
    mlp = MLPRegressor(max_iter=1, **common).fit(X, Y)
    ours = DenseHeadRegressor(max_iter=1, dtype="float64", **common).fit(X, Y)
    ours.coefs_ = [a.copy() for a in mlp.coefs_]
    ours.intercepts_ = [a.copy() for a in mlp.intercepts_]
    mlp.set_params(warm_start=True, max_iter=3000).fit(X, Y)
    ours.set_params(warm_start=True, max_iter=3000).fit(X, Y)
    assert ours.loss_curve_[-1] == pytest.approx(mlp.loss_curve_[-1], rel=1e-6)
    assert ours.n_iter_ == mlp.n_iter_
    np.testing.assert_allclose(ours.predict(X), mlp.predict(X), rtol=0, atol=1e-9)


@quiet
def test_overflowed_moments_name_the_learning_rate_not_an_absent_penalty():
    """A huge learning rate (alpha=0, no weights) was told to use "a smaller alpha or
    sample weights nearer 1"."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 6))
    y = X @ rng.standard_normal(6)
    model = DenseHeadRegressor((8,), alpha=0.0, learning_rate_init=1e6, max_iter=50)
    with pytest.raises(TrainingDivergedError, match="learning_rate_init") as raised:
        model.set_params(random_state=0).fit(X, y)
    assert "alpha" not in str(raised.value)


@quiet
@pytest.mark.parametrize("solver", ["adam", "sgd"])
def test_huge_learning_rate_warns_or_raises_naming_it(solver):
    X, y = load_digits(return_X_y=True)
    clf = DenseHeadClassifier(learning_rate_init=1e8, solver=solver, max_iter=3, random_state=0)
    try:
        with pytest.warns(UserWarning, match="exploded.*learning_rate_init"):
            clf.fit(X[:500] / 16, y[:500])
    except TrainingDivergedError as error:
        assert "learning_rate_init" in str(error)


def test_digits_train_silently_with_defaults():
    X, y = load_digits(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = DenseHeadClassifier(random_state=0).fit(X, y)
    assert clf.n_iter_ < clf.max_iter and clf.score(X, y) > 0.95


@pytest.mark.parametrize("weighted", [False, True])
def test_a_constant_feature_keeps_the_scale_one(weighted):
    """A constant column's spread is the rounding of its mean, not zero: it keeps the scale
    1 (standardized it stays ~1e-16, not the O(1) noise of that rounding scaled up), while
    a small true spread is kept."""
    rng = np.random.default_rng(0)
    F = rng.standard_normal((1800, 3))
    F[:, 1] = 0.1  # not a binary fraction: its sums round
    F[:, 2] = 5.0 + 1e-9 * rng.standard_normal(1800)
    model = LMUClassifier()
    model._fit_scaling(F, rng.uniform(0.5, 2.0, 1800) if weighted else None)
    assert model.feature_scale_[1] == 1.0
    assert np.abs(model._scale(F.copy())[:, 1]).max() < 1e-12
    np.testing.assert_allclose(model.feature_scale_[2], 1e-9, rtol=0.1)

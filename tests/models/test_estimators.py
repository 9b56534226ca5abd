"""LMUClassifier and LMURegressor: scikit-learn compliance, the three uses, bad input."""

import pickle
import warnings

import joblib
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.model_selection import GridSearchCV, RandomizedSearchCV, cross_val_score
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import check_classifiers_train, parametrize_with_checks

from lmu_sk import (
    DenseHeadClassifier,
    DenseHeadRegressor,
    LMUClassifier,
    LMUFeatures,
    LMURegressor,
)
from lmu_sk.demo import load_permuted_digits
from lmu_sk.head import TrainingDivergedError

# predict and partial_fit accept sequences of any length (the DN is causal), so a
# different number of columns than at fit time is not an error. check_classifiers_train
# asserts that too, among much else; it runs in full on the fixed-length variant below.
LENGTH_CHECKS = {
    "check_n_features_in_after_fitting": "sequences of any length can be predicted",
    "check_estimators_partial_fit_n_features": "sequences of any length can be trained on",
    "check_classifiers_train": "runs on FixedLengthLMUClassifier",
    # weighted and repeated fits agree to ~1e-6 in float32, not to the check's rtol 1e-7;
    # tests/heads/test_mlp_parity.py runs this check in float64, where it passes
    "check_sample_weight_equivalence_on_dense_data": "float32 rounding; passes in float64",
}
# order=None: as many states as steps, so the features keep all of the input.
SMALL = {
    "head": "dense",
    "hidden_layer_sizes": (16,),
    "learning_rate_init": 0.01,
    "max_iter": 100,
    "device": "cpu",
}


class _FixedLength:
    """Rejects sequences of another length than at fit time, as fixed-width models do."""

    def _apply_head(self, X, method):
        if np.shape(X)[1] != self.n_features_in_:
            raise ValueError(f"X has {np.shape(X)[1]} steps, expected {self.n_features_in_}")
        return super()._apply_head(X, method)


class FixedLengthLMUClassifier(_FixedLength, LMUClassifier):
    pass


@parametrize_with_checks(
    [LMUClassifier(**SMALL), LMURegressor(**SMALL)],
    expected_failed_checks=lambda est: LENGTH_CHECKS,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("head", ["ridge", "dense"])
def test_class_weight_takes_array_likes_as_scikit_learns_checks_give_them(head):
    """With class_weight, labels of an array-like that refuses NumPy's functions reached
    scikit-learn's class weights unconverted: a TypeError in two of check_estimator's
    checks (the heads alone passed them)."""
    from sklearn.utils.estimator_checks import (
        check_classifier_data_not_an_array,
        check_sample_weights_not_an_array,
    )

    params = {"class_weight": "balanced", "head": head, "device": "cpu"}
    if head == "dense":
        params.update(max_iter=5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check_classifier_data_not_an_array("LMUClassifier", LMUClassifier(**params))
        check_sample_weights_not_an_array("LMUClassifier", LMUClassifier(**params))


@pytest.mark.parametrize(
    ("readonly_memmap", "X_dtype"), [(False, "float64"), (True, "float64"), (True, "float32")]
)
def test_sklearn_train_check_with_fixed_lengths(readonly_memmap, X_dtype):
    check_classifiers_train(
        "FixedLengthLMUClassifier",
        FixedLengthLMUClassifier(**SMALL),
        readonly_memmap=readonly_memmap,
        X_dtype=X_dtype,
    )


@pytest.fixture(scope="module")
def digits():
    X, y = load_permuted_digits()
    return X[:600], y[:600]


def _window_task(n_samples=400, n_steps=40, seed=0):
    """Regression on a smooth random signal: a nonlinear function of its recent window."""
    rng = np.random.default_rng(seed)
    X = np.cumsum(rng.standard_normal((n_samples, n_steps)), axis=1) / np.sqrt(n_steps)
    y = 2 * X[:, -10:].mean(axis=1) + np.sin(3 * X[:, -1])
    return X, y


def test_classifier_learns_permuted_digits(digits):
    X, y = digits
    clf = LMUClassifier(
        head="dense", order=32, hidden_layer_sizes=(64,), random_state=0, device="cpu"
    )
    clf.fit(X[:450], y[:450])
    assert clf.score(X[450:], y[450:]) > 0.75
    proba = clf.predict_proba(X[450:])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-6)
    assert clf.features_.order == 32 and clf.order_ == 32
    assert len(clf.loss_curve_) == clf.n_iter_


def test_regressor_learns_a_sequence_property():
    X, y = _window_task()
    reg = LMURegressor(order=16, hidden_layer_sizes=(64,), random_state=0, device="cpu")
    assert reg.fit(X[:300], y[:300]).score(X[300:], y[300:]) > 0.8


def test_per_step_regression_predicts_every_step():
    # target: the input 3 steps ago, at every step, read from the all-state features
    rng = np.random.default_rng(0)
    X = np.cumsum(rng.standard_normal((80, 50)), axis=1) * 0.1
    y = np.concatenate([np.zeros((80, 3)), X[:, :-3]], axis=1)
    reg = LMURegressor(
        order=12,
        theta=10,
        feature_output="sequence",
        hidden_layer_sizes=(32,),
        random_state=0,
        device="cpu",
        max_iter=100,
    )
    reg.fit(X[:60], y[:60])
    prediction = reg.predict(X[60:])
    assert prediction.shape == (20, 50)
    residual = np.mean((prediction - y[60:]) ** 2) / np.mean(y[60:] ** 2)
    assert residual < 0.05
    with pytest.raises(ValueError, match="one target per step"):
        reg.fit(X, y[:, :10])
    # unequal lengths, their targets per step a list too: refused before anything reads them
    ragged = [x[: 20 + i % 7] for i, x in enumerate(X[:14])]
    for weights in (None, np.ones(14)):
        with pytest.raises(ValueError, match="needs sequences of equal length"):
            reg.fit(ragged, [np.cumsum(x) for x in ragged], sample_weight=weights)
    # at prediction the advice is the prediction's (it spoke of targets), and it holds: a
    # step's prediction does not depend on the padding after it (float64 features, the
    # products' rounding differing with the length: 1e-9)
    with pytest.raises(ValueError, match=r"pad them to one length \(with zeros, say\)"):
        reg.predict(ragged)
    with pytest.raises(ValueError, match="with NaN targets at the padded steps"):
        reg.score(ragged, [np.cumsum(x) for x in ragged])  # (scoring: the fit's advice)
    padded = reg.predict(np.array([np.r_[x, np.zeros(50 - len(x))] for x in ragged]))
    for x, prediction in zip(ragged[:7], padded[:7], strict=True):
        np.testing.assert_allclose(
            prediction[: len(x)], reg.predict(x[None])[0], rtol=1e-9, atol=1e-9
        )


def test_targets_without_outputs_are_refused_by_name():
    """y of shape (n, 0) was refused by the head with scikit-learn's "0 feature(s) ...
    required by RidgeHeadRegressor", which names neither y nor the model."""
    X = np.random.default_rng(0).standard_normal((20, 15))
    for params in ({}, {"head": "dense"}):
        with pytest.raises(ValueError, match=r"y of shape \(20, 0\) holds no outputs"):
            LMURegressor(device="cpu", **params).fit(X, np.zeros((20, 0)))


@pytest.mark.parametrize("dtype", [np.float64, np.dtype("float32")])
def test_numpy_dtypes_are_taken_as_their_names(dtype):
    """dtype=np.float64 (as the transformers take it) is dtype='float64': the same
    features, head and predictions; other types are refused at fit."""
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((40, 30)), np.arange(40) % 2
    name = np.dtype(dtype).name
    for params in ({}, {"head": "dense", "max_iter": 5, "random_state": 0}):
        ours = LMUClassifier(dtype=dtype, device="cpu", **params).fit(X, y)
        named = LMUClassifier(dtype=name, device="cpu", **params).fit(X, y)
        assert ours.features_.dtype == name
        np.testing.assert_array_equal(ours.predict_proba(X), named.predict_proba(X))
    with pytest.raises(ValueError, match="'float32' or 'float64'"):
        LMUClassifier(dtype=int).fit(X, y)


def test_string_labels_and_reproducibility(digits):
    X, y = digits
    names = np.array(
        ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
    )[y]

    def make():
        return LMUClassifier(
            head="dense",
            order=8,
            hidden_layer_sizes=(16,),
            max_iter=20,
            random_state=3,
            device="cpu",
        )

    a, b = make().fit(X, names), make().fit(X, names)
    assert set(a.classes_) == set(names)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    assert a.predict(X[:5]).dtype == names.dtype


def test_pickle_round_trip(digits):
    X, y = digits
    clf = LMUClassifier(
        head="dense", order=8, hidden_layer_sizes=(16,), max_iter=10, random_state=0, device="cpu"
    ).fit(X, y)
    clone = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(clone.predict_proba(X), clf.predict_proba(X))


def test_partial_fit_and_early_stopping(digits):
    X, y = digits
    clf = LMUClassifier(
        head="dense", order=8, hidden_layer_sizes=(16,), random_state=0, device="cpu"
    )
    for _ in range(3):
        clf.partial_fit(X, y, classes=np.arange(10))
    # as MLPClassifier: n_iter_ counts the epochs of the last call, loss_curve_ all of them
    assert clf.n_iter_ == 1 and len(clf.loss_curve_) == 3 and clf.t_ == 3 * len(X)
    es = LMUClassifier(
        head="dense",
        order=8,
        hidden_layer_sizes=(16,),
        early_stopping=True,
        random_state=0,
        device="cpu",
    ).fit(X, y)
    assert len(es.validation_scores_) == es.n_iter_
    assert es.best_validation_score_ == max(es.validation_scores_)


def test_pipeline_cross_val_and_randomized_search(digits):
    X, y = digits
    pipe = make_pipeline(
        LMUClassifier(
            head="dense",
            order=16,
            hidden_layer_sizes=(32,),
            learning_rate_init=0.01,
            max_iter=60,
            random_state=0,
            device="cpu",
        )
    )
    scores = cross_val_score(pipe, X, y, cv=3)
    assert scores.shape == (3,) and scores.mean() > 0.5
    search = RandomizedSearchCV(
        LMUClassifier(head="dense", max_iter=20, random_state=0, device="cpu"),
        {"order": [4, 8], "theta": [32.0, 64.0], "alpha": [1e-4, 1e-2]},
        n_iter=3,
        cv=2,
        n_jobs=2,
        random_state=0,
    ).fit(X, y)
    assert search.best_params_["order"] in (4, 8)


def test_grid_search_reuses_features_for_head_parameters(digits, tmp_path):
    X, y = digits
    memory = joblib.Memory(tmp_path / "cache", verbose=0)
    grid = {"order": [4, 8], "hidden_layer_sizes": [(8,), (16,)], "alpha": [1e-4, 1e-3]}
    search = GridSearchCV(
        LMUClassifier(head="dense", memory=memory, max_iter=10, random_state=0, device="cpu"),
        grid,
        cv=2,
        n_jobs=2,
    ).fit(X, y)
    assert len(search.cv_results_["params"]) == 8
    # 2 orders x 2 CV folds + 2 orders for the final refit on all data: 6 feature sets,
    # not 8 x 2 + 1 = 17.
    cached = list((tmp_path / "cache").rglob("output.pkl"))
    assert len(cached) == 2 * 2 + 1


def test_pipeline_memory_recipe_with_a_head_on_features(digits, tmp_path):
    X, y = digits
    pipe = Pipeline(
        [
            ("dn", LMUFeatures(order=16, device="cpu")),
            ("scale", StandardScaler()),
            (
                "head",
                DenseHeadClassifier(
                    hidden_layer_sizes=(32,),
                    learning_rate_init=0.01,
                    max_iter=60,
                    random_state=0,
                ),
            ),
        ],
        memory=str(tmp_path),
    )
    search = GridSearchCV(pipe, {"head__alpha": [1e-4, 1e-2]}, cv=2).fit(X, y)
    assert search.best_score_ > 0.5


@pytest.mark.parametrize("mmap_mode", ["r+", "c", "r", None])
@pytest.mark.parametrize("head", ["ridge", "dense"])
def test_a_memory_cache_of_any_mmap_mode_gives_the_same_model_every_fit(tmp_path, mmap_mode, head):
    """A joblib.Memory opened with mmap_mode='r+' handed back a writable map of the cached
    features, which the fit standardized in place: written back to the cache, they were
    read as raw features by the next fit (held-out R^2 0.877 -> 0.163, silently). The
    dense head's float32 features are standardized in place too."""
    import joblib

    rng = np.random.default_rng(0)
    X, X_test = rng.standard_normal((60, 40)), rng.standard_normal((30, 40))
    y = X[:, 10:20].sum(axis=1)
    memory = joblib.Memory(tmp_path, mmap_mode=mmap_mode, verbose=0)
    params = dict(device="cpu", head=head)
    if head == "dense":
        params.update(max_iter=3, random_state=0, hidden_layer_sizes=(8,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        plain = LMURegressor(**params).fit(X, y).predict(X_test)
    for _ in range(3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            cached = LMURegressor(memory=memory, **params).fit(X, y).predict(X_test)
        np.testing.assert_allclose(cached, plain, rtol=1e-10, atol=1e-10)


def test_features_cached_by_another_release_are_computed_again(tmp_path, monkeypatch):
    """The memory cache was keyed on the composite's parameters and the data only: after
    an upgrade that changed a default of the features, a fit took the old release's
    features from the cache, silently. lmu_sk's version is part of the key."""
    import joblib

    from lmu_sk import estimators, pooled

    rng = np.random.default_rng(1)
    X, y = rng.standard_normal((30, 40)), np.arange(30) % 2
    memory = joblib.Memory(tmp_path, verbose=0)
    LMUClassifier(memory=memory, device="cpu").fit(X, y)
    # the next release: the default windows' finest half only
    windows = pooled.default_thetas
    monkeypatch.setattr(pooled, "default_thetas", lambda n_steps: windows(n_steps)[:8])
    monkeypatch.setattr(estimators, "__version__", "9.9.9")
    cached = LMUClassifier(memory=memory, device="cpu").fit(X, y)
    fresh = LMUClassifier(device="cpu").fit(X, y)
    assert len(cached.features_.thetas_) == len(fresh.features_.thetas_) == 8
    np.testing.assert_array_equal(cached.predict_proba(X), fresh.predict_proba(X))


@pytest.mark.parametrize(
    ("composite", "head_class"),
    [(LMUClassifier, DenseHeadClassifier), (LMURegressor, DenseHeadRegressor)],
)
def test_every_head_parameter_reaches_the_head(digits, composite, head_class):
    X, y = digits
    own = {"order", "theta", "discretizer", "feature_output", "scale_features", "memory"}
    own |= {"head", "alphas", "channels_first", "n_jobs", "channels", "channel_sums", "kernel"}
    own |= {"class_weight"} if composite is LMUClassifier else {"clip_margin"}
    head_params = set(head_class().get_params())
    assert set(composite().get_params()) - own == head_params
    changed = dict(
        hidden_layer_sizes=(7,),
        alpha=0.01,
        batch_size=32,
        learning_rate="plateau",
        learning_rate_init=2e-3,
        max_iter=2,
        shuffle=False,
        random_state=5,
        tol=1e-3,
        n_iter_no_change=4,
        beta_1=0.8,
        beta_2=0.99,
        epsilon=1e-7,
        dropout=0.1,
        input_dropout=0.2,
        dtype="float64",
        device="cpu",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = composite(order=4, head="dense", **changed).fit(X[:100], y[:100])
    head = model.head_.get_params()
    assert {name: head[name] for name in changed} == changed


def test_head_alone_on_precomputed_features():
    X, y = _window_task()
    F = LMUFeatures(order=16).fit_transform(X)
    head = DenseHeadRegressor(hidden_layer_sizes=(64,), random_state=0, max_iter=300)
    assert head.fit(F[:300], y[:300]).score(F[300:], y[300:]) > 0.8


def test_bad_input(digits):
    X, y = digits
    clf = LMUClassifier(head="dense", order=4, hidden_layer_sizes=(8,), max_iter=5, device="cpu")
    with pytest.raises(NotFittedError):
        clf.predict(X)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        clf.fit(X, y[:-1])
    with pytest.raises(ValueError, match="at least two classes"):
        clf.fit(X, np.zeros(len(X)))
    with pytest.raises(ValueError, match="NaN"):
        LMURegressor(order=4, device="cpu").fit(X, np.where(y == 3, np.nan, y))
    with pytest.raises(ValueError, match="Unknown feature_output 'sequence'"):
        LMUClassifier(feature_output="sequence").fit(X, y)
    fitted = LMUClassifier(
        head="dense", order=4, hidden_layer_sizes=(8,), max_iter=5, device="cpu"
    )
    fitted.fit(X[:, :, None].repeat(2, axis=2), y)
    with pytest.raises(ValueError, match="channel"):
        fitted.predict(X)


def test_divergence_is_an_error_not_nan_predictions(digits):
    X, y = digits
    reg = LMURegressor(
        head="dense", order=8, solver="sgd", learning_rate_init=10.0, device="cpu", random_state=0
    )
    with pytest.warns(UserWarning, match="loss exploded"):
        with pytest.raises(TrainingDivergedError, match="Lower learning_rate_init"):
            reg.fit(X, y.astype(float))
    assert not hasattr(reg, "head_")


def test_explicit_validation_data_drives_early_stopping(digits):
    X, y = digits
    clf = LMUClassifier(
        head="dense",
        order=16,
        hidden_layer_sizes=(32,),
        early_stopping=True,
        max_iter=30,
        random_state=0,
        device="cpu",
    )
    clf.fit(X[:400], y[:400], X_val=X[400:], y_val=y[400:])
    # the validation scores are accuracies on exactly the given held-out set
    assert clf.best_validation_score_ == max(clf.validation_scores_)
    assert clf.best_validation_score_ == pytest.approx(clf.score(X[400:], y[400:]))
    with pytest.raises(ValueError, match="early_stopping=True"):
        LMUClassifier(head="dense", order=4, device="cpu").fit(X, y, X_val=X[:5], y_val=y[:5])
    with pytest.raises(ValueError, match="both X_val and y_val"):
        clf.fit(X[:400], y[:400], X_val=X[400:])


def test_gpu_device_without_a_gpu(digits, monkeypatch):
    X, y = digits
    from lmu_sk import _device

    monkeypatch.setattr(_device, "_import_cupy_with_gpu", lambda: (None, "no CUDA device"))
    with pytest.raises(ValueError, match=r'pip install "\.\[gpu-cuda12\]"'):
        LMUClassifier(head="dense", order=4, device="gpu").fit(X, y)
    # a model trained where a GPU was asked for keeps NumPy weights and predicts anywhere
    clf = LMUClassifier(
        head="dense", order=8, hidden_layer_sizes=(16,), max_iter=5, random_state=0, device="cpu"
    ).fit(X, y)
    expected = clf.predict_proba(X)
    clf.head_.device, clf.features_.device = "gpu", "auto"
    loaded = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(loaded.predict_proba(X), expected)


def test_multilabel_targets_with_the_ridge_head_name_the_dense_head():
    """The ridge head takes one label per sample: a multilabel y met a bare scikit-learn
    message from inside the head, after the features were computed; now the estimator
    names itself and the head that takes them, before any feature."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 20))
    Y = rng.integers(0, 2, (30, 3))
    with pytest.raises(ValueError, match=r"LMUClassifier with the ridge head.*head='dense'"):
        LMUClassifier().fit(X, Y)
    assert LMUClassifier(head="dense", max_iter=5).fit(X, Y).predict(X).shape == (30, 3)


def test_alphas_and_a_list_of_thetas_with_one_window_are_named():
    """``alphas="1e-3,1e3"`` met NumPy's "could not convert string to float"; a list of
    windows with the dense head (whose features have one) was "theta must be a positive
    number", which it is not about."""
    X = np.random.default_rng(0).standard_normal((20, 12))
    y = np.arange(20) % 2
    for model in (LMUClassifier(alphas="1e-3,1e3"), LMUClassifier(alphas=["a"])):
        with pytest.raises(ValueError, match="alphas must be a non-empty sequence"):
            model.fit(X, y)
    with pytest.raises(ValueError, match=r"theta=\[5, 10\] \(several windows\) is for pooled"):
        LMUClassifier(theta=[5, 10], head="dense", max_iter=2).fit(X, y)
    LMUClassifier(theta=[5, 10]).fit(X, y)  # pooled features: several windows


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_a_warm_fit_with_other_features_is_refused_and_leaves_the_model_as_it_was():
    """warm_start=True after a change of the features' size (order, windows, channels)
    met the inner head's 'X has 8 features, but DenseHeadClassifier is expecting 16', and
    left new features before the old network (predict then failed too). The message names
    the parameters and warm_start=False; the model predicts as before the refused fit."""
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((40, 30)), np.arange(40) % 2
    model = LMUClassifier(head="dense", order=8, warm_start=True, max_iter=3, random_state=0)
    before = model.fit(X, y).predict_proba(X)
    for change, data in (({"order": 4}, X), ({}, np.stack([X, X], axis=-1))):
        with pytest.raises(
            ValueError, match=r"takes 8 features; the features now number .*warm_start=False"
        ):
            model.set_params(**change).fit(data, y)
        assert model.order_ == 8
        np.testing.assert_array_equal(model.predict_proba(X), before)
        model.set_params(order=8)
    model.set_params(order=4, warm_start=False).fit(X, y)  # the advice works
    assert model.order_ == 4


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_a_constant_channel_is_harmless_to_the_float32_dense_head():
    """A constant channel's float32 states differ between identical sequences by their
    rounding; scaled by that spread, the float64 features of prediction put them tens of
    standard deviations away (accuracy 0.86 -> 0.20 in the report). Their spread is
    measured against the rounding: constant columns, scale 1, standardized values ~0."""
    X, y = load_permuted_digits()
    X, y = X[:200].astype(float), y[:200]
    with_constant = np.stack([X, np.full_like(X, 3.0)], axis=-1)
    model = LMUClassifier(head="dense", max_iter=5, random_state=0).fit(with_constant, y)
    order = model.order_
    assert model.features_.dtype == "float32"
    np.testing.assert_array_equal(model.feature_scale_[order:], 1.0)
    standardized = model._transform(with_constant[:20])[:, order:]
    assert np.abs(standardized).max() < 1e-3
    # the first channel's columns keep their spread
    assert (model.feature_scale_[:order] != 1.0).all()


def test_a_refused_refit_leaves_the_fitted_model_as_it_was():
    """A refit refused (one class; sequences of another length and channel count) left the
    model unfitted, or with the new input's n_features_in_ before the old features: it
    keeps the model it had, as a refused warm fit does and as the dense head does."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 20))
    y = np.arange(30) % 2
    clf = LMUClassifier(device="cpu").fit(X, y)
    before = clf.predict_proba(X)
    with pytest.raises(ValueError, match="only one class"):
        clf.fit(rng.standard_normal((12, 35, 2)), np.zeros(12))
    assert clf.n_features_in_ == 20
    np.testing.assert_array_equal(clf.predict_proba(X), before)


@pytest.mark.parametrize("head", ["ridge", "dense"])
def test_the_composites_check_hidden_layer_sizes_whatever_the_head(head):
    """The docstring says head parameters are validated whatever the head, naming the
    estimator: [0] passed silently with the ridge head, and the dense head's message named
    no estimator."""
    X = np.random.default_rng(0).standard_normal((20, 30))
    y = np.arange(20) % 2
    with pytest.raises(InvalidParameterError, match="'hidden_layer_sizes' parameter of LMUClass"):
        LMUClassifier(head=head, order=4, hidden_layer_sizes=[0]).fit(X, y)


def test_the_composites_partial_fit_refuses_early_stopping_before_any_feature():
    """The refusal came from the head, after the features were fitted: the composite was
    left half fitted (features_ set, no head_)."""
    X = np.random.default_rng(0).standard_normal((20, 30))
    model = LMUClassifier(head="dense", order=4, early_stopping=True)
    with pytest.raises(ValueError, match="partial_fit does not support early_stopping=True"):
        model.partial_fit(X, np.arange(20) % 2, classes=[0, 1])
    assert not hasattr(model, "features_") and not hasattr(model, "head_")


def test_float32_features_are_standardized_in_place_as_a_copy_would_be():
    """The dense head's float32 features are standardized in place (a second array of
    their size was the peak of a dask fit that gathered them): the values of the block by
    block float64 computation, and a read-only array is left as it was."""
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((50, 30)), np.arange(50) % 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = LMUClassifier(head="dense", max_iter=2, order=8, random_state=0).fit(X, y)
    F = model.features_.transform(X).astype(np.float32)
    expected = ((F.astype(np.float64) - model.feature_mean_) / model.feature_scale_).astype(
        np.float32
    )
    writable = F.copy()
    scaled = model._scale(writable)
    assert scaled is writable
    np.testing.assert_array_equal(scaled, expected)
    read_only = F.copy()
    read_only.setflags(write=False)
    scaled = model._scale(read_only)
    assert scaled is not read_only
    np.testing.assert_array_equal(scaled, expected)
    np.testing.assert_array_equal(read_only, F)

"""Targets and weights as users pass them: regression targets that are not numbers, early
stopping on held-out targets that cannot score, weights passed where ``X_val`` goes, a
``feature_output`` changed between ``partial_fit`` calls, ``class_weight`` keys that are
not labels."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from lmu_sk import DenseHeadRegressor, LMUClassifier, LMURegressor
from lmu_sk.ridge import RidgeHeadRegressor


def _data(n: int = 40, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 20))
    return X, X[:, -5:].sum(axis=1)


@pytest.mark.parametrize("head", ["ridge", "dense"])
def test_a_none_among_regression_targets_is_refused(head):
    """A None in y (a list or an object array) became NaN: the ridge head fitted a model
    predicting NaN everywhere, the dense head blamed its learning rate."""
    X, y = _data()
    with pytest.raises(ValueError, match="y contains NaN"):
        LMURegressor(order=4, head=head).fit(X, [*y[:-1], None])
    with pytest.raises(ValueError, match="y contains NaN"):
        LMURegressor(order=4, head=head).fit(X, np.array([*y[:-1], None], dtype=object))


@pytest.mark.parametrize(
    "head", [RidgeHeadRegressor(), DenseHeadRegressor(max_iter=2)], ids=["ridge", "dense"]
)
def test_the_heads_refuse_text_and_none_targets(head):
    X, y = _data()
    import pandas as pd

    for text in (
        y.astype(str),
        np.array(y.astype(str), dtype=object),  # scikit-learn's validation parsed these
        pd.Series(y.astype(str), dtype="string"),
        pd.DataFrame({"a": y.astype(str)}),
    ):
        with pytest.raises(ValueError, match="y must hold numbers"):
            head.fit(X, text)
    head.fit(X, pd.Series(y, dtype="Float64"))  # pandas' numbers without NA: numbers
    with pytest.raises(ValueError, match="y contains NaN"):
        head.fit(X, np.array([*y[:-1], None], dtype=object))


def test_early_stopping_refuses_held_out_targets_that_cannot_score():
    """R^2 of one held-out row of positive weight, or of constant held-out targets, is
    0.0 whatever the fit: training stopped after n_iter_no_change epochs, silently."""
    X, y = _data()
    weights = np.zeros(40)
    weights[:5] = 1.0
    model = LMURegressor(order=4, head="dense", early_stopping=True, random_state=0)
    with pytest.raises(ValueError, match=r"R\^2.*1 held-out row"):
        model.fit(X, y, sample_weight=weights)
    with pytest.raises(ValueError, match="targets all equal"):
        model.fit(X, y, X_val=X[:3], y_val=np.ones(3))
    model.fit(X, y)  # a split of 4 rows whose targets vary scores
    assert len(model.validation_scores_) == model.n_iter_


@pytest.mark.parametrize("make", [LMUClassifier, LMURegressor])
def test_weights_passed_as_fits_third_argument_are_refused_before_the_features(make, monkeypatch):
    """fit(X, y, w), as scikit-learn's estimators take weights: the third argument is
    X_val; refused naming the fix before any feature is computed (it was a message about
    X_val's shape after them)."""
    import lmu_sk.estimators as estimators

    X, y = _data()
    target = y if make is LMURegressor else (y > 0).astype(int)

    def no_features(*args, **kwargs):
        raise AssertionError("features computed")

    monkeypatch.setattr(estimators, "_features_of", no_features)
    with pytest.raises(TypeError, match="sample_weight=w"):
        make(order=4).fit(X, target, np.ones(40))


@pytest.mark.parametrize("make", [LMUClassifier, LMURegressor])
def test_an_iterator_or_a_dict_as_x_is_refused_naming_the_fix(make):
    """A generator met scikit-learn's "Expected sequence or array-like" in ``fit`` (the
    rows were counted before the input's checks), while ``predict`` named the fix."""
    X, y = _data()
    target = y if make is LMURegressor else (y > 0).astype(int)
    with pytest.raises(TypeError, match=r"iterator \(generator\).*list\(X\)"):
        make(order=4).fit((row for row in X), target)
    with pytest.raises(TypeError, match="X is of type dict"):
        make(order=4).fit(dict(enumerate(X)), target)
    extra = {"classes": [0, 1]} if make is LMUClassifier else {}
    with pytest.raises(TypeError, match=r"iterator \(generator\).*list\(X\)"):
        make(order=4, head="dense").partial_fit((row for row in X), target, **extra)


def test_partial_fit_refuses_a_feature_output_set_since_the_first_call():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((20, 15))
    Y = np.cumsum(X, axis=1) * 0.3
    model = LMURegressor(order=4, feature_output="sequence", head="dense", random_state=0)
    model.partial_fit(X, Y)
    model.set_params(feature_output="final")
    with pytest.raises(ValueError, match="set_params\\(feature_output='sequence'\\)"):
        model.partial_fit(X, Y)
    model.set_params(feature_output="sequence")
    model.partial_fit(X, Y)  # as fitted: goes on


@pytest.mark.parametrize("make", [LMUClassifier, LMURegressor])
def test_partial_fit_goes_on_over_pooled_features(make):
    """The dense head over pooled features: the second partial_fit (and a partial_fit
    after fit) raised AttributeError, the pooled transformer having no 'output'."""
    X, y = _data(40)
    target = y if make is LMURegressor else (y > 0).astype(int)
    extra = {"classes": [0, 1]} if make is LMUClassifier else {}
    params = dict(head="dense", feature_output="pooled", max_iter=3, random_state=0)
    model = make(**params).partial_fit(X[:20], target[:20], **extra)
    first = model.head_.coefs_[0].copy()
    model.partial_fit(X[20:], target[20:])
    assert not np.array_equal(model.head_.coefs_[0], first)  # trained on
    model.set_params(feature_output="final")
    with pytest.raises(ValueError, match="set_params\\(feature_output='pooled'\\)"):
        model.partial_fit(X, target)
    fitted = make(**params).fit(X, target)
    before = fitted.head_.coefs_[0].copy()
    fitted.partial_fit(X, target)
    assert not np.array_equal(fitted.head_.coefs_[0], before)
    assert fitted.predict(X).shape == target.shape


def test_class_weight_keys_that_are_not_labels_are_named():
    """scikit-learn's message named the classes left out of the dict, not its keys that
    are no class; a dict covering every class may hold others (a fold without one)."""
    X, _ = _data(30)
    y = np.array(list("abc") * 10)
    with pytest.raises(ValueError, match=r"not classes of y: \['zz'\]; the classes are"):
        LMUClassifier(order=4, class_weight={"a": 1, "zz": 5}).fit(X, y)
    with pytest.raises(ValueError, match=r"not classes of y: \[0, 1\]"):
        LMUClassifier(order=4, class_weight={0: 1, 1: 5}).fit(X, y)
    LMUClassifier(order=4, class_weight={"a": 1, "b": 1, "c": 2, "d": 3}).fit(X, y)


def test_partial_fit_weighs_a_batch_that_lacks_a_weighted_class():
    """A dict's keys are the model's classes: a later batch without class 'c' was refused
    (scikit-learn's check against the batch's labels)."""
    X, _ = _data(30)
    y = np.array(list("abc") * 10)
    model = LMUClassifier(order=4, head="dense", class_weight={"c": 5.0}, random_state=0)
    model.partial_fit(X, y, classes=["a", "b", "c"])
    model.partial_fit(X[y != "c"], y[y != "c"])
    assert model.classes_.tolist() == ["a", "b", "c"]


def test_a_first_partial_fit_checks_class_weight_against_its_classes():
    """A dict naming a class of ``classes`` absent from the first batch was refused (its
    keys were checked against the batch's labels), where later batches took it."""
    X, _ = _data(40)
    y = np.array([0, 1] * 20)
    model = LMUClassifier(order=4, head="dense", hidden_layer_sizes=(5,), class_weight={2: 5.0})
    model.partial_fit(X, y, classes=[0, 1, 2])
    assert model.classes_.tolist() == [0, 1, 2]


@pytest.mark.parametrize("head", ["ridge", "dense"])
def test_a_warm_refit_checks_class_weight_against_its_own_labels(head):
    """With warm_start=True a refit's dict was checked against the previous fit's classes:
    a key naming a class of the new labels refused, a stale one accepted (the ridge head
    is fitted anew; a dense head continues only on the classes y holds)."""
    X, signal = _data(40)
    y = (signal > 0).astype(int)
    params = dict(order=4, warm_start=True, head=head, hidden_layer_sizes=(5,), max_iter=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = LMUClassifier(**params).fit(X, y)
        if head == "ridge":  # new labels: a dense head refuses to continue on them
            model.set_params(class_weight={"pos": 3.0}).fit(X, np.where(y, "pos", "neg"))
            assert model.classes_.tolist() == ["neg", "pos"]
        model = LMUClassifier(**params).fit(X, np.arange(40) % 3)
        with pytest.raises(ValueError, match="not classes of y"):
            model.set_params(class_weight={0: 1.0, 2: 5.0}).fit(X, y)


def test_a_dict_class_weight_of_several_labels_per_sample_is_refused_by_name():
    """The dense head takes an indicator matrix; a dict of class weights there was a raw
    'unhashable type' TypeError ('balanced' weighs every column's labels)."""
    X, signal = _data(40)
    Y = np.c_[signal > 0, X[:, 0] > 0].astype(int)
    params = dict(order=4, head="dense", hidden_layer_sizes=(5,), max_iter=3)
    with pytest.raises(ValueError, match="several labels per sample"):
        LMUClassifier(**params, class_weight={0: 1.0, 1: 3.0}).fit(X, Y)
    with pytest.raises(ValueError, match="several labels per sample"):  # (n, T, 1)
        LMUClassifier(class_weight={0: 1.0, 1: 3.0}).fit(X, Y[:, :, None])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        LMUClassifier(**params, class_weight="balanced").fit(X, Y)


@pytest.mark.parametrize(
    "changed", [{"order": 6}, {"theta": 3.0}, {"order": 6, "theta": 3.0}, {"dtype": "float64"}]
)
def test_partial_fit_refuses_feature_parameters_changed_since_its_first_call(changed):
    """partial_fit continues the fitted features: a changed order or theta was accepted
    silently, the model keeping the old features while get_params showed the new ones."""
    X, signal = _data(40)
    y = (signal > 0).astype(int)
    model = LMUClassifier(order=4, head="dense", hidden_layer_sizes=(5,), max_iter=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.partial_fit(X, y, classes=[0, 1]).partial_fit(X, y)
        before = model.coefs_[0].copy()
        with pytest.raises(ValueError, match="set after the first partial_fit"):
            model.set_params(**changed).partial_fit(X, y)
        np.testing.assert_array_equal(model.coefs_[0], before)  # nothing trained
        model.set_params(order=4, theta=None, dtype="float32").partial_fit(X, y)
        model.set_params(**changed).fit(X, y)  # fit starts over with them


@pytest.mark.parametrize(
    "same", [{"dtype": np.float32}, {"dtype": np.dtype("float32")}, {"channels_first": False}]
)
def test_partial_fit_takes_values_that_make_the_same_features(same):
    """Compared as the transformer takes them: np.float32 is 'float32', and
    channels_first=False is the default's reading (None)."""
    X, signal = _data(40)
    y = (signal > 0).astype(int)
    model = LMUClassifier(order=4, head="dense", hidden_layer_sizes=(5,), max_iter=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.partial_fit(X, y, classes=[0, 1]).set_params(**same).partial_fit(X, y)


def test_partial_fit_compares_with_the_features_fitted_last_on_dask_too():
    """The features fitted on dask were not compared (a changed order accepted), and a fit
    on dask after one in memory left the earlier parameters to compare with."""
    da = pytest.importorskip("dask.array")
    X, signal = _data(40)
    y = (signal > 0).astype(int)
    Xd = da.from_array(X, chunks=(20, X.shape[1]))
    params = dict(order=4, head="dense", hidden_layer_sizes=(5,), max_iter=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = LMUClassifier(**params).partial_fit(Xd, y, classes=[0, 1])
        with pytest.raises(ValueError, match="set after the first partial_fit"):
            model.set_params(order=6).partial_fit(Xd, y)
        model = LMUClassifier(**params).fit(X, y).set_params(order=6).fit(Xd, y)
        model.partial_fit(X, y)  # order 6, as fitted last
        with pytest.raises(ValueError, match="order=4 set after"):
            model.set_params(order=4).partial_fit(X, y)


def test_partial_fit_of_per_step_features_with_the_auto_head():
    """With 'sequence' features head='auto' is the dense head, which partial_fit
    continues (it was refused as if 'auto' were the ridge head)."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(20, 10)), rng.normal(size=(20, 10))
    reg = LMURegressor(order=4, feature_output="sequence", hidden_layer_sizes=(5,), max_iter=2)
    reg.fit(X, y).partial_fit(X, y)
    assert reg.head_kind_ == "dense" and reg.n_iter_ == 1


def test_dask_inputs_get_the_same_checks():
    """A feature_output changed between partial_fit calls is refused for dask input too;
    dask rows of unknown count keep their own message (not dask's len() error)."""
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(1)
    X = rng.standard_normal((20, 15))
    Xd = da.from_array(X, chunks=10)
    model = LMURegressor(order=4, feature_output="sequence", head="dense", random_state=0)
    model.partial_fit(Xd, np.cumsum(X, axis=1))
    model.set_params(feature_output="final")
    with pytest.raises(ValueError, match="was set after the first partial_fit"):
        model.partial_fit(Xd, np.cumsum(X, axis=1))
    with pytest.raises(ValueError, match="compute_chunk_sizes"):
        LMUClassifier(order=4).fit(Xd[Xd[:, 0] > -100], np.arange(20) % 2)


def test_parameters_of_the_head_that_does_not_train_are_warned_of():
    """alpha (the dense head's L2) under the ridge head changed nothing, silently: a grid
    search over it compared one model with itself; so did kernel under the dense head."""
    X, _ = _data(30)
    y = np.arange(30) % 2
    with pytest.warns(UserWarning, match=r"ridge head .* does not read alpha, hidden_layer"):
        LMUClassifier(order=4, alpha=1.0, hidden_layer_sizes=(5,)).fit(X, y)
    with pytest.warns(UserWarning, match=r"dense head .* does not read kernel"):
        LMUClassifier(order=4, head="dense", kernel="rbf", max_iter=2).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)
        LMUClassifier(order=4).fit(X, y)  # defaults: nothing to say
        LMUClassifier(order=4, head="dense", alpha=1.0, max_iter=2).fit(X, y)
        LMURegressor(order=4, alphas=[1.0, 10.0]).fit(X, X[:, -1])


def test_parameters_equal_to_their_defaults_in_another_type_are_not_warned_of():
    """alpha=np.float64(1e-4), max_iter=np.int64(200) (a grid search's or a table's
    values), hidden_layer_sizes=[100] (a JSON or YAML file's) and dropout=0 are the
    defaults: the fit warned that they were set, to no effect."""
    X, _ = _data(30)
    y = np.arange(30) % 2
    same = dict(
        alpha=np.float64(1e-4),
        max_iter=np.int64(200),
        hidden_layer_sizes=[100],
        dropout=0,
        tol=np.float64(1e-4),
        early_stopping=np.False_,
        learning_rate=np.str_("constant"),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        LMUClassifier(order=4, **same).fit(X, y)
        LMUClassifier(order=4, hidden_layer_sizes=np.array([100])).fit(X, y)
        LMUClassifier(order=4, hidden_layer_sizes=100).fit(X, y)
    for changed in (dict(alpha=np.float64(1e-3)), dict(hidden_layer_sizes=[100, 10])):
        with pytest.warns(UserWarning, match="does not read"):
            LMUClassifier(order=4, **changed).fit(X, y)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_sequences_of_weight_0_are_as_if_left_out(kernel):
    """Junk sequences of weight 0 still chose the pooled features' thresholds: the
    probabilities moved by 0.03. Now only the heads' solvers see them (as rows of weight
    0): Platt's calibration is solved iteratively to ~1e-7, the linear model's
    leave-one-out through a decomposition of the rows, zero rows included (~1e-9)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 30))
    y = (X[:, -5:].sum(axis=1) > 0).astype(int)
    junk = 5.0 * rng.standard_normal((10, 30))
    both, labels = np.r_[X, junk], np.r_[y, rng.integers(0, 2, 10)]
    weights = np.r_[np.ones(40), np.zeros(10)]
    X_test = rng.standard_normal((20, 30))
    alone = LMUClassifier(kernel=kernel).fit(X, y)
    weighed = LMUClassifier(kernel=kernel).fit(both, labels, sample_weight=weights)
    for a, b in zip(alone.features_.biases_, weighed.features_.biases_, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(
        weighed.predict_proba(X_test), alone.predict_proba(X_test), rtol=0, atol=1e-6
    )

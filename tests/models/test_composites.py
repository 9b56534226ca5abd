"""The composites hold their parts: head parameters derived from the head, fitted values read
through ``head_``, warm starts across head kinds, scaling that cannot underflow, and the
default model on dask arrays."""

import inspect
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from lmu_sk import (
    DenseHeadClassifier,
    LMUClassifier,
    LMUFeatures,
    LMUPooledFeatures,
    LMURegressor,
)
from lmu_sk.estimators import _HEAD_PARAMS


def labelled(n=60, n_steps=30, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, n_steps))
    y = (X[:, -5:].sum(axis=1) > 0).astype(int)
    return X, y


@pytest.mark.parametrize("cls", [LMUClassifier, LMURegressor])
def test_every_head_parameter_is_a_composite_parameter(cls):
    # one list: the composites expose exactly the dense head's parameters (but device)
    head = set(inspect.signature(DenseHeadClassifier).parameters) - {"device"}
    assert set(_HEAD_PARAMS) == head
    assert head <= set(inspect.signature(cls).parameters)


def test_fitted_values_are_read_through_the_head():
    X, y = labelled()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = LMUClassifier(head="dense", max_iter=3, random_state=0).fit(X, y)
    assert clf.coefs_ is clf.head_.coefs_
    assert clf.n_iter_ == clf.head_.n_iter_ == 3
    assert "coefs_" not in vars(clf)  # held, not copied
    assert not hasattr(LMUClassifier(), "coefs_")
    ridge = LMUClassifier().fit(X, y)
    assert ridge.alpha_ == ridge.head_.alpha_
    assert not hasattr(ridge, "loss_curve_")  # the ridge head has none
    np.testing.assert_array_equal(ridge.classes_, [0, 1])


def test_warm_start_after_a_ridge_head_trains_a_fresh_dense_head():
    X, y = labelled()
    clf = LMUClassifier(warm_start=True, random_state=0).fit(X, y)
    assert clf.head_kind_ == "ridge"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.set_params(head="dense", max_iter=4).fit(X, y)
    assert clf.head_kind_ == "dense" and clf.n_iter_ == 4
    assert isinstance(clf.head_, DenseHeadClassifier)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_tiny_inputs_are_scaled_in_float64(dtype):
    # float32 standard deviations of features of 1e-30 inputs underflow to zero
    X, y = labelled()
    small = LMUClassifier(dtype=dtype).fit(X.astype(dtype) * 1e-30, y)
    plain = LMUClassifier(dtype=dtype).fit(X.astype(dtype), y)
    assert np.isfinite(small.decision_function(X * 1e-30)).all()
    agree = np.mean(small.predict(X * 1e-30) == plain.predict(X))
    assert agree >= 0.95


da = pytest.importorskip("dask.array")


@pytest.mark.parametrize("channels_first", [False, True])
def test_pooled_features_of_a_dask_array_are_lazy_and_equal_numpy(channels_first):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((90, 2, 40) if channels_first else (90, 40, 2))
    Xd = da.from_array(X, chunks=(30, -1, -1))
    params = dict(order=4, thetas=[5, 40], channels_first=channels_first)
    lazy = LMUPooledFeatures(**params).fit(Xd)
    F = lazy.transform(Xd)
    assert isinstance(F, da.Array)
    expected = LMUPooledFeatures(**params).fit(X)
    for a, b in zip(lazy.biases_, expected.biases_, strict=True):
        np.testing.assert_array_equal(a, b)
    # the same kernels on the same rows: equal up to the last bit
    np.testing.assert_array_equal(F.compute(), expected.transform(X))


def test_the_default_classifier_fits_and_predicts_on_dask_as_in_memory():
    X, y = labelled(150, 40)
    Xd = da.from_array(X, chunks=50)
    lazy = LMUClassifier().fit(Xd, y)
    eager = LMUClassifier().fit(X, y)
    assert lazy.head_kind_ == eager.head_kind_ == "ridge"
    for method in ("predict", "decision_function"):
        got = getattr(lazy, method)(Xd)
        assert isinstance(got, da.Array)  # lazy
        # float64 features and one head: the same numbers up to the sum order of BLAS
        np.testing.assert_allclose(got.compute(), getattr(eager, method)(X), atol=1e-12)


@pytest.mark.parametrize("head", ["ridge", "dense"])
def test_class_weight_equals_the_same_sample_weights(head):
    X, y = labelled(80)
    y[:10] = 2  # a rare class
    params = dict(head=head, max_iter=5, random_state=0, order=4)
    weights = {0: 1.0, 1: 2.0, 2: 5.0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        by_class = LMUClassifier(class_weight=weights, **params).fit(X, y)
        by_sample = LMUClassifier(**params).fit(X, y, sample_weight=np.vectorize(weights.get)(y))
        plain = LMUClassifier(**params).fit(X, y)
    np.testing.assert_allclose(
        by_class.decision_function(X) if head == "ridge" else by_class.predict_proba(X),
        by_sample.decision_function(X) if head == "ridge" else by_sample.predict_proba(X),
        rtol=1e-6,
        atol=1e-8,
    )
    assert not np.allclose(by_class.predict_proba(X), plain.predict_proba(X))


def test_balanced_class_weight_is_refused_by_partial_fit():
    X, y = labelled()
    with pytest.raises(ValueError, match="class_weight='balanced' is not supported by partial"):
        LMUClassifier(class_weight="balanced", head="dense").partial_fit(X, y, classes=[0, 1])
    with pytest.raises(ValueError, match="class_weight"):
        LMUClassifier(class_weight="bogus").fit(X, y)


def test_one_training_sequence_per_class_fits():
    # as in Fungi: every class has a single training series; the ridge head picks its
    # penalty without leave-one-out (see RidgeHeadClassifier)
    rng = np.random.default_rng(3)
    X = rng.standard_normal((12, 40))
    y = np.arange(12)
    clf = LMUClassifier().fit(X, y)
    np.testing.assert_array_equal(clf.predict(X), y)
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


@pytest.mark.parametrize("output", ["final", "mean", "sequence"])
def test_the_default_order_comes_from_the_one_features_fit(output, monkeypatch):
    """``order=None`` is resolved by the features' own fit: no second fit learns shapes."""
    fits = []
    real_fit = LMUFeatures._fit
    monkeypatch.setattr(
        LMUFeatures, "_fit", lambda self, U, y=None: fits.append(1) or real_fit(self, U, y)
    )
    X = np.random.default_rng(0).standard_normal((20, 300, 3))
    y = np.random.default_rng(1).standard_normal((20, 300) if output == "sequence" else 20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = LMURegressor(
            head="dense", feature_output=output, max_iter=1, channels_first=False
        ).fit(X, y)
    assert len(fits) == 1
    # min(n_steps, 128, 2048 // n_channels)
    assert model.order_ == model.features_.order_ == 128 and model.features_.order is None
    assert model.stream(2).update(X[:2, :5]).predict().shape[0] == 2


def test_the_default_classifier_offers_decision_function_before_fit():
    """head='auto' was answered as the dense head before fit, so a meta-estimator that asks
    an unfitted model (StackingClassifier's stack_method='decision_function') refused the
    default model, which fits the ridge head up to 100 000 sequences."""
    from sklearn.ensemble import StackingClassifier
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 20)).cumsum(axis=1)
    y = (X[:, -1] > 0).astype(int)
    assert hasattr(LMUClassifier(), "decision_function")
    assert not hasattr(LMUClassifier(head="dense"), "decision_function")
    stack = StackingClassifier(
        [("lmu", LMUClassifier(order=4))],
        final_estimator=LogisticRegression(),
        stack_method="decision_function",
        cv=3,
    ).fit(X, y)
    assert stack.predict_proba(X).shape == (60, 2)


def test_the_regressor_says_it_takes_several_outputs():
    """LMURegressor fits y of shape (n_samples, n_outputs), which its tags denied (so
    scikit-learn's checks of several outputs never ran on it)."""
    from sklearn.utils import get_tags

    assert get_tags(LMURegressor()).target_tags.multi_output
    assert not get_tags(LMUClassifier()).target_tags.multi_output


def test_a_refusal_of_memory_advises_what_an_estimator_s_user_can_do(monkeypatch):
    """The estimators have no max_memory: their features' refusals said 'raise
    max_memory', a parameter the user could not set."""
    from lmu_sk import _memory
    from lmu_sk._memory import MemoryBudgetError

    monkeypatch.setattr(_memory, "available_memory", lambda: 3 * 1024**2)
    X = np.random.default_rng(0).normal(size=(20, 30))
    with pytest.raises(MemoryBudgetError, match="free memory") as refused:
        LMUClassifier(order=2000).fit(X, np.arange(20) % 2)
    assert "raise max_memory" not in str(refused.value)

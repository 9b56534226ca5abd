"""A row's prediction does not depend on the rows predicted with it.

The estimators predict in float64 whatever their training dtype (features and head), so
one row predicted alone and inside a batch agree to float64 rounding: 1e-12 absolute on
probabilities and on targets of unit scale, where float32 prediction differed by ~1e-7.
"""

import tracemalloc
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from lmu_sk import DenseHeadClassifier, LMUClassifier, LMURegressor
from lmu_sk.engine import run as engine_run

ATOL = 1e-12


def _one_by_one(function, X):
    return np.concatenate([function(X[i : i + 1]) for i in range(len(X))])


def _data(seed=0, n=240, n_steps=40):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, n_steps))
    return X, (X[:, -5:].sum(axis=1) > 0).astype(int)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("head", ["dense", "ridge"])
@pytest.mark.parametrize("estimator", [LMUClassifier, LMURegressor])
def test_predictions_are_batch_invariant(estimator, head, dtype):
    X, y = _data()
    model = estimator(head=head, hidden_layer_sizes=(32,), max_iter=5, dtype=dtype, device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
    methods = [model.predict]
    if hasattr(model, "predict_proba"):
        methods.append(model.predict_proba)
    for method in methods:
        full = method(X)
        # every 6th row alone (40 rows; one row's call costs as much as the batch's)
        np.testing.assert_allclose(full[::6], _one_by_one(method, X[::6]), rtol=0, atol=ATOL)
        np.testing.assert_allclose(full[37:90], method(X[37:90]), rtol=0, atol=ATOL)


@pytest.mark.parametrize("output", ["final", "mean", "max"])
def test_predictions_of_other_outputs_are_batch_invariant(output):
    X, y = _data(1, n=150, n_steps=57)
    model = LMUClassifier(head="dense", feature_output=output, order=12, max_iter=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
    full = model.predict_proba(X)
    np.testing.assert_allclose(full, _one_by_one(model.predict_proba, X), rtol=0, atol=ATOL)


def test_sequences_of_different_lengths_predict_as_alone():
    rng = np.random.default_rng(2)
    sequences = [rng.standard_normal(n) for n in rng.integers(5, 200, 80)]
    y = np.array([s[-3:].sum() > 0 for s in sequences], dtype=int)
    model = LMUClassifier(head="dense", order=16, max_iter=3, dtype="float32")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(sequences, y)
    full = model.predict_proba(sequences)
    alone = np.concatenate([model.predict_proba([s]) for s in sequences])
    np.testing.assert_allclose(full, alone, rtol=0, atol=ATOL)


def test_dense_head_predicts_float32_features_in_float64():
    rng = np.random.default_rng(3)
    F = rng.standard_normal((300, 50)).astype(np.float32)
    y = (F[:, 0] > 0).astype(int)
    head = DenseHeadClassifier(hidden_layer_sizes=(64,), max_iter=3, dtype="float32")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        head.fit(F, y)
    full = head.predict_proba(F)
    np.testing.assert_allclose(full, _one_by_one(head.predict_proba, F), rtol=0, atol=ATOL)


@pytest.mark.parametrize("ragged", [False, True], ids=["equal", "ragged"])
@pytest.mark.parametrize("estimator", [LMUClassifier, LMURegressor])
def test_predictions_chunk_by_chunk_hold_a_chunk_of_features_not_all(
    estimator, ragged, monkeypatch
):
    """The default models predict from the pooled features of a few samples at a time
    (a buffer of ``REDUCED_CHUNK_BYTES``, here seven samples' worth): the predictions are
    the head's on the features of all the samples, to float64 rounding, and the features of
    all the samples are never allocated."""
    X, y = _data(3, n=200, n_steps=50)
    X_test = _data(4, n=200, n_steps=50)[0]
    if ragged:
        X_test = [x[: 20 + (13 * i) % 31] for i, x in enumerate(X_test)]
    model = estimator().fit(X, y)
    rows = model._transform(X_test)  # the scaled features of all the samples, at once
    row_bytes = 8 * rows.shape[1]
    monkeypatch.setattr(engine_run, "REDUCED_CHUNK_BYTES", 7 * row_bytes)
    methods = ["predict", "predict_proba"] if estimator is LMUClassifier else ["predict"]
    for method in methods:
        tracemalloc.start()
        try:
            predicted = getattr(model, method)(X_test)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 0.25 * len(X_test) * row_bytes, (peak, len(X_test) * row_bytes)
        expected = getattr(model.head_, method)(rows)
        if method == "predict" and estimator is LMUClassifier:
            np.testing.assert_array_equal(predicted, expected)
        else:  # the ridge's standardization folded into its coefficients: float64 rounding
            np.testing.assert_allclose(predicted, expected, rtol=0, atol=1e-9)

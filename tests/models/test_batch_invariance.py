"""A row's prediction does not depend on the rows predicted with it.

The estimators predict in float64 whatever their training dtype (features and head), so
one row predicted alone and inside a batch agree to float64 rounding: 1e-12 absolute on
probabilities and on targets of unit scale, where float32 prediction differed by ~1e-7.
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from lmu_sk import DenseHeadClassifier, LMUClassifier, LMURegressor

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

"""A user's script over the public API, type-checked by pyright in basic mode (``.ci/run``).

Each line is what a user writes: fit, predict, transform and stream. The script also runs
(``tests/test_typing.py`` runs it on small random data) so that it stays true to the API.
Run it with ``python tests/typing/user_script.py``; check it with
``pyright tests/typing/user_script.py``.
"""

from __future__ import annotations

import numpy as np
from sklearn.pipeline import make_pipeline

from lmu_sk import (
    DenseHeadClassifier,
    DenseHeadRegressor,
    LMUClassifier,
    LMUFeatures,
    LMUPooledFeatures,
    LMURegressor,
    dn_states,
)
from lmu_sk.ridge import RidgeHeadClassifier, RidgeHeadRegressor


def main(seed: int = 0) -> dict[str, float]:
    """Fit, predict, transform and stream on small random data; returns a few scores."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((40, 16, 2))
    y = (X[:, :, 0].mean(axis=1) > 0).astype(int)
    target = X[:, :, 1].mean(axis=1)

    # the default classifier: ridge on pooled DN features
    clf = LMUClassifier(order=4).fit(X, y)
    labels: np.ndarray = clf.predict(X)
    proba: np.ndarray = clf.predict_proba(X)
    accuracy: float = clf.score(X, y)
    assert labels.shape == (40,) and proba.shape == (40, 2)

    # fitted attributes, typed: an editor shows no false error on ordinary code
    first_class = clf.classes_[0]
    penalty: float = clf.alpha_ + 1.0
    n_features: int = clf.n_features_in_ + 0
    order: int = clf.order_ + 0
    scale: np.ndarray = clf.feature_scale_ * 2.0
    kind: str = clf.head_kind_.upper()
    assert first_class in (0, 1) and penalty > 1.0 and n_features == 16 and order >= 1
    assert scale.shape == clf.feature_mean_.shape and kind == "RIDGE"
    head = clf.head_
    assert isinstance(head, RidgeHeadClassifier)  # head='auto' on 40 series: the ridge
    ridge_head_penalty: float = head.alpha_ * 1.0
    assert ridge_head_penalty == clf.alpha_

    # the model streamed, two sequences at a time, in two chunks
    stream = clf.stream(2)
    stream.update(X[:2, :8])
    early: np.ndarray = stream.predict()
    stream.update(X[:2, 8:])
    late: np.ndarray = stream.predict_proba()
    assert early.shape == (2,) and late.shape == (2, 2)

    # a regressor with the dense head
    reg = LMURegressor(order=4, head="dense", hidden_layer_sizes=(8,), max_iter=5)
    reg.fit(X, target)
    predicted: np.ndarray = reg.predict(X)
    epochs: int = reg.n_iter_ + 0
    last_loss: float = reg.loss_curve_[-1] * 1.0
    first_layer: np.ndarray = reg.coefs_[0]
    assert epochs >= 1 and last_loss > 0 and first_layer.shape[1] == 8
    r2: float = reg.score(X, target)
    assert predicted.shape == (40,)

    # the features alone, then the heads on them
    final: np.ndarray = LMUFeatures(order=4).fit_transform(X)
    pooled_features = LMUPooledFeatures(order=4).fit(X)
    pooled: np.ndarray = pooled_features.transform(X)
    windows: int = len(pooled_features.thetas_) + pooled_features.n_features_out_ * 0
    assert windows == 16
    features = LMUFeatures(order=4, output="mean").fit(X)
    feature_stream = features.stream(2)
    feature_stream.update(X[:2])
    streamed: np.ndarray = feature_stream.transform()
    assert np.allclose(streamed, features.transform(X[:2]), atol=1e-6)
    states = np.asarray(dn_states(X[:2], order=4, theta=16.0))
    assert states.shape == (2, 8)

    dense = DenseHeadClassifier(hidden_layer_sizes=(8,), max_iter=5, random_state=0)
    dense.fit(final, y)
    dense_proba: np.ndarray = dense.predict_proba(final)
    dense_reg = DenseHeadRegressor(hidden_layer_sizes=(8,), max_iter=5, random_state=0)
    dense_reg_predicted: np.ndarray = dense_reg.fit(final, target).predict(final)
    ridge = RidgeHeadClassifier().fit(pooled, y)
    ridge_proba: np.ndarray = ridge.predict_proba(pooled)
    ridge_scores: np.ndarray = ridge.decision_function(pooled)
    ridge_label = ridge.classes_[0]
    assert ridge_label == 0 and ridge.alpha_ + 1.0 > 1.0
    ridge_reg = RidgeHeadRegressor().fit(pooled, target)
    ridge_reg_predicted: np.ndarray = ridge_reg.predict(pooled)
    assert dense_proba.shape == ridge_proba.shape == (40, 2)
    assert ridge_scores.shape[0] == dense_reg_predicted.shape[0] == ridge_reg_predicted.shape[0]

    # in a scikit-learn pipeline
    pipeline = make_pipeline(LMUFeatures(order=4), RidgeHeadClassifier()).fit(X, y)
    pipeline_labels: np.ndarray = pipeline.predict(X)
    assert pipeline_labels.shape == (40,)

    return {
        "accuracy": accuracy,
        "r2": r2,
        "ridge": float(ridge.score(pooled, y)),
        "dense": float(dense.score(final, y)),
    }


if __name__ == "__main__":
    print(main())

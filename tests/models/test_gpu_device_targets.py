"""CuPy inputs the estimators read on the host: targets of ``partial_fit``, held-out targets,
an early classifier's labels, a dense regressor's targets, sequences given as a list of
CuPy arrays. NumPy cannot convert a CuPy array (``np.asarray`` raises ``TypeError``); on
the strict stand-in, whose arrays are no NumPy arrays either, these calls raised so."""

from __future__ import annotations

import numpy as np
import pytest

from lmu_sk import DenseHeadRegressor, LMUClassifier, LMUEarlyClassifier, LMUFeatures, LMURegressor
from lmu_sk._device import to_numpy

pytestmark = pytest.mark.gpu


def data(n=40, n_steps=20, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, n_steps, 2))
    labels = (X[:, :5, 0].sum(1) > 0).astype(int) + (X[:, -3:, 1].sum(1) > 1)
    return X, labels, X[:, -4:, 0].sum(1)


DENSE = dict(head="dense", order=6, theta=10.0, hidden_layer_sizes=(8,), random_state=0)


@pytest.mark.parametrize("estimator", [LMUClassifier, LMURegressor])
def test_partial_fit_takes_device_targets(fake_gpu, estimator):
    X, labels, values = data()
    y = labels if estimator is LMUClassifier else values
    kwargs = {"classes": np.unique(labels)} if estimator is LMUClassifier else {}
    gpu, host = estimator(**DENSE, device="gpu"), estimator(**DENSE, device="gpu")
    gpu.partial_fit(fake_gpu.asarray(X[:20]), fake_gpu.asarray(y[:20]), **kwargs)
    gpu.partial_fit(fake_gpu.asarray(X[20:]), fake_gpu.asarray(y[20:]))
    host.partial_fit(X[:20], y[:20], **kwargs).partial_fit(X[20:], y[20:])
    np.testing.assert_allclose(gpu.predict(X), host.predict(X), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("estimator", [LMUClassifier, LMURegressor])
def test_held_out_device_targets(fake_gpu, estimator):
    X, labels, values = data()
    y = labels if estimator is LMUClassifier else values
    options = dict(DENSE, max_iter=30, early_stopping=True)
    d = fake_gpu.asarray
    gpu = estimator(**options, device="gpu").fit(d(X), d(y), X_val=d(X[:10]), y_val=d(y[:10]))
    host = estimator(**options, device="gpu").fit(X, y, X_val=X[:10], y_val=y[:10])
    assert gpu.n_iter_ == host.n_iter_
    assert gpu.validation_scores_ == host.validation_scores_


def test_early_classifier_takes_device_labels(fake_gpu):
    X, labels, _ = data()
    model = LMUClassifier(head="ridge", order=6, theta=10.0, device="gpu")
    gpu = LMUEarlyClassifier(model, checkpoints=4).fit(
        fake_gpu.asarray(X), fake_gpu.asarray(labels)
    )
    host = LMUEarlyClassifier(model, checkpoints=4).fit(X, labels)
    np.testing.assert_array_equal(gpu.predict(X), host.predict(X))


def test_dense_regressor_takes_device_targets(fake_gpu):
    rng = np.random.default_rng(1)
    F, y = rng.standard_normal((40, 12)), rng.standard_normal(40)
    options = dict(hidden_layer_sizes=(8,), max_iter=20, random_state=0, device="gpu")
    gpu = DenseHeadRegressor(**options).fit(fake_gpu.asarray(F), fake_gpu.asarray(y))
    host = DenseHeadRegressor(**options).fit(F, y)
    np.testing.assert_allclose(to_numpy(gpu.predict(F)), host.predict(F), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("output", ["final", "sequence", "mean"])
def test_features_of_a_list_of_device_sequences(fake_gpu, output):
    X, _, _ = data(n=8)
    sequences = [x[: 10 + i % 7] for i, x in enumerate(X)]
    model = LMUFeatures(order=6, output=output, device="gpu")
    got = model.fit([fake_gpu.asarray(s) for s in sequences]).transform(
        [fake_gpu.asarray(s) for s in sequences]
    )
    expected = (
        LMUFeatures(order=6, output=output, device="cpu").fit(sequences).transform(sequences)
    )
    if not isinstance(expected, list):
        got, expected = [got], [expected]
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_allclose(to_numpy(a), b, rtol=1e-6, atol=1e-9)


def test_partial_fit_takes_device_classes_with_a_class_weight_dict(fake_gpu):
    """``classes`` as a CuPy array (``cupy.unique(y)``) is read on the host, as ``y``."""
    X, labels, _ = data()
    d = fake_gpu.asarray
    gpu = LMUClassifier(**DENSE, device="gpu", class_weight={0: 2.0})
    gpu.partial_fit(d(X), d(labels), classes=d(np.unique(labels)))
    assert gpu.classes_.tolist() == np.unique(labels).tolist()


# A hunt on the strict stand-in: CuPy targets, classes and weights that reached NumPy or
# scikit-learn's conversions (real CuPy refuses them as the stand-in does).
def test_scores_take_device_targets_and_weights(fake_gpu):
    X, labels, values = data()
    d = fake_gpu.asarray
    weights = np.linspace(0.5, 2.0, len(labels))
    small = dict(order=6, theta=10.0, device="gpu")
    classifier = LMUClassifier(**small).fit(X, labels)
    regressor = LMURegressor(**small).fit(X, values)
    early = LMUEarlyClassifier(LMUClassifier(**small), checkpoints=4).fit(X, labels)
    for model, y in ((classifier, labels), (regressor, values), (early, labels)):
        assert model.score(X, d(y)) == model.score(X, y)
        assert model.score(X, d(y), d(weights)) == model.score(X, y, weights)
    assert early.score_early(X, d(labels)) == early.score_early(X, labels)


def test_dense_head_partial_fit_takes_device_targets_and_classes(fake_gpu):
    from lmu_sk import DenseHeadClassifier

    rng = np.random.default_rng(2)
    F, y = rng.standard_normal((40, 12)), np.arange(40) % 3
    options = dict(hidden_layer_sizes=(8,), random_state=0, device="gpu")
    host = DenseHeadClassifier(**options).partial_fit(F, y, classes=[0, 1, 2])
    for targets, classes in ((fake_gpu.asarray(y), [0, 1, 2]), (y, fake_gpu.asarray([0, 1, 2]))):
        gpu = DenseHeadClassifier(**options).partial_fit(F, targets, classes=classes)
        np.testing.assert_array_equal(to_numpy(gpu.predict(F)), to_numpy(host.predict(F)))


def test_dense_head_trained_on_a_gpu_continues_on_the_cpu(fake_gpu):
    from lmu_sk import DenseHeadClassifier

    rng = np.random.default_rng(3)
    F, y = rng.standard_normal((40, 12)), np.arange(40) % 3
    head = DenseHeadClassifier(hidden_layer_sizes=(8,), max_iter=5, device="gpu").fit(F, y)
    head.set_params(device="cpu").partial_fit(F, y)  # the optimizer's moments to the host
    assert isinstance(head.predict(F), np.ndarray)


def test_channel_screening_takes_device_targets(fake_gpu):
    from lmu_sk import LMUPooledFeatures

    rng = np.random.default_rng(4)
    X, y = rng.standard_normal((40, 30, 20)), np.arange(40) % 2
    gpu = LMUPooledFeatures(order=6, device="gpu").fit(X, fake_gpu.asarray(y))
    host = LMUPooledFeatures(order=6, device="gpu").fit(X, y)
    np.testing.assert_array_equal(gpu.channels_, host.channels_)

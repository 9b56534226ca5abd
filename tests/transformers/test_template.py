"""The template both transformers share (``lmu_sk._transformer.SequenceTransformer``): ``X``
validated once on every path, the shared parameters checked by scikit-learn's parameter
validation at fit and at transform."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import InvalidParameterError

from lmu_sk import LMUClassifier, LMUFeatures, LMUPooledFeatures, LMURegressor, _transformer

TRANSFORMERS = [
    lambda: LMUFeatures(order=3),
    lambda: LMUPooledFeatures(order=2, thetas=[3, 12], n_biases=2),
]
IDS = ["LMUFeatures", "LMUPooledFeatures"]


@pytest.fixture
def validations(monkeypatch):
    """The number of times ``X`` is validated (``as_sequences``) since the last reset."""
    calls = []
    real = _transformer.as_sequences

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(_transformer, "as_sequences", counting)
    return calls


@pytest.mark.parametrize("make", TRANSFORMERS, ids=IDS)
def test_x_is_validated_once_on_every_path(make, validations):
    X = np.random.default_rng(0).standard_normal((6, 24, 2))
    make().fit(X)
    assert len(validations) == 1
    validations.clear()
    make().fit_transform(X)
    assert len(validations) == 1
    fitted = make().fit(X)
    validations.clear()
    fitted.transform(X)
    assert len(validations) == 1


@pytest.mark.parametrize("feature_output", ["pooled", "final"])
def test_a_composite_validates_its_features_input_once(feature_output, validations):
    X = np.random.default_rng(1).standard_normal((12, 24))
    y = np.arange(12) % 2
    params = {"order": 3} if feature_output == "final" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        LMUClassifier(feature_output=feature_output, **params).fit(X, y)
        assert len(validations) == 1
        validations.clear()
        LMURegressor(feature_output=feature_output, **params).fit(X, X[:, -1])
        assert len(validations) == 1


@pytest.mark.parametrize("make", TRANSFORMERS, ids=IDS)
@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("discretizer", "rk4"),
        ("device", "tpu"),
        ("return_gpu_arrays", "yes"),
        ("channels_first", 1.5),
        ("verbose", -1),
    ],
)
def test_shared_parameters_are_checked_at_fit_and_at_transform(make, name, value):
    X = np.random.default_rng(2).standard_normal((4, 20))
    match = f"The '{name}' parameter of {type(make()).__name__} must be"
    with pytest.raises(InvalidParameterError, match=match):
        make().set_params(**{name: value}).fit(X)
    fitted = make().fit(X)
    with pytest.raises(InvalidParameterError, match=match):
        fitted.set_params(**{name: value}).transform(X)


def test_every_constrained_parameter_is_a_parameter():
    for make in TRANSFORMERS:
        transformer = make()
        assert set(transformer._parameter_constraints) <= set(transformer.get_params())

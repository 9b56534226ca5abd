"""What a fitted transformer keeps from its fit, and what it says of input it refuses."""

import warnings

import numpy as np
import pandas as pd
import pytest

from lmu_sk import LMUClassifier, LMUFeatures, LMUPooledFeatures
from lmu_sk.datasets import nrmse


def test_transform_uses_the_fitted_discretizer():
    """A discretizer set after fit changed transform (0.016 off the fitted matrices) and
    the stream; the fitted one is kept as discretizer_, as order_ and theta_ are."""
    X = np.random.default_rng(0).standard_normal((5, 100))
    features = LMUFeatures(order=4).fit(X)
    expected = features.transform(X)
    features.set_params(discretizer="euler")
    assert features.discretizer_ == "zoh"
    np.testing.assert_array_equal(features.transform(X), expected)
    stream = features.stream(5)
    stream.update(X)
    np.testing.assert_allclose(stream.transform(), expected, rtol=1e-5, atol=1e-6)


def test_a_fitted_channel_count_settles_the_layout_of_short_prefixes():
    """Prefixes of one step of two channels (fewer steps than channels) were warned of as
    possibly aeon's layout at every transform or predict, though the fitted channel count
    settles it; an input whose last axis does not hold those channels is still warned of."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((6, 50, 2))
    features = LMUFeatures(order=4).fit(X)
    model = LMUClassifier(order=4).fit(X, np.arange(6) % 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        features.transform(X[:, :1])
        model.predict(X[:, :1])
    with pytest.warns(UserWarning, match="channels_first=True"):
        with pytest.raises(ValueError):
            features.transform(rng.standard_normal((6, 2, 50)))


def test_a_dataframe_of_another_length_is_named_as_such():
    """Fitted on a DataFrame (columns: time steps), another length got scikit-learn's
    message of missing feature names; the message says to pass an array."""
    X = np.random.default_rng(0).standard_normal((6, 50))
    frame = pd.DataFrame(X, columns=[f"t{i}" for i in range(50)])
    features = LMUFeatures(order=3).fit(frame)
    with pytest.raises(ValueError, match=r"columns are time steps; X has 30.*to_numpy"):
        features.transform(frame.iloc[:, :30])
    model = LMUClassifier(order=3).fit(frame, np.arange(6) % 2)
    with pytest.raises(ValueError, match=r"LMUClassifier was fitted on a DataFrame whose 50"):
        model.predict(frame.iloc[:, :30])


def test_pooled_features_take_a_whole_number_order_as_lmu_features_do():
    X = np.random.default_rng(0).standard_normal((4, 60))
    np.testing.assert_array_equal(
        LMUPooledFeatures(order=2.0).fit_transform(X), LMUPooledFeatures(order=2).fit_transform(X)
    )
    with pytest.raises(TypeError, match="order must be an integer"):
        LMUPooledFeatures(order=2.5).fit(X)


@pytest.mark.parametrize("Transformer", [LMUFeatures, LMUPooledFeatures])
def test_the_dtype_tag_names_the_dtype_asked_for(Transformer):
    """With dtype='float32' the features are float32 whatever the input: the tag said
    float64 input stays float64, and check_transformer_preserve_dtypes failed."""
    assert Transformer(dtype="float32").__sklearn_tags__().transformer_tags.preserves_dtype == [
        "float32"
    ]
    assert Transformer().__sklearn_tags__().transformer_tags.preserves_dtype == [
        "float64",
        "float32",
    ]


def test_a_sequence_that_is_none_is_named():
    with pytest.raises(ValueError, match=r"X\[1\] is None:"):
        LMUFeatures(order=3).fit([np.ones(10), None])


def test_ragged_nrmse_arguments_are_named():
    with pytest.raises(ValueError, match="y_true must be an array of one shape"):
        nrmse([[1.0], [1.0, 2.0]], [[1.0], [1.0, 2.0]])

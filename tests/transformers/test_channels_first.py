"""``channels_first``: aeon/sktime layout in, the same features and predictions out."""

import warnings

import numpy as np
import pytest

from lmu_sk import LMUClassifier, LMUFeatures, LMUPooledFeatures, LMURegressor


@pytest.fixture
def aeon_layout():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 3, 20))  # (n_cases, n_channels, n_timepoints)
    y = (X[:, 0, -4:].sum(axis=1) > 0).astype(int)
    return X, y


@pytest.mark.parametrize("transformer", [LMUFeatures(order=5), LMUPooledFeatures(order=3)])
def test_channels_first_equals_swapping_the_axes(transformer, aeon_layout):
    X, _ = aeon_layout
    first = transformer.set_params(channels_first=True).fit(X).transform(X)
    last = transformer.set_params(channels_first=False).fit(np.swapaxes(X, 1, 2))
    np.testing.assert_array_equal(first, last.transform(np.swapaxes(X, 1, 2)))
    assert transformer.n_channels_ == 3


def test_channels_first_list_of_different_lengths(aeon_layout):
    X, _ = aeon_layout
    sequences = [X[i, :, : 5 + i % 10] for i in range(len(X))]  # (n_channels, n_steps_i)
    features = LMUFeatures(order=4, channels_first=True).fit(sequences)
    expected = (
        LMUFeatures(order=4).fit([s.T for s in sequences]).transform([s.T for s in sequences])
    )
    np.testing.assert_array_equal(features.transform(sequences), expected)


def test_fewer_steps_than_channels_warns_and_names_the_parameter(aeon_layout):
    X, _ = aeon_layout  # read as 3 steps of 20 channels
    with pytest.warns(UserWarning, match="channels_first=True"):
        LMUFeatures(order=2).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LMUFeatures(order=2, channels_first=False).fit(X)
        LMUFeatures(order=2, channels_first=True).fit(X)
        LMUFeatures(order=2).fit(np.swapaxes(X, 1, 2))  # more steps than channels


@pytest.mark.parametrize("head", ["dense", "ridge"])
def test_estimators_read_the_aeon_layout(head, aeon_layout):
    X, y = aeon_layout
    params = dict(head=head, order=4, max_iter=20, random_state=0, device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = LMUClassifier(**params, channels_first=True).fit(X, y)
        last = LMUClassifier(**params).fit(np.swapaxes(X, 1, 2), y)
    assert first.features_.n_channels_ == 3
    np.testing.assert_allclose(
        first.decision_function(X) if head == "ridge" else first.predict_proba(X),
        last.decision_function(np.swapaxes(X, 1, 2))
        if head == "ridge"
        else last.predict_proba(np.swapaxes(X, 1, 2)),
        rtol=1e-6,
        atol=1e-9,
    )


def test_per_step_regression_in_the_aeon_layout(aeon_layout):
    X, _ = aeon_layout
    y = X[:, 0, :]  # one target per step
    model = LMURegressor(
        head="dense", feature_output="sequence", order=4, max_iter=5, channels_first=True
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
    assert model.predict(X).shape == (30, 20)


def test_channels_first_must_be_a_bool_or_none(aeon_layout):
    X, _ = aeon_layout
    with pytest.raises(TypeError, match="'channels_first' parameter of LMUFeatures must be"):
        LMUFeatures(channels_first="yes").fit(X)


def test_stream_reads_chunks_in_the_aeon_layout(aeon_layout):
    X, y = aeon_layout
    model = LMUClassifier(head="dense", order=4, max_iter=5, channels_first=True, dtype="float64")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
    stream = model.stream(n_streams=len(X))
    stream.update(X[:, :, :7])  # a chunk, (n_streams, n_channels, n_steps)
    for t in range(7, 20):
        stream.update(X[:, :, t])  # one step, (n_streams, n_channels)
    np.testing.assert_allclose(stream.predict_proba(), model.predict_proba(X), atol=1e-10)

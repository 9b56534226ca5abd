"""``channels_first``: aeon/sktime layout in, the same features and predictions out."""

import warnings

import numpy as np
import pytest

from lmu_sk import (
    LMUClassifier,
    LMUEarlyClassifier,
    LMUFeatures,
    LMUPooledFeatures,
    LMURegressor,
)


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


@pytest.mark.parametrize("Model", [LMUClassifier, LMURegressor])
def test_the_composites_warn_once_in_their_own_name(aeon_layout, Model):
    X, y = aeon_layout  # read as 3 steps of 20 channels
    target = y if Model is LMUClassifier else y.astype(float)
    model = Model(order=2)
    for call in (lambda: model.fit(X, target), lambda: model.predict(X)):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            call()
        layout = [w for w in seen if "channels_first=True" in str(w.message)]
        assert len(layout) == 1
        assert str(layout[0].message).startswith(f"{Model.__name__} reads X of shape")


@pytest.mark.parametrize("n_channels", [1, 3])
def test_aeons_unequal_lengths_without_the_flag_name_it(n_channels):
    """aeon's list of (n_channels, n_timepoints) arrays read channels last: every sequence
    has n_channels steps and channel counts that differ, which NumPy cannot stack; the
    error names the layout and the parameter."""
    rng = np.random.default_rng(0)
    sequences = [rng.standard_normal((n_channels, n)) for n in (5, 9, 3, 7)]
    for model in (LMUFeatures(order=2), LMUClassifier()):
        with pytest.raises(ValueError, match=r"channels_first=True") as error:
            model.fit(sequences, [0, 1, 0, 1])
        assert f"({n_channels}, 5), ({n_channels}, 9)" in str(error.value)
    with pytest.raises(ValueError, match="do not fit together"):
        LMUFeatures(order=2).fit([np.zeros((4, 2)), np.zeros((4, 2, 1))])


def test_fewer_steps_than_channels_warns_and_names_the_parameter(aeon_layout):
    X, _ = aeon_layout  # read as 3 steps of 20 channels
    with pytest.warns(UserWarning, match="channels_first=True"):
        LMUFeatures(order=2).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LMUFeatures(order=2, channels_first=False).fit(X)
        LMUFeatures(order=2, channels_first=True).fit(X)
        LMUFeatures(order=2).fit(np.swapaxes(X, 1, 2))  # more steps than channels


@pytest.mark.parametrize("container", [list, tuple])
def test_a_list_of_aeon_sequences_read_channels_last_warns(aeon_layout, container):
    """A list (or tuple) of aeon's (n_channels, n_timepoints) sequences was read as
    3 steps of 20 channels without the warning the same data as one array gets."""
    X, y = aeon_layout
    with pytest.warns(UserWarning, match=r"first of shape \(3, 20\).*channels_first=True"):
        LMUFeatures(order=2).fit(container(X))
    with pytest.warns(UserWarning, match="channels_first=True"):
        LMUClassifier(order=2, device="cpu").fit(container(X), y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LMUFeatures(order=2, channels_first=True).fit(container(X))
        LMUFeatures(order=2, channels_first=False).fit(container(X))
        LMUFeatures(order=2).fit([x.T for x in X])  # more steps than channels
        # sequences of unequal lengths, one of them longer than wide
        LMUFeatures(order=2).fit([X[0].T[:5], X[1].T[:2]])
        # sktime's nested DataFrame: stacked in a known layout, nothing to warn of
        pd = pytest.importorskip("pandas")
        nested = pd.DataFrame([[pd.Series(c) for c in x[:, :3]] for x in X])  # 3 steps
        LMUFeatures(order=2).fit(nested)


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


# ---------------------------------------------------------------------------- sktime's data
def _nested(X: np.ndarray, lengths=None):
    """sktime's nested_univ layout of (n_cases, n_channels, n_timepoints) data: a column
    per channel, a pandas Series per cell (cut to ``lengths[i]`` steps)."""
    pd = pytest.importorskip("pandas")
    n, c, t = X.shape
    lengths = [t] * n if lengths is None else lengths
    return pd.DataFrame(
        {f"dim_{k}": [pd.Series(X[i, k, : lengths[i]]) for i in range(n)] for k in range(c)}
    )


@pytest.mark.parametrize("channels_first", [None, True, False])
def test_sktime_nested_dataframes_are_read(aeon_layout, channels_first):
    """A nested DataFrame (sktime's nested_univ) gave "setting an array element with a
    sequence"; it is read as the collection it holds: the features and the model equal
    those of the same data as a (n_cases, n_channels, n_timepoints) array, whatever
    channels_first says (the columns are the channels)."""
    X, y = aeon_layout
    nested = _nested(X)
    expected = LMUPooledFeatures(order=3, channels_first=True).fit(X).transform(X)
    pooled = LMUPooledFeatures(order=3, channels_first=channels_first).fit(nested)
    np.testing.assert_array_equal(pooled.transform(nested), expected)
    assert not hasattr(pooled, "feature_names_in_")  # the columns name channels
    final = LMUFeatures(order=4, channels_first=channels_first).fit_transform(nested)
    np.testing.assert_array_equal(final, LMUFeatures(order=4).fit_transform(X.swapaxes(1, 2)))
    clf = LMUClassifier(channels_first=channels_first, device="cpu").fit(nested, y)
    reference = LMUClassifier(channels_first=True, device="cpu").fit(X, y)
    np.testing.assert_array_equal(clf.predict_proba(nested), reference.predict_proba(X))


def test_sktime_nested_dataframes_of_different_lengths(aeon_layout):
    X, y = aeon_layout
    lengths = [10 + i % 10 for i in range(len(X))]
    nested = _nested(X, lengths)
    as_list = [X[i, :, : lengths[i]] for i in range(len(X))]
    reg = LMURegressor(channels_first=True, device="cpu").fit(nested, y.astype(float))
    expected = LMURegressor(channels_first=True, device="cpu").fit(as_list, y.astype(float))
    np.testing.assert_array_equal(reg.predict(nested), expected.predict(as_list))
    bad = nested.copy()
    bad.iloc[0, 1] = bad.iloc[0, 1][:3]
    with pytest.raises(ValueError, match="Row 0 of the nested DataFrame has channels of"):
        LMUFeatures(order=4).fit(bad)


def test_nested_dataframes_channels_in_another_order_are_refused(aeon_layout):
    """A nested DataFrame's columns name its channels: a model fitted on them read the
    same columns in another order as the fitted order, silently (accuracy 1.0 -> 0.53 in
    a user's report). The names are kept (``channel_names_in_``) and another order or
    other names refused, as scikit-learn refuses reordered columns; the fitted order
    and other inputs pass."""
    X, y = aeon_layout
    nested = _nested(X)
    swapped = nested[list(nested.columns[::-1])]
    for model in (
        LMUClassifier(channels_first=True, device="cpu").fit(nested, y),
        LMUPooledFeatures(order=3).fit(nested),
        LMUFeatures(order=3).fit(nested),
    ):
        np.testing.assert_array_equal(model.channel_names_in_, list(nested.columns))
        method = model.predict if hasattr(model, "predict") else model.transform
        method(nested)
        method(X if hasattr(model, "predict") else X.swapaxes(1, 2))  # no names: as given
        with pytest.raises(ValueError, match=r"fitted on channels \['dim_0', 'dim_1'"):
            method(swapped)
        renamed = nested.rename(columns={"dim_0": "pressure"})
        with pytest.raises(ValueError, match="order of fit, under the same names"):
            method(renamed)
    refit = LMUPooledFeatures(order=3).fit(nested).fit(X.swapaxes(1, 2))
    assert not hasattr(refit, "channel_names_in_")  # a refit without names forgets them


@pytest.mark.parametrize("transformer", [LMUFeatures(order=3), LMUPooledFeatures(order=3)])
def test_nested_dataframe_columns_name_the_features_in_a_column_transformer(
    aeon_layout, transformer
):
    """ColumnTransformer passes the columns it selected as ``input_features``: a nested
    DataFrame's are its channels, which were refused (as not ``n_features_in_``, the
    steps), so its names and pandas output failed; other names are still refused."""
    from sklearn.compose import ColumnTransformer

    X, _ = aeon_layout
    nested = _nested(X)
    nested["other"] = np.arange(len(nested), dtype=float)
    channels = [name for name in nested.columns if name != "other"]
    columns = ColumnTransformer([("lmu", transformer, channels)], remainder="passthrough")
    out = columns.set_output(transform="pandas").fit_transform(nested)
    fitted = columns.named_transformers_["lmu"]
    names = [f"lmu__{name}" for name in fitted.get_feature_names_out()]
    assert list(out.columns) == [*names, "remainder__other"]
    with pytest.raises(ValueError, match="not equal to channel_names_in_"):
        fitted.get_feature_names_out(channels[::-1])
    # columns named by integers (no names kept): the generated names, one per channel
    numbered = nested[channels].rename(columns={name: i for i, name in enumerate(channels)})
    columns = ColumnTransformer([("lmu", transformer, list(range(len(channels))))])
    out = columns.set_output(transform="pandas").fit_transform(numbered)
    assert list(out.columns) == names


def test_a_pandas_series_is_read_as_what_it_holds():
    """A pandas Series met a raw TypeError ('Float64DType' object is not iterable): a
    Series of sequences is their list, a Series of numbers (one row of a table) is
    refused with the reshape advice a 1-D array gets."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    sequences = [rng.standard_normal(n) for n in (10, 15, 20)]
    features = LMUFeatures(order=2)
    np.testing.assert_array_equal(
        features.fit_transform(pd.Series(sequences)), features.fit_transform(sequences)
    )
    table = pd.DataFrame(rng.standard_normal((20, 12)))
    clf = LMUClassifier(device="cpu").fit(table, np.arange(20) % 2)
    with pytest.raises(ValueError, match=r"Reshape your data: X.reshape\(1, -1\)"):
        clf.predict(table.iloc[0])


def test_an_object_array_of_sequences_is_read_as_their_list():
    """Sequences of different lengths in a 1-D object array (``Series.to_numpy()``) met
    NumPy's 'setting an array element with a sequence': they are the list they hold, for
    the transformers and the composites, in fit and predict; an object array of numbers is
    still refused with the reshape advice."""
    rng = np.random.default_rng(0)
    sequences = [rng.standard_normal((n, 2)) for n in (10, 15, 20, 12)]
    held = np.empty(len(sequences), dtype=object)
    held[:] = sequences
    for features in (LMUFeatures(order=2), LMUPooledFeatures(order=2)):
        np.testing.assert_array_equal(
            features.fit_transform(held), features.fit_transform(sequences)
        )
    y = np.arange(4) % 2
    clf = LMUClassifier(device="cpu").fit(held, y)
    np.testing.assert_array_equal(
        clf.predict_proba(held),
        LMUClassifier(device="cpu").fit(sequences, y).predict_proba(sequences),
    )
    numbers = np.empty(3, dtype=object)
    numbers[:] = [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match=r"Reshape your data"):
        LMUFeatures().fit(numbers)


def test_nan_padded_unequal_lengths_say_how_to_pass_them(aeon_layout):
    """sktime/aeon pad unequal lengths with NaN; the error was scikit-learn's advice to use
    HistGradientBoosting. It now names the padding and gives the list to pass, and that
    list works."""
    X, y = aeon_layout
    padded = X.copy()
    for i in range(0, len(X), 3):
        padded[i, :, 12 + i % 5 :] = np.nan
    for estimator in (
        LMUFeatures(order=4, channels_first=True),
        LMUPooledFeatures(order=3, channels_first=True),
        LMUClassifier(channels_first=True, device="cpu"),
    ):
        args = (padded, y) if isinstance(estimator, LMUClassifier) else (padded,)
        with pytest.raises(ValueError, match=r"at the end of 10 sequence\(s\)") as info:
            getattr(estimator, "fit_transform", estimator.fit)(*args)
        assert "HistGradientBoosting" not in str(info.value)
        assert "[x[:, ~np.isnan(x).any(axis=0)] for x in X]" in str(info.value)
    # the advice, as written, works
    as_list = [x[:, ~np.isnan(x).any(axis=0)] for x in padded]
    assert [x.shape[1] for x in as_list[:4]] == [12, 20, 20, 15]
    LMUClassifier(channels_first=True, device="cpu").fit(as_list, y)
    # channels-last data gets its own advice (it got only the channels-first one, and the
    # 2-D one, which runs on it and mixes the channels into one series), which works
    last = np.swapaxes(padded, 1, 2)
    with pytest.raises(ValueError, match=r"at the end of 10 sequence") as info:
        LMUFeatures(order=4).fit(last)
    assert "[x[~np.isnan(x).any(axis=1)] for x in X]" in str(info.value)
    trimmed = [x[~np.isnan(x).any(axis=1)] for x in last]
    assert [x.shape for x in trimmed[:2]] == [(12, 3), (20, 3)]
    LMUClassifier(device="cpu").fit(trimmed, y)
    # 2-D (n_samples, n_steps) data, and the advice for it (that alone)
    flat = padded[:, 0]
    with pytest.raises(ValueError, match=r"\[x\[~np.isnan\(x\)\] for x in X\]") as info:
        LMUFeatures(order=4).fit(flat)
    assert "channels_first" not in str(info.value)
    # one padded sequence of a list: drop its padding
    with pytest.raises(ValueError, match=r"drop the padding"):
        LMUFeatures(order=4).fit([flat[0], flat[1][:15]])
    # ... and the recipe for channels-first sequences of a list too
    with pytest.raises(ValueError, match=r"x\[:, ~np.isnan\(x\).any\(axis=0\)\] for"):
        LMUFeatures(order=4, channels_first=True).fit([padded[0], X[1][:, :15]])
    LMUFeatures(order=4).fit([x[~np.isnan(x)] for x in flat])
    # NaN inside a sequence is missing data, not padding: the plain message
    holes = X.copy()
    holes[0, 0, 5] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN or infinity") as info:
        LMUFeatures(order=4, channels_first=True).fit(holes)
    assert "padded" not in str(info.value)


def test_zero_channels_in_the_channels_first_layout_name_axis_1():
    """An aeon collection of zero channels ((n_cases, 0, n_timepoints)) is refused naming
    axis 1, where that layout holds the channels (the message named the last axis, where
    the swapped array holds them)."""
    with pytest.raises(ValueError, match=r"zero channels; with channels_first=True .* axis 1"):
        LMUFeatures(order=4, channels_first=True).fit(np.zeros((3, 0, 10)))
    pytest.importorskip("aeon")
    from lmu_sk.aeon import LMUAeonTransformer

    with pytest.raises(ValueError, match="axis 1 holds them"):
        LMUAeonTransformer(order=4, device="cpu").fit(np.zeros((3, 0, 10)))


def test_sequences_of_one_length_and_different_channels_are_named_as_such():
    """Five sequences of (50, 3) and one of (50, 2) were refused as aeon's layout only,
    advising channels_first=True, which then fitted 50 'channels' silently: the message
    names both readings."""
    rng = np.random.default_rng(0)
    X = [rng.standard_normal((50, 3)) for _ in range(5)] + [rng.standard_normal((50, 2))]
    with pytest.raises(ValueError, match=r"different numbers of channels.*channels_first=True"):
        LMUPooledFeatures(device="cpu").fit(X)


def test_a_model_refuses_aeons_univariate_layout_read_as_one_step():
    """aeon's (n, 1, n_steps) read channels last is sequences of one step of n_steps
    channels: the models fitted them with a warning only, at chance (GunPoint 0.63 against
    0.99). A model's fit refuses it, naming both ways; the transformers still warn, and
    channels_first=False reads it as given."""
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((30, 1, 40)), np.arange(30) % 2
    with pytest.raises(ValueError, match=r"1 step of 40 channels.*channels_first=True"):
        LMUClassifier(order=4).fit(X, y)
    with pytest.raises(ValueError, match=r"every sequence is 1 step"):
        LMUClassifier(order=4).fit(list(X), y)
    with pytest.raises(ValueError, match=r"estimator=LMUClassifier\(channels_first=True\)"):
        LMUEarlyClassifier(LMUClassifier(order=4)).fit(X, y)
    with pytest.warns(UserWarning, match="1 steps of 40 channels"):
        LMUFeatures(order=2).fit(X)
    assert LMUClassifier(order=4, channels_first=False).fit(X, y).n_features_in_ == 1
    assert LMUClassifier(order=4, channels_first=True).fit(X, y).n_features_in_ == 40


def test_the_early_classifiers_layout_warning_names_its_own_parameter():
    """LMUEarlyClassifier has no channels_first: its warning named it (and the inner
    classifier's warning came too)."""
    X = np.random.default_rng(0).standard_normal((30, 3, 40))
    with pytest.warns(UserWarning) as caught:
        LMUEarlyClassifier(LMUClassifier(order=4)).fit(X, np.arange(30) % 2)
    layout = [str(w.message) for w in caught if "reads X of shape" in str(w.message)]
    assert len(layout) == 1 and "estimator=LMUClassifier(channels_first=True)" in layout[0]


def test_a_fitted_model_predicts_on_one_step_prefixes_of_its_layout():
    """The one-step refusal is a fit's: a model fitted (with the warning) on sequences of
    fewer steps than channels, read channels last, predicts on their one-step prefixes
    (it refused them at predict, as if it were being fitted)."""
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((30, 2, 5)), np.arange(30) % 2
    with pytest.warns(UserWarning, match="2 steps of 5 channels"):
        model = LMUClassifier(order=4).fit(X, y)
    with pytest.warns(UserWarning, match="1 steps of 5 channels"):
        assert model.predict(X[:, :1]).shape == (30,)
    with pytest.warns(UserWarning, match="1 steps of 5 channels"):
        assert model.predict([x[:1] for x in X]).shape == (30,)

"""Streaming inference: a stream fed step by step or in chunks answers what the batch
estimator answers for the prefix it has seen.

Tolerances, relative to the largest magnitude of the batch output (features) or absolute
on probabilities and on regression outputs scaled by their magnitude: 1e-10 in float64 and
1e-5 in float32. Stream and batch compute the same sums in different orders (a
recurrence, powers of ``Abar`` and impulse-response GEMMs against one reversed-impulse
GEMM), so they differ by rounding only: about ``order * eps`` relative per feature after a
few hundred steps (measured ~5e-6 for order 468 over 784 float32 steps, far less for the
orders tested here), which the standardization and a small head change by a factor of a
few at most. The pooled features are accumulated in float64 by stream and batch alike and
cast to the dtype at the end, so in float32 they differ by that cast's rounding (6e-8
relative); their proportions are exact counts, equal as long as no state lies within
rounding of a threshold (the streamed sequences are not those the thresholds were fitted
on, so none does).
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.linear_model import LogisticRegression

from lmu_sk import LMUClassifier, LMUFeatures, LMUPooledFeatures, LMURegressor
from lmu_sk import streaming as streaming_module
from lmu_sk.reference import dn_states

TOLERANCE = {"float32": 1e-5, "float64": 1e-10}
OUTPUTS = ("final", "mean", "max", "sequence")


def split_points(draw, n_steps: int) -> list[int]:
    """Random chunk ends in ``(0, n_steps]``, sorted, the last one ``n_steps``."""
    cuts = draw(st.lists(st.integers(1, max(1, n_steps - 1)), max_size=6))
    return [*sorted({c for c in cuts if 0 < c < n_steps}), n_steps]


def feed(stream, X: np.ndarray, cuts: list[int], as_steps: bool):
    """Feed ``X`` (n_streams, n_steps[, n_channels]) chunk by chunk; yield each prefix end."""
    start = 0
    for stop in cuts:
        if as_steps and stop - start == 1:
            stream.update(X[:, start])  # the one-step form
        else:
            stream.update(X[:, start:stop])
        start = stop
        yield stop


def assert_close(got, expected, dtype: str, what: str = ""):
    scale = max(float(np.max(np.abs(expected))), 1e-300)
    np.testing.assert_allclose(got, expected, rtol=0, atol=TOLERANCE[dtype] * scale, err_msg=what)


def quiet_fit(model, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(X, y)


@st.composite
def feature_cases(draw):
    order = draw(st.integers(1, 32))
    discretizer = draw(st.sampled_from(["zoh", "euler"]))
    # Euler forgets only for theta above about 11 * order
    low = 12.0 * order if discretizer == "euler" else 1.0
    theta = draw(st.floats(low, low + 100.0))
    n_steps = draw(st.integers(1, 60))
    n_channels = draw(st.integers(1, 3))
    # 9 streams of 2 or 3 channels reach the blocked route of 'max' (>= 16 rows)
    n_streams = draw(st.sampled_from([1, 2, 3, 4, 9]))
    output = draw(st.sampled_from(OUTPUTS))
    dtype = draw(st.sampled_from(["float32", "float64"]))
    seed = draw(st.integers(0, 2**16))
    cuts = split_points(draw, n_steps)
    return order, theta, discretizer, n_steps, n_channels, n_streams, output, dtype, seed, cuts


@settings(max_examples=150)
@given(feature_cases(), st.booleans())
def test_feature_stream_equals_batch_transform_of_every_prefix(case, as_steps):
    order, theta, discretizer, n_steps, n_channels, n_streams, output, dtype, seed, cuts = case
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_streams, n_steps, n_channels))
    if n_channels == 1 and rng.random() < 0.5:
        X = X[:, :, 0]  # the 2-D layout of one channel
    features = LMUFeatures(
        order=order, theta=theta, discretizer=discretizer, output=output, dtype=dtype
    ).fit(X)
    stream = features.stream(n_streams)
    for t in feed(stream, X, cuts, as_steps):
        expected = features.transform(X[:, :t])
        if output == "sequence":
            expected = expected[:, -1]
        got = stream.transform()
        assert got.dtype == np.dtype(dtype) and stream.steps_seen == t
        assert_close(got, expected, dtype, f"prefix {t}")


def test_final_state_matches_the_reference_recurrence_over_long_chunks(monkeypatch):
    # pieces of at most 4 steps and row groups of one row exercise the splitting
    monkeypatch.setattr(streaming_module, "_MAX_PIECE", 4)
    monkeypatch.setattr(streaming_module, "_BLOCK_BYTES", 1)
    X = np.random.default_rng(3).standard_normal((10, 37, 2))  # 20 rows: blocked 'max'
    for output in ("final", "mean", "max"):
        features = LMUFeatures(order=9, theta=20.0, output=output, dtype="float64").fit(X)
        stream = features.stream(10).update(X[:, :30]).update(X[:, 30:])
        states = dn_states(X, 9, 20.0, output="sequence")
        expected = {"final": states[:, -1], "mean": states.mean(1), "max": states.max(1)}
        assert_close(stream.transform(), expected[output], "float64", output)


@pytest.mark.parametrize("output", ["final", "mean", "max"])
def test_float32_stream_at_a_large_order_over_hundreds_of_steps(output):
    # the rounding of a float32 recurrence grows with the order; order 160 over 320
    # single steps and chunks stays below 1e-5 of the features' scale (order 468 over 784
    # steps: ~5e-6, see benchmarks/bench_streaming.py's model)
    X = np.random.default_rng(4).random((2, 320), dtype=np.float32)
    features = LMUFeatures(order=160, theta=320.0, output=output, dtype="float32").fit(X)
    stream = features.stream(2)
    for t in range(150):
        stream.update(X[:, t])
    stream.update(X[:, 150:300]).update(X[:, 300:])
    assert_close(stream.transform(), features.transform(X), "float32")


def test_theta_none_keeps_the_fitted_window():
    X = np.random.default_rng(0).standard_normal((2, 25))
    features = LMUFeatures(order=6, output="mean", dtype="float64").fit(X)
    assert features.theta_ == 25.0
    stream = features.stream(2).update(X[:, :10])
    assert_close(stream.transform(), features.transform(X[:, :10]), "float64")


def test_float_input_dtype_none_streams_in_float64():
    X = np.random.default_rng(0).standard_normal((2, 10)).astype(np.float32)
    stream = LMUFeatures(order=4).fit(X).stream(2).update(X)
    assert stream.dtype == np.float64 and stream.transform().dtype == np.float64


@st.composite
def model_cases(draw):
    kind = draw(st.sampled_from(["classifier", "regressor"]))
    head = draw(st.sampled_from(["dense", "ridge"]))
    outputs = ("final", "mean", "max", "pooled")
    if kind == "regressor":
        outputs += ("sequence",)
    return (
        kind,
        head,
        draw(st.sampled_from(outputs)),
        draw(st.integers(2, 12)),  # order
        draw(st.integers(1, 2)),  # channels
        draw(st.sampled_from(["float32", "float64"])),
        draw(st.booleans()),  # scale_features
        draw(st.integers(2, 3)),  # classes or outputs
        draw(st.integers(0, 2**16)),
    )


def assert_scores_close(got, expected, dtype: str, what: str = ""):
    """Scores (decision functions, regression outputs) within the tolerance of their scale."""
    assert got.shape == expected.shape, what
    scale = max(1.0, float(np.max(np.abs(expected))))
    np.testing.assert_allclose(got, expected, rtol=0, atol=TOLERANCE[dtype] * scale, err_msg=what)


def assert_labels_agree(got, expected, scores, two_class_threshold: float):
    """Labels equal wherever the scores decide clearly (a near tie may flip by rounding)."""
    if scores.ndim == 1:
        clear = np.abs(scores - two_class_threshold) > 1e-3
    else:
        top2 = np.sort(scores, axis=1)[:, -2:]
        clear = top2[:, 1] - top2[:, 0] > 1e-3
    assert np.array_equal(got[clear], expected[clear])


@settings(max_examples=60)
@given(model_cases(), st.data())
def test_model_stream_equals_batch_prediction_of_every_prefix(case, data):
    """Every head (dense, ridge) on every output, classifier and regressor."""
    kind, head, output, order, n_channels, dtype, scale, n_targets, seed = case
    rng = np.random.default_rng(seed)
    n_samples, n_steps = 30, 16
    X = rng.standard_normal((n_samples, n_steps, n_channels))
    params = dict(
        head=head,
        order=order,
        feature_output=output,
        scale_features=scale,
        hidden_layer_sizes=(8,),
        max_iter=5,
        learning_rate_init=0.05,
        random_state=0,
        dtype=dtype,
        device="cpu",
        channels_first=False,
    )
    if output == "pooled":
        params["theta"] = [4.0, 16.0]
    if kind == "classifier":
        y = np.arange(n_samples) % n_targets
        model = quiet_fit(LMUClassifier(**params), X, y)
    else:
        shape = (n_samples, n_steps) if output == "sequence" else (n_samples,)
        y = (
            rng.standard_normal((*shape, n_targets - 1)).squeeze(-1)
            if n_targets == 2
            else (rng.standard_normal((*shape, n_targets)))
        )
        model = quiet_fit(LMURegressor(**params), X, y)
    n_streams = 3
    # fresh sequences: no pooled state equals a threshold fitted on the training states
    X_new = rng.standard_normal((n_streams, n_steps, n_channels))
    stream = model.stream(n_streams)
    for t in feed(stream, X_new, split_points(data.draw, n_steps), as_steps=True):
        prefix = X_new[:, :t]
        features = model.features_.transform(prefix)
        if output == "sequence":
            features = features[:, -1]
        assert_close(stream.transform(), features, dtype, f"features, prefix {t}")
        if kind == "regressor":
            expected = model.predict(prefix)
            if output == "sequence":
                expected = expected[:, -1]
            assert_scores_close(stream.predict(), expected, dtype, f"prefix {t}")
            continue
        if hasattr(model, "predict_proba"):
            proba = model.predict_proba(prefix)
            np.testing.assert_allclose(stream.predict_proba(), proba, atol=TOLERANCE[dtype])
            np.testing.assert_allclose(
                np.exp(stream.predict_log_proba()), proba, atol=TOLERANCE[dtype]
            )
            assert_labels_agree(stream.predict(), model.predict(prefix), proba, 0.5)
        else:
            assert not hasattr(stream, "predict_proba")
        if hasattr(model, "decision_function"):
            scores = model.decision_function(prefix)
            assert_scores_close(stream.decision_function(), scores, dtype, f"prefix {t}")
            assert_labels_agree(stream.predict(), model.predict(prefix), scores, 0.0)
        else:
            assert not hasattr(stream, "decision_function")


def test_classifier_stream_of_string_labels_and_two_classes():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((40, 12))
    y = np.where(X[:, -3:].sum(axis=1) > 0, "up", "down")
    model = quiet_fit(
        LMUClassifier(head="dense", order=6, hidden_layer_sizes=(8,), max_iter=50, random_state=0),
        X,
        y,
    )
    stream = model.stream(40).update(X)
    assert stream.predict_proba().shape == (40, 2)
    np.testing.assert_allclose(stream.predict_proba(), model.predict_proba(X), atol=1e-5)
    assert np.mean(stream.predict() == model.predict(X)) > 0.95


def test_another_head_is_asked_through_its_own_predict_proba():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((50, 10))
    y = (X[:, :5].sum(axis=1) > 0).astype(int)
    model = quiet_fit(LMUClassifier(head="dense", order=5, max_iter=2, dtype="float64"), X, y)
    model.head_ = LogisticRegression().fit(model._transform(X), y)
    stream = model.stream(50).update(X[:, :4]).update(X[:, 4:])
    np.testing.assert_allclose(stream.predict_proba(), model.predict_proba(X), atol=1e-10)
    np.testing.assert_array_equal(stream.predict(), model.predict(X))


def test_stream_is_a_snapshot_of_the_fitted_model():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 10))
    y = np.arange(30) % 2
    model = quiet_fit(LMUClassifier(head="dense", order=4, max_iter=3, random_state=0), X, y)
    stream = model.stream(30).update(X)
    before = stream.predict_proba()
    quiet_fit(model.set_params(random_state=1, order=5), X, y)
    np.testing.assert_array_equal(stream.update(X[:, :0]).predict_proba(), before)


# ------------------------------------------------------------------ state, reset, pickle
def fitted_stream(output="mean", n_channels=2, n_streams=3, dtype="float64"):
    X = np.random.default_rng(5).standard_normal((n_streams, 20, n_channels))
    features = LMUFeatures(order=5, theta=9.0, output=output, dtype=dtype).fit(X)
    return features.stream(n_streams), X


@pytest.mark.parametrize("output", OUTPUTS)
def test_checkpoint_reset_and_pickle_continue_identically(output):
    stream, X = fitted_stream(output)
    stream.update(X[:, :7])
    checkpoint = stream.state
    assert checkpoint["steps_seen"] == 7 and checkpoint["dn"].shape == (3, 2, 5)
    blob = pickle.dumps(stream)
    expected = stream.update(X[:, 7:]).transform()

    stream.state = checkpoint
    assert stream.steps_seen == 7
    np.testing.assert_array_equal(stream.update(X[:, 7:]).transform(), expected)
    loaded = pickle.loads(blob)
    assert loaded.steps_seen == 7
    np.testing.assert_array_equal(loaded.update(X[:, 7:]).transform(), expected)

    stream.reset()
    assert stream.steps_seen == 0
    np.testing.assert_array_equal(stream.update(X[:, :7]).update(X[:, 7:]).transform(), expected)


def test_model_stream_pickles_and_continues_identically():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 15))
    model = quiet_fit(
        LMUClassifier(head="dense", order=6, max_iter=3, random_state=0), X, np.arange(20) % 3
    )
    stream = model.stream(20).update(X[:, :5])
    stream.predict_proba()  # build the forward buffers before pickling
    loaded = pickle.loads(pickle.dumps(stream))
    np.testing.assert_array_equal(
        loaded.update(X[:, 5:]).predict_proba(), stream.update(X[:, 5:]).predict_proba()
    )
    assert loaded.state["steps_seen"] == 15 and stream.reset().steps_seen == 0


# ------------------------------------------------------------------ bad input
def assert_unchanged(stream, before):
    after = stream.state
    assert after.keys() == before.keys()
    for key, value in before.items():
        np.testing.assert_array_equal(after[key], value)


@pytest.mark.parametrize("output", ["final", "mean", "max"])
@pytest.mark.parametrize(
    ("bad", "error", "match"),
    [
        (np.zeros((3, 3)), ValueError, r"shape \(3, 3\) does not fit .* 2 channel"),
        (np.zeros((3, 4, 3)), ValueError, "does not fit"),
        (np.zeros((2, 2)), ValueError, r"3 sequence\(s\) .* \(3, 2\) for one step"),
        (np.zeros((4, 5, 2)), ValueError, "does not fit"),
        (np.zeros(3), ValueError, "does not fit"),
        (np.zeros((3, 2, 2, 1)), ValueError, "does not fit"),
        (np.array([["a", "b"]] * 3), TypeError, "real numbers"),
        ("nan", ValueError, "NaN or infinity; the stream was left unchanged"),
        ("nan chunk", ValueError, "NaN or infinity; the stream was left unchanged"),
        ("inf chunk", ValueError, "NaN or infinity"),
    ],
)
def test_bad_updates_raise_and_leave_the_stream_unchanged(output, bad, error, match):
    stream, X = fitted_stream(output, dtype="float32")
    stream.update(X[:, :4])
    if isinstance(bad, str):
        chunk = X[:, 4:9].copy()
        if bad == "nan":
            chunk = chunk[:, 0]
            chunk[1, 0] = np.nan
        elif bad == "nan chunk":
            chunk[2, 3, 1] = np.nan
        else:
            chunk[0, 0, 0] = np.inf
        bad = chunk
    before = stream.state
    with pytest.raises(error, match=match):
        stream.update(bad)
    assert_unchanged(stream, before)
    assert stream.steps_seen == 4


@pytest.mark.parametrize("output", ["final", "mean", "max"])
@pytest.mark.parametrize("as_chunk", [True, False])
def test_overflow_raises_and_leaves_the_stream_unchanged(output, as_chunk):
    # finite float32 inputs whose states grow beyond float32: an unstable Euler system
    X = np.random.default_rng(5).standard_normal((3, 20, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # Euler is unstable here: the point
        features = LMUFeatures(
            order=5, theta=1.0, discretizer="euler", output=output, dtype="float32"
        ).fit(X)
    stream = features.stream(3).update(X[:, :2])
    before = stream.state
    with pytest.raises(ValueError, match="would overflow float32"):
        for _ in range(200):
            if as_chunk:
                stream.update(np.full((3, 5, 2), 1e30, dtype=np.float32))
            else:
                stream.update(np.full((3, 2), 1e30, dtype=np.float32))
            before = stream.state
    assert_unchanged(stream, before)


def pooled_stream(dtype="float32", stride=2, n_streams=3, n_channels=2):
    X = np.random.default_rng(6).standard_normal((8, 20, n_channels))
    features = LMUPooledFeatures(
        order=3, thetas=[3.0, 9.0], stride=stride, n_biases=2, dtype=dtype, channels_first=False
    ).fit(X)
    return features.stream(n_streams), features


@pytest.mark.parametrize("kind", ["final", "mean", "max", "pooled"])
@pytest.mark.parametrize("as_chunk", [True, False])
def test_finite_values_beyond_float32_say_they_would_overflow(kind, as_chunk):
    """A float32 stream given finite float64 values beyond float32's range names the
    overflow (1e39 itself overflows float32), warns nothing and stays unchanged."""
    if kind == "pooled":
        stream, _ = pooled_stream()
    else:
        stream, _ = fitted_stream(kind, dtype="float32")
    X = np.random.default_rng(0).standard_normal((3, 5, 2))
    stream.update(X[:, :3])
    before = stream.state
    bad = X.copy() if as_chunk else X[:, 0].copy()
    bad[1, ..., 0] = 1e39
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning of an overflowing cast
        with pytest.raises(
            ValueError, match=r"beyond the largest float32.*would overflow float32"
        ):
            stream.update(bad)
    assert_unchanged(stream, before)
    assert stream.steps_seen == 3


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ({"dn": np.zeros((3, 2, 4)), "steps_seen": 1, "mean": np.zeros((3, 10))}, r"shape"),
        ({"dn": np.zeros((3, 2, 5)), "steps_seen": 1, "mean": np.zeros((2, 10))}, r"shape"),
        ({"dn": np.zeros((3, 2, 5)), "steps_seen": 1}, "keys"),
        (np.zeros((3, 2, 5)), "keys"),
        ({"dn": np.zeros((3, 2, 5)), "steps_seen": -1, "mean": np.zeros((3, 10))}, ">= 0"),
        ({"dn": np.full((3, 2, 5), np.nan), "steps_seen": 1, "mean": np.zeros((3, 10))}, "NaN"),
    ],
)
def test_bad_state_raises_and_leaves_the_stream_unchanged(value, match):
    stream, X = fitted_stream("mean")
    stream.update(X[:, :4])
    before = stream.state
    with pytest.raises(ValueError, match=match):
        stream.state = value
    assert_unchanged(stream, before)


def test_stream_before_fit_and_before_any_step():
    for estimator in (LMUFeatures(), LMUClassifier(), LMURegressor()):
        with pytest.raises(NotFittedError):
            estimator.stream()
    stream, _ = fitted_stream()
    with pytest.raises(ValueError, match="no step yet"):
        stream.transform()
    for n_streams, error in [(0, ValueError), (1.5, TypeError), (True, TypeError)]:
        with pytest.raises(error, match="n_streams"):
            LMUFeatures(order=3).fit(np.zeros((2, 5))).stream(n_streams)


def test_an_output_without_a_streaming_rule_is_refused():
    features = LMUFeatures(order=3).fit(np.zeros((2, 5)))
    features.output = "pooled"  # an output added later, unknown to the stream
    with pytest.raises(ValueError, match="Streaming supports the outputs"):
        features.stream()


def test_one_stream_accepts_scalars_and_empty_chunks():
    X = np.random.default_rng(0).standard_normal((1, 6))
    features = LMUFeatures(order=3, dtype="float64").fit(X)
    stream = features.stream()
    for value in X[0]:
        stream.update(float(value))
    stream.update(X[:, :0])
    assert stream.steps_seen == 6
    assert_close(stream.transform(), features.transform(X), "float64")


# ------------------------------------------------------------------ GPU (NumPy stand-in)
@pytest.fixture
def fake_gpu(monkeypatch):
    from fake_cupy import clear_caches, install

    yield install(monkeypatch, as_gpu=True)
    clear_caches()


def test_gpu_model_keeps_the_state_on_the_device(fake_gpu, monkeypatch):
    from fake_cupy import FakeDeviceArray, clear_caches

    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 12, 2))
    y = np.arange(30) % 3
    params = dict(order=6, max_iter=5, random_state=0, dtype="float64")
    gpu = quiet_fit(LMUClassifier(head="dense", **params, device="gpu"), X, y)
    cpu = quiet_fit(LMUClassifier(head="dense", **params, device="cpu"), X, y)
    stream = gpu.stream(30)
    FakeDeviceArray.transfers.clear()
    stream.update(X[:, :5]).update(X[:, 5]).update(fake_gpu.asarray(X[:, 6:]))
    proba = stream.predict_proba()
    assert type(stream.state["dn"]) is FakeDeviceArray and type(proba) is np.ndarray
    # only the (30, 3) probabilities came to the host
    assert FakeDeviceArray.transfers == [(30, 3)]
    np.testing.assert_allclose(proba, cpu.predict_proba(X), atol=1e-10)

    blob = pickle.dumps(stream)
    monkeypatch.undo()  # no CuPy, no GPU from here on
    clear_caches()
    loaded = pickle.loads(blob)
    assert type(loaded.state["dn"]) is np.ndarray
    np.testing.assert_allclose(loaded.predict_proba(), proba, atol=1e-12)


def test_device_input_moves_a_cpu_stream_to_the_device(fake_gpu):
    from fake_cupy import FakeDeviceArray

    X = np.random.default_rng(1).standard_normal((3, 9, 2))
    features = LMUFeatures(order=4, output="max", dtype="float64", device="cpu").fit(X)
    stream = features.stream(3).update(X[:, :4])
    assert type(stream.state["dn"]) is np.ndarray
    stream.update(fake_gpu.asarray(X[:, 4:]))
    assert type(stream.state["dn"]) is FakeDeviceArray
    assert_close(stream.transform(), features.transform(X), "float64")
    on_device = LMUFeatures(
        order=4, output="max", dtype="float64", device="gpu", return_gpu_arrays=True
    ).fit(X)
    assert type(on_device.stream(3).update(X).transform()) is FakeDeviceArray


def test_feature_stream_pickled_on_a_gpu_loads_without_one(fake_gpu, monkeypatch):
    from fake_cupy import clear_caches

    X = np.random.default_rng(2).standard_normal((2, 8))
    features = LMUFeatures(order=3, dtype="float64", device="gpu").fit(X)
    blob = pickle.dumps(features.stream(2).update(X[:, :5]))
    monkeypatch.undo()
    clear_caches()
    loaded = pickle.loads(blob).update(X[:, 5:])
    assert_close(
        loaded.transform(), LMUFeatures(order=3, dtype="float64").fit(X).transform(X), "float64"
    )


# ------------------------------------------------------------------ float32 'mean' drift
def test_float32_mean_stream_does_not_drift_over_many_single_steps():
    # Centred input: the mean of the states is far smaller than the states, so a float32
    # state's rounding, which does not average out, was 2.2e-5 of the mean's scale after
    # 1e6 steps (1.7e-5 after these 2e4; now 2e-8). The state and running sum of 'mean'
    # are float64.
    n_steps = 20_000
    X = np.random.default_rng(7).standard_normal((2, n_steps)).astype(np.float32)
    params = dict(order=32, theta=1000.0, output="mean")
    features = LMUFeatures(**params, dtype="float32").fit(X[:, :1000])
    reference = LMUFeatures(**params, dtype="float64").fit(X[:, :1000]).transform(X)
    stream = features.stream(2)
    for t in range(n_steps):
        stream.update(X[:, t])
    scale = np.abs(reference).max()
    assert np.abs(stream.transform() - reference).max() < 1e-6 * scale
    # against the float32 batch transform (itself ~2e-6 from the reference)
    assert_close(stream.transform(), features.transform(X), "float32")


# ------------------------------------------------------------------ pooled features
@st.composite
def pooled_cases(draw):
    n_windows = draw(st.integers(1, 3))
    return dict(
        order=draw(st.integers(1, 6)),
        thetas=sorted(
            draw(st.lists(st.floats(2.0, 60.0), min_size=n_windows, max_size=n_windows))
        ),
        stride=draw(st.integers(1, 5)),
        difference=draw(st.booleans()),
        n_biases=draw(st.integers(1, 4)),
        dtype=draw(st.sampled_from(["float32", "float64"])),
        discretizer=draw(st.sampled_from(["zoh", "euler"])),
    ), (
        draw(st.integers(1, 2)),  # channels
        draw(st.sampled_from([1, 2, 3, 7])),  # streams
        draw(st.integers(1, 40)),  # steps
        draw(st.integers(0, 2**16)),  # seed
    )


@settings(max_examples=120)
@given(pooled_cases(), st.booleans(), st.data())
def test_pooled_stream_equals_batch_transform_of_every_prefix(case, as_steps, data):
    params, (n_channels, n_streams, n_steps, seed) = case
    if params["discretizer"] == "euler":
        params["thetas"] = [max(theta, 12.0 * params["order"]) for theta in params["thetas"]]
    rng = np.random.default_rng(seed)
    train = rng.standard_normal((10, 30, n_channels))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # Euler near its stability limit
        features = LMUPooledFeatures(**params, channels_first=False).fit(train)
    X = rng.standard_normal((n_streams, n_steps, n_channels))
    if n_channels == 1 and rng.random() < 0.5:
        X = X[:, :, 0]  # the 2-D layout of one channel
    stream = features.stream(n_streams)
    for t in feed(stream, X, split_points(data.draw, n_steps), as_steps):
        got = stream.transform()
        assert got.dtype == np.dtype(params["dtype"]) and stream.steps_seen == t
        assert_close(got, features.transform(X[:, :t]), params["dtype"], f"prefix {t}")


def test_pooled_stream_blocks_over_groups_of_streams(monkeypatch):
    # one stream per group of rows: the grouping of long chunks
    monkeypatch.setattr(streaming_module, "_BLOCK_BYTES", 1)
    stream, features = pooled_stream(dtype="float64", stride=1, n_streams=5)
    X = np.random.default_rng(1).standard_normal((5, 45, 2))
    stream.update(X[:, :40]).update(X[:, 40:])
    assert_close(stream.transform(), features.transform(X), "float64")


def test_pooled_stream_evaluates_the_block_under_way_without_committing_it():
    stream, features = pooled_stream(dtype="float64", stride=4)
    X = np.random.default_rng(2).standard_normal((3, 11, 2))
    stream.update(X[:, :6])  # one whole block and half of the next
    committed = stream.state
    assert_close(stream.transform(), features.transform(X[:, :6]), "float64")
    assert_unchanged(stream, committed)  # asking did not commit the half block
    np.testing.assert_allclose(committed["block_sum"], X[:, 4:6].sum(axis=1))
    stream.update(X[:, 6]).update(X[:, 7:])
    assert_close(stream.transform(), features.transform(X), "float64")


def test_pooled_stream_uses_the_fitted_stride_and_difference():
    X = np.random.default_rng(3).standard_normal((6, 24))
    features = LMUPooledFeatures(order=3, thetas=[6.0], stride=3, difference=True).fit(X)
    expected = features.transform(X)
    before = features.stream(6)
    # parameters changed after fit: the stream, as the transform, keeps the fitted values
    features.set_params(stride=1, difference=False)
    assert_close(before.update(X).transform(), expected, "float64")
    assert_close(features.stream(6).update(X).transform(), expected, "float64")


@pytest.mark.parametrize("stride", [1, 3])
def test_pooled_checkpoint_reset_and_pickle_continue_identically(stride):
    stream, _ = pooled_stream(dtype="float64", stride=stride)
    X = np.random.default_rng(4).standard_normal((3, 17, 2))
    stream.update(X[:, :7])  # with stride 3: two whole blocks and one step of the third
    checkpoint = stream.state
    n_keys = {"dn", "pools", "steps_seen", "previous"} | ({"block_sum"} if stride > 1 else set())
    assert set(checkpoint) == n_keys
    assert checkpoint["dn"].shape == (3, 2, 4, 3)  # streams, windows, inputs, order
    assert checkpoint["pools"].shape == (3, 2, 4, 3, 2 + 3)
    blob = pickle.dumps(stream)
    expected = stream.update(X[:, 7:]).transform()

    stream.state = checkpoint
    np.testing.assert_array_equal(stream.update(X[:, 7:]).transform(), expected)
    loaded = pickle.loads(blob)
    assert loaded.steps_seen == 7
    np.testing.assert_array_equal(loaded.update(X[:, 7:]).transform(), expected)
    stream.reset()
    assert stream.steps_seen == 0
    np.testing.assert_array_equal(stream.update(X[:, :7]).update(X[:, 7:]).transform(), expected)


def test_pooled_checkpoint_before_the_first_whole_block_keeps_infinite_extremes():
    stream, _ = pooled_stream(dtype="float64", stride=3)
    X = np.random.default_rng(5).standard_normal((3, 8, 2))
    stream.update(X[:, :2])
    checkpoint = stream.state
    assert np.isneginf(checkpoint["pools"][..., -2]).all()  # no whole block yet
    expected = stream.update(X[:, 2:]).transform()
    stream.state = checkpoint
    np.testing.assert_array_equal(stream.update(X[:, 2:]).transform(), expected)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda s: s.pop("previous"), "keys"),
        (lambda s: s.update(dn=s["dn"][:, :1]), "shape"),
        (lambda s: s["pools"].__setitem__((0, 0, 0, 0, 0), 9.0), "counts of blocks"),
        (lambda s: s["pools"].__setitem__((0, 0, 0, 0, 1), 0.5), "counts of blocks"),
        (lambda s: s["pools"].__setitem__((0, 0, 0, 0, -2), -np.inf), "NaN or infinity"),
        (lambda s: s["block_sum"].__setitem__((0, 0), np.nan), "NaN or infinity"),
        (lambda s: s.update(steps_seen=-1), ">= 0"),
    ],
)
def test_bad_pooled_state_raises_and_leaves_the_stream_unchanged(change, match):
    stream, _ = pooled_stream(dtype="float64", stride=3)
    stream.update(np.random.default_rng(6).standard_normal((3, 7, 2)))  # two blocks
    before = stream.state
    bad = stream.state
    change(bad)
    with pytest.raises(ValueError, match=match):
        stream.state = bad
    assert_unchanged(stream, before)


def test_pooled_stream_before_fit_and_before_any_step():
    with pytest.raises(NotFittedError):
        LMUPooledFeatures().stream()
    stream, _ = pooled_stream()
    with pytest.raises(ValueError, match="no step yet"):
        stream.transform()
    stream.update(np.zeros((3, 1, 2)))  # within the first block of stride 2
    assert stream.transform().shape == (3, 2 * 4 * 3 * (2 + 3))


# ------------------------------------------------------------------ the default classifier
@pytest.fixture(scope="module")
def default_classifier():
    """``LMUClassifier()`` on 600-step series: pooled features of stride 3, ridge head."""
    rng = np.random.default_rng(8)
    n_samples, n_steps = 36, 600
    y = np.arange(n_samples) % 3
    t = np.arange(n_steps)
    X = rng.standard_normal((n_samples, n_steps)) + np.sin(t[None, :] * (y[:, None] + 1) / 40)
    model = LMUClassifier().fit(X, y)
    assert model.head_kind_ == "ridge" and model.features_.stride == 3
    return model, rng


def test_default_classifier_stream_classifies_every_prefix_early(default_classifier):
    model, rng = default_classifier
    X = rng.standard_normal((4, 600)) + np.sin(np.arange(600) / 40)[None, :]
    stream = model.stream(4)
    cuts = [1, 2, 3, 5, 50, 51, 299, 300, 301, 599, 600]
    for t in feed(stream, X, cuts, as_steps=True):
        prefix = X[:, :t]
        assert_close(stream.transform(), model.features_.transform(prefix), "float32")
        scores = model.decision_function(prefix)
        assert_scores_close(stream.decision_function(), scores, "float32", f"prefix {t}")
        assert_labels_agree(stream.predict(), model.predict(prefix), scores, 0.0)
        if hasattr(model, "predict_proba"):
            proba = model.predict_proba(prefix)
            np.testing.assert_allclose(stream.predict_proba(), proba, atol=1e-5)


def test_default_classifier_stream_pickles_mid_block_and_continues_identically(
    default_classifier,
):
    model, rng = default_classifier
    X = rng.standard_normal((3, 40))
    stream = model.stream(3).update(X[:, :10])  # 3 whole blocks of 3 steps and one step
    loaded = pickle.loads(pickle.dumps(stream))
    np.testing.assert_array_equal(loaded.decision_function(), stream.decision_function())
    for t in range(10, 40):
        loaded.update(X[:, t])
        stream.update(X[:, t])
    np.testing.assert_array_equal(loaded.decision_function(), stream.decision_function())
    np.testing.assert_array_equal(loaded.predict(), stream.predict())
    assert loaded.steps_seen == 40 and set(loaded.state) >= {"dn", "pools", "block_sum"}


# ------------------------------------------------------------------ any features that stream
class _RecomputingStream:
    """A stream of its own kind: keeps every step and transforms the whole prefix."""

    def __init__(self, features, n_streams):
        self.features, self.n_streams, self.n_channels = features, n_streams, 1
        self.steps = []

    steps_seen = property(lambda self: len(self.steps))

    def update(self, U):
        U = np.asarray(U, dtype=float)
        self.steps.extend(U.T if U.ndim == 2 else [U])

    def transform(self):
        return self.features.transform(np.stack(self.steps, axis=1))


class _FeaturesWithTheirOwnStream:
    """Fitted features (delegating to ``LMUFeatures``) whose stream() is another kind."""

    def __init__(self, features):
        self._features = features

    def __getattr__(self, name):
        return getattr(self._features, name)

    def stream(self, n_streams):
        return _RecomputingStream(self._features, n_streams)


def test_model_stream_takes_any_fitted_features_that_stream():
    rng = np.random.default_rng(9)
    X = rng.standard_normal((30, 12))
    y = np.arange(30) % 2
    model = quiet_fit(LMUClassifier(head="dense", order=5, max_iter=5, dtype="float64"), X, y)
    model.features_ = _FeaturesWithTheirOwnStream(model.features_)
    stream = model.stream(4)
    for t in range(12):
        stream.update(X[:4, t])
    assert stream.steps_seen == 12
    np.testing.assert_allclose(stream.predict_proba(), model.predict_proba(X[:4]), atol=1e-10)

    model.features_ = object()  # fitted features without a stream
    with pytest.raises(TypeError, match="no stream"):
        model.stream(2)


def test_pooled_stream_stays_on_the_device(fake_gpu, monkeypatch):
    from fake_cupy import FakeDeviceArray, clear_caches

    X = np.random.default_rng(10).standard_normal((3, 13, 2))
    params = dict(order=3, thetas=[3.0, 8.0], stride=2, n_biases=2, dtype="float64")
    gpu = LMUPooledFeatures(**params, device="gpu", channels_first=False).fit(X)
    cpu = LMUPooledFeatures(**params, device="cpu", channels_first=False).fit(X)
    stream = gpu.stream(3).update(X[:, :5]).update(fake_gpu.asarray(X[:, 5])).update(X[:, 6:])
    assert type(stream.state["dn"]) is FakeDeviceArray
    assert_close(stream.transform(), cpu.transform(X), "float64")
    blob = pickle.dumps(stream)
    monkeypatch.undo()
    clear_caches()
    loaded = pickle.loads(blob)
    assert type(loaded.state["dn"]) is np.ndarray
    assert_close(loaded.transform(), cpu.transform(X), "float64")

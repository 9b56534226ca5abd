"""Streaming inference: a stream fed step by step or in chunks answers what the batch
estimator answers for the prefix it has seen.

Tolerances, relative to the largest magnitude of the batch output (features) or absolute
on probabilities and on regression outputs scaled by their magnitude: 1e-10 in float64 and
1e-5 in float32. Stream and batch compute the same sums in different orders (a
recurrence, powers of ``Abar`` and impulse-response GEMMs against one reversed-impulse
GEMM), so they differ by rounding only: about ``order * eps`` relative per feature after a
few hundred steps (measured ~5e-6 for order 468 over 784 float32 steps, far less for the
orders tested here), which the standardization and a small head change by a factor of a
few at most. The pooled features: see their section below.
"""

from __future__ import annotations

import itertools
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.linear_model import LogisticRegression

from lmu_sk import LMUClassifier, LMUFeatures, LMUPooledFeatures, LMURegressor, streaming
from lmu_sk.dn import EulerInstabilityWarning, discrete_system
from lmu_sk.engine import pooled_features as engine_pooled_features
from lmu_sk.engine import stream as engine_stream
from lmu_sk.engine.pooling import POOLS, TRANSFORMS, PooledSpec, WindowSpec
from lmu_sk.reference import dn_states, pooled, recurrence
from lmu_sk.streaming import PooledStream

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
    monkeypatch.setattr(engine_stream, "_MAX_PIECE", 4)
    monkeypatch.setattr(engine_stream, "_BLOCK_BYTES", 1)
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
    # 'rbf': the ridge head with kernel='rbf'
    head = draw(st.sampled_from(["dense", "ridge", "rbf"]))
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
    """Every head (dense, ridge, the ridge's Gaussian kernel) on every output, classifier
    and regressor."""
    kind, head, output, order, n_channels, dtype, scale, n_targets, seed = case
    rng = np.random.default_rng(seed)
    n_samples, n_steps = 30, 16
    X = rng.standard_normal((n_samples, n_steps, n_channels))
    params = dict(
        head="ridge" if head == "rbf" else head,
        kernel="rbf" if head == "rbf" else "linear",
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
    # the batch kernel of the pooled features sums 'mpv' in float32 whatever the dtype
    # (see the pooled section below): float32's tolerance for them
    tol = "float32" if output == "pooled" else dtype
    stream = model.stream(n_streams)
    for t in feed(stream, X_new, split_points(data.draw, n_steps), as_steps=True):
        prefix = X_new[:, :t]
        features = model.features_.transform(prefix)
        if output == "sequence":
            features = features[:, -1]
        assert_close(stream.transform(), features, tol, f"features, prefix {t}")
        if kind == "regressor":
            expected = model.predict(prefix)
            if output == "sequence":
                expected = expected[:, -1]
            assert_scores_close(stream.predict(), expected, tol, f"prefix {t}")
            continue
        if hasattr(model, "predict_proba"):
            proba = model.predict_proba(prefix)
            np.testing.assert_allclose(stream.predict_proba(), proba, atol=TOLERANCE[tol])
            np.testing.assert_allclose(
                np.exp(stream.predict_log_proba()), proba, atol=TOLERANCE[tol]
            )
            assert_labels_agree(stream.predict(), model.predict(prefix), proba, 0.5)
        else:
            assert not hasattr(stream, "predict_proba")
        if hasattr(model, "decision_function"):
            scores = model.decision_function(prefix)
            assert_scores_close(stream.decision_function(), scores, tol, f"prefix {t}")
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


@pytest.mark.parametrize("output", ["final", "mean", "max", "pooled"])
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
        ([[1.0, 2.0], [1.0], [1.0, 2.0]], ValueError, "a list of rows of different shapes"),
        (np.array([[1.0, {}]] * 3, dtype=object), TypeError, r"U\[0, 1\] is dict"),
        ([[[1.0, 2.0]] * 2, [[1.0, 2.0]], [[1.0, 2.0]] * 2], ValueError, "different shapes"),
        ("nan", ValueError, "NaN or infinity; the stream was left unchanged"),
        ("nan chunk", ValueError, "NaN or infinity; the stream was left unchanged"),
        ("inf chunk", ValueError, "NaN or infinity"),
    ],
)
def test_bad_updates_raise_and_leave_the_stream_unchanged(output, bad, error, match):
    if output == "pooled":  # mid-block of both strides, with running sums of 'cumsum'
        stream, _ = pooled_stream(dtype="float32", stride=3)
        X = np.random.default_rng(5).standard_normal((3, 20, 2))
    else:
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
    with pytest.warns(EulerInstabilityWarning):  # Euler is unstable here: the point
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


def test_a_float64_stream_beyond_its_range_is_not_told_to_use_float64():
    """The advice ended "Scale the input down, or use dtype='float64'" for a stream that
    computes in float64 already."""
    X = np.random.default_rng(0).standard_normal((2, 20))
    stream = LMUFeatures(order=4, output="mean", dtype="float64").fit(X).stream(2)
    with pytest.raises(ValueError, match=r"would overflow float64.*Scale the input down\.$"):
        for _ in range(200):  # the running sum passes float64's range
            stream.update(np.full(2, 1.79e308))
    float32 = LMUFeatures(order=4, dtype="float32").fit(X).stream(2)
    with pytest.raises(ValueError, match=r"Scale the input down, or use dtype='float64'\.$"):
        float32.update(np.full(2, 1e39))


@pytest.mark.parametrize("as_chunk", [True, False])
def test_pooled_overflow_raises_and_leaves_the_stream_unchanged(as_chunk):
    # finite float64 inputs whose running sums (of 'cumsum') would overflow float64: their
    # states pass float32's range (the thresholds'), which the batch transform refuses, and
    # so does the stream, from the first such step, before any sum is made
    pools = ("ppv", "lspv", "mean", "max", "min", "compete")
    stream, _ = pooled_stream(dtype="float64", stride=2, pools=pools)
    stream.update(np.random.default_rng(5).standard_normal((3, 3, 2)))
    huge = np.full((3, 4, 2), 1e308) if as_chunk else np.full((3, 2), 1e308)
    before = stream.state
    with pytest.raises(ValueError, match="beyond the largest float32"):
        stream.update(huge)
    assert_unchanged(stream, before)


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


# ------------------------------------------ GPU (NumPy stand-in, or CuPy: LMU_SK_TEST_GPU)
@pytest.mark.gpu
def test_gpu_model_keeps_the_state_on_the_device(fake_gpu, monkeypatch):
    from fake_cupy import FakeDeviceArray, records_transfers, uninstall

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
    assert type(stream.state["dn"]) is fake_gpu.ndarray and type(proba) is np.ndarray
    # only the (30, 3) probabilities came to the host
    assert FakeDeviceArray.transfers == [(30, 3)] or not records_transfers(fake_gpu)
    np.testing.assert_allclose(proba, cpu.predict_proba(X), atol=1e-10)

    blob = pickle.dumps(stream)
    uninstall(monkeypatch)  # no GPU from here on
    loaded = pickle.loads(blob)
    assert type(loaded.state["dn"]) is np.ndarray
    np.testing.assert_allclose(loaded.predict_proba(), proba, atol=1e-12)


@pytest.mark.gpu
def test_device_input_moves_a_cpu_stream_to_the_device(fake_gpu):
    X = np.random.default_rng(1).standard_normal((3, 9, 2))
    features = LMUFeatures(order=4, output="max", dtype="float64", device="cpu").fit(X)
    stream = features.stream(3).update(X[:, :4])
    assert type(stream.state["dn"]) is np.ndarray
    stream.update(fake_gpu.asarray(X[:, 4:]))
    assert type(stream.state["dn"]) is fake_gpu.ndarray
    assert_close(stream.transform(), features.transform(X), "float64")
    on_device = LMUFeatures(
        order=4, output="max", dtype="float64", device="gpu", return_gpu_arrays=True
    ).fit(X)
    assert type(on_device.stream(3).update(X).transform()) is fake_gpu.ndarray


@pytest.mark.gpu
def test_a_gpu_streams_state_restores_into_a_cpu_stream(fake_gpu):
    """A GPU stream's state (CuPy arrays) given to a CPU stream met np.asarray of CuPy
    arrays, which real CuPy refuses: the arrays are copied to the host first."""
    from fake_cupy import FakeDeviceArray, records_transfers

    X = np.random.default_rng(3).standard_normal((2, 8))
    gpu = LMUFeatures(order=3, dtype="float64", device="gpu").fit(X).stream(2)
    gpu.update(X[:, :5])
    state = gpu.state
    assert type(state["dn"]) is fake_gpu.ndarray
    cpu = LMUFeatures(order=3, dtype="float64", device="cpu").fit(X).stream(2)
    FakeDeviceArray.transfers.clear()
    cpu.state = state
    assert type(cpu.state["dn"]) is np.ndarray
    assert len(FakeDeviceArray.transfers) == 2 or not records_transfers(fake_gpu)
    assert_close(cpu.update(X[:, 5:]).transform(), gpu.update(X[:, 5:]).transform(), "float64")


@pytest.mark.gpu
def test_feature_stream_pickled_on_a_gpu_loads_without_one(fake_gpu, monkeypatch):
    from fake_cupy import uninstall

    X = np.random.default_rng(2).standard_normal((2, 8))
    features = LMUFeatures(order=3, dtype="float64", device="gpu").fit(X)
    blob = pickle.dumps(features.stream(2).update(X[:, :5]))
    uninstall(monkeypatch)
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


@pytest.mark.parametrize("output", ["final", "max"])
def test_float32_single_steps_of_a_long_window_carry_their_rounding(output):
    """A step's increment is about 1/theta of the state: over a window far longer than the
    steps seen, a float32 state rounded at every single step drifted (3.3e-6 of the scale
    after these 2e4 steps of a window of 1e6; 4e-5 after 1e5 steps of 1e7), where the
    batch recurrence carries its rounding (Kahan). The stream now carries it too: 9e-8.
    Bound: 1e-6, the batch's own distance here (3e-7) with margin."""
    n_steps = 20_000
    X = np.random.default_rng(3).standard_normal((2, n_steps))
    params = dict(order=4, theta=1e6, output=output)
    features = LMUFeatures(**params, dtype="float32").fit(X)
    reference = LMUFeatures(**params, dtype="float64", method="recurrence").fit(X).transform(X)
    stream = features.stream(2)
    for t in range(n_steps):
        stream.update(X[:, t])
    scale = np.abs(reference).max()
    assert np.abs(stream.transform() - reference).max() < 1e-6 * scale
    # a checkpoint carries the rounding: restored, the stream goes on identically
    copy = features.stream(2)
    copy.state = stream.state
    for piece in (stream, copy):
        for t in range(50):
            piece.update(X[:, t])
    np.testing.assert_array_equal(copy.transform(), stream.transform())


def test_an_object_array_of_numbers_updates_as_the_batch_reads_it():
    """fit reads an object array of numbers; a stream's update refused it (dtype object)."""
    X = np.random.default_rng(0).standard_normal((2, 30))
    features = LMUFeatures(order=4, dtype="float64").fit(X)
    stream = features.stream(2).update(X[:, :10].astype(object))
    stream.update(X[:, 10:].astype(object))
    assert_close(stream.transform(), features.transform(X), "float64")


def test_a_state_saved_without_the_carried_rounding_restores_with_zeros():
    X = np.random.default_rng(0).standard_normal((2, 30))
    stream = LMUFeatures(order=4, dtype="float32").fit(X).stream(2)
    stream.update(X[:, :10])
    older = {k: v for k, v in stream.state.items() if k != "dn_rounding"}
    restored = LMUFeatures(order=4, dtype="float32").fit(X).stream(2)
    restored.state = older
    np.testing.assert_array_equal(restored.state["dn"], stream.state["dn"])
    np.testing.assert_array_equal(restored.state["dn_rounding"], 0.0)


# ------------------------------------------------------------------ pooled features
# The pooled stream is checked against the step-by-step oracle lmu_sk.reference.pooled on
# random specs (windows of their own order, stride, theta and inputs; every transform and
# pool), and against LMUPooledFeatures.transform.
#
# Thresholds are placed halfway between two neighbouring values that the state takes on
# some prefix of the streamed sequences (or beyond all of them), at least 1e-4 of the
# state's magnitude from every value: the reference compares float64 states with them,
# while the stream, as the batch transform's CPU kernel, compares the states rounded to
# float32 (6e-8 relative), and the states of stream, reference and batch differ by
# rounding besides. A threshold that close to a state would make the count depend on that
# rounding; these cannot. For the same reason the 'compete' pools are asserted only where
# the two largest (and the two smallest) scaled states of every step differ by more than
# rounding, or are exactly equal (the zero state of a zero input, computed exactly by all).
#
# Tolerance against the reference, relative to the largest feature: 1e-10 in float64 (all
# float64 arithmetic, summed in other orders) and 1e-5 in float32 (the stream's float64
# features cast to float32: 6e-8). Against LMUPooledFeatures 1e-5 for both dtypes: its CPU
# kernel sums the states of 'mpv' in float32 (relative rounding of about
# n_blocks * 6e-8 of the state's magnitude; at most 40 blocks here), whatever the output
# dtype. The stream runs that kernel for a chunk of blocks on NumPy, so with 'mpv' the
# same 1e-5 holds against the reference too.
POOLED_TOLERANCE = {"float32": 1e-5, "float64": 1e-10}
BATCH_POOLED_TOLERANCE = 1e-5


class _FittedPooled(BaseEstimator):
    """What a fitted ``LMUPooledFeatures`` hands its stream, for any spec."""

    def __init__(self, dtype=None, device="cpu", return_gpu_arrays=False, channels_first=False):
        self.dtype = dtype
        self.device = device
        self.return_gpu_arrays = return_gpu_arrays
        self.channels_first = channels_first

    def fit(self, spec, biases, scales, n_channels):
        self.spec_, self.biases_, self.scales_ = spec, biases, scales
        self.n_channels_ = n_channels
        self.n_features_out_ = spec.n_features
        return self

    def stream(self, n_streams=1):
        return PooledStream(self, n_streams)


def transformed(X: np.ndarray, transforms) -> np.ndarray:
    """The inputs of the sequences ``X`` (n, t, c) of equal length, transform-major."""
    made = []
    for name in transforms:
        if name == "series":
            made.append(X)
        elif name == "difference":
            made.append(np.diff(X, axis=1, prepend=X[:, :1]))
        else:
            centred = X - X.mean(axis=1, keepdims=True)
            made.append(np.cumsum(centred, axis=1) / np.sqrt(X.shape[1]))
    return np.concatenate(made, axis=2)


def visited_states(X: np.ndarray, spec) -> list[np.ndarray]:
    """Per window, every state ``(n_visits, n_inputs_w, order_w)`` it takes on any prefix
    of ``X``: the states of the prefixes' blocks (the 'cumsum' input, and the last block
    mean, change with the prefix)."""
    visits = [[] for _ in spec.windows]
    for t in range(1, X.shape[1] + 1):
        inputs = transformed(X[:, :t], spec.transforms)
        for found, window in zip(visits, spec.windows, strict=True):
            u = inputs[:, :, list(window.inputs)]
            s = window.stride
            means = np.stack([u[:, a : a + s].mean(axis=1) for a in range(0, t, s)], axis=1)
            system = discrete_system(window.order, window.theta, spec.discretizer)
            states = recurrence(means, *system, output="sequence")
            found.append(states.reshape(-1, len(window.inputs), window.order))
    return [np.concatenate(found) for found in visits]


def decided_thresholds(states: np.ndarray, n_biases: int, rng) -> np.ndarray:
    """Thresholds ``(n_inputs, order, n_biases)`` (float32, ascending) of every state, each
    halfway between two neighbouring values of the state in ``states`` at least 1e-4 of
    its magnitude apart, or beyond all of them (see the notes above)."""
    _, k, d = states.shape
    out = np.empty((k, d, n_biases), dtype=np.float32)
    for j in range(k):
        for i in range(d):
            values = np.unique(states[:, j, i])
            size = max(float(np.abs(values).max()), 1e-3)
            gaps = np.flatnonzero(np.diff(values) > 1e-4 * size)
            middles = (values[gaps] + values[gaps + 1]) / 2
            beyond = [values[0] - 0.25 * size, values[-1] + 0.25 * size]
            pick = middles if len(middles) and rng.random() < 0.8 else np.asarray(beyond)
            out[j, i] = np.sort(rng.choice(pick, n_biases))
    return out


def competition_decided(states: np.ndarray, scale: np.ndarray) -> bool:
    """Whether on every visited step the largest and the smallest scaled state are clear
    (or the states are all exactly zero)."""
    if states.shape[2] < 2:
        return True
    scaled = np.sort(states * scale, axis=2)
    size = np.abs(scaled).max(axis=2)
    zero = size == 0
    top = scaled[..., -1] - scaled[..., -2]
    bottom = scaled[..., 1] - scaled[..., 0]
    return bool((zero | ((top > 1e-9 * size) & (bottom > 1e-9 * size))).all())


def pooled_fit(X: np.ndarray, spec, rng, **params) -> _FittedPooled:
    """A fitted stand-in with decided thresholds for ``X`` and random positive scales."""
    states = visited_states(X, spec)
    biases = [decided_thresholds(s, spec.n_biases, rng) for s in states]
    scales = [rng.uniform(0.5, 2.0, (len(w.inputs), w.order)) for w in spec.windows]
    assume(all(map(competition_decided, states, scales)))
    return _FittedPooled(**params).fit(spec, biases, scales, X.shape[2])


@st.composite
def pooled_specs(draw, n_channels: int):
    transforms = draw(st.lists(st.sampled_from(TRANSFORMS), min_size=1, max_size=3, unique=True))
    transforms = tuple(t for t in TRANSFORMS if t in transforms)
    n_inputs = len(transforms) * n_channels
    discretizer = draw(st.sampled_from(["zoh", "zoh", "euler"]))
    windows = []
    for _ in range(draw(st.integers(1, 3))):
        order = draw(st.integers(1, 5))
        theta = draw(st.floats(1.0, 20.0))
        if discretizer == "euler":
            theta = max(theta, 12.0 * order)  # within Euler's stability
        inputs = draw(
            st.lists(st.integers(0, n_inputs - 1), min_size=1, max_size=n_inputs, unique=True)
        )  # any subset, in any order
        windows.append(WindowSpec(order, theta, draw(st.integers(1, 4)), tuple(inputs)))
    pools = draw(st.lists(st.sampled_from(POOLS), min_size=1, max_size=7, unique=True))
    return PooledSpec(
        tuple(windows),
        transforms,
        tuple(p for p in POOLS if p in pools),
        draw(st.integers(1, 3)),
        discretizer,
    )


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 3), st.data())
def test_pooled_stream_equals_the_reference_on_every_prefix(n_channels, data):
    spec = data.draw(pooled_specs(n_channels))
    dtype = data.draw(st.sampled_from(["float32", "float64"]))
    n_streams = data.draw(st.sampled_from([1, 2, 3, 7]))
    n_steps = data.draw(st.integers(1, 40))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    # an offset per channel: 'cumsum' centres it away
    X = rng.standard_normal((n_streams, n_steps, n_channels)) + rng.normal(0, 3, n_channels)
    features = pooled_fit(X, spec, rng, dtype=dtype)
    stream = features.stream(n_streams)
    fed = X[:, :, 0] if n_channels == 1 and rng.random() < 0.5 else X  # one channel in 2-D
    as_steps = data.draw(st.booleans())
    for t in feed(stream, fed, split_points(data.draw, n_steps), as_steps):
        got = stream.transform()
        assert got.dtype == np.dtype(dtype) and stream.steps_seen == t
        expected = pooled(list(X[:, :t]), spec, features.biases_, features.scales_)
        assert got.shape == expected.shape == (n_streams, spec.n_features)
        scale = float(np.abs(expected).max())
        tolerance = BATCH_POOLED_TOLERANCE if "mpv" in spec.pools else POOLED_TOLERANCE[dtype]
        np.testing.assert_allclose(
            got, expected, rtol=0, atol=tolerance * scale, err_msg=f"prefix {t}"
        )


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 2), st.data())
def test_pooled_stream_equals_the_batch_transform_of_every_prefix(n_channels, data):
    n_windows = data.draw(st.integers(1, 3))
    thetas = data.draw(st.lists(st.floats(2.0, 60.0), min_size=n_windows, max_size=n_windows))
    transforms = data.draw(st.lists(st.sampled_from(TRANSFORMS), min_size=1, unique=True))
    dtype = data.draw(st.sampled_from(["float32", "float64"]))
    params = dict(
        thetas=sorted(thetas),
        order=data.draw(st.sampled_from([None, 1, 3, 6])),
        stride=data.draw(st.sampled_from(["auto", 1, 2, 5])),
        transforms=transforms,
        pools=data.draw(st.lists(st.sampled_from(POOLS), min_size=1, unique=True)),
        n_biases=data.draw(st.integers(1, 4)),
        dtype=dtype,
    )
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    features = LMUPooledFeatures(**params, channels_first=False).fit(
        rng.standard_normal((10, 30, n_channels))
    )
    n_streams, n_steps = data.draw(st.sampled_from([1, 3])), data.draw(st.integers(1, 30))
    X = rng.standard_normal((n_streams, n_steps, n_channels))
    # the fitted thresholds replaced by ones decided for these sequences (same shapes; see
    # the notes above)
    read = X if features.mixing_ is None else X @ features.mixing_  # with their sums
    states = visited_states(read, features.spec_)
    assert [b.shape for b in features.biases_] == [
        (*s.shape[1:], params["n_biases"]) for s in states
    ]
    features.biases_ = [decided_thresholds(s, params["n_biases"], rng) for s in states]
    assume(all(map(competition_decided, states, features.scales_)))
    stream = features.stream(n_streams)
    for t in feed(stream, X, split_points(data.draw, n_steps), data.draw(st.booleans())):
        got, expected = stream.transform(), features.transform(X[:, :t])
        assert got.dtype == expected.dtype == np.dtype(dtype)
        scale = float(np.abs(expected).max())
        np.testing.assert_allclose(
            got, expected, rtol=0, atol=BATCH_POOLED_TOLERANCE * scale, err_msg=f"prefix {t}"
        )


def test_pooled_stream_compares_states_rounded_to_float32_as_the_batch_kernel():
    """A state just above a threshold but within its float32 rounding: the stream does
    not count it, as the batch transform's CPU kernel; the float64 reference does."""
    spec = PooledSpec((WindowSpec(1, 3.0, 1, (0,)),), ("series",), ("ppv",), 1)
    Bbar = discrete_system(1, 3.0, "zoh")[1][0]
    # one step of input x gives the state Bbar * x
    x = next(x for x in np.linspace(1.0, 2.0, 101) if Bbar * x > np.float32(Bbar * x))
    thresholds = [np.full((1, 1, 1), np.float32(Bbar * x))]
    features = _FittedPooled(dtype="float64").fit(spec, thresholds, [np.ones((1, 1))], 1)
    X = np.full((1, 1, 1), x)
    assert pooled(list(X), spec, thresholds, features.scales_)[0, 0] == 1.0
    batch = engine_pooled_features(X, spec, thresholds, features.scales_, dtype=np.float64)
    assert batch[0, 0] == 0.0
    np.testing.assert_array_equal(features.stream(1).update(X).transform(), batch)


def small_spec(stride=2, transforms=TRANSFORMS, n_channels=2, pools=POOLS, n_biases=2):
    """Two windows of other orders and strides; the second one reads the last input of
    every transform, in reverse order."""
    n_inputs = len(transforms) * n_channels
    return PooledSpec(
        (
            WindowSpec(3, 4.0, stride, tuple(range(n_inputs))),
            WindowSpec(2, 6.0, stride + 1, tuple(range(n_inputs - 1, -1, -n_channels))),
        ),
        tuple(transforms),
        tuple(pools),
        n_biases,
    )


def fitted_pooled(spec, n_channels=2, seed=0, **params):
    """A stand-in with thresholds of random value (for tests that assert stream against
    stream, or with inputs whose states they do not approach) and random scales."""
    rng = np.random.default_rng(seed)
    biases = [
        np.sort(rng.normal(0, 0.5, (len(w.inputs), w.order, spec.n_biases)), axis=-1).astype(
            np.float32
        )
        for w in spec.windows
    ]
    scales = [rng.uniform(0.5, 2.0, (len(w.inputs), w.order)) for w in spec.windows]
    return _FittedPooled(**params).fit(spec, biases, scales, n_channels)


def pooled_stream(dtype="float32", stride=2, n_streams=3, n_channels=2, **spec_params):
    features = fitted_pooled(small_spec(stride, n_channels=n_channels, **spec_params), dtype=dtype)
    return features.stream(n_streams), features


def expected_pooled(features, X):
    return pooled(list(X), features.spec_, features.biases_, features.scales_)


def assert_pooled_close(got, expected, features, dtype: str = "float64"):
    """Pooled features against the reference: with 'mpv' to float32's accuracy, as the
    batch kernel that runs the stream's chunks sums its states (see POOLED_TOLERANCE)."""
    if "mpv" in features.spec_.pools:
        scale = float(np.max(np.abs(expected)))
        np.testing.assert_allclose(got, expected, rtol=0, atol=BATCH_POOLED_TOLERANCE * scale)
    else:
        assert_close(got, expected, dtype)


@pytest.mark.parametrize("chunked", [True, False])
def test_pooled_stream_advances_moderate_inputs_in_place_as_the_checked_path(monkeypatch, chunked):
    # inputs and states of moderate size advance the pools where they are, unchecked
    # (no copy of them per update); the same pools, bit for bit, as the path that advances
    # copies and checks them, which larger values take
    X = np.random.default_rng(2).standard_normal((3, 23, 2)) * 100.0
    checked, _ = pooled_stream(dtype="float64", stride=1)  # strides 1 and 2
    fast, _ = pooled_stream(dtype="float64", stride=1)
    every_step = [w for w, window in enumerate(fast.spec.windows) if window.stride == 1]
    assert every_step  # windows advanced at every update
    pools = [f"thresholds_{w}" for w in every_step]
    steps = [(0, 10), (10, 11), (11, 23)] if chunked else [(t, t + 1) for t in range(23)]
    for start, stop in steps:
        held = {name: fast._arrays[name] for name in pools}
        fast.update(X[:, start:stop])
        assert all(fast._arrays[name] is a for name, a in held.items())  # in place
        with monkeypatch.context() as patch:
            patch.setattr(streaming, "MODERATE", -1.0)  # nothing is moderate
            held = {name: checked._arrays[name] for name in pools}
            checked.update(X[:, start:stop])
            assert not any(checked._arrays[name] is a for name, a in held.items())
        assert_unchanged(fast, checked.state)  # the same state
    np.testing.assert_array_equal(fast.transform(), checked.transform())


def test_pooled_stream_checks_inputs_beyond_moderate():
    # a chunk beyond MODERATE takes the checked path: its pools are new arrays
    stream, _ = pooled_stream(dtype="float64", stride=2)
    stream.update(np.ones((3, 3, 2)))
    held = stream._arrays["thresholds_0"]
    stream.update(np.full((3, 2, 2), 10 * streaming.MODERATE))
    assert stream._arrays["thresholds_0"] is not held
    assert np.isfinite(stream.transform()).all()


def test_pooled_stream_blocks_over_groups_of_streams(monkeypatch):
    # one stream per group of rows: the grouping of long chunks
    monkeypatch.setattr(engine_stream, "_BLOCK_BYTES", 1)
    stream, features = pooled_stream(dtype="float64", stride=1, n_streams=5)
    X = np.random.default_rng(1).standard_normal((5, 45, 2))
    stream.update(X[:, :40]).update(X[:, 40:])
    assert_pooled_close(stream.transform(), expected_pooled(features, X), features)


def test_pooled_stream_over_many_blocks_in_chunks_and_steps():
    """300 steps: the running sums of 'cumsum' grow past their first allocation, runs and
    competitions carry across chunk boundaries."""
    stream, features = pooled_stream(dtype="float64", stride=1, n_streams=2)
    X = np.random.default_rng(11).standard_normal((2, 300, 2)) + 1.5
    stream.update(X[:, :137])
    for t in range(137, 150):
        stream.update(X[:, t])
    stream.update(X[:, 150:])
    assert stream.state["cumsum_1"].shape == (2, 300, 2)
    assert_pooled_close(stream.transform(), expected_pooled(features, X), features)


def test_pooled_stream_evaluates_the_block_under_way_without_committing_it():
    stream, features = pooled_stream(dtype="float64", stride=4)
    X = np.random.default_rng(2).standard_normal((3, 11, 2))
    stream.update(X[:, :6])  # one whole block of the first window and half of the next
    committed = stream.state
    assert_pooled_close(stream.transform(), expected_pooled(features, X[:, :6]), features)
    assert_unchanged(stream, committed)  # asking did not commit the half block
    # the series' steps of the block under way (columns: transform-major)
    np.testing.assert_allclose(committed["block_sum_4"][:, :2], X[:, 4:6].sum(axis=1))
    stream.update(X[:, 6]).update(X[:, 7:])
    assert_pooled_close(stream.transform(), expected_pooled(features, X), features)


def test_pooled_stream_with_the_channels_first():
    spec = small_spec(stride=2, n_channels=3)
    features = fitted_pooled(spec, n_channels=3, dtype="float64", channels_first=True)
    X = np.random.default_rng(3).standard_normal((2, 3, 9))  # (streams, channels, steps)
    stream = features.stream(2).update(X[:, :, :4]).update(X[:, :, 4]).update(X[:, :, 5:])
    expected = expected_pooled(features, X.transpose(0, 2, 1))
    assert_pooled_close(stream.transform(), expected, features)


@pytest.mark.parametrize("stride", [1, 3])
def test_pooled_checkpoint_reset_and_pickle_continue_identically(stride):
    stream, _ = pooled_stream(dtype="float64", stride=stride)
    X = np.random.default_rng(4).standard_normal((3, 17, 2))
    stream.update(X[:, :7])  # with stride 3: two whole blocks and one step of the third
    checkpoint = stream.state
    keys = {"steps_seen", "last", "origin", "sum", f"cumsum_{stride}", f"cumsum_{stride + 1}"}
    keys |= {"largest_seen"}  # every stream's largest input magnitude, bounding the states
    keys |= {f"{name}_{w}" for name in ("dn", "thresholds", "moments", "compete") for w in (0, 1)}
    keys |= {f"block_sum_{s}" for s in (stride, stride + 1) if s > 1}
    assert set(checkpoint) == keys
    # window 0: 4 streamed inputs (series, difference) of order 3; 2 thresholds
    assert checkpoint["dn_0"].shape == (3, 4, 3)
    assert checkpoint["thresholds_0"].shape == (3, 4, 3, 5, 2)
    assert checkpoint["compete_1"].shape == (3, 2, 2, 2)  # window 1 streams 2 inputs
    assert checkpoint[f"cumsum_{stride}"].shape == (3, 7 // stride, 2)
    np.testing.assert_array_equal(checkpoint["largest_seen"], np.abs(X[:, :7]).max(axis=(1, 2)))
    blob = pickle.dumps(stream)
    expected = stream.update(X[:, 7:]).transform()

    stream.state = checkpoint  # fewer blocks of running sums than the stream holds now
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
    assert np.isneginf(checkpoint["moments_0"][..., 1]).all()  # no whole block yet
    assert np.isposinf(checkpoint["moments_1"][..., 2]).all()
    expected = stream.update(X[:, 2:]).transform()
    stream.state = checkpoint
    np.testing.assert_array_equal(stream.update(X[:, 2:]).transform(), expected)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda s: s.pop("last"), "keys"),
        (lambda s: s.update(dn_0=s["dn_0"][:, :1]), "shape"),
        (lambda s: s.update(cumsum_3=s["cumsum_3"][:, :1]), "shape"),
        (lambda s: s["thresholds_0"].__setitem__((0, 0, 0, 0, 0), 9.0), "counts of blocks"),
        (lambda s: s["thresholds_0"].__setitem__((0, 0, 0, 3, 1), 0.5), "counts of blocks"),
        (lambda s: s["compete_1"].__setitem__((0, 0, 0, 0), -1.0), "counts of blocks"),
        (lambda s: s["moments_0"].__setitem__((0, 0, 0, 1), -np.inf), "NaN or infinity"),
        (lambda s: s["block_sum_3"].__setitem__((0, 0), np.nan), "NaN or infinity"),
        (lambda s: s["cumsum_3"].__setitem__((0, 0, 0), np.inf), "NaN or infinity"),
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
    stream, features = pooled_stream()
    with pytest.raises(ValueError, match="no step yet"):
        stream.transform()
    stream.update(np.zeros((3, 1, 2)))  # within the first block of both windows
    assert stream.transform().shape == (3, features.n_features_out_)


def test_pooled_stream_refuses_fitted_attributes_that_do_not_fit_the_spec():
    spec = small_spec()
    features = fitted_pooled(spec)
    features.biases_ = features.biases_[:1]
    with pytest.raises(ValueError, match="one array per window"):
        features.stream()
    features = fitted_pooled(spec)
    features.scales_[1] = features.scales_[1][:, :1]
    with pytest.raises(ValueError, match="Window 1"):
        features.stream()
    features = fitted_pooled(spec, n_channels=1)  # inputs of 2 channels on 1
    with pytest.raises(ValueError, match="beyond the 3 inputs"):
        features.stream()


def test_pooled_stream_of_one_pool_and_one_transform():
    for pools, transforms in [(("lspv",), ("difference",)), (("compete",), ("cumsum",))]:
        spec = small_spec(stride=2, transforms=transforms, pools=pools)
        features = fitted_pooled(spec, dtype="float64")
        X = np.random.default_rng(7).standard_normal((2, 13, 2))
        stream = features.stream(2).update(X[:, :5]).update(X[:, 5:])
        assert_pooled_close(stream.transform(), expected_pooled(features, X), features)


# ------------------------------------------------------------------ the default classifier
@pytest.fixture(scope="module")
def default_classifier():
    """``LMUClassifier()`` on 600-step series: pooled features of several strides and
    every transform, ridge head."""
    rng = np.random.default_rng(8)
    n_samples, n_steps = 36, 600
    y = np.arange(n_samples) % 3
    t = np.arange(n_steps)
    X = rng.standard_normal((n_samples, n_steps)) + np.sin(t[None, :] * (y[:, None] + 1) / 40)
    model = LMUClassifier().fit(X, y)
    assert model.head_kind_ == "ridge" and len(set(model.features_.strides_)) > 1
    assert "cumsum" in model.features_.spec_.transforms
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
    stream = model.stream(3).update(X[:, :10])  # within a block of the longer windows
    assert any(10 % s for s in model.features_.strides_)
    loaded = pickle.loads(pickle.dumps(stream))
    np.testing.assert_array_equal(loaded.decision_function(), stream.decision_function())
    for t in range(10, 40):
        loaded.update(X[:, t])
        stream.update(X[:, t])
    np.testing.assert_array_equal(loaded.decision_function(), stream.decision_function())
    np.testing.assert_array_equal(loaded.predict(), stream.predict())
    assert loaded.steps_seen == 40 and {"sum", "dn_0", "moments_0"} <= set(loaded.state)


def test_a_copied_model_stream_is_independent(default_classifier):
    """copy.copy of a model stream advanced the original's features with the copy's, as
    copy.copy of a features' stream does not."""
    import copy

    model, rng = default_classifier
    X = rng.standard_normal((2, 30))
    stream = model.stream(2).update(X[:, :10])
    other = copy.copy(stream)
    other.update(X[:, 10:])
    assert stream.steps_seen == 10 and other.steps_seen == 30
    np.testing.assert_allclose(
        stream.update(X[:, 10:]).decision_function(), other.decision_function(), rtol=0, atol=0
    )


def test_stream_refuses_input_the_batch_refuses_for_float32_thresholds(default_classifier):
    """Values whose states may pass float32's range (the thresholds' type): the batch
    transform refused them and the stream took them, answering silently; now both
    refuse, and the stream is left unchanged."""
    model, rng = default_classifier
    X = rng.standard_normal((2, 40))
    X[0, 5] = 1e38  # below float32's largest: the range check of the dtype passes
    with pytest.raises(ValueError, match="beyond the largest float32"):
        model.predict(X)
    stream = model.stream(2).update(X[:, :5])
    state = stream.state
    with pytest.raises(ValueError, match=r"beyond the largest float32.*left unchanged"):
        stream.update(X[:, 5:])
    for key, value in stream.state.items():
        np.testing.assert_array_equal(value, state[key])


@pytest.mark.parametrize("value", [3e34, 3e35])
def test_a_stream_refuses_from_the_step_its_prefix_is_refused_at(value):
    """A large value taken early grows with the steps after it: the batch transform
    bounds its whole input by its length's gain, the stream checked each update's own
    values only (one step of 1e37 then zeros: accepted for 400 steps where the batch
    refuses it). Now the stream refuses at the first step whose prefix the batch refuses,
    and goes on refusing (its state left as it was)."""
    rng = np.random.default_rng(0)
    features = LMUPooledFeatures(order=8).fit(rng.standard_normal((10, 200)))
    prefix = np.zeros((1, 200))
    prefix[0, 0] = value
    stream = features.stream(1)
    refused_at = None
    for step in range(200):
        try:
            features.transform(prefix[:, : step + 1])
            batch_refuses = False
        except ValueError:
            batch_refuses = True
        if batch_refuses:
            with pytest.raises(ValueError, match=r"steps seen before U hold|U holds"):
                stream.update(prefix[:, step])
            refused_at = step if refused_at is None else refused_at
            assert stream.steps_seen == refused_at
        else:
            assert refused_at is None  # the batch refuses every longer prefix too
            stream.update(prefix[:, step])
    assert refused_at is not None and refused_at > 1
    # the bound is the state's: a checkpoint restored carries it, a reset clears it
    fresh = features.stream(1)
    clean = fresh.state
    fresh.update(prefix[:, :1])
    bounded = fresh.state
    fresh.state = clean
    fresh.update(np.zeros((1, 199)))  # as the batch takes 200 zeros
    other = features.stream(1)
    other.state = bounded
    with pytest.raises(ValueError, match="steps seen before U hold"):
        other.update(np.zeros((1, 199)))
    other.reset().update(np.zeros((1, 199)))


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


@pytest.mark.gpu
def test_pooled_stream_stays_on_the_device(fake_gpu, monkeypatch):
    from fake_cupy import uninstall

    X = np.random.default_rng(10).standard_normal((3, 13, 2))
    features = fitted_pooled(small_spec(stride=2), dtype="float64", device="gpu")
    expected = expected_pooled(features, X)
    stream = features.stream(3).update(X[:, :5]).update(fake_gpu.asarray(X[:, 5])).update(X[:, 6:])
    state = stream.state
    assert type(state["dn_0"]) is fake_gpu.ndarray and type(state["cumsum_2"]) is fake_gpu.ndarray
    got = stream.transform()
    assert type(got) is np.ndarray
    assert_pooled_close(got, expected, features)
    features.return_gpu_arrays = True
    on_device = features.stream(3).update(X)
    assert type(on_device.transform()) is fake_gpu.ndarray
    blob = pickle.dumps(stream)
    uninstall(monkeypatch)
    loaded = pickle.loads(blob)
    assert type(loaded.state["dn_0"]) is np.ndarray
    assert_pooled_close(loaded.transform(), expected, features)


# ---------------------------------------------------------------------------- threads
def _hammer(stream, step, n_threads: int, n_updates: int, read=None) -> None:
    """``n_threads`` threads each calling ``stream.update(step)`` ``n_updates`` times (and
    ``read(stream)`` after each update), with a short switch interval so that a thread is
    interrupted often, inside the stream's methods."""
    import sys
    import threading

    errors = []

    def work():
        try:
            for _ in range(n_updates):
                stream.update(step)
                if read is not None:
                    read(stream)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work) for _ in range(n_threads)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors


def test_a_stream_shared_by_threads_equals_the_same_updates_in_turn():
    """Audit N1: 8 threads x 2 000 one-step updates of one 'mean' stream gave results that
    differed from run to run. The stream's methods hold a lock: every update is whole, and
    the result is that of the 16 000 updates made one after the other (the steps are
    equal, so their order does not matter; bit for bit)."""
    X = np.random.default_rng(0).standard_normal((10, 30))
    features = LMUFeatures(order=6, output="mean", dtype="float64").fit(X)
    shared = features.stream(4)
    _hammer(shared, np.ones(4), n_threads=8, n_updates=2000)
    alone = features.stream(4)
    for _ in range(16_000):
        alone.update(np.ones(4))
    assert shared.steps_seen == 16_000
    np.testing.assert_array_equal(shared.transform(), alone.transform())
    np.testing.assert_array_equal(shared.state["mean"], alone.state["mean"])


def test_the_default_models_stream_shared_by_threads_stays_exact():
    """N1 on the default model's stream (pooled features, ridge head), updated and asked
    for probabilities from 4 threads at once: the end state is that of the updates made in
    turn, and every answer a thread got is a valid probability row."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((40, 32))
    y = (X[:, -8:].sum(axis=1) > 0).astype(int)
    model = LMUClassifier().fit(X, y)
    step = rng.standard_normal(3)
    answers = []
    shared = model.stream(3)
    _hammer(
        shared, step, n_threads=4, n_updates=150, read=lambda s: answers.append(s.predict_proba())
    )
    alone = model.stream(3)
    for _ in range(600):
        alone.update(step)
    np.testing.assert_array_equal(shared.transform(), alone.transform())
    np.testing.assert_array_equal(shared.predict_proba(), alone.predict_proba())
    assert len(answers) == 600
    assert all(np.allclose(p.sum(axis=1), 1.0) and np.isfinite(p).all() for p in answers)


def test_a_stream_with_its_lock_pickles_and_copies():
    """The lock is not part of the saved stream: pickles and copies get a lock of their
    own (and the copy is independent)."""
    import copy

    X = np.random.default_rng(2).standard_normal((10, 20))
    stream = LMUFeatures(order=4, output="mean").fit(X).stream(2)
    stream.update(X[:2, :5])
    for other in (pickle.loads(pickle.dumps(stream)), copy.deepcopy(stream)):
        assert other._lock is not stream._lock
        other.update(X[:2, 5:])
        np.testing.assert_array_equal(other.transform(), stream.update(X[:2, 5:]).transform())
        stream.state = other.state  # the same prefix again for the next copy
        stream.reset().update(X[:2, :5])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gpu_pooled_stream_compares_in_the_dtype_of_the_gpu_batch(fake_gpu, dtype):
    """A state just above a threshold but within its float32 rounding: on a GPU the batch
    transform compares in the features' dtype (it counts the state in float64, not in
    float32), and so does the stream there."""
    spec = PooledSpec((WindowSpec(1, 3.0, 1, (0,)),), ("series",), ("ppv",), 1)
    Bbar = discrete_system(1, 3.0, "zoh")[1][0]
    x = next(x for x in np.linspace(1.0, 2.0, 101) if Bbar * x > np.float32(Bbar * x))
    thresholds = [np.full((1, 1, 1), np.float32(Bbar * x))]
    features = _FittedPooled(dtype=dtype, device="gpu").fit(spec, thresholds, [np.ones((1, 1))], 1)
    X = np.full((1, 1, 1), x)
    batch = engine_pooled_features(
        X, spec, thresholds, features.scales_, dtype=np.dtype(dtype), xp=fake_gpu
    )
    batch = np.asarray(batch)
    assert batch[0, 0] == (1.0 if dtype == "float64" else 0.0)
    stream = features.stream(1)
    np.testing.assert_array_equal(stream.update(X[:, 0]).transform(), batch)


def test_a_streams_log_probabilities_do_not_underflow():
    """The ridge head's log probabilities come from its logits, as the classifier's: the
    stream took the log of probabilities that had underflowed (-inf where the batch
    prediction gives -1185). The linear model: its logits grow with the input (the
    Gaussian kernel's are bounded)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 30))
    y = (X[:, -8:].sum(axis=1) > 0).astype(int)
    model = LMUClassifier(device="cpu", kernel="linear").fit(X, y)
    prefixes = X[:3] * 1e3
    stream = model.stream(3)
    stream.update(prefixes)
    expected = model.predict_log_proba(prefixes)
    assert np.isfinite(expected).all() and expected.min() < -700
    np.testing.assert_allclose(stream.predict_log_proba(), expected, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("cuts", [[0, 1, 701, 1724, 1725, 3000], [0, 1024, 2048, 3000]])
def test_a_pooled_stream_in_float64_is_the_batch_bit_for_bit(cuts):
    """The sums of the states above the thresholds run in float32 and are flushed into
    float64 every 1 024 blocks; a stream flushed them at every update, so its features
    differed from the batch's by 1.3e-5 in float64. It carries the float32 sum since the
    last flush and flushes where the batch does: equal."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((12, 3000, 2)).cumsum(axis=1) * 0.1 + 5.0
    features = LMUPooledFeatures(dtype="float64").fit(X[:8])
    stream = features.stream(4)
    for a, b in itertools.pairwise(cuts):
        stream.update(X[8:, a:b])
    np.testing.assert_array_equal(stream.transform(), features.transform(X[8:]))


def test_a_pooled_stream_state_saved_with_four_sums_is_taken():
    """States saved before the float32 sum was carried apart hold four sums per threshold
    (the float32 one inside the float64 sum): restored with a fifth, zero, the stream goes
    on to the features it had, to the float32 rounding of those sums that such streams
    had (1e-6: 30 more steps of relative rounding 6e-8 against features of order 1)."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((6, 60))
    features = LMUPooledFeatures(dtype="float64").fit(X)
    stream = features.stream(6)
    stream.update(X[:, :30])
    state = stream.state
    old = dict(state)
    for name in [n for n in state if n.startswith("thresholds_")]:
        merged = state[name][..., :4, :].copy()
        merged[..., 1, :] += state[name][..., 4, :]
        old[name] = merged
    restored = features.stream(6)
    restored.state = old
    expected = stream.update(X[:, 30:]).transform()
    got = restored.update(X[:, 30:]).transform()
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)
    assert np.abs(got - expected).max() > 0  # (the grouping of the sums did change)
    as_lists = features.stream(6)  # nested lists, as a state saved as JSON comes back
    as_lists.state = {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in old.items()}
    np.testing.assert_array_equal(as_lists.update(X[:, 30:]).transform(), got)


def test_a_float32_streams_channel_sums_are_mixed_as_the_batch_mixes_them():
    """The batch reads its input in float32 and sums the channels there; the stream summed
    them in float64, so its states differed at float32 rounding and counts above the
    thresholds flipped (up to 6.7e-4 in a proportion). Now the sums are rounded alike."""
    rng = np.random.default_rng(2)
    X = rng.standard_normal((16, 700, 3)).cumsum(axis=1) * 0.1
    y = (X[:, -1, 0] > 0).astype(int)
    model = LMUClassifier(dtype="float32").fit(X[:12, :120], y[:12])
    assert model.features_.mixing_ is not None  # the channels' sums are read
    stream = model.stream(4)
    stream.update(X[12:, :300])
    stream.update(X[12:, 300:])
    expected = model.features_.transform(X[12:])
    np.testing.assert_allclose(stream.transform(), expected, rtol=0, atol=1e-7)


def test_a_dense_binary_stream_takes_its_small_probabilities_from_the_logits():
    """The stream's logistic output gave the other class 1 - p in float32: a probability
    of 1.8e-12 became 0 and its log -inf, where the batch (from the logits, in float64)
    gives -27.06. From the logits too, they agree to the float32 network's rounding of the
    logits (about 1e-7 of them; log-probabilities within 1e-4 at logits up to 50)."""
    rng = np.random.default_rng(10)
    X = rng.standard_normal((50, 22, 3))
    y = (X[:, :, 0].sum(1) + X[:, :, -1].sum(1) > 0).astype(int)
    model = LMUClassifier(
        head="dense",
        hidden_layer_sizes=(6,),
        max_iter=20,
        random_state=0,
        device="cpu",
        feature_output="pooled",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the few epochs do not converge)
        model.fit(X, y)
    stream = model.stream(5)
    smallest = 0.0
    for t in range(22):
        stream.update(X[:5, t])
        batch = model.predict_log_proba(X[:5, : t + 1])
        got = stream.predict_log_proba()
        assert np.isfinite(got).all()
        np.testing.assert_allclose(got, batch, rtol=0, atol=1e-4)
        np.testing.assert_allclose(
            stream.predict_proba(), model.predict_proba(X[:5, : t + 1]), rtol=1e-4, atol=0
        )
        smallest = min(smallest, batch.min())
    assert smallest < -20  # the case the float32 complement rounded away


def test_an_update_with_one_object_that_is_no_number_is_a_type_error():
    """A dict, a set or another object given to update (a 0-d object array to NumPy)
    raised AttributeError ('bool' object has no attribute 'astype') from the reading of
    missing values; it is the TypeError the batch gives, naming the value."""
    rng = np.random.default_rng(0)
    model = LMUClassifier(device="cpu").fit(rng.standard_normal((20, 30)), np.arange(20) % 2)
    stream = model.stream(1)
    for bad, kind in (({"a": 1}, "dict"), ({1, 2}, "set"), (object(), "object")):
        with pytest.raises(TypeError, match=f"U is {kind} .*not a number"):
            stream.update(bad)
    assert stream.steps_seen == 0


def test_a_chunk_beyond_memory_is_refused_and_leaves_the_stream(monkeypatch):
    """A pooled stream's update made float64 copies of 8.4 times a chunk's size, unplanned:
    a chunk of 2 000 streams x 50 000 steps died with a raw MemoryError. Long chunks are
    estimated first; the stream is left as it was."""
    import lmu_sk._memory as memory

    rng = np.random.default_rng(0)
    model = LMUClassifier(order=4).fit(rng.standard_normal((20, 50)), np.arange(20) % 2)
    stream = model.stream(20).update(rng.standard_normal((20, 30)))
    before = stream.predict_proba()
    monkeypatch.setattr(streaming, "_CHUNK_UNCHECKED_BYTES", 0)
    monkeypatch.setattr(memory, "available_memory", lambda **kwargs: 100_000)
    with pytest.raises(ValueError, match=r"chunk of 300 steps of 20 streams.*shorter chunks"):
        stream.update(rng.standard_normal((20, 300)))
    np.testing.assert_array_equal(stream.predict_proba(), before)

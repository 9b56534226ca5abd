"""The streamed features: those of the inputs a stream carries step by step (all but the
'cumsum' ones), computed alone in the batch and in a stream, and finished from carried
pools without the Delay Network."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from lmu_sk import LMUPooledFeatures
from lmu_sk.dn import discrete_system
from lmu_sk.engine.pooling import MOMENT_POOLS, THRESHOLD_POOLS, state_columns
from lmu_sk.kernels import cpu


def _batch(features, X, streamed=False):
    U = features._validate_input(X, False, features._finite_input_first, np.float64)
    return np.asarray(features._features(U, False, np.float64, streamed=streamed))


def _names(features):
    return features.get_feature_names_out()


@pytest.mark.parametrize(
    ("shape", "params"),
    [
        ((24, 90), {}),
        ((24, 60, 3), {}),
        ((24, 50, 40), {}),  # many channels: the best separating kept
        ((24, 50, 3), {"channel_sums": True}),  # sums of channels read (mixing_)
        ((24, 60), {"transforms": ("series", "cumsum")}),
        ((24, 60), {"transforms": ("series", "difference")}),  # no 'cumsum': all of them
        ((24, 60), {"transforms": ("cumsum",)}),  # 'cumsum' alone: none
        ((24, 60), {"pools": ("mean", "max", "min", "compete")}),
    ],
)
def test_the_streamed_features_are_the_columns_not_made_by_cumsum(shape, params):
    rng = np.random.default_rng(0)
    X = rng.standard_normal(shape)
    y = np.arange(shape[0]) % 2
    features = LMUPooledFeatures(**params).fit(X, y)
    if params.get("channel_sums"):
        assert features.mixing_.shape[1] > shape[2]
    columns = features.streamed_columns()
    # the names tell the input: 's' for the cumulative sum
    names = _names(features)
    by_cumsum = np.array([name.split("_")[1].startswith("s") for name in names])
    np.testing.assert_array_equal(columns, np.flatnonzero(~by_cumsum))
    # computed alone, they are those columns of all the features, bit for bit
    streamed = _batch(features, X, streamed=True)
    np.testing.assert_array_equal(streamed, _batch(features, X)[:, columns])
    if "cumsum" not in features.spec_.transforms:
        assert len(columns) == features.n_features_out_
    if features.spec_.transforms == ("cumsum",):
        assert streamed.shape == (shape[0], 0)


@pytest.mark.parametrize("n_channels", [1, 3])
def test_a_stream_gives_the_streamed_features_of_every_prefix(n_channels):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((6, 70, n_channels))[..., 0 if n_channels == 1 else slice(None)]
    features = LMUPooledFeatures().fit(X)
    columns = features.streamed_columns()
    assert 0 < len(columns) < features.n_features_out_
    stream = features.stream(len(X))
    for t in range(X.shape[1]):
        stream.update(X[:, t])
        if t % 5 and t != X.shape[1] - 1:
            continue
        streamed = stream._feature_rows(float64=True, streamed=True)
        # exactly the stream's own features at those columns (the stride-1 windows from
        # their carried pools alone, the others continued over the block under way)
        np.testing.assert_array_equal(streamed, stream._feature_rows(float64=True)[:, columns])
        # and the batch's streamed features of the prefix: the stream compares the states
        # with the thresholds rounded to float32 as the batch kernel does, but sums the
        # states above them in another grouping (float32 sums of about 70 terms)
        expected = _batch(features, X[:, : t + 1], streamed=True)
        np.testing.assert_allclose(streamed, expected, rtol=1e-5, atol=1e-5)


@settings(max_examples=30, deadline=None)
@example(  # order 8: the kernels' own recurrence (the state in registers)
    order=8, n_biases=3, with_moments=True, kept={"ppv", "mpv", "lspv", "max"}, compete=True,
    pending="some", seed=8,
)  # fmt: skip
@given(
    order=st.sampled_from([1, 2, 3, 4, 5, 6, 8, 9]),
    n_biases=st.integers(0, 4),
    with_moments=st.booleans(),
    kept=st.sets(st.sampled_from(THRESHOLD_POOLS + MOMENT_POOLS), min_size=1),
    compete=st.booleans(),
    pending=st.sampled_from(["none", "some", "all"]),
    seed=st.integers(0, 2**16),
)
def test_pools_finished_over_at_most_one_step_are_the_kernels_own(
    order, n_biases, with_moments, kept, compete, pending, seed
):
    # pooled_features over at most one step more (a stream's block under way) finishes
    # carried pools with a kernel of its own: the values of the pooled kernel resumed over
    # that step
    rng = np.random.default_rng(seed)
    n, k, K = 5, 2, n_biases
    Abar, Bbar = discrete_system(order, 7.0, "zoh")
    A_T = np.ascontiguousarray(Abar.T)
    biases = rng.normal(0, 0.3, (k, order, K)).astype(np.float32)
    scale = rng.uniform(0.5, 2.0, (k, order))
    dn = rng.standard_normal((n, k, order))
    sums = np.zeros((n, k, order, cpu.CARRIED_SUMS, K))
    sums[..., 0, :] = rng.integers(0, 30, (n, k, order, K))  # counts, some zero
    sums[..., 1, :] = rng.standard_normal((n, k, order, K)) * sums[..., 0, :]
    sums[..., 2, :] = rng.integers(0, 5, (n, k, order, K))
    sums[..., 3, :] = rng.integers(0, 30, (n, k, order, K))
    moments = rng.standard_normal((n, k, order, 3))
    wins = rng.integers(0, 30, (n, k, 2 * order)).astype(np.float64)
    # any subset of the pools kept (each kept pool of the thresholds K columns in a row)
    columns = state_columns(K, tuple(kept))
    per_state = len(columns)
    positions = np.array([1, 0])  # the inputs written in the other order
    values_at = 3
    compete_at = values_at + k * order * per_state if compete else None
    width = values_at + k * order * per_state + (2 * k * order if compete else 0)
    counted = np.full(n, 30)
    lengths = {"none": np.zeros(n), "some": np.arange(n) % 2, "all": np.ones(n)}[pending]
    lengths = lengths.astype(np.int64)
    U = rng.standard_normal((n, int(lengths.max()), k + 1))  # the window reads two of 3
    inputs = np.array([2, 0])
    finished = np.full((n, width), np.nan)
    cpu.pooled_features(
        U, lengths, A_T, Bbar, biases, scale, finished, columns, values_at, compete_at,
        with_moments=with_moments, inputs=inputs,
        positions=positions, carried=(dn, sums, moments, wins), counted=counted,
    )  # fmt: skip
    resumed = np.full((n, width), np.nan)
    kernels = cpu.WindowKernels(A_T, Bbar, biases, scale, columns, with_moments, inputs)
    kernels.pool(
        U, lengths, (dn, sums, moments, wins), counted, resumed, positions, values_at,
        compete_at,
    )  # fmt: skip
    if pending == "none":  # the same arithmetic on the carried values: bit for bit
        np.testing.assert_array_equal(finished, resumed)
    # the new state is the same dot product, its terms summed in an order LLVM picks in
    # each kernel (reassociation allowed): the last bit may differ, and the mean of the
    # states with it; the thresholds compare the state rounded to float32, so a count
    # changes only for a state within a bit of a float32 rounding point of a threshold
    np.testing.assert_allclose(finished, resumed, rtol=1e-13, atol=1e-13)
    assert np.isfinite(finished[:, values_at:]).all()
    assert np.isnan(finished[:, :values_at]).all()  # nothing written before values_at


@pytest.mark.gpu
def test_a_stream_on_a_gpu_gives_the_streamed_features(fake_gpu):
    from lmu_sk._device import to_numpy

    X = np.random.default_rng(3).standard_normal((5, 40, 2))
    features = LMUPooledFeatures(device="gpu", dtype="float64").fit(X)
    stream = features.stream(len(X))
    columns = features.streamed_columns()
    for t in range(X.shape[1]):
        stream.update(X[:, t])
        if t in (6, 19, 39):  # whole blocks of every stride, or some under way
            streamed = stream._feature_rows(float64=True, streamed=True)
            assert type(streamed) is fake_gpu.ndarray
            full = to_numpy(stream._feature_rows(float64=True))
            np.testing.assert_array_equal(to_numpy(streamed), full[:, columns])


@pytest.mark.gpu
def test_the_early_classifier_decides_on_a_gpu_as_on_the_cpu(fake_gpu):
    from lmu_sk import LMUClassifier, LMUEarlyClassifier

    rng = np.random.default_rng(4)
    y = np.arange(40) % 2
    X = rng.standard_normal((40, 60)) + 1.5 * y[:, None] * (np.arange(60) < 20)
    decided = {}
    for device in ("cpu", "gpu"):
        estimator = LMUClassifier(device=device, dtype="float64")
        model = LMUEarlyClassifier(estimator, checkpoints=6).fit(X, y)
        decided[device] = model.decide(X)
    np.testing.assert_array_equal(decided["gpu"].labels, decided["cpu"].labels)
    np.testing.assert_array_equal(decided["gpu"].steps, decided["cpu"].steps)
    # the states compared with the thresholds in float64 on the GPU, rounded to float32
    # on the CPU: a state within that rounding of a threshold counts on the other side,
    # a block of 60 in a proportion; the probabilities agree to a few 1e-5 (5e-5 seen)
    np.testing.assert_allclose(decided["gpu"].proba, decided["cpu"].proba, atol=5e-4)


@settings(max_examples=15, deadline=None)
@given(
    order=st.integers(1, 5),
    n_biases=st.integers(0, 3),
    compete=st.booleans(),
    n_outputs=st.integers(1, 3),
    n_samples=st.integers(1, 150),  # a few blocks of cpu.SCORED_ROWS rows
    seed=st.integers(0, 2**16),
)
def test_pooled_scores_are_the_features_times_the_weights(
    order, n_biases, compete, n_outputs, n_samples, seed
):
    # a linear head's share of a window, its features multiplied in blocks of rows without
    # being written out: the features of pooled_features times the weights (float64 sums in
    # another order: to a few ulps of the largest product)
    rng = np.random.default_rng(seed)
    n, k, K = n_samples, 2, n_biases
    Abar, Bbar = discrete_system(order, 5.0, "zoh")
    A_T = np.ascontiguousarray(Abar.T)
    biases = rng.normal(0, 0.3, (k, order, K)).astype(np.float32)
    scale = rng.uniform(0.5, 2.0, (k, order))
    sums = np.zeros((n, k, order, cpu.CARRIED_SUMS, K))
    sums[..., 0, :] = rng.integers(0, 20, (n, k, order, K))
    sums[..., 1, :] = rng.standard_normal((n, k, order, K)) * sums[..., 0, :]
    sums[..., 2, :] = rng.integers(0, 5, (n, k, order, K))
    sums[..., 3, :] = rng.integers(0, 20, (n, k, order, K))
    carried = (
        rng.standard_normal((n, k, order)),
        sums,
        rng.standard_normal((n, k, order, 3)),
        rng.integers(0, 20, (n, k, 2 * order)).astype(np.float64),
    )
    columns = state_columns(K, ("ppv", "mpv", "lspv", "max"))
    lengths = rng.integers(0, 2, n)  # a step under way in some rows
    U = rng.standard_normal((n, 1, k))
    counted = np.full(n, 25)
    values = k * order * len(columns)
    width = values + (2 * k * order if compete else 0)
    F = np.full((n, width), np.nan)
    cpu.pooled_features(
        U, lengths, A_T, Bbar, biases, scale, F, columns, 0, values if compete else None,
        carried=carried, counted=counted,
    )  # fmt: skip
    W = rng.standard_normal((width, n_outputs))
    scores = np.ones((n, n_outputs))  # added to
    cpu.pooled_scores(
        U, lengths, A_T, Bbar, biases, scale, carried, counted, columns, compete, W, scores
    )
    expected = 1.0 + F @ W
    np.testing.assert_allclose(
        scores, expected, rtol=0, atol=1e-12 * (1 + np.abs(F).max() * np.abs(W).sum(0).max())
    )


def test_pooled_scores_refuse_what_they_cannot_do():
    order, k, n = 2, 1, 3
    Abar, Bbar = discrete_system(order, 5.0, "zoh")
    sums = np.zeros((n, k, order, cpu.CARRIED_SUMS, 1))
    carried = (np.zeros((n, k, order)), sums, np.zeros((n, k, order, 3)),
               np.zeros((n, k, 2 * order)))  # fmt: skip
    args = (np.zeros((n, 2, k)), np.full(n, 2), np.ascontiguousarray(Abar.T), Bbar,
            np.zeros((k, order, 1), np.float32), np.ones((k, order)), carried, np.full(n, 4),
            state_columns(1, ("ppv",)), False)  # fmt: skip
    with pytest.raises(ValueError, match="at most one step"):
        cpu.pooled_scores(*args, np.zeros((order, 1)), np.zeros((n, 1)))
    args = (args[0][:, :1], np.ones(n, dtype=int), *args[2:])
    with pytest.raises(ValueError, match=r"weights must have shape \(2, 1\)"):
        cpu.pooled_scores(*args, np.zeros((3, 1)), np.zeros((n, 1)))
    with pytest.raises(ValueError, match="C-contiguous 2-d float64"):
        cpu.pooled_scores(*args, np.zeros((2, 1)), np.zeros((n, 1), dtype=np.float32))


def test_a_float32_stream_reads_float64_input_as_the_batch_does():
    """Fitted on float64 input with ``dtype='float32'``, the batch transform rounds the
    input to float32 first; the stream did not, so where training states fall exactly on
    a threshold (8 x 100 steps: 799 = 17 x 47, every quantile level a training state) the
    two counted them on different sides: 1 075 of 12 600 features differed, by up to 0.23.
    Now the stream rounds alike: equal to the float32 features' rounding (1e-6)."""
    X = np.random.default_rng(29).standard_normal((8, 100))
    features = LMUPooledFeatures(dtype="float32").fit(X)
    stream = features.stream(n_streams=len(X))
    stream.update(X)
    np.testing.assert_allclose(stream.transform(), features.transform(X), rtol=0, atol=1e-6)

"""Dask arrays: blockwise features, streamed training, a 2-process LocalCluster.

Pure dask-array tests run on the synchronous scheduler; the estimator tests share one
``LocalCluster(n_workers=2, processes=True, threads_per_worker=1)`` for the module.

Tolerances: a block's features are computed by the same kernels as the whole array's, one
row at a time in the same order of operations for final states, so float64 results agree to
1e-12 relative; float32 to 1e-5 (a few ulps of the GEMM's different blocking).
"""

from __future__ import annotations

import pickle
import tracemalloc
import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402

from lmu_sk import LMUClassifier, LMUFeatures, LMUPooledFeatures, LMURegressor  # noqa: E402
from lmu_sk._dask import GATHER_LIMIT_KEY, blocks_of  # noqa: E402
from lmu_sk._device import to_numpy  # noqa: E402
from lmu_sk.reference import dn_states  # noqa: E402

TOL = {np.float64: dict(rtol=1e-12, atol=1e-12), np.float32: dict(rtol=1e-5, atol=1e-5)}


def sequences(n=40, n_steps=24, n_channels=None, seed=0, dtype=np.float64):
    shape = (n, n_steps) if n_channels is None else (n, n_steps, n_channels)
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# ----------------------------------------------------------------------------------------------
# LMUFeatures on dask arrays
# ----------------------------------------------------------------------------------------------


@given(
    n=st.integers(1, 30),
    n_steps=st.integers(1, 20),
    n_channels=st.integers(1, 3),
    row_chunk=st.integers(1, 12),
    step_chunk=st.integers(1, 20),
    order=st.integers(1, 10),
    output=st.sampled_from(["final", "sequence", "mean", "max"]),
    dtype=st.sampled_from([np.float64, np.float32]),
)
def test_blockwise_features_equal_numpy(
    n, n_steps, n_channels, row_chunk, step_chunk, order, output, dtype
):
    X = sequences(n, n_steps, n_channels, dtype=dtype)
    Xd = da.from_array(X, chunks=(row_chunk, step_chunk, 1))
    transformer = LMUFeatures(order=order, theta=12.0, output=output)
    with dask.config.set(scheduler="synchronous"):
        F = transformer.fit_transform(Xd)
        assert isinstance(F, da.Array)
        result = F.compute()
    expected = LMUFeatures(order=order, theta=12.0, output=output).fit_transform(X)
    assert F.dtype == result.dtype == expected.dtype == dtype
    assert F.shape == result.shape == expected.shape
    np.testing.assert_allclose(result, expected, **TOL[dtype])


def test_final_states_equal_the_reference_recurrence(sync):
    X = sequences(n_channels=2)
    F = LMUFeatures(order=9, theta=20.0).fit_transform(da.from_array(X, chunks=(7, 5, 1)))
    reference = np.concatenate([dn_states(X[:, :, k], 9, 20.0) for k in range(2)], axis=1)
    np.testing.assert_allclose(F.compute(), reference, rtol=1e-9, atol=1e-10)


def test_fit_and_transform_are_lazy(no_compute):
    Xd = da.from_array(sequences(n_channels=2), chunks=(10, 6, 1))
    transformer = LMUFeatures(order=5).fit(Xd)
    assert (transformer.n_steps_, transformer.n_channels_, transformer.theta_) == (24, 2, 24.0)
    F = transformer.transform(Xd)
    assert F.shape == (40, 10) and F.chunks == ((10, 10, 10, 10), (10,))
    assert LMUFeatures(order=5, output="sequence").fit_transform(Xd).shape == (40, 24, 10)


def test_fitted_transformer_pickles_small_whatever_the_data_size():
    sizes = []
    for n in (100, 100_000):
        Xd = da.zeros((n, 50), chunks=(1000, 50))
        sizes.append(len(pickle.dumps(LMUFeatures(order=8).fit(Xd))))
    assert sizes[0] == sizes[1] < 4000


def test_row_chunks_are_cut_to_the_memory_budget(sync):
    X = sequences(n=30, n_steps=20)
    # a block (inputs and features) takes at most half of max_memory: 10 rows of 20 + 4
    # float64 values in a budget of 20 such rows
    transformer = LMUFeatures(order=4, max_memory=20 * (20 + 4) * 8)
    F = transformer.fit_transform(da.from_array(X, chunks=(30, 5)))
    assert F.chunks[0] == (10, 10, 10)
    np.testing.assert_allclose(
        F.compute(), LMUFeatures(order=4).fit_transform(X), **TOL[np.float64]
    )


def test_blocks_of_keeps_chunks_that_fit():
    Xd = da.zeros((30, 20, 2), chunks=(7, 20, 2))
    assert blocks_of(Xd, 8, np.dtype(np.float64), 10**6) is Xd
    merged = blocks_of(da.zeros((30, 20, 2), chunks=(7, 4, 1)), 8, np.dtype(np.float64), 10**6)
    assert merged.chunks == ((7, 7, 7, 7, 2), (20,), (2,))


@pytest.mark.parametrize(
    "make",
    [
        lambda budget: LMUFeatures(order=16, output="sequence", method="fft", max_memory=budget),
        lambda budget: LMUFeatures(order=16, output="sequence", method="gemm", max_memory=budget),
        lambda budget: LMUPooledFeatures(order=4, n_biases=4, max_memory=budget),
    ],
    ids=["sequence-fft", "sequence-blocked", "pooled"],
)
def test_a_task_stays_within_max_memory(make, sync):
    """One task holds its block (inputs and features) and the transformer's working memory:
    together within ``max_memory`` (they took up to twice it: blocks of the whole budget,
    and the transformer given the whole budget again). NumPy's allocations are traced;
    the constants the task builds once are built before the measure."""
    budget = 8 * 1024**2
    X = sequences(400, 200, n_channels=2)
    transformer = make(budget).set_params(device="cpu").fit(X)
    F = transformer.transform(da.from_array(X, chunks=(400, 200, 2)))
    assert len(F.chunks[0]) > 1  # the budget splits the rows
    first = F.blocks[0]
    expected = first.compute()  # constants, compiled kernels: built once per process
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        got = first.compute()
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(got, expected)
    assert peak <= budget, (peak, budget)


def test_a_sequence_larger_than_the_budget_is_an_error(sync):
    Xd = da.zeros((4, 1000), chunks=(2, 1000))
    with pytest.raises(ValueError, match="raise max_memory"):
        LMUFeatures(order=4, max_memory=1000).fit_transform(Xd)


def test_unknown_chunk_sizes_are_an_error_naming_the_fix(sync):
    Xd = da.from_array(sequences(), chunks=10)
    Xd = Xd[Xd[:, 0] > 0]
    with pytest.raises(ValueError, match=r"compute_chunk_sizes\(\)"):
        LMUFeatures(order=4).fit(Xd)
    with pytest.raises(ValueError, match=r"compute_chunk_sizes\(\)"):
        LMUFeatures(order=4).fit(sequences()).transform(Xd)


def test_chunks_of_no_rows_are_skipped(sync):
    """Filtering and compute_chunk_sizes() (the fix the error above names) leave chunks of
    no rows, whose tasks the transformers refused as empty input: the features, the
    predictions and the fit are those of the rows there are."""
    X = sequences(60)
    y = (X[:, -5:].sum(axis=1) > 0).astype(int)
    keep = np.r_[np.ones(20, bool), np.zeros(20, bool), np.ones(20, bool)]
    Xd = da.from_array(X, chunks=20)[da.from_array(keep, chunks=20)]
    Xd.compute_chunk_sizes()
    assert 0 in Xd.chunks[0]
    features = LMUFeatures(order=4).fit(X)
    np.testing.assert_allclose(
        features.transform(Xd).compute(), features.transform(X[keep]), **TOL[np.float64]
    )
    clf = LMUClassifier(n_jobs=1).fit(X, y)
    np.testing.assert_array_equal(clf.predict(Xd).compute(), clf.predict(X[keep]))
    fitted = LMUClassifier(n_jobs=1).fit(Xd, y[keep])
    in_memory = LMUClassifier(n_jobs=1).fit(X[keep], y[keep])
    np.testing.assert_array_equal(fitted.predict(X), in_memory.predict(X))


def test_held_out_rows_over_the_gather_limit_get_advice_that_fits(sync):
    """The dense head trains block by block, but early stopping gathers its held-out
    blocks: beyond the gather limit the advice is to hold out fewer (not head='dense',
    which the model has)."""
    X = sequences(80).astype(np.float32)
    y = (X[:, -5:].sum(axis=1) > 0).astype(int)
    model = LMUClassifier(head="dense", order=8, max_iter=2, early_stopping=True)
    # below the smallest block's features (the last, 3 rows x 8 x 4 bytes = 96): 100, the
    # limit once used, passed when the held-out block drawn was that one (1 time in 12)
    with dask.config.set({GATHER_LIMIT_KEY: 50}):
        with pytest.raises(ValueError, match="hold out fewer rows") as error:
            model.fit(da.from_array(X, chunks=7), y)
    assert "head='dense'" not in str(error.value)


def test_the_dense_head_streams_features_whose_gather_would_not_fit_memory(sync, monkeypatch):
    """Under the gather limit but past a third of the memory available (the gather holds
    the blocks and their join, and training needs room beside them), the dense head
    trains block by block instead of gathering (a raw MemoryError in the gather before)."""
    from lmu_sk import _dask

    X, y = labelled(n=60)
    gathers = []
    monkeypatch.setattr(_dask, "gathered", lambda F, *args: gathers.append(F.shape) or F)
    feature_bytes = 60 * 8 * 4  # 60 rows of 8 float32 features
    monkeypatch.setattr(_dask, "available_memory", lambda: 3 * feature_bytes - 1)
    params = {**PARAMS, "max_iter": 2}
    with dask.config.set({GATHER_LIMIT_KEY: "1GB"}), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        LMUClassifier(**params).fit(da.from_array(X, chunks=20), y)
        assert gathers == []
        monkeypatch.setattr(_dask, "available_memory", lambda: 3 * feature_bytes)
        LMUClassifier(**params).fit(da.from_array(X, chunks=20), y)
    assert gathers == [(60, 8)]


def test_a_gather_beyond_the_memory_available_is_a_clear_error(sync, monkeypatch):
    """The ridge head always gathers: where the blocks and their join (twice the
    features) exceed the memory available, a MemoryBudgetError (a ValueError) names the
    gather and the way out, before anything is computed (a raw MemoryError before)."""
    from lmu_sk import _dask, _memory

    X, y = labelled(n=60)
    model = LMUClassifier(order=8, head="ridge")
    monkeypatch.setattr(_dask, "available_memory", lambda: 1000)
    with dask.config.set({GATHER_LIMIT_KEY: "1GB"}):
        with pytest.raises(_memory.MemoryBudgetError, match=r"gathering .* features") as error:
            model.fit(da.from_array(X, chunks=20), y)
    assert "Free memory, or use fewer sequences" in str(error.value)


def test_integers_are_cast_to_float64_and_objects_refused(sync):
    X = np.arange(60).reshape(6, 10)
    F = LMUFeatures(order=3).fit_transform(da.from_array(X, chunks=3))
    assert F.dtype == np.float64
    np.testing.assert_allclose(F.compute(), LMUFeatures(order=3).fit_transform(X), rtol=1e-12)
    with pytest.raises(TypeError, match="astype"):
        LMUFeatures(order=3).fit(da.from_array(X.astype(object), chunks=3))


def test_bad_shapes_and_channels_are_errors(sync):
    with pytest.raises(ValueError, match=r"\(n_samples, n_steps, n_channels\)"):
        LMUFeatures().fit(da.zeros((2, 3, 4, 5)))
    fitted = LMUFeatures(order=3).fit(da.zeros((5, 8, 2)))
    with pytest.raises(ValueError, match="channel"):
        fitted.transform(da.zeros((5, 8, 3)))


def test_nan_in_a_block_is_reported_when_computed(sync):
    X = sequences()
    X[33, 4] = np.nan
    F = LMUFeatures(order=4).fit_transform(da.from_array(X, chunks=10))
    with pytest.raises(ValueError, match="NaN"):
        F.compute()


@pytest.mark.gpu
def test_blocks_on_the_gpu_under_the_stand_in(sync, monkeypatch):
    fake_cupy = pytest.importorskip("fake_cupy")
    fake = fake_cupy.install(monkeypatch, as_gpu=True)
    try:
        X = sequences(n_channels=2)
        transformer = LMUFeatures(order=6, device="gpu", return_gpu_arrays=True)
        Xd = da.from_array(fake.asarray(X), chunks=(10, 24, 2), asarray=False)
        F = transformer.fit_transform(Xd)
        assert type(F._meta) is fake.ndarray
        blocks = [block.compute() for block in F.blocks]
        assert all(type(block) is fake.ndarray for block in blocks)
        expected = LMUFeatures(order=6, device="cpu").fit_transform(X)
        got = np.concatenate([to_numpy(block) for block in blocks])
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    finally:
        fake_cupy.clear_caches()


@pytest.mark.gpu
@pytest.mark.parametrize("gather_limit", [None, 1000])
def test_estimator_blocks_on_the_gpu_under_the_stand_in(sync, monkeypatch, gather_limit):
    fake_cupy = pytest.importorskip("fake_cupy")
    from lmu_sk import engine

    fake_cupy.install(monkeypatch, as_gpu=True)
    calls = []
    real = engine.features

    def spy(U, *args, **kwargs):
        calls.append(U.shape[0])
        return real(U, *args, **kwargs)

    monkeypatch.setattr(engine, "features", spy)
    try:
        X, y = labelled(120)
        Xd = da.from_array(X, chunks=40)
        with dask.config.set({GATHER_LIMIT_KEY: gather_limit}), warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model = LMUClassifier(**{**PARAMS, "device": "gpu", "max_iter": 3}).fit(Xd, y)
        # every block of 40 rows went through the GPU route (for the scaling and training)
        # (a one-row probe of the result's shape may run too, and the 64 sequences the
        # float32 features' rounding is measured on)
        assert calls and set(calls) - {1, 64} == {40}
        calls.clear()
        predicted = model.predict(Xd).compute()
        assert [c for c in calls if c != 1] == [40, 40, 40] and type(predicted) is np.ndarray
    finally:
        fake_cupy.clear_caches()


# ----------------------------------------------------------------------------------------------
# Estimators on a two-process cluster
# ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
    )
    with cluster, distributed.Client(cluster) as client:
        yield client


def labelled(n=240, n_steps=20, seed=0):
    X = sequences(n, n_steps, seed=seed)
    y = (X[:, -6:].sum(axis=1) > 0).astype(int) + (X[:, :4].sum(axis=1) > 1)
    return X, y


PARAMS = dict(head="dense",
    order=8, hidden_layer_sizes=(16,), max_iter=15, random_state=0, device="cpu",
    learning_rate_init=1e-2,
)  # fmt: skip


@pytest.fixture(autouse=False)
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        yield


def test_gathered_training_equals_in_memory_training(client, quiet):
    X, y = labelled()
    Xd = da.from_array(X, chunks=60)
    on_cluster = LMUClassifier(**PARAMS).fit(Xd, y)
    in_memory = LMUClassifier(**PARAMS).fit(X, y)
    # float32 features of 60-row blocks: a few ulps from the whole array's
    assert on_cluster.loss_curve_ == pytest.approx(in_memory.loss_curve_, rel=1e-6)
    np.testing.assert_allclose(on_cluster.feature_mean_, in_memory.feature_mean_, rtol=1e-10)
    predicted = on_cluster.predict(Xd)
    assert isinstance(predicted, da.Array) and predicted.dtype == y.dtype
    np.testing.assert_array_equal(predicted.compute(), in_memory.predict(X))
    proba = on_cluster.predict_proba(Xd)
    assert isinstance(proba, da.Array) and proba.shape == (240, 3)
    np.testing.assert_allclose(proba.compute(), in_memory.predict_proba(X), rtol=1e-5)
    score = on_cluster.score(Xd, da.from_array(y, chunks=60))
    assert isinstance(score, float) and score == in_memory.score(X, y)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_the_ridge_head_on_the_cluster_predicts_as_in_memory(client, kernel):
    """The default model (ridge on pooled features), its head linear or the Gaussian
    kernel's (which scores the blocks' standardized rows against its training rows)."""
    X, y = labelled()
    Xd = da.from_array(X, chunks=60)
    on_cluster = LMUClassifier(kernel=kernel, device="cpu").fit(Xd, y)
    in_memory = LMUClassifier(kernel=kernel, device="cpu").fit(X, y)
    assert on_cluster.head_.kernel == kernel and on_cluster.alpha_ == in_memory.alpha_
    predicted = on_cluster.predict(Xd)
    assert isinstance(predicted, da.Array)
    np.testing.assert_array_equal(predicted.compute(), in_memory.predict(X))
    # the features of 60-row blocks are those of the whole array up to float32 rounding
    np.testing.assert_allclose(
        on_cluster.predict_proba(Xd).compute(), in_memory.predict_proba(X), atol=1e-5
    )


def test_streamed_training_learns_without_gathering(client, quiet, monkeypatch):
    X, y = labelled()
    Xd = da.from_array(X, chunks=40)
    gathered = []
    real_compute = da.Array.compute

    def recording_compute(self, **kwargs):
        gathered.append(self.shape)
        return real_compute(self, **kwargs)

    monkeypatch.setattr(da.Array, "compute", recording_compute)
    with dask.config.set({GATHER_LIMIT_KEY: 1000}):
        model = LMUClassifier(**PARAMS).fit(Xd, y)
    # features are only ever computed one block of 40 rows at a time (the 64 sequences
    # the float32 rounding is measured on are read, and their features computed in memory)
    assert {shape for shape in gathered if len(shape) == 2} == {(40, 8), (64, 20)}
    assert model.n_iter_ == len(model.loss_curve_) == 15
    assert model.loss_curve_[-1] < model.loss_curve_[0]
    assert model.score(X, y) > 0.8
    # float32 features of 40-row blocks differ from the whole array's by a few ulps
    features = LMUFeatures(order=8, dtype="float32").fit_transform(X)
    expected_scale = features.std(axis=0, dtype=np.float64)
    np.testing.assert_allclose(model.feature_scale_, expected_scale, rtol=1e-6)


@pytest.mark.parametrize("shuffle", [True, False])
def test_streamed_training_of_one_block_is_the_in_memory_training(client, quiet, shuffle):
    """Streamed and in-memory training run the head's one epoch loop: over a single block
    they take the same steps, up to the float32 features' and the scaling's rounding."""
    X, y = labelled()
    params = {**PARAMS, "shuffle": shuffle}
    with dask.config.set({GATHER_LIMIT_KEY: 1000}):
        streamed = LMUClassifier(**params).fit(da.from_array(X, chunks=240), y)
    in_memory = LMUClassifier(**params).fit(X, y)
    assert streamed.n_iter_ == in_memory.n_iter_
    assert streamed.loss_curve_ == pytest.approx(in_memory.loss_curve_, rel=1e-5)
    np.testing.assert_array_equal(streamed.predict(X), in_memory.predict(X))


def test_partial_fit_runs_one_epoch_block_by_block(client):
    X, y = labelled()
    Xd = da.from_array(X, chunks=80)
    model = LMUClassifier(**PARAMS)
    with pytest.raises(ValueError, match="classes"):
        model.partial_fit(Xd, y)
    model.partial_fit(Xd, y, classes=[0, 1, 2])
    assert model.head_.t_ == 240 and model.classes_.tolist() == [0, 1, 2]
    first_loss = model.loss_
    for _ in range(10):
        model.partial_fit(Xd, y)
    assert model.head_.t_ == 11 * 240
    assert model.loss_ < 0.9 * first_loss


def test_regressor_on_the_cluster(client, quiet):
    X = sequences(200, 20)
    target = X[:, -3:].sum(axis=1)
    Xd = da.from_array(X, chunks=50)
    model = LMURegressor(**PARAMS).fit(Xd, da.from_array(target, chunks=50))
    in_memory = LMURegressor(**PARAMS).fit(X, target)
    assert model.loss_curve_ == pytest.approx(in_memory.loss_curve_, rel=1e-6)
    predicted = model.predict(Xd)
    assert isinstance(predicted, da.Array) and predicted.shape == (200,)
    np.testing.assert_allclose(predicted.compute(), in_memory.predict(X), rtol=1e-5, atol=1e-6)
    assert model.score(Xd, target) == pytest.approx(in_memory.score(X, target), rel=1e-6)


@pytest.mark.parametrize("gather_limit", [None, 1000])
def test_per_step_regression_on_the_cluster(client, quiet, gather_limit):
    X = sequences(60, 20)
    target = np.cumsum(X, axis=1) / 5  # one target per step
    Xd = da.from_array(X, chunks=20)
    params = {**PARAMS, "feature_output": "sequence", "max_iter": 5}
    with dask.config.set({GATHER_LIMIT_KEY: gather_limit}):
        model = LMURegressor(**params).fit(Xd, target)
    predicted = model.predict(Xd)
    assert isinstance(predicted, da.Array) and predicted.shape == (60, 20)
    np.testing.assert_allclose(predicted.compute(), model.predict(X), rtol=1e-5, atol=1e-5)
    if gather_limit is None:
        in_memory = LMURegressor(**params).fit(X, target)
        assert model.loss_curve_ == pytest.approx(in_memory.loss_curve_, rel=1e-6)
    else:
        assert model.loss_curve_[-1] < model.loss_curve_[0]
    with pytest.raises(ValueError, match="one target per step"):
        LMURegressor(**params).fit(Xd, target[:, :5])
    # one output on an axis of its own: trained as one column (no column-vector warning)
    # and predicted with it, gathered or streamed, and by partial_fit
    from sklearn.exceptions import DataConversionWarning

    with dask.config.set({GATHER_LIMIT_KEY: gather_limit}), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.simplefilter("error", DataConversionWarning)
        model = LMURegressor(**params).fit(Xd, target[:, :, None])
        assert model.predict(Xd).shape == model.predict(X).shape == (60, 20, 1)
        model = LMURegressor(**params).partial_fit(Xd, target[:, :, None])
        assert model.predict(Xd).shape == model.predict(X).shape == (60, 20, 1)


@pytest.mark.parametrize("gather_limit", [None, 1000])
def test_missing_per_step_targets_are_refused_on_dask_by_name(sync, gather_limit):
    """NaN per-step targets (padding) weigh 0 in memory; a dask fit takes no weights, so
    they are refused naming the way out (the head's 'Input y contains NaN' before)."""
    X = sequences(40, 20)
    y = np.cumsum(X, axis=1)
    y[:5, 15:] = np.nan
    Xd = da.from_array(X, chunks=10)
    params = {**PARAMS, "feature_output": "sequence", "max_iter": 2}
    with dask.config.set({GATHER_LIMIT_KEY: gather_limit}):
        with pytest.raises(ValueError, match=r"y marks missing steps .* Fit on NumPy arrays"):
            LMURegressor(**params).fit(Xd, y)
        with pytest.raises(ValueError, match="y marks missing steps"):
            LMURegressor(**params).partial_fit(Xd, y)
    clean = np.nan_to_num(y)
    with dask.config.set({GATHER_LIMIT_KEY: gather_limit}):  # (before X_val is gathered)
        with pytest.raises(ValueError, match="y_val marks missing steps"):
            LMURegressor(**params, early_stopping=True).fit(Xd, clean, X_val=X[:10], y_val=y[:10])


@pytest.mark.parametrize("given_validation", [False, True])
def test_streamed_early_stopping_restores_the_best_epoch(client, given_validation):
    X, y = labelled()
    Xd = da.from_array(X, chunks=40)
    X_val, y_val = labelled(60, seed=1) if given_validation else (None, None)
    params = {**PARAMS, "max_iter": 30, "n_iter_no_change": 3}
    # the training features (7.7 KB) are streamed, the validation ones (<= 2 KB) gathered
    with dask.config.set({GATHER_LIMIT_KEY: 4000}):
        model = LMUClassifier(**params, early_stopping=True).fit(Xd, y, X_val, y_val)
    assert len(model.validation_scores_) == model.n_iter_ <= 30
    assert model.best_validation_score_ == max(model.validation_scores_)
    assert model.best_loss_ is None
    if given_validation:
        # the restored weights are those of the best epoch
        assert model.score(X_val, y_val) == model.best_validation_score_


def test_streamed_early_stopping_needs_a_block_to_train_on(client):
    X, y = labelled()
    with dask.config.set({GATHER_LIMIT_KEY: 1000}), pytest.raises(ValueError, match="none"):
        LMUClassifier(**PARAMS, early_stopping=True).fit(da.from_array(X, chunks=240), y)


def test_mismatched_targets_are_an_error(sync):
    X, y = labelled()
    with pytest.raises(ValueError, match="targets"):
        LMUClassifier(**PARAMS).fit(da.from_array(X, chunks=60), y[:-1])


@pytest.mark.parametrize("cls", [LMUFeatures, LMUPooledFeatures])
def test_dask_input_beyond_float32_is_refused_as_numpy_input_is(cls):
    """Finite values beyond float32's range, to be computed in float32: the dask path cast
    them to infinity in the graph and then refused them as NaN or infinity, which the
    input did not hold; each block is now cast with the in-memory path's check. (The
    pooled features read the input at its own precision, and refuse the states it would
    give beyond float32's range.)"""
    X = np.full((4, 8), 1e300)
    X[1] = 1.0
    fitted = cls(order=4, dtype="float32").fit(np.ones((4, 8)))
    message = r"(finite values|states) .*beyond the largest float32"
    with pytest.raises(ValueError, match=message):
        fitted.transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nor dask's "overflow encountered in cast"
        with pytest.raises(ValueError, match=message):
            fitted.transform(da.from_array(X, chunks=2)).compute()


# ----------------------------------------------------------------------------------------------
# lmu-sk features: Zarr stores, .npy shard folders, --scheduler
# ----------------------------------------------------------------------------------------------

zarr = pytest.importorskip("zarr")


def run_cli(*args) -> int:
    from lmu_sk import cli

    return cli.main([str(a) for a in args])


def expected_features(X, order=6):
    return LMUFeatures(order=order, dtype="float32").fit_transform(X)


def write_zarr(path, X, chunks):
    store = zarr.open_array(str(path), mode="w", shape=X.shape, chunks=chunks, dtype=X.dtype)
    store[:] = X


def test_cli_zarr_to_zarr_on_the_cluster(client, tmp_path, capsys):
    X = sequences(57, 16, 2, dtype=np.float32)
    write_zarr(tmp_path / "in.zarr", X, (10, 16, 2))
    address = client.scheduler.address
    args = ("features", "--order", 6, "--channels-last", "--batch-size", 20)
    assert run_cli(*args, "--scheduler", address, tmp_path / "in.zarr", tmp_path / "out.zarr") == 0
    F = zarr.open_array(str(tmp_path / "out.zarr"), mode="r")
    assert F.shape == (57, 12) and F.dtype == np.float32
    np.testing.assert_allclose(F[:], expected_features(X), **TOL[np.float32])
    err = capsys.readouterr().err
    # stderr is not a terminal here: one plain line per finished block, then the summary
    assert "\r" not in err and "57/57 rows" in err and f"on {address}" in err
    assert [p.name for p in tmp_path.iterdir() if "partial" in p.name] == []


@pytest.mark.parametrize("output", ["out.npy", "out.zarr", "shards/"])
def test_cli_shard_folder_in_every_output(tmp_path, output):
    X = sequences(30, 12, dtype=np.float64)
    (tmp_path / "in").mkdir()
    for k, rows in enumerate([slice(0, 7), slice(7, 25), slice(25, 30)]):
        np.save(tmp_path / "in" / f"{k:02d}.npy", X[rows])
    target = tmp_path / output
    # a name ending in a separator asks for a folder of shards
    args = ("features", "--order", 6, "--batch-size", 8, "--quiet", tmp_path / "in")
    assert run_cli(*args, f"{tmp_path}/{output}") == 0
    if output.endswith(".npy"):
        F = np.load(target)
    elif output.endswith(".zarr"):
        F = zarr.open_array(str(target), mode="r")[:]
    else:
        parts = sorted(target.glob("*.npy"))
        assert len(parts) == 4  # one shard per batch of 8 rows
        F = np.concatenate([np.load(p) for p in parts])
    np.testing.assert_allclose(F, expected_features(X), **TOL[np.float32])


def test_cli_shards_are_read_in_the_order_of_their_numbers(tmp_path):
    """Shard names' numbers are compared as numbers: part-100000.npy (the writer's name of
    block 100 000) comes after part-99999.npy, where a text sort put it first and read
    the rows out of order, silently."""
    X = sequences(12, 10, dtype=np.float64)
    (tmp_path / "in").mkdir()
    for k, rows in zip((9, 99999, 100000, 100001), np.split(np.arange(12), 4), strict=True):
        np.save(tmp_path / "in" / f"part-{k:05d}.npy", X[rows])
    args = ("features", "--order", 6, "--quiet", tmp_path / "in", tmp_path / "out.npy")
    assert run_cli(*args) == 0
    np.testing.assert_allclose(
        np.load(tmp_path / "out.npy"), expected_features(X), **TOL[np.float32]
    )


def test_cli_a_folder_of_shards_is_replaced_as_the_help_says(tmp_path, capsys):
    """An OUTPUT folder that holds .npy shards (a run before) is swapped with the new one;
    one holding anything else is refused, naming it."""
    X = sequences(20, 10, dtype=np.float64)
    np.save(tmp_path / "in.npy", X)
    args = ("features", "--quiet", "--batch-size", 8, tmp_path / "in.npy", f"{tmp_path}/out/")
    assert run_cli("features", "--order", 6, *args[1:]) == 0
    assert run_cli("features", "--order", 4, *args[1:]) == 0
    parts = sorted((tmp_path / "out").glob("*.npy"))
    F = np.concatenate([np.load(p) for p in parts])
    np.testing.assert_allclose(F, expected_features(X, order=4), **TOL[np.float32])
    (tmp_path / "out" / "notes.txt").write_text("mine")
    capsys.readouterr()
    assert run_cli("features", "--order", 6, *args[1:]) == 2
    assert "holds more than .npy shards (notes.txt)" in capsys.readouterr().err
    assert (tmp_path / "out" / "notes.txt").read_text() == "mine"


def test_cli_channels_first_zarr_and_sequence_output(tmp_path):
    X = sequences(9, 10, 3, dtype=np.float32)
    write_zarr(tmp_path / "in.zarr", np.ascontiguousarray(np.swapaxes(X, 1, 2)), (4, 3, 10))
    args = ("features", "--order", 4, "--channels-first", "--output", "sequence", "--quiet")
    assert run_cli(*args, tmp_path / "in.zarr", tmp_path / "out.zarr") == 0
    F = zarr.open_array(str(tmp_path / "out.zarr"), mode="r")[:]
    expected = LMUFeatures(order=4, output="sequence", dtype="float32").fit_transform(X)
    np.testing.assert_allclose(F, expected, **TOL[np.float32])


@pytest.mark.parametrize(
    ("make", "message"),
    [
        ("nan", "NaN"),
        ("object-shards", "differ in their trailing shape or dtype"),
        ("same", "overwrite the input"),
        ("not-zarr-output", "not a Zarr store"),
    ],
)
def test_cli_dask_usage_errors(tmp_path, capsys, make, message):
    X = sequences(12, 8, dtype=np.float32)
    source, target = tmp_path / "in.zarr", tmp_path / "out.zarr"
    if make == "nan":
        X[5, 3] = np.nan
    if make == "object-shards":
        source.mkdir()
        np.save(source / "a.npy", X)
        np.save(source / "b.npy", X[:, :5])
        source = source.rename(tmp_path / "shards")
    else:
        write_zarr(source, X, (4, 8))
    if make == "same":
        target = source
    if make == "not-zarr-output":
        target.mkdir()
        (target / "keep.txt").write_text("not a store")
    assert run_cli("features", "--order", 3, "--quiet", source, target) == 2
    err = capsys.readouterr().err
    assert err.startswith("lmu-sk: error:") and message in err and err.count("\n") == 1
    assert [p.name for p in tmp_path.iterdir() if "partial" in p.name] == []


def test_cli_unreachable_scheduler_is_a_usage_error(tmp_path, capsys, monkeypatch):
    def refuse(address, timeout):
        raise OSError(f"Timed out trying to connect to {address} after {timeout}")

    monkeypatch.setattr(distributed, "Client", refuse)
    write_zarr(tmp_path / "in.zarr", sequences(4, 5), (2, 5))
    args = ("features", "--order", 2, "--scheduler", "tcp://10.0.0.1:8786")
    assert run_cli(*args, tmp_path / "in.zarr", tmp_path / "out.zarr") == 2
    err = capsys.readouterr().err
    assert err.startswith("lmu-sk: error: cannot connect to the scheduler at tcp://10.0.0.1:8786")
    assert not (tmp_path / "out.zarr").exists()


# ----------------------------------------------------------------------------------------------
# dask-ml's wrappers (optional: dask-ml is not a dependency)
# ----------------------------------------------------------------------------------------------


def test_dask_ml_wrappers(sync, quiet):
    wrappers = pytest.importorskip("dask_ml.wrappers")
    X, y = labelled(200)
    Xd, yd = da.from_array(X, chunks=50), da.from_array(y, chunks=50)
    fitted = wrappers.ParallelPostFit(LMUClassifier(**PARAMS)).fit(X[:100], y[:100])
    predicted = fitted.predict(Xd)
    assert isinstance(predicted, da.Array)
    np.testing.assert_array_equal(predicted.compute(), fitted.estimator.predict(X))
    incremental = wrappers.Incremental(LMUClassifier(**PARAMS)).fit(Xd, yd, classes=[0, 1, 2])
    assert incremental.estimator_.head_.t_ == 200  # one partial_fit per block of 50

"""LMUPooledFeatures against pooling the reference recurrence's states; memory; bad input.

The mean, max and min pools are sums and extrema of states computed in float64 by a
different route than the oracle's (a compiled recurrence or block matrix products), so
they agree to 1e-10 of the state scale ``max|u| * sum_k max_i |H[k, i]|`` (the bound of
tests/test_features_properties.py). A proportion counts comparisons with a threshold; a
state within rounding of its threshold may fall either way, so the expected proportion is
bracketed by counting against the threshold moved by that tolerance up and down.
"""

import tracemalloc

import numpy as np
import pytest
from fake_cupy import clear_caches, install
from hypothesis import given, settings
from hypothesis import strategies as st

from lmu_sk import LMUPooledFeatures, _memory
from lmu_sk._memory import MemoryBudgetError
from lmu_sk.dn import discrete_system, impulse_response
from lmu_sk.engine import algebra, constants, plan
from lmu_sk.engine.compiled.cpu import pooled_recurrence
from lmu_sk.reference import dn_states

TOLERANCE = 1e-10


def _difference(u):
    """First difference along time, zero at the first step, as extra channels."""
    return np.concatenate([u, np.diff(u, axis=0, prepend=u[:1])], axis=1)


def _expected_bounds(sequences, model):
    """Lower and upper bounds of every feature by pooling the oracle's states."""
    lows, highs = [], []
    for u in sequences:
        u = u.reshape(len(u), -1)
        if model.difference:
            u = _difference(u)
        low, high = [], []
        for w, theta in enumerate(model.thetas_):
            order = model.biases_.shape[2]
            S = dn_states(u[None], order, theta, output="sequence")[0]
            S = S.reshape(len(u), u.shape[1], order)  # (steps, inputs, order)
            H = impulse_response(*discrete_system(order, theta), len(u))
            tol = TOLERANCE * max(np.abs(u).max(), 1e-300) * np.abs(H).max(axis=1).sum()
            b = model.biases_[w][None]
            moments = np.stack([S.mean(0), S.max(0), S.min(0)], axis=-1)
            low.append(np.concatenate([(S[..., None] > b + tol).mean(0), moments - tol], -1))
            high.append(np.concatenate([(S[..., None] > b - tol).mean(0), moments + tol], -1))
        lows.append(np.stack(low).ravel())
        highs.append(np.stack(high).ravel())
    return np.stack(lows), np.stack(highs)


def _assert_within(F, bounds):
    low, high = bounds
    assert F.shape == low.shape
    assert np.all(F >= low) and np.all(F <= high)


@st.composite
def problems(draw):
    n_channels = draw(st.integers(1, 3))
    lengths = draw(st.lists(st.integers(1, 60), min_size=1, max_size=5))
    ragged = draw(st.booleans()) and len(set(lengths)) > 1
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    if ragged:
        X = [rng.standard_normal((n, n_channels)) for n in lengths]
    else:
        X = rng.standard_normal((len(lengths), lengths[0], n_channels))
    thetas = draw(st.lists(st.floats(0.5, 200.0), min_size=1, max_size=3))
    params = {
        "order": draw(st.integers(1, 12)),
        "thetas": thetas,
        "difference": draw(st.booleans()),
        "n_biases": draw(st.integers(1, 5)),
        "bias_samples": draw(st.integers(1, 6)),
        "device": "cpu",
    }
    return X, params


@settings(max_examples=40, deadline=None)
@given(problems())
def test_pooled_features_match_pooled_oracle_states(problem):
    X, params = problem
    model = LMUPooledFeatures(**params).fit(X)
    F = model.transform(X)
    assert F.shape == (len(X), model.n_features_out_)
    assert len(model.get_feature_names_out()) == model.n_features_out_
    _assert_within(F, _expected_bounds(list(X), model))


@settings(max_examples=25, deadline=None)
@given(problems(), st.integers(1, 70))
def test_both_routes_match_the_oracle(problem, block):
    """The block-product route (the GPU's, here on NumPy) and the compiled recurrence."""
    X, params = problem
    model = LMUPooledFeatures(**params).fit(X)
    sequences = list(X)
    lengths = np.asarray([len(u) for u in sequences])
    U = np.zeros((len(sequences), lengths.max(), model.n_channels_))
    for row, u in zip(U, sequences, strict=True):
        row[: len(u)] = u.reshape(len(u), -1)
    spec = model._spec()
    x, lengths = spec.prepare(U, lengths, np)
    n_samples, n_steps, n_inputs = x.shape
    order = spec.order
    pools = []
    for theta, biases in zip(spec.thetas, model.biases_, strict=True):
        Abar, Bbar = discrete_system(order, theta)
        T = min(block, n_steps)
        W = constants.block_matrix(Abar, impulse_response(Abar, Bbar, T), T)
        rows = algebra.rows(x, np)
        part = algebra.pool_blocks(
            rows,
            W,
            order,
            np.tile(biases, (n_samples, 1, 1)),
            algebra.row_lengths(lengths, n_inputs, np),
            np,
        )
        pools.append(part.reshape(n_samples, n_inputs, order, -1))
    F = np.stack(pools, axis=1)
    _assert_within(F.reshape(n_samples, -1), _expected_bounds(sequences, model))
    # the compiled recurrence on the same inputs agrees on mean, max and min
    # (proportions may differ by a state that sits on its threshold)
    n_biases = model.biases_.shape[3]
    A_T = np.transpose(model.state_matrices_, (0, 2, 1))
    G = pooled_recurrence(x, lengths, A_T, model.input_matrices_, model.biases_)
    np.testing.assert_allclose(F[..., n_biases:], G[..., n_biases:], rtol=1e-9, atol=1e-12)


def test_the_planner_picks_a_pooled_route_per_device():
    args = (100, 500, 2, 8, 6, 6 * 2 * 8 * 7, 8)
    assert plan.plan_pooled(*args, "cpu", 1 << 30).route in plan.COSTS["cpu"].pooled_routes
    assert plan.plan_pooled(*args, "gpu", 1 << 30, device_budget=1 << 30).route == (
        "pooled_blocked"
    )


def test_gpu_path_on_the_stand_in(monkeypatch):
    install(monkeypatch, as_gpu=True)
    try:
        rng = np.random.default_rng(1)
        X = [rng.standard_normal((n, 2)) for n in (30, 41, 17, 50)]
        gpu = LMUPooledFeatures(order=5, thetas=[4, 40], device="gpu").fit(X)
        F = gpu.transform(X)
        assert type(F) is np.ndarray
        assert type(gpu.set_params(return_gpu_arrays=True).transform(X)).__module__.startswith(
            "cupy"
        )
        _assert_within(F, _expected_bounds(X, gpu))
    finally:
        clear_caches()


def test_default_windows_and_feature_count():
    X = np.random.default_rng(0).standard_normal((6, 64, 2))
    model = LMUPooledFeatures(device="cpu").fit(X)
    np.testing.assert_allclose(model.thetas_, [2, 4, 8, 16, 32, 64])
    assert model.n_features_out_ == 6 * 4 * 8 * (4 + 3)
    assert model.transform(X[:, :10]).shape == (6, model.n_features_out_)


def test_thresholds_are_quantiles_of_the_training_states():
    X = np.random.default_rng(2).standard_normal((5, 40))
    model = LMUPooledFeatures(order=3, thetas=[7.0], difference=False, n_biases=3).fit(X)
    states = dn_states(X, 3, 7.0, output="sequence").reshape(-1, 3)
    expected = np.quantile(states, [0.25, 0.5, 0.75], axis=0).T
    np.testing.assert_allclose(model.biases_[0, 0], expected, rtol=1e-12, atol=1e-12)
    # a state exceeds its q-quantile on a fraction 1 - q of the training steps
    pools = model.transform(X).reshape(5, 3, 6)
    np.testing.assert_allclose(pools[..., :3].mean(axis=0), [[0.75, 0.5, 0.25]] * 3, atol=0.01)


def test_memory_budget_that_forbids_all_states():
    """Pooled features of a set whose all-states array would need 30x the budget."""
    rng = np.random.default_rng(3)
    n_samples, n_steps = 40, 2000
    X = rng.standard_normal((n_samples, n_steps)).astype(np.float32)
    model = LMUPooledFeatures(order=16, thetas=[50, 500, 2000], max_memory="2MB", device="cpu")
    F = model.fit(X).transform(X)
    all_states = n_samples * n_steps * 3 * 2 * 16 * 8
    assert all_states > 30 * 2e6
    assert F.shape == (40, 3 * 2 * 16 * 7) and F.dtype == np.float32
    np.testing.assert_allclose(
        F[:3],
        LMUPooledFeatures(**model.get_params())
        .set_params(max_memory=None)
        .fit(X)
        .transform(X[:3]),
        rtol=1e-6,
    )
    with pytest.raises(MemoryBudgetError, match="max_memory"):
        model.set_params(max_memory=1000).transform(X)


@pytest.mark.parametrize(
    ("params", "error", "match"),
    [
        ({"thetas": [10, 0]}, ValueError, "theta must be a positive"),
        ({"thetas": -3.0}, ValueError, "theta must be a positive"),
        ({"thetas": []}, ValueError, "non-empty"),
        ({"n_biases": 0}, ValueError, "n_biases"),
        ({"order": 0}, ValueError, "order"),
        ({"bias_samples": 1.5}, TypeError, "bias_samples"),
        ({"difference": "yes"}, TypeError, "difference"),
        ({"discretizer": "rk4"}, ValueError, "discretizer"),
    ],
)
def test_bad_parameters(params, error, match):
    X = np.zeros((3, 10))
    with pytest.raises(error, match=match):
        LMUPooledFeatures(**params).fit(X)


def test_bad_input():
    X = np.random.default_rng(0).standard_normal((4, 20, 2))
    model = LMUPooledFeatures(order=2, device="cpu").fit(X)
    with pytest.raises(ValueError, match="channel"):
        model.transform(X[..., :1])
    X_nan = X.copy()
    X_nan[0, 3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        model.transform(X_nan)


def test_stride_feeds_block_means():
    rng = np.random.default_rng(4)
    X = [rng.standard_normal((n, 2)) for n in (37, 40, 21)]
    strided = LMUPooledFeatures(order=4, thetas=[12, 36], stride=3, device="cpu").fit(X)

    def block_means(u):
        return np.stack([u[i : i + 3].mean(axis=0) for i in range(0, len(u), 3)])

    plain = LMUPooledFeatures(order=4, thetas=[4, 12], device="cpu")
    expected = plain.fit([block_means(u) for u in X]).transform([block_means(u) for u in X])
    np.testing.assert_allclose(strided.biases_, plain.biases_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(strided.transform(X), expected, rtol=1e-10, atol=1e-12)


def test_fitted_stride_and_difference_are_used_at_transform():
    # set_params after fit changes nothing until the next fit (it used to change the
    # features silently, and stride=0 divided by zero)
    rng = np.random.default_rng(5)
    X = rng.standard_normal((6, 90, 2))
    model = LMUPooledFeatures(order=4, thetas=[9, 45], stride=3, device="cpu").fit(X)
    F = model.transform(X)
    names = model.get_feature_names_out()
    assert model.stride_ == 3 and model.difference_ is True
    for params in ({"stride": 1}, {"difference": False}, {"stride": 0}):
        model.set_params(**params)
        np.testing.assert_array_equal(model.transform(X), F)
        np.testing.assert_array_equal(model.get_feature_names_out(), names)
    with pytest.raises(ValueError, match="stride must be an integer >= 1"):
        model.fit(X)
    refit = model.set_params(stride=1, difference=False).fit(X)
    assert refit.transform(X).shape[1] == F.shape[1] // 2


def test_fitting_the_thresholds_stays_within_max_memory():
    # 4 series of 200 000 steps, order 32: the states of one series, its difference and
    # one window are 102 MB; max_memory is 20 MB. Beyond it, fitting holds the 8192
    # states per state it fits the thresholds on and np.quantile's copy of them.
    X = np.random.default_rng(6).standard_normal((4, 200_000)).astype(np.float32)
    kept = 2 * 8192 * 2 * 32 * 8
    model = LMUPooledFeatures(order=32, thetas=[100, 10_000], max_memory="20MB", device="cpu")
    model.fit(X[:, :50])  # compiled (or loaded) first: Numba's allocations are not ours
    tracemalloc.start()
    try:
        model.fit(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20e6 + kept, peak
    # the thresholds are those of the states held all at once
    whole = LMUPooledFeatures(**model.get_params()).set_params(max_memory="4GB").fit(X)
    np.testing.assert_allclose(model.biases_, whole.biases_, rtol=1e-9, atol=1e-12)
    with pytest.raises(MemoryBudgetError, match=r"Fitting the thresholds .* raise max_memory"):
        model.set_params(max_memory="1MB").fit(X)


def test_huge_n_biases_is_refused_before_allocating(monkeypatch):
    X = np.random.default_rng(7).standard_normal((5, 100))
    with pytest.raises(MemoryBudgetError, match=r"n_biases=1000000 .* would need .*n_biases"):
        LMUPooledFeatures(n_biases=10**6, max_memory="1GB").fit(X)
    monkeypatch.setattr(_memory, "available_memory", lambda: 2 * 1024**3)
    with pytest.raises(MemoryBudgetError, match="Use fewer thresholds"):
        LMUPooledFeatures(n_biases=10**6).fit(X)

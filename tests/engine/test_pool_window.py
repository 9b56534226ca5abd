"""``algebra.pool_window``: the pools of one window's states, block by block, on NumPy and
on the NumPy stand-in for CuPy, against pooling the reference recurrence's states.

Every case pools the float64 reference states of the inputs as rounded to the dtype, so
only the block route's own rounding counts. Tolerances, relative to ``scale = max|u| *
sum_k max_i |H[k, i]|`` (the largest value a state can take for inputs bounded by
``max|u|``, which bounds the magnitudes summed in every state): ``1e-10`` in float64 and
``2e-5`` in float32, the bounds of the engine's contract (``tests/engine/test_contract.py``
gives their derivation; at most 60 steps and ``theta <= 60`` here too). Measured worst
errors of the pools over these cases: ``1.3e-16`` (float64) and ``5e-8`` (float32) of
the scale; ``compete``: 32 of 10,216 argmax/argmin steps undecided in float32, none in
float64, and no proportion actually off.

* ``mean``, ``max``, ``min`` and ``mpv`` (a mean of ``m_t - b``) are within the states'
  error, ``tol * scale``, plus the rounding of the result to its dtype.
* ``ppv`` and ``lspv`` count comparisons: every threshold is chosen more than ``4 * tol *
  scale`` from every state of its row, so each comparison is decided and the counts are
  exact (the proportions then off by the dtype's rounding alone).
* ``compete``: a step whose two largest (or smallest) scaled states lie within the error
  of each other may go either way; such steps bound the difference (none in float64 here,
  a few at most in float32). Steps whose states are all exactly zero (leading zero inputs)
  tie exactly on every route: the first state wins, as ``numpy.argmax`` picks.
"""

from __future__ import annotations

import types

import numpy as np
import pytest
from fake_cupy import clear_caches, install
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lmu_sk._device import to_numpy
from lmu_sk.dn import discrete_system, impulse_response
from lmu_sk.engine import algebra, constants
from lmu_sk.engine.pooling import POOLS, PooledSpec, WindowSpec
from lmu_sk.kernels import cpu
from lmu_sk.reference import _block_means as reference_block_means
from lmu_sk.reference import pooled, recurrence

TOLERANCE = {np.dtype(np.float64): 1e-10, np.dtype(np.float32): 2e-5}
ORDER, THETA, N_BIASES = 6, 9.0, 4
N_ROWS, N_STEPS = 9, 47


@pytest.fixture(params=["numpy", "fake_cupy"])
def xp(request, monkeypatch):
    if request.param == "numpy":
        yield np
    else:
        yield install(monkeypatch)
        clear_caches()


def make_case(dtype, ragged, seed):
    """Rows of white noise and of random walks (long runs above a threshold, across
    blocks), some with leading zeros (exact ties), garbage past each row's length."""
    rng = np.random.default_rng(seed)
    noise = rng.standard_normal((N_ROWS, N_STEPS))
    walks = np.cumsum(0.3 * rng.standard_normal((N_ROWS, N_STEPS)), axis=1)
    U = np.where(np.arange(N_ROWS)[:, None] % 2 == 0, noise, walks)
    U[1, :7] = 0.0
    U[4, :3] = 0.0
    if ragged:
        lengths = rng.integers(1, N_STEPS + 1, N_ROWS)
        lengths[0], lengths[1] = N_STEPS, 1
    else:
        lengths = np.full(N_ROWS, N_STEPS)
    past = np.arange(N_STEPS)[None, :] >= lengths[:, None]
    U[past] = 1e3 * rng.standard_normal(int(past.sum()))  # must not count
    return U.astype(dtype), lengths.astype(np.int64)


def reference_states(U, lengths):
    """float64 states of every row over its own steps, by the reference recurrence."""
    Abar, Bbar = discrete_system(ORDER, THETA)
    return [
        recurrence(U[r, :n].astype(np.float64)[None, :, None], Abar, Bbar, "sequence")[0]
        for r, n in enumerate(lengths)
    ]


def state_scale(U, lengths):
    Abar, Bbar = discrete_system(ORDER, THETA)
    H = impulse_response(Abar, Bbar, int(lengths.max()))
    own = np.concatenate([U[r, :n] for r, n in enumerate(lengths)]).astype(np.float64)
    return max(float(np.abs(own).max()), 1e-300) * float(np.abs(H).max(axis=1).sum())


def decided_thresholds(states, gap, rng):
    """``N_BIASES`` ascending float32 thresholds (the engine's) per row and state, each
    more than ``gap`` from every state of the row: midpoints of wider gaps between its
    sorted values, or beyond them, kept where their rounding leaves them that far."""
    biases = np.empty((len(states), ORDER, N_BIASES))
    for r, m in enumerate(states):
        for i in range(ORDER):
            v = np.unique(m[:, i])
            candidates = np.concatenate([[v[0] - 1.0], (v[:-1] + v[1:]) / 2, [v[-1] + 1.0]])
            candidates = candidates.astype(np.float32).astype(np.float64)
            distance = np.abs(candidates[:, None] - v[None]).min(axis=1)
            biases[r, i] = np.sort(rng.choice(candidates[distance > gap], N_BIASES))
    return biases


def expected_pools(m, b, scale, ambiguity):
    """The pools of one row's states ``m`` (n, d) at thresholds ``b`` (d, K), and per state
    the number of steps its 'compete' proportions may be off by (undecided steps)."""
    n = len(m)
    above = m[:, :, None] > b[None]
    count = above.sum(axis=0)
    excess = np.where(above, m[:, :, None] - b[None], 0.0).sum(axis=0)
    run = np.zeros(b.shape)
    longest = np.zeros(b.shape)
    for hit in above:
        run = (run + 1) * hit
        longest = np.maximum(longest, run)
    moments = np.stack([m.mean(axis=0), m.max(axis=0), m.min(axis=0)], axis=-1)
    pools = np.concatenate(
        [count / n, np.where(count > 0, excess / np.maximum(count, 1), 0.0), longest / n, moments],
        axis=-1,
    )
    scaled = m * scale
    wins = np.bincount(scaled.argmax(axis=1), minlength=m.shape[1]) / n
    losses = np.bincount(scaled.argmin(axis=1), minlength=m.shape[1]) / n
    order = np.sort(scaled, axis=1)
    zero = np.all(m == 0.0, axis=1)  # exact ties on every route
    close_top = (order[:, -1] - order[:, -2] <= ambiguity) & ~zero
    close_bottom = (order[:, 1] - order[:, 0] <= ambiguity) & ~zero
    slack = np.concatenate(
        [np.full(m.shape[1], close_top.sum()), np.full(m.shape[1], close_bottom.sum())]
    )
    return pools, np.concatenate([wins, losses]), slack, int(longest.max())


def run_pool_window(xp, U, lengths, biases, scale, block):
    dtype = U.dtype
    W = constants.get("W", ORDER, THETA, "zoh", dtype=dtype, xp=xp, param=block)
    pools, compete = algebra.pool_window(
        xp.asarray(U),
        W,
        ORDER,
        xp.asarray(biases.astype(np.float32)),  # exact: float32 values
        xp.asarray(scale),
        xp.asarray(lengths),
        xp,
    )
    assert type(pools) is type(xp.asarray(U)) and type(compete) is type(pools)
    assert pools.dtype == dtype and compete.dtype == dtype
    return to_numpy(pools), to_numpy(compete)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ragged", [False, True], ids=["equal", "ragged"])
@pytest.mark.parametrize("block", [1, 5, 16, 64])
@pytest.mark.parametrize("seed", [0, 1])
def test_pools_match_the_reference_states(xp, dtype, ragged, block, seed):
    U, lengths = make_case(dtype, ragged, seed)
    rng = np.random.default_rng(100 + seed)
    states = reference_states(U, lengths)
    tol = TOLERANCE[np.dtype(dtype)] * state_scale(U, lengths)
    biases = decided_thresholds(states, 4 * tol, rng)
    for r, m in enumerate(states):
        assert np.abs(m[:, :, None] - biases[r][None]).min() > 4 * tol
    scale = rng.uniform(0.5, 2.0, (N_ROWS, ORDER))
    got, got_compete = run_pool_window(xp, U, lengths, biases, scale, block)
    assert got.shape == (N_ROWS, ORDER, 3 * N_BIASES + 3)
    assert got_compete.shape == (N_ROWS, 2 * ORDER)

    eps = np.finfo(dtype).eps
    K = N_BIASES
    longest_run = 0
    for r, m in enumerate(states):
        n = len(m)
        # a scaled state is off by at most tol * max(scale), plus the product's rounding
        ambiguity = 2 * (tol + eps * np.abs(m).max()) * scale[r].max()
        pools, compete, slack, run = expected_pools(m, biases[r], scale[r], ambiguity)
        longest_run = max(longest_run, run)
        rounding = eps * np.abs(pools)
        counted = np.r_[0:K, 2 * K : 3 * K]  # ppv, lspv: exact counts over n
        np.testing.assert_allclose(got[r][:, counted], pools[:, counted], rtol=2 * eps, atol=0)
        within = np.r_[K : 2 * K, 3 * K : 3 * K + 3]  # mpv, mean, max, min
        error = np.abs(got[r][:, within] - pools[:, within]) - rounding[:, within]
        assert error.max() <= tol, (r, error.max(), tol)
        assert np.all(np.abs(got_compete[r] - compete) <= slack / n + 2 * eps)
        if dtype == np.float64:
            assert slack.sum() == 0  # every argmax/argmin decided: exact proportions
    # the random walks give runs longer than a block: the run is carried across blocks
    assert longest_run > min(block, 16)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@given(
    lengths=st.lists(st.integers(1, 40), min_size=1, max_size=6),
    n_channels=st.integers(1, 3),
    stride=st.integers(1, 12),
    seed=st.integers(0, 2**16),
)
def test_compiled_block_means_are_each_samples_own(dtype, lengths, n_channels, stride, seed):
    """The compiled block means of zero-padded samples are the means of each sample's own
    steps block by block (``lmu_sk.reference._block_means``, the last block of its own
    steps); past a sample's length each block is its zeros over one step. A block sums at
    most ``stride`` values: within ``stride`` roundings of the largest magnitude."""
    rng = np.random.default_rng(seed)
    lengths = np.array(lengths)
    X = np.zeros((len(lengths), lengths.max(), n_channels), dtype=dtype)
    for x, n in zip(X, lengths, strict=True):
        x[:n] = rng.standard_normal((n, n_channels))
    got = cpu.block_means(X, lengths, stride)
    assert got.dtype == dtype and got.shape == (
        len(lengths),
        -(-lengths.max() // stride),
        n_channels,
    )
    tol = stride * np.finfo(dtype).eps * max(1.0, float(np.abs(X).max()))
    for g, x, n in zip(got, X, lengths, strict=True):
        own = -(-n // stride)
        expected = reference_block_means(x[:n].astype(np.float64), stride)
        np.testing.assert_allclose(g[:own], expected, rtol=0, atol=tol)
        np.testing.assert_array_equal(g[own:], 0.0)


def test_compiled_block_means_refuse_a_stride_below_one():
    with pytest.raises(ValueError, match="stride must be at least 1"):
        cpu.block_means(np.zeros((1, 4, 1)), np.array([4]), 0)


@pytest.mark.parametrize("stride", [1, 3])
def test_layout_matches_the_pooled_oracle(xp, stride):
    """Rows of samples x inputs, block means taken, pooled window by window: the features
    of ``lmu_sk.reference.pooled`` (one window, every pool) in float64."""
    rng = np.random.default_rng(7)
    n_channels, block = 2, 4
    raw_lengths = np.array([31, 12, 1, 25])
    sequences = [np.cumsum(rng.standard_normal((n, n_channels)), axis=0) for n in raw_lengths]
    X = np.zeros((len(sequences), raw_lengths.max(), n_channels))
    for x, seq in zip(X, sequences, strict=True):
        x[: len(seq)] = seq
    means, lengths = algebra.block_means(X, raw_lengths, stride, np)
    window = WindowSpec(order=ORDER, theta=THETA, stride=stride, inputs=(0, 1))
    spec = PooledSpec(windows=(window,), transforms=("series",), pools=POOLS, n_biases=N_BIASES)
    U = algebra.rows(means, np)
    row_lengths = algebra.row_lengths(lengths, n_channels, np)
    states = reference_states(U, row_lengths)
    tol = TOLERANCE[np.dtype(np.float64)] * state_scale(U, row_lengths)
    # one set of thresholds per input and state, shared by the samples
    per_input = [np.concatenate(states[k::n_channels]) for k in range(n_channels)]
    biases = decided_thresholds(per_input, 4 * tol, rng)  # (inputs, order, K)
    scale = rng.uniform(0.5, 2.0, (n_channels, ORDER))
    expected = pooled(sequences, spec, [biases], [scale])

    n_samples = len(sequences)
    rows_biases = np.tile(biases, (n_samples, 1, 1))
    rows_scale = np.tile(scale, (n_samples, 1))
    pools, compete = run_pool_window(xp, U, row_lengths, rows_biases, rows_scale, block)
    got = np.concatenate([pools.reshape(n_samples, -1), compete.reshape(n_samples, -1)], axis=1)
    assert got.shape == expected.shape == (n_samples, spec.n_features)
    np.testing.assert_allclose(got, expected, rtol=4 * np.finfo(np.float64).eps, atol=tol)


def test_first_state_wins_exact_ties(xp):
    """Zero inputs keep every state exactly zero: each is the largest and the smallest,
    and the first state takes the step, as ``numpy.argmax`` and ``argmin`` do."""
    U = np.zeros((2, 10))
    U[1, 6:] = [1.0, -2.0, 0.5, 3.0]
    lengths = np.array([10, 10])
    biases = np.broadcast_to([-1.0, 1.0], (2, ORDER, 2)).copy()
    scale = np.ones((2, ORDER))
    W = constants.get("W", ORDER, THETA, "zoh", xp=xp, param=4)
    args = (xp.asarray(biases), xp.asarray(scale), xp.asarray(lengths), xp)
    _, compete = algebra.pool_window(xp.asarray(U), W, ORDER, *args)
    compete = to_numpy(compete)
    first = np.r_[1.0, np.zeros(ORDER - 1)]
    np.testing.assert_array_equal(compete[0], np.r_[first, first])
    assert compete[1, 0] >= 0.6 and compete[1, ORDER] >= 0.6  # the 6 zero steps


def test_rows_past_their_length_change_nothing(xp):
    """A row's pools depend on its own steps only: appending steps past the length (any
    values) leaves them as they were."""
    U, lengths = make_case(np.float64, True, 5)
    biases = np.sort(np.random.default_rng(0).standard_normal((N_ROWS, ORDER, 3)), axis=-1)
    scale = np.ones((N_ROWS, ORDER))
    short = run_pool_window(xp, U[:, : lengths.max()], lengths, biases, scale, 8)
    longer = np.concatenate([U, np.full((N_ROWS, 20), 7.0)], axis=1)
    padded = run_pool_window(xp, longer, lengths, biases, scale, 8)
    for a, b in zip(short, padded, strict=True):
        np.testing.assert_array_equal(a, b)


@given(
    hnp.arrays(
        np.int32,
        hnp.array_shapes(min_dims=3, max_dims=3, min_side=1, max_side=40),
        elements=st.integers(-50, 50),
    )
)
def test_running_max_is_the_cumulative_maximum(a):
    # a module that is not NumPy takes the shifted-maxima path that CuPy takes
    lookalike = types.ModuleType("numpy_lookalike")
    lookalike.__dict__.update({k: v for k, v in np.__dict__.items() if not k.startswith("__")})
    for axis in (0, 1):
        expected = np.maximum.accumulate(a, axis=axis)
        for xp in (np, lookalike):
            np.testing.assert_array_equal(algebra.running_max(a.copy(), xp, axis=axis), expected)


@pytest.mark.parametrize(
    ("field", "message"),
    [
        ("biases", "biases must have shape"),
        ("scale", "scale must have shape"),
        ("lengths", "lengths must have shape"),
        ("zero_length", "lengths must lie in 1 .. 10"),
        ("too_long", "lengths must lie in 1 .. 10"),
    ],
)
def test_bad_shapes_and_lengths_are_refused(field, message):
    U = np.zeros((3, 10))
    args = {
        "biases": np.zeros((3, ORDER, 2)),
        "scale": np.ones((3, ORDER)),
        "lengths": np.full(3, 10),
    }
    if field in args:
        args[field] = args[field][:2]
    elif field == "zero_length":
        args["lengths"] = np.array([10, 0, 3])
    else:
        args["lengths"] = np.array([10, 11, 3])
    W = constants.get("W", ORDER, THETA, "zoh", param=4)
    with pytest.raises(ValueError, match=message):
        algebra.pool_window(U, W, ORDER, args["biases"], args["scale"], args["lengths"], np)


@pytest.mark.parametrize("n_steps", [37, cpu.FLUSH_STEPS + 37])
def test_one_threshold_sums_as_many_equal_thresholds_do(n_steps):
    """The float32 sums above a threshold keep the order of the steps whatever the number
    of thresholds. With 16 thresholds the pass is vectorized across them and the order is
    kept; with one there is nothing to vectorize across, and the compiler, allowed to
    reassociate, reordered the scalar chain of adds (the sums moved by 5e-8 relative, seen
    only against the CUDA kernel). One threshold gives the pools of 16 copies of it, bit
    for bit."""
    rng = np.random.default_rng(3)
    order = 3
    Abar, Bbar = discrete_system(order, 20.0)
    U = rng.standard_normal((4, n_steps, 1))
    lengths = np.full(4, n_steps)
    levels = np.array([[-0.05], [0.02], [0.1]], dtype=np.float32)[None]  # (1, order, 1)
    scale = np.ones((1, order))
    args = (U, lengths, np.ascontiguousarray(Abar.T), Bbar)
    one = cpu.pooled_window(*args, levels, scale)
    many = cpu.pooled_window(*args, np.repeat(levels, 16, axis=2), scale)
    np.testing.assert_array_equal(one[0], many[0][..., [0, 16, 32]])
    for mine, theirs in zip(one[1:], many[1:], strict=True):  # moments, competition
        np.testing.assert_array_equal(mine, theirs)


def test_sums_above_a_threshold_are_the_steps_float32_sums_in_order():
    """'mpv' is the mean of the float32-rounded states above a threshold, summed in float32
    in the order of the steps (flushed into float64 every FLUSH_STEPS): what the CUDA
    kernel computes too. The threshold step, inlined with the kernel's license to
    reassociate, had its chain of adds reordered by one LLVM (the lowest supported
    numba's): features off by 5e-8 relative, seen only against the CUDA kernel. Exact
    equality with a step-by-step float32 sum, one threshold per state (nothing to
    vectorize across), past a flush."""
    order, n_steps = 2, cpu.FLUSH_STEPS + 37
    rng = np.random.default_rng(3)
    Abar, Bbar = discrete_system(order, 20.0)
    U = rng.standard_normal((1, n_steps, 1))
    states = np.empty((n_steps, order))
    m = np.zeros(order)
    for t in range(n_steps):
        m = Abar @ m + Bbar * U[0, t, 0]
        states[t] = m
    levels = np.array([-0.1, 0.05], dtype=np.float32)
    m32 = states.astype(np.float32)
    above = m32 > levels
    totals = np.zeros(order)
    for i in range(order):
        running, flushed = np.float32(0.0), 0.0
        for t in range(n_steps):
            if above[t, i]:
                running = np.float32(running + m32[t, i])
            if (t + 1) % cpu.FLUSH_STEPS == 0:
                flushed, running = flushed + float(running), np.float32(0.0)
        totals[i] = flushed + float(running)
    out = np.full((1, 8 * order), np.nan)
    cpu.pooled_features(
        U, np.array([n_steps]), np.ascontiguousarray(Abar.T), Bbar, levels[None, :, None],
        np.ones((1, order)), out, np.arange(6), 0, 6 * order,
    )  # fmt: skip
    np.testing.assert_array_equal(out[0, [0, 6]], above.sum(axis=0) / n_steps)
    np.testing.assert_array_equal(out[0, [1, 7]], totals / above.sum(axis=0) - levels)

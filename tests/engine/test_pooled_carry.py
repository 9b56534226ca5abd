"""The compiled pooled kernel continued from carried pools (a stream's chunks) gives the
pools of the whole sequence: counts, runs and the sums above the thresholds bit for bit
(the float32 sums flushed at the whole sequence's steps), the moments' sums to rounding."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lmu_sk.dn import discrete_system
from lmu_sk.kernels import cpu


def _carried(U, A_T, Bbar, biases, scale, cuts):
    """Pool ``U`` piece by piece between ``cuts`` with the carried kernel."""
    n, _, k = U.shape
    d, K = Bbar.shape[0], biases.shape[2]
    dn, sums = np.zeros((n, k, d)), np.zeros((n, k, d, cpu.CARRIED_SUMS, K))
    moments = np.zeros((n, k, d, 3))
    moments[..., 1], moments[..., 2] = -np.inf, np.inf
    wins = np.zeros((n, k, 2 * d))
    for a, b in itertools.pairwise(cuts):
        cpu.pooled_window_carried(
            U[:, a:b], A_T, Bbar, biases, scale, dn, sums, moments, wins, seen=a
        )
    return dn, sums, moments, wins


@settings(max_examples=25, deadline=None)
@given(
    order=st.integers(1, 6),
    n_steps=st.integers(1, 60),
    n_biases=st.integers(1, 4),
    data=st.data(),
)
def test_carried_pieces_give_the_pools_of_the_whole(order, n_steps, n_biases, data):
    seed = data.draw(st.integers(0, 2**16))
    theta = data.draw(st.floats(1.0, 50.0))
    inner = data.draw(st.lists(st.integers(1, max(1, n_steps - 1)), max_size=4, unique=True))
    cuts = [0, *sorted(c for c in inner if c < n_steps), n_steps]
    _assert_carried_pieces_give_the_whole(order, n_steps, n_biases, theta, seed, cuts)


@pytest.mark.parametrize("order", [7, 8, 9])
def test_carried_pieces_give_the_pools_of_the_whole_at_order_8_and_beside(order):
    """Order 8 has the kernel's own recurrence (the state in registers): its pieces, cut
    inside and at the ends of the kernel's blocks of steps, give the whole's pools too."""
    n_steps = 2 * cpu.TIME_BLOCK + 45
    cuts = [0, 1, 100, cpu.TIME_BLOCK, cpu.TIME_BLOCK + 3, n_steps]
    _assert_carried_pieces_give_the_whole(order, n_steps, 5, 30.0, order, cuts)


def _assert_carried_pieces_give_the_whole(order, n_steps, n_biases, theta, seed, cuts):
    rng = np.random.default_rng(seed)
    n, k = 3, 2
    U = rng.standard_normal((n, n_steps, k))
    Abar, Bbar = discrete_system(order, theta, "zoh")
    A_T = np.ascontiguousarray(Abar.T)
    biases = np.sort(rng.normal(0, 0.3, (k, order, n_biases)), axis=-1).astype(np.float32)
    scale = rng.uniform(0.5, 2.0, (k, order))
    dn, sums, moments, wins = _carried(U, A_T, Bbar, biases, scale, cuts)

    lengths = np.full(n, n_steps)
    pools, whole_moments, comp = cpu.pooled_window(U, lengths, A_T, Bbar, biases, scale)
    K = n_biases
    count = sums[..., 0, :]
    # counts, runs and competitions are counts of steps: exact
    np.testing.assert_array_equal(count / n_steps, pools[..., :K])
    np.testing.assert_array_equal(sums[..., 3, :] / n_steps, pools[..., 2 * K :])
    np.testing.assert_array_equal(wins / n_steps, comp)
    np.testing.assert_array_equal(moments[..., 1:], whole_moments[..., 1:])
    # the mean: float64 sums in another grouping (1e-16 per step, at most 557 steps)
    np.testing.assert_allclose(moments[..., 0] / n_steps, whole_moments[..., 0], atol=1e-13)
    # the mean excess: float32 sums of float32 states, flushed where the whole's are and
    # carried apart between the pieces: the same sums
    above = sums[..., 1, :] + sums[..., 4, :]
    mean_above = np.where(count > 0, above / np.maximum(count, 1) - biases, 0.0)
    np.testing.assert_array_equal(mean_above, pools[..., K : 2 * K])
    # the state after the last step: the kernel's own recurrence, in the same order
    state = np.zeros((n, k, order))
    for t in range(n_steps):
        state = state @ A_T + U[:, t, :, None] * Bbar
    np.testing.assert_allclose(dn, state, rtol=1e-12, atol=1e-12)


def test_carried_arrays_must_be_writable_float64():
    U = np.zeros((1, 2, 1))
    A_T, Bbar = np.eye(2), np.ones(2)
    biases, scale = np.zeros((1, 2, 1), np.float32), np.ones((1, 2))
    good = dict(
        dn=np.zeros((1, 1, 2)),
        sums=np.zeros((1, 1, 2, cpu.CARRIED_SUMS, 1)),
        moments=np.zeros((1, 1, 2, 3)),
        wins=np.zeros((1, 1, 4)),
    )
    with pytest.raises(ValueError, match="sums must be a C-contiguous float64 array"):
        cpu.pooled_window_carried(
            U,
            A_T,
            Bbar,
            biases,
            scale,
            **{**good, "sums": np.zeros((1, 1, 2, cpu.CARRIED_SUMS, 1), np.float32)},
        )


@pytest.mark.usefixtures("several_threads")
def test_small_calls_run_on_fewer_threads_with_the_same_pools():
    """``threads=1`` (the step mode's small chunks) gives the pools of all threads, and the
    calling thread's thread count is restored."""
    import numba

    rng = np.random.default_rng(3)
    U = rng.standard_normal((4, 9, 2))
    Abar, Bbar = discrete_system(3, 7.0, "zoh")
    A_T = np.ascontiguousarray(Abar.T)
    biases = np.sort(rng.normal(0, 0.3, (2, 3, 2)), axis=-1).astype(np.float32)
    scale = np.ones((2, 3))
    before = numba.get_num_threads()
    results = []
    for threads in (None, 1):
        dn, sums = np.zeros((4, 2, 3)), np.zeros((4, 2, 3, cpu.CARRIED_SUMS, 2))
        moments = np.zeros((4, 2, 3, 3))
        moments[..., 1], moments[..., 2] = -np.inf, np.inf
        wins = np.zeros((4, 2, 6))
        cpu.pooled_window_carried(
            U, A_T, Bbar, biases, scale, dn, sums, moments, wins, threads=threads
        )
        results.append((dn, sums, moments, wins))
        assert numba.get_num_threads() == before
    for a, b in zip(*results, strict=True):
        np.testing.assert_array_equal(a, b)


@settings(max_examples=25, deadline=None)
@given(
    order=st.integers(1, 5),
    n_steps=st.integers(1, 30),
    n_biases=st.integers(0, 3),
    partial=st.integers(0, 3),
    keep=st.sets(st.sampled_from(["ppv", "mpv", "lspv", "mean", "max", "min", "compete"])),
    data=st.data(),
)
def test_features_written_from_carried_pools_equal_the_generic_finish(
    order, n_steps, n_biases, partial, keep, data
):
    """The kernel's features, written from carried pools (read only) continued over the
    steps of a block under way, equal the generic path exactly: the pools advanced on a
    copy, finished by :func:`~lmu_sk.engine.algebra.pool_values` and laid out as the
    features lay them (the kept columns of every state, input by input, then the
    competition); the pools are left as they were, and from the zero state the features
    are those of :func:`cpu.pooled_window`."""
    from lmu_sk.engine import algebra, pooling

    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    n, k = 3, 2
    U = rng.standard_normal((n, n_steps + partial, k))
    Abar, Bbar = discrete_system(order, data.draw(st.floats(1.0, 50.0)), "zoh")
    A_T = np.ascontiguousarray(Abar.T)
    biases = np.sort(rng.normal(0, 0.3, (k, order, n_biases)), axis=-1).astype(np.float32)
    scale = rng.uniform(0.5, 2.0, (k, order))
    pools = tuple(sorted(keep, key=pooling.POOLS.index))
    columns = pooling.state_columns(n_biases, pools)
    C, compete = len(columns), "compete" in pools
    # two positions of four, in a row of features with a margin on either side
    positions = np.array([3, 1])
    at = 5
    width = at + 4 * order * (C + 2) + 7
    carried = _carried(U[:, :n_steps], A_T, Bbar, biases, scale, [0, n_steps])
    before = [a.copy() for a in carried]
    F = np.full((n, width), np.nan)
    compete_at = at + 4 * order * C if compete else None
    cpu.pooled_features(
        U[:, n_steps:], np.full(n, partial), A_T, Bbar, biases, scale, F, columns, at,
        compete_at, positions=positions, carried=carried, counted=np.full(n, n_steps + partial),
    )  # fmt: skip
    for a, b in zip(carried, before, strict=True):
        np.testing.assert_array_equal(a, b)  # only read

    advanced = [a.copy() for a in carried]
    cpu.pooled_window_carried(U[:, n_steps:], A_T, Bbar, biases, scale, *advanced)
    values, wins = algebra.pool_values(
        tuple(advanced), n_steps + partial, biases.astype(np.float64), np, pools
    )
    expected = np.full((n, width), np.nan)
    per_state = expected[:, at : at + 4 * order * C].reshape(n, 4, order, C)
    per_state[:, positions] = values
    if compete:
        expected[:, compete_at : compete_at + 4 * 2 * order].reshape(n, 4, 2 * order)[
            :, positions
        ] = wins.reshape(n, k, 2 * order)
    np.testing.assert_array_equal(F, expected)  # NaN where nothing is written

    # from the zero state over every step: the batch kernel's pools
    F = np.full((n, width), np.nan)
    cpu.pooled_features(
        U, np.full(n, n_steps + partial), A_T, Bbar, biases, scale, F, columns, at,
        compete_at, positions=positions,
    )  # fmt: skip
    whole, moments, comp = cpu.pooled_window(
        U, np.full(n, n_steps + partial), A_T, Bbar, biases, scale
    )
    per_state = F[:, at : at + 4 * order * C].reshape(n, 4, order, C)[:, positions]
    np.testing.assert_array_equal(per_state, np.concatenate([whole, moments], -1)[..., columns])
    if compete:
        written = F[:, compete_at : compete_at + 8 * order].reshape(n, 4, 2 * order)
        np.testing.assert_array_equal(written[:, positions], comp)


def test_pieces_across_flushes_give_the_sums_of_the_whole_bit_for_bit():
    """Pieces that straddle the steps where the float32 sums are flushed into float64
    (every FLUSH_STEPS): the carried float32 sum since the last flush and the steps seen
    place the flushes where the whole sequence's are (the sums differed by float32
    rounding: 1.3e-5 of a stream's features in float64)."""
    rng = np.random.default_rng(0)
    n, k, order, K = 2, 2, 4, 3
    n_steps = 2 * cpu.FLUSH_STEPS + 500
    U = rng.standard_normal((n, n_steps, k)).cumsum(axis=1) * 0.05 + 3.0
    Abar, Bbar = discrete_system(order, 40.0, "zoh")
    A_T = np.ascontiguousarray(Abar.T)
    biases = np.sort(rng.normal(0, 0.5, (k, order, K)), axis=-1).astype(np.float32)
    scale = rng.uniform(0.5, 2.0, (k, order))
    flush = cpu.FLUSH_STEPS
    cuts = [0, 1, flush - 1, flush + 300, 2 * flush, 2 * flush + 1, n_steps]
    _, sums, _, _ = _carried(U, A_T, Bbar, biases, scale, cuts)
    pools, _, _ = cpu.pooled_window(U, np.full(n, n_steps), A_T, Bbar, biases, scale)
    count = sums[..., 0, :]
    above = sums[..., 1, :] + sums[..., 4, :]
    mean_above = np.where(count > 0, above / np.maximum(count, 1) - biases, 0.0)
    np.testing.assert_array_equal(mean_above, pools[..., K : 2 * K])
    assert (count > 0).any()


def test_carried_sums_of_another_layout_are_refused_not_read_past():
    """The kernels index the carried sums unchecked: four values per threshold (the
    layout before the float32 sum was carried apart) would be written past."""
    Abar, Bbar = discrete_system(2, 5.0, "zoh")
    biases = np.zeros((1, 2, 1), np.float32)
    moments = np.zeros((1, 1, 2, 3))
    with pytest.raises(ValueError, match=r"sums must have shape \(n_samples, n_inputs, order, 5"):
        cpu.pooled_window_carried(
            np.zeros((1, 3, 1)), np.ascontiguousarray(Abar.T), Bbar, biases, np.ones((1, 2)),
            np.zeros((1, 1, 2)), np.zeros((1, 1, 2, 4, 1)), moments, np.zeros((1, 1, 4)),
        )  # fmt: skip

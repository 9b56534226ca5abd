"""Numba CPU kernels: the Delay Network recurrence, and the recurrence that pools as it goes.

Both take sequences as ``X`` of shape ``(n_samples, n_steps, n_channels)``, left-aligned
with each sample's own length in ``lengths`` (the engine's one ragged convention), run
every (sample, channel) pair in parallel, and write results in the features' layout
(feature ``k * order + i`` is state ``i`` of channel ``k``). ``O(order)`` memory per row.

The recurrence runs as ``m_t = m_{t-1} + [(Abar - I) m_{t-1} + Bbar u_t]``. For long
windows the eigenvalues of ``Abar`` lie within ``~1 / theta`` of 1, and rounding ``Abar``
itself to float32 moves them by ``eps``: a relative change of ``eps * theta`` (3e-3 at
``theta = 5e4``) of the decay that sets the states. ``Abar - I`` rounds with a relative
error of ``eps`` of its own small entries instead, and the increment is added to the state
with Kahan compensation, so the rounding of the state does not pile up over the steps
either. Measured in float32 at order 452, ``theta = 5.5e4``, 100 000 steps: the mean state
is within 5e-6 of the float64 one (relative to its largest value), against 6e-4 with
``Abar`` rounded; both cost the same.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ..reference import COMPETE_TIE
from ._jit import njit_cached
from ._threading import parallel_section

__all__ = [
    "MODES",
    "N_MOMENTS",
    "WindowKernels",
    "block_means",
    "kept_counts",
    "kept_states",
    "pooled_features",
    "pooled_scores",
    "pooled_window",
    "pooled_window_carried",
    "recurrence",
]

MODES = {"final": 0, "sequence": 1, "mean": 2, "max": 3, "kept": 4}


def _read(a, dtype) -> np.ndarray:
    """An input the kernel only reads: contiguous, in ``dtype`` and read-only (a view of
    ``a`` where it already is contiguous in ``dtype``: no copy).

    Numba compiles a kernel once per type of its arguments, and whether an array is
    writable is part of its type: the engine's cached constants are read-only, a user's
    memory-mapped data may be, other arrays are not. Every input read-only, whatever the
    caller's arrays, each kernel compiles once per dtype instead of once per mix (four
    compilations of the pooled kernel, 15 s each, in a fresh environment's test suite).
    """
    a = np.ascontiguousarray(a, dtype=dtype)
    if a.flags.writeable:
        a = a.view()
        a.flags.writeable = False
    return a


@njit_cached(parallel=True)
def _recurrence(
    X, lengths, D_T, Bbar, mode, m0, use_m0, out, last, every, first, row
):  # pragma: no cover
    # D_T = (Abar - I).T in the dtype of X; mode 4 ('kept') writes the state after step t
    # of sample s where first[s] + t is a multiple of every, at rows row[s], row[s] + 1...
    n_samples, _, n_channels = X.shape
    d = Bbar.shape[0]
    for r in prange(n_samples * n_channels):
        s = r // n_channels
        k = r - s * n_channels
        n = lengths[s]
        at = row[s] if mode == 4 else 0
        state = np.zeros(d, dtype=X.dtype)
        if use_m0:
            for i in range(d):
                state[i] = m0[s, k * d + i]
        comp = np.zeros(d, dtype=X.dtype)  # Kahan compensation of the state's rounding
        new = np.empty(d, dtype=X.dtype)
        # the sum (and maximum) over time in float64 whatever the dtype: a float32 running
        # sum over 30k steps adds ~2e-6 of the mean's scale; O(d) next to the O(d**2) update
        pooled = np.zeros(d, dtype=np.float64)
        for t in range(n):
            u = X[s, t, k]
            # new = (Abar - I) m + Bbar u, the step's increment, less the carried rounding
            for i in range(d):
                new[i] = Bbar[i] * u - comp[i]
            for j in range(d):
                mj = state[j]
                for i in range(d):
                    new[i] += D_T[j, i] * mj
            for i in range(d):
                total = state[i] + new[i]
                comp[i] = (total - state[i]) - new[i]
                state[i] = total
            if mode == 1:
                for i in range(d):
                    out[s, t, k * d + i] = state[i]
            elif mode == 4:
                if (first[s] + t) % every == 0:
                    for i in range(d):
                        out[at, 0, k * d + i] = state[i]
                    at += 1
            elif mode == 2:
                for i in range(d):
                    pooled[i] += state[i]
            elif mode == 3:
                for i in range(d):
                    p = pooled[i]
                    # np.maximum's rule: a NaN state makes the maximum NaN, and it stays NaN
                    if t == 0 or (p == p and not (state[i] <= p)):
                        pooled[i] = state[i]
        for i in range(d):
            last[s, k * d + i] = state[i]
        if mode == 2:
            for i in range(d):
                out[s, 0, k * d + i] = pooled[i] / max(n, 1)
        elif mode == 3:
            for i in range(d):
                out[s, 0, k * d + i] = pooled[i]


def recurrence(
    X: np.ndarray,
    lengths: np.ndarray,
    D_T: np.ndarray,
    Bbar: np.ndarray,
    output: str = "final",
    initial_state: np.ndarray | None = None,
    out: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Delay Network states of every (sample, channel) by the compiled recurrence.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_steps, n_channels), float32 or float64
        Left-aligned sequences; sample ``s`` runs for ``lengths[s]`` steps (which may be
        0: its state stays the initial one).
    lengths : int64 ndarray of shape (n_samples,)
    D_T : ndarray of shape (order, order)
        ``(Abar - I).T`` in the dtype of ``X``.
    Bbar : ndarray of shape (order,)
        In the dtype of ``X``.
    output : {'final', 'sequence', 'mean', 'max'}
    initial_state : ndarray of shape (n_samples, n_channels * order), optional
        The state before the first step (zero by default).
    out : ndarray of shape (n_samples, n_steps, n_channels * order), optional
        Where 'sequence' writes its states; steps at or after a sample's length are left
        as they are.

    Returns
    -------
    result : ndarray
        ``(n_samples, n_steps, n_channels * order)`` for 'sequence', else
        ``(n_samples, n_channels * order)``.
    last : ndarray of shape (n_samples, n_channels * order)
        The state after each sample's last step.
    """
    if output == "kept":
        raise ValueError("output='kept' is kept_states's.")
    mode = MODES[output]
    n_samples, n_steps, n_channels = X.shape
    d = Bbar.shape[0]
    dtype = X.dtype
    if out is None:
        out = np.empty((n_samples, n_steps if mode == 1 else 1, n_channels * d), dtype=dtype)
    elif mode != 1:
        raise ValueError("out is only used by output='sequence'.")
    last = _run_recurrence(X, lengths, D_T, Bbar, mode, initial_state, out)
    if mode == 1:
        return out, last
    if mode == 0:
        return last, last
    return out[:, 0], last


@njit_cached(parallel=True, error_model="numpy")
def _block_means(X, lengths, stride, out):  # pragma: no cover
    # the sum of each block's steps in step order (zeros past a sample's length count
    # as steps), divided by its steps within the sample's length (at least 1)
    n_samples, n_steps, n_channels = X.shape
    for s in prange(n_samples):
        for b in range(out.shape[1]):
            start = b * stride
            stop = min(start + stride, n_steps)
            steps = min(max(lengths[s] - start, 1), stride)
            for k in range(n_channels):
                out[s, b, k] = X[s, start, k]
            for t in range(start + 1, stop):
                for k in range(n_channels):
                    out[s, b, k] += X[s, t, k]
            for k in range(n_channels):
                out[s, b, k] /= steps


def block_means(X: np.ndarray, lengths: np.ndarray, stride: int) -> np.ndarray:
    """Means of consecutive blocks of ``stride`` steps of every sample, compiled: one pass
    over ``X`` (``np.add.reduceat`` along the steps takes 4x as long at stride 2, 2x at 4,
    as long at 16; one core, 3 channels).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_steps, n_channels), float32 or float64
        Left-aligned sequences, zero past each sample's length.
    lengths : int ndarray of shape (n_samples,)
        Each sample's own number of steps; a block's mean divides its sum by its steps
        within that length (at least one).
    stride : int
        Steps per block, at least 1; the last block may be shorter.

    Returns
    -------
    ndarray of shape (n_samples, ceil(n_steps / stride), n_channels), the dtype of ``X``
    """
    if stride < 1:
        raise ValueError(f"stride must be at least 1, got {stride}.")
    n_samples, n_steps, n_channels = X.shape
    out = np.empty((n_samples, -(-n_steps // stride), n_channels), dtype=X.dtype)
    if out.size:
        with parallel_section(_threads_for(X.size)):
            _block_means(_read(X, X.dtype), _read(lengths, np.int64), int(stride), out)
    return out


def kept_states(
    X: np.ndarray,
    lengths: np.ndarray,
    D_T: np.ndarray,
    Bbar: np.ndarray,
    every: int,
    first: np.ndarray,
    row: np.ndarray,
    out: np.ndarray,
    initial_state: np.ndarray | None = None,
) -> np.ndarray:
    """Every ``every``-th state of a numbering of all steps, written into ``out``: the
    recurrence of :func:`recurrence`, arithmetic and all, without holding the others.

    Step ``t`` of sample ``s`` is numbered ``first[s] + t``; the states of the numbers that
    are multiples of ``every`` are written in order of ``t`` at rows ``row[s]``,
    ``row[s] + 1``, ... of ``out``.

    Parameters
    ----------
    X, lengths, D_T, Bbar, initial_state
        As for :func:`recurrence`.
    every : int
        At least 1.
    first, row : int64 ndarray of shape (n_samples,)
    out : C-contiguous ndarray of shape (n_rows, n_channels * order), the dtype of ``X``

    Returns
    -------
    last : ndarray of shape (n_samples, n_channels * order)
        The state after each sample's last step.
    """
    if every < 1:
        raise ValueError(f"every must be at least 1, got {every}.")
    if not (out.flags.c_contiguous and out.dtype == X.dtype and out.ndim == 2):
        raise ValueError("out must be a C-contiguous 2-D array in the dtype of X.")
    first, row = _read(first, np.int64), _read(row, np.int64)
    # the kernel writes unchecked: every kept row must lie within out
    kept = kept_counts(first, lengths, every)
    if len(row) and (row.min() < 0 or (row + kept).max() > out.shape[0]):
        raise ValueError(
            f"The kept states need rows up to {int((row + kept).max())} of out, which has "
            f"{out.shape[0]} (and none below 0): give a larger out or other rows."
        )
    rows = out.reshape(out.shape[0], 1, out.shape[1])  # the layout the kernel writes
    keep = (int(every), first, row)
    return _run_recurrence(X, lengths, D_T, Bbar, MODES["kept"], initial_state, rows, keep)


def kept_counts(first: np.ndarray, lengths: np.ndarray, every: int) -> np.ndarray:
    """How many states :func:`kept_states` keeps of each sample: the multiples of
    ``every`` in ``[first[s], first[s] + lengths[s])``."""
    first = np.asarray(first, dtype=np.int64)
    return -(-(first + np.asarray(lengths)) // every) - -(-first // every)


def _run_recurrence(X, lengths, D_T, Bbar, mode, initial_state, out, keep=None) -> np.ndarray:
    """The compiled recurrence in ``mode`` into ``out``; returns the last states."""
    n_samples, _, n_channels = X.shape
    dtype = X.dtype
    last = np.empty((n_samples, n_channels * Bbar.shape[0]), dtype=dtype)
    use_m0 = initial_state is not None
    m0 = initial_state if use_m0 else np.zeros((1, 1), dtype)
    if keep is None:
        none = _read(np.zeros(1, np.int64), np.int64)
        keep = (1, none, none)
    with parallel_section(_threads_for(X.size * Bbar.shape[0] ** 2)):
        _recurrence(
            _read(X, dtype),
            _read(lengths, np.int64),
            _read(D_T, dtype),
            _read(Bbar, dtype),
            mode,
            _read(m0, dtype),
            use_m0,
            out,
            last,
            *keep,
        )
    return last


# A parallel kernel with fewer operations than this (elements read, or multiply-adds of
# the recurrence) runs on one thread: waking the others (an OpenMP team) costs more than
# they save. The features of one series of 300 steps took 8.7 ms on two threads against
# 1.1 ms on one (2 cores); the pooled kernel's own choice comes from the engine's cost
# table (plan.kernel_threads).
FEW_OPERATIONS = 1 << 20


def _threads_for(operations: int) -> int | None:
    """One thread for fewer than :data:`FEW_OPERATIONS`, else all (None)."""
    return 1 if operations < FEW_OPERATIONS else None


# Counts, sums and runs above the thresholds accumulate in float32 (8 SIMD lanes) and are
# flushed into float64 every this many steps: exact counts, and the rounding of a sum
# bounded by that many terms.
FLUSH_STEPS = 1024
# Steps whose states are computed before their pools are taken state by state, each
# state's accumulators copied into local arrays for the block (the threshold loop then
# vectorises without re-reading them every step: 4-5x faster); divides FLUSH_STEPS.
TIME_BLOCK = 256
# The threshold loop runs over a whole number of this many lanes, those beyond the
# thresholds at +inf (never exceeded, so their pools stay zero and are not read): LLVM
# vectorizes it 8 floats wide, and 4, 12 or 20 thresholds left a scalar remainder. One
# thread, 300 series of 500 steps: 4 / 8 / 12 / 16 / 20 thresholds took 0.41 / 0.20 /
# 0.46 / 0.24 / 0.38 s before, the same features bit for bit after.
THRESHOLD_LANES = 8
# per state: ppv, mpv and lspv at every threshold, then mean, max and min
N_MOMENTS = 3
# what a stream carries per threshold: the count of steps above it, the float64 sum of the
# states there flushed so far, the current run above it, the longest run, and the float32
# sum since the last flush (a value of float32 held in float64)
CARRIED_SUMS = 5
# Rows whose features the scores of a stream's checkpoint compute at a time (their
# features, a window's, stay in cache until multiplied by the head's weights).
SCORED_ROWS = 64


# compiled with its own fastmath flags (no reassociation: the sums keep their order), and
# inlined by LLVM
@njit_cached(fastmath={"contract", "nsz"}, error_model="numpy")
def _threshold_step(m, threshold, count, total, run, best):  # pragma: no cover
    """One step of a float32 state ``m`` against one threshold: the count of steps above
    it, the sum of the states there, the current run above it and the longest run.

    Each update a select (an add and a masked move across the thresholds' lanes): the
    run's chain of dependent operations per step is an add, not an add and a multiply by
    the hit as 0 or 1 (the same values; 1.1x faster per window).
    """
    above = m > threshold
    run = run + np.float32(1.0) if above else np.float32(0.0)
    count = count + np.float32(1.0) if above else count
    total = total + m if above else total
    return count, total, run, max(best, run)


# compiled with its own fastmath flags (no reassociation: its sums as written), and inlined
# by LLVM; called by the batch and the stream's step alike, so that their states agree
@njit_cached(fastmath={"contract", "nsz"}, error_model="numpy")
def _state_of_8(A_T, B, i, u, s0, s1, s2, s3, s4, s5, s6, s7):  # pragma: no cover
    """State ``i`` of an order-8 Delay Network one step after the state ``s0 ... s7``
    (``A_T`` its transposed state matrix, ``B`` its input vector, ``u`` the input): the
    products summed in pairs, the pairs' sums in pairs."""
    return B[i] * u + (
        ((A_T[0, i] * s0 + A_T[1, i] * s1) + (A_T[2, i] * s2 + A_T[3, i] * s3))
        + ((A_T[4, i] * s4 + A_T[5, i] * s5) + (A_T[6, i] * s6 + A_T[7, i] * s7))
    )


# reassociation lets the state update vectorize; no 'nnan'/'ninf': the pools start at +-inf
@njit_cached(parallel=True, fastmath={"reassoc", "contract", "nsz"}, error_model="numpy")
def _pooled_window(
    U, inputs, lengths, Abar_T, Bbar, biases, scale, with_moments, resume, commit, dn, sums,
    moments, wins, counted, out, positions, where, values_at, compete_at,
):  # fmt: skip  # pragma: no cover
    # resume: from the state dn and the running pools sums (count, sum of the states above,
    # current run, longest run per threshold), moments (sum, max, min) and wins (counts of
    # wins, then of losses), only read; else from the zero state. commit: the state and
    # the running pools written back there; else the features over counted[s] steps
    # written into out: input c's per-state column where[j] (of [ppv x K, mpv x K,
    # lspv x K, mean, max, min]; < 0 not kept) of state i at values_at + (positions[c] *
    # order + i) * n_columns + where[j], its competition at compete_at + positions[c] *
    # 2 * order (compete_at < 0: not kept). Either way the states above a threshold are
    # summed rounded to float32, in float32 flushed into float64 every FLUSH_STEPS and at
    # the end. Only explicit loops inside the parallel loop: a whole-array statement there
    # becomes a parallel loop of its own and multiplies the compile time.
    n_samples = U.shape[0]
    n_inputs = inputs.shape[0]
    order = Bbar.shape[0]
    K = biases.shape[2]
    n_columns = 0
    for j in range(where.shape[0]):
        n_columns = max(n_columns, where[j] + 1)
    # each state a dot product of a row with the state before: 1.6x faster per step at
    # order 8 than accumulating the columns into the new state; at order 8 itself eight
    # scalars (_state_of_8), 1.2x faster per window again. Also measured and slower or no
    # faster: two or three inputs' recurrences interleaved step by step (the step was
    # bound by its scalar work, the competition and the copies, not by the dot products'
    # chain), the states of 8-128 samples across SIMD lanes (1.4x on the recurrence alone
    # at 128, lost to the transposed copies), fixed-size loops over 8 padded states
    # (Numba leaves LLVM's SLP vectorizer off, so such loops stay scalar), the order-8
    # state through an array, a loop over its rows (no faster than the dot products), and
    # the block's recurrence and competition as functions of their own (1.5x slower per
    # window: not inlined)
    Abar = np.empty((order, order))
    for i in range(order):
        for j in range(order):
            Abar[i, j] = Abar_T[j, i]
    for s in prange(n_samples):
        n = lengths[s]
        state = np.empty(order)
        new = np.empty(order)
        count = np.empty((order, K), dtype=np.float32)
        total = np.empty((order, K), dtype=np.float32)
        run = np.empty((order, K), dtype=np.float32)
        best = np.empty((order, K), dtype=np.float32)
        count64 = np.empty((order, K))
        total64 = np.empty((order, K))
        mom = np.empty((order, N_MOMENTS))
        won = np.empty(2 * order)
        block = np.empty((order, TIME_BLOCK))
        high = np.empty(TIME_BLOCK)
        low = np.empty(TIME_BLOCK)
        winner = np.empty(TIME_BLOCK, dtype=np.int64)
        loser = np.empty(TIME_BLOCK, dtype=np.int64)
        # the block's accumulators and thresholds over whole lanes (THRESHOLD_LANES): the
        # lanes beyond K compare with +inf and stay zero
        lanes = (K + THRESHOLD_LANES - 1) // THRESHOLD_LANES * THRESHOLD_LANES
        count_i = np.zeros(lanes, dtype=np.float32)
        total_i = np.zeros(lanes, dtype=np.float32)
        run_i = np.zeros(lanes, dtype=np.float32)
        best_i = np.zeros(lanes, dtype=np.float32)
        bi = np.full(lanes, np.inf, dtype=np.float32)
        for c in range(n_inputs):
            b = biases[c]
            for i in range(order):
                state[i] = dn[s, c, i] if resume else 0.0
                for k in range(K):
                    count[i, k] = 0.0
                    total[i, k] = 0.0
                    if resume:
                        count64[i, k] = sums[s, c, i, 0, k]
                        total64[i, k] = sums[s, c, i, 1, k]
                        total[i, k] = np.float32(sums[s, c, i, 4, k])
                        run[i, k] = sums[s, c, i, 2, k]
                        best[i, k] = sums[s, c, i, 3, k]
                    else:
                        count64[i, k] = 0.0
                        total64[i, k] = 0.0
                        run[i, k] = 0.0
                        best[i, k] = 0.0
                if resume:
                    for j in range(N_MOMENTS):
                        mom[i, j] = moments[s, c, i, j]
                    won[i] = wins[s, c, i]
                    won[order + i] = wins[s, c, order + i]
                else:
                    mom[i, 0] = 0.0
                    mom[i, 1] = -np.inf
                    mom[i, 2] = np.inf
                    won[i] = 0.0
                    won[order + i] = 0.0
            # blocks of TIME_BLOCK steps of the whole sequence (where resumed, the first
            # finishes the block under way) and a countdown to the next flush (a modulo
            # each step costs more): the float32 sums flushed at the same steps as the
            # whole sequence's, so that a stream's sums are the batch's bit for bit
            offset = 0
            flush = FLUSH_STEPS
            if resume:
                before = counted[s] - n
                offset = before % TIME_BLOCK
                flush = FLUSH_STEPS - before % FLUSH_STEPS
            for blk in range((n + offset + TIME_BLOCK - 1) // TIME_BLOCK):
                t0 = max(0, blk * TIME_BLOCK - offset)
                steps_in = min(n, (blk + 1) * TIME_BLOCK - offset) - t0
                # the block's states, in order (state i's steps contiguous: read by the
                # competition and the thresholds' passes below); at order 8 (the default
                # windows' largest) the state in eight scalars, which LLVM keeps in
                # registers from step to step
                if order == 8:
                    s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
                    s4, s5, s6, s7 = state[4], state[5], state[6], state[7]
                    for t in range(steps_in):
                        u = U[s, t0 + t, inputs[c]]
                        n0 = _state_of_8(Abar_T, Bbar, 0, u, s0, s1, s2, s3, s4, s5, s6, s7)
                        n1 = _state_of_8(Abar_T, Bbar, 1, u, s0, s1, s2, s3, s4, s5, s6, s7)
                        n2 = _state_of_8(Abar_T, Bbar, 2, u, s0, s1, s2, s3, s4, s5, s6, s7)
                        n3 = _state_of_8(Abar_T, Bbar, 3, u, s0, s1, s2, s3, s4, s5, s6, s7)
                        n4 = _state_of_8(Abar_T, Bbar, 4, u, s0, s1, s2, s3, s4, s5, s6, s7)
                        n5 = _state_of_8(Abar_T, Bbar, 5, u, s0, s1, s2, s3, s4, s5, s6, s7)
                        n6 = _state_of_8(Abar_T, Bbar, 6, u, s0, s1, s2, s3, s4, s5, s6, s7)
                        n7 = _state_of_8(Abar_T, Bbar, 7, u, s0, s1, s2, s3, s4, s5, s6, s7)
                        s0, s1, s2, s3, s4, s5, s6, s7 = n0, n1, n2, n3, n4, n5, n6, n7
                        block[0, t], block[1, t], block[2, t], block[3, t] = s0, s1, s2, s3
                        block[4, t], block[5, t], block[6, t], block[7, t] = s4, s5, s6, s7
                    state[0], state[1], state[2], state[3] = s0, s1, s2, s3
                    state[4], state[5], state[6], state[7] = s4, s5, s6, s7
                else:
                    for t in range(steps_in):
                        u = U[s, t0 + t, inputs[c]]
                        for i in range(order):
                            acc = Bbar[i] * u
                            for j in range(order):
                                acc += Abar[i, j] * state[j]
                            new[i] = acc
                        for i in range(order):
                            m = new[i]
                            state[i] = m  # copied back: swapping the two arrays stops LLVM
                            block[i, t] = m  # from telling them apart (1.7x slower)
                # the competition of every step of the block, each pass vectorized over
                # the steps (1.1x faster per window than step by step inside the
                # recurrence's loop): the first state within the tie of the largest, of
                # the smallest, from the last state down, a select each
                for t in range(steps_in):
                    high[t] = -np.inf
                    low[t] = np.inf
                for i in range(order):
                    si = scale[c, i]
                    for t in range(steps_in):
                        v = block[i, t] * si
                        high[t] = max(high[t], v)
                        low[t] = min(low[t], v)
                for t in range(steps_in):
                    high[t] -= COMPETE_TIE
                    low[t] += COMPETE_TIE
                    winner[t] = order - 1
                    loser[t] = order - 1
                for i in range(order - 2, -1, -1):
                    si = scale[c, i]
                    for t in range(steps_in):
                        v = block[i, t] * si
                        winner[t] = i if v >= high[t] else winner[t]
                        loser[t] = i if v <= low[t] else loser[t]
                for t in range(steps_in):
                    won[winner[t]] += 1.0
                    won[order + loser[t]] += 1.0
                # then state by state over the block: its pools in local accumulators
                # (each summed in the same order as step by step: the same roundings)
                for i in range(order):
                    for k in range(K):
                        bi[k] = b[i, k]
                        count_i[k] = count[i, k]
                        total_i[k] = total[i, k]
                        run_i[k] = run[i, k]
                        best_i[k] = best[i, k]
                    # eight steps at a time: each accumulator read and written once per
                    # eight steps (a threshold's eight updates in registers, in the same
                    # order as step by step: the same roundings; 1.1x faster per window
                    # than four at a time)
                    t = 0
                    whole = steps_in - steps_in % 8
                    while t < whole:
                        m0 = np.float32(block[i, t])
                        m1 = np.float32(block[i, t + 1])
                        m2 = np.float32(block[i, t + 2])
                        m3 = np.float32(block[i, t + 3])
                        m4 = np.float32(block[i, t + 4])
                        m5 = np.float32(block[i, t + 5])
                        m6 = np.float32(block[i, t + 6])
                        m7 = np.float32(block[i, t + 7])
                        # branch-free over the thresholds: vectorises across them
                        for k in range(lanes):
                            bk = bi[k]
                            count_k = count_i[k]
                            total_k = total_i[k]
                            run_k = run_i[k]
                            best_k = best_i[k]
                            count_k, total_k, run_k, best_k = _threshold_step(
                                m0, bk, count_k, total_k, run_k, best_k
                            )
                            count_k, total_k, run_k, best_k = _threshold_step(
                                m1, bk, count_k, total_k, run_k, best_k
                            )
                            count_k, total_k, run_k, best_k = _threshold_step(
                                m2, bk, count_k, total_k, run_k, best_k
                            )
                            count_k, total_k, run_k, best_k = _threshold_step(
                                m3, bk, count_k, total_k, run_k, best_k
                            )
                            count_k, total_k, run_k, best_k = _threshold_step(
                                m4, bk, count_k, total_k, run_k, best_k
                            )
                            count_k, total_k, run_k, best_k = _threshold_step(
                                m5, bk, count_k, total_k, run_k, best_k
                            )
                            count_k, total_k, run_k, best_k = _threshold_step(
                                m6, bk, count_k, total_k, run_k, best_k
                            )
                            count_k, total_k, run_k, best_k = _threshold_step(
                                m7, bk, count_k, total_k, run_k, best_k
                            )
                            count_i[k] = count_k
                            total_i[k] = total_k
                            run_i[k] = run_k
                            best_i[k] = best_k
                        t += 8
                    for t in range(whole, steps_in):  # the last steps of the block
                        m32 = np.float32(block[i, t])
                        for k in range(lanes):
                            count_i[k], total_i[k], run_i[k], best_i[k] = _threshold_step(
                                m32, bi[k], count_i[k], total_i[k], run_i[k], best_i[k]
                            )
                    for k in range(K):
                        count[i, k] = count_i[k]
                        total[i, k] = total_i[k]
                        run[i, k] = run_i[k]
                        best[i, k] = best_i[k]
                    if with_moments:
                        for t in range(steps_in):
                            m = block[i, t]
                            mom[i, 0] += m
                            mom[i, 1] = max(mom[i, 1], m)
                            mom[i, 2] = min(mom[i, 2], m)
                flush -= steps_in
                if flush == 0:  # TIME_BLOCK divides FLUSH_STEPS: at a block's end
                    flush = FLUSH_STEPS
                    for i in range(order):
                        for k in range(K):
                            count64[i, k] += count[i, k]
                            total64[i, k] += total[i, k]
                            count[i, k] = 0.0
                            total[i, k] = 0.0
            if commit:  # the float32 sum since the last flush carried apart (the counts
                # are whole numbers: exact either way)
                for i in range(order):
                    dn[s, c, i] = state[i]
                    for k in range(K):
                        sums[s, c, i, 0, k] = count64[i, k] + count[i, k]
                        sums[s, c, i, 1, k] = total64[i, k]
                        sums[s, c, i, 2, k] = run[i, k]
                        sums[s, c, i, 3, k] = best[i, k]
                        sums[s, c, i, 4, k] = total[i, k]
                    for j in range(N_MOMENTS):
                        moments[s, c, i, j] = mom[i, j]
                    wins[s, c, i] = won[i]
                    wins[s, c, order + i] = won[order + i]
                continue
            steps = counted[s]
            row = out[s]
            for i in range(order):
                at = values_at + (positions[c] * order + i) * n_columns
                for k in range(K):
                    hits = count64[i, k] + count[i, k]
                    if where[k] >= 0:
                        row[at + where[k]] = hits / steps
                    if where[K + k] >= 0:
                        above = total64[i, k] + total[i, k]
                        row[at + where[K + k]] = above / hits - b[i, k] if hits > 0 else 0.0
                    if where[2 * K + k] >= 0:
                        row[at + where[2 * K + k]] = best[i, k] / steps
                if where[3 * K] >= 0:
                    row[at + where[3 * K]] = mom[i, 0] / steps
                for j in range(1, N_MOMENTS):
                    if where[3 * K + j] >= 0:
                        row[at + where[3 * K + j]] = mom[i, j]
            if compete_at >= 0:
                at = compete_at + positions[c] * 2 * order
                for j in range(2 * order):
                    row[at + j] = won[j] / steps


def pooled_window(
    U: np.ndarray,
    lengths: np.ndarray,
    Abar_T: np.ndarray,
    Bbar: np.ndarray,
    biases: np.ndarray,
    scale: np.ndarray,
    with_moments: bool = True,
    inputs: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pools over time of the states of one window's Delay Network over every input.

    The state runs in float64; each step it is rounded to float32 and compared with the
    float32 thresholds: a state within float32 rounding of a threshold (a relative
    ``6e-8``) may count on either side, a change of at most ``1 / n`` in a proportion.

    Parameters
    ----------
    U : ndarray of shape (n_samples, n_steps, n_columns), float64
        Left-aligned sequences; steps at or after a sample's length are ignored.
    lengths : int ndarray of shape (n_samples,)
        Each sample's own number of steps, ``1 <= lengths <= n_steps``.
    Abar_T : ndarray of shape (order, order)
        The transposed state matrix.
    Bbar : ndarray of shape (order,)
    biases : ndarray of shape (n_inputs, order, n_biases), float32
        The thresholds of every input's states.
    scale : ndarray of shape (n_inputs, order)
        Scales of the states for the competition pools.
    with_moments : bool, default=True
        Compute ``moments``; without, they are left as zero means and infinite extremes
        (a few percent faster when no moment is pooled).
    inputs : int ndarray of shape (n_inputs,), optional
        The columns of ``U`` that are this window's inputs (read in place, not gathered);
        all of them by default.

    Returns
    -------
    pools : ndarray of shape (n_samples, n_inputs, order, 3 * n_biases), float64
        Per state: the proportion of steps above each threshold, the mean excess over each
        threshold on those steps (0 if none), and the longest run of steps above each
        threshold divided by the length.
    moments : ndarray of shape (n_samples, n_inputs, order, 3), float64
        Per state its mean, maximum and minimum.
    comp : ndarray of shape (n_samples, n_inputs, 2 * order), float64
        The proportion of steps on which each state, scaled, is the largest of the window,
        then the smallest.
    """
    n_samples = U.shape[0]
    n_inputs = U.shape[2] if inputs is None else len(inputs)
    order = Bbar.shape[0]
    K = biases.shape[2]
    n_columns = 3 * K + N_MOMENTS
    out = np.empty((n_samples, n_inputs * (order * n_columns + 2 * order)))
    pooled_features(
        U, lengths, Abar_T, Bbar, biases, scale, out, np.arange(n_columns), 0,
        n_inputs * order * n_columns, with_moments=with_moments, inputs=inputs,
    )  # fmt: skip
    values = out[:, : n_inputs * order * n_columns].reshape(n_samples, n_inputs, order, -1)
    comp = out[:, n_inputs * order * n_columns :].reshape(n_samples, n_inputs, 2 * order)
    return values[..., : 3 * K], values[..., 3 * K :], comp


def pooled_features(
    U: np.ndarray,
    lengths: np.ndarray,
    Abar_T: np.ndarray,
    Bbar: np.ndarray,
    biases: np.ndarray,
    scale: np.ndarray,
    out: np.ndarray,
    columns: np.ndarray,
    values_at: int,
    compete_at: int | None,
    *,
    with_moments: bool = True,
    inputs: np.ndarray | None = None,
    positions: np.ndarray | None = None,
    carried: tuple | None = None,
    counted: np.ndarray | None = None,
    threads: int | None = None,
) -> None:
    """Write the pooled features of one window's inputs straight into the caller's rows.

    The kernel of :func:`pooled_window` from the zero state, or continued over ``U`` from
    ``carried`` pools (which it only reads: a stream's block under way, evaluated and not
    committed), finished into ``out`` in the features' layout without temporaries.

    Parameters
    ----------
    U, lengths, Abar_T, Bbar, biases, scale, with_moments, inputs
        As for :func:`pooled_window`; ``lengths`` may be 0 (with ``carried``: the carried
        pools alone).
    out : ndarray of shape (n_samples, n_features), C-contiguous float64
        The features' rows, written in place.
    columns : int ndarray
        The per-state columns kept, of ``[ppv x n_biases, mpv x n_biases, lspv x n_biases,
        mean, max, min]``, in that order (:func:`lmu_sk.engine.pooling.state_columns`).
    values_at : int
        Where the window's per-state block starts in a row of ``out``: input position
        ``p``'s state ``i`` has its kept columns at ``values_at + (p * order + i) *
        len(columns)``.
    compete_at : int or None
        Where the window's competition block starts (position ``p``'s ``2 * order``
        proportions at ``compete_at + 2 * p * order``); None: not kept.
    positions : int ndarray of shape (n_inputs,), optional
        The position of each input in the window (by default ``0 .. n_inputs - 1``).
    carried : tuple, optional
        ``(dn, sums, moments, wins)`` as :func:`pooled_window_carried` advances them: the
        pools to continue from (not modified).
    counted : int ndarray of shape (n_samples,), optional
        The steps the features are over (by default ``lengths``: with ``carried``, pass
        the steps pooled before as well; the float32 sums are flushed where the whole
        sequence's are).
    threads : int, optional
        Run on at most this many threads (all by default).
    """
    kernels = WindowKernels(Abar_T, Bbar, biases, scale, columns, with_moments, inputs)
    kernels.write(U, lengths, carried, counted, out, positions, values_at, compete_at, threads)


def pooled_scores(
    U: np.ndarray,
    lengths: np.ndarray,
    Abar_T: np.ndarray,
    Bbar: np.ndarray,
    biases: np.ndarray,
    scale: np.ndarray,
    carried: tuple,
    counted: np.ndarray,
    columns: np.ndarray,
    compete: bool,
    weights: np.ndarray,
    scores: np.ndarray,
    *,
    with_moments: bool = True,
    threads: int | None = None,
) -> None:
    """Add the carried pools' features times ``weights`` to ``scores``, in place: a linear
    head's share of one window, without writing its features out.

    The features are :func:`pooled_features`' of ``carried`` continued over at most one
    step (``lengths`` 0 or 1, a stream's block under way), every input at its own position,
    in the window's layout: per input and state the ``columns`` kept, then with
    ``compete`` per input the ``2 * order`` proportions. They are computed a few rows at a
    time, each block multiplied by ``weights`` while it is in cache.

    Parameters
    ----------
    U, lengths, Abar_T, Bbar, biases, scale, carried, counted, columns, with_moments
        As for :func:`pooled_features`.
    compete : bool
        Whether the window's features end with its competition.
    weights : ndarray of shape (n_window_features, n_outputs), float64
        The head's weights of the window's features.
    scores : ndarray of shape (n_samples, n_outputs), C-contiguous float64
        Added to in place.
    threads : int, optional
        Run on at most this many threads (all by default).
    """
    kernels = WindowKernels(Abar_T, Bbar, biases, scale, columns, with_moments)
    kernels.add_scores(U, lengths, carried, counted, compete, weights, scores, threads)


@njit_cached(inline="always", fastmath={"reassoc", "contract", "nsz"}, error_model="numpy")
def _next_state(Abar_T, Bbar, dn, s, c, i, u):  # pragma: no cover
    """State ``i`` one step after the carried state ``dn[s, c]``, as _pooled_window
    computes it (at order 8 by _state_of_8, else a dot product of a row of ``Abar`` with
    the state before)."""
    if Bbar.shape[0] == 8:
        return _state_of_8(
            Abar_T, Bbar, i, u, dn[s, c, 0], dn[s, c, 1], dn[s, c, 2], dn[s, c, 3],
            dn[s, c, 4], dn[s, c, 5], dn[s, c, 6], dn[s, c, 7],
        )  # fmt: skip
    acc = Bbar[i] * u
    for j in range(Bbar.shape[0]):
        acc += Abar_T[j, i] * dn[s, c, j]
    return acc


@njit_cached(fastmath={"reassoc", "contract", "nsz"}, error_model="numpy")
def _finished_row(
    U, inputs, lengths, Abar_T, Bbar, scale, with_moments, dn, sums, moments, wins, biases,
    counted, row, positions, n_columns, groups, values_at, compete_at, s,
):  # fmt: skip  # pragma: no cover
    # the features of sample s's carried pools continued over at most one more step
    # (lengths[s], 0 or 1: a stream's block under way), written into row: what
    # _pooled_window writes when it resumes over that step, in the same arithmetic, without
    # its per-sample working arrays (the new state is computed where it is needed, from the
    # carried one). groups: the columns of the kept pools in a state's block (see
    # _kept_groups)
    n_inputs, order, _, K = sums.shape[1:]
    ppv_at, mpv_at, lspv_at, mean_at, max_at, min_at = groups
    steps = counted[s]
    pending = lengths[s] > 0
    for c in range(n_inputs):
        b = biases[c]
        u = U[s, 0, inputs[c]] if pending else 0.0
        winner = loser = -1
        if pending:  # the competition of the step: the first within the tie
            high = -np.inf
            low = np.inf
            for i in range(order):
                v = _next_state(Abar_T, Bbar, dn, s, c, i, u) * scale[c, i]
                high = max(high, v)
                low = min(low, v)
            winner = 0
            while (
                winner < order - 1
                and _next_state(Abar_T, Bbar, dn, s, c, winner, u) * scale[c, winner]
                < high - COMPETE_TIE
            ):
                winner += 1
            loser = 0
            while (
                loser < order - 1
                and _next_state(Abar_T, Bbar, dn, s, c, loser, u) * scale[c, loser]
                > low + COMPETE_TIE
            ):
                loser += 1
        for i in range(order):
            at = values_at + (positions[c] * order + i) * n_columns
            if not pending:  # each kept group a contiguous run of columns: vectorised
                if ppv_at >= 0:
                    for k in range(K):
                        row[at + ppv_at + k] = sums[s, c, i, 0, k] / steps
                if mpv_at >= 0:
                    for k in range(K):
                        hits = sums[s, c, i, 0, k]
                        above = (sums[s, c, i, 1, k] + sums[s, c, i, 4, k]) / hits - b[i, k]
                        row[at + mpv_at + k] = above if hits > 0 else 0.0
                if lspv_at >= 0:
                    for k in range(K):
                        row[at + lspv_at + k] = np.float32(sums[s, c, i, 3, k]) / steps
                if mean_at >= 0:
                    row[at + mean_at] = moments[s, c, i, 0] / steps
                if max_at >= 0:
                    row[at + max_at] = moments[s, c, i, 1]
                if min_at >= 0:
                    row[at + min_at] = moments[s, c, i, 2]
                continue
            m = _next_state(Abar_T, Bbar, dn, s, c, i, u)
            m32 = np.float32(m)
            for k in range(K):
                count, total, _run, best = _threshold_step(
                    m32,
                    b[i, k],
                    np.float32(0.0),
                    np.float32(sums[s, c, i, 4, k]),  # the float32 sum since the flush
                    np.float32(sums[s, c, i, 2, k]),
                    np.float32(sums[s, c, i, 3, k]),
                )
                hits = sums[s, c, i, 0, k] + count
                if ppv_at >= 0:
                    row[at + ppv_at + k] = hits / steps
                if mpv_at >= 0:
                    above = sums[s, c, i, 1, k] + total
                    row[at + mpv_at + k] = above / hits - b[i, k] if hits > 0 else 0.0
                if lspv_at >= 0:
                    row[at + lspv_at + k] = best / steps
            total_m = moments[s, c, i, 0]
            high_m = moments[s, c, i, 1]
            low_m = moments[s, c, i, 2]
            if with_moments:
                total_m += m
                high_m = max(high_m, m)
                low_m = min(low_m, m)
            if mean_at >= 0:
                row[at + mean_at] = total_m / steps
            if max_at >= 0:
                row[at + max_at] = high_m
            if min_at >= 0:
                row[at + min_at] = low_m
        if compete_at >= 0:
            at = compete_at + positions[c] * 2 * order
            for j in range(2 * order):
                won = wins[s, c, j]
                if pending and (j == winner or j == order + loser):
                    won += 1.0
                row[at + j] = won / steps


@njit_cached()
def _kept_groups(where, K):  # pragma: no cover
    """The width of a state's block of columns and where each kept pool starts in it:
    state_columns keeps a pool of the thresholds whole (its K columns in a row); -1
    where a pool is not kept."""
    n_columns = 0
    for j in range(where.shape[0]):
        n_columns = max(n_columns, where[j] + 1)
    groups = (
        where[0] if K else -1,
        where[K] if K else -1,
        where[2 * K] if K else -1,
        where[3 * K],
        where[3 * K + 1],
        where[3 * K + 2],
    )
    return n_columns, groups


@njit_cached(parallel=True, fastmath={"reassoc", "contract", "nsz"}, error_model="numpy")
def _pools_finished(
    U, inputs, lengths, Abar_T, Bbar, scale, with_moments, dn, sums, moments, wins, biases,
    counted, out, positions, where, values_at, compete_at,
):  # fmt: skip  # pragma: no cover
    # _finished_row for every sample, into its row of out
    n_columns, groups = _kept_groups(where, sums.shape[4])
    for s in prange(sums.shape[0]):
        _finished_row(
            U, inputs, lengths, Abar_T, Bbar, scale, with_moments, dn, sums, moments, wins,
            biases, counted, out[s], positions, n_columns, groups, values_at, compete_at, s,
        )  # fmt: skip


@njit_cached(parallel=True, fastmath={"reassoc", "contract", "nsz"}, error_model="numpy")
def _pools_scored(
    U, inputs, lengths, Abar_T, Bbar, scale, with_moments, dn, sums, moments, wins, biases,
    counted, positions, where, compete_at, width, weights, scores,
):  # fmt: skip  # pragma: no cover
    # scores += the features of _finished_row (the window's width columns) @ weights, by
    # blocks of SCORED_ROWS samples whose features stay in cache
    n_samples = sums.shape[0]
    n_columns, groups = _kept_groups(where, sums.shape[4])
    for block in prange((n_samples + SCORED_ROWS - 1) // SCORED_ROWS):
        first = block * SCORED_ROWS
        last = min(n_samples, first + SCORED_ROWS)
        rows = np.empty((last - first, width))
        for s in range(first, last):
            _finished_row(
                U, inputs, lengths, Abar_T, Bbar, scale, with_moments, dn, sums, moments,
                wins, biases, counted, rows[s - first], positions, n_columns, groups, 0,
                compete_at, s,
            )  # fmt: skip
        product = np.dot(rows, weights)
        for r in range(last - first):  # explicit loops: a whole-array statement in the
            for o in range(product.shape[1]):  # parallel loop is a parallel loop of its own
                scores[first + r, o] += product[r, o]


def pooled_window_carried(
    U: np.ndarray,
    Abar_T: np.ndarray,
    Bbar: np.ndarray,
    biases: np.ndarray,
    scale: np.ndarray,
    dn: np.ndarray,
    sums: np.ndarray,
    moments: np.ndarray,
    wins: np.ndarray,
    threads: int | None = None,
    seen: int = 0,
) -> None:
    """Advance running pools in place over more steps: :func:`pooled_window`'s kernel,
    continued from a carried state instead of started from zero (a stream's chunks): the
    threshold pools and competitions of the pieces of a sequence are those of the whole,
    bit for bit (the float32 sums flushed at the whole's steps).

    Parameters
    ----------
    U : ndarray of shape (n_samples, n_steps, n_inputs), float64
        The next steps of every sequence's inputs.
    Abar_T, Bbar, biases, scale
        As for :func:`pooled_window`.
    dn : ndarray of shape (n_samples, n_inputs, order), float64
        The states after the steps pooled so far; advanced in place.
    sums : ndarray of shape (n_samples, n_inputs, order, 5, n_biases), float64
        Per threshold the count of steps above it, the sum of the states on those steps
        (each rounded to float32, summed in float32 and flushed into this float64 sum
        every ``FLUSH_STEPS`` steps of the sequence, as :func:`pooled_window` sums them),
        the current run of steps above it, the longest run, and the float32 sum since the
        last flush; advanced in place.
    moments : ndarray of shape (n_samples, n_inputs, order, 3), float64
        Per state its sum, maximum and minimum; advanced in place.
    wins : ndarray of shape (n_samples, n_inputs, 2 * order), float64
        The counts of steps on which each state, scaled, is the largest of the window,
        then the smallest; advanced in place.
    threads : int, optional
        Run on at most this many threads (all by default).
    seen : int, default=0
        The steps pooled before ``U`` (where the float32 sums are flushed).
    """
    kernels = WindowKernels(Abar_T, Bbar, biases, scale)
    kernels.advance(U, (dn, sums, moments, wins), threads, seen)


def _check_carried(pools: tuple) -> None:
    """A ValueError unless the carried ``sums`` (``pools[1]``) hold ``CARRIED_SUMS`` values
    per threshold (the kernels index them unchecked)."""
    sums = pools[1]
    if sums.ndim != 5 or sums.shape[3] != CARRIED_SUMS:
        raise ValueError(
            f"sums must have shape (n_samples, n_inputs, order, {CARRIED_SUMS}, n_biases) "
            f"(see pooled_window_carried); got {sums.shape}."
        )


def _column_of(columns, n_biases: int) -> np.ndarray:
    """Per kernel column (``[ppv x K, mpv x K, lspv x K, mean, max, min]``) its position
    among the ``columns`` kept, -1 where not kept."""
    where = np.full(3 * n_biases + N_MOMENTS, -1, dtype=np.int64)
    where[np.asarray(columns, dtype=np.int64)] = np.arange(len(columns))
    return where


class WindowKernels:
    """One window's pooled kernels, with their constant arguments prepared once.

    The compiled kernels take every array read-only and contiguous in their dtypes (see
    ``_read``); making them so is about ten conversions per call, which for a stream's one
    step of one sequence cost more than the kernel itself (one stream of the default
    classifier: an update 17 % faster, a prediction 18 %, once prepared here, once per
    window). Each call converts only what changes: the steps and the counts.
    :func:`pooled_features`, :func:`pooled_scores` and :func:`pooled_window_carried` are
    these methods on a window prepared for the call.

    Parameters
    ----------
    Abar_T, Bbar, biases, scale, with_moments, inputs
        As for :func:`pooled_window`.
    columns : int ndarray, optional
        As for :func:`pooled_features`: the per-state columns that :meth:`write` and
        :meth:`add_scores` keep (not needed by :meth:`advance`).
    """

    def __init__(
        self,
        Abar_T: np.ndarray,
        Bbar: np.ndarray,
        biases: np.ndarray,
        scale: np.ndarray,
        columns: np.ndarray | None = None,
        with_moments: bool = True,
        inputs: np.ndarray | None = None,
    ):
        self.n_inputs, self.order, self.n_biases = biases.shape
        self.system = (_read(Abar_T, np.float64), _read(Bbar, np.float64))
        self.biases = _read(biases, np.float32)
        self.scale = _read(scale, np.float64)
        self.with_moments = bool(with_moments)
        self.own_inputs = _read(np.arange(self.n_inputs), np.int64)
        self.inputs = self.own_inputs if inputs is None else _read(inputs, np.int64)
        self.n_columns = None if columns is None else len(columns)
        self.where = _read(np.zeros(1), np.int64)
        if columns is not None:
            self.where = _read(_column_of(columns, self.n_biases), np.int64)
        # placeholders of what a call does not use; pools (carried or placeholders) and
        # the rows written are the kernels' writable arguments, all else read-only
        self.no_out = np.empty((1, 1))
        self.no_pools = tuple(
            np.empty(shape)
            for shape in (
                (1, 1, 1),
                (1, 1, 1, CARRIED_SUMS, self.n_biases),
                (1, 1, 1, N_MOMENTS),
                (1, 1, 1),
            )
        )

    def _steps(self, U, lengths) -> tuple:
        """The kernels' first arguments: the steps, the inputs read, the lengths, the
        system."""
        return (_read(U, np.float64), self.inputs, _read(lengths, np.int64), *self.system)

    def advance(
        self, U: np.ndarray, pools: tuple, threads: int | None = None, seen: int = 0
    ) -> None:
        """:func:`pooled_window_carried`: the pools ``(dn, sums, moments, wins)`` of
        ``seen`` steps advanced in place over every step of ``U``."""
        for name, a in zip(("dn", "sums", "moments", "wins"), pools, strict=True):
            if a.dtype != np.float64 or not a.flags.c_contiguous:
                raise ValueError(
                    f"{name} must be a C-contiguous float64 array (updated in place)."
                )
        _check_carried(pools)
        lengths = _read(np.full(U.shape[0], U.shape[1]), np.int64)
        # the steps pooled after the call: where the kernel flushes its float32 sums
        counted = _read(np.full(U.shape[0], int(seen) + U.shape[1]), np.int64)
        with parallel_section(threads):
            _pooled_window(
                *self._steps(U, lengths), self.biases, self.scale, True, True, True, *pools,
                counted, self.no_out, self.where, self.where, 0, -1,
            )  # fmt: skip

    def write(
        self,
        U: np.ndarray,
        lengths: np.ndarray,
        carried: tuple | None,
        counted: np.ndarray | None,
        out: np.ndarray,
        positions: np.ndarray | None,
        values_at: int,
        compete_at: int | None,
        threads: int | None = None,
    ) -> None:
        """:func:`pooled_features` (the arguments as there)."""
        if out.dtype != np.float64 or out.ndim != 2 or not out.flags.c_contiguous:
            raise ValueError("out must be a C-contiguous 2-d float64 array (written in place).")
        if carried is not None:
            _check_carried(carried)
        if carried is None or int(np.max(lengths, initial=0)) > 1:
            self.pool(U, lengths, carried, counted, out, positions, values_at, compete_at, threads)
            return
        # at most one step more: the carried pools finished without scratch
        with parallel_section(threads):
            _pools_finished(
                *self._steps(U, lengths), self.scale, self.with_moments,
                *(_read(a, np.float64) for a in carried), self.biases,
                _read(lengths if counted is None else counted, np.int64), out,
                self.inputs_at(positions), self.where, int(values_at),
                -1 if compete_at is None else int(compete_at),
            )  # fmt: skip

    def pool(
        self,
        U: np.ndarray,
        lengths: np.ndarray,
        carried: tuple | None,
        counted: np.ndarray | None,
        out: np.ndarray,
        positions: np.ndarray | None,
        values_at: int,
        compete_at: int | None,
        threads: int | None = None,
    ) -> None:
        """:meth:`write` by the pooled kernel itself, from the zero state or resumed from
        ``carried``, however few the steps (:meth:`write` finishes carried pools over at
        most one step with a kernel of its own)."""
        if carried is None:
            carried, resume = self.no_pools, False
        else:
            carried, resume = tuple(np.ascontiguousarray(a, np.float64) for a in carried), True
        with parallel_section(threads):
            _pooled_window(
                *self._steps(U, lengths), self.biases, self.scale, self.with_moments, resume,
                False, *carried, _read(lengths if counted is None else counted, np.int64),
                out, self.inputs_at(positions), self.where, int(values_at),
                -1 if compete_at is None else int(compete_at),
            )  # fmt: skip

    def inputs_at(self, positions: np.ndarray | None) -> np.ndarray:
        """The inputs' positions in the window, read-only (their order by default)."""
        if positions is None:
            return _read(np.arange(len(self.inputs)), np.int64)
        return _read(positions, np.int64)

    def add_scores(
        self,
        U: np.ndarray,
        lengths: np.ndarray,
        carried: tuple,
        counted: np.ndarray,
        compete: bool,
        weights: np.ndarray,
        scores: np.ndarray,
        threads: int | None = None,
    ) -> None:
        """:func:`pooled_scores` (the arguments as there)."""
        _check_carried(carried)
        dn = carried[0]
        n_inputs, order = dn.shape[1], dn.shape[2]
        if int(np.max(lengths, initial=0)) > 1:
            raise ValueError("pooled_scores continues the carried pools over at most one step.")
        if scores.dtype != np.float64 or scores.ndim != 2 or not scores.flags.c_contiguous:
            raise ValueError(
                "scores must be a C-contiguous 2-d float64 array (added to in place)."
            )
        values = n_inputs * order * self.n_columns
        width = values + (2 * order * n_inputs if compete else 0)
        weights = _read(weights, np.float64)
        if weights.shape != (width, scores.shape[1]):
            raise ValueError(
                f"weights must have shape ({width}, {scores.shape[1]}) (the window's "
                f"features, the outputs); got {weights.shape}."
            )
        with parallel_section(threads):
            _pools_scored(
                *self._steps(U, lengths), self.scale, self.with_moments,
                *(_read(a, np.float64) for a in carried), self.biases,
                _read(counted, np.int64),
                self.own_inputs,  # each input at its own position
                self.where, int(values) if compete else -1, int(width), weights, scores,
            )  # fmt: skip

"""Delay Network states pooled over time by a compiled recurrence, one sample at a time.

Every sample runs its recurrences (one per window and channel) step by step and adds each
state to its pools as it goes, so memory is ``O(order)`` per sample on top of the result:
the states of a whole dataset are never held.

Pools of state ``i`` over the ``n`` steps of a sequence, in this order along the last axis:
``mean_t [m_t[i] > b_k]`` for each bias ``b_k`` (the proportion of steps above it), then
``mean_t m_t[i]``, ``max_t m_t[i]`` and ``min_t m_t[i]``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._threading import parallel_section

__all__ = ["N_MOMENTS", "pooled_recurrence"]

# mean, max and min follow the proportions above the biases
N_MOMENTS = 3


# reassociation lets the state update vectorize; no 'nnan'/'ninf': the pools start at +-inf
@njit(parallel=True, cache=False, fastmath={"reassoc", "contract", "nsz"}, error_model="numpy")
def _pooled(U, lengths, Abar_T, Bbar, biases, out):  # pragma: no cover - compiled
    n_samples = U.shape[0]
    n_channels = U.shape[2]
    n_windows, order = Bbar.shape
    n_biases = biases.shape[3]
    for s in prange(n_samples):
        n = lengths[s]
        state = np.empty(order)
        new = np.empty(order)
        for w in range(n_windows):
            for c in range(n_channels):
                acc = out[s, w, c]
                acc[:, :] = 0.0
                acc[:, n_biases + 1] = -np.inf
                acc[:, n_biases + 2] = np.inf
                state[:] = 0.0
                for t in range(n):
                    u = U[s, t, c]
                    for i in range(order):
                        new[i] = Bbar[w, i] * u
                    for j in range(order):
                        mj = state[j]
                        for i in range(order):
                            new[i] += Abar_T[w, j, i] * mj
                    state, new = new, state
                    for i in range(order):
                        m = state[i]
                        # the thresholds ascend: count those below m by bisection and
                        # tally the count; proportions above each are suffix sums at the end
                        lo, hi = 0, n_biases
                        while lo < hi:
                            mid = (lo + hi) // 2
                            if biases[w, c, i, mid] < m:
                                lo = mid + 1
                            else:
                                hi = mid
                        if lo > 0:
                            acc[i, lo - 1] += 1.0
                        acc[i, n_biases] += m
                        if m > acc[i, n_biases + 1]:
                            acc[i, n_biases + 1] = m
                        if m < acc[i, n_biases + 2]:
                            acc[i, n_biases + 2] = m
                for i in range(order):
                    # acc[i, k] held the steps above exactly k + 1 thresholds
                    for k in range(n_biases - 2, -1, -1):
                        acc[i, k] += acc[i, k + 1]
                    for k in range(n_biases + 1):
                        acc[i, k] /= n


def pooled_recurrence(
    U: np.ndarray,
    lengths: np.ndarray,
    Abars: np.ndarray,
    Bbars: np.ndarray,
    biases: np.ndarray,
) -> np.ndarray:
    """Pools over time of the Delay Network states of every sample, window and channel.

    Parameters
    ----------
    U : ndarray of shape (n_samples, n_steps, n_channels)
        Sequences, left-aligned; steps at or after a sample's length are ignored.
    lengths : int ndarray of shape (n_samples,)
        Each sample's own number of steps, ``1 <= lengths <= n_steps``.
    Abars : ndarray of shape (n_windows, order, order)
    Bbars : ndarray of shape (n_windows, order)
        The discretized system of every window.
    biases : ndarray of shape (n_windows, n_channels, order, n_biases)
        Thresholds of the proportion pools, ascending along the last axis.

    Returns
    -------
    ndarray of shape (n_samples, n_windows, n_channels, order, n_biases + 3), float64
        See the module docstring for the pools along the last axis. The states are
        accumulated in float64 whatever the input's dtype.
    """
    n_samples, _, n_channels = U.shape
    n_windows, order = Bbars.shape
    n_biases = biases.shape[3]
    out = np.empty((n_samples, n_windows, n_channels, order, n_biases + N_MOMENTS))
    args = (
        np.ascontiguousarray(U, dtype=np.float64),
        np.ascontiguousarray(lengths, dtype=np.int64),
        np.ascontiguousarray(np.transpose(Abars, (0, 2, 1)), dtype=np.float64),
        np.ascontiguousarray(Bbars, dtype=np.float64),
        np.ascontiguousarray(biases, dtype=np.float64),
    )
    with parallel_section():
        _pooled(*args, out)
    return out

"""The Delay Network recurrence compiled with Numba, parallel over rows.

``O(n_steps * order**2)`` work per row but ``O(order)`` memory: the route for states of very
long sequences reduced over time, and a check on the matrix-product kernels.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = ["states_recurrence"]

_REDUCTIONS = {"final": 0, "sequence": 1, "mean": 2, "max": 3}


@njit(parallel=True, cache=False)
def _recurrence(U, Abar_T, Bbar, mode, out):  # pragma: no cover - compiled
    n_rows, n_steps = U.shape
    d = Bbar.shape[0]
    for r in prange(n_rows):
        state = np.zeros(d, dtype=U.dtype)
        new = np.empty(d, dtype=U.dtype)
        pooled = np.zeros(d, dtype=U.dtype)
        for t in range(n_steps):
            u = U[r, t]
            for i in range(d):
                new[i] = Bbar[i] * u
            for j in range(d):
                mj = state[j]
                for i in range(d):
                    new[i] += Abar_T[j, i] * mj
            state, new = new, state
            if mode == 1:
                out[r, t, :] = state
            elif mode == 2:
                pooled += state
            elif mode == 3:
                if t == 0:
                    pooled[:] = state
                else:
                    pooled[:] = np.maximum(pooled, state)
        if mode == 0:
            out[r, 0, :] = state
        elif mode == 2:
            out[r, 0, :] = pooled / n_steps
        elif mode == 3:
            out[r, 0, :] = pooled


def states_recurrence(U: np.ndarray, Abar: np.ndarray, Bbar: np.ndarray, output: str = "final"):
    """Delay Network states of every row by the compiled recurrence.

    Parameters
    ----------
    U : ndarray of shape (n_rows, n_steps), float32 or float64
    Abar : ndarray of shape (order, order)
    Bbar : ndarray of shape (order,)
    output : {'final', 'sequence', 'mean', 'max'}

    Returns
    -------
    ndarray of shape (n_rows, n_steps, order) for 'sequence', else (n_rows, order)
    """
    mode = _REDUCTIONS[output]
    dtype = U.dtype
    n_rows, n_steps = U.shape
    d = Bbar.shape[0]
    out = np.empty((n_rows, n_steps if mode == 1 else 1, d), dtype=dtype)
    _recurrence(
        np.ascontiguousarray(U),
        np.ascontiguousarray(Abar.T, dtype=dtype),
        Bbar.astype(dtype),
        mode,
        out,
    )
    return out if mode == 1 else out[:, 0]

"""Delay Network states as matrix products on the CPU.

Final states are one GEMM with the reversed impulse response. All states use time blocks
of ``T`` steps: with the state ``m`` before the block and the block's inputs ``u``,

    [m, u_1 .. u_T] @ W = [m_1 | m_2 | .. | m_T]
    W[:d, s]     = (Abar^(s+1)).T        (the carried state, propagated s + 1 steps)
    W[d + j, s]  = H[s - j]  for j <= s  (the block's own inputs, a Toeplitz band)

so each block is one GEMM whose output rows are the block's states, already in the
``(step, state)`` layout of the result.
"""

from __future__ import annotations

import numpy as np

__all__ = ["block_weights", "final_states_gemm", "states_blocked"]


def final_states_gemm(U: np.ndarray, H_reversed: np.ndarray, out: np.ndarray | None = None):
    """Final Delay Network state of every row: ``U @ H[::-1]``.

    Parameters
    ----------
    U : ndarray of shape (n_rows, n_steps)
    H_reversed : ndarray of shape (n_steps, order)
        The impulse response reversed in time, in the dtype of ``U``.
    out : ndarray of shape (n_rows, order), optional

    Returns
    -------
    ndarray of shape (n_rows, order)
    """
    return np.matmul(U, H_reversed, out=out)


def block_weights(Abar: np.ndarray, H: np.ndarray, block: int) -> np.ndarray:
    """The ``(order + block, block * order)`` weight matrix of one time block, float64.

    Parameters
    ----------
    Abar : ndarray of shape (order, order)
    H : ndarray of shape (>= block, order)
        Impulse response.
    block : int
        Steps per block ``T``.
    """
    d = Abar.shape[0]
    W = np.zeros((d + block, block, d))
    power = Abar.copy()
    for s in range(block):
        W[:d, s] = power.T
        power = Abar @ power
    lag = np.arange(block)[None, :] - np.arange(block)[:, None]  # s - j
    band = lag >= 0
    W[d:][band] = H[lag[band]]
    return W.reshape(d + block, block * d)


def states_blocked(
    U: np.ndarray,
    weights: np.ndarray,
    order: int,
    out: np.ndarray | None = None,
    reduce: str | None = None,
) -> np.ndarray:
    """All Delay Network states of every row by blocked GEMMs.

    Parameters
    ----------
    U : ndarray of shape (n_rows, n_steps)
    weights : ndarray of shape (order + T, T * order)
        From :func:`block_weights`, in the dtype of ``U``.
    order : int
    out : ndarray of shape (n_rows, n_steps, order), optional
        Where to write the states (``reduce=None`` only).
    reduce : {None, 'mean', 'max'}
        Return the states reduced over time instead of all of them; only one block of
        states is held at a time.

    Returns
    -------
    ndarray of shape (n_rows, n_steps, order), or (n_rows, order) when reducing.
    """
    n_rows, n_steps = U.shape
    d = order
    T = weights.shape[1] // d
    dtype = weights.dtype
    carry_and_inputs = np.zeros((n_rows, d + T), dtype=dtype)
    if reduce is None:
        if out is None:
            out = np.empty((n_rows, n_steps, d), dtype=dtype)
    else:
        scratch = np.empty((n_rows, T, d), dtype=dtype)
        # the sum over time in float64: float32 running sums lose ~n_steps * eps
        pooled = np.zeros((n_rows, d), dtype=np.float64) if reduce == "mean" else None
    for t0 in range(0, n_steps, T):
        steps = min(T, n_steps - t0)
        carry_and_inputs[:, d : d + steps] = U[:, t0 : t0 + steps]
        target = out[:, t0 : t0 + steps] if reduce is None else scratch[:, :steps]
        np.matmul(
            carry_and_inputs[:, : d + steps],
            weights[: d + steps, : steps * d],
            out=target.reshape(n_rows, steps * d),
        )
        carry_and_inputs[:, :d] = target[:, steps - 1]
        if reduce == "mean":
            pooled += target.sum(axis=1)
        elif reduce == "max":
            block_max = target.max(axis=1)
            pooled = block_max if pooled is None else np.maximum(pooled, block_max, out=pooled)
    if reduce is None:
        return out
    if reduce == "mean":
        pooled /= n_steps
        return pooled.astype(dtype)
    return pooled

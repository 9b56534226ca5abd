"""The reference recurrence: readable, slow by design, and the oracle for every fast path.

Use it to check results: ``dn_states(X, order, theta)`` runs
``m_t = Abar m_{t-1} + Bbar u_t`` step by step in float64, vectorized over samples and
channels only.
"""

from __future__ import annotations

import numpy as np

from .dn import discrete_system

__all__ = ["dn_states", "recurrence"]


def recurrence(U: np.ndarray, Abar: np.ndarray, Bbar: np.ndarray, output: str = "final"):
    """Run the Delay Network recurrence over the time axis of ``U``.

    Parameters
    ----------
    U : ndarray of shape (n_samples, n_steps, n_channels)
        Inputs; every channel drives its own copy of the Delay Network.
    Abar : ndarray of shape (order, order)
    Bbar : ndarray of shape (order,)
    output : {'final', 'sequence'}
        Return only the state after the last step, or the state after every step.

    Returns
    -------
    states : ndarray
        ``(n_samples, n_channels * order)`` for 'final' and
        ``(n_samples, n_steps, n_channels * order)`` for 'sequence'; feature
        ``k * order + i`` is state ``i`` of channel ``k``. Always float64.
    """
    U = np.asarray(U, dtype=np.float64)
    n_samples, n_steps, n_channels = U.shape
    order = Bbar.shape[0]
    m = np.zeros((n_samples, n_channels, order))
    if output == "sequence":
        states = np.zeros((n_samples, n_steps, n_channels * order))
    for t in range(n_steps):
        m = m @ Abar.T + U[:, t, :, None] * Bbar
        if output == "sequence":
            states[:, t] = m.reshape(n_samples, -1)
    return states if output == "sequence" else m.reshape(n_samples, -1)


def dn_states(
    X,
    order: int,
    theta: float,
    discretizer: str = "zoh",
    output: str = "final",
):
    """Delay Network states of ``X`` by the plain recurrence.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_steps) or (n_samples, n_steps, n_channels), or a
        list of such sequences of different lengths (each ``(n_steps_i,)`` or
        ``(n_steps_i, n_channels)``)
    order : int
    theta : float
    discretizer : {'zoh', 'euler'}
    output : {'final', 'sequence'}

    Returns
    -------
    states : ndarray, or a list of arrays for a list of sequences with ``output='sequence'``
        See :func:`recurrence`.
    """
    Abar, Bbar = discrete_system(order, theta, discretizer)
    if isinstance(X, (list, tuple)):
        results = []
        for seq in X:
            seq = np.asarray(seq, dtype=np.float64)
            seq = seq.reshape(1, seq.shape[0], -1)
            results.append(recurrence(seq, Abar, Bbar, output)[0])
        return results if output == "sequence" else np.stack(results)
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 2:
        X = X[:, :, None]
    return recurrence(X, Abar, Bbar, output)

"""Numba CPU kernels of the optimizers: one fused loop over a parameter array per update.

Each loop reads a parameter, its gradient and its state once and writes them once, instead
of a sequence of array operations; the arithmetic is that of the array-operation path of
:mod:`lmu_sk.neural.optimizers`. A loop runs over one contiguous segment with one L2
coefficient: the weights (with decay) and the rest (decay 0) are separate calls on slices,
which keeps both loops vectorised (a second loop starting at an offset in the same
function is not). ``error_model="numpy"``: no Python zero-division check, so the loops
vectorise.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import njit_cached

__all__ = ["adam", "sgd"]


@njit_cached(nogil=True, error_model="numpy")
def adam_segment(p, g, m, v, b1, b2, c, eps, decay):  # pragma: no cover - compiled
    for i in range(p.shape[0]):
        gi = g[i] + decay * p[i]
        mi = b1 * m[i] + gi
        vi = b2 * v[i] + gi * gi
        m[i] = mi
        v[i] = vi
        p[i] -= c * mi / (math.sqrt(vi) + eps)


@njit_cached(nogil=True, error_model="numpy")
def sgd_segment(p, g, vel, lr, mu, nesterov, decay):  # pragma: no cover - compiled
    for i in range(p.shape[0]):
        step = lr * (g[i] + decay * p[i])
        vi = mu * vel[i] - step
        vel[i] = vi
        if nesterov:
            p[i] += mu * vi - step
        else:
            p[i] += vi


def adam(
    p: np.ndarray,
    g: np.ndarray,
    m: np.ndarray,
    v: np.ndarray,
    b1,
    b2,
    c,
    eps,
    stop: int,
    decay,
) -> None:
    """One Adam step of the flat, C-contiguous parameter ``p`` in place.

    ``m`` and ``v`` are the first and second moments (updated in place) and ``c`` the
    step size with the bias corrections; the L2 gradient ``decay * p`` is added to the
    first ``stop`` entries only. The scalars are in the dtype of ``p``.
    """
    if stop:
        adam_segment(p[:stop], g[:stop], m[:stop], v[:stop], b1, b2, c, eps, decay)
    if stop < p.shape[0]:
        zero = decay * 0
        adam_segment(p[stop:], g[stop:], m[stop:], v[stop:], b1, b2, c, eps, zero)


def sgd(
    p: np.ndarray, g: np.ndarray, vel: np.ndarray, lr, mu, nesterov: bool, stop: int, decay
) -> None:
    """One SGD step with (Nesterov) momentum of the flat parameter ``p`` in place.

    ``vel`` is the velocity (updated in place); the L2 gradient ``decay * p`` is added to
    the first ``stop`` entries only.
    """
    if stop:
        sgd_segment(p[:stop], g[:stop], vel[:stop], lr, mu, nesterov, decay)
    if stop < p.shape[0]:
        sgd_segment(p[stop:], g[stop:], vel[stop:], lr, mu, nesterov, decay * 0)

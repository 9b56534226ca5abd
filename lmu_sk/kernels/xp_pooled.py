"""Pooled Delay Network states written against an array module ``xp`` (NumPy or CuPy).

The GPU route of :mod:`lmu_sk.kernels.cpu_pooled`: the states come block by block of time
steps as matrix products (:func:`~lmu_sk.kernels.xp_kernels.iter_state_blocks`) and are
added to the pools at once, so no more than one block of states is ever held. The pools
and their order are those of :func:`~lmu_sk.kernels.cpu_pooled.pooled_recurrence`.
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any

import numpy as np

from ..dn import impulse_response
from .xp_kernels import block_matrix, iter_state_blocks

__all__ = ["pooled_blocked"]


def _pool_window(X: Any, mask: Any, lengths: Any, Abar, Bbar, biases: Any, block: int, xp):
    """Pools ``(n_samples, n_channels, order, n_biases + 3)`` of one window's states."""
    n_samples, n_steps, n_channels = X.shape
    order = Bbar.shape[0]
    n_biases = biases.shape[-1]
    T = max(1, min(block, n_steps))
    H = impulse_response(Abar, Bbar, T)
    W = xp.asarray(block_matrix(Abar, H, T), dtype=X.dtype)
    shape = (n_samples, n_channels, order)
    above = xp.zeros((*shape, n_biases), dtype=X.dtype)
    total = xp.zeros(shape, dtype=X.dtype)
    high = xp.full(shape, -math.inf, dtype=X.dtype)
    low = xp.full(shape, math.inf, dtype=X.dtype)
    for t0, G in iter_state_blocks(X, Abar, H, T, xp, W=W):
        valid = mask[:, None, t0 : t0 + G.shape[2], None]  # (n, 1, T', 1)
        total += (G * valid).sum(axis=2)
        xp.maximum(high, xp.where(valid, G, -math.inf).max(axis=2), out=high)
        xp.minimum(low, xp.where(valid, G, math.inf).min(axis=2), out=low)
        for k in range(n_biases):
            hits = (G > biases[None, :, None, :, k]) & valid
            above[..., k] += hits.sum(axis=2)
    n = lengths.astype(X.dtype)[:, None, None]
    return xp.concatenate(
        [above / n[..., None], (total / n)[..., None], high[..., None], low[..., None]], axis=3
    )


def pooled_blocked(
    X: Any,
    lengths: Any,
    Abars: np.ndarray,
    Bbars: np.ndarray,
    biases: Any,
    xp: ModuleType,
    block: int = 64,
) -> Any:
    """Pools over time of the Delay Network states, by block matrix products.

    Parameters
    ----------
    X : array of shape (n_samples, n_steps, n_channels)
        Left-aligned sequences in the compute dtype; steps at or after a sample's length
        are ignored.
    lengths : int array of shape (n_samples,)
    Abars : ndarray of shape (n_windows, order, order), float64 on the host
    Bbars : ndarray of shape (n_windows, order), float64 on the host
    biases : array of shape (n_windows, n_channels, order, n_biases)
    xp : module
    block : int, default=64
        Steps per matrix product; the working memory is ``n_samples * n_channels * block *
        order`` elements, a few times over.

    Returns
    -------
    array of shape (n_samples, n_windows, n_channels, order, n_biases + 3), dtype of ``X``
    """
    lengths = xp.asarray(lengths).astype(xp.int64)
    mask = xp.arange(X.shape[1], dtype=xp.int64)[None, :] < lengths[:, None]
    biases = xp.asarray(biases, dtype=X.dtype)
    pools = [
        _pool_window(X, mask, lengths, Abars[w], Bbars[w], biases[w], block, xp)
        for w in range(Bbars.shape[0])
    ]
    return xp.stack(pools, axis=1)

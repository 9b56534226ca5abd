"""Delay Network kernels written once against an array module ``xp`` (NumPy or CuPy).

Every function takes the module as its ``xp`` argument and uses only the API that NumPy and
CuPy share, so the same code runs on the CPU (tested with NumPy) and on an NVIDIA GPU (called
with CuPy, where the matrix products go to cuBLAS and the FFTs to cuFFT).

Inputs are ``X`` of shape ``(n_samples, n_steps, n_channels)`` in the compute dtype. Every
channel drives its own copy of the Delay Network; in the results feature ``k * order + i``
is state ``i`` of channel ``k``. With ``H[k] = Abar^k Bbar`` the impulse response, the state
after step ``t`` is ``m_t = sum_{j <= t} H[t - j] u_j``, so

* the final state is one matrix product with the reversed impulse response ``H[::-1]``;
* the sum of all states is one matrix product with the reversed cumulative response
  ``cumsum(H)[::-1]``;
* all states are a causal convolution (FFT) or a sequence of block matrix products that
  carry the last state of one block of ``T`` steps into the next.

Constant matrices (impulse responses, spectra, block matrices) are built in float64 and cast
once to the compute dtype by the callers, which keep them across calls.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import numpy as np

from .cpu_gemm import block_weights

__all__ = [
    "all_states_blocked",
    "all_states_fft",
    "block_matrix",
    "default_block",
    "fft_length",
    "final_states",
    "impulse_spectrum",
    "iter_state_blocks",
    "mean_states",
    "pooled_states_blocked",
    "ragged_final_states",
    "right_align",
    "rows",
]

REDUCTIONS = ("mean", "max")


def _to_host(a: Any) -> np.ndarray:
    """``a`` as a float64 NumPy array, copying from the GPU when it is a CuPy array."""
    if not isinstance(a, np.ndarray) and callable(getattr(a, "get", None)):
        a = a.get()
    return np.asarray(a, dtype=np.float64)


def _is_smooth(m: int) -> bool:
    for p in (2, 3, 5, 7):
        while m % p == 0:
            m //= p
    return m == 1


def fft_length(n_steps: int) -> int:
    """The smallest even ``2^a 3^b 5^c 7^d`` that is ``>= 2 * n_steps - 1``.

    Such lengths are fast for both pocketfft (NumPy) and cuFFT, and padding to at least
    ``2 n - 1`` keeps the circular convolution from wrapping around.
    """
    m = max(2 * int(n_steps) - 1, 2)
    while m % 2 or not _is_smooth(m):
        m += 1
    return m


def default_block(order: int, n_steps: int) -> int:
    """Steps per block for the blocked all-states route.

    A block of ``T`` steps costs ``2 (order + T)`` flops per state instead of the
    recurrence's ``2 order``; ``T = clip(4096 // order, 16, 128)`` keeps that overhead
    small for large orders while the products stay large enough for a fast GEMM.
    """
    return max(1, min(int(n_steps), max(16, min(128, 4096 // max(int(order), 1)))))


def rows(X: Any, xp: ModuleType) -> Any:
    """The ``(n_samples * n_channels, n_steps)`` view of ``X``, one row per channel of a sample.

    Row ``s * n_channels + k`` is channel ``k`` of sample ``s``. One channel is a reshape
    (no copy for a C-contiguous ``X``); several channels need one transposing copy.
    """
    n_samples, n_steps, n_channels = X.shape
    if n_channels == 1:
        return X.reshape(n_samples, n_steps)
    return xp.ascontiguousarray(X.transpose(0, 2, 1)).reshape(n_samples * n_channels, n_steps)


def final_states(X: Any, H_rev: Any, xp: ModuleType) -> Any:
    """Final Delay Network states of every sample by one matrix product.

    Parameters
    ----------
    X : array of shape (n_samples, n_steps, n_channels)
    H_rev : array of shape (n_steps, order)
        The reversed impulse response ``H[::-1]`` in the dtype of ``X``.
    xp : module
        ``numpy`` or ``cupy``.

    Returns
    -------
    array of shape (n_samples, n_channels * order)
    """
    n_samples, _, n_channels = X.shape
    H_rev = xp.asarray(H_rev, dtype=X.dtype)
    return (rows(X, xp) @ H_rev).reshape(n_samples, n_channels * H_rev.shape[1])


def right_align(X: Any, lengths: Any, xp: ModuleType) -> Any:
    """Move each left-aligned, zero-padded sequence so that it ends at the last step.

    Leading zeros leave the Delay Network state at zero, so the states of the shifted
    sequence after the last step are those of sample ``s`` after its own ``lengths[s]``
    steps: ragged final states become one ordinary matrix product.

    Parameters
    ----------
    X : array of shape (n_samples, n_steps, n_channels)
        Sample ``s`` occupies ``X[s, :lengths[s]]``.
    lengths : int array of shape (n_samples,)
        Values in ``1 .. n_steps``.
    xp : module

    Returns
    -------
    array of shape (n_samples, n_steps, n_channels), a new array
    """
    n_samples, n_steps, _ = X.shape
    lengths = xp.asarray(lengths).astype(xp.int64)
    source = xp.arange(n_steps, dtype=xp.int64)[None, :] + (lengths[:, None] - n_steps)
    valid = source >= 0
    source = xp.where(valid, source, 0)
    shifted = X[xp.arange(n_samples)[:, None], source]
    shifted *= valid[:, :, None].astype(X.dtype)
    return shifted


def ragged_final_states(X: Any, lengths: Any, H_rev: Any, xp: ModuleType) -> Any:
    """Final states of left-aligned sequences of different lengths, each at its own end.

    ``m[s] = sum_{j < L_s} H[L_s - 1 - j] X[s, j]``, computed by :func:`right_align` and one
    matrix product with ``H_rev`` (see :func:`final_states`).
    """
    return final_states(right_align(X, lengths, xp), H_rev, xp)


def mean_states(X: Any, C_rev: Any, xp: ModuleType, lengths: Any = None) -> Any:
    """Delay Network states averaged over time, by one matrix product.

    ``sum_{t < n} m_t = sum_j C[n - 1 - j] u_j`` with ``C = cumsum(H)`` the cumulative
    impulse response, so the mean needs no state sequence at all.

    Parameters
    ----------
    X : array of shape (n_samples, n_steps, n_channels)
    C_rev : array of shape (n_steps, order)
        ``cumsum(H, axis=0)[::-1]``, built in float64 and cast to the dtype of ``X``.
    xp : module
    lengths : int array of shape (n_samples,), optional
        Own lengths of left-aligned, zero-padded samples; each is averaged over its own
        steps.

    Returns
    -------
    array of shape (n_samples, n_channels * order)
    """
    if lengths is None:
        return final_states(X, C_rev, xp) / X.shape[1]
    total = ragged_final_states(X, lengths, C_rev, xp)
    return total / xp.asarray(lengths)[:, None].astype(total.dtype)


def impulse_spectrum(H: Any, n_fft: int, dtype: Any, xp: ModuleType) -> Any:
    """``rfft`` of the impulse response along time, zero-padded to ``n_fft``.

    Parameters
    ----------
    H : array of shape (n_steps, order)
        Impulse response; its spectrum is taken in float64.
    n_fft : int
        FFT length from :func:`fft_length`.
    dtype : float32 or float64
        Compute dtype; the spectrum is complex64 or complex128 to match.
    xp : module

    Returns
    -------
    array of shape (order, n_fft // 2 + 1), complex
    """
    H = xp.asarray(H, dtype=xp.float64)
    spectrum = xp.fft.rfft(H.T, n=n_fft, axis=-1)
    return spectrum.astype(np.result_type(np.dtype(dtype), np.complex64))


def all_states_fft(
    X: Any,
    H: Any,
    xp: ModuleType,
    *,
    H_hat: Any = None,
    n_fft: int | None = None,
) -> Any:
    """All Delay Network states by FFT convolution, batched over samples and channels.

    Parameters
    ----------
    X : array of shape (n_samples, n_steps, n_channels)
    H : array of shape (>= n_steps, order)
        Impulse response; only used when ``H_hat`` is not given.
    xp : module
    H_hat : array of shape (order, n_fft // 2 + 1), optional
        Precomputed :func:`impulse_spectrum` of ``H`` for ``n_fft``.
    n_fft : int, optional
        FFT length, ``>= 2 * n_steps - 1``; :func:`fft_length` by default.

    Returns
    -------
    array of shape (n_samples, n_steps, n_channels * order), the dtype of ``X``

    Notes
    -----
    The work arrays are the ``(n_samples, n_channels, order, n_fft // 2 + 1)`` complex
    product and its ``n_fft``-long inverse transform: about ``3 n_fft / n_steps`` times the
    size of the result, which callers must budget for.
    """
    n_samples, n_steps, n_channels = X.shape
    if n_fft is None:
        n_fft = fft_length(n_steps)
    if n_fft < 2 * n_steps - 1:
        raise ValueError(f"n_fft={n_fft} is too short for {n_steps} steps (need 2n - 1).")
    if H_hat is None:
        H_hat = impulse_spectrum(H[:n_steps], n_fft, X.dtype, xp)
    order = H_hat.shape[0]
    spectrum = xp.fft.rfft(X.transpose(0, 2, 1), n=n_fft, axis=-1)  # (N, c, F)
    product = spectrum[:, :, None, :] * H_hat[None, None]  # (N, c, d, F)
    del spectrum
    states = xp.fft.irfft(product, n=n_fft, axis=-1)  # (N, c, d, n_fft)
    del product
    states = states[..., :n_steps].transpose(0, 3, 1, 2)  # (N, n, c, d)
    out = xp.ascontiguousarray(states, dtype=X.dtype)
    return out.reshape(n_samples, n_steps, n_channels * order)


def block_matrix(Abar: Any, H: Any, block: int) -> np.ndarray:
    """The ``(order + T, T * order)`` matrix of one block of ``T`` steps, in float64.

    With ``W[:d, s*d:(s+1)*d] = (Abar^(s+1)).T`` and ``W[d + j, s*d:(s+1)*d] = H[s - j]`` for
    ``j <= s`` (zero above), the row ``[m_prev, u_0 .. u_{T-1}] @ W`` holds the states after
    each of the ``T`` steps that follow the state ``m_prev``. The first ``d + T'`` rows and
    ``T' * d`` columns serve a shorter last block of ``T'`` steps.

    Parameters
    ----------
    Abar : array of shape (order, order)
    H : array of shape (>= block, order)
    block : int
        Steps per block ``T``.

    Returns
    -------
    W : ndarray of shape (order + block, block * order), float64, on the host
    """
    Abar = _to_host(Abar)
    H = _to_host(H)
    if block < 1 or H.shape[0] < block:
        raise ValueError(f"block must be in 1..{H.shape[0]}; got {block}.")
    return block_weights(Abar, H, block)


def iter_state_blocks(
    X: Any,
    Abar: Any,
    H: Any,
    block: int,
    xp: ModuleType,
    *,
    W: Any = None,
) -> Iterator[tuple[int, Any]]:
    """Yield ``(t0, states)`` for consecutive blocks of time steps.

    ``states`` has shape ``(n_samples, n_channels, T', order)`` and holds the states after
    steps ``t0 .. t0 + T' - 1`` (``T' = block`` except for a shorter last block). Each
    block is one matrix product ``[m_prev, U_block] @ W`` (see :func:`block_matrix`); the
    first block has no carried state and skips the top rows of ``W``.

    Parameters
    ----------
    X : array of shape (n_samples, n_steps, n_channels)
    Abar : array of shape (order, order)
        Only used to build ``W`` when it is not given.
    H : array of shape (>= n_steps, order)
        Impulse response; gives the order, and builds ``W`` when it is not given.
    block : int
        Steps per block; clipped to ``n_steps``.
    xp : module
    W : array, optional
        ``block_matrix(Abar, H, T)`` in the dtype of ``X`` on the device of ``X``, with
        ``T >= min(block, n_steps)``.
    """
    n_samples, n_steps, n_channels = X.shape
    T = max(1, min(int(block), n_steps))
    if W is None:
        W = xp.asarray(block_matrix(Abar, H, T), dtype=X.dtype)
    order = H.shape[1]
    if W.shape[0] - order < T or W.shape[1] < T * order:
        raise ValueError(f"W of shape {W.shape} does not serve blocks of {T} steps.")
    U = rows(X, xp)
    m_prev = None
    for t0 in range(0, n_steps, T):
        size = min(T, n_steps - t0)
        cols = size * order
        if m_prev is None:
            G = U[:, t0 : t0 + size] @ W[order : order + size, :cols]
        else:
            G = xp.concatenate([m_prev, U[:, t0 : t0 + size]], axis=1) @ W[: order + size, :cols]
        m_prev = G[:, cols - order :]
        yield t0, G.reshape(n_samples, n_channels, size, order)


def all_states_blocked(
    X: Any,
    Abar: Any,
    H: Any,
    block: int,
    xp: ModuleType,
    *,
    W: Any = None,
) -> Any:
    """All Delay Network states by block matrix products over time.

    Parameters
    ----------
    X : array of shape (n_samples, n_steps, n_channels)
    Abar : array of shape (order, order)
    H : array of shape (>= n_steps, order)
    block : int
        Steps per block ``T``.
    xp : module
    W : array, optional
        Precomputed block matrix, see :func:`iter_state_blocks`.

    Returns
    -------
    array of shape (n_samples, n_steps, n_channels * order), the dtype of ``X``
    """
    n_samples, n_steps, n_channels = X.shape
    out = None
    for t0, G in iter_state_blocks(X, Abar, H, block, xp, W=W):
        order = G.shape[3]
        if out is None:
            out = xp.empty((n_samples, n_steps, n_channels * order), dtype=X.dtype)
            out4 = out.reshape(n_samples, n_steps, n_channels, order)
        out4[:, t0 : t0 + G.shape[2]] = G.transpose(0, 2, 1, 3)
    return out


def pooled_states_blocked(
    X: Any,
    Abar: Any,
    H: Any,
    reduce: str,
    block: int,
    xp: ModuleType,
    *,
    W: Any = None,
    lengths: Any = None,
) -> Any:
    """States reduced over time block by block, never holding more than one block.

    Parameters
    ----------
    X : array of shape (n_samples, n_steps, n_channels)
    Abar, H, block, W
        See :func:`iter_state_blocks`.
    reduce : {'mean', 'max'}
        Average or maximum of every state over time.
    xp : module
    lengths : int array of shape (n_samples,), optional
        Own lengths of left-aligned, zero-padded samples; only their own steps count.

    Returns
    -------
    array of shape (n_samples, n_channels * order), the dtype of ``X``
    """
    if reduce not in REDUCTIONS:
        raise ValueError(f"Unknown reduction {reduce!r}; use one of {REDUCTIONS}.")
    n_samples, n_steps, n_channels = X.shape
    if lengths is not None:
        lengths = xp.asarray(lengths).astype(xp.int64)
    acc = None
    for t0, G in iter_state_blocks(X, Abar, H, block, xp, W=W):
        if lengths is not None:
            steps = t0 + xp.arange(G.shape[2], dtype=xp.int64)
            mask = (steps[None, :] < lengths[:, None])[:, None, :, None]
            G = xp.where(mask, G, -math.inf) if reduce == "max" else G * mask.astype(G.dtype)
        part = G.max(axis=2) if reduce == "max" else G.sum(axis=2)
        if acc is None:
            acc = part
        elif reduce == "max":
            xp.maximum(acc, part, out=acc)
        else:
            acc += part
    if reduce == "mean":
        if lengths is None:
            acc /= n_steps
        else:
            acc /= lengths[:, None, None].astype(acc.dtype)
    return acc.reshape(n_samples, n_channels * acc.shape[2])

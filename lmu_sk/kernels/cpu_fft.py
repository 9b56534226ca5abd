"""All Delay Network states by FFT convolution on the CPU (SciPy's pocketfft)."""

from __future__ import annotations

import os

import numpy as np
import scipy.fft

__all__ = ["fft_length", "impulse_spectrum", "states_fft"]


def fft_length(n_steps: int) -> int:
    """A fast real-FFT length ``>= 2 * n_steps - 1`` (no wrap-around of the convolution)."""
    return scipy.fft.next_fast_len(2 * n_steps - 1, real=True)


def impulse_spectrum(H: np.ndarray, length: int) -> np.ndarray:
    """``rfft`` of the impulse response ``H`` (n_steps, order) zero-padded to ``length``."""
    return scipy.fft.rfft(H, n=length, axis=0)


def states_fft(U: np.ndarray, H_spectrum: np.ndarray, length: int, workers: int | None = None):
    """All states of every row: ``irfft(rfft(u) * rfft(H))[:n_steps]``.

    Parameters
    ----------
    U : ndarray of shape (n_rows, n_steps)
    H_spectrum : ndarray of shape (length // 2 + 1, order)
        From :func:`impulse_spectrum`, complex64 for float32 ``U``.
    length : int
        FFT length, from :func:`fft_length`.
    workers : int, optional
        Threads for the FFTs; all cores by default.

    Returns
    -------
    ndarray of shape (n_rows, n_steps, order), the dtype of ``U``
    """
    workers = workers or os.cpu_count() or 1
    n_steps = U.shape[1]
    spectrum = scipy.fft.rfft(U, n=length, axis=1, workers=workers)
    product = spectrum[:, :, None] * H_spectrum[None]
    states = scipy.fft.irfft(product, n=length, axis=1, workers=workers, overwrite_x=True)
    return np.ascontiguousarray(states[:, :n_steps], dtype=U.dtype)

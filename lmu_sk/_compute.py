"""Delay Network features of whole datasets on the CPU: method choice, caching and chunking.

Inputs arrive validated as ``(n_samples, n_steps, n_channels)`` arrays in the compute dtype.
Every channel of every sample is one *row* for the kernels; results are laid out so that
feature ``k * order + i`` is state ``i`` of channel ``k``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

import numpy as np

from ._logging import get_logger
from ._memory import check_fits, format_bytes
from .dn import discrete_system, impulse_response
from .kernels import cpu_fft, cpu_gemm, cpu_numba

__all__ = ["OUTPUTS", "SEQUENCE_METHODS", "choose_method", "dn_features", "dn_features_ragged"]

logger = get_logger(__name__)

OUTPUTS = ("final", "sequence", "mean", "max")
SEQUENCE_METHODS = ("auto", "gemm", "fft", "recurrence")

# Cost model for all states, in seconds per output element, measured on a 2-core x86 CPU:
# blocked GEMMs do 2 * (order + T) flops per element at ~190 GFLOP/s in float32; the FFT
# route costs about 0.75 ns * log2(L) per element whatever the order. FFT wins above an
# order of roughly 750 for 784 steps.
_GEMM_FLOPS_PER_SECOND = 190e9
_FFT_SECONDS_PER_ELEMENT_PER_LOG2 = 0.75e-9
# The compiled recurrence: about 15 GFLOP/s per core (2 * order**2 flops per state update).
_RECURRENCE_FLOPS_PER_SECOND = 30e9
# Impulse responses larger than this are not kept in the cache.
_CACHE_LIMIT_BYTES = 256 * 1024**2
# Besides fitting max_memory, chunks hold about this many seconds of work by the cost model
# (at least _MIN_CHUNK_SAMPLES samples), so that verbose progress has steps to show.
_CHUNK_SECONDS = 0.5
_MIN_CHUNK_SAMPLES = 32


def block_length(order: int) -> int:
    """Steps per GEMM block: short blocks keep the extra ``T / order`` flops small."""
    return 16 if order <= 128 else 8


def choose_method(order: int, n_steps: int) -> str:
    """The faster all-states route for ``order`` and ``n_steps`` by the cost model."""
    gemm = 2.0 * (order + block_length(order)) / _GEMM_FLOPS_PER_SECOND
    fft = _FFT_SECONDS_PER_ELEMENT_PER_LOG2 * math.log2(cpu_fft.fft_length(n_steps))
    return "fft" if fft < gemm else "gemm"


@lru_cache(maxsize=16)
def _system(order: int, theta: float, discretizer: str) -> tuple[np.ndarray, np.ndarray]:
    Abar, Bbar = discrete_system(order, theta, discretizer)
    Abar.flags.writeable = False
    Bbar.flags.writeable = False
    return Abar, Bbar


def _cached(function):
    """``lru_cache`` for builders of read-only arrays that skips results too big to keep."""
    cached = lru_cache(maxsize=8)(function)

    def wrapper(*args):
        order, n_steps = args[0], args[3]
        if 8 * order * n_steps > _CACHE_LIMIT_BYTES:
            return function(*args)
        return cached(*args)

    wrapper.cache_clear = cached.cache_clear
    return wrapper


@_cached
def _impulse(order: int, theta: float, discretizer: str, n_steps: int, dtype: str) -> np.ndarray:
    H = impulse_response(*_system(order, theta, discretizer), n_steps).astype(dtype)
    H.flags.writeable = False
    return H


@_cached
def _reversed_impulse(order, theta, discretizer, n_steps, dtype) -> np.ndarray:
    H = np.ascontiguousarray(_impulse(order, theta, discretizer, n_steps, "float64")[::-1])
    H = H.astype(dtype, copy=False)
    H.flags.writeable = False
    return H


@_cached
def _reversed_mean_impulse(order, theta, discretizer, n_steps, dtype) -> np.ndarray:
    # mean_t m_t = (1/n) sum_j u_j sum_{k <= n-1-j} H[k]: one GEMM with the running sum
    H = _impulse(order, theta, discretizer, n_steps, "float64")
    C = np.ascontiguousarray(np.cumsum(H, axis=0)[::-1] / n_steps).astype(dtype, copy=False)
    C.flags.writeable = False
    return C


@lru_cache(maxsize=8)
def _block_weights(order, theta, discretizer, block, dtype) -> np.ndarray:
    Abar, _ = _system(order, theta, discretizer)
    H = _impulse(order, theta, discretizer, block, "float64")
    W = cpu_gemm.block_weights(Abar, H, block).astype(dtype)
    W.flags.writeable = False
    return W


def _rows_per_chunk(bytes_per_row: float, budget: int, what: str) -> int:
    rows = int(budget // max(bytes_per_row, 1))
    if rows < 1:
        raise ValueError(
            f"{what} needs {format_bytes(bytes_per_row)} of working memory for a single "
            f"sequence but max_memory allows {format_bytes(budget)}; raise max_memory or "
            "use method='recurrence', which needs almost none."
        )
    return rows


def _rows(U: np.ndarray) -> np.ndarray:
    """``(n_samples, n_steps, n_channels)`` -> ``(n_samples * n_channels, n_steps)`` rows."""
    if U.shape[2] == 1:
        return U.reshape(U.shape[0], U.shape[1])
    return np.ascontiguousarray(U.transpose(0, 2, 1)).reshape(-1, U.shape[1])


def _states_of_rows(rows, key, method, output, out=None):
    """States of a block of rows by ``method``: ``(rows, n_steps, d)`` or ``(rows, d)``.

    Written into ``out`` when given (the result's own memory when there is one channel).
    """
    order = key[0]
    n_steps = rows.shape[1]
    dtype = rows.dtype.name
    if output in ("final", "mean") and method == "gemm":
        build = _reversed_impulse if output == "final" else _reversed_mean_impulse
        return cpu_gemm.final_states_gemm(rows, build(*key, n_steps, dtype), out=out)
    if method == "gemm":
        weights = _block_weights(*key, block_length(order), dtype)
        if output == "sequence":
            return cpu_gemm.states_blocked(rows, weights, order, out=out)
        states = cpu_gemm.states_blocked(rows, weights, order, reduce=output)
    elif method == "recurrence":
        states = cpu_numba.states_recurrence(rows, *_system(*key), output=output)
    else:
        length = cpu_fft.fft_length(n_steps)
        spectrum = cpu_fft.impulse_spectrum(_impulse(*key, n_steps, "float64"), length).astype(
            np.complex64 if dtype == "float32" else np.complex128
        )
        states = cpu_fft.states_fft(rows, spectrum, length)
        if output == "final":
            states = states[:, -1]
        elif output == "mean":
            # summed in float64: a float32 sum costs ~3e-6 of the mean at 30k steps, 2e-7 here
            states = states.mean(axis=1, dtype=np.float64).astype(states.dtype)
        elif output == "max":
            states = states.max(axis=1)
    if out is None:
        return states
    out[...] = states
    return out


def _seconds_per_row(method, output, n_steps, order) -> float:
    """Rough compute time of one row (one channel of one sample) by the cost model."""
    elements = n_steps * order
    if method == "recurrence":
        return 2.0 * order * elements / _RECURRENCE_FLOPS_PER_SECOND
    if method == "gemm" and output in ("final", "mean"):
        return 2.0 * elements / _GEMM_FLOPS_PER_SECOND
    if method == "gemm":
        return 2.0 * (order + block_length(order)) * elements / _GEMM_FLOPS_PER_SECOND
    return _FFT_SECONDS_PER_ELEMENT_PER_LOG2 * math.log2(cpu_fft.fft_length(n_steps)) * elements


def _working_bytes_per_sample(method, output, n_steps, n_channels, order, itemsize):
    """Temporary memory one sample needs beyond the result, by route."""
    row_copy = n_steps * n_channels * itemsize if n_channels > 1 else 0
    if method == "fft":
        length = cpu_fft.fft_length(n_steps)
        return row_copy + n_channels * (length // 2 + 1) * order * itemsize * 2 * 2
    if output == "sequence" and n_channels > 1:
        return row_copy + n_steps * n_channels * order * itemsize
    if output == "max" and method == "gemm":
        return row_copy + 2 * block_length(order) * n_channels * order * itemsize
    return row_copy + 1


def dn_features(
    U: np.ndarray,
    order: int,
    theta: float,
    discretizer: str = "zoh",
    output: str = "final",
    method: str = "auto",
    budget: int = 1 << 30,
    progress: Callable[[int], None] | None = None,
) -> np.ndarray:
    """Delay Network features of a batch of equal-length sequences.

    Parameters
    ----------
    U : ndarray of shape (n_samples, n_steps, n_channels), float32 or float64
    order, theta, discretizer
        The Delay Network.
    output : {'final', 'sequence', 'mean', 'max'}
        The state after the last step, after every step, or averaged / maximised over time.
    method : {'auto', 'gemm', 'fft', 'recurrence'}
        Route for everything but final states (always one GEMM unless 'recurrence').
    budget : int
        Bytes of working memory allowed besides the result; samples are processed in
        chunks that fit (and that take about half a second each by the cost model).
    progress : callable, optional
        Called with the number of samples of every chunk once it is done.

    Returns
    -------
    ndarray of shape (n_samples, n_channels * order) or, for 'sequence',
    (n_samples, n_steps, n_channels * order), in the dtype of ``U``.
    """
    n_samples, n_steps, n_channels = U.shape
    itemsize = U.dtype.itemsize
    asked = method
    if method == "auto":
        method = "gemm" if output in ("final", "mean") else choose_method(order, n_steps)
    if output == "final" and method == "fft":
        method = "gemm"  # the final state alone is one GEMM whatever the route
    result_shape = (
        (n_samples, n_steps, n_channels * order)
        if output == "sequence"
        else (n_samples, n_channels * order)
    )
    check_fits(
        math.prod(result_shape) * itemsize,
        f"The {output!r} features of shape {result_shape} ({U.dtype.name})",
        "Transform fewer samples per call, use output='final', 'mean' or 'max', or stream "
        "to disk with the command line tool (lmu-sk features).",
    )
    out = np.empty(result_shape, dtype=U.dtype)
    key = (order, theta, discretizer)
    per_sample = _working_bytes_per_sample(method, output, n_steps, n_channels, order, itemsize)
    chunk = _rows_per_chunk(per_sample, budget, f"method={method!r}")
    seconds = n_channels * _seconds_per_row(method, output, n_steps, order)
    by_time = int(min(_CHUNK_SECONDS / max(seconds, 1e-15), n_samples))  # fft of 1 step: 0 s
    chunk = max(1, min(chunk, max(_MIN_CHUNK_SAMPLES, by_time), n_samples))
    logger.debug(
        "Delay Network features of %d sample(s) x %d step(s) x %d channel(s), order %d, "
        "output=%r: method=%r%s, %d chunk(s) of up to %d sample(s) (%s of working memory "
        "per sample, max_memory allows %s; ~%.2g s of work per sample)",
        n_samples,
        n_steps,
        n_channels,
        order,
        output,
        method,
        " (picked by method='auto')" if asked == "auto" else "",
        -(-n_samples // chunk),
        chunk,
        format_bytes(per_sample),
        format_bytes(budget),
        seconds,
    )
    for start in range(0, n_samples, chunk):
        stop = min(start + chunk, n_samples)
        if n_channels == 1:
            _states_of_rows(_rows(U[start:stop]), key, method, output, out=out[start:stop])
        else:
            states = _states_of_rows(_rows(U[start:stop]), key, method, output)
            if output == "sequence":
                # rows are (sample, channel); features want (sample, step, channel * order)
                states = states.reshape(stop - start, n_channels, n_steps, order)
                out[start:stop] = states.transpose(0, 2, 1, 3).reshape(stop - start, n_steps, -1)
            else:
                out[start:stop] = states.reshape(stop - start, -1)
        if progress is not None:
            progress(stop - start)
    return out


def dn_features_ragged(
    sequences: list[np.ndarray],
    order: int,
    theta: float,
    discretizer: str = "zoh",
    output: str = "final",
    method: str = "auto",
    budget: int = 1 << 30,
    progress: Callable[[int], None] | None = None,
):
    """Delay Network features of sequences of different lengths, each at its own end.

    Final and mean states left-pad every sequence with zeros to the longest length: the
    state stays exactly zero over the padding, so one GEMM gives every sequence's final
    state at its own end, and sums over time are unchanged. 'sequence' and 'max' group the
    sequences by length.

    Parameters
    ----------
    sequences : list of ndarray of shape (n_steps_i, n_channels)
        In the compute dtype.
    order, theta, discretizer, output, method, budget, progress
        As for :func:`dn_features`.

    Returns
    -------
    ndarray of shape (n_samples, n_channels * order), or for 'sequence' a list of arrays of
    shape (n_steps_i, n_channels * order).
    """
    lengths = np.array([len(s) for s in sequences])
    n_channels = sequences[0].shape[1]
    dtype = sequences[0].dtype
    if output in ("final", "mean") and method != "recurrence":
        longest = int(lengths.max())
        out = np.empty((len(sequences), n_channels * order), dtype=dtype)
        per_sample = longest * n_channels * dtype.itemsize * 2
        chunk = _rows_per_chunk(per_sample, budget, "Left-padding the sequences")
        for start in range(0, len(sequences), chunk):
            batch = sequences[start : start + chunk]
            padded = np.zeros((len(batch), longest, n_channels), dtype=dtype)
            for row, seq in enumerate(batch):
                padded[row, longest - len(seq) :] = seq
            feats = dn_features(
                padded, order, theta, discretizer, output, method, budget, progress
            )
            if output == "mean":
                feats *= longest / lengths[start : start + chunk, None]
            out[start : start + len(batch)] = feats
        return out
    results: list = [None] * len(sequences)
    for length in np.unique(lengths):
        members = np.flatnonzero(lengths == length)
        U = np.stack([sequences[i] for i in members])
        feats = dn_features(U, order, theta, discretizer, output, method, budget, progress)
        for row, i in enumerate(members):
            results[i] = feats[row]
    return results if output == "sequence" else np.stack(results)

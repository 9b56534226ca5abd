"""The Delay Network maps, written once against an array module ``xp`` (NumPy or CuPy).

Every function takes the module as ``xp`` and uses only the API NumPy and CuPy share, so
the CPU runs the very code the GPU runs (matrix products go to BLAS or cuBLAS, FFTs to
SciPy's pocketfft or cuFFT). Results are written in place where the caller gives ``out``.

Layouts: sequences arrive as ``X`` of shape ``(n_samples, n_steps, n_channels)``, left-
aligned and zero-padded with each sample's own length in ``lengths`` when lengths differ
(the engine's one ragged convention). Every channel of every sample drives its own copy of
the Delay Network: the kernels work on *rows*, ``U = rows(X)`` of shape ``(n_samples *
n_channels, n_steps)`` where row ``s * n_channels + k`` is channel ``k`` of sample ``s``;
a row's ``order`` states land in features ``k * order .. (k + 1) * order - 1``.

With the impulse response ``H[k] = Abar^k Bbar`` the state after step ``t`` is
``m_t = sum_{j <= t} H[t - j] u_j``, so

* the final state is one product with ``H[::-1]`` (:func:`final_states`), and the sum of
  all states one product with ``cumsum(H)[::-1]``;
* all states are a causal convolution (:func:`fft_states`) or a sequence of block
  products that carry the state from one block of ``T`` steps into the next
  (:func:`iter_blocks`);
* the pools of the pooled features are accumulated block by block into carried pools
  (:func:`pool_blocks`, one arithmetic for the batch and the streams) and finished once
  (:func:`pool_values`), over the inputs :func:`input_transforms` makes
  (:func:`pool_window`: all three for whole sequences).
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Callable, Iterator
from functools import partial
from types import ModuleType
from typing import Any

import numpy as np

from ..kernels import cpu
from ..reference import first_within_tie

__all__ = [
    "block_means",
    "empty_pools",
    "fft_module",
    "fft_states",
    "final_states",
    "input_transforms",
    "iter_blocks",
    "pool_blocks",
    "pool_values",
    "pool_window",
    "reduce_blocks",
    "right_align",
    "row_lengths",
    "rows",
    "running_max",
    "states_to_features",
    "valid_steps",
]

Array = Any


def fft_module(xp: ModuleType) -> tuple[Callable, Callable]:
    """``(rfft, irfft)`` of ``xp``: SciPy's with every core on NumPy, ``xp.fft`` otherwise."""
    if xp is np:
        import scipy.fft

        workers = os.cpu_count() or 1
        return (
            partial(scipy.fft.rfft, workers=workers),
            partial(scipy.fft.irfft, workers=workers, overwrite_x=True),
        )
    return xp.fft.rfft, xp.fft.irfft


def rows(X: Array, xp: ModuleType) -> Array:
    """The ``(n_samples * n_channels, n_steps)`` rows of ``X``, one per channel of a sample.

    One channel is a reshape (no copy for a C-contiguous ``X``); several channels need one
    transposing copy.
    """
    n_samples, n_steps, n_channels = X.shape
    if n_channels == 1:
        return X.reshape(n_samples, n_steps)
    return xp.ascontiguousarray(X.transpose(0, 2, 1)).reshape(n_samples * n_channels, n_steps)


def row_lengths(lengths: Array, n_channels: int, xp: ModuleType) -> Array:
    """Each row's length: every sample's length repeated for its channels."""
    return xp.repeat(lengths, n_channels) if n_channels > 1 else lengths


def states_to_features(states: Array, n_samples: int, xp: ModuleType, out: Array = None):
    """States of rows ``(R, n_steps, d)`` in the features' layout ``(N, n_steps, c * d)``."""
    R, n_steps, d = states.shape
    c = R // n_samples
    if out is None:
        out = xp.empty((n_samples, n_steps, c * d), dtype=states.dtype)
    out.reshape(n_samples, n_steps, c, d)[...] = states.reshape(
        n_samples, c, n_steps, d
    ).transpose(0, 2, 1, 3)
    return out


def valid_steps(lengths: Array, t0: int, n_steps: int, xp: ModuleType) -> Array:
    """``(len(lengths), n_steps)`` booleans: step ``t0 + t`` lies within the row's length."""
    steps = xp.arange(t0, t0 + n_steps, dtype=xp.int64)
    return steps[None, :] < lengths[:, None]


def right_align(X: Array, lengths: Array, xp: ModuleType) -> Array:
    """Shift each left-aligned, zero-padded sequence so that it ends at the last step.

    Leading zeros leave the Delay Network state at zero, so the state of the shifted
    sequence after the last step is that of sample ``s`` after its own ``lengths[s]``
    steps: ragged final (and summed) states become one ordinary matrix product.

    Parameters
    ----------
    X : array of shape (n_samples, n_steps, n_channels)
    lengths : int array of shape (n_samples,), values in ``1 .. n_steps``
    xp : module

    Returns
    -------
    array of shape (n_samples, n_steps, n_channels), a new array
    """
    n_samples, n_steps, _ = X.shape
    source = xp.arange(n_steps, dtype=xp.int64)[None, :] + (lengths[:, None] - n_steps)
    valid = source >= 0
    source = xp.where(valid, source, 0)
    shifted = X[xp.arange(n_samples)[:, None], source]
    shifted *= valid[:, :, None].astype(X.dtype)
    return shifted


def final_states(U: Array, H_rev: Array, xp: ModuleType, out: Array = None) -> Array:
    """Final states of every row by one matrix product: ``U @ H[::-1]``.

    Parameters
    ----------
    U : array of shape (n_rows, n_steps)
    H_rev : array of shape (>= n_steps, order)
        The reversed impulse response of any length ``>= n_steps`` (its last ``n_steps``
        rows are used), in the dtype of ``U``. With ``cumsum(H)[::-1]`` instead, the sum
        of all states.
    xp : module
    out : array of shape (n_rows, order), optional

    Returns
    -------
    array of shape (n_rows, order)
    """
    n_steps = U.shape[1]
    return xp.matmul(U, H_rev[H_rev.shape[0] - n_steps :], out=out)


def iter_blocks(
    U: Array,
    W: Array,
    order: int,
    xp: ModuleType,
    *,
    state: Array = None,
    out: Array = None,
) -> Iterator[tuple[int, Array]]:
    """Yield ``(t0, G)``: the states of consecutive blocks of steps, carrying the state.

    ``G`` of shape ``(n_rows, T', order)`` holds the states after steps ``t0 .. t0 + T' -
    1`` (``T' = T`` but for a shorter last block). Each block is one matrix product
    ``[m, u_t0 .. u_{t0+T'-1}] @ W`` (:func:`lmu_sk.engine.constants.block_matrix`) with
    the state ``m`` before it; without a state the first block skips the top rows of ``W``.

    Parameters
    ----------
    U : array of shape (n_rows, n_steps)
    W : array of shape (order + T, T * order)
        The block matrix in the dtype of ``U`` (float32's with ``order`` more columns:
        :func:`lmu_sk.engine.constants.with_carried_increment`).
    order : int
    xp : module
    state : array of shape (n_rows, order), optional
        The state before the first step (zero by default).
    out : array of shape (n_rows, n_steps, order), optional
        C-contiguous; the blocks are written into it (``G`` are its views). Otherwise
        ``G`` is one scratch block, overwritten by the next.
    """
    n_rows, n_steps = U.shape
    d = order
    T = W.shape[0] - d
    if W.shape[1] < T * d:
        raise ValueError(f"W of shape {W.shape} does not serve blocks of {T} steps.")
    # float32's W holds in d more columns the increment of the state a whole block
    # carries (constants.with_carried_increment): added to the state, not rounded with it
    increment = W[:, T * d :] if W.shape[1] == (T + 1) * d else None
    carry = xp.empty((n_rows, d + T), dtype=W.dtype)  # [state, the block's inputs]
    carried = state is not None
    if carried:
        carry[:, :d] = state
    if out is not None:
        if not out.flags.c_contiguous:
            raise ValueError("out must be C-contiguous: the blocks are written into it.")
        flat = out.reshape(n_rows, n_steps * d)
    else:
        flat = xp.empty((n_rows, min(T, n_steps) * d), dtype=W.dtype)
    for t0 in range(0, n_steps, T):
        steps = min(T, n_steps - t0)
        cols = steps * d
        start = t0 * d if out is not None else 0
        target = flat[:, start : start + cols]
        carry[:, d : d + steps] = U[:, t0 : t0 + steps]
        step = None  # the carried state's increment over the block
        if carried:
            xp.matmul(carry[:, : d + steps], W[: d + steps, :cols], out=target)
            if increment is not None and steps == T:
                step = carry @ increment
        else:
            xp.matmul(carry[:, d : d + steps], W[d : d + steps, :cols], out=target)
            carried = True
        G = target.reshape(n_rows, steps, d)
        if step is None:
            carry[:, :d] = G[:, steps - 1]
        else:
            carry[:, :d] += step
        yield t0, G


def reduce_blocks(
    U: Array, W: Array, order: int, reduce: str, xp: ModuleType, lengths: Array = None
) -> Array:
    """Every row's states averaged or maximised over its steps, one block held at a time.

    Parameters
    ----------
    U, W, order, xp
        As for :func:`iter_blocks`.
    reduce : {'mean', 'max'}
    lengths : int array of shape (n_rows,), optional
        Each row's own length: only its own steps count.

    Returns
    -------
    array of shape (n_rows, order): the mean summed in float64 (a float32 running sum
    loses ``~n_steps * eps``), both cast to the dtype of ``U``.
    """
    n_steps = U.shape[1]
    shortest = n_steps if lengths is None else int(lengths.min())
    acc = None
    for t0, G in iter_blocks(U, W, order, xp):
        steps = G.shape[1]
        if t0 + steps > shortest:
            valid = valid_steps(lengths, t0, steps, xp)[:, :, None]
            G = xp.where(valid, G, -math.inf) if reduce == "max" else G * valid
        if reduce == "max":
            part = G.max(axis=1)
            acc = part if acc is None else xp.maximum(acc, part, out=acc)
        else:
            part = G.sum(axis=1, dtype=xp.float64)
            acc = part if acc is None else xp.add(acc, part, out=acc)
    if reduce == "mean":
        acc /= n_steps if lengths is None else lengths[:, None]
    return acc.astype(U.dtype, copy=False)


def fft_states(U: Array, H_hat: Array, n_fft: int, xp: ModuleType) -> Array:
    """All states of every row by FFT convolution: ``irfft(rfft(u) * rfft(H))[:n_steps]``.

    Parameters
    ----------
    U : array of shape (n_rows, n_steps)
    H_hat : array of shape (n_fft // 2 + 1, order)
        ``rfft`` of the impulse response (of at least ``n_steps`` steps) zero-padded to
        ``n_fft``, complex64 for float32 ``U``.
    n_fft : int
        ``>= n_steps + len(H) - 1`` so that the circular convolution does not wrap.
    xp : module

    Returns
    -------
    array of shape (n_rows, n_steps, order) in the dtype of ``U``: a view of the inverse
    transform where the FFT keeps single precision (SciPy, CuPy, NumPy >= 2), a cast copy
    where it computes in double (NumPy 1.x).
    """
    rfft, irfft = fft_module(xp)
    n_steps = U.shape[1]
    spectrum = rfft(U, n=n_fft, axis=1)  # (R, F)
    product = spectrum[:, :, None] * H_hat[None]  # (R, F, d)
    del spectrum
    states = irfft(product, n=n_fft, axis=1)  # (R, n_fft, d)
    return states[:, :n_steps].astype(U.dtype, copy=False)


def block_means(X: Array, lengths: Array, stride: int, xp: ModuleType) -> tuple[Array, Array]:
    """Means of consecutive blocks of ``stride`` steps (the last one may be shorter).

    Returns
    -------
    means : array of shape (n_samples, ceil(n_steps / stride), n_channels)
    lengths : int array, each sample's number of blocks
    """
    block_lengths = (lengths + stride - 1) // stride
    if xp is np:
        return cpu.block_means(X, lengths, stride), block_lengths
    n_samples, n_steps, n_channels = X.shape
    n_blocks = -(-n_steps // stride)
    starts = stride * xp.arange(n_blocks, dtype=xp.int64)
    padded = xp.zeros((n_samples, n_blocks * stride, n_channels), dtype=X.dtype)
    padded[:, :n_steps] = X
    sums = padded.reshape(n_samples, n_blocks, stride, n_channels).sum(axis=2)
    counts = xp.clip(lengths[:, None] - starts[None, :], 1, stride).astype(X.dtype)
    return sums / counts[..., None], block_lengths


def mixed_channels(X: Array, mixing: Array, xp: ModuleType) -> Array:
    """The channels of ``X`` ``(n_samples, n_steps, n_channels)`` combined by ``mixing``
    ``(n_channels, n_read)``, in float64 whatever ``X``'s dtype: the same values from a
    sequence however it is held (float32 alone or among float64 sequences, in a batch or
    a stream's chunk), the sum of two float32 values exact."""
    return X.astype(np.float64, copy=False) @ xp.asarray(mixing, dtype=np.float64)


def input_transforms(
    X: Array, lengths: Array, transforms: tuple[str, ...], xp: ModuleType
) -> Array:
    """The inputs of pooled features made of every channel, transform-major, zero past each
    sample's length (:mod:`~lmu_sk.engine.pooling` defines them).

    Parameters
    ----------
    X : array of shape (n_samples, n_steps, n_channels)
        Left-aligned sequences, zero past each sample's length.
    lengths : int array of shape (n_samples,)
    transforms : tuple of {'series', 'difference', 'cumsum'}

    Returns
    -------
    array of shape (n_samples, n_steps, len(transforms) * n_channels), the dtype of ``X``
    """
    n_samples, n_steps, c = X.shape
    out = xp.empty((n_samples, n_steps, len(transforms) * c), dtype=X.dtype)
    valid = None
    if int(lengths.min()) < n_steps:
        valid = valid_steps(lengths, 0, n_steps, xp)[:, :, None]
    for j, name in enumerate(transforms):
        part = out[:, :, j * c : (j + 1) * c]
        if name == "series":
            part[...] = X
        elif name == "difference":
            part[:, 0] = 0
            xp.subtract(X[:, 1:], X[:, :-1], out=part[:, 1:])
            if valid is not None:
                part *= valid
        elif name == "cumsum":
            n = lengths.astype(X.dtype)[:, None, None]
            level = X.sum(axis=1, keepdims=True) / n
            centred = X - level
            if valid is not None:
                centred *= valid
            xp.cumsum(centred, axis=1, out=part)
            part /= xp.sqrt(n)
            if valid is not None:
                part *= valid
        else:
            raise ValueError(f"Unknown input transform {name!r}.")
    return out


def running_max(a: Array, xp: ModuleType, axis: int = 1) -> Array:
    """Running maximum of ``a`` along ``axis``; ``a`` may be overwritten.

    NumPy accumulates. CuPy's ``maximum`` has no ``accumulate``: there ``ceil(log2 n)``
    shifted maxima (``a[t] = max(a[t], a[t - s])`` for ``s = 1, 2, 4, ...``) need only
    elementwise maxima.
    """
    if xp is np:
        return np.maximum.accumulate(a, axis=axis)
    a = xp.moveaxis(a, axis, 1)
    n = a.shape[1]
    other = xp.empty_like(a)
    shift = 1
    while shift < n:
        other[:, :shift] = a[:, :shift]
        xp.maximum(a[:, shift:], a[:, :-shift], out=other[:, shift:])
        a, other = other, a
        shift *= 2
    return xp.moveaxis(a, 1, axis)


def empty_pools(n_rows: int, order: int, n_biases: int, xp: ModuleType) -> tuple:
    """The pools of rows that have seen no step, float64, in the layout the compiled
    pooled kernel carries (:func:`lmu_sk.kernels.cpu.pooled_window_carried`).

    Returns
    -------
    state : array of shape (n_rows, order)
        The Delay Network state after the steps pooled (zero).
    thresholds : array of shape (n_rows, order, 5, n_biases)
        Per threshold the count of steps above it, the sum of the states on those steps
        (the compiled kernel's flushed float64 sum), the current run of steps above it,
        the longest such run, and the compiled kernel's float32 sum since its last flush
        (zero elsewhere).
    moments : array of shape (n_rows, order, 3)
        The sum, maximum (``-inf``) and minimum (``+inf``) of every state.
    wins : array of shape (n_rows, 2, order)
        The counts of steps on which each state, scaled, is the first largest of the
        row's states, then the first smallest.
    """
    d = int(order)
    pools = tuple(
        xp.empty(shape, dtype=xp.float64)
        for shape in (
            (n_rows, d),
            (n_rows, d, cpu.CARRIED_SUMS, n_biases),
            (n_rows, d, 3),
            (n_rows, 2, d),
        )
    )
    for a in pools:
        a[...] = 0.0
    pools[2][..., 1] = -math.inf
    pools[2][..., 2] = math.inf
    return pools


def pool_blocks(
    U: Array,
    W: Array,
    order: int,
    pools: tuple,
    biases: Array,
    scale: Array,
    xp: ModuleType,
    *,
    lengths: Array = None,
    compare: Any = None,
) -> None:
    """Add the states of the steps ``U`` to the carried ``pools``, in place, block by block.

    The states come from :func:`iter_blocks`, continued from the pools' state; each row
    counts its own ``lengths[r]`` steps only (all of them by default). Per state ``i`` and
    threshold ``b_k``: the steps with ``m_t[i] > b_k`` are counted and their states summed,
    and the run of consecutive such steps is carried from block to block (within a block
    the run at step ``t`` is ``t - L_t``, ``L_t`` the last step ``<= t`` not above, a step
    ``-1 - run`` before the block when there is none: a running maximum); the sum, maximum
    and minimum of every state; the steps on which each state, scaled, is the first
    largest of its row's states, then the first smallest (each within
    :data:`~lmu_sk.reference.COMPETE_TIE`).

    Parameters
    ----------
    U, W, order, xp
        As for :func:`iter_blocks`: one input per row, the block matrix in the dtype of
        ``U``.
    pools : tuple
        As :func:`empty_pools` makes them; advanced in place. The state becomes the one
        after the last step of ``U`` (meaningful for rows of equal length).
    biases : array of shape (n_rows, order, n_biases)
        Thresholds of every row's states, in the dtype the states are compared in.
    scale : array of shape (n_rows, order)
        Scales of the states for the competition.
    lengths : int array of shape (n_rows,), optional
        Each row's own number of steps, ``1 .. n_steps``.
    compare : dtype, optional
        The states are rounded to this dtype before they are compared with the thresholds
        (by default compared in the dtype of ``U``).
    """
    state, thresholds, moments, wins = pools
    n_steps = U.shape[1]
    d = int(order)
    n_biases = thresholds.shape[-1]
    shortest = n_steps if lengths is None else int(lengths.min())
    states = xp.arange(d)[None, None, :]
    scale = scale[:, None, :]
    total, high, low = moments[..., 0], moments[..., 1], moments[..., 2]
    G = None
    for t0, G in iter_blocks(U, W, d, xp, state=state):
        steps = G.shape[1]
        valid = None
        if t0 + steps > shortest:
            valid = valid_steps(lengths, t0, steps, xp)[:, :, None]
            total += (G * valid).sum(axis=1, dtype=xp.float64)
            xp.maximum(high, xp.where(valid, G, -math.inf).max(axis=1), out=high)
            xp.minimum(low, xp.where(valid, G, math.inf).min(axis=1), out=low)
        else:
            total += G.sum(axis=1, dtype=xp.float64)
            xp.maximum(high, G.max(axis=1), out=high)
            xp.minimum(low, G.min(axis=1), out=low)
        compared = G
        if compare is not None and G.dtype != compare:
            with np.errstate(over="ignore"):  # beyond the dtype: infinite, still above
                compared = G.astype(compare)
        t = xp.arange(steps, dtype=xp.float64)[None, :, None]
        for k in range(n_biases):
            hits = compared > biases[:, None, :, k]
            if valid is not None:
                hits &= valid
            count, above, run, longest = (thresholds[..., j, k] for j in range(4))
            count += hits.sum(axis=1)
            above += xp.where(hits, G, 0).sum(axis=1, dtype=xp.float64)
            # the last step not above, at or before each step
            last = running_max(xp.where(hits, (-1.0 - run)[:, None, :], t), xp)
            runs = xp.subtract(t, last, out=last)
            xp.maximum(longest, runs.max(axis=1), out=longest)
            run[...] = runs[:, -1]
        scaled = G * scale
        for j, pick in enumerate(first_within_tie(scaled, axis=2)):
            picked = pick[:, :, None] == states
            if valid is not None:
                picked &= valid
            wins[:, j] += picked.sum(axis=1)
    if G is not None:
        state[...] = G[:, -1]


def pool_values(
    pools: tuple,
    n: Any,
    biases: Array,
    xp: ModuleType,
    keep: tuple[str, ...] = ("ppv", "mpv", "lspv", "mean", "max", "min"),
) -> tuple[Array, Array]:
    """The carried pools as features, float64: the one finishing step of every route.

    Parameters
    ----------
    pools : tuple
        As :func:`empty_pools` makes them (the state is not used); any leading shape of
        rows in place of ``(n_rows,)``.
    n : int or int array of shape (n_rows,)
        The steps each row pooled.
    biases : array broadcastable to (n_rows, order, n_biases)
        The thresholds the steps were compared with.
    xp : module
    keep : tuple of str
        The pools per state to return, of ``'ppv'``, ``'mpv'``, ``'lspv'``, ``'mean'``,
        ``'max'``, ``'min'`` (all by default); they come in that order whatever the order
        of ``keep``.

    Returns
    -------
    values : array of shape (n_rows, order, n_columns)
        Per state, of those kept, ``[ppv x n_biases, mpv x n_biases, lspv x n_biases,
        mean, max, min]``: the proportion of steps above each threshold, the mean excess
        over it on those steps (0 when there are none), the longest run above it over
        ``n``; the mean, maximum and minimum of the state.
    compete : array of shape (n_rows, 2 * order)
        The proportion of steps each state is the first largest of its row, then the first
        smallest.
    """
    _, thresholds, moments, wins = pools
    rows, d = moments.shape[:-2], moments.shape[-2]
    scalar = isinstance(n, numbers.Number)
    per_row = n if scalar else n.astype(xp.float64).reshape(*n.shape, 1)
    per_threshold = per_row if scalar else per_row[..., None]
    columns = []
    if thresholds.shape[-1]:
        count = thresholds[..., 0, :]
        if "ppv" in keep:
            columns.append(count / per_threshold)
        if "mpv" in keep:
            # the flushed sum and the compiled kernel's float32 sum since (as it adds them)
            excess = (thresholds[..., 1, :] + thresholds[..., 4, :]) / xp.maximum(count, 1.0)
            mean_above = excess - biases.astype(xp.float64, copy=False)
            columns.append(xp.where(count > 0, mean_above, 0.0))
        if "lspv" in keep:
            columns.append(thresholds[..., 3, :] / per_threshold)
    for j, name in enumerate(("mean", "max", "min")):
        if name in keep:
            value = moments[..., j : j + 1]
            columns.append(value / per_threshold if name == "mean" else value)
    values = xp.empty((*rows, d, sum(c.shape[-1] for c in columns)), dtype=xp.float64)
    start = 0
    for column in columns:
        values[..., start : start + column.shape[-1]] = column
        start += column.shape[-1]
    return values, wins.reshape(*rows, 2 * d) / per_row


def pool_window(
    U: Array,
    W: Array,
    order: int,
    biases: Array,
    scale: Array,
    lengths: Array,
    xp: ModuleType,
) -> tuple[Array, Array]:
    """Every pool of one window's states (:mod:`~lmu_sk.engine.pooling`), block by block.

    :func:`empty_pools`, :func:`pool_blocks` over each row's own ``lengths[r]`` steps and
    :func:`pool_values`: per state ``i`` and threshold ``b_k`` (ascending along ``k``),
    over the ``n`` own steps of a row,

    * ``ppv``: the proportion of steps with ``m_t[i] > b_k``;
    * ``mpv``: the mean of ``m_t[i] - b_k`` over those steps, 0 when there are none;
    * ``lspv``: the longest run of consecutive such steps, divided by ``n``;
    * ``mean``, ``max``, ``min`` of ``m_t[i]``;

    and per row the proportion of steps on which each state is the first largest of the
    scaled states ``m_t * scale``, then the first smallest (each within
    :data:`~lmu_sk.reference.COMPETE_TIE`).

    Parameters
    ----------
    U, W, order, xp
        As for :func:`iter_blocks`: one input per row, the window's block matrix.
    biases : array of shape (n_rows, order, n_biases)
        Thresholds of every row's states, ascending along the last axis.
    scale : array of shape (n_rows, order)
        Scales of the states for the ``'compete'`` pools, cast to the dtype of ``U``.
    lengths : int array of shape (n_rows,)
        Each row's own number of steps, ``1 .. n_steps``; later steps are ignored.

    Returns
    -------
    pools : array of shape (n_rows, order, 3 * n_biases + 3)
        Per state ``[ppv x n_biases, mpv x n_biases, lspv x n_biases, mean, max, min]``.
    compete : array of shape (n_rows, 2 * order)
        ``[proportion of steps each state is the argmax, then the argmin]``.

    Both in the dtype of ``U``. Counts and sums are float64 (a float32 running sum loses
    ``~n_steps * eps``); the comparisons are in the dtype of ``U`` against the thresholds
    as given.
    """
    n_rows, n_steps = U.shape
    d = int(order)
    if biases.ndim != 3 or biases.shape[:2] != (n_rows, d):
        raise ValueError(
            f"biases must have shape ({n_rows}, {d}, n_biases) (rows, order, thresholds); "
            f"got {tuple(biases.shape)}."
        )
    if tuple(scale.shape) != (n_rows, d):
        raise ValueError(
            f"scale must have shape ({n_rows}, {d}) (rows, order); got {tuple(scale.shape)}."
        )
    if tuple(lengths.shape) != (n_rows,):
        raise ValueError(f"lengths must have shape ({n_rows},); got {tuple(lengths.shape)}.")
    n_biases = biases.shape[2]
    dtype = U.dtype
    if n_rows == 0:
        return (
            xp.empty((n_rows, d, 3 * n_biases + 3), dtype=dtype),
            xp.empty((n_rows, 2 * d), dtype=dtype),
        )
    shortest, longest = int(lengths.min()), int(lengths.max())
    if shortest < 1 or longest > n_steps:
        raise ValueError(
            f"lengths must lie in 1 .. {n_steps} (the steps of U); got {shortest} .. {longest}."
        )
    pools = empty_pools(n_rows, d, n_biases, xp)
    # steps past every row's length change nothing
    pool_blocks(
        U[:, :longest], W, d, pools, biases, scale.astype(dtype, copy=False), xp, lengths=lengths
    )
    values, compete = pool_values(pools, lengths, biases, xp)
    return values.astype(dtype, copy=False), compete.astype(dtype, copy=False)

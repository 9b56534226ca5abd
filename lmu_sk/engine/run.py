"""The one chunk loop: every output, every device, one ragged convention.

Samples are processed in chunks of ``plan.rows`` (:mod:`lmu_sk.engine.plan`). A *feed*
brings each chunk to the device as a left-aligned, zero-padded ``(rows, n_steps,
n_channels)`` array with the samples' own lengths (``None`` when all are equal), the
chunk's maps of :mod:`lmu_sk.engine.algebra` (or a compiled kernel) compute its result,
and a *sink* stores it. Sequences of different lengths are taken shortest first, so that
a chunk pads little, and their results are put back in the caller's order.

Feeds and sinks only move data:

* on the CPU, and for arrays already on the GPU, a chunk is a slice (or, for a list of
  sequences, a padded copy) and results are written in place where the route allows;
* host data on a GPU goes through two pinned buffers each way: while chunk ``i`` is
  computed on one CUDA stream, chunk ``i + 1`` is copied in on another and the result of
  chunk ``i - 1`` is copied out. An out-of-memory error halves the chunk and resumes
  after the last stored one.
"""

from __future__ import annotations

import ctypes
import dataclasses
import math
from collections.abc import Callable
from functools import lru_cache
from types import ModuleType
from typing import Any

import numpy as np

from .._device import (
    array_module_of,
    device_key,
    free_device_memory,
    is_device_array,
    is_out_of_memory,
    pinned_empty,
    release_device_memory,
    to_numpy,
)
from .._logging import get_logger
from .._memory import available_memory, check_fits
from ..kernels import cpu, cuda
from ..kernels._jit import numba_cuda
from . import algebra, constants, pooling
from .host_copy import copy_rows
from .plan import (
    Plan,
    block_steps,
    kernel_threads,
    plan_features,
    plan_pooled,
    plan_sampled_states,
    pooled_update_seconds,
)
from .pooling import PooledSpec

__all__ = ["PooledSpec", "features", "pooled_features", "sampled_states"]

logger = get_logger(__name__)

Array = Any

# Pooled features reduced as they go (a model's predictions) are computed into one buffer
# of at most this many bytes, reused chunk after chunk: fresh memory costs its first
# touch (page faults) once per call, not once per sample, and the rows are still in
# cache when reduced. LMUClassifier's predictions so: 5% less fit + predict CPU time over
# the 42 development sets than from the features of all the test samples at once (the
# page faults' system time about 2 s -> 0.6-0.8 s; 8 to 64 MiB alike).
REDUCED_CHUNK_BYTES = 32 << 20


# ----------------------------------------------------------------------------- the samples
# 'auto' leaves the FFT route of float32 inputs whose largest value exceeds this many
# times their typical one (the median magnitude): the FFT's rounding is relative to a
# series' largest value (one spike 1e7 times the signal: 4.5e-2 of the states long after
# it, against 1e-6 by blocked products), the blocked products' to each state's window
FFT_FLOAT32_MAX_RANGE = 1e3
# steps of each series the median magnitude is taken of, evenly strided
_TYPICAL_STEPS = 64


def _fft_fits(source: _Source, plan, xp: ModuleType) -> np.ndarray:
    """Which samples the FFT route computes about as accurately as the blocked products,
    as a host bool array in the samples' order: those whose series' largest values are
    small enough that the transforms' sums (up to ``n_fft**2`` times it) stay within the
    dtype (float64 too: an input near 1e306 overflowed the FFT where the blocked products
    compute it), and in float32 within ``FFT_FLOAT32_MAX_RANGE`` times their own median
    magnitude.

    Sample by sample, each channel over its own steps, so that a row's route, and its
    features, do not depend on the rows beside it: over the whole input, a spiky row
    among ordinary ones passed (their median) and lost 3e-4 of its states' scale to the
    FFT, where alone it took the blocked products (7e-7).
    """
    on = xp if source.on_device else np  # the input's module (host input for a GPU too)
    if source.is_list:
        parts = [(u[None], None) for u in source.U]
    else:
        parts = [(source.U, source.lengths)]
    limit = float(np.finfo(source.dtype).max) / 16 / float(plan.n_fft) ** 2
    fits = []
    for U, lengths in parts:  # (n, n_steps, n_channels), own lengths or None
        if not U.size:  # (no step: nothing to round)
            fits.append(np.ones(U.shape[0], dtype=bool))
            continue
        # (padded zeros raise no maximum)
        largest = on.maximum(U.max(axis=1), -U.min(axis=1))  # (n, n_channels)
        ok = largest < limit
        if source.dtype == np.float32:
            stride = max(1, U.shape[1] // _TYPICAL_STEPS)
            sample = on.abs(U[:, ::stride])
            if lengths is not None and int(lengths.min()) < U.shape[1]:
                steps = on.arange(0, U.shape[1], stride)
                own = steps[None, :] < on.asarray(lengths)[:, None]
                typical = on.nanmedian(on.where(own[:, :, None], sample, on.nan), axis=1)
            else:
                typical = on.median(sample, axis=1)
            ok &= largest <= FFT_FLOAT32_MAX_RANGE * typical
        fits.append(to_numpy(ok.all(axis=1)))
    return np.concatenate(fits) if fits else np.ones(0, dtype=bool)


class _Source:
    """The samples of one computation and the order the chunks take them in.

    An array ``(n_samples, n_steps, n_channels)`` (host or device; with ``lengths`` its
    samples are left-aligned and zero-padded), or a list of host arrays ``(n_steps_i,
    n_channels)``, taken shortest first. With ``mixing`` ``(n_channels, n_read)`` the
    chunks are their channels combined by it (:func:`algebra.mixed_channels`, in float64,
    before the conversion to the compute dtype), ``n_read`` channels made chunk by chunk.
    """

    def __init__(self, U: Any, lengths: Any = None, mixing: np.ndarray | None = None):
        self.is_list = isinstance(U, list)
        if self.is_list:
            self.lengths = np.asarray([len(u) for u in U], dtype=np.int64)
            self.order = np.argsort(self.lengths, kind="stable")
            self.n_channels = U[0].shape[1]
            self.dtype = np.result_type(*[u.dtype for u in U])
        else:
            self.lengths = None if lengths is None else np.asarray(lengths, dtype=np.int64)
            self.order = None
            self.n_channels = U.shape[2]
            self.dtype = np.dtype(U.dtype)
        #: the input's own channels; ``n_channels`` those of the chunks
        self.n_input_channels = self.n_channels
        self.mixing = mixing
        if mixing is not None:
            self.n_channels = int(mixing.shape[1])
        self.U = U
        self.n_samples = len(U)
        self.n_steps = int(self.lengths.max()) if self.is_list and len(U) else U.shape[1]
        self.on_device = is_device_array(U)
        self.ragged = self.lengths is not None and bool(
            len(self.lengths) and self.lengths.min() < self.n_steps
        )

    def chunk_lengths(self, a: int, b: int) -> np.ndarray | None:
        """Own lengths of the chunk's samples (host), ``None`` when the chunk is not ragged."""
        if self.lengths is None:
            return None
        lengths = self.lengths[self.order[a:b]] if self.is_list else self.lengths[a:b]
        return lengths if lengths.min() < self.width(a, b) else None

    def width(self, a: int, b: int) -> int:
        """Steps of the chunk's padded array."""
        if self.is_list:
            return int(self.lengths[self.order[b - 1]])  # shortest first: the last is longest
        return self.n_steps

    def chunk(self, a: int, b: int, dtype: np.dtype, buffer: np.ndarray | None = None):
        """The chunk as one array in ``dtype``: a slice when possible, else a (padded) copy.

        With ``buffer`` (flat host memory), the copy is made there.
        """
        if self.mixing is not None:
            raw = self.U[a:b] if not self.is_list else self._padded(a, b, self.dtype)
            x = algebra.mixed_channels(raw, self.mixing, array_module_of(raw))
            if buffer is None:
                return x if x.dtype == dtype else x.astype(dtype)
            host = buffer[: x.size].reshape(x.shape)
            host[...] = x
            return host
        if not self.is_list and buffer is None:
            x = self.U[a:b]
            return x if x.dtype == dtype else x.astype(dtype)
        return self._padded(a, b, dtype, buffer)

    def _padded(self, a: int, b: int, dtype: np.dtype, buffer: np.ndarray | None = None):
        """The chunk's own channels copied in ``dtype`` (into ``buffer`` where given),
        zero past each sample's length."""
        shape = (b - a, self.width(a, b), self.n_input_channels)
        if buffer is None:
            host = np.zeros(shape, dtype=dtype)
        else:
            host = buffer[: math.prod(shape)].reshape(shape)
        if self.is_list:
            if buffer is not None:
                host[...] = 0
            for row, index in enumerate(self.order[a:b]):
                u = self.U[index]
                host[row, : len(u)] = u
        else:
            copy_rows(host, self.U[a:b])
        return host


# ----------------------------------------------------------------------------- feeds
def _direct_feed(source: _Source, start: int, rows: int, xp: ModuleType, dtype: np.dtype):
    """Chunks as slices or padded copies, moved to ``xp``'s device as they are."""
    for a in range(start, source.n_samples, rows):
        b = min(a + rows, source.n_samples)
        x = xp.asarray(source.chunk(a, b, dtype))
        lengths = source.chunk_lengths(a, b)
        yield a, b, x, None if lengths is None else xp.asarray(lengths)


@lru_cache(maxsize=4)
def _streams(xp: ModuleType, device: tuple) -> tuple[Any, Any]:
    """A compute and a copy stream per device, kept so the memory pool reuses their blocks."""
    return xp.cuda.Stream(non_blocking=True), xp.cuda.Stream(non_blocking=True)


def _pinned_feed(source: _Source, start: int, rows: int, xp: ModuleType, dtype: np.dtype):
    """Host chunks to the GPU through two pinned buffers, the next copy overlapping compute.

    The consumer computes each chunk inside the compute stream's context, which this
    generator holds while it yields.
    """
    n = source.n_samples
    bounds = [(a, min(a + rows, n)) for a in range(start, n, rows)]
    if not bounds:
        return
    compute_stream, copy_stream = _streams(xp, device_key(xp))
    # The lengths, constants and outputs were made on the caller's stream.
    compute_stream.wait_event(xp.cuda.get_current_stream().record())
    slots = 2 if len(bounds) > 1 else 1
    size = min(rows, n - start) * source.n_steps * source.n_channels
    pinned = [pinned_empty((size,), dtype) for _ in range(slots)]
    device = [xp.empty((size,), dtype) for _ in range(slots)]
    uploaded: list[Any] = [None] * slots  # copy out of pinned[slot] done
    consumed: list[Any] = [None] * slots  # compute that read device[slot] done
    shapes: dict[int, tuple[int, ...]] = {}

    def upload(i: int) -> None:
        slot, (a, b) = i % slots, bounds[i]
        if uploaded[slot] is not None:
            uploaded[slot].synchronize()
        host = source.chunk(a, b, dtype, buffer=pinned[slot])
        if consumed[slot] is not None:
            copy_stream.wait_event(consumed[slot])
        target = device[slot][: host.size]
        target.data.copy_from_host_async(
            ctypes.c_void_p(host.ctypes.data), host.nbytes, copy_stream
        )
        uploaded[slot] = copy_stream.record()
        shapes[i] = host.shape

    try:
        upload(0)
        for i, (a, b) in enumerate(bounds):
            slot = i % slots
            compute_stream.wait_event(uploaded[slot])
            shape = shapes.pop(i)
            x = device[slot][: math.prod(shape)].reshape(shape)
            lengths = source.chunk_lengths(a, b)
            with compute_stream:
                yield a, b, x, None if lengths is None else xp.asarray(lengths)
                consumed[slot] = compute_stream.record()
            del x
            if i + 1 < len(bounds):
                upload(i + 1)  # the host copy into pinned memory overlaps compute of chunk i
    finally:
        # Nothing may be freed or reused while a copy or kernel using it is in flight.
        for stream in (copy_stream, compute_stream):
            try:
                stream.synchronize()
            except Exception:
                pass


# ----------------------------------------------------------------------------- sinks
class _ArraySink:
    """Results into one array ``out`` (host or device), in place where the route allows;
    chunks that take the samples in another order (shortest first) are computed into
    ``buffer`` where one is given (reused, so its memory is touched once) and scattered
    from there."""

    def __init__(self, out: Array, source: _Source, progress: Callable[[int], None], buffer=None):
        self.out = out
        self.order = source.order
        self.progress = progress
        self.buffer = buffer
        self.done = 0

    def target(self, a: int, b: int) -> Array:
        if self.order is None:
            return self.out[a:b]
        return None if self.buffer is None else self.buffer[: b - a]

    def put(self, a: int, b: int, y: Array, target: Array, xp: ModuleType) -> None:
        if self.order is not None:
            if is_device_array(self.out):
                self.out[xp.asarray(self.order[a:b])] = y
            else:
                self.out[self.order[a:b]] = to_numpy(y)
        elif y is not target:  # else computed in place
            self.out[a:b] = y if is_device_array(self.out) else to_numpy(y)
        self._stored(b - a)

    def _stored(self, count: int) -> None:
        self.done += count
        self.progress(count)

    def close(self) -> None:
        pass


class _ReducedSink(_ArraySink):
    """Each chunk's results computed into one reused ``buffer`` and passed at once to
    ``reduce``, whose rows (in the samples' order) are the output: the results of all
    the samples are never held together, and their memory is touched once, not once per
    sample (the first touch of fresh memory costs more than writing it)."""

    def __init__(self, buffer: Array, source: _Source, progress, reduce: Callable):
        super().__init__(None, source, progress, buffer)
        self.reduce = reduce
        self.parts: list = []

    def target(self, a: int, b: int) -> Array:
        return self.buffer[: b - a]

    def put(self, a: int, b: int, y: Array, target: Array, xp: ModuleType) -> None:
        self.parts.append(self.reduce(y))
        self._stored(b - a)

    def close(self) -> None:
        xp = array_module_of(self.parts[0])
        reduced = xp.concatenate(self.parts) if len(self.parts) > 1 else self.parts[0]
        if self.order is None:
            self.out = reduced
        else:  # the chunks took the samples shortest first
            self.out = xp.empty_like(reduced)
            self.out[xp.asarray(self.order)] = reduced


class _PinnedSink(_ArraySink):
    """GPU results to a host array through two pinned buffers, copied out asynchronously."""

    def __init__(self, out, source, progress, xp, rows: int):
        super().__init__(out, source, progress)
        self.xp = xp
        self.rows = rows
        tail = out.shape[1:]
        self.pinned = [pinned_empty((rows, *tail), out.dtype) for _ in range(2)]
        self.pending: list[tuple[int, int, int, Any]] = []  # (slot, a, b, event)
        self.count = 0

    def target(self, a: int, b: int) -> Array:
        return None

    def put(self, a: int, b: int, y: Array, target: Array, xp: ModuleType) -> None:
        slot = self.count % 2
        self.count += 1
        if len(self.pending) == 2:
            self._drain()
        y = xp.ascontiguousarray(y, dtype=self.out.dtype)
        target = ctypes.c_void_p(self.pinned[slot].ctypes.data)
        stream = xp.cuda.get_current_stream()
        y.data.copy_to_host_async(target, y.nbytes, stream)
        self.pending.append((slot, a, b, stream.record()))

    def _drain(self) -> None:
        slot, a, b, event = self.pending.pop(0)
        event.synchronize()
        values = self.pinned[slot][: b - a]
        if self.order is None:
            copy_rows(self.out[a:b], values)
        else:
            self.out[self.order[a:b]] = values
        self._stored(b - a)

    def close(self) -> None:
        while self.pending:
            self._drain()


class _ListSink(_ArraySink):
    """Per-sample results of different lengths ('sequence' of ragged sequences)."""

    def __init__(self, source: _Source, progress, on_device: bool):
        self.results: list[Any] = [None] * source.n_samples
        self.source = source
        self.on_device = on_device
        self.progress = progress
        self.done = 0

    def target(self, a: int, b: int) -> Array:
        return None

    def put(self, a: int, b: int, y: Array, target: Array, xp: ModuleType) -> None:
        source = self.source
        if not self.on_device:
            y = to_numpy(y)
        indices = source.order[a:b] if source.is_list else range(a, b)
        lengths = source.lengths[indices]
        for row, (index, length) in enumerate(zip(indices, lengths, strict=True)):
            self.results[index] = y[row, :length].copy()
        self._stored(b - a)


# ----------------------------------------------------------------------------- the loop
def _run(
    source: _Source,
    plan: Plan,
    xp: ModuleType,
    dtype: np.dtype,
    make_sink: Callable[[int], _ArraySink],
    compute: Callable[[Array, Array, Array], Array],
) -> _ArraySink:
    """The chunk loop: feed, compute, store; on a device out-of-memory error, again with
    half the rows from the first sample not stored."""
    staged = xp is not np and not source.on_device
    done = 0
    while True:
        sink = make_sink(plan.rows)
        sink.done = done
        feed = (_pinned_feed if staged else _direct_feed)(source, done, plan.rows, xp, dtype)
        try:
            for a, b, x, lengths in feed:
                target = sink.target(a, b)
                sink.put(a, b, compute(x, lengths, target), target, xp)
            sink.close()
            return sink
        except Exception as error:  # CuPy's or Numba-CUDA's out-of-memory error only
            if not is_out_of_memory(error, xp) or plan.rows == 1:
                raise
            done = sink.done
            plan = dataclasses.replace(plan, rows=max(1, plan.rows // 2))
            release_device_memory(xp)
            logger.debug("Out of device memory: chunks of %d sample(s) from now", plan.rows)


def _device_budget(xp: ModuleType) -> int | None:
    return free_device_memory(xp)


def _into(y: Array, target: Array) -> Array:
    if target is None:
        return y
    target[...] = y
    return target


# ----------------------------------------------------------------------------- features
def _feature_chunk(x, lengths, target, plan: Plan, key: tuple, xp: ModuleType):
    """The features of one chunk ``x`` on ``plan.route``; into ``target`` when given."""
    N, L, c = x.shape
    d = plan.order
    dtype = np.dtype(x.dtype)
    output = plan.output
    if plan.route == "recurrence":
        return _recurrence_chunk(x, lengths, target, output, key, d, xp)
    if plan.route == "gemm":
        if lengths is not None:
            x = algebra.right_align(x, lengths, xp)
        name = "H_rev" if output == "final" else "C_rev"
        M = constants.get(name, *key, plan.n_steps, dtype, xp)
        y = target if target is not None else xp.empty((N, c * d), dtype)
        algebra.final_states(algebra.rows(x, xp), M, xp, out=y.reshape(N * c, d))
        if output == "mean":
            y /= L if lengths is None else lengths[:, None].astype(dtype)
        return y
    U = algebra.rows(x, xp)
    row_lengths = None if lengths is None else algebra.row_lengths(lengths, c, xp)
    if plan.route == "blocked":
        W = constants.get("W", *key, dtype=dtype, xp=xp, param=plan.block)
        if output != "sequence":
            return _into(
                algebra.reduce_blocks(U, W, d, output, xp, row_lengths).reshape(N, -1), target
            )
        if c == 1 and target is not None:
            for _ in algebra.iter_blocks(U, W, d, xp, out=target.reshape(N, L, d)):
                pass
            return target
        y = target if target is not None else xp.empty((N, L, c * d), dtype)
        y4 = y.reshape(N, L, c, d)
        for t0, G in algebra.iter_blocks(U, W, d, xp):
            y4[:, t0 : t0 + G.shape[1]] = G.reshape(N, c, -1, d).transpose(0, 2, 1, 3)
        return y
    # fft
    H_hat = constants.get("H_hat", *key, plan.n_steps, dtype, xp, param=plan.n_fft)
    S = algebra.fft_states(U, H_hat, plan.n_fft, xp)
    if output == "sequence":
        return algebra.states_to_features(S, N, xp, out=target)
    if row_lengths is not None:
        valid = algebra.valid_steps(row_lengths, 0, L, xp)[:, :, None]
        S = xp.where(valid, S, -math.inf) if output == "max" else S * valid
    if output == "max":
        y = S.max(axis=1)
    else:
        # summed in float64: a float32 sum costs ~3e-6 of the mean at 30k steps
        y = S.sum(axis=1, dtype=xp.float64)
        y /= L if row_lengths is None else row_lengths[:, None]
    return _into(y.astype(dtype, copy=False).reshape(N, -1), target)


def _in_cuda_simulator() -> bool:
    """Whether Numba's CUDA simulator stands in for a GPU in this process."""
    import numba

    return bool(numba.config.ENABLE_CUDASIM)


def _kernel_stream(xp: ModuleType) -> Any:
    """The Numba-CUDA stream of ``xp``'s current stream, so that a kernel runs in order
    with the array operations around it (None in Numba's CUDA simulator, which runs
    kernels at once and has no external streams)."""
    if _in_cuda_simulator():
        return None
    return numba_cuda().external_stream(xp.cuda.get_current_stream().ptr)


def _recurrence_chunk(x, lengths, target, output, key, order, xp):
    """The compiled recurrence: Numba on the CPU, Numba-CUDA on a GPU."""
    N, L, _ = x.shape
    dtype = np.dtype(x.dtype)
    if xp is np:
        D_T = constants.get("D_T", *key, dtype=dtype)
        Bbar = constants.system(*key)[1].astype(dtype)
        full = np.full(N, L, dtype=np.int64) if lengths is None else lengths
        out = target if output == "sequence" else None
        y, _ = cpu.recurrence(x, full, D_T, Bbar, output, out=out)
        return y if y is target else _into(y, target)
    Abar, Bbar = constants.system(*key)
    stream = _kernel_stream(xp)
    if output == "sequence":
        y = cuda.recurrence_states(x, Abar, Bbar, "sequence", stream=stream)
    elif output == "final" and lengths is None:
        y = cuda.recurrence_states(x, Abar, Bbar, "final", stream=stream)
    else:
        reduce = "last" if output == "final" else output
        y = cuda.pooled_states(x, Abar, Bbar, reduce, lengths, stream=stream)
    return _into(xp.asarray(y), target)


def features(
    U: Any,
    *,
    order: int,
    theta: float,
    discretizer: str = "zoh",
    output: str = "final",
    method: str = "auto",
    xp: ModuleType = np,
    budget: int = 1 << 30,
    lengths: Any = None,
    progress: Callable[[int], None] | None = None,
    return_device: bool = False,
) -> Any:
    """Delay Network features of a dataset.

    Parameters
    ----------
    U : array of shape (n_samples, n_steps, n_channels), or list of arrays of shape
        (n_steps_i, n_channels)
        In the compute dtype (float32 or float64); NumPy, CuPy (with a CuPy ``xp``) or a
        list of NumPy arrays.
    order, theta, discretizer
        The Delay Network.
    output : {'final', 'sequence', 'mean', 'max'}
    method : {'auto', 'gemm', 'fft', 'recurrence'}
        Route for the outputs that have several (:func:`lmu_sk.engine.plan.choose_route`).
    xp : module
        ``numpy`` or ``cupy``: where the computation runs.
    budget : int
        Bytes of host working memory allowed besides the result (on a GPU: for the
        pinned staging buffers; the device chunks fit its free memory).
    lengths : int array of shape (n_samples,), optional
        Own lengths of an array's left-aligned, zero-padded samples.
    progress : callable, optional
        Called with the number of samples of every chunk once it is stored.
    return_device : bool
        On a GPU, return device arrays.

    Returns
    -------
    array of shape (n_samples, n_channels * order), or for 'sequence' (n_samples,
    n_steps, n_channels * order); for 'sequence' of sequences of different lengths, a
    list of arrays of shape (n_steps_i, n_channels * order).
    """
    source = _Source(U, lengths)
    dtype = source.dtype
    n_samples, n_steps, n_channels = source.n_samples, source.n_steps, source.n_channels
    device = device_key(xp)[0]
    host_out = device == "cpu" or not return_device
    budget_given = budget
    per_sample = n_channels * order * (n_steps if output == "sequence" else 1)
    if output == "sequence" and source.lengths is not None:
        size, shape = int(source.lengths.sum()) * n_channels * order, None
    else:
        shape = (n_samples, *((n_steps,) if output == "sequence" else ()), n_channels * order)
        size = n_samples * per_sample
    if host_out:
        result = size * dtype.itemsize
        check_fits(
            result,
            f"The {output!r} features of shape {shape or (n_samples, '*', per_sample)} "
            f"({dtype.name})",
            "Transform fewer samples per call, use output='final', 'mean' or 'max', or "
            "stream to disk with the command line tool (lmu-sk features).",
        )
        # the working memory is planned within what the result leaves (the budget, half of
        # the memory available by default, is read before the result is made: together
        # they reached 1.4x the memory available, and the process was killed)
        budget = min(budget, max(available_memory() - result, 0))

    def planned(method):
        return plan_features(
            max(n_samples, 1),
            n_steps,
            n_channels,
            order,
            output,
            method,
            dtype.itemsize,
            device,
            budget,
            ragged=source.ragged or source.is_list,
            device_budget=_device_budget(xp),
            host_input=not source.on_device,
            host_output=host_out,
        )

    plan = planned(method)
    # the samples the FFT would compute less accurately take the blocked products: all of
    # them at once where none fits the FFT, else after the FFT, in a call of their own
    blocked_rows = None
    if method == "auto" and plan.route == "fft":
        fits = _fft_fits(source, plan, xp)
        if not fits.any():
            plan = planned("gemm")
        elif not fits.all():
            blocked_rows = np.flatnonzero(~fits)
    logger.debug(
        "Delay Network features of %d sample(s) x %d step(s) x %d channel(s), order %d, "
        "output=%r on the %s: %s",
        n_samples,
        n_steps,
        n_channels,
        order,
        output,
        device,
        plan.describe(n_samples),
    )
    if blocked_rows is not None:
        logger.debug(
            "%d of the %d sample(s) do not fit the FFT: computed again by blocked products",
            len(blocked_rows),
            n_samples,
        )
    progress = progress or (lambda count: None)
    ragged_sequence = output == "sequence" and source.lengths is not None
    if ragged_sequence:

        def make_sink(rows):
            return _ListSink(source, progress, not host_out)
    else:
        out = (np if host_out else xp).empty(shape, dtype=dtype)
        if n_samples == 0:
            return out

        def make_sink(rows):
            if device == "gpu" and host_out:
                return _PinnedSink(out, source, progress, xp, rows)
            return _ArraySink(out, source, progress)

    key = (order, float(theta), discretizer)

    def compute(x, chunk_lengths, target):
        return _feature_chunk(x, chunk_lengths, target, plan, key, xp)

    sink = _run(source, plan, xp, dtype, make_sink, compute)
    result = sink.results if ragged_sequence else sink.out
    if blocked_rows is not None:
        if source.is_list:
            rows, own = [U[i] for i in blocked_rows], None
        else:
            rows = U[xp.asarray(blocked_rows) if source.on_device else blocked_rows]
            own = None if source.lengths is None else source.lengths[blocked_rows]
        again = features(
            rows, order=order, theta=theta, discretizer=discretizer, output=output,
            method="gemm", xp=xp, budget=budget_given, lengths=own,
            return_device=return_device,
        )  # fmt: skip
        if ragged_sequence:
            for row, i in enumerate(blocked_rows):
                result[i] = again[row]
        else:
            result[xp.asarray(blocked_rows) if is_device_array(result) else blocked_rows] = again
    return result


# ----------------------------------------------------------------------------- pooled
def _chunk_channels(source: _Source) -> int:
    """The channels a chunk holds at once: the input's, and the mixed ones made of them."""
    if source.mixing is None:
        return source.n_channels
    return source.n_input_channels + source.n_channels


def _full_lengths(x: Array, lengths: Array, xp: ModuleType) -> Array:
    if lengths is not None:
        return lengths.astype(xp.int64)
    return xp.full(x.shape[0], x.shape[1], dtype=xp.int64)


def _window_inputs(spec: PooledSpec, x: Array, lengths: Array, xp: ModuleType):
    """For each window in turn: the block means of its stride of every input (its own are
    the columns ``window.inputs``) and their lengths.

    The transforms are made once per chunk and the block means once per stride.
    """
    lengths = _full_lengths(x, lengths, xp)
    n_channels = x.shape[2]
    used = sorted({i % n_channels for window in spec.windows for i in window.inputs})
    windows = spec.windows
    if len(used) < n_channels:
        # only the channels some window reads are transformed (many may have been screened
        # out): the windows' inputs, transform j of channel k at j * n_channels + k, are
        # renumbered over the used channels
        x = x[:, :, used]
        position = {k: p for p, k in enumerate(used)}
        windows = tuple(
            dataclasses.replace(
                window,
                inputs=tuple(
                    (i // n_channels) * len(used) + position[i % n_channels] for i in window.inputs
                ),
            )
            for window in windows
        )
    inputs = algebra.input_transforms(x, lengths, spec.transforms, xp)
    made: dict[int, tuple[Array, Array]] = {}
    for window in windows:
        if window.stride not in made:
            made.clear()  # windows come by stride, mostly: keep one at a time
            made[window.stride] = (
                algebra.block_means(inputs, lengths, window.stride, xp)
                if window.stride > 1
                else (inputs, lengths)
            )
        u, n = made[window.stride]
        yield window, u, n


def _pooled_chunk(x, lengths, target, plan: Plan, spec: PooledSpec, fitted, xp, out_dtype):
    biases, scales = fitted
    N = x.shape[0]
    out = target if target is not None else xp.empty((N, spec.n_features), dtype=out_dtype)
    columns = pooling.state_columns(spec.n_biases, spec.pools)
    compete = "compete" in spec.pools
    with_moments = any(name in spec.pools for name in pooling.MOMENT_POOLS)
    offsets = spec.window_offsets()
    windows = _window_inputs(spec, x, lengths, xp)
    # the compiled kernel writes its features straight into C-contiguous float64 rows
    direct = (
        plan.route == "pooled_recurrence" and out.dtype == np.float64 and out.flags.c_contiguous
    )
    for w, (window, u, n) in enumerate(windows):
        d, theta = window.order, window.theta
        n_in = len(window.inputs)
        part = out[:, offsets[w] : offsets[w + 1]]
        n_state = n_in * d * len(columns)
        if plan.route == "pooled_recurrence" and xp is not np:
            Abar, Bbar = constants.system(d, theta, spec.discretizer)
            rows = xp.empty((N, part.shape[1]), dtype=np.float64)
            # lengths as int64 whatever the stride's block means gave: one compilation
            cuda.pooled_features(
                u, n.astype(np.int64, copy=False), np.asarray(window.inputs), Abar, Bbar,
                biases[w], scales[w], rows, columns, compete=compete,
                stream=_kernel_stream(xp),
            )  # fmt: skip
            # float64 pools beyond float32 become inf: the caller reports them
            with np.errstate(over="ignore"):
                part[...] = rows
            continue
        if plan.route == "pooled_recurrence":
            A_T = constants.get("A_T", d, theta, spec.discretizer)
            Bbar = constants.system(d, theta, spec.discretizer)[1]
            inputs = np.asarray(window.inputs, dtype=np.int64)
            # other rows: the window's float64 features, then cast into them
            rows, at = (out, offsets[w]) if direct else (np.empty((N, part.shape[1])), 0)
            # one thread where the others would wake for less than they save (one series)
            updates = int(n.sum()) * n_in
            seconds = updates * pooled_update_seconds(d, spec.n_biases, plan.route, "cpu")
            cpu.pooled_features(
                u, n, A_T, Bbar, biases[w], scales[w], rows, columns, at,
                at + n_state if compete else None, with_moments=with_moments, inputs=inputs,
                threads=kernel_threads(seconds),
            )  # fmt: skip
            if not direct:
                # float64 pools beyond float32 become inf: the caller reports them
                with np.errstate(over="ignore"):
                    part[...] = rows
            continue
        W = constants.get(
            "W",
            d,
            theta,
            spec.discretizer,
            dtype=u.dtype,
            xp=xp,
            param=block_steps(d, u.shape[1], plan.device),
        )
        pools, comp = algebra.pool_window(
            algebra.rows(u[:, :, list(window.inputs)], xp),
            W,
            d,
            xp.tile(biases[w], (N, 1, 1)),
            xp.tile(scales[w], (N, 1)),
            algebra.row_lengths(n, n_in, xp),
            xp,
        )
        pools = pools.reshape(N, n_in, d, -1)
        comp = comp.reshape(N, n_in, 2 * d)
        if len(columns):
            # float64 pools beyond float32 become inf: the caller reports them
            with np.errstate(over="ignore"):
                part[:, :n_state] = pools[..., columns].reshape(N, -1)
        if compete:
            part[:, n_state:] = comp.reshape(N, -1)
    return out


POOLED_ROUTES = ("auto", "pooled_recurrence", "pooled_blocked")


def _pooled_routes(route: str, device: str) -> tuple[str, ...] | None:
    """The routes :func:`pooled_features` may take (None: every route of the device)."""
    if route != "auto":
        return (route,)
    if device == "gpu" and not _cuda_kernels_run():
        return ("pooled_blocked",)
    return None


@lru_cache(maxsize=1)
def _cuda_kernels_run() -> bool:
    """Whether the Numba-CUDA kernels run on a GPU here: one that numba.cuda sees, not its
    simulator (which runs them in Python, thousands of times slower: tests ask for the
    route by name)."""
    if _in_cuda_simulator():
        return False
    try:
        return bool(numba_cuda().is_available())
    except Exception:  # no numba.cuda, no driver: the GPU's array routes only
        return False


def pooled_features(
    U: Any,
    spec: PooledSpec,
    biases: list,
    scales: list,
    *,
    dtype: Any,
    xp: ModuleType = np,
    budget: int = 1 << 30,
    progress: Callable[[int], None] | None = None,
    return_device: bool = False,
    route: str = "auto",
    reduce: Callable[[Array], Array] | None = None,
    mixing: np.ndarray | None = None,
) -> Any:
    """Pooled Delay Network features of a dataset (:class:`~lmu_sk.LMUPooledFeatures`).

    Parameters
    ----------
    U : array of shape (n_samples, n_steps, n_channels) or list of arrays of shape
        (n_steps_i, n_channels)
    spec : PooledSpec
    biases : list of ndarray of shape (n_inputs_w, order_w, n_biases), float32
        Thresholds of every window's states, ascending along the last axis.
    scales : list of ndarray of shape (n_inputs_w, order_w)
        Scales of every window's states for the 'compete' pools.
    dtype : float32 or float64
        Output dtype. The compiled CPU route runs the states in float64 (and compares
        them with the thresholds in float32); the block-product route computes in this
        dtype.
    xp, budget, progress, return_device
        As for :func:`features`.
    route : {'auto', 'pooled_recurrence', 'pooled_blocked'}
        The compiled recurrence that pools as it goes (Numba on the CPU, Numba-CUDA on a
        GPU) or block products with array operations (a GPU's only route where
        ``numba.cuda`` does not see it); 'auto': the cheaper by the cost table, of those
        the device has.
    reduce : callable, optional
        A map of feature rows to rows of any width (a model's predictions): on the CPU
        applied to chunks of at most :data:`REDUCED_CHUNK_BYTES` of features computed
        into one reused buffer, and the rows it returns are the output (elsewhere applied
        to the features of all the samples at once).
    mixing : ndarray of shape (n_channels, n_read), optional
        The channels the windows read, combinations of ``U``'s
        (:func:`~lmu_sk.engine.algebra.mixed_channels`), made chunk by chunk: ``spec``'s
        inputs number the ``n_read`` channels. ``None``: ``U``'s own channels.

    Returns
    -------
    array of shape (n_samples, spec.n_features), or ``reduce``'s rows
    """
    if route not in POOLED_ROUTES:
        raise ValueError(f"route must be one of {POOLED_ROUTES}; got {route!r}.")
    source = _Source(U, mixing=mixing)
    dtype = np.dtype(dtype)
    n_samples = source.n_samples
    n_features = spec.n_features
    device = device_key(xp)[0]
    host_out = device == "cpu" or not return_device
    plan = plan_pooled(
        max(n_samples, 1),
        source.n_steps,
        _chunk_channels(source),
        [(len(w.inputs), w.order, w.n_steps(source.n_steps)) for w in spec.windows],
        source.n_channels * len(spec.transforms),
        n_features,
        dtype.itemsize,
        device,
        budget,
        n_biases=spec.n_biases,
        device_budget=_device_budget(xp),
        host_input=not source.on_device,
        host_output=host_out,
        routes=_pooled_routes(route, device),
    )
    compute_dtype = np.dtype(np.float64) if plan.route == "pooled_recurrence" else dtype
    logger.debug(
        "Pooled Delay Network features of %d sample(s) x %d step(s) x %d channel(s), %d "
        "window(s) on the %s: route %r in %s, %d chunk(s) of up to %d sample(s)",
        n_samples,
        source.n_steps,
        source.n_input_channels,
        len(spec.windows),
        device,
        plan.route,
        compute_dtype.name,
        -(-n_samples // plan.rows),
        plan.rows,
    )
    progress = progress or (lambda count: None)

    def compute(x, lengths, target):
        return _pooled_chunk(x, lengths, target, plan, spec, (biases, scales), xp, dtype)

    if reduce is not None and xp is np and n_samples > 0:
        rows = max(1, REDUCED_CHUNK_BYTES // (n_features * dtype.itemsize))
        plan = dataclasses.replace(plan, rows=min(plan.rows, rows))
        buffer = np.empty((min(plan.rows, n_samples), n_features), dtype=dtype)
        return _run(
            source,
            plan,
            xp,
            compute_dtype,
            lambda rows: _ReducedSink(buffer, source, progress, reduce),
            compute,
        ).out
    if host_out:
        check_fits(
            n_samples * n_features * dtype.itemsize,
            f"The pooled features of shape {(n_samples, n_features)} ({dtype.name})",
            "Transform fewer samples per call, or use fewer windows, states or n_biases.",
        )
    out = (np if host_out else xp).empty((n_samples, n_features), dtype=dtype)
    if n_samples == 0:
        return out if reduce is None else reduce(out)
    if xp is not np:
        biases = [xp.asarray(b, dtype=compute_dtype) for b in biases]
        scales = [xp.asarray(c, dtype=compute_dtype) for c in scales]

    def make_sink(rows):
        if device == "gpu" and host_out:
            return _PinnedSink(out, source, progress, xp, rows)
        buffer = None
        if source.order is not None and xp is np:
            buffer = np.empty((min(rows, n_samples), n_features), dtype=dtype)
        return _ArraySink(out, source, progress, buffer)

    _run(source, plan, xp, compute_dtype, make_sink, compute)
    return out if reduce is None else reduce(out)


def sampled_states(
    U: Any,
    spec: PooledSpec,
    max_steps: int,
    *,
    budget: int,
    mixing: np.ndarray | None = None,
) -> list[np.ndarray]:
    """Evenly spaced states of every window, for fitting thresholds, within ``budget``.

    The states of all (sample, block) pairs of a window in sample-major order are numbered
    ``g``; those with ``g`` a multiple of ``ceil(n_states / max_steps)`` are kept. A chunk
    of samples at a time (their inputs made once for all windows), the states of each
    window are computed window of steps by window of steps by the compiled recurrence,
    carrying the state across, which writes the kept ones alone (no others are held).
    What is kept, at most ``max_steps`` states per Delay Network, is the result: not
    counted against ``budget``.

    Parameters
    ----------
    U : ndarray of shape (n_samples, n_steps, n_channels) or list of arrays
        On the host.
    spec : PooledSpec
    max_steps : int
        At most this many states are kept per window.
    budget : int
        Bytes of working memory allowed besides the kept states.
    mixing : ndarray of shape (n_channels, n_read), optional
        As for :func:`pooled_features`.

    Returns
    -------
    list of ndarray of shape (n_kept_w, n_inputs_w * order_w), float64, one per window
    """
    source = _Source(U, mixing=mixing)
    lengths = source.lengths
    if lengths is None:
        lengths = np.full(source.n_samples, source.n_steps, dtype=np.int64)
    n_transformed = source.n_channels * len(spec.transforms)
    plans, kept = [], []
    for window in spec.windows:
        steps = -(-lengths // window.stride)
        every = max(1, -(-int(steps.sum()) // max_steps))
        rows, chunk_steps = plan_sampled_states(
            source.n_samples,
            window.n_steps(source.n_steps),
            len(window.inputs),
            window.order,
            8,
            budget,
            n_channels=_chunk_channels(source) + n_transformed,
            n_raw_steps=source.n_steps,
        )
        # sample-major numbering of the states, in the caller's order
        first = np.concatenate([[0], np.cumsum(steps)[:-1]])
        plans.append((every, first, rows, chunk_steps))
        kept.append(np.empty((-(-int(steps.sum()) // every), len(window.inputs) * window.order)))
    filled = [0] * len(spec.windows)
    # a chunk of samples at a time, every window: the inputs are made once per chunk
    rows = min(plan[2] for plan in plans)
    for a in range(0, source.n_samples, rows):
        b = min(a + rows, source.n_samples)
        index = source.order[a:b] if source.is_list else np.arange(a, b)
        x = source.chunk(a, b, np.dtype(np.float64))
        windows = _window_inputs(spec, x, lengths[index], np)
        for w, (window, u, own) in enumerate(windows):
            u = u[:, :, list(window.inputs)]
            every, first, _, chunk_steps = plans[w]
            d = window.order
            D_T = constants.get("D_T", d, window.theta, spec.discretizer)
            Bbar = constants.system(d, window.theta, spec.discretizer)[1]
            offsets = first[index]
            state = None
            for t0 in range(0, u.shape[1], chunk_steps):
                t1 = min(t0 + chunk_steps, u.shape[1])
                run = np.clip(own - t0, 0, t1 - t0)
                # the kept numbers in [first, first + run): sample by sample, step by step
                first = offsets + t0
                counts = cpu.kept_counts(first, run, every)
                at = filled[w] + np.concatenate([[0], np.cumsum(counts)[:-1]])
                state = cpu.kept_states(
                    u[:, t0:t1], run, D_T, Bbar, every, first, at, kept[w], state
                )
                filled[w] += int(counts.sum())
        del x
    return kept

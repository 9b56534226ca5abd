"""Delay Network features on an NVIDIA GPU with CuPy: constants, routes, chunks and streams.

CuPy is imported only inside the functions here, so this module imports without it.

Routes, per output
------------------
* ``'final'``: one cuBLAS GEMM with the reversed impulse response
  (:func:`xp_kernels.final_states`). Sequences of different lengths are right-aligned first
  (a gather of the inputs) so that every sample ends at the last step, which keeps the work
  in one GEMM; the Numba-CUDA kernel :func:`cuda_numba.ragged_final_states` does the same
  sums without the gather but cannot match cuBLAS, so it is kept for benchmarks and for
  callers without CuPy.
* ``'mean'``: one GEMM with the reversed cumulative impulse response (the sum of all states
  is linear in the input too), divided by each sample's length.
* ``'max'``: block GEMMs over time, reduced block by block
  (:func:`xp_kernels.pooled_states_blocked`): memory holds one block, never the sequence.
* ``'sequence'``: FFT convolution (cuFFT) or block GEMMs, by :func:`all_states_method`.
* ``method='recurrence'``: the Numba-CUDA recurrence kernels for every output.

Memory and streaming
--------------------
Samples are processed in chunks sized from the free device memory (``memGetInfo`` plus
what CuPy's pool holds unused) times ``_MEMORY_FRACTION``, or ``max_device_memory`` when
smaller, divided by an estimate of the device bytes one sample needs on its route. Host
inputs go through two pinned buffers: while chunk ``i`` is computed on one stream, chunk
``i + 1`` is copied in on another and the result of chunk ``i - 1`` is copied out, so
datasets larger than the device stream through it. Host inputs above ``_OVERLAP_MIN_BYTES``
are cut into at least ``_OVERLAP_CHUNKS`` chunks so that copies and compute overlap. An
out-of-memory error halves the chunk and resumes after the last finished chunk.
"""

from __future__ import annotations

import ctypes
import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..dn import discrete_system, impulse_response
from . import xp_kernels

__all__ = [
    "METHODS",
    "OUTPUTS",
    "all_states_method",
    "clear_device_cache",
    "device_impulse_response",
    "gpu_available",
    "transform_gpu",
    "transform_gpu_features",
]

OUTPUTS = ("final", "sequence", "mean", "max")
METHODS = ("auto", "gemm", "fft", "recurrence")

# Share of the free device memory one chunk may use; the rest covers cuBLAS/cuFFT
# workspaces, fragmentation of the memory pool and other users of the device.
_MEMORY_FRACTION = 0.7
# Host inputs larger than this are cut into at least _OVERLAP_CHUNKS chunks so that the
# host-to-device copies overlap with compute.
_OVERLAP_MIN_BYTES = 64 * 1024**2
_OVERLAP_CHUNKS = 4
# Flops a current data-centre GPU does per byte of memory traffic (H100: ~60 TFLOP/s
# float32 over ~3 TB/s); weighs memory traffic against arithmetic in the cost model.
_MACHINE_BALANCE = 20.0


def _cupy():
    import cupy

    return cupy


def gpu_available() -> bool:
    """Whether CuPy imports and sees at least one CUDA device; never raises."""
    try:
        return _cupy().cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def all_states_method(n_steps: int, order: int, itemsize: int = 4) -> str:
    """``'gemm'`` or ``'fft'``: the cheaper all-states route on a GPU by a simple cost model.

    Both routes produce ``n_steps`` states per row and state component. Per such
    ``n_steps``-long output, in flops plus ``_MACHINE_BALANCE`` flops per byte moved:

    * block GEMMs (``T`` steps per block): ``2 n (d + T)`` flops; the states are written once
      and copied once into the output (``2 n`` elements);
    * FFT of length ``L`` (``F = L / 2 + 1`` bins): ``2.5 L log2 L`` flops for the inverse
      real FFT and ``6 F`` for the complex product; the product is written and read as
      complex numbers (``4 F`` elements), the inverse transform written and read (``2 L``),
      and the states copied into the output (``2 n``).

    GEMMs win for small orders, where their ``2 (d + T)`` flops per state are cheap; the FFT
    wins for large orders, whose cost per state does not grow with ``d``. The crossover is
    near ``d = 330`` for 100 to 5000 steps; ``benchmarks/bench_gpu.py`` measures both.
    """
    T = xp_kernels.default_block(order, n_steps)
    n_fft = xp_kernels.fft_length(n_steps)
    bins = n_fft // 2 + 1
    gemm = 2.0 * n_steps * (order + T) + _MACHINE_BALANCE * itemsize * 2.0 * n_steps
    fft = (
        2.5 * n_fft * math.log2(n_fft)
        + 6.0 * bins
        + _MACHINE_BALANCE * itemsize * (4.0 * bins + 2.0 * n_fft + 2.0 * n_steps)
    )
    return "fft" if fft < gemm else "gemm"


@functools.lru_cache(maxsize=8)
def _host_system(order: int, theta: float, discretizer: str) -> tuple[np.ndarray, np.ndarray]:
    Abar, Bbar = discrete_system(order, theta, discretizer)
    Abar.flags.writeable = False
    Bbar.flags.writeable = False
    return Abar, Bbar


@functools.lru_cache(maxsize=16)
def _device_constant(
    name: str,
    order: int,
    theta: float,
    discretizer: str,
    n_steps: int,
    dtype_name: str,
    device_id: int,
    param: int,
) -> Any:
    """A constant of the Delay Network on device ``device_id``, built in float64 on the host.

    ``name`` is one of ``'H'`` (impulse response), ``'H_rev'`` (reversed), ``'C_rev'``
    (reversed cumulative sum), ``'W'`` (block matrix for ``param`` steps) or ``'H_hat'``
    (spectrum for an FFT of length ``param``). Callers must not modify the result.
    """
    cp = _cupy()
    dtype = np.dtype(dtype_name)
    Abar, Bbar = _host_system(order, theta, discretizer)
    H = impulse_response(Abar, Bbar, n_steps)
    with cp.cuda.Device(device_id):
        if name == "H_hat":
            result = xp_kernels.impulse_spectrum(cp.asarray(H), param, dtype, cp)
        else:
            if name == "H":
                host = H
            elif name == "H_rev":
                host = H[::-1]
            elif name == "C_rev":
                host = np.cumsum(H, axis=0)[::-1]
            elif name == "W":
                host = xp_kernels.block_matrix(Abar, H, param)
            else:
                raise ValueError(f"Unknown constant {name!r}.")
            result = cp.asarray(np.ascontiguousarray(host, dtype=dtype))
        cp.cuda.get_current_stream().synchronize()
    return result


def device_impulse_response(
    order: int, theta: float, discretizer: str, n_steps: int, dtype: Any
) -> Any:
    """The impulse response ``H[k] = Abar^k Bbar`` as a CuPy array on the current device.

    Built in float64 on the host (:mod:`lmu_sk.dn`), cast to ``dtype`` and kept in a small
    LRU cache keyed by the arguments and the device, so repeated transforms reuse it.

    Returns
    -------
    cupy.ndarray of shape (n_steps, order); do not modify it.
    """
    return _device_constant(
        "H",
        int(order),
        float(theta),
        str(discretizer),
        int(n_steps),
        np.dtype(dtype).name,
        _cupy().cuda.runtime.getDevice(),
        0,
    )


def clear_device_cache() -> None:
    """Drop the cached device constants (impulse responses, spectra, block matrices)."""
    _device_constant.cache_clear()


def _route(output: str, method: str, n_steps: int, order: int, itemsize: int) -> str:
    if method == "recurrence":
        return "recurrence"
    if output in ("final", "mean", "max"):
        return output
    if method in ("gemm", "fft"):
        return method
    return all_states_method(n_steps, order, itemsize)


def _constants(route, order, theta, discretizer, n_steps, dtype) -> dict[str, Any]:
    cp = _cupy()
    key = (order, theta, discretizer, n_steps, dtype.name, cp.cuda.runtime.getDevice())
    consts: dict[str, Any] = {}
    if route == "recurrence":
        consts["Abar"], consts["Bbar"] = _host_system(order, theta, discretizer)
    elif route == "final":
        consts["H_rev"] = _device_constant("H_rev", *key, 0)
    elif route == "mean":
        consts["C_rev"] = _device_constant("C_rev", *key, 0)
    elif route in ("max", "gemm"):
        consts["block"] = xp_kernels.default_block(order, n_steps)
        consts["H"] = _device_constant("H", *key, 0)
        consts["W"] = _device_constant("W", *key, consts["block"])
    else:
        consts["n_fft"] = xp_kernels.fft_length(n_steps)
        consts["H_hat"] = _device_constant("H_hat", *key, consts["n_fft"])
    return consts


def _device_bytes_per_sample(route, output, n, c, d, itemsize, ragged) -> int:
    """Estimated device bytes one sample needs on ``route``, inputs and results included."""
    b = itemsize
    inputs = 2 * n * c * b  # two device input buffers
    rows = n * c * b  # the one-row-per-channel copy of the inputs
    if ragged:
        rows += n * c * b + 3 * n * 8  # the right-aligned copy and its index arrays
    if route in ("final", "mean"):
        work = rows + 2 * c * d * b
    elif route == "max":
        T = xp_kernels.default_block(d, n)
        work = rows + c * b * (d + T + 3 * T * d + 2 * d)
    elif route == "gemm":
        T = xp_kernels.default_block(d, n)
        work = rows + c * d * b * (n + 3 * T)
    elif route == "fft":
        n_fft = xp_kernels.fft_length(n)
        bins = n_fft // 2 + 1
        # spectrum of the inputs; product and cuFFT work area (complex); inverse transform;
        # transposed states.
        work = 2 * c * bins * b + c * d * b * (4 * bins + n_fft + 2 * n)
    else:
        work = rows + c * d * b * (n if output == "sequence" else 2)
    return int(inputs + work)


def _chunk_samples(
    n_samples: int,
    per_sample: int,
    host_per_sample: int,
    host_input_bytes: int,
    max_device_memory: int | None,
    max_host_memory: int | None,
) -> int:
    cp = _cupy()
    free, _ = cp.cuda.runtime.memGetInfo()
    free += cp.get_default_memory_pool().free_bytes()
    budget = int(free * _MEMORY_FRACTION)
    if max_device_memory is not None:
        budget = min(budget, int(max_device_memory))
    chunk = budget // max(per_sample, 1)
    if max_host_memory is not None and host_per_sample:
        chunk = min(chunk, int(max_host_memory) // host_per_sample)
    if host_input_bytes > _OVERLAP_MIN_BYTES:
        chunk = min(chunk, -(-n_samples // _OVERLAP_CHUNKS))
    return max(1, min(chunk, n_samples))


@functools.lru_cache(maxsize=4)
def _streams(device_id: int) -> tuple[Any, Any]:
    """A compute and a copy stream per device, kept so the memory pool reuses their blocks."""
    cp = _cupy()
    with cp.cuda.Device(device_id):
        return cp.cuda.Stream(non_blocking=True), cp.cuda.Stream(non_blocking=True)


def _compute_chunk(x, lengths, route, output, consts):
    cp = _cupy()
    if route == "final":
        if lengths is None:
            return xp_kernels.final_states(x, consts["H_rev"], cp)
        return xp_kernels.ragged_final_states(x, lengths, consts["H_rev"], cp)
    if route == "mean":
        return xp_kernels.mean_states(x, consts["C_rev"], cp, lengths=lengths)
    if route == "max":
        return xp_kernels.pooled_states_blocked(
            x, None, consts["H"], "max", consts["block"], cp, W=consts["W"], lengths=lengths
        )
    if route == "gemm":
        return xp_kernels.all_states_blocked(
            x, None, consts["H"], consts["block"], cp, W=consts["W"]
        )
    if route == "fft":
        return xp_kernels.all_states_fft(x, None, cp, H_hat=consts["H_hat"], n_fft=consts["n_fft"])
    return _recurrence_chunk(x, lengths, output, consts["Abar"], consts["Bbar"])


def _recurrence_chunk(x, lengths, output, Abar, Bbar):
    """The Numba-CUDA recurrence kernels on CuPy arrays, on CuPy's current stream."""
    from numba import cuda

    from . import cuda_numba

    cp = _cupy()
    stream = cuda.external_stream(cp.cuda.get_current_stream().ptr)
    if output == "sequence":
        y = cuda_numba.recurrence_states(x, Abar, Bbar, "sequence", stream=stream)
    elif output == "final" and lengths is None:
        y = cuda_numba.recurrence_states(x, Abar, Bbar, "final", stream=stream)
    else:
        reduce = "last" if output == "final" else output
        y = cuda_numba.pooled_states(x, Abar, Bbar, reduce, lengths, stream=stream)
    return cp.asarray(y)


def _stream_chunks(
    X: Any,
    out: Any,
    lengths: Any,
    chunk: int,
    progress: list[int],
    compute: Callable[[Any, Any], Any],
) -> None:
    """Compute samples ``progress[0]:`` chunk by chunk into ``out``, advancing ``progress``.

    ``progress[0]`` is only advanced past samples whose results are safely in ``out``, so
    a caller can resume from it after an error.
    """
    import cupyx

    cp = _cupy()
    n_samples = X.shape[0]
    dtype = out.dtype
    host_in = not isinstance(X, cp.ndarray)
    host_out = not isinstance(out, cp.ndarray)
    starts = list(range(progress[0], n_samples, chunk))
    if not starts:
        return
    size = min(chunk, n_samples - starts[0])
    slots = 2 if len(starts) > 1 else 1
    compute_stream, copy_stream = _streams(cp.cuda.runtime.getDevice())
    # The inputs, lengths and constants were made on the caller's stream.
    compute_stream.wait_event(cp.cuda.get_current_stream().record())
    in_row = int(np.prod(X.shape[1:])) * dtype.itemsize
    if host_in:
        pinned_in = [cupyx.empty_pinned((size, *X.shape[1:]), dtype) for _ in range(slots)]
        dev_in = [cp.empty((size, *X.shape[1:]), dtype) for _ in range(slots)]
    if host_out:
        pinned_out = [cupyx.empty_pinned((size, *out.shape[1:]), dtype) for _ in range(slots)]
    uploaded: list[Any] = [None] * slots  # H2D copy out of pinned_in[slot] done
    consumed: list[Any] = [None] * slots  # compute that read dev_in[slot] done
    downloaded: list[Any] = [None] * slots  # D2H copy into pinned_out[slot] done

    def bounds(i: int) -> tuple[int, int]:
        return starts[i], min(starts[i] + chunk, n_samples)

    def upload(i: int) -> None:
        slot, (a, b) = i % slots, bounds(i)
        if uploaded[slot] is not None:
            uploaded[slot].synchronize()
        np.copyto(pinned_in[slot][: b - a], X[a:b], casting="unsafe")
        if consumed[slot] is not None:
            copy_stream.wait_event(consumed[slot])
        source = ctypes.c_void_p(pinned_in[slot].ctypes.data)
        dev_in[slot].data.copy_from_host_async(source, (b - a) * in_row, copy_stream)
        uploaded[slot] = copy_stream.record()

    def drain(i: int) -> None:
        slot, (a, b) = i % slots, bounds(i)
        downloaded[slot].synchronize()
        out[a:b] = pinned_out[slot][: b - a]
        progress[0] = b

    try:
        if host_in:
            upload(0)
        for i in range(len(starts)):
            slot, (a, b) = i % slots, bounds(i)
            if host_in:
                compute_stream.wait_event(uploaded[slot])
                x = dev_in[slot][: b - a]
            else:
                x = X[a:b]
            with compute_stream:
                if x.dtype != dtype:
                    x = x.astype(dtype)
                y = compute(x, None if lengths is None else lengths[a:b])
                if host_in:
                    consumed[slot] = compute_stream.record()
                if host_out:
                    y = cp.ascontiguousarray(y)
                    target = ctypes.c_void_p(pinned_out[slot].ctypes.data)
                    y.data.copy_to_host_async(target, y.nbytes, compute_stream)
                    downloaded[slot] = compute_stream.record()
                else:
                    out[a:b] = y
            del x, y
            if host_in and i + 1 < len(starts):
                upload(i + 1)  # host copy into pinned memory overlaps compute of chunk i
            if host_out and i >= 1:
                drain(i - 1)
            elif not host_out:
                progress[0] = b
        if host_out:
            drain(len(starts) - 1)
    finally:
        # Nothing may be freed or reused while a copy or kernel using it is in flight.
        for stream in (copy_stream, compute_stream):
            try:
                stream.synchronize()
            except Exception:
                pass


def _clear_fft_plans(cp) -> None:
    try:
        cp.fft.config.get_plan_cache().clear()
    except Exception:
        pass


def transform_gpu(
    X: Any,
    *,
    order: int,
    theta: float,
    discretizer: str,
    output: str,
    dtype: Any,
    lengths: Any = None,
    return_cupy: bool = False,
    max_device_memory: int | None = None,
    method: str = "auto",
    max_host_memory: int | None = None,
) -> Any:
    """Delay Network features of a dataset on the GPU.

    Parameters
    ----------
    X : numpy.ndarray or cupy.ndarray of shape (n_samples, n_steps, n_channels)
        Finite float inputs. Host arrays are streamed to the device chunk by chunk.
    order : int
    theta : float
    discretizer : {'zoh', 'euler'}
    output : {'final', 'sequence', 'mean', 'max'}
        Final state, all states, or all states averaged or maximised over time.
    dtype : float32 or float64
        Compute and output dtype; the constants are built in float64 and cast once.
    lengths : int array of shape (n_samples,), optional
        Own lengths (``1 .. n_steps``) of left-aligned, zero-padded samples: 'final' is the
        state after each sample's own last step and 'mean'/'max' reduce over its own steps.
        'sequence' returns the states of the padded arrays, whose first ``lengths[s]``
        steps are sample ``s``'s own.
    return_cupy : bool, default=False
        Return a CuPy array (kept on the device) instead of a NumPy array.
    max_device_memory : int, optional
        Upper bound in bytes on the device memory of one chunk (inputs, work arrays and
        results; cached constants and a CuPy result array are not counted). By default
        ``_MEMORY_FRACTION`` of the free device memory.
    method : {'auto', 'gemm', 'fft', 'recurrence'}, default='auto'
        Route for 'sequence' ('auto': :func:`all_states_method`); 'recurrence' runs the
        Numba-CUDA recurrence kernels for every output (needs ``numba-cuda``).
    max_host_memory : int, optional
        Upper bound in bytes on the pinned host staging buffers.

    Returns
    -------
    array of shape (n_samples, n_channels * order), or (n_samples, n_steps, n_channels *
    order) for 'sequence': NumPy, or CuPy when ``return_cupy``.
    """
    cp = _cupy()
    if output not in OUTPUTS:
        raise ValueError(f"Unknown output {output!r}; use one of {OUTPUTS}.")
    if method not in METHODS:
        raise ValueError(f"Unknown method {method!r}; use one of {METHODS}.")
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64; got {dtype}.")
    if X.ndim != 3:
        raise ValueError(f"X must be (n_samples, n_steps, n_channels); got shape {X.shape}.")
    n_samples, n_steps, n_channels = X.shape
    if n_steps < 1:
        raise ValueError("X needs at least one step.")
    order, theta = int(order), float(theta)
    lengths_host = None
    if lengths is not None:
        if not isinstance(lengths, cp.ndarray):
            # Kept referenced until the end: the copy to the device may be asynchronous.
            lengths_host = np.ascontiguousarray(lengths, dtype=np.int64)
            if lengths_host.shape != (n_samples,):
                raise ValueError(
                    f"lengths must have shape ({n_samples},); got {lengths_host.shape}."
                )
            if lengths_host.size and (lengths_host.min() < 1 or lengths_host.max() > n_steps):
                raise ValueError(f"lengths must lie in 1..{n_steps}.")
            lengths = lengths_host
        lengths = cp.asarray(lengths, dtype=cp.int64)

    route = _route(output, method, n_steps, order, dtype.itemsize)
    consts = _constants(route, order, theta, discretizer, n_steps, dtype)
    tail = (n_steps, n_channels * order) if output == "sequence" else (n_channels * order,)
    out = (cp if return_cupy else np).empty((n_samples, *tail), dtype=dtype)
    if n_samples == 0:
        return out

    host_in = not isinstance(X, cp.ndarray)
    in_row = n_steps * n_channels * dtype.itemsize
    out_row = int(np.prod(tail)) * dtype.itemsize
    host_per_sample = 2 * ((in_row if host_in else 0) + (0 if return_cupy else out_row))
    per_sample = _device_bytes_per_sample(
        route, output, n_steps, n_channels, order, dtype.itemsize, lengths is not None
    )
    chunk = _chunk_samples(
        n_samples,
        per_sample,
        host_per_sample,
        n_samples * in_row if host_in else 0,
        max_device_memory,
        max_host_memory,
    )

    def compute(x, lens):
        return _compute_chunk(x, lens, route, output, consts)

    progress = [0]
    while progress[0] < n_samples:
        try:
            _stream_chunks(X, out, lengths, chunk, progress, compute)
        except cp.cuda.memory.OutOfMemoryError:
            if chunk == 1:
                raise
            chunk = max(1, chunk // 2)
            cp.get_default_memory_pool().free_all_blocks()
            _clear_fft_plans(cp)
    del lengths_host
    return out


def transform_gpu_features(
    U: Any,
    order: int,
    theta: float,
    discretizer: str,
    output: str,
    max_host_memory: int | None = None,
    *,
    return_cupy: bool = False,
    method: str = "auto",
    max_device_memory: int | None = None,
) -> Any:
    """:func:`transform_gpu` for validated estimator input: an array or a list of sequences.

    Parameters
    ----------
    U : ndarray of shape (n_samples, n_steps, n_channels), or a list of ``(n_steps_i,
        n_channels)`` arrays of different lengths, in the compute dtype
    order, theta, discretizer, output
        As for :func:`transform_gpu`.
    max_host_memory : int, optional
        Bound on the pinned host staging buffers (the estimator's working-memory budget).
    return_cupy, method, max_device_memory
        As for :func:`transform_gpu`.

    Returns
    -------
    As :func:`transform_gpu`; for a list with ``output='sequence'``, a list of
    ``(n_steps_i, n_channels * order)`` arrays.
    """
    options = dict(
        order=order,
        theta=theta,
        discretizer=discretizer,
        output=output,
        return_cupy=return_cupy,
        method=method,
        max_device_memory=max_device_memory,
        max_host_memory=max_host_memory,
    )
    if not isinstance(U, list):
        return transform_gpu(U, dtype=U.dtype, **options)
    lengths = np.array([len(u) for u in U], dtype=np.int64)
    n_channels = U[0].shape[1]
    dtype = np.result_type(*[u.dtype for u in U])
    X = np.zeros((len(U), int(lengths.max()), n_channels), dtype=dtype)
    for s, u in enumerate(U):
        X[s, : len(u)] = u
    states = transform_gpu(X, dtype=dtype, lengths=lengths, **options)
    if output == "sequence":
        return [states[s, :length] for s, length in enumerate(lengths)]
    return states

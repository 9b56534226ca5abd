"""Numba-CUDA kernels for the Delay Network: the recurrence, and the recurrence that pools.

``numba.cuda`` is imported only when a kernel is first used, so this module imports on
machines without CUDA. With ``NUMBA_ENABLE_CUDASIM=1`` set before ``numba.cuda`` is first
imported the kernels run (slowly) in Numba's CUDA simulator on the CPU.

Every kernel works on *rows*: channel ``k`` of sample ``s`` is row ``s * n_channels + k``
and its results land in features ``k * order .. (k + 1) * order - 1`` of sample ``s``.
Launch configurations come from the shapes and the device's limits:

* threads per block: ``order`` rounded up to a whole warp, at most the device's maximum
  (threads loop over the state components when ``order`` is larger);
* blocks: one per group of ``G`` rows, ``G <= 8`` chosen so that every multiprocessor
  gets at least two blocks and the group's states fit in shared memory (``G > 1`` reuses
  each entry of ``Abar`` for ``G`` rows).

The wrappers accept NumPy arrays (copied to the device and back) or device arrays (Numba
device arrays, or any object with ``__cuda_array_interface__`` such as a CuPy array); device
inputs give Numba device arrays, which CuPy wraps without a copy with ``cupy.asarray``.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from .._device import is_cuda_array
from ..reference import COMPETE_TIE
from ._jit import cuda_jit_cached, numba_cuda
from .cpu import FLUSH_STEPS, _column_of

__all__ = ["pooled_features", "pooled_states", "recurrence_states"]

_MODES = {"final": 0, "sequence": 1, "mean": 2, "max": 3, "last": 4}
_MAX_GROUP = 8
# Used when a device does not report its limits (the CUDA simulator).
_DEFAULT_LIMITS = {"threads": 1024, "shared": 48 * 1024, "warp": 32, "sms": 1}


# ``numba.cuda``, bound on first use. Kernels refer to it as a module global, which is what
# the CUDA simulator substitutes when it runs them.
cuda: Any = None


def _cuda():
    global cuda
    if cuda is None:
        cuda = numba_cuda()
    return cuda


def _device_limits() -> dict[str, int]:
    """Threads per block, shared memory per block (bytes), warp size and multiprocessors."""
    try:
        device = _cuda().get_current_device()
    except AttributeError:  # older simulators have no current device
        device = None
    names = {
        "threads": "MAX_THREADS_PER_BLOCK",
        "shared": "MAX_SHARED_MEMORY_PER_BLOCK",
        "warp": "WARP_SIZE",
        "sms": "MULTIPROCESSOR_COUNT",
    }
    limits = {}
    for key, attribute in names.items():
        try:
            limits[key] = int(getattr(device, attribute))
        except Exception:  # the simulator's fake device has no attributes
            limits[key] = _DEFAULT_LIMITS[key]
    return limits


def _threads_per_block(order: int, limits: dict[str, int]) -> int:
    warp = limits["warp"]
    return max(warp, min(-(-order // warp) * warp, limits["threads"] // warp * warp))


def _specialized(kernel: Any, args: tuple, tpb: int, warp: int) -> tuple[Any, int]:
    """``kernel`` compiled for ``args``, and ``tpb`` capped by what its register use allows."""
    try:
        kernel = kernel.specialize(*args)
        limit = int(kernel.get_max_threads_per_block())
    except Exception:  # the simulator compiles nothing and has no such limit
        return kernel, tpb
    return kernel, max(warp, min(tpb, limit // warp * warp))


def _compute_dtype(X: Any) -> np.dtype:
    dtype = np.dtype(X.dtype)
    if dtype in (np.float32, np.float64):
        return dtype
    if is_cuda_array(X):
        raise TypeError(f"Device input must be float32 or float64; got {dtype}.")
    return np.dtype(np.float32) if dtype == np.float16 else np.dtype(np.float64)


def _to_device(a: Any, dtype: Any, stream: Any) -> tuple[Any, bool]:
    """``(device array, came_from_host)``; host arrays are cast to ``dtype`` and copied."""
    cuda = _cuda()
    if is_cuda_array(a):
        if hasattr(a, "copy_to_host"):
            device_array = a
        else:
            device_array = cuda.as_cuda_array(a)
        if dtype is not None and np.dtype(device_array.dtype) != np.dtype(dtype):
            raise TypeError(f"Device array of dtype {device_array.dtype}; expected {dtype}.")
        return device_array, False
    host = np.ascontiguousarray(np.asarray(a, dtype=dtype))
    return cuda.to_device(host, stream=stream), True


def _host(a: Any) -> np.ndarray:
    """A small constant (``Abar``, ``Bbar``, ``H``) as a float64 host array."""
    if is_cuda_array(a):
        if not hasattr(a, "copy_to_host"):
            a = _cuda().as_cuda_array(a)
        a = a.copy_to_host()
    return np.asarray(a, dtype=np.float64)


def _stream_or_default(stream: Any) -> Any:
    return _cuda().default_stream() if stream is None else stream


def _finish(out: Any, to_host: bool, stream: Any) -> Any:
    if to_host:
        result = out.copy_to_host(stream=stream)
        stream.synchronize()
        return result
    return out


def _check_lengths(lengths: Any, n_samples: int, n_steps: int, stream: Any) -> Any:
    if lengths is None:
        return None
    if not is_cuda_array(lengths):
        lengths = np.asarray(lengths)
        if lengths.shape != (n_samples,):
            raise ValueError(f"lengths must have shape ({n_samples},); got {lengths.shape}.")
        if lengths.size and (lengths.min() < 1 or lengths.max() > n_steps):
            raise ValueError(f"lengths must lie in 1..{n_steps}.")
        return _to_device(lengths, np.int64, stream)[0]
    return _to_device(lengths, None, stream)[0]


@functools.cache
def _recurrence_kernel(dtype_name: str, mode: int, a_shared: bool):
    from numba import from_dtype

    _cuda()
    nb_dtype = from_dtype(np.dtype(dtype_name))
    max_group = _MAX_GROUP
    write_sequence = mode == _MODES["sequence"]
    reduce_mean = mode == _MODES["mean"]
    reduce_max = mode == _MODES["max"]
    reduce_last = mode == _MODES["last"]
    reducing = reduce_mean or reduce_max or reduce_last

    @cuda_jit_cached()
    def kernel(X, AT, B, m0, lengths, out, group, use_m0, use_lengths):
        # Shared memory: [AT (d*d) if a_shared][state, 2 buffers of group*d][reduction].
        # Thread i owns state component i of every row of the group; every step reads the
        # whole previous state, hence the double buffer and one barrier per step.
        n_steps = X.shape[1]
        n_channels = X.shape[2]
        order = B.shape[0]
        n_rows = X.shape[0] * n_channels
        row0 = cuda.blockIdx.x * group
        g_count = min(group, n_rows - row0)
        tid = cuda.threadIdx.x
        tpb = cuda.blockDim.x
        smem = cuda.shared.array(0, nb_dtype)
        m_off = order * order if a_shared else 0
        r_off = m_off + 2 * group * order
        if a_shared:
            for idx in range(tid, order * order, tpb):
                smem[idx] = AT[idx // order, idx % order]
        for idx in range(tid, g_count * order, tpb):
            g = idx // order
            i = idx - g * order
            row = row0 + g
            s = row // n_channels
            k = row - s * n_channels
            value = nb_dtype(0.0)
            if use_m0:
                value = m0[s, k * order + i]
            smem[m_off + idx] = value
            if reducing:
                smem[r_off + idx] = -math.inf if reduce_max else nb_dtype(0.0)
        n_run = n_steps
        if use_lengths:
            n_run = 0
            for g in range(g_count):
                n_run = max(n_run, lengths[(row0 + g) // n_channels])
        cuda.syncthreads()
        acc = cuda.local.array(max_group, nb_dtype)
        cur = 0
        for t in range(n_run):
            cur_off = m_off + cur * group * order
            nxt_off = m_off + (1 - cur) * group * order
            for i in range(tid, order, tpb):
                for g in range(g_count):
                    acc[g] = 0.0
                for j in range(order):
                    a = smem[j * order + i] if a_shared else AT[j, i]
                    for g in range(g_count):
                        acc[g] += a * smem[cur_off + g * order + j]
                for g in range(g_count):
                    row = row0 + g
                    s = row // n_channels
                    k = row - s * n_channels
                    value = acc[g] + B[i] * X[s, t, k]
                    smem[nxt_off + g * order + i] = value
                    if write_sequence:
                        out[s, t, k * order + i] = value
                    elif reducing:
                        if not use_lengths or t < lengths[s]:
                            r = r_off + g * order + i
                            if reduce_mean:
                                smem[r] += value
                            elif reduce_max:
                                smem[r] = max(smem[r], value)
                            elif not use_lengths or t == lengths[s] - 1:
                                smem[r] = value
            cuda.syncthreads()
            cur = 1 - cur
        if write_sequence:
            return
        for idx in range(tid, g_count * order, tpb):
            g = idx // order
            i = idx - g * order
            row = row0 + g
            s = row // n_channels
            k = row - s * n_channels
            if reducing:
                value = smem[r_off + idx]
                if reduce_mean:
                    value /= nb_dtype(lengths[s] if use_lengths else n_steps)
            else:
                value = smem[m_off + cur * group * order + idx]
            out[s, 0, k * order + i] = value

    return kernel


def _group_and_shared(
    order: int, n_rows: int, itemsize: int, reducing: bool, limits: dict[str, int]
) -> tuple[int, bool]:
    """Rows per block and whether ``Abar`` goes to shared memory, within the device limits."""
    per_row = (3 if reducing else 2) * order * itemsize
    a_bytes = order * order * itemsize
    if per_row > limits["shared"]:
        max_order = limits["shared"] // ((3 if reducing else 2) * itemsize)
        raise ValueError(
            f"Order {order} needs {per_row} bytes of shared memory per sequence, more than "
            f"the device's {limits['shared']}; the recurrence kernels support orders up to "
            f"{max_order} in this dtype. Use the GEMM or FFT routes for larger orders."
        )
    a_shared = a_bytes + per_row <= limits["shared"]
    budget = limits["shared"] - (a_bytes if a_shared else 0)
    group = max(1, min(_MAX_GROUP, n_rows // (2 * limits["sms"]), budget // per_row))
    return group, a_shared


def _run_recurrence(X, Abar, Bbar, mode, initial_state, lengths, stream):
    cuda = _cuda()
    stream = _stream_or_default(stream)
    dtype = _compute_dtype(X)
    n_samples, n_steps, n_channels = X.shape
    Abar = _host(Abar)
    Bbar = _host(Bbar).reshape(-1)
    order = Bbar.shape[0]
    if Abar.shape != (order, order):
        raise ValueError(f"Abar must be ({order}, {order}); got {Abar.shape}.")
    X_dev, from_host = _to_device(X, dtype, stream)
    AT_dev = _to_device(np.ascontiguousarray(Abar.T), dtype, stream)[0]
    B_dev = _to_device(Bbar, dtype, stream)[0]
    if initial_state is None:
        m0 = cuda.device_array((1, 1), dtype=dtype, stream=stream)
    else:
        if tuple(initial_state.shape) != (n_samples, n_channels * order):
            raise ValueError(
                f"initial_state must have shape ({n_samples}, {n_channels * order}); "
                f"got {tuple(initial_state.shape)}."
            )
        m0 = _to_device(initial_state, dtype, stream)[0]
    lengths_dev = _check_lengths(lengths, n_samples, n_steps, stream)
    use_lengths = lengths_dev is not None
    if not use_lengths:
        lengths_dev = cuda.device_array(1, dtype=np.int64, stream=stream)
    steps_out = n_steps if mode == _MODES["sequence"] else 1
    out = cuda.device_array((n_samples, steps_out, n_channels * order), dtype=dtype, stream=stream)
    n_rows = n_samples * n_channels
    if n_rows and order:
        limits = _device_limits()
        reducing = mode not in (_MODES["final"], _MODES["sequence"])
        group, a_shared = _group_and_shared(order, n_rows, dtype.itemsize, reducing, limits)
        shared = (
            (order * order if a_shared else 0) + (3 if reducing else 2) * group * order
        ) * dtype.itemsize
        blocks = -(-n_rows // group)
        use_m0 = initial_state is not None
        args = (X_dev, AT_dev, B_dev, m0, lengths_dev, out, group, use_m0, use_lengths)
        kernel, tpb = _specialized(
            _recurrence_kernel(dtype.name, mode, a_shared),
            args,
            _threads_per_block(order, limits),
            limits["warp"],
        )
        kernel[blocks, tpb, stream, shared](*args)
    if mode != _MODES["sequence"]:
        out = out.reshape(n_samples, n_channels * order)
    return _finish(out, from_host, stream)


def recurrence_states(
    X: Any,
    Abar: Any,
    Bbar: Any,
    output: str = "final",
    *,
    initial_state: Any = None,
    stream: Any = None,
) -> Any:
    """Delay Network states by the recurrence ``m_t = Abar m_{t-1} + Bbar u_t`` on the GPU.

    For streaming and very long sequences: memory does not grow with the sequence length
    (for ``output='final'``) and a stream can be fed chunk by chunk, passing the final state
    of one chunk as ``initial_state`` of the next. One block runs a group of rows; the
    states live in shared memory, with ``Abar`` too when it fits (global memory otherwise),
    and threads run over the state components.

    Parameters
    ----------
    X : array of shape (n_samples, n_steps, n_channels)
    Abar : array of shape (order, order)
    Bbar : array of shape (order,)
    output : {'final', 'sequence'}
    initial_state : array of shape (n_samples, n_channels * order), optional
        State before the first step (zero by default).
    stream : numba CUDA stream, optional

    Returns
    -------
    array of shape (n_samples, n_channels * order) for 'final' or
    (n_samples, n_steps, n_channels * order) for 'sequence', whose last step is the final
    state. NumPy for a NumPy ``X``, a Numba device array otherwise.
    """
    if output not in ("final", "sequence"):
        raise ValueError(f"output must be 'final' or 'sequence'; got {output!r}.")
    return _run_recurrence(X, Abar, Bbar, _MODES[output], initial_state, None, stream)


def pooled_states(
    X: Any,
    Abar: Any,
    Bbar: Any,
    reduce: str = "mean",
    lengths: Any = None,
    *,
    initial_state: Any = None,
    stream: Any = None,
) -> Any:
    """States of the recurrence reduced over time in the same kernel, without the sequence.

    Parameters
    ----------
    X : array of shape (n_samples, n_steps, n_channels)
    Abar : array of shape (order, order)
    Bbar : array of shape (order,)
    reduce : {'mean', 'max', 'last'}
        Average or maximum of every state over the steps, or the state after the last one.
    lengths : int array of shape (n_samples,), optional
        Own lengths of left-aligned, zero-padded samples: only their own steps count, and
        'last' is the state after step ``lengths[s]``.
    initial_state : array of shape (n_samples, n_channels * order), optional
        State before the first step (zero by default): the steps continue a sequence.
    stream : numba CUDA stream, optional

    Returns
    -------
    array of shape (n_samples, n_channels * order)
        NumPy for a NumPy ``X``, a Numba device array otherwise.
    """
    if reduce not in ("mean", "max", "last"):
        raise ValueError(f"reduce must be 'mean', 'max' or 'last'; got {reduce!r}.")
    return _run_recurrence(X, Abar, Bbar, _MODES[reduce], initial_state, lengths, stream)


# ------------------------------------------------------------------------- pooled features
@functools.cache
def _pooled_kernel(order: int, n_biases: int, with_moments: bool, compete: bool):
    """The pooled kernel of one window's states, compiled for its order and thresholds
    (the per-thread arrays' sizes are compile-time constants: registers, not memory)."""
    from numba import float32, float64

    _cuda()
    D, K = int(order), int(n_biases)
    K_size = max(K, 1)  # local arrays of no thresholds: one unused entry
    flush_steps = FLUSH_STEPS
    tie = COMPETE_TIE

    @cuda_jit_cached()
    def kernel(U, lengths, inputs, AT, B, biases, scale, where, n_columns, compete_at, out):
        # Thread g pools state i of input c of sample s (g = (s * n_inputs + c) * D + i).
        # Every thread runs the whole recurrence of its (s, c) in float64 (D**2 products
        # a step, from Abar in shared memory): no barrier and no exchange between
        # threads, at D times the arithmetic of one state, cheap for the small orders the
        # planner sends here. The comparisons are in float32 against the float32
        # thresholds, the counts and sums in float32 flushed into float64 every
        # FLUSH_STEPS steps, as on the CPU.
        A = cuda.shared.array((D, D), float64)
        for idx in range(cuda.threadIdx.x, D * D, cuda.blockDim.x):
            A[idx // D, idx % D] = AT[idx % D, idx // D]
        cuda.syncthreads()
        n_inputs = inputs.shape[0]
        g = cuda.grid(1)
        if g >= U.shape[0] * n_inputs * D:
            return
        i = g % D
        c = (g // D) % n_inputs
        s = g // (D * n_inputs)
        column = inputs[c]
        n = lengths[s]
        state = cuda.local.array(D, float64)
        new = cuda.local.array(D, float64)
        weight = cuda.local.array(D, float64)
        bias = cuda.local.array(K_size, float32)
        count = cuda.local.array(K_size, float32)
        above = cuda.local.array(K_size, float32)
        run = cuda.local.array(K_size, float32)
        best = cuda.local.array(K_size, float32)
        count64 = cuda.local.array(K_size, float64)
        above64 = cuda.local.array(K_size, float64)
        for r in range(D):
            state[r] = 0.0
            weight[r] = scale[c, r]
        for k in range(K):
            bias[k] = biases[c, i, k]
            count[k] = 0.0
            above[k] = 0.0
            run[k] = 0.0
            best[k] = 0.0
            count64[k] = 0.0
            above64[k] = 0.0
        total = 0.0
        high_i = -math.inf
        low_i = math.inf
        won = 0.0
        lost = 0.0
        flush = flush_steps
        for t in range(n):
            u = U[s, t, column]
            for r in range(D):
                acc = B[r] * u
                for j in range(D):
                    acc += A[r, j] * state[j]
                new[r] = acc
            for r in range(D):
                state[r] = new[r]
            if compete:
                high = -math.inf
                low = math.inf
                for r in range(D):
                    v = state[r] * weight[r]
                    high = max(high, v)
                    low = min(low, v)
                top = high - tie
                bottom = low + tie
                winner = D - 1
                loser = D - 1
                for r in range(D - 2, -1, -1):
                    v = state[r] * weight[r]
                    winner = r if v >= top else winner
                    loser = r if v <= bottom else loser
                if winner == i:
                    won += 1.0
                if loser == i:
                    lost += 1.0
            m = state[i]
            m32 = float32(m)
            for k in range(K):
                hit = float32(1.0) if m32 > bias[k] else float32(0.0)
                count[k] += hit
                above[k] += hit * m32
                run[k] = (run[k] + float32(1.0)) * hit
                best[k] = max(best[k], run[k])
            if with_moments:
                total += m
                high_i = max(high_i, m)
                low_i = min(low_i, m)
            flush -= 1
            if flush == 0:
                flush = flush_steps
                for k in range(K):
                    count64[k] += count[k]
                    above64[k] += above[k]
                    count[k] = 0.0
                    above[k] = 0.0
        steps = float64(n)
        at = (c * D + i) * n_columns
        for k in range(K):
            hits = count64[k] + count[k]
            if where[k] >= 0:
                out[s, at + where[k]] = hits / steps
            if where[K + k] >= 0:
                value = 0.0
                if hits > 0:
                    value = (above64[k] + above[k]) / hits - bias[k]
                out[s, at + where[K + k]] = value
            if where[2 * K + k] >= 0:
                out[s, at + where[2 * K + k]] = best[k] / steps
        if where[3 * K] >= 0:
            out[s, at + where[3 * K]] = total / steps
        if where[3 * K + 1] >= 0:
            out[s, at + where[3 * K + 1]] = high_i
        if where[3 * K + 2] >= 0:
            out[s, at + where[3 * K + 2]] = low_i
        if compete:
            out[s, compete_at + c * 2 * D + i] = won / steps
            out[s, compete_at + c * 2 * D + D + i] = lost / steps

    return kernel


def pooled_features(
    U: Any,
    lengths: Any,
    inputs: Any,
    Abar: Any,
    Bbar: Any,
    biases: Any,
    scale: Any,
    out: Any,
    columns: Any,
    *,
    compete: bool,
    stream: Any = None,
) -> Any:
    """One window's pooled features on the GPU, written into ``out`` in their layout.

    The GPU's ``'pooled_recurrence'`` route: the recurrence and every pool of
    :func:`lmu_sk.kernels.cpu.pooled_features` in one kernel, one thread per state of
    every input of every sample, from the zero state over each sample's own steps.

    Parameters
    ----------
    U : array of shape (n_samples, n_steps, n_prepared), float64
        The window's prepared inputs (block means), zero past each sample's end.
    lengths : int array of shape (n_samples,)
        Each sample's own steps, ``1 .. n_steps``.
    inputs : int array of shape (n_inputs,)
        The columns of ``U`` the window reads.
    Abar, Bbar : arrays of shape (order, order) and (order,)
        The discrete system (small: copied to the device on each call).
    biases : array of shape (n_inputs, order, n_biases)
        Thresholds of every state, ascending; compared in float32.
    scale : array of shape (n_inputs, order)
        Scales of the states for the competition.
    out : array of shape (n_samples, width), C-contiguous float64
        Written in place: input ``c``'s state ``i`` has its kept columns at ``(c * order
        + i) * len(columns)``, then (``compete``) input ``c``'s ``2 * order`` proportions
        at ``n_inputs * order * len(columns) + 2 * c * order``. A host array is filled
        from a device copy.
    columns : int array
        The per-state columns kept, of ``[ppv x n_biases, mpv x n_biases, lspv x
        n_biases, mean, max, min]``, ascending.
    compete : bool
        Whether the competition's proportions are written.
    stream : numba CUDA stream, optional

    Returns
    -------
    out
    """
    stream = _stream_or_default(stream)
    Abar = _host(Abar)
    Bbar = _host(Bbar).reshape(-1)
    order = Bbar.shape[0]
    n_samples = U.shape[0]
    n_inputs = len(inputs)
    K = int(biases.shape[2])
    if Abar.shape != (order, order):
        raise ValueError(f"Abar must be ({order}, {order}); got {Abar.shape}.")
    if tuple(biases.shape[:2]) != (n_inputs, order) or tuple(scale.shape) != (n_inputs, order):
        raise ValueError(
            f"biases must have shape ({n_inputs}, {order}, n_biases) and scale "
            f"({n_inputs}, {order}); got {tuple(biases.shape)} and {tuple(scale.shape)}."
        )
    where = _column_of(columns, K)
    n_columns = len(np.asarray(columns))
    width = n_inputs * order * (n_columns + (2 if compete else 0))
    if tuple(out.shape) != (n_samples, width):
        raise ValueError(f"out must have shape ({n_samples}, {width}); got {tuple(out.shape)}.")
    U_dev = _to_device(U, np.float64, stream)[0]
    lengths_dev = _to_device(lengths, None, stream)[0]
    out_dev, from_host = _to_device(out, np.float64, stream)
    args = (
        U_dev,
        lengths_dev,
        _to_device(np.asarray(inputs, dtype=np.int64), None, stream)[0],
        _to_device(np.ascontiguousarray(Abar.T), np.float64, stream)[0],
        _to_device(Bbar, np.float64, stream)[0],
        _to_device(biases, None, stream)[0],
        _to_device(scale, None, stream)[0],
        _to_device(where, None, stream)[0],
        n_columns,
        n_inputs * order * n_columns,
        out_dev,
    )
    threads = n_samples * n_inputs * order
    if threads:
        limits = _device_limits()
        kernel, tpb = _specialized(
            _pooled_kernel(order, K, bool(where[3 * K :].max() >= 0), bool(compete)),
            args,
            min(256, limits["threads"]),
            limits["warp"],
        )
        kernel[-(-threads // tpb), tpb, stream](*args)
    if from_host:
        out[...] = out_dev.copy_to_host(stream=stream)
        stream.synchronize()
    return out

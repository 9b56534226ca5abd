"""A candidate Numba-CUDA kernel, kept out of the package: ragged final states.

``ragged_final_states`` computes the final state of every left-aligned sequence at its own
end straight from the impulse response, one block per (sample, channel) and one thread
per state component. The package's GPU route for ragged final states is a right-aligning
copy and one cuBLAS GEMM (:func:`lmu_sk.engine.algebra.right_align`,
:func:`lmu_sk.engine.algebra.final_states`). This kernel had no caller in the package; it
is kept here, measured against that route by ``bench_gpu.py`` and tested in the CUDA
simulator, so that a GPU run can decide whether it earns a place in ``lmu_sk/kernels``.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from lmu_sk.kernels import cuda as kernels
from lmu_sk.kernels import cuda_jit_cached

__all__ = ["ragged_final_states"]

# ``numba.cuda``, bound on first use: the kernel refers to it as a module global, which is
# what the CUDA simulator substitutes when it runs it.
cuda: Any = None


def _cuda():
    global cuda
    cuda = kernels._cuda()
    return cuda


@functools.cache
def _ragged_kernel(dtype_name: str):
    from numba import from_dtype

    _cuda()
    nb_dtype = from_dtype(np.dtype(dtype_name))

    @cuda_jit_cached()
    def kernel(X, lengths, H, out):
        # One block per row; a tile of the row's inputs is staged in shared memory and
        # each thread accumulates one state component over the tile.
        n_channels = X.shape[2]
        order = H.shape[1]
        row = cuda.blockIdx.x
        s = row // n_channels
        k = row - s * n_channels
        tid = cuda.threadIdx.x
        tpb = cuda.blockDim.x
        length = lengths[s]
        tile = cuda.shared.array(0, nb_dtype)
        for i0 in range(0, order, tpb):
            i = i0 + tid
            acc = nb_dtype(0.0)
            for j0 in range(0, length, tpb):
                cuda.syncthreads()
                if j0 + tid < length:
                    tile[tid] = X[s, j0 + tid, k]
                cuda.syncthreads()
                if i < order:
                    top = length - 1 - j0
                    for jj in range(min(tpb, length - j0)):
                        acc += H[top - jj, i] * tile[jj]
            if i < order:
                out[s, k * order + i] = acc

    return kernel


def ragged_final_states(X: Any, lengths: Any, H: Any, *, stream: Any = None) -> Any:
    """Final states of left-aligned sequences of different lengths, each at its own end.

    ``m[s, k*d + i] = sum_{j < L_s} H[L_s - 1 - j, i] X[s, j, k]``, straight from the
    impulse response.

    Parameters
    ----------
    X : array of shape (n_samples, n_steps, n_channels)
        Sample ``s`` occupies ``X[s, :lengths[s]]``; the rest is ignored.
    lengths : int array of shape (n_samples,)
        Values in ``1 .. n_steps``.
    H : array of shape (>= n_steps, order)
        Impulse response: a device array in the dtype of ``X`` is used in place, anything
        else is cast and copied to the device.
    stream : numba CUDA stream, optional

    Returns
    -------
    array of shape (n_samples, n_channels * order)
        NumPy for a NumPy ``X``, a Numba device array otherwise.
    """
    cuda = _cuda()
    stream = kernels._stream_or_default(stream)
    dtype = kernels._compute_dtype(X)
    n_samples, n_steps, n_channels = X.shape
    order = H.shape[1]
    if H.shape[0] < n_steps:
        raise ValueError(f"H has {H.shape[0]} steps; X needs {n_steps}.")
    X_dev, from_host = kernels._to_device(X, dtype, stream)
    if kernels.is_cuda_array(H) and np.dtype(H.dtype) == dtype:
        H_dev = kernels._to_device(H, dtype, stream)[0][:n_steps]
    else:
        H_dev = kernels._to_device(kernels._host(H)[:n_steps], dtype, stream)[0]
    lengths_dev = kernels._check_lengths(lengths, n_samples, n_steps, stream)
    out = cuda.device_array((n_samples, n_channels * order), dtype=dtype, stream=stream)
    n_rows = n_samples * n_channels
    if n_rows and order:
        limits = kernels._device_limits()
        args = (X_dev, lengths_dev, H_dev, out)
        threads = kernels._threads_per_block(order, limits)
        kernel, tpb = kernels._specialized(
            _ragged_kernel(dtype.name), args, threads, limits["warp"]
        )
        kernel[n_rows, tpb, stream, tpb * dtype.itemsize](*args)
    return kernels._finish(out, from_host, stream)

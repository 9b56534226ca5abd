"""Device policy: the one place that decides where a computation runs and what an array is.

* :func:`resolve_device` turns ``'auto'|'cpu'|'gpu'`` into ``'cpu'`` or ``'gpu'``, and
  :func:`get_array_module` into the array module (``numpy`` or ``cupy``) of that device.
* CuPy is probed once per process (:func:`_import_cupy_with_gpu`), lazily, only when a
  caller asks about a GPU: the package imports and runs on machines without one.
* :func:`is_device_array` and :func:`is_dask_array` tell CuPy and Dask arrays from NumPy
  ones by their type's module, without importing CuPy or Dask.
* :func:`to_numpy` moves an array to the host.

Kernels and the engine receive an array module ``xp`` and arrays; they never probe.
"""

from __future__ import annotations

import sys
from functools import cache
from types import ModuleType
from typing import Any

import numpy as np

from ._extras import install_hint

__all__ = [
    "DEVICES",
    "HostScoreMixin",
    "array_module_of",
    "device_key",
    "for_module",
    "free_device_memory",
    "get_array_module",
    "gpu_available",
    "is_cuda_array",
    "is_dask_array",
    "is_device_array",
    "is_numpy",
    "is_out_of_memory",
    "out_of_memory_errors",
    "pinned_empty",
    "portable_device",
    "release_device_memory",
    "resolve_device",
    "to_numpy",
]

DEVICES = ("cpu", "gpu", "auto")

_GPU_HELP = (
    "device='gpu' needs CuPy and a CUDA GPU that it can see. Without CuPy, install the extra "
    "for the CUDA version of your NVIDIA driver (`nvidia-smi` prints it): for CUDA 12, "
    f"{install_hint('gpu-cuda12')}; for CUDA 13, {install_hint('gpu-cuda13')}. With CuPy "
    "installed, installing more will not help: check the driver and CUDA_VISIBLE_DEVICES. "
    "Or use device='cpu'"
)


def _module_root(a: Any) -> str:
    return type(a).__module__.split(".")[0]


def is_device_array(a: Any) -> bool:
    """True for a CuPy array (checked by its type's module, without importing CuPy)."""
    return _module_root(a) == "cupy"


def is_cuda_array(a: Any) -> bool:
    """True for an array in CUDA device memory: CuPy, Numba device arrays, or anything
    else with ``__cuda_array_interface__``."""
    return not isinstance(a, np.ndarray) and (
        hasattr(a, "__cuda_array_interface__") or hasattr(a, "copy_to_host")
    )


def is_dask_array(a: Any) -> bool:
    """True for a ``dask.array.Array`` (checked by its type, without importing Dask)."""
    return _module_root(a) == "dask" and type(a).__name__ == "Array"


@cache
def _import_cupy_with_gpu() -> tuple[ModuleType | None, str]:
    """Return ``(cupy, '')`` when CuPy imports and sees a GPU, else ``(None, reason)``.

    Probed once per process: the answer is cached.
    """
    try:
        import cupy
    except Exception as exc:  # ImportError, or a broken CUDA installation
        return None, f"CuPy could not be imported ({type(exc).__name__}: {exc})"
    try:
        n_devices = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # no driver, no device
        return None, f"CuPy found no usable CUDA device ({type(exc).__name__}: {exc})"
    if n_devices <= 0:
        return None, "CuPy found no CUDA device"
    return cupy, ""


def gpu_available() -> bool:
    """Whether CuPy imports and sees at least one CUDA device; never raises."""
    return _import_cupy_with_gpu()[0] is not None


def get_array_module(device: str) -> ModuleType:
    """Return the array module for ``device``.

    Parameters
    ----------
    device : {'cpu', 'gpu', 'auto'}
        ``'cpu'`` always gives NumPy. ``'gpu'`` gives CuPy and raises when CuPy or a CUDA
        device is missing. ``'auto'`` gives CuPy when it imports and sees at least one
        device, NumPy otherwise.

    Returns
    -------
    module
        ``numpy`` or ``cupy``.

    Raises
    ------
    ValueError
        If ``device`` is not one of the accepted strings, or if ``device='gpu'`` and no
        CuPy/GPU is available.
    """
    if isinstance(device, str) and device == "cpu":
        return np
    if not isinstance(device, str) or device not in DEVICES:
        raise ValueError(f"device must be one of {DEVICES}, got {device!r}.")
    cupy, reason = _import_cupy_with_gpu()
    if cupy is not None:
        return cupy
    if device == "gpu":
        raise ValueError(f"{_GPU_HELP} ({reason}).")
    return np


def resolve_device(device: str) -> str:
    """Return ``'gpu'`` or ``'cpu'``: where a computation asked for with ``device`` runs.

    Raises the same errors as :func:`get_array_module`.
    """
    return "cpu" if is_numpy(get_array_module(device)) else "gpu"


def portable_device(device: str) -> str:
    """Where a fitted model or a stream runs wherever it is loaded: ``'cpu'`` stays on the
    CPU; ``'gpu'`` and ``'auto'`` give ``'auto'``, the GPU where one is present and the CPU
    elsewhere (so that a model trained on a GPU predicts on any machine)."""
    return "cpu" if device == "cpu" else "auto"


def array_module_of(a: Any) -> ModuleType:
    """The array module ``a`` lives on: CuPy for a CuPy array, NumPy for anything else."""
    if is_device_array(a):
        return get_array_module("gpu")
    return np


def is_numpy(xp: ModuleType) -> bool:
    """Return True when ``xp`` is NumPy itself."""
    return xp is np


def to_numpy(a: Any) -> np.ndarray:
    """Return ``a`` as a NumPy array, copying from the GPU when ``a`` is a CuPy array.

    NumPy arrays are returned unchanged (no copy).
    """
    if is_device_array(a):
        return a.get()
    return np.asarray(a)


class HostScoreMixin:
    """``score`` (scikit-learn's, next in the method order) with targets and sample
    weights on a GPU brought to the host first: its metrics read NumPy arrays, and a
    CuPy array refuses to become one implicitly."""

    def score(self, X, y, sample_weight=None) -> float:
        """scikit-learn's ``score``, ``y`` and ``sample_weight`` taken from a GPU too."""
        y, sample_weight = for_module(y, np), for_module(sample_weight, np)
        return super().score(X, y, sample_weight=sample_weight)


def for_module(a: Any, xp: ModuleType) -> Any:
    """``a`` ready for a computation on ``xp``: CuPy arrays come to the host for NumPy;
    anything else is left as it is (host data reach a GPU chunk by chunk)."""
    if xp is np and is_device_array(a):
        return a.get()
    return a


def device_key(xp: ModuleType) -> tuple[str, int]:
    """A hashable name of the device ``xp`` computes on now: ``('cpu', 0)`` or
    ``('gpu', device id)``; keys caches of device constants."""
    if xp is np:
        return ("cpu", 0)
    return ("gpu", int(xp.cuda.runtime.getDevice()))


def free_device_memory(xp: ModuleType) -> int | None:
    """Bytes free on the current device of ``xp`` (``None`` for the host, or a module
    without CUDA's runtime), counting what CuPy's memory pool holds unused."""
    if xp is np or not hasattr(xp, "cuda"):
        return None
    free, _ = xp.cuda.runtime.memGetInfo()
    return int(free) + int(xp.get_default_memory_pool().free_bytes())


def out_of_memory_errors(xp: ModuleType) -> tuple[type[BaseException], ...]:
    """Exceptions that mean the device of ``xp`` ran out of memory (none on the host:
    the host's budget is checked before allocating)."""
    if xp is np:
        return ()
    return (xp.cuda.memory.OutOfMemoryError,)


# the CUDA driver's code for an allocation that failed (CUDA_ERROR_OUT_OF_MEMORY)
_CUDA_OUT_OF_MEMORY = 2


def is_out_of_memory(error: BaseException, xp: ModuleType) -> bool:
    """Whether ``error`` says the device of ``xp`` ran out of memory: CuPy's
    ``OutOfMemoryError``, or Numba-CUDA's driver error of code ``CUDA_ERROR_OUT_OF_MEMORY``
    (its kernels' arrays are allocated outside CuPy's pool). Never on the host."""
    if xp is np:
        return False
    if isinstance(error, out_of_memory_errors(xp)):
        return True
    if type(error).__name__ != "CudaAPIError":  # (numba.cuda, not imported here)
        return False
    try:
        return int(getattr(error, "code", -1)) == _CUDA_OUT_OF_MEMORY
    except (TypeError, ValueError):
        return False


def release_device_memory(xp: ModuleType) -> None:
    """Give the unused blocks of CuPy's memory pool and its FFT plans back to the device,
    and Numba-CUDA's pending deallocations where it is loaded."""
    if xp is np:
        return
    xp.get_default_memory_pool().free_all_blocks()
    try:
        xp.fft.config.get_plan_cache().clear()
    except Exception:
        pass
    numba_cuda = sys.modules.get("numba.cuda")
    if numba_cuda is not None:
        try:
            numba_cuda.current_context().deallocations.clear()
        except Exception:  # no context, the simulator: nothing pending to free
            pass


def pinned_empty(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """An uninitialised NumPy array in pinned (page-locked) host memory, for asynchronous
    copies to and from a GPU (``cupyx.empty_pinned``; CuPy is imported here only)."""
    import cupyx

    return cupyx.empty_pinned(shape, dtype)

"""Choice of the array module (NumPy or CuPy) that a computation runs on.

CuPy is never imported when this module is imported: it is looked up lazily, only when a
caller asks for a GPU, so that the package imports and runs on machines without one.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from ._input import is_device_array

__all__ = [
    "DEVICES",
    "array_module_of",
    "get_array_module",
    "is_numpy",
    "resolve_device",
    "to_numpy",
]

DEVICES = ("cpu", "gpu", "auto")

_GPU_HELP = (
    "device='gpu' needs CuPy and a CUDA GPU that it can see. Without CuPy, install the extra "
    "for the CUDA version of your NVIDIA driver (`nvidia-smi` prints it): "
    '`pip install "lmu_sk[gpu-cuda12]"` for CUDA 12, `pip install "lmu_sk[gpu-cuda13]"` '
    "for CUDA 13. With CuPy installed, installing more will not help: check the driver and "
    "CUDA_VISIBLE_DEVICES. Or use device='cpu'"
)


def _import_cupy_with_gpu() -> tuple[ModuleType | None, str]:
    """Return ``(cupy, '')`` when CuPy imports and sees a GPU, else ``(None, reason)``."""
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
    if device == "cpu":
        return np
    if device not in DEVICES:
        raise ValueError(f"device must be one of {DEVICES}, got {device!r}.")
    cupy, reason = _import_cupy_with_gpu()
    if cupy is not None:
        return cupy
    if device == "gpu":
        raise ValueError(f"{_GPU_HELP} ({reason}).")
    return np


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


def resolve_device(device: str) -> str:
    """Return ``'gpu'`` or ``'cpu'``: where a computation asked for with ``device`` runs.

    Raises the same errors as :func:`get_array_module`.
    """
    return "cpu" if is_numpy(get_array_module(device)) else "gpu"

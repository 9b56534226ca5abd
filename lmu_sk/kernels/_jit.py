"""Numba compilation with the on-disk cache, and without it where no cache folder is writable.

Numba refuses ``cache=True`` where it finds no writable cache folder (read-only
site-packages and no writable home, or ``NUMBA_CACHE_DIR`` unwritable): the function is
then compiled without the on-disk cache, once per process, instead of failing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["cuda_jit_cached", "njit_cached", "numba_cuda"]


# NumPy names that numba-cuda registers and NumPy removed, with the function each named.
# (Spelled as strings: linters rewrite a removed name written out to its replacement.)
_NUMPY_NAMES_NUMBA_CUDA_REGISTERS = {"row_stack": "vstack"}


def numba_cuda() -> Any:
    """``numba.cuda``, imported where a NumPy that numba-cuda expects is in place.

    numba-cuda 0.30 registers its kernels' version of ``np.row_stack`` unconditionally when
    it compiles its first kernel, and NumPy 2.5 removed that name (an alias of
    ``np.vstack`` since NumPy 1.0): every Numba-CUDA kernel then fails to compile with
    ``AttributeError: module 'numpy' has no attribute 'row_stack'`` (seen on a GPU machine
    with numba-cuda 0.30.4 and NumPy 2.5.2). The alias is restored, as the same function
    NumPy gave it, only where it is missing.
    """
    import numpy as np

    for removed, same in _NUMPY_NAMES_NUMBA_CUDA_REGISTERS.items():
        if not hasattr(np, removed):
            setattr(np, removed, getattr(np, same))
    from numba import cuda

    return cuda


def njit_cached(**options: Any) -> Callable[[Callable], Callable]:
    """``numba.njit(cache=True, **options)``, falling back to ``cache=False``."""
    from numba import njit

    def decorate(function: Callable) -> Callable:
        try:
            return njit(cache=True, **options)(function)
        except RuntimeError:  # "cannot cache function ...: no locator available"
            return njit(cache=False, **options)(function)

    return decorate


def cuda_jit_cached(**options: Any) -> Callable[[Callable], Any]:
    """``numba.cuda.jit(cache=True, **options)``, falling back to ``cache=False``."""
    cuda = numba_cuda()

    def decorate(function: Callable) -> Any:
        try:
            return cuda.jit(cache=True, **options)(function)
        except (RuntimeError, TypeError, NotImplementedError):
            return cuda.jit(**options)(function)

    return decorate

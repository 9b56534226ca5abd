"""Numba compilation with the on-disk cache, and without it where no cache folder is writable.

Numba refuses ``cache=True`` where it finds no writable cache folder (read-only
site-packages and no writable home, or ``NUMBA_CACHE_DIR`` unwritable): the function is
then compiled without the on-disk cache, once per process, instead of failing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["cuda_jit_cached", "njit_cached"]


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
    from numba import cuda

    def decorate(function: Callable) -> Any:
        try:
            return cuda.jit(cache=True, **options)(function)
        except (RuntimeError, TypeError, NotImplementedError):
            return cuda.jit(**options)(function)

    return decorate

"""Numba compilation with the on-disk cache, and without it where no cache folder is writable.

Numba refuses ``cache=True`` where it finds no writable cache folder (read-only
site-packages and no writable home, or ``NUMBA_CACHE_DIR`` unwritable): the function is
then compiled without the on-disk cache, once per process, instead of failing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

__all__ = ["compile_notices", "cuda_jit_cached", "njit_cached", "numba_cuda"]

# The package whose compiled loops are noticed (a name, or a dotted prefix of one).
_PACKAGE = __name__.split(".", 1)[0]


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


@contextmanager
def compile_notices(
    step: Callable[[str], AbstractContextManager], package: str = _PACKAGE
) -> Iterator[None]:
    """While the block runs, each compilation of one of ``package``'s compiled loops (its
    first call with new argument types, which Numba's on-disk cache does not hold yet:
    seconds, once) runs inside ``step(what)``, e.g. :meth:`lmu_sk._progress.StepLog.step`,
    which tells what is being compiled and how long it took.

    The loops it calls, compiled with it, are part of its step. Numba's compile events are
    those of the whole process: a compilation on another thread is noticed too.
    """
    from numba.core import event

    class Notices(event.Listener):
        def __init__(self) -> None:
            self.open = threading.local()

        def _stack(self) -> list:
            if not hasattr(self.open, "steps"):
                self.open.steps = []
            return self.open.steps

        def on_start(self, ev) -> None:
            stack = self._stack()
            function = getattr(ev.data["dispatcher"], "py_func", None)
            module = getattr(function, "__module__", None) or ""
            ours = module == package or module.startswith(package + ".")
            if stack or not ours:  # (a loop compiled within another: part of its step)
                stack.append(None)
                return
            context = step(
                f"compiling {module}.{function.__name__} for these argument types "
                "(once: Numba keeps it in its on-disk cache)"
            )
            context.__enter__()
            stack.append(context)

        def on_end(self, ev) -> None:
            stack = self._stack()
            if not stack:  # (started before the block)
                return
            context = stack.pop()
            if context is not None:  # (a failed compilation raises on its own)
                context.__exit__(None, None, None)

    with event.install_listener("numba:compile", Notices()):
        yield

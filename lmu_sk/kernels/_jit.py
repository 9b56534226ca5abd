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
    """While the block runs, each compilation of one of ``package``'s CPU compiled loops on
    this thread (its first call with new argument types where Numba's on-disk cache does
    not hold it yet: seconds, once) runs inside ``step(what)``, e.g.
    :meth:`lmu_sk._progress.StepLog.step`, which tells what is compiled and how long it took.

    The loops it calls, compiled with it, are part of its step. Compilations on other
    threads are theirs (each block notices its own thread's), and numba-cuda's kernels send
    no such events.
    """
    from numba.core import event

    thread = threading.get_ident()
    steps: list = []  # this thread's compilations under way: a step, or None (not noticed)

    class Notices(event.Listener):
        def on_start(self, ev) -> None:
            if threading.get_ident() != thread:
                return
            function = getattr(ev.data["dispatcher"], "py_func", None)
            module = getattr(function, "__module__", None) or ""
            ours = module == package or module.startswith(package + ".")
            if steps or not ours:  # (a loop compiled within another: part of its step)
                steps.append(None)
                return
            context = step(
                f"compiling {module}.{function.__name__} (first call with these argument types)"
            )
            context.__enter__()
            steps.append(context)

        def on_end(self, ev) -> None:
            if threading.get_ident() != thread or not steps:
                return
            # (Event.is_failed answers the opposite, Numba 0.59 to 0.63 at least: the
            # exception it carries is read instead)
            _close(steps.pop(), failed=getattr(ev, "_exc_details", None) is not None)

    try:
        with event.install_listener("numba:compile", Notices()):
            yield
    finally:  # (a block left while a compilation was under way)
        while steps:
            _close(steps.pop(), failed=True)


def _close(context: AbstractContextManager | None, failed: bool) -> None:
    """Leave a notice's step: as stopped where its compilation failed."""
    if context is None:
        return
    if failed:
        error = RuntimeError("compilation stopped")
        context.__exit__(RuntimeError, error, None)  # (it writes 'stopped'; not raised)
    else:
        context.__exit__(None, None, None)

"""Calls into ``parallel=True`` Numba kernels that are safe from several Python threads.

Numba's ``workqueue`` threading layer is not thread-safe: two Python threads launching
parallel kernels at once make it abort the whole process ("Concurrent access has been
detected"). The TBB and OpenMP layers are safe. :func:`parallel_section` serialises the
launches while the layer in use is, or may turn out to be, ``workqueue``; with any other
layer it costs one attribute lookup. It also runs a kernel on fewer threads when its
caller asks (work too small to pay for waking the others).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import numba

from .._logging import get_logger

__all__ = ["needs_lock", "parallel_section"]

logger = get_logger(__name__)

_LOCK = threading.Lock()
# Requested layers that may resolve to workqueue: 'default' and 'forksafe' fall back to it
# when neither TBB nor OpenMP can be loaded.
_MAY_BE_WORKQUEUE = ("workqueue", "default", "forksafe")
_logged = False


def _layer_in_use() -> str | None:
    """The threading layer Numba launched its first parallel kernel with, or None before."""
    try:
        return numba.threading_layer()
    except ValueError:  # no parallel kernel launched yet: the layer is not chosen
        return None


def needs_lock() -> bool:
    """Whether launches of parallel Numba kernels must be serialised in this process."""
    layer = _layer_in_use()
    if layer is None:
        return str(numba.config.THREADING_LAYER).lower() in _MAY_BE_WORKQUEUE
    return layer == "workqueue"


@contextlib.contextmanager
def parallel_section(threads: int | None = None) -> Iterator[None]:
    """Context for one call into a ``parallel=True`` Numba kernel.

    Holds a process-wide lock while the threading layer is ``workqueue`` (or not chosen yet
    and possibly ``workqueue``), so that concurrent callers wait instead of crashing. With
    ``threads``, the kernel runs on at most that many threads (Numba's setting is per
    calling thread, and restored after).
    """
    previous = numba.get_num_threads()
    fewer = threads is not None and 0 < threads < previous
    if fewer:
        numba.set_num_threads(threads)
    try:
        if not needs_lock():
            yield
            return
        global _logged
        with _LOCK:
            yield
        if not _logged and _layer_in_use() == "workqueue":
            _logged = True
            logger.debug(
                "Numba's threading layer is 'workqueue', which is not thread-safe: parallel "
                "kernels from several Python threads run one at a time. Install tbb (pip "
                "install tbb) or set NUMBA_THREADING_LAYER=omp to run them concurrently."
            )
    finally:
        if fewer:
            numba.set_num_threads(previous)

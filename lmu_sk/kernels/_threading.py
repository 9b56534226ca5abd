"""Calls into ``parallel=True`` Numba kernels that are safe from several Python threads.

Numba's ``workqueue`` threading layer is not thread-safe: two Python threads launching
parallel kernels at once make it abort the whole process ("Concurrent access has been
detected"). The TBB and OpenMP layers are safe. :class:`parallel_section` serialises the
launches while the layer in use is, or may turn out to be, ``workqueue``; with any other
layer it costs one attribute lookup. It also runs a kernel on fewer threads when its
caller asks (work too small to pay for waking the others).

GNU OpenMP is not fork-safe: a process forked after a parallel kernel ran on it (a
``multiprocessing`` pool of the 'fork' start method, Linux's default before Python 3.14)
is terminated by Numba at its first parallel kernel, and the pool waits for it forever.
:class:`parallel_section` refuses such a launch with a :class:`RuntimeError` that names
the ways through, which the pool hands back to its caller.
"""

from __future__ import annotations

import os
import threading

import numba

from .._logging import get_logger

__all__ = ["needs_lock", "parallel_section"]

logger = get_logger(__name__)

_LOCK = threading.Lock()
# set in a process forked after a parallel kernel ran on GNU OpenMP
_forked_from_gnu_openmp = False
_FORKED_FROM_GNU_OPENMP = (
    "This process was forked (multiprocessing's 'fork' start method) after lmu_sk's "
    "compiled kernels ran in its parent on GNU OpenMP, which cannot run in a forked "
    "process: Numba would terminate it. Start the workers with "
    "multiprocessing.get_context('spawn') or 'forkserver' (joblib's default backend, "
    "loky, does), or set NUMBA_THREADING_LAYER='workqueue' (or 'tbb', with pip install "
    "tbb) in the environment before Python starts."
)
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


def _uses_gnu_openmp() -> bool:
    """Whether this process's parallel kernels have run on GNU OpenMP."""
    if _layer_in_use() != "omp":
        return False
    try:
        from numba.np.ufunc import omppool
    except ImportError:  # pragma: no cover - the layer in use is loaded
        return False
    return str(getattr(omppool, "openmp_vendor", "")).upper() == "GNU"


def _mark_forked_child() -> None:
    global _forked_from_gnu_openmp
    _forked_from_gnu_openmp = _forked_from_gnu_openmp or _uses_gnu_openmp()


if hasattr(os, "register_at_fork"):  # (not on Windows, which does not fork)
    os.register_at_fork(after_in_child=_mark_forked_child)


def needs_lock() -> bool:
    """Whether launches of parallel Numba kernels must be serialised in this process."""
    layer = _layer_in_use()
    if layer is None:
        return str(numba.config.THREADING_LAYER).lower() in _MAY_BE_WORKQUEUE
    return layer == "workqueue"


class parallel_section:  # lower case: used as a function, ``with parallel_section():``
    """Context for one call into a ``parallel=True`` Numba kernel.

    Holds a process-wide lock while the threading layer is ``workqueue`` (or not chosen yet
    and possibly ``workqueue``), so that concurrent callers wait instead of crashing. With
    ``threads``, the kernel runs on at most that many threads (Numba's setting is per
    calling thread, and restored after). A class rather than a generator: a stream's step
    enters some seventy of these, and this costs about half as much per call.
    """

    __slots__ = ("_locked", "_previous", "_threads")

    def __init__(self, threads: int | None = None) -> None:
        self._threads = threads
        self._previous = None
        self._locked = False

    def __enter__(self) -> None:
        if _forked_from_gnu_openmp:
            raise RuntimeError(_FORKED_FROM_GNU_OPENMP)
        threads = self._threads
        if threads is not None and threads > 0:
            previous = numba.get_num_threads()
            if threads < previous:
                numba.set_num_threads(threads)
                self._previous = previous
        if needs_lock():
            _LOCK.acquire()
            self._locked = True

    def __exit__(self, *exc_info) -> None:
        if self._locked:
            self._locked = False
            _LOCK.release()
            _log_workqueue_once()
        if self._previous is not None:
            numba.set_num_threads(self._previous)
            self._previous = None


def _log_workqueue_once() -> None:
    global _logged
    if not _logged and _layer_in_use() == "workqueue":
        _logged = True
        logger.debug(
            "Numba's threading layer is 'workqueue', which is not thread-safe: parallel "
            "kernels from several Python threads run one at a time. Install tbb (pip "
            "install tbb) or set NUMBA_THREADING_LAYER=omp to run them concurrently (GNU "
            "OpenMP, Linux's, is not fork-safe: processes forked after a kernel ran cannot "
            "run them)."
        )

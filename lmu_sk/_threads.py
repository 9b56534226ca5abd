"""CPU threads for an ``n_jobs`` parameter: the compiled kernels' (Numba) and BLAS's.

lmu_sk parallelizes inside its computations, not over jobs: the Numba kernels run their
loops on Numba's threads and the matrix products and decompositions on BLAS's (OpenBLAS,
MKL). ``n_jobs`` sets both for the duration of one call (``fit``, ``transform``,
``predict``, ...) and restores them afterwards:

* ``None``: the libraries' own settings, all cores unless ``NUMBA_NUM_THREADS`` /
  ``OMP_NUM_THREADS`` / ``OPENBLAS_NUM_THREADS`` or a surrounding
  ``threadpoolctl.threadpool_limits`` say otherwise (scikit-learn's estimators that thread
  inside native code, such as ``HistGradientBoostingClassifier``, do the same);
* a positive integer: that many threads;
* a negative integer: as in joblib, ``-1`` all cores, ``-2`` all but one, and so on.

Numba's setting is per thread (a call in another thread is not affected); BLAS's is
process-wide while the call runs, and set by calls on the main thread only (settings
from several threads race and were left in place: see ``_blas_limit``; calls on other
threads run with BLAS's threads as they are). The GPU and computations of dask arrays
(which run later, on dask's own threads or workers) are not affected.
"""

from __future__ import annotations

import functools
import numbers
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numba
from threadpoolctl import ThreadpoolController

__all__ = ["check_n_jobs", "limits_threads", "thread_limit"]

_controller: ThreadpoolController | None = None
_controller_made = threading.Lock()


def _blas() -> ThreadpoolController:
    """One controller of the loaded BLAS and OpenMP libraries (finding them takes ms)."""
    global _controller
    with _controller_made:
        if _controller is None:
            _controller = ThreadpoolController()
        return _controller


# the most threads n_jobs may ask for (a C int holds it; a huge count raised ctypes' raw
# "int too long to convert")
_MOST_THREADS = 2**20


def check_n_jobs(n_jobs) -> int | None:
    """The number of threads ``n_jobs`` asks for, or None for the libraries' defaults.

    Raises
    ------
    TypeError
        If ``n_jobs`` is neither None nor an integer.
    ValueError
        If it is 0.
    """
    if n_jobs is None:
        return None
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral):
        raise TypeError(
            f"n_jobs must be None (the libraries' default threads), a positive integer or a "
            f"negative one (-1: all cores); got {n_jobs!r}."
        )
    if n_jobs == 0:
        raise ValueError(
            "n_jobs=0 asks for no thread; use None (the libraries' default), a positive "
            "number of threads, or -1 for all cores."
        )
    if abs(n_jobs) > _MOST_THREADS:
        raise ValueError(
            f"n_jobs={n_jobs} is beyond any machine's threads; use at most {_MOST_THREADS} "
            "(more than the cores only shares them), or -1 for all cores."
        )
    if n_jobs > 0:
        return int(n_jobs)
    return max(1, (os.cpu_count() or 1) + 1 + int(n_jobs))


@contextmanager
def thread_limit(n_jobs) -> Iterator[None]:
    """Run the block with the Numba and BLAS threads that ``n_jobs`` asks for.

    ``n_jobs=None`` changes nothing. Numba runs at most ``NUMBA_NUM_THREADS`` threads (the
    cores, unless that variable says fewer), so more are capped there.
    """
    threads = check_n_jobs(n_jobs)
    if threads is None:
        yield
        return
    before = numba.get_num_threads()
    numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
    try:
        with _blas_limit(threads):
            yield
    finally:
        numba.set_num_threads(before)


@contextmanager
def _blas_limit(threads: int) -> Iterator[None]:
    """Run the block with BLAS's threads at ``threads``, where the call runs on the main
    thread; on another thread, with BLAS's threads as they are.

    BLAS's setting is process-wide. Calls in several threads at once (a grid search on
    joblib's threading backend) each setting it and restoring what they found race: with
    NumPy's OpenBLAS 0.3.30 the values read back differ from those just set, a restore
    from another thread than the one that set may not take effect, and BLAS was left at
    1 thread for good after such a search, slowing every later computation of the
    process. On the main thread alone calls nest and restore in order. Threads of your
    own can limit BLAS around their calls with ``threadpoolctl.threadpool_limits``, or
    run in processes (joblib's default backend), where each has its own setting.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    with _blas().limit(limits=threads):
        yield


def limits_threads(method):
    """Decorate an estimator method to run within :func:`thread_limit` of its ``n_jobs``."""

    @functools.wraps(method)
    def limited(self, *args, **kwargs):
        with thread_limit(getattr(self, "n_jobs", None)):
            return method(self, *args, **kwargs)

    return limited

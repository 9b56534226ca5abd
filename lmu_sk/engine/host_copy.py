"""Large host-memory copies on several threads: the GPU's pinned staging buffers.

A GPU computation on host data copies every input chunk into a pinned buffer and every
result out of one (:mod:`lmu_sk.engine.run`). On one thread those copies, not the
transfers over PCIe, bound the whole call: a core copies a few GB/s, a PCIe 4 or 5 link
moves 25-55 (on an H200's machine: 3 and 55 GB/s). NumPy releases the GIL while it copies
plain numbers, so the rows are split over threads, as many as Numba's thread setting
allows (``n_jobs`` where an estimator's call set it), each given at least
:data:`MIN_BYTES_PER_THREAD`.
"""

from __future__ import annotations

import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

__all__ = ["MIN_BYTES_PER_THREAD", "copy_rows", "copy_threads"]

MIN_BYTES_PER_THREAD = 4 * 1024**2
_pool: ThreadPoolExecutor | None = None
_pool_made = threading.Lock()


def _forget_pool_in_child() -> None:
    """A forked child has none of the pool's threads (its copies would wait for them
    forever): it makes a pool of its own."""
    global _pool, _pool_made
    _pool, _pool_made = None, threading.Lock()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_forget_pool_in_child)


def _executor() -> ThreadPoolExecutor:
    """One pool for the process, never replaced (callers in other threads may hold it),
    of as many workers as cores: it starts threads only as copies need them."""
    global _pool
    with _pool_made:
        if _pool is None:
            _pool = ThreadPoolExecutor(os.cpu_count() or 1, thread_name_prefix="lmu_sk-copy")
        return _pool


def copy_threads(nbytes: int, n_rows: int) -> int:
    """Threads for a copy of ``nbytes`` in ``n_rows`` rows."""
    return max(1, min(numba.get_num_threads(), n_rows, nbytes // MIN_BYTES_PER_THREAD))


def copy_rows(destination: np.ndarray, source: np.ndarray) -> None:
    """``np.copyto(destination, source, casting="unsafe")``, the rows split over threads.

    Both are host arrays of the same shape; the values are those of one ``np.copyto``.
    """
    threads = copy_threads(destination.nbytes, len(destination))
    if threads == 1:
        np.copyto(destination, source, casting="unsafe")
        return
    bounds = np.linspace(0, len(destination), threads + 1).astype(int)
    pool = _executor()
    futures = [
        pool.submit(np.copyto, destination[a:b], source[a:b], casting="unsafe")
        for a, b in itertools.pairwise(bounds)
    ]
    for future in futures:
        future.result()

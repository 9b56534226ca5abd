"""Compiled kernels: plain functions over arrays that decide nothing.

* :mod:`.cpu`: Numba CPU kernels (the recurrence for every output, the pooled recurrence).
* :mod:`.cuda`: Numba-CUDA kernels; ``numba.cuda`` is imported on first use only.

Every kernel is compiled with Numba's on-disk cache (:func:`njit_cached`), so a new
process loads it instead of compiling it again.
"""

from __future__ import annotations

from ._jit import cuda_jit_cached, njit_cached

__all__ = ["cuda_jit_cached", "njit_cached"]

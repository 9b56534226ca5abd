"""Compiled loops: plain functions over arrays that decide nothing.

Below both the engine (:mod:`lmu_sk.engine`) and the networks (:mod:`lmu_sk.neural`),
which choose when to call them:

* :mod:`.cpu`: Numba CPU kernels (the Delay Network recurrence for every output, the
  recurrence that pools as it goes, from zero or continued from carried pools);
* :mod:`.cuda`: Numba-CUDA kernels; ``numba.cuda`` is imported on first use only;
* :mod:`.optimizers`: the optimizers' fused update loops.

Every kernel is compiled with Numba's on-disk cache (:func:`njit_cached`), so a new
process loads it instead of compiling it again.
"""

from __future__ import annotations

from ._jit import cuda_jit_cached, njit_cached

__all__ = ["cuda_jit_cached", "njit_cached"]
